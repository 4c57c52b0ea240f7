/* The sort of host records on the GPU, whatever they come from and go to (files, arrays).
 *
 * Every layout sorts (key, value) arrays on the GPU:
 *   keys      keys alone;
 *   pairs     keys and values, split apart on upload and interleaved again on download;
 *   records   keys taken from the records on upload, sorted with their indices, and the
 *             whole records put in sorted order by a gather on the GPU or by host threads
 *             on the way out (see choose_gather);
 *   argsort   keys sorted with their indices, and the indices given out.
 *
 * Use: gs_sort_engine_run (plan, buffers, upload, sort, gather), then gs_sort_engine_emit
 * once or more (download, assemble the output records, check them when verifying, hand them
 * to a sink), gs_sort_engine_verdict, gs_sort_engine_free. */
#ifndef GS_JOB_SORT_ENGINE_H
#define GS_JOB_SORT_ENGINE_H

#include "io/layout.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "job/context.h"

typedef enum { GS_OUT_KEYS, GS_OUT_PAIRS, GS_OUT_RECORDS, GS_OUT_INDICES } gs_output_kind;

typedef struct {
  gs_layout layout;
  bool descending;
  unsigned begin_bit, end_bit; /* 0, 0: all bits */
  bool argsort;
  unsigned index_bytes;        /* argsort: 4 or 8 */
  bool verify;
  bool input_may_change;       /* the output overwrites the input as it is emitted (in place) */
} gs_sort_request;

typedef struct {
  double setup, read, upload, sort, gather, download, write, assemble, verify;
  gs_radix_sort_times gpu;
} gs_sort_times;

/* Receives output bytes in order. */
typedef int (*gs_bytes_sink)(void *ctx, const void *data, size_t bytes);

typedef struct {
  gs_context *ctx;
  const gs_sort_request *request;
  const gs_radix_sort *sorter;
  const unsigned char *records; /* the input (or the engine's copy of it) */
  unsigned char *records_copy;
  uint64_t n;
  gs_output_kind kind;
  unsigned out_bytes;      /* per output record */
  unsigned gpu_value_bytes;
  bool gpu_gather;
  unsigned passes;
  gs_buffer keys, alt, values, values_alt, state, gathered_in, gathered_out;
  gs_range sorted_keys, sorted_values;
  gs_stager down;
  unsigned char *scratch;
  gs_multiset_hash input_hash, output_hash;
  gs_order_check order;
  gs_argsort_check argsort;
  bool checking;           /* the last emit verified */
  gs_sort_times times;
} gs_sort_engine;

/* The most records a sort of this request takes on the context's device. */
uint64_t gs_sort_engine_max_records(gs_context *ctx, const gs_sort_request *request);

/* Sorts n records of request->layout at `records` on the GPU. */
int gs_sort_engine_run(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *request,
                       const unsigned char *records, uint64_t n);

/* Hands the sorted output to sink (NULL: none) in order; with `verify`, checks it on the way. */
int gs_sort_engine_emit(gs_sort_engine *e, bool verify, gs_bytes_sink sink, void *sink_ctx);

/* After an emit with verify: GPUSORT_OK, or GPUSORT_ERROR_VERIFY with what was wrong. */
int gs_sort_engine_verdict(gs_sort_engine *e);

void gs_sort_engine_free(gs_sort_engine *e);

#endif
