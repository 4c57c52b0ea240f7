#version 460
#extension GL_GOOGLE_include_directive : require
// Upfront pass of the Onesweep radix sort: one read of every key builds the 256-bin
// histogram of each digit position the digit-binning passes will sort by.
// Workgroups take tiles of WORKGROUP_SIZE * TILE_ROWS keys in turn (tile g, g + groups, ...);
// counts gather in shared memory, then go to the global histograms with one atomic add per
// nonzero bin. radix_scan_histograms turns them into each digit's first output position.
// The shared atomics bound it, at the rate of the distinct addresses they touch: H200, 2^26
// u32 keys, 0.14 ms for uniform keys against 0.09 for equal ones. Spreading a subgroup's
// atomics over the banks did not help (eight copies of each bin, lane l counting in copy
// l % 8: 2^28 u32 keys 0.49 ms against 0.50; u64 keys, four copies, 1.01 against 0.96; the
// same again in 0.7.19 with each bin's copies in neighbouring words, bin * 8 + l % 8, which
// spreads the lanes' atomics over more banks: 0.491 ms against 0.499 with eight, 0.524 with
// four, u64 keys 1.006 and 1.029 against 0.960). Nor did digits taken at positions fixed at
// compile time where a sort covers whole keys (the shift is a push constant; H100, two rounds,
// same run: u32 keys at 2^26 0.140 to 0.142 ms either way, u64 keys at 2^24 0.088 against
// 0.086), or workgroups of 128 in 1584 or 2112 (0.140 at 2^26). CUB's histogram kernel took
// 0.121 to 0.123 ms for 2^26 u32 keys and 0.064 for 2^24 u64 keys (Nsight Compute, the kernel
// alone); the figures here are bench's histogram stage, which adds the clear before it (until
// 0.7.50; bench's later runs now keep the state) and the scan after it. Timed apart (H100,
// 0.7.46, timestamps between them, one run), the clear took 0.006 to 0.008 ms at every size, this kernel 0.006 at 2^16 u32 keys, 0.040 at 2^24 and 0.128 at 2^26 (u64
// keys 0.007 at 2^16, 0.075 at 2^24), the scan 0.005 to 0.006. The clear costs its dispatch, not
// its bytes: zeroing the first pass's descriptors here instead (a grid-stride loop beside the bins'
// zeroing) left the sorts' times as they were (two rounds, same run: u32 keys 1.491 and 1.489 ms at
// 2^26 against 1.489 and 1.490; u32/u32 pairs 9.002 and 8.987 at 2^28 against 8.989 and 8.984).
// Nor is its tail the global atomics that every workgroup adds at about the same moment (H100,
// 0.7.51, `bench -v --reps 9`, two rounds, same run, histogram stage ms for u64 keys at 2^24 /
// u32 keys at 2^24 / 2^26 / u32/u32 pairs at 2^26): 0.081 / 0.048 / 0.136 to 0.137 / 0.135 as
// it is; each workgroup starting its flush at bin (group * 64) % bins, 0.082 / 0.048 / 0.137 /
// 0.136; 512 invocations in 528 workgroups, 0.077 / 0.049 / 0.137 / 0.136; 1024 in 264, 0.081 to
// 0.082 / 0.050 to 0.051 / 0.141 to 0.142 / 0.141. The pipeline of u64 keys takes 40 registers
// (u32 keys 32: H100, GPUSORT_PIPELINE_STATS), six workgroups an SM where 32 would allow eight.
// Fewer keys an invocation do not bring it down: tiles of 8 or 12 rows kept 40 registers and the
// times (H100, 0.7.52, trial builds, two rounds, same run: u64 keys at 2^24, histogram stage
// 0.079 to 0.080 ms at 8 rows, 0.081 to 0.082 at 12, 0.082 at 16; every sort within 1%, and
// u32 keys' histogram at 2^28 0.501 to 0.502 ms at 8 rows against 0.489 to 0.491 at 16).
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint TILE_ROWS = 16;
layout(push_constant, std430) uniform Push { gs_histogram_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint MAX_PASSES = KEY_BITS / RADIX_BITS;
const uint TILE_KEYS = WORKGROUP_SIZE * TILE_ROWS;
shared uint s_histograms[MAX_PASSES * RADIX];

// The bin of digit position p that an ordered key counts in.
uint histogram_bin(key_t ordered, uint p) {
  const uint bits = p + 1u == pc.passes ? pc.last_bits : RADIX_BITS;
  return p * RADIX + key_digit(ordered, pc.first_shift + p * RADIX_BITS, bits);
}

// A tile's keys are all loaded before any is counted, and counted one digit position at a
// time, so that the loads are in flight together and each position's shared atomics follow
// one another without waiting on the next position's.
void count_tile(key_t keys[TILE_ROWS]) {
  [[unroll]] for (uint p = 0u; p < MAX_PASSES; p++)
    if (p < pc.passes)
      [[unroll]] for (uint i = 0u; i < TILE_ROWS; i++) atomicAdd(s_histograms[histogram_bin(keys[i], p)], 1u);
}

// On kept state (GS_SORT_ZERO_STATE, no clear before the sort): what earlier sorts left written
// and this one's later stages read as zero, spread over the workgroups. The other half's
// histograms are those the next sort counts into; this sort's scan leaves digit starts in its own.
void zero_state(uint group, uint groups) {
  const uint lid = gl_LocalInvocationID.x, stride = groups * WORKGROUP_SIZE;
  if (group == 0u && lid < GS_RADIX_MAX_PASSES) Control(pc.control).control.tickets[lid] = 0u;
  WordArray other = WordArray(pc.other_histograms), lookback = WordArray(pc.lookback);
  for (uint i = group * WORKGROUP_SIZE + lid; i < GS_RADIX_MAX_PASSES * RADIX; i += stride) other.words[i] = 0u;
  for (uint i = group * WORKGROUP_SIZE + lid; i < pc.lookback_words; i += stride) lookback.words[i] = 0u;
}

void main() {
  const bool indirect = (pc.flags & GS_SORT_INDIRECT) != 0u;
  const uint n = indirect ? Control(pc.control).control.n : pc.n;
  const uint groups = indirect ? Control(pc.control).control.histogram_groups : pc.groups;
  const uint lid = gl_LocalInvocationID.x;
  const uint group = linear_group_index();
  if (group >= groups) return;
  if ((pc.flags & GS_SORT_ZERO_STATE) != 0u) zero_state(group, groups);
  const uint bins = pc.passes * RADIX;
  for (uint i = lid; i < bins; i += WORKGROUP_SIZE) s_histograms[i] = 0u;
  barrier();

  KeysIn keys_in = KeysIn(pc.keys);
  const uint tiles = n / TILE_KEYS + (n % TILE_KEYS != 0u ? 1u : 0u); // (n + TILE_KEYS - 1 may pass 2^32)
  for (uint t = group; t < tiles; t += groups) {
    const uint first = t * TILE_KEYS + lid;
    key_t keys[TILE_ROWS];
    if (n - t * TILE_KEYS >= TILE_KEYS) { // full: no bounds checks (t * TILE_KEYS < n)
      [[unroll]] for (uint i = 0u; i < TILE_ROWS; i++) keys[i] = keys_in.keys[first + i * WORKGROUP_SIZE];
      [[unroll]] for (uint i = 0u; i < TILE_ROWS; i++) keys[i] = key_to_ordered(keys[i]);
      count_tile(keys);
    } else { // the last tile, one key at a time
      for (uint i = 0u; i < TILE_ROWS; i++) {
        const uint index = first + i * WORKGROUP_SIZE;
        if (index >= n) break;
        const key_t k = key_to_ordered(keys_in.keys[index]);
        for (uint p = 0u; p < pc.passes; p++) atomicAdd(s_histograms[histogram_bin(k, p)], 1u);
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
