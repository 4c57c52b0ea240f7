/* Moving bytes between host memory and device buffers through a bounded staging area.
 *
 * Two staging slots of at most `chunk` bytes alternate: while the GPU copies one slot, the
 * host fills (upload) or drains (download) the other, so host work on chunk i+1 overlaps the
 * bus transfer of chunk i. Host copies into staging use several threads. */
#ifndef GS_IO_TRANSFER_H
#define GS_IO_TRANSFER_H

#include "vk/buffer.h"
#include "vk/commands.h"

typedef struct {
  double gpu_seconds;  /* copy commands on the GPU, from timestamps */
  double host_seconds; /* host time filling or draining staging slots */
  double wall_seconds; /* the whole transfer */
} gs_transfer_stats;

typedef struct {
  gs_device *dev;
  gs_memory_kind kind;
  size_t chunk;
  gs_buffer slot[2];
  gs_submission submission[2];
  gs_timestamps timestamps; /* two per slot */
} gs_stager;

/* Staging for uploads (GS_MEM_UPLOAD) or downloads (GS_MEM_READBACK) of up to `total` bytes at
 * a time; slots are min(total, 64 MiB) (GPUSORT_CHUNK_BYTES overrides, for tests). */
int gs_stager_create(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total);
void gs_stager_destroy(gs_stager *st);

/* Copies `bytes` from host memory to dst at dst_offset. */
int gs_upload(gs_stager *st, gs_buffer *dst, VkDeviceSize dst_offset, const void *src, size_t bytes,
              gs_transfer_stats *stats);

/* Receives downloaded data in order; returns a status (non-zero stops the download). */
typedef int (*gs_download_sink)(void *ctx, const void *data, size_t bytes);

/* Copies `bytes` from src at src_offset to the host, chunk by chunk, into `sink`. */
int gs_download(gs_stager *st, const gs_buffer *src, VkDeviceSize src_offset, size_t bytes, gs_download_sink sink,
                void *ctx, gs_transfer_stats *stats);

#endif
