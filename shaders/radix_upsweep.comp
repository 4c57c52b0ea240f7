#version 460
#extension GL_GOOGLE_include_directive : require
// The upsweep of a reduce-then-scan radix sort pass: each workgroup counts the digits of one
// tile (the digit-binning pass's tile) into the tile table, whose row d holds digit d's count
// for every tile (kernel_interface.h, gs_onesweep_push). Keys past n count nothing, so an
// indirect sort dispatched for its capacity leaves zeros in its surplus tiles' columns and
// the table's scan needs no count.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint KEYS_PER_THREAD = 9;
layout(push_constant, std430) uniform Push { gs_onesweep_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint TILE_KEYS = WORKGROUP_SIZE * KEYS_PER_THREAD;
shared uint s_count[RADIX];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint tile = linear_group_index();
  if (tile >= pc.tiles) return; // surplus workgroup of a folded dispatch
  const uint n = (pc.flags & GS_SORT_INDIRECT) != 0u ? Control(pc.control).control.n : pc.n;
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) s_count[d] = 0u;
  barrier();
  const uint first = tile * TILE_KEYS;
  const bool first_pass = (pc.flags & GS_SORT_FIRST_PASS) != 0u;
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
    const uint index = first + i * WORKGROUP_SIZE + lid;
    if (index < n) {
      const key_t k = KeysIn(pc.keys_in).keys[index];
      atomicAdd(s_count[key_digit(first_pass ? key_to_ordered(k) : k, pc.shift, pc.bits)], 1u);
    }
  }
  barrier();
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) WordArray(pc.lookback).words[d * pc.tile_stride + tile] = s_count[d];
}
