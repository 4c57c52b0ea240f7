/* Clearing and copying device memory with compute kernels (shaders/clear_words.comp,
 * copy_words.comp), so that sorts and scans record compute work only: no transfer commands,
 * one kind of barrier, and full device bandwidth (on an H100 vkCmdCopyBuffer on the compute
 * queue reached under a third of a compute-kernel copy). */
#ifndef GS_PRIM_MEMOPS_H
#define GS_PRIM_MEMOPS_H

#include "vk/kernel.h"

typedef struct {
  gs_kernel clear, copy;
  uint32_t words_per_group;
} gs_memops;

int gs_memops_create(gs_device *dev, gs_memops *m);
void gs_memops_destroy(gs_device *dev, gs_memops *m);

/* Records zeroing `words` 32-bit words of `dst` (16-byte aligned). */
int gs_record_clear(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, gs_range dst, uint64_t words);

/* Records copying `words` words from src to dst (both 16-byte aligned, not overlapping). */
int gs_record_copy(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, gs_range src, gs_range dst,
                   uint64_t words);

/* The same with the count read by the GPU: (u32 at `count`) * scale words, at most
 * max_words (the dispatch is sized for max_words; surplus workgroups do nothing). src may
 * have size 0 for a clear. */
int gs_record_counted(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, const gs_range *src, gs_range dst,
                      VkDeviceAddress count, uint32_t scale, uint64_t max_words);

#endif
