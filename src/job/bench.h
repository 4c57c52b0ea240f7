/* Benchmarks of device-resident sorts, scans and compactions (gpusort_bench_sort,
 * gpusort_bench_scans, gpusort_bench_compact). */
#ifndef GS_JOB_BENCH_H
#define GS_JOB_BENCH_H

#include "gpusort.h"
#include "io/datagen.h"
#include "io/layout.h"
#include "job/context.h"

/* Keys of the distribution (seed 1) or pairs (values are each key's index):
 * GPUSORT_ERROR_TOO_LARGE if n does not fit. */
int gs_bench_sort(gs_context *c, const gs_layout *layout, uint64_t n, unsigned reps, gs_sort_algo algo, gs_dist dist,
                  gpusort_bench_result *result);

int gs_bench_scans(gs_context *c, uint64_t n, unsigned reps, gpusort_bench_scan_result *result);

/* Select and partition (half kept), unique, run-length encoding and reduce-by-key (about n/16
 * runs) of n u32 keys: CUB's benchmark inputs. */
int gs_bench_compact(gs_context *c, uint64_t n, unsigned reps, gpusort_bench_scan_result *result);

#endif
