/* Jobs that need no GPU: checking that a file is sorted, and making test data. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/emitter.h"
#include "io/input.h"
#include "io/output.h"
#include "io/verify.h"
#include "job/jobs.h"
#include "util/clock.h"
#include "util/error.h"

enum { STREAM_CHUNK = 16 << 20, GENERATE_CHUNK_BYTES = 32 << 20 };

/* Feeds a stream to the check in chunks of whole records, never holding all of it. */
static int check_stream(gs_input *in, gs_order_check *order, unsigned width, uint64_t *bytes_read) {
  unsigned char *buf = malloc(STREAM_CHUNK + width);
  if (!buf) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  size_t have = 0;
  *bytes_read = 0;
  for (;;) {
    ssize_t got = gs_input_read(in, buf + have, STREAM_CHUNK + width - have);
    if (got < 0) {
      free(buf);
      return gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", in->name, strerror(errno));
    }
    if (got == 0) break;
    have += (size_t)got;
    *bytes_read += (uint64_t)got;
    const size_t whole = have - have % width;
    if (whole >= STREAM_CHUNK / 2) {
      gs_order_check_feed(order, buf, whole);
      memmove(buf, buf + whole, have - whole);
      have -= whole;
    }
  }
  gs_order_check_feed(order, buf, have - have % width);
  free(buf);
  return GPUSORT_OK;
}

int gs_file_check(const char *input, const gs_layout *layout, bool descending, unsigned begin_bit, unsigned end_bit,
                  gpusort_report *report) {
  const double start = gs_now();
  char unit[64];
  gs_npy npy;
  bool is_npy;
  /* the layout: a .npy file's own, or checked against it; then the bit range against it */
  gs_sort_request q = {.layout = *layout, .descending = descending, .begin_bit = begin_bit, .end_bit = end_bit};
  int rc = gs_layout_for_input(&q.layout, input, &npy, &is_npy);
  if (!rc) rc = gs_sort_request_check_bits(&q);
  if (rc) return rc;
  layout = &q.layout;
  gs_layout_unit(layout, unit, sizeof unit);
  gs_input in;
  if ((rc = gs_input_open(&in, input))) return rc;
  if (is_npy && !in.is_stream) gs_input_skip(&in, npy.header_bytes);
  gs_order_check order;
  gs_order_check_init_layout(&order, layout, descending, begin_bit, end_bit);
  if (in.is_stream) {
    uint64_t bytes = 0;
    rc = check_stream(&in, &order, layout->record_bytes, &bytes);
    in.bytes = (size_t)bytes;
  } else {
    gs_order_check_feed(&order, in.data, in.bytes - in.bytes % layout->record_bytes);
  }
  if (!rc) rc = gs_input_check_width(&in, layout->record_bytes, unit);
  if (!rc && !order.sorted)
    rc = gs_fail(GPUSORT_ERROR_NOT_SORTED, "%s: not sorted%s: at record %llu, %s", in.name,
                 descending ? " (descending)" : "", (unsigned long long)order.first_bad, order.detail);
  report->records = order.records;
  report->input_bytes = in.bytes;
  report->stage_seconds[GPUSORT_STAGE_CHECK] = report->total_seconds = gs_now() - start;
  gs_input_close(&in);
  return rc;
}

void gs_generate_records(const gs_layout *layout, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first,
                         uint64_t count, void *records) {
  unsigned char *buf = records;
  const size_t R = layout->record_bytes;
  if (layout->kind == GS_LAYOUT_RECORDS) gs_generate_bytes(seed, first, count, R, buf);
  if (layout->keyed) { /* keys of any form; values (their index) of any type */
    gs_generate_keyed(&layout->spec, dist, seed, n, first, count, buf, R);
    gpusort_type value;
    if (layout->kind == GS_LAYOUT_PAIRS && gs_field_type_from_name(layout->value_name, &value) == 0)
      gs_generate_index_field(gs_field_type_of(value), first, count, buf + layout->value_offset, R);
    return;
  }
  gs_generate(layout->key, dist, seed, n, first, count, buf + layout->key_offset, R);
  if (layout->kind == GS_LAYOUT_PAIRS) gs_generate_index_values(layout->value, first, count, buf + layout->value_offset, R);
}

int gs_file_generate(const char *output, const gs_layout *layout, gs_dist dist, uint64_t seed, uint64_t n,
                     gs_file_flags flags, gpusort_report *report) {
  const double start = gs_now();
  const size_t R = layout->record_bytes;
  if (n > (uint64_t)INT64_MAX / R)
    return gs_fail(GPUSORT_ERROR_USAGE, "%llu records of %zu bytes: more than a file can hold",
                   (unsigned long long)n, R);
  int rc = gs_output_preflight(output, flags.overwrite, NULL);
  if (rc) return rc;
  gs_output out;
  gs_emitter emitter = {0};
  if ((rc = gs_output_open(&out, output))) return rc;
  out.sync = flags.sync;
  /* a file's whole size up front: a disk too small for it fails here, not when it is full */
  if ((rc = gs_output_reserve(&out, n * R))) {
    gs_output_abort(&out);
    return rc;
  }
  const uint64_t chunk = GENERATE_CHUNK_BYTES / R ? GENERATE_CHUNK_BYTES / R : 1;
  unsigned char *buf = malloc((n < chunk ? (n ? n : 1) : chunk) * R);
  if (!buf) rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (!rc) rc = gs_emitter_init(&emitter, &out);
  for (uint64_t first = 0; rc == GPUSORT_OK && first < n; first += chunk) {
    const uint64_t count = n - first < chunk ? n - first : chunk;
    gs_generate_records(layout, dist, seed, n, first, count, buf);
    rc = gs_emit(&emitter, buf, count * R);
  }
  if (rc == GPUSORT_OK) rc = gs_output_commit(&out);
  if (rc) {
    gs_emitter_free(&emitter); /* before the mapping goes */
    gs_output_abort(&out);
  } else {
    report->records = n;
    report->output_bytes = n * R;
    report->xxh3 = gs_emitter_digest(&emitter);
    gs_output_release(&out);
    report->stage_seconds[GPUSORT_STAGE_GENERATE] = report->total_seconds = gs_now() - start;
  }
  gs_emitter_free(&emitter);
  free(buf);
  return rc;
}
