/* Host-side data parallelism for the bulk copies and hashes around the GPU work
 * (staging copies from the page cache, verification hashes, test data generation).
 * One thread moves about 12 GB/s from the page cache; a few more keep up with the bus. */
#ifndef GS_UTIL_PARALLEL_H
#define GS_UTIL_PARALLEL_H

#include <stddef.h>

/* Number of worker threads used by gs_parallel_for: the online CPUs, at most 16,
 * or GPUSORT_THREADS when set. */
unsigned gs_parallel_threads(void);

/* Calls fn(ctx, begin, end, worker) over disjoint ranges covering [0, count), each at least
 * `grain` long except the last, on up to gs_parallel_threads() threads; returns when all
 * are done. Small counts run on the calling thread. */
void gs_parallel_for(size_t count, size_t grain,
                     void (*fn)(void *ctx, size_t begin, size_t end, unsigned worker), void *ctx);

/* Runs first(first_ctx) on a new thread and second(second_ctx) on this one; returns when
 * both are done (both run here, one after the other, if no thread can be made). */
void gs_run_both(void (*first)(void *), void *first_ctx, void (*second)(void *), void *second_ctx);

/* memcpy split over the worker threads. */
void gs_parallel_memcpy(void *dst, const void *src, size_t bytes);

#endif
