/* Compute kernels: an embedded SPIR-V module built into a pipeline with specialization
 * constants and push constants, and nothing else: kernels reach memory through device
 * addresses in their push constants (shaders/kernel_interface.h), so there are no descriptor
 * sets to allocate, bind or keep alive.
 *
 * Specialization constants are numbered as in kernel_interface.h (GS_SPEC_*): 0 is the
 * workgroup size, 1 the subgroup size (set here from the device). Pipelines are pinned to
 * gs_device.subgroup_size with full subgroups, so a shader can size shared memory by
 * WORKGROUP_SIZE / SUBGROUP_SIZE. */
#ifndef GS_VK_KERNEL_H
#define GS_VK_KERNEL_H

#include "kernel_interface.h"
#include "vk/buffer.h"

typedef struct {
  const char *name;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t push_bytes;
  uint32_t workgroup_size;
} gs_kernel;

/* spec[0] is the workgroup size; spec[1] is overwritten with the device's subgroup size;
 * spec_count at most GS_SPEC_COUNT. */
int gs_kernel_create(gs_device *dev, gs_kernel *k, const char *spirv_name, uint32_t push_bytes, const uint32_t *spec,
                     uint32_t spec_count);

void gs_kernel_destroy(gs_device *dev, gs_kernel *k);

/* Records a dispatch of `groups` workgroups, and after it a barrier that makes its writes
 * visible to everything recorded later (gs_cmd_barrier): every dispatch is ordered after the
 * ones before it by construction. (The validation layer cannot check this: its synchronization
 * validation does not see memory reached through device addresses.) More groups than one
 * dimension allows are folded into x * y >= groups, so kernels dispatched this way must take
 * their work from a ticket or linear_group_index() and let surplus groups exit. Fails only if
 * even the folded grid cannot hold `groups`. */
int gs_kernel_dispatch(const gs_device *dev, VkCommandBuffer cb, const gs_kernel *k, const void *push, uint32_t groups);

/* The same with the group counts read by the GPU from a VkDispatchIndirectCommand. */
void gs_kernel_dispatch_indirect(VkCommandBuffer cb, const gs_kernel *k, const void *push, gs_range command);

/* `want` invocations, halved until the device takes them (every device gpusort runs on takes
 * 128; a multiple of any subgroup size). */
static inline uint32_t gs_workgroup_within(const gs_device *dev, uint32_t want) {
  while (want > dev->info.max_workgroup_size && want > 128) want /= 2;
  return want;
}

/* How many workgroups of `per_group` items cover `items`. */
static inline uint32_t gs_groups_for(uint64_t items, uint64_t per_group) {
  return (uint32_t)((items + per_group - 1) / per_group);
}

#endif
