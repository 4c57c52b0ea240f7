// Extensions and the specialization constants every kernel shares. The push-constant blocks,
// flags and constant ids are declared once for host and kernels in kernel_interface.h.
// Constant 0 = workgroup size (also local_size_x_id), 1 = subgroup size (the pipeline is
// pinned to it, with full subgroups), 2.. per kernel (GS_SPEC_* in kernel_interface.h).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if KEY_BITS == 64 || (defined(VALUE_WORDS) && VALUE_WORDS == 2) || defined(NEEDS_INT64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#pragma use_vulkan_memory_model

#define GS_GLSL 1
#include "../kernel_interface.h"

layout(local_size_x_id = GS_SPEC_WORKGROUP_SIZE) in;
layout(constant_id = GS_SPEC_WORKGROUP_SIZE) const uint WORKGROUP_SIZE = 256;
layout(constant_id = GS_SPEC_SUBGROUP_SIZE) const uint SUBGROUP_SIZE = 32;
const uint NUM_SUBGROUPS = WORKGROUP_SIZE / SUBGROUP_SIZE;
// Polls of an empty look-back descriptor before the waiting tile computes the count itself
// (lib/lookback.glsl, lib/scan_lookback.glsl).
layout(constant_id = GS_SPEC_LOOKBACK_SPIN) const uint LOOKBACK_SPIN_LIMIT = 256;

const uint RADIX_BITS = GS_RADIX_BITS;
const uint RADIX = GS_RADIX;

// The workgroup's index in a dispatch that the host may have folded into x * y groups when
// one dimension could not hold them all (src/vk/kernel.c); surplus groups must exit.
uint linear_group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// Every buffer is reached through a device address (no descriptors): arrays of 32-bit words,
// read-write, for kernels that address memory by word.
layout(buffer_reference, std430, buffer_reference_align = 4) buffer WordArray { uint words[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer VectorArray { uvec4 vectors[]; };
