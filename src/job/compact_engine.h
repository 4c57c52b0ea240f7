/* The look-back family (select, partition, unique, rle, reduce-by-key) of host records on the
 * GPU, in chunks of at most `capacity` records.
 *
 * Each chunk's keys (and reduce-by-key's values) go up as arrays, gathered from the records by
 * the staging copy (keys of another form than the six GPU types gathered and widened on the
 * host first); the GPU decides what is kept (src/prim/compact.h) and gives back the input
 * positions of what it keeps (and reduce-by-key's combined values). The output records are
 * then built on the host from the source records through those positions: select, partition
 * and unique copy whole records, rle takes a run's key and its length (the distance to the
 * next run's first position), reduce-by-key a run's key beside its value. The positions only
 * rise, so this host gather reads the source front to back, and only 4 bytes a kept record
 * cross the bus instead of the whole record.
 *
 * Chunks join on the host: a chunk whose first key equals the previous chunk's last key
 * continues that chunk's last run (unique drops its first record; rle's held-back last run
 * goes on; reduce-by-key combines the two values). Partition writes its kept records from the
 * front of the output and its rejected ones from the back (as the GPU hands them out, in
 * reverse input order), and reverses the rejected ones in place at the end. */
#ifndef GS_JOB_COMPACT_ENGINE_H
#define GS_JOB_COMPACT_ENGINE_H

#include "io/layout.h"
#include "io/npy.h"
#include "io/transfer.h"
#include "job/context.h"
#include "job/sort_engine.h"
#include "prim/compact.h"
#include "prim/predicate.h"

/* A job of the look-back family (gpusort_compact), checked and in internal form. */
typedef struct {
  uint32_t mode;          /* GS_COMPACT_SELECT, _PARTITION, _UNIQUE, _REDUCE_BY_KEY */
  bool rle;               /* UNIQUE that writes (key, count) records */
  unsigned count_bytes;   /* rle: 4 or 8 */
  gs_layout layout;       /* keys, pairs or records of a numeric key (reduce-by-key: pairs);
                             a .npy input's is resolved by gs_compact_request_resolve */
  gpusort_type key_form;  /* a narrow, half or big-endian key, widened to layout.key on the
                             host as it goes up (prim/elements.h); NONE: layout.key's own */
  const char *where;      /* select, partition: the predicate's text (the caller's) */
  gs_predicate predicate; /* select, partition: `where` parsed for the key's type */
  gs_scan_op op;          /* reduce-by-key */
  gpusort_type acc_asked; /* reduce-by-key: NONE (the value's type) or the type asked for */
  gs_key_type acc;        /* reduce-by-key: the output value's type */
} gs_compact_request;

/* "select", "partition", "unique", "rle" or "reduce-by-key". */
const char *gs_compact_request_name(const gs_compact_request *r);

/* Checks the request against its layout and completes it: the key found (a numeric key part,
 * whatever the layout's other fields are), the value of reduce-by-key's
 * pairs, the accumulator, the predicate parsed. `npy` (may be NULL): the header of a .npy
 * input, whose structured dtype of two fields (key, value) gives reduce-by-key its pairs.
 * Usage errors say what does not fit. */
int gs_compact_request_resolve(gs_compact_request *r, const gs_npy *npy);

/* Bytes of one output record (of a resolved request). */
unsigned gs_compact_output_bytes(const gs_compact_request *r);

/* The dtype of a .npy output (of a resolved request): the input's own (`input_descr`) for
 * select, partition and unique; packed (key, count) or (key, value) fields otherwise. */
void gs_compact_npy_descr(const gs_compact_request *r, const char *input_descr, char *buf, size_t size);

/* Where the output records go. */
typedef struct {
  gs_bytes_sink sink;    /* select, unique, rle, reduce-by-key: the records in order */
  gs_bytes_place place;  /* may be NULL: where the sink would have the next bytes built */
  void *ctx;
  unsigned char *region; /* partition: room for all `total` records, written anywhere */
  uint64_t total;        /* partition: the records of the whole job */
  /* may be NULL: for a job of one chunk (gs_compact_engine_all), called with the number of
   * records it writes once its pass has run and before any is written (an output can be
   * sized then) */
  int (*size_known)(void *size_ctx, uint64_t records);
  void *size_ctx;
} gs_compact_output;

/* A run held back at the end of a chunk (rle, reduce-by-key): the next chunk may continue it. */
typedef struct {
  bool valid;
  uint64_t key_bits;
  uint64_t first;            /* input position of its first record */
  unsigned char value[8];    /* reduce-by-key: the values so far, accumulator-typed */
} gs_compact_run_state;

typedef struct {
  gs_context *ctx;
  const gs_compact_request *request;
  const gs_compact *compact;
  gs_compact_output out;
  uint64_t capacity;  /* records per chunk */
  unsigned key_bytes, value_bytes, acc_bytes, out_bytes; /* (key_bytes: as the records hold it) */
  unsigned gpu_key_bytes;     /* as the GPU compares it (widened) */
  unsigned char *form_keys, *wide_keys; /* a chunk's keys of another form, gathered and widened */
  gs_buffer keys, values, indices, results, state, program;
  gs_compact_rest rest; /* what the state block holds for the next chunk's pass */
  gs_stager staging;  /* both ways */
  unsigned char *scratch; /* output records built here where the sink has no place for them */
  size_t scratch_bytes;
  /* the chunk of the last pass */
  const unsigned char *records; /* its records on the host */
  uint64_t n, first;  /* its records, and the input position of its first */
  uint64_t kept;      /* what the GPU kept of it (partition: the kept of the split) */
  bool continues;     /* its first key equals the previous chunk's last */
  /* the job so far */
  uint64_t chunks, consumed; /* chunks and records passed */
  uint64_t last_key_bits;    /* the last key of the last chunk */
  uint64_t written;          /* output records handed to the sink (partition: placed) */
  uint64_t kept_total, rejected_total; /* partition */
  gs_compact_run_state held;
  double setup, read, upload, gpu, download, write, assemble;
} gs_compact_engine;

/* The most records per chunk within `budget` bytes of device and staging memory, and within
 * one bounded submission (0 if not even one). Builds the pipeline. */
uint64_t gs_compact_engine_capacity(gs_context *ctx, const gs_compact_request *r, uint64_t budget);

/* Everything for n records of host memory (`data` must hold them: the output is built from
 * them), in as many chunks as the budget needs: each chunk uploaded, compacted on the GPU,
 * its results downloaded and its output records written; then the run held back after the
 * last chunk, and partition's rejected records put in input order. */
int gs_compact_engine_all(gs_compact_engine *e, gs_context *ctx, const gs_compact_request *r,
                          const gs_record_source *source, uint64_t n, const gs_compact_output *out);

/* After gs_compact_engine_all: the records written (partition: the split). */
uint64_t gs_compact_engine_result(const gs_compact_engine *e);

void gs_compact_engine_free(gs_compact_engine *e);

#endif
