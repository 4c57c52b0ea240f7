#version 460
#extension GL_GOOGLE_include_directive : require
// Upfront pass of the Onesweep radix sort: one read of every key builds the 256-bin
// histogram of each digit position the digit-binning passes will sort by.
// Workgroups stride over the keys; counts gather in shared memory, then go to the global
// histograms with one atomic add per nonzero bin. radix_scan_histograms turns them into
// each digit's first output position.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_histogram_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint MAX_PASSES = KEY_BITS / RADIX_BITS;
shared uint s_histograms[MAX_PASSES * RADIX];

void main() {
  const bool indirect = (pc.flags & GS_SORT_INDIRECT) != 0u;
  const uint n = indirect ? Control(pc.control).control.n : pc.n;
  const uint groups = indirect ? Control(pc.control).control.histogram_groups : pc.groups;
  const uint lid = gl_LocalInvocationID.x;
  const uint group = linear_group_index();
  if (group >= groups) return;
  const uint bins = pc.passes * RADIX;
  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) s_histograms[i] = 0u;
  barrier();

  KeysIn keys = KeysIn(pc.keys);
  const uint stride = groups * WORKGROUP_SIZE;
  for (uint i = group * WORKGROUP_SIZE + lid; i < n; i += stride) {
    const key_t ordered = key_to_ordered(keys.keys[i]);
    [[unroll]] for (uint p = 0u; p < MAX_PASSES; p++) {
      if (p < pc.passes) {
        const uint bits = p + 1u == pc.passes ? pc.last_bits : RADIX_BITS;
        atomicAdd(s_histograms[p * RADIX + key_digit(ordered, pc.first_shift + p * RADIX_BITS, bits)], 1u);
      }
    }
  }
  barrier();

  WordArray histograms = WordArray(pc.histograms);
  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) {
    const uint count = s_histograms[i];
    if (count != 0u) atomicAdd(histograms.words[i], count);
  }
}
