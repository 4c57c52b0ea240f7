/* Whole jobs, as the public API offers them: on files (input, output, report) and on host
 * arrays. Arguments arrive checked and in internal form (src/api/ translates); `report` is
 * never NULL. */
#ifndef GS_JOB_JOBS_H
#define GS_JOB_JOBS_H

#include "gpusort.h"
#include "io/datagen.h"
#include "job/compact_engine.h"
#include "job/scan_engine.h"
#include "job/sort_engine.h"

typedef struct {
  bool overwrite, sync;
} gs_file_flags;

int gs_file_sort(gs_context *c, const char *input, const char *output, gs_sort_request *request, gs_file_flags flags,
                 gpusort_report *report);

int gs_file_scan(gs_context *c, const char *input, const char *output, const gs_scan_config *config,
                 gs_file_flags flags, gpusort_report *report);

/* The combination of all elements, written to *result as the accumulator type. */
int gs_file_reduce(gs_context *c, const char *input, const gs_scan_config *config, void *result,
                   gpusort_report *report);

/* The look-back family (src/job/compact_engine.h), in as many chunks as the budget needs.
 * *result_count: records written (partition: the split). A .npy input's layout is resolved
 * from its header here, and the request completed for it. */
int gs_file_compact(gs_context *c, const char *input, const char *output, const gs_compact_request *r,
                    gs_file_flags flags, uint64_t *result_count, gpusort_report *report);
int gs_array_compact(gs_context *c, const void *input, void *output, uint64_t n, const gs_compact_request *r,
                     uint64_t *result_count);

/* Host only. GPUSORT_ERROR_NOT_SORTED naming the first record out of order. */
int gs_file_check(const char *input, const gs_layout *layout, bool descending, unsigned begin_bit, unsigned end_bit,
                  gpusort_report *report);

/* Host only: records [first, first + count) of the data set (src/io/datagen.h). */
void gs_generate_records(const gs_layout *layout, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first,
                         uint64_t count, void *records);

int gs_file_generate(const char *output, const gs_layout *layout, gs_dist dist, uint64_t seed, uint64_t n,
                     gs_file_flags flags, gpusort_report *report);

/* Arrays: output may be input (in place). */
int gs_array_sort(gs_context *c, const void *input, void *output, uint64_t n, gs_sort_request *request);
int gs_array_scan(gs_context *c, const void *input, void *output, uint64_t n, const gs_scan_config *config);

#endif
