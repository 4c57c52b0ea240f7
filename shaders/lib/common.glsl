// Extensions and the specialization constants every kernel shares (see src/vk/kernel.h):
//   constant 0 = workgroup size, 1 = subgroup size (the pipeline is pinned to it, with full
//   subgroups), 2 and 3 = key kind and direction (lib/keys.glsl), 4.. = per kernel.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#if KEY_BITS == 64 || (defined(VALUE_WORDS) && VALUE_WORDS == 2) || defined(NEEDS_INT64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#pragma use_vulkan_memory_model

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WORKGROUP_SIZE = 256;
layout(constant_id = 1) const uint SUBGROUP_SIZE = 32;
const uint NUM_SUBGROUPS = WORKGROUP_SIZE / SUBGROUP_SIZE;

const uint RADIX_BITS = 8;
const uint RADIX = 1u << RADIX_BITS;
