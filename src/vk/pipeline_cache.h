/* A pipeline cache kept on disk between runs, so that a second run builds its pipelines from
 * the driver's compiled code instead of compiling SPIR-V again (most of a small job's setup).
 *
 * One file per device and driver, $XDG_CACHE_HOME/gpusort/pipelines-VENDOR-DEVICE-UUID.bin
 * (~/.cache when XDG_CACHE_HOME is unset), named by the driver's pipelineCacheUUID, which
 * changes with the driver build. The file holds a small header of gpusort's own (a magic, the
 * data's length and its XXH3-64) before the driver's data; a file that is short, corrupt, or
 * made for another device or driver is ignored, and a run that cannot read or write the
 * directory simply runs without it. Files are replaced atomically (temporary file + rename),
 * so concurrent runs never see half a file. GPUSORT_PIPELINE_CACHE=0 turns it off. */
#ifndef GS_VK_PIPELINE_CACHE_H
#define GS_VK_PIPELINE_CACHE_H

#include "vk/device.h"

/* Creates dev->pipeline_cache for an owned device, from the file when it is valid. Never
 * fails: without a cache, pipelines are compiled from SPIR-V. */
void gs_pipeline_cache_open(gs_device *dev);

/* Writes the cache back when it has grown, and destroys it. */
void gs_pipeline_cache_close(gs_device *dev);

#endif
