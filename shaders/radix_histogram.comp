#version 460
#extension GL_GOOGLE_include_directive : require
// Upfront pass of the Onesweep radix sort: one read of every key builds the 256-bin
// histogram of each digit position the digit-binning passes will sort by.
// Workgroups stride over the keys; counts gather in shared memory, then go to the global
// histograms with one atomic add per nonzero bin. radix_scan_histograms turns them into
// each digit's first output position.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(std430, binding = 0) readonly buffer Keys { key_t keys[]; };
layout(std430, binding = 1) buffer Histograms { uint histograms[]; }; // [pass][RADIX], zeroed by the host

layout(push_constant) uniform Push {
  uint n;
  uint passes;      // digit positions to count
  uint first_shift; // bit offset of the first digit
  uint last_bits;   // width of the last digit, 1..8; the others are 8 wide
  uint groups;      // workgroups sharing the keys (the dispatch may be folded into 2D)
} pc;

const uint MAX_PASSES = KEY_BITS / RADIX_BITS;
shared uint s_histograms[MAX_PASSES * RADIX];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= pc.groups) return;
  const uint bins = pc.passes * RADIX;
  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) s_histograms[i] = 0u;
  barrier();

  const uint stride = pc.groups * WORKGROUP_SIZE;
  for (uint i = group * WORKGROUP_SIZE + lid; i < pc.n; i += stride) {
    const key_t ordered = key_to_ordered(keys[i]);
    [[unroll]] for (uint p = 0u; p < MAX_PASSES; p++) {
      if (p < pc.passes) {
        const uint bits = p + 1u == pc.passes ? pc.last_bits : RADIX_BITS;
        atomicAdd(s_histograms[p * RADIX + key_digit(ordered, pc.first_shift + p * RADIX_BITS, bits)], 1u);
      }
    }
  }
  barrier();

  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) {
    const uint count = s_histograms[i];
    if (count != 0u) atomicAdd(histograms[i], count);
  }
}
