/* Sorts of inputs larger than the GPU takes at once (the device's memory or the budget):
 * an MSD partition on the top bits of the key, then the in-core sort of each part.
 *
 *   histogram  one pass over the input counts the records of each bucket (the top B bits of
 *              the ordered key, B from 8 to 16); the buckets' sizes give every bucket's
 *              place in the output, and group consecutive buckets into bins that each fit
 *              one in-core sort;
 *   partition  the input streams through the GPU in batches, each sorted on the bucket bits
 *              alone (stable), and each bucket's run of a batch is copied to the bucket's next
 *              free place in a work file: the output itself where it can be mapped, else a
 *              scratch file;
 *   bins       each bin, read back from the work file, is sorted in core on all bits and
 *              written to the output in order.
 * A bucket too large for one sort is split again, on the next bits, through a scratch file
 * of its size; a bucket whose records all share the remaining bits is already in order.
 * The partition is stable and bins are sorted stably, so the result is byte for byte the
 * in-core sort's. Argsort partitions (key, index) records and writes the indices. */
#ifndef GS_JOB_OUT_OF_CORE_H
#define GS_JOB_OUT_OF_CORE_H

#include "gpusort.h"
#include "io/emitter.h"
#include "io/input.h"
#include "io/output.h"
#include "job/sort_engine.h"

typedef struct {
  gs_context *ctx;
  const gs_sort_request *request;
  const gs_input *input;  /* mapped, with data_fd */
  uint64_t n;             /* records */
  uint64_t capacity;      /* records one in-core sort takes within the budget */
  const char *scratch_dir;
  gs_output *out;         /* the output (reserved and mapped where possible) */
  gs_emitter *emitter;    /* the output's bytes go through it, in order */
  gpusort_report *report; /* stages and counts are added */
} gs_out_of_core_job;

/* The records an out-of-core sort of this request holds in memory at once within `budget`. */
uint64_t gs_out_of_core_capacity(gs_context *ctx, const gs_sort_request *request, uint64_t budget);

int gs_out_of_core_sort(const gs_out_of_core_job *job);

#endif
