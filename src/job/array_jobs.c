/* Jobs on host arrays: the engines with memory as their source and sink. */
#include <stdlib.h>
#include <string.h>

#include "job/jobs.h"
#include "job/scan_engine.h"
#include "util/error.h"

typedef struct {
  unsigned char *cursor;
} memory_sink;

static int copy_out(void *ctx, const void *data, size_t bytes) {
  memory_sink *m = ctx;
  if (data != m->cursor) memcpy(m->cursor, data, bytes); /* (built in place: see next_place) */
  m->cursor += bytes;
  return GPUSORT_OK;
}

/* The output array is where the next bytes are built. */
static void *next_place(void *ctx, size_t bytes) {
  (void)bytes;
  return ((memory_sink *)ctx)->cursor;
}

static int device_or_fail(gs_context *c) { return gs_context_device(c, NULL, NULL); }

int gs_array_sort(gs_context *c, const void *input, void *output, uint64_t n, gs_sort_request *r) {
  if (r->layout.from_file || r->layout.named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "an array's layout needs its key type: a layout from a .npy header, or of "
                   "named fields, is for .npy files");
  int rc = device_or_fail(c);
  if (rc) return rc;
  const uint64_t max = gs_sort_engine_max_records(c, r);
  if (n > max)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu records; %s can sort at most %llu of them in one buffer",
                   (unsigned long long)n, c->dev.info.name, (unsigned long long)max);
  if (r->argsort && !r->index_bytes) r->index_bytes = n < (1ull << 32) ? 4 : 8;
  r->input_may_change = !r->argsort && output == input;
  gs_sort_engine e;
  memory_sink sink = {output};
  rc = gs_sort_engine_run(&e, c, r, input, n);
  if (!rc) rc = gs_sort_engine_emit(&e, r->verify, copy_out, &sink);
  if (!rc && r->verify) rc = gs_sort_engine_verdict(&e);
  gs_sort_engine_free(&e);
  return rc;
}

int gs_array_scan(gs_context *c, const void *input, void *output, uint64_t n, const gs_scan_config *config) {
  int rc = device_or_fail(c);
  if (rc) return rc;
  if (config->reduce_only && n == 0 && config->op != GS_SCAN_SUM)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "the %s of no elements is undefined", gs_scan_op_name(config->op));
  /* in place with wider results over several chunks: a chunk's results would overwrite the
   * elements of chunks not read yet, so those are read from a copy */
  void *copy = NULL;
  const size_t in_bytes = gs_scan_element_bytes(config);
  if (!config->reduce_only && input == output && gs_scan_result_bytes(config) > in_bytes &&
      n > gs_scan_engine_capacity(c, config, c->budget)) {
    if (!(copy = malloc(n * in_bytes)))
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for a copy of the %llu elements scanned in place",
                     (unsigned long long)n);
    memcpy(copy, input, n * in_bytes);
  }
  gs_scan_engine e;
  memory_sink sink = {output};
  const gs_record_source source = {.data = copy ? copy : input, .fd = -1};
  rc = gs_scan_engine_all(&e, c, config, &source, n, copy_out, &sink);
  if (!rc && config->reduce_only) gs_scan_engine_value(&e, output);
  gs_scan_engine_free(&e);
  free(copy);
  return rc;
}

int gs_array_compact(gs_context *c, const void *input, void *output, uint64_t n, const gs_compact_request *r,
                     uint64_t *result_count) {
  int rc = device_or_fail(c);
  if (rc) return rc;
  memory_sink sink = {output};
  const gs_compact_output out = {.sink = copy_out, .place = next_place, .ctx = &sink, .region = output, .total = n};
  const gs_record_source source = {.data = input, .fd = -1};
  gs_compact_engine e;
  rc = gs_compact_engine_all(&e, c, r, &source, n, &out);
  if (!rc) *result_count = gs_compact_engine_result(&e);
  gs_compact_engine_free(&e);
  return rc;
}
