#version 460
#extension GL_GOOGLE_include_directive : require
// Reference scans of u32 sums over global memory, one dispatch per step, for the benchmark's
// comparison (gpusort bench --scan-algos). Steps, by pc.mode:
//   0 Hillis-Steele step: b[i] = a[i] + a[i - offset] (a[i] when i < offset)
//   1 shift right by one: b[i] = a[i - 1], b[0] = 0 (inclusive to exclusive)
//   2 Blelloch up-sweep level: a[i] += a[i - offset] for i = (j + 1) * 2 * offset - 1
//   3 Blelloch down-sweep level: t = a[i - offset]; a[i - offset] = a[i]; a[i] += t
//   4 clear the last element (between the sweeps)
//   5 add: b[i] = a[i] + c[i] (exclusive to inclusive)
#include "../lib/common.glsl"

layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer C { uint c[]; };

layout(push_constant) uniform Push {
  uint count; // elements, or for the sweeps the number of pairs
  uint offset;
  uint mode;
  uint last; // mode 4: index of the last element
} pc;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  if (pc.mode == 4u) {
    if (i == 0u) a[pc.last] = 0u;
    return;
  }
  if (i >= pc.count) return;
  switch (pc.mode) {
  case 0u: b[i] = i >= pc.offset ? a[i] + a[i - pc.offset] : a[i]; break;
  case 1u: b[i] = i == 0u ? 0u : a[i - 1u]; break;
  case 2u: {
    const uint at = (i + 1u) * 2u * pc.offset - 1u;
    a[at] += a[at - pc.offset];
    break;
  }
  case 3u: {
    const uint at = (i + 1u) * 2u * pc.offset - 1u;
    const uint t = a[at - pc.offset];
    a[at - pc.offset] = a[at];
    a[at] += t;
    break;
  }
  case 5u: b[i] = a[i] + c[i]; break;
  }
}
