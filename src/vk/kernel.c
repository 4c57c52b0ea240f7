#include "vk/kernel.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "vk/commands.h"
#include "vk/spirv.h"

/* Prints what the driver's compiler reports about the pipeline (registers, spills...). */
static void print_statistics(gs_device *dev, const gs_kernel *k) {
  PFN_vkGetPipelineExecutableStatisticsKHR get_stats =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(dev->device, "vkGetPipelineExecutableStatisticsKHR");
  if (!get_stats) return;
  VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                    .pipeline = k->pipeline, .executableIndex = 0};
  uint32_t n = 0;
  if (get_stats(dev->device, &ei, &n, NULL) != VK_SUCCESS || n == 0) return;
  VkPipelineExecutableStatisticKHR st[64];
  if (n > 64) n = 64;
  for (uint32_t i = 0; i < n; i++) st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
  if (get_stats(dev->device, &ei, &n, st) != VK_SUCCESS && n == 0) return;
  fprintf(stderr, "gpusort: pipeline %s:", k->name);
  for (uint32_t i = 0; i < n; i++) {
    switch (st[i].format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: fprintf(stderr, " %s=%llu", st[i].name, (unsigned long long)st[i].value.u64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: fprintf(stderr, " %s=%lld", st[i].name, (long long)st[i].value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: fprintf(stderr, " %s=%g", st[i].name, st[i].value.f64); break;
    default: fprintf(stderr, " %s=%s", st[i].name, st[i].value.b32 ? "true" : "false");
    }
  }
  fprintf(stderr, "\n");
}

int gs_kernel_create(gs_device *dev, gs_kernel *k, const char *spirv_name, uint32_t push_bytes, const uint32_t *spec,
                     uint32_t spec_count) {
  memset(k, 0, sizeof *k);
  k->name = spirv_name;
  k->push_bytes = push_bytes;
  k->workgroup_size = spec[0];
  const gs_spirv *code = gs_spirv_find(spirv_name);
  if (!code) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: kernel %s is not embedded", spirv_name);
  if (spec_count > GS_SPEC_COUNT || spec_count < 2 || push_bytes > dev->info.max_push_bytes)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: kernel %s has a bad interface", spirv_name);

  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_bytes};
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .pushConstantRangeCount = push_bytes ? 1 : 0,
                                    .pPushConstantRanges = &pr};
  VkResult r = vkCreatePipelineLayout(dev->device, &pli, dev->allocator, &k->layout);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, spirv_name);

  VkShaderModule module;
  VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = code->bytes,
                                 .pCode = code->words};
  r = vkCreateShaderModule(dev->device, &mi, dev->allocator, &module);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, spirv_name);

  uint32_t values[GS_SPEC_COUNT];
  VkSpecializationMapEntry entries[GS_SPEC_COUNT];
  for (uint32_t i = 0; i < spec_count; i++) {
    values[i] = spec[i];
    entries[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
  }
  values[GS_SPEC_SUBGROUP_SIZE] = dev->subgroup_size;
  VkSpecializationInfo si = {.mapEntryCount = spec_count,
                             .pMapEntries = entries,
                             .dataSize = 4 * spec_count,
                             .pData = values};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo sgi = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = dev->subgroup_size};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .pNext = &sgi,
                .flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main",
                .pSpecializationInfo = &si},
      .layout = k->layout};
  if (dev->pipeline_stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  r = vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1, &ci, dev->allocator, &k->pipeline);
  vkDestroyShaderModule(dev->device, module, dev->allocator); /* the pipeline keeps what it needs */
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, spirv_name);
  if (dev->pipeline_stats) print_statistics(dev, k);
  return GPUSORT_OK;
}

void gs_kernel_destroy(gs_device *dev, gs_kernel *k) {
  if (!dev->device || dev->wedged) return;
  if (k->pipeline) vkDestroyPipeline(dev->device, k->pipeline, dev->allocator);
  if (k->layout) vkDestroyPipelineLayout(dev->device, k->layout, dev->allocator);
  memset(k, 0, sizeof *k);
}

int gs_kernel_dispatch(const gs_device *dev, VkCommandBuffer cb, const gs_kernel *k, const void *push, uint32_t groups) {
  if (groups == 0) return GPUSORT_OK;
  uint32_t x = groups, y = 1;
  if (groups > dev->max_groups_x) {
    x = dev->max_groups_x;
    y = (uint32_t)(((uint64_t)groups + x - 1) / x);
    if (y > dev->max_groups_y)
      return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s needs %u workgroups, more than one dispatch can hold", k->name,
                     groups);
  }
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  if (k->push_bytes) vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes, push);
  vkCmdDispatch(cb, x, y, 1);
  gs_cmd_barrier(cb);
  return GPUSORT_OK;
}

void gs_kernel_dispatch_indirect(VkCommandBuffer cb, const gs_kernel *k, const void *push, gs_range command) {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  if (k->push_bytes) vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes, push);
  vkCmdDispatchIndirect(cb, command.buffer, command.offset);
  gs_cmd_barrier(cb);
}
