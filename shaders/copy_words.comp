#version 460
#extension GL_GOOGLE_include_directive : require
// Buffer-to-buffer copy by compute invocations, 16 bytes per access: the device's own
// memory bandwidth, as the benchmark's reference next to the sort.
#include "lib/common.glsl"

layout(std430, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(std430, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(push_constant) uniform Push {
  uint count; // uvec4 elements
  uint groups;
} pc;

const uint PER_INVOCATION = 4;

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= pc.groups) return;
  const uint first = group * WORKGROUP_SIZE * PER_INVOCATION + gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < PER_INVOCATION; i++) {
    const uint index = first + i * WORKGROUP_SIZE;
    if (index < pc.count) destination[index] = source[index];
  }
}
