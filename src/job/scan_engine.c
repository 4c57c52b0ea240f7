#include "job/scan_engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prim/elements.h"
#include "util/clock.h"
#include "util/error.h"

unsigned gs_scan_element_bytes(const gs_scan_config *c) {
  return c->in_form ? gs_field_type_of(c->in_form)->bytes : gs_key_info_of(c->input)->bytes;
}

unsigned gs_scan_result_bytes(const gs_scan_config *c) {
  return c->out_form ? gs_field_type_of(c->out_form)->bytes : gs_key_info_of(c->acc)->bytes;
}

uint64_t gs_scan_engine_max_elements(gs_context *ctx, const gs_scan_config *config) {
  return gs_scan_max_elements(&ctx->dev, config);
}

/* Device and staging memory for chunks of n: input, output, tile values (estimated from
 * tiles of 256 elements, fewer than any preset's), and staging both ways. */
static uint64_t engine_bytes(const gs_context *ctx, const gs_scan_config *c, uint64_t n, const gs_scan *scan) {
  const unsigned in = gs_key_info_of(c->input)->bytes, acc = gs_key_info_of(c->acc)->bytes;
  const uint64_t out_count = c->reduce_only ? 1 : n;
  const uint64_t state = (scan ? gs_scan_state_bytes(scan, n) : 256 + (n / 256 + 2) * 24) + 32 /* carry */;
  const size_t slot = gs_context_staging_slot(ctx);
  const uint64_t up = n * in, down = out_count * acc;
  return up + down + state + gs_stager_bytes(up > down ? up : down, slot);
}

typedef struct {
  const gs_context *ctx;
  const gs_scan_config *config;
} capacity_probe;

static uint64_t probe_bytes(const void *arg, uint64_t n) {
  const capacity_probe *p = arg;
  return engine_bytes(p->ctx, p->config, n, NULL);
}

uint64_t gs_scan_engine_capacity(gs_context *ctx, const gs_scan_config *c, uint64_t budget) {
  const capacity_probe probe = {ctx, c};
  return gs_context_pass_capacity(ctx, gs_scan_engine_max_elements(ctx, c), budget, probe_bytes, &probe);
}

int gs_scan_engine_init(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, uint64_t capacity) {
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->config = *config;
  e->capacity = capacity ? capacity : 1;
  gs_device *dev = &ctx->dev;
  const unsigned in = gs_key_info_of(config->input)->bytes, acc = gs_key_info_of(config->acc)->bytes;
  const uint64_t n = e->capacity, out_count = config->reduce_only ? 1 : n;
  const double start = gs_now();
  const size_t slot = gs_context_staging_slot(ctx);
  int rc;
  if ((rc = gs_context_scan(ctx, config, &e->scan))) return rc;
  const VkDeviceSize state_bytes = gs_scan_state_bytes(e->scan, n);
  if ((rc = gs_context_check_budget(ctx, engine_bytes(ctx, config, n, e->scan), "the scan")) ||
      (rc = gs_buffer_create(dev, &e->input, n * in, GS_MEM_DEVICE, "the scan input")) ||
      (rc = gs_buffer_create(dev, &e->output, out_count * acc, GS_MEM_DEVICE, "the scan output")) ||
      (rc = gs_buffer_create(dev, &e->state, state_bytes, GS_MEM_DEVICE, "the scan's tile values")) ||
      (rc = gs_buffer_create(dev, &e->carry, 32, GS_MEM_DEVICE, "the scan's carry between chunks")) ||
      (rc = gs_stager_create_sized(dev, &e->staging, GS_MEM_READBACK,
                                   n * in > out_count * acc ? n * in : out_count * acc, slot)))
    return rc;
  e->staging.progress = gs_progress_count;
  e->staging.progress_ctx = ctx;
  if (config->in_form && !(e->wide = malloc(n * in)))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for the widened elements");
  e->setup += gs_now() - start;
  return GPUSORT_OK;
}

void gs_scan_combine_on_host(gs_scan_op op, gs_key_type acc_type, unsigned char *a, const unsigned char *b) {
  const gs_key_info *acc = gs_key_info_of(acc_type);
  const uint64_t x = gs_key_load_bits(acc->bytes, a), y = gs_key_load_bits(acc->bytes, b);
  uint64_t r;
  if (op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT && acc->bytes == 4) {
    float fx, fy;
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    memcpy(&fx, &ux, 4), memcpy(&fy, &uy, 4);
    const float fr = fx + fy;
    uint32_t ur;
    memcpy(&ur, &fr, 4);
    r = ur;
  } else if (op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT) {
    double fx, fy;
    memcpy(&fx, &x, 8), memcpy(&fy, &y, 8);
    const double fr = fx + fy;
    memcpy(&r, &fr, 8);
  } else if (op == GS_SCAN_SUM) {
    r = x + y; /* wraps at the width: stored below in acc->bytes */
  } else {
    const uint64_t ox = gs_ordered_from_bits(acc->kind, acc->bytes, x), oy = gs_ordered_from_bits(acc->kind, acc->bytes, y);
    r = (op == GS_SCAN_MIN) == (oy < ox) ? y : x;
  }
  gs_key_store_bits(acc->bytes, a, r);
}

typedef struct {
  gs_scan_engine *e;
  unsigned char *value;
} value_sink;

static int take_value(void *ctx, const void *data, size_t bytes) {
  value_sink *v = ctx;
  const unsigned acc = gs_key_info_of(v->e->config.acc)->bytes;
  if (bytes >= acc) memcpy(v->value, data, acc);
  return GPUSORT_OK;
}

/* A chunk's elements from a file, for widening: read into host memory. */
static int read_elements(gs_scan_engine *e, const gs_record_source *source, uint64_t n) {
  const size_t bytes = n * gs_scan_element_bytes(&e->config);
  if (!e->raw && !(e->raw = malloc(e->capacity * gs_scan_element_bytes(&e->config))))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for the elements");
  for (size_t done = 0; done < bytes;) {
    const ssize_t got = pread(source->fd, e->raw + done, bytes - done, (off_t)(source->offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", source->name, got < 0 ? strerror(errno) : "it shrank");
    done += (size_t)got;
  }
  return GPUSORT_OK;
}

/* Results of the accumulator's type, handed on in the results' form. */
static int narrow_out(void *ctx, const void *data, size_t bytes) {
  gs_scan_engine *e = ctx;
  const size_t count = bytes / gs_key_info_of(e->config.acc)->bytes, out = count * gs_scan_result_bytes(&e->config);
  if (out > e->narrow_bytes) {
    unsigned char *grown = realloc(e->narrow, out);
    if (!grown) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for the results");
    e->narrow = grown;
    e->narrow_bytes = out;
  }
  const double t0 = gs_now();
  gs_elements_narrow(e->config.acc, e->config.out_form, e->config.op != GS_SCAN_SUM, data, e->narrow, count);
  e->write += gs_now() - t0;
  return e->sink(e->sink_ctx, e->narrow, out);
}

int gs_scan_engine_chunk(gs_scan_engine *e, const gs_record_source *source, uint64_t n, gs_bytes_sink sink,
                         void *sink_ctx) {
  if (n > e->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a chunk beyond the scan's capacity");
  if (n == 0 && !e->config.reduce_only) return GPUSORT_OK;
  gs_device *dev = &e->ctx->dev;
  const unsigned in = gs_key_info_of(e->config.input)->bytes, acc = gs_key_info_of(e->config.acc)->bytes;
  gs_transfer_stats up = {0};
  int rc;
  if (e->config.in_form) { /* widened on the host first */
    const double t0 = gs_now();
    /* from a file by pread (as gs_upload_file reads), sparing the mapping's page faults */
    if (source->fd >= 0 && (rc = read_elements(e, source, n))) return rc;
    gs_elements_widen(e->config.in_form, source->fd >= 0 ? e->raw : source->data, e->wide, n);
    e->read += gs_now() - t0;
    rc = gs_upload(&e->staging, gs_buffer_range(&e->input), e->wide, n * in, &up);
  } else if (source->fd >= 0) {
    rc = gs_upload_file(&e->staging, gs_buffer_range(&e->input), source->fd, source->offset, n * in, source->name, &up);
  } else {
    rc = gs_upload(&e->staging, gs_buffer_range(&e->input), source->data, n * in, &up);
  }
  e->read += up.host_seconds;
  e->upload += up.gpu_seconds;
  if (rc) return rc;

  /* carries alternate between the two slots: chunk k reads slot (k - 1) % 2, writes slot k % 2 */
  const gs_scan_carry carry = {.in = e->chunks ? e->carry.address + 16 * ((e->chunks - 1) % 2) : 0,
                               .out = e->carry.address + 16 * (e->chunks % 2)};
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  uint64_t t[2];
  if (!(rc = gs_submission_init(dev, &sub)) && !(rc = gs_timestamps_create(dev, &ts, 2)) &&
      !(rc = gs_submission_begin(dev, &sub)) &&
      !(rc = gs_scan_record(e->scan, sub.cb, n, e->capacity, gs_buffer_range(&e->input), gs_buffer_range(&e->output),
                            gs_buffer_range(&e->state), e->chunks > 0, e->config.reduce_only ? NULL : &carry, &ts)) &&
      !(rc = gs_submission_submit(dev, &sub, "the GPU scan")) && !(rc = gs_submission_wait(dev, &sub, "the GPU scan")) &&
      !(rc = gs_timestamps_read(dev, &ts, 0, 2, t)))
    e->gpu += gs_timestamps_seconds(dev, t[0], t[1]);
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  if (rc) return rc;

  gs_transfer_stats down = {0};
  if (e->config.reduce_only) {
    unsigned char chunk_value[8] = {0};
    value_sink v = {e, chunk_value};
    rc = gs_download(&e->staging, gs_buffer_range(&e->output), acc < 4 ? 4 : acc, take_value, &v, &down);
    if (!rc && e->chunks)
      gs_scan_combine_on_host(e->config.op, e->config.acc, e->value, chunk_value);
    else if (!rc)
      memcpy(e->value, chunk_value, acc);
  } else {
    e->sink = sink;
    e->sink_ctx = sink_ctx;
    rc = e->config.out_form ? gs_download(&e->staging, gs_buffer_range(&e->output), n * acc, narrow_out, e, &down)
                            : gs_download(&e->staging, gs_buffer_range(&e->output), n * acc, sink, sink_ctx, &down);
  }
  e->download += down.gpu_seconds;
  e->write += down.host_seconds;
  e->chunks++;
  return rc;
}

void gs_scan_engine_value(const gs_scan_engine *e, void *value) {
  if (e->config.out_form)
    gs_elements_narrow(e->config.acc, e->config.out_form, e->config.op != GS_SCAN_SUM, e->value, value, 1);
  else
    memcpy(value, e->value, gs_key_info_of(e->config.acc)->bytes);
}

int gs_scan_engine_all(gs_scan_engine *e, gs_context *ctx, const gs_scan_config *config, const gs_record_source *source,
                       uint64_t n, gs_bytes_sink sink, void *sink_ctx) {
  const uint64_t capacity = gs_scan_engine_capacity(ctx, config, ctx->budget);
  if (capacity == 0) return gs_fail(GPUSORT_ERROR_TOO_LARGE, "the memory budget holds no scan at all");
  int rc = gs_scan_engine_init(e, ctx, config, n < capacity ? (n ? n : 1) : capacity);
  const unsigned in = gs_scan_element_bytes(config);
  for (uint64_t first = 0; !rc && (first < n || (n == 0 && first == 0)); first += e->capacity) {
    const uint64_t count = n - first < e->capacity ? n - first : e->capacity;
    const gs_record_source part = {.data = source->data ? source->data + first * in : NULL,
                                   .fd = source->fd,
                                   .offset = source->offset + first * in,
                                   .name = source->name};
    rc = gs_scan_engine_chunk(e, &part, count, sink, sink_ctx);
    if (n == 0) break;
  }
  return rc;
}

void gs_scan_engine_free(gs_scan_engine *e) {
  if (!e->ctx) return;
  gs_device *dev = &e->ctx->dev;
  gs_stager_destroy(&e->staging);
  gs_buffer_destroy(dev, &e->input);
  gs_buffer_destroy(dev, &e->output);
  gs_buffer_destroy(dev, &e->state);
  gs_buffer_destroy(dev, &e->carry);
  free(e->raw);
  free(e->wide);
  free(e->narrow);
  memset(e, 0, sizeof *e);
}
