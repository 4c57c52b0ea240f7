#version 460
#extension GL_GOOGLE_include_directive : require
// Upfront pass of the Onesweep radix sort: one read of every key builds the 256-bin
// histogram of each digit position the digit-binning passes will sort by.
// Workgroups take tiles of WORKGROUP_SIZE * TILE_ROWS keys in turn (tile g, g + groups, ...);
// counts gather in shared memory, then go to the global histograms with one atomic add per
// nonzero bin. radix_scan_histograms turns them into each digit's first output position.
// The shared atomics bound it, at the rate of the distinct addresses they touch. Spreading them
// over more banks, digit positions fixed at compile time, other workgroup shapes, fewer rows a
// tile and a staggered flush of the global atomics were no faster; the clear before it costs its
// dispatch, not its bytes (doc/tuning.md, "Sort: counting the digit histograms").
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
