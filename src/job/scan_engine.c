#include "job/scan_engine.h"

#include <string.h>

#include "util/clock.h"
#include "util/error.h"

uint64_t gs_scan_engine_max_elements(gs_context *ctx, const gs_scan_config *config) {
  return gs_scan_max_elements(&ctx->dev, config);
}

int gs_scan_engine_run(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, const void *data,
                       uint64_t n) {
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->config = *config;
  e->n = n;
  gs_device *dev = &ctx->dev;
  const unsigned in = gs_key_info_of(config->input)->bytes, acc = gs_key_info_of(config->acc)->bytes;
  const uint64_t out_count = config->reduce_only ? 1 : n;
  const double start = gs_now();
  int rc;
  if ((rc = gs_context_scan(ctx, config, &e->scan))) return rc;
  const VkDeviceSize state_bytes = gs_scan_state_bytes(e->scan, n);
  if ((rc = gs_context_check_budget(ctx, n * in + out_count * acc + state_bytes, "the scan")) ||
      (rc = gs_buffer_create(dev, &e->input, n * in, GS_MEM_DEVICE, "the scan input")) ||
      (rc = gs_buffer_create(dev, &e->output, out_count * acc, GS_MEM_DEVICE, "the scan output")) ||
      (rc = gs_buffer_create(dev, &e->state, state_bytes, GS_MEM_DEVICE, "the scan's tile values")) ||
      (rc = gs_stager_create(dev, &e->down, GS_MEM_READBACK, out_count * acc)))
    return rc;
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  if (!(rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, n * in)))
    rc = gs_upload(&up, gs_buffer_range(&e->input), data, n * in, &stats);
  gs_stager_destroy(&up);
  e->setup = gs_now() - start - stats.wall_seconds;
  e->read = stats.host_seconds;
  e->upload = stats.gpu_seconds;
  if (rc) return rc;

  gs_submission sub = {0};
  gs_timestamps ts = {0};
  uint64_t t[2];
  if (!(rc = gs_submission_init(dev, &sub)) && !(rc = gs_timestamps_create(dev, &ts, 2)) &&
      !(rc = gs_submission_begin(dev, &sub)) &&
      !(rc = gs_scan_record(e->scan, sub.cb, n, n, gs_buffer_range(&e->input), gs_buffer_range(&e->output),
                            gs_buffer_range(&e->state), &ts)) &&
      !(rc = gs_submission_submit(dev, &sub, "the GPU scan")) && !(rc = gs_submission_wait(dev, &sub, "the GPU scan")) &&
      !(rc = gs_timestamps_read(dev, &ts, 0, 2, t)))
    e->gpu = gs_timestamps_seconds(dev, t[0], t[1]);
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  return rc;
}

int gs_scan_engine_emit(gs_scan_engine *e, gs_bytes_sink sink, void *sink_ctx) {
  const unsigned acc = gs_key_info_of(e->config.acc)->bytes;
  const uint64_t count = e->config.reduce_only ? 1 : e->n;
  gs_transfer_stats stats = {0};
  int rc = gs_download(&e->down, gs_buffer_range(&e->output), count * acc, sink, sink_ctx, &stats);
  e->download += stats.gpu_seconds;
  e->write += stats.host_seconds;
  return rc;
}

void gs_scan_engine_free(gs_scan_engine *e) {
  if (!e->ctx) return;
  gs_device *dev = &e->ctx->dev;
  gs_stager_destroy(&e->down);
  gs_buffer_destroy(dev, &e->input);
  gs_buffer_destroy(dev, &e->output);
  gs_buffer_destroy(dev, &e->state);
  memset(e, 0, sizeof *e);
}
