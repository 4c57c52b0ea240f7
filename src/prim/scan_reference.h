/* Textbook scans of u32 sums, as references for the benchmark (gpusort bench --scan-algos):
 *   Hillis-Steele over global memory  log2(n) passes, O(n log n) additions;
 *   Blelloch over global memory       work-efficient up- and down-sweep, 2 log2(n) passes
 *                                     over a power-of-two copy;
 *   Blelloch in shared memory         blocks of 2 x workgroup, block sums scanned recursively;
 *   subgroup-blocked                  blocks scanned with subgroup scans, likewise.
 * They are correct (tested like the rest) but not meant to be fast. */
#ifndef GS_PRIM_SCAN_REFERENCE_H
#define GS_PRIM_SCAN_REFERENCE_H

#include "prim/memops.h"
#include "vk/commands.h"

typedef enum {
  GS_REFSCAN_HILLIS_STEELE,
  GS_REFSCAN_BLELLOCH_GLOBAL,
  GS_REFSCAN_BLELLOCH_SHARED,
  GS_REFSCAN_SUBGROUP_BLOCKED,
  GS_REFSCAN_COUNT
} gs_refscan_algo;

enum { GS_REFSCAN_MAX_LEVELS = 8 };

typedef struct {
  gs_device *dev;
  const gs_memops *memops;
  uint64_t capacity, padded; /* padded: the power of two for Blelloch over global memory */
  uint32_t workgroup_size;
  gs_kernel global, blocked[2]; /* blocked[0]: Blelloch in shared memory, [1]: subgroup */
  gs_buffer input, output, work;
  gs_buffer sums[2][GS_REFSCAN_MAX_LEVELS]; /* per blocked kind, per level */
} gs_scan_reference;

const char *gs_refscan_name(gs_refscan_algo algo);

int gs_scan_reference_create(gs_device *dev, const gs_memops *memops, gs_scan_reference *r, uint64_t capacity);
void gs_scan_reference_destroy(gs_scan_reference *r);

/* Records the scan of r->input's first n elements into r->output. */
int gs_scan_reference_record(gs_scan_reference *r, VkCommandBuffer cb, gs_refscan_algo algo, uint64_t n,
                             bool inclusive);

#endif
