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
 * An engine is set up once for a request and a capacity (pipelines, device buffers, staging)
 * and then sorts batches of up to `capacity` records, one after the other: the whole input of
 * an in-core job, or the chunks and bins of an out-of-core one (src/job/out_of_core.c).
 *
 * Use: gs_sort_engine_init, then per batch gs_sort_engine_sort (upload, sort, gather) and
 * gs_sort_engine_emit once or more (download, assemble the output records, check them when
 * verifying, hand them to a sink) and gs_sort_engine_verdict; gs_sort_engine_free. */
#ifndef GS_JOB_SORT_ENGINE_H
#define GS_JOB_SORT_ENGINE_H

#include <pthread.h>

#include "io/layout.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "job/context.h"

struct gs_normalized_sort;
struct gs_normalized_forms;

typedef enum { GS_OUT_KEYS, GS_OUT_PAIRS, GS_OUT_RECORDS, GS_OUT_INDICES, GS_OUT_VALUES } gs_output_kind;

/* A step on the sorted keys, run on the GPU in the sort's submission (src/prim/compact.h): the
 * first record of each run of equal keys (unique), or (key, count) records, one per run, for
 * keys alone (rle). Its count stays on the GPU until the download needs it. */
typedef enum { GS_THEN_NONE, GS_THEN_UNIQUE, GS_THEN_RLE } gs_sort_then;

typedef struct {
  gs_layout layout;
  bool descending;
  unsigned begin_bit, end_bit; /* 0, 0: all bits */
  gs_sort_algo algo;           /* as asked: GS_SORT_AUTO lets the device and the size decide */
  bool argsort;
  unsigned index_bytes;        /* argsort: 4 or 8 */
  bool values_only;            /* pairs: hand out the values alone, in key order */
  bool verify;
  bool input_may_change;       /* the output overwrites the input as it is emitted (in place) */
  gs_sort_then then;           /* not with keyed layouts, bit ranges, verify or argsort */
  unsigned count_bytes;        /* GS_THEN_RLE: 4 or 8 */
  uint64_t written;            /* set by file jobs: the records written (a step's count) */
  /* keyed layouts: the normalized forms of the whole input, computed ahead (or NULL) */
  const struct gs_normalized_forms *forms;
} gs_sort_request;

typedef struct {
  double setup, read, upload, sort, gather, then, download, write, assemble, verify;
  gs_radix_sort_times gpu; /* the last batch's */
} gs_sort_times;

/* Receives output bytes in order. */
typedef int (*gs_bytes_sink)(void *ctx, const void *data, size_t bytes);
/* Where the sink would have the next `bytes` bytes built (NULL: anywhere): output records
 * assembled on the host are put together there, and the sink then gets that pointer. */
typedef void *(*gs_bytes_place)(void *ctx, size_t bytes);

/* Where a batch's records are: in host memory (an array, or a mapped file), and optionally
 * also in an open file at `offset` (fd >= 0), which whole-record uploads then read directly. */
typedef struct {
  const unsigned char *data;
  int fd;
  uint64_t offset;
  const char *name; /* the file, for errors */
} gs_record_source;


typedef struct {
  gs_context *ctx;
  const gs_sort_request *request;
  struct gs_normalized_sort *normalized; /* keyed layouts: the sort by normalized forms */
  const gs_radix_sort *sorter;
  gs_output_kind kind;
  unsigned key_bytes;
  unsigned out_bytes;      /* per output record */
  unsigned gpu_value_bytes;
  bool gpu_gather;
  unsigned passes;
  uint64_t capacity;
  gs_sort_pacing pacing;   /* segments and submissions of the sorter's runs */
  gs_buffer keys, alt, values, values_alt, state, gathered_in, gathered_out;
  gs_radix_sort_rest rest; /* what the state block holds for the next chunk's sort */
  const gs_compact *then;  /* the step after the sort, or NULL */
  gs_buffer then_state, counts; /* its state block; rle's counts */
  gs_compact_rest then_rest; /* what its state block holds for the next sort's step */
  gs_output_kind emit_kind; /* what the download assembles: the sort's kind, or rle's pairs */
  gs_stager staging; /* both ways: up, then down */
  pthread_t allocation_thread; /* the buffers only the sort uses, made during the first upload */
  bool allocating;
  int allocation_status;
  char allocation_error[512];
  gs_submitter submitter;
  unsigned char *scratch;
  /* The batch. */
  gs_record_source source;
  const unsigned char *records; /* source.data, or the engine's copy of it */
  unsigned char *records_copy;
  uint64_t n;
  uint64_t emitted;        /* records the emit hands out: n, or what the step kept */
  gs_range sorted_keys, sorted_values; /* (after a step: what it wrote) */
  gs_multiset_hash input_hash, output_hash;
  gs_order_check order;
  gs_argsort_check argsort;
  bool checking;           /* the last emit verified */
  gs_sort_times times;     /* summed over batches */
} gs_sort_engine;

/* Bytes of one output record of the request. */
unsigned gs_sort_engine_output_bytes(const gs_sort_request *request);

/* Checks the request's bit range against its (resolved) layout, a usage error if it does not
 * fit; for keyed layouts puts it into the key spec, whose normalized forms then hold only
 * those bits. */
int gs_sort_request_check_bits(gs_sort_request *request);

/* Usage errors for a step after the sort that does not go with the request. */
int gs_sort_then_check(const gs_sort_request *request);

/* The most records one in-core sort of this request takes on the context's device (the
 * budget aside). */
uint64_t gs_sort_engine_max_records(gs_context *ctx, const gs_sort_request *request);

/* Device and staging memory of an engine for `capacity` records. */
uint64_t gs_sort_engine_bytes(gs_context *ctx, const gs_sort_request *request, uint64_t capacity);

/* The most records an engine fits within `budget` bytes (0 if not even a few). */
uint64_t gs_sort_engine_capacity(gs_context *ctx, const gs_sort_request *request, uint64_t budget);

/* Pipelines, buffers and staging for batches of up to `capacity` records. */
int gs_sort_engine_init(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *request, uint64_t capacity);

/* Uploads and sorts n records (n <= capacity). With request->verify, starts the checks that
 * the next emit finishes. */
int gs_sort_engine_sort(gs_sort_engine *e, const gs_record_source *source, uint64_t n);

/* init and sort in one: the whole of `records`. */
int gs_sort_engine_run(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *request,
                       const unsigned char *records, uint64_t n);

/* Hands the sorted batch to sink (NULL: none) in order; with `verify`, checks it on the way. */
int gs_sort_engine_emit(gs_sort_engine *e, bool verify, gs_bytes_sink sink, void *sink_ctx);
/* The same, with records assembled on the host built where `place` says. */
int gs_sort_engine_emit_placed(gs_sort_engine *e, bool verify, gs_bytes_sink sink, gs_bytes_place place,
                               void *sink_ctx);

/* After an emit with verify: GPUSORT_OK, or GPUSORT_ERROR_VERIFY with what was wrong. */
int gs_sort_engine_verdict(gs_sort_engine *e);

void gs_sort_engine_free(gs_sort_engine *e);

#endif
