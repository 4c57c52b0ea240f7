/* Bitonic sort of device-resident keys (and values): shaders/bitonic_sort.comp.
 *
 * The keys, mapped to ordered keys, and their input indices are sorted as pairs in a work
 * area of the state block, padded to a power of two (at least one block) with the largest key;
 * the last step writes the keys back and gathers the values through the indices. O(n log^2 n)
 * work, but one dispatch up to a block and no workgroup ever waits on another: the sort for
 * small inputs and the portable fallback. Stable (indices break ties), like the radix sorts,
 * whose recording (src/prim/radix_sort.h) runs it for GS_SORT_BITONIC. */
#ifndef GS_PRIM_BITONIC_SORT_H
#define GS_PRIM_BITONIC_SORT_H

#include "prim/keys.h"
#include "prim/memops.h"
#include "vk/commands.h"

typedef struct {
  gs_device *dev;
  const gs_memops *memops;
  unsigned key_bytes, value_bytes;
  uint32_t block; /* elements sorted in shared memory by one workgroup */
  gs_kernel kernel;
} gs_bitonic_sort;

typedef struct {
  uint64_t n, max_n;  /* max_n: what the state was sized for */
  gs_range count;     /* an indirect sort's u32 count (clamped to max_n); size 0: direct */
  unsigned begin_bit, end_bit; /* compared ordered-key bits; 0, 0: all */
  bool index_values;  /* values become the keys' input indices */
  gs_range keys_in, keys_out;
  gs_range values_in, values_out, values_tmp; /* values_tmp: used when values_out is values_in */
  gs_range state;
  /* Called, when set, after each dispatch beyond the first with the keys it covered (as
   * gs_radix_sort_run.flush). */
  int (*flush)(void *ctx, VkCommandBuffer *cb, uint64_t keys);
  void *flush_ctx;
} gs_bitonic_run;

int gs_bitonic_sort_create(gs_device *dev, const gs_memops *memops, gs_key_type key, bool descending,
                           unsigned value_bytes, gs_bitonic_sort *s);
void gs_bitonic_sort_destroy(gs_bitonic_sort *s);

/* The most keys one sort takes (indices are 32 bits; the work area is padded to a power of two). */
uint64_t gs_bitonic_sort_max_keys(void);

VkDeviceSize gs_bitonic_sort_state_bytes(const gs_bitonic_sort *s, uint64_t max_n);

/* Records the sort into *cb (which a flush may replace). */
int gs_bitonic_sort_record(const gs_bitonic_sort *s, VkCommandBuffer *cb, const gs_bitonic_run *run);

#endif
