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

layout(push_constant, std430) uniform Push { gs_reference_global_push pc; };

void main() {
  const uint i = linear_group_index() * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  WordArray a = WordArray(pc.a), b = WordArray(pc.b), c = WordArray(pc.c);
  if (pc.mode == 4u) {
    if (i == 0u) a.words[pc.last] = 0u;
    return;
  }
  if (i >= pc.count) return;
  switch (pc.mode) {
  case 0u: b.words[i] = i >= pc.offset ? a.words[i] + a.words[i - pc.offset] : a.words[i]; break;
  case 1u: b.words[i] = i == 0u ? 0u : a.words[i - 1u]; break;
  case 2u: {
    const uint at = (i + 1u) * 2u * pc.offset - 1u;
    a.words[at] += a.words[at - pc.offset];
    break;
  }
  case 3u: {
    const uint at = (i + 1u) * 2u * pc.offset - 1u;
    const uint t = a.words[at - pc.offset];
    a.words[at - pc.offset] = a.words[at];
    a.words[at] += t;
    break;
  }
  case 5u: b.words[i] = a.words[i] + c.words[i]; break;
  }
}
