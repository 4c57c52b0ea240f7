/* Compute kernels: an embedded SPIR-V module built into a pipeline with specialization
 * constants, a descriptor-set layout of N storage buffers, and push constants.
 *
 * Specialization constant ids follow one convention in every shader:
 *   0 = workgroup size (also local_size_x_id), 1 = subgroup size, 2.. = per-kernel.
 * Pipelines are pinned to gs_device.subgroup_size with full subgroups, so a shader can size
 * shared memory by WORKGROUP_SIZE / SUBGROUP_SIZE. */
#ifndef GS_VK_KERNEL_H
#define GS_VK_KERNEL_H

#include "vk/buffer.h"

enum { GS_KERNEL_MAX_BINDINGS = 8, GS_KERNEL_MAX_SPEC = 12 };

typedef struct {
  const char *name;
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t bindings;
  uint32_t push_bytes;
  uint32_t workgroup_size;
} gs_kernel;

/* spec[0] is the workgroup size; spec[1] is overwritten with the device's subgroup size. */
int gs_kernel_create(gs_device *dev, gs_kernel *k, const char *spirv_name, uint32_t bindings, uint32_t push_bytes,
                     const uint32_t *spec, uint32_t spec_count);

void gs_kernel_destroy(gs_device *dev, gs_kernel *k);

/* A descriptor pool for `sets` sets of up to GS_KERNEL_MAX_BINDINGS storage buffers each. */
int gs_descriptor_pool_create(gs_device *dev, uint32_t sets, VkDescriptorPool *pool);

/* Allocates a set for `k` binding buffers[i] (the whole buffer) to binding i; an error if a
 * buffer is larger than one binding may address. */
int gs_kernel_bind(gs_device *dev, const gs_kernel *k, VkDescriptorPool pool, const gs_buffer *const *buffers,
                   VkDescriptorSet *set);

/* Records a dispatch of `groups` workgroups. More groups than one dimension allows are
 * folded into x * y >= groups, so kernels dispatched this way must take their work from a
 * ticket or a linearized group id and let surplus groups exit. Fails only if even the
 * folded grid cannot hold `groups`. */
int gs_kernel_dispatch(gs_device *dev, VkCommandBuffer cb, const gs_kernel *k, VkDescriptorSet set, const void *push,
                       uint32_t groups);

#endif
