/* The scan or reduction of a host array on the GPU: upload, the scan, and the results handed
 * out in order (files and arrays alike). */
#ifndef GS_JOB_SCAN_ENGINE_H
#define GS_JOB_SCAN_ENGINE_H

#include "io/transfer.h"
#include "job/context.h"
#include "job/sort_engine.h"

typedef struct {
  gs_context *ctx;
  gs_scan_config config;
  const gs_scan *scan;
  uint64_t n;
  gs_buffer input, output, state;
  gs_stager down;
  double setup, read, upload, gpu, download, write;
} gs_scan_engine;

/* The most elements a scan of this configuration takes on the context's device. */
uint64_t gs_scan_engine_max_elements(gs_context *ctx, const gs_scan_config *config);

/* Scans (or reduces) n elements at `data` on the GPU. */
int gs_scan_engine_run(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, const void *data, uint64_t n);

/* Hands the n results (one for a reduction) to sink in order. */
int gs_scan_engine_emit(gs_scan_engine *e, gs_bytes_sink sink, void *sink_ctx);

void gs_scan_engine_free(gs_scan_engine *e);

#endif
