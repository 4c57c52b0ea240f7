#version 460
#extension GL_GOOGLE_include_directive : require
// Upfront pass of the Onesweep radix sort: one read of every key builds the 256-bin
// histogram of each digit position the digit-binning passes will sort by.
// Workgroups stride over the keys, a batch at a time; counts gather in shared memory, then go
// to the global histograms with one atomic add per nonzero bin. radix_scan_histograms turns
// them into each digit's first output position.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_histogram_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint MAX_PASSES = KEY_BITS / RADIX_BITS;
// Keys an invocation loads before counting any, so that their loads are in flight together.
// H100, 2^28 keys: the sort took 9.135 ms so against 9.163 loading one at a time (u32), 29.57
// against 29.58 (u64). Its time, 0.68 ms for u32 keys and 1.3 for u64, goes at about 1.6 * 10^12
// shared atomics a second, whatever the loads do.
const uint BATCH = 4u;
shared uint s_histograms[MAX_PASSES * RADIX];

// One count per digit position. (H100: a subgroup adding for all its lanes where their digits
// agree made the sort of 2^28 u32 keys 1.3 ms slower, equal keys too: the hardware takes one
// address from every lane at once well.)
void count_key(key_t ordered) {
  [[unroll]] for (uint p = 0u; p < MAX_PASSES; p++) {
    if (p < pc.passes) {
      const uint bits = p + 1u == pc.passes ? pc.last_bits : RADIX_BITS;
      atomicAdd(s_histograms[p * RADIX + key_digit(ordered, pc.first_shift + p * RADIX_BITS, bits)], 1u);
    }
  }
}

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
  for (uint i = group * WORKGROUP_SIZE + lid; i < n; i += BATCH * stride) {
    const uint left = n - i; // (compared, not added to: i + BATCH * stride may pass 2^32)
    key_t batch[BATCH];
    [[unroll]] for (uint j = 0u; j < BATCH; j++)
      if (j * stride < left) batch[j] = keys.keys[i + j * stride];
    [[unroll]] for (uint j = 0u; j < BATCH; j++)
      if (j * stride < left) count_key(key_to_ordered(batch[j]));
    if (left <= BATCH * stride) break;
  }
  barrier();

  WordArray histograms = WordArray(pc.histograms);
  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) {
    const uint count = s_histograms[i];
    if (count != 0u) atomicAdd(histograms.words[i], count);
  }
}
