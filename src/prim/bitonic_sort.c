#include "prim/bitonic_sort.h"

#include <string.h>

#include "util/error.h"

enum { WORKGROUP = 256, BLOCK_PER_INVOCATION = 4 /* as shaders/bitonic_sort.comp */ };

int gs_bitonic_sort_create(gs_device *dev, const gs_memops *memops, gs_key_type key, bool descending,
                           unsigned value_bytes, gs_bitonic_sort *s) {
  memset(s, 0, sizeof *s);
  const gs_key_info *info = gs_key_info_of(key);
  s->dev = dev;
  s->memops = memops;
  s->key_bytes = info->bytes;
  s->value_bytes = value_bytes;
  if ((info->bytes == 8 || value_bytes == 8) && !dev->int64)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot sort 64-bit keys or values (no shaderInt64)", dev->info.name);
  uint32_t wg = gs_workgroup_within(dev, WORKGROUP < dev->subgroup_size ? dev->subgroup_size : WORKGROUP);
  /* shared memory: a key and an index per element of the block */
  while (wg > 64 && (uint64_t)wg * BLOCK_PER_INVOCATION * (info->bytes + 4) > dev->info.max_shared_bytes) wg /= 2;
  s->block = wg * BLOCK_PER_INVOCATION;
  const uint32_t spec[] = {wg, 0, (uint32_t)info->kind, descending ? 1 : 0};
  return gs_kernel_create(dev, &s->kernel, info->bytes == 8 ? "bitonic_sort_k64" : "bitonic_sort_k32",
                          sizeof(gs_bitonic_push), spec, 4);
}

void gs_bitonic_sort_destroy(gs_bitonic_sort *s) {
  gs_device *dev = s->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use it: leave to exit */
  gs_kernel_destroy(dev, &s->kernel);
  memset(s, 0, sizeof *s);
}

uint64_t gs_bitonic_sort_max_keys(void) { return 1ull << 31; }

/* Elements of the work area: a power of two, at least one block. */
static uint64_t padded_for(const gs_bitonic_sort *s, uint64_t n) {
  uint64_t padded = s->block;
  while (padded < n) padded *= 2;
  return padded;
}

VkDeviceSize gs_bitonic_sort_state_bytes(const gs_bitonic_sort *s, uint64_t max_n) {
  return padded_for(s, max_n) * (s->key_bytes + 4);
}

static int flush(const gs_bitonic_run *run, VkCommandBuffer *cb, uint64_t keys) {
  return run->flush ? run->flush(run->flush_ctx, cb, keys) : GPUSORT_OK;
}

int gs_bitonic_sort_record(const gs_bitonic_sort *s, VkCommandBuffer *cb, const gs_bitonic_run *run) {
  const bool indirect = run->count.size != 0;
  const uint64_t n = indirect ? run->max_n : run->n;
  if (n == 0) return GPUSORT_OK;
  if (n > gs_bitonic_sort_max_keys())
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "a bitonic sort takes at most 2^31 keys, not %llu",
                   (unsigned long long)n);
  const uint64_t padded = padded_for(s, n);
  const unsigned key_bits = s->key_bytes * 8, end = run->end_bit ? run->end_bit : key_bits;
  const uint64_t high = end == 64 ? ~0ull : (1ull << end) - 1, mask = high & ~((1ull << run->begin_bit) - 1);
  /* the values are gathered through the indices: into tmp first when sorted in place */
  const bool in_place = s->value_bytes && !run->index_values && run->values_out.address == run->values_in.address;
  gs_bitonic_push pp = {.keys_in = run->keys_in.address,
                        .keys_out = run->keys_out.address,
                        .values_in = run->values_in.address,
                        .values_out = in_place ? run->values_tmp.address : run->values_out.address,
                        .work_keys = run->state.address,
                        .work_indices = run->state.address + padded * s->key_bytes,
                        .count = indirect ? run->count.address : 0,
                        .n = (uint32_t)n,
                        .padded = (uint32_t)padded,
                        .value_words = s->value_bytes / 4,
                        .mask_low = (uint32_t)mask,
                        .mask_high = (uint32_t)(mask >> 32),
                        .flags = run->index_values ? GS_SORT_INDEX_VALUES : 0};
  const uint32_t blocks = (uint32_t)(padded / s->block);
  const uint32_t step_groups = (uint32_t)(padded / 2 / (s->block / BLOCK_PER_INVOCATION));
  gs_bitonic_push blocks_push = pp;
  blocks_push.flags |= GS_BITONIC_BLOCKS | (padded == s->block ? GS_BITONIC_LAST : 0);
  int rc = gs_kernel_dispatch(s->dev, *cb, &s->kernel, &blocks_push, blocks);
  for (uint64_t k = 2 * (uint64_t)s->block; k <= padded && !rc; k *= 2) {
    for (uint64_t j = k / 2; j >= s->block && !rc; j /= 2) {
      gs_bitonic_push step = pp;
      step.flags |= GS_BITONIC_STEP;
      step.k = (uint32_t)k;
      step.j = (uint32_t)j;
      if (!(rc = gs_kernel_dispatch(s->dev, *cb, &s->kernel, &step, step_groups))) rc = flush(run, cb, n);
    }
    gs_bitonic_push merge = pp;
    merge.flags |= GS_BITONIC_MERGE | (k == padded ? GS_BITONIC_LAST : 0);
    merge.k = (uint32_t)k;
    if (!rc && !(rc = gs_kernel_dispatch(s->dev, *cb, &s->kernel, &merge, blocks))) rc = flush(run, cb, n);
  }
  if (rc || !in_place) return rc;
  const uint64_t words = run->n * s->value_bytes / 4;
  if (indirect)
    return gs_record_counted(s->dev, *cb, s->memops, &run->values_tmp, run->values_out, run->count.address,
                             s->value_bytes / 4, run->max_n * s->value_bytes / 4);
  return gs_record_copy(s->dev, *cb, s->memops, run->values_tmp, run->values_out, words);
}
