#version 460
#extension GL_GOOGLE_include_directive : require
// First step of an indirect sort: reads the key count from the caller's buffer (clamped to
// the capacity the scratch memory was sized for) and derives, on the GPU, what the host
// derives for a direct sort: tile and workgroup counts and the dispatch sizes of the
// histogram and digit-binning kernels (folded into x * y like
// src/vk/kernel.c folds them). One invocation does it all. (Copies are sized for the
// capacity and read their counts from the control block.)
#include "lib/common.glsl"

layout(push_constant, std430) uniform Push { gs_prepare_indirect_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

uvec3 folded(uint groups) {
  if (groups <= pc.max_groups_x) return uvec3(groups, 1u, 1u);
  return uvec3(pc.max_groups_x, (groups + pc.max_groups_x - 1u) / pc.max_groups_x, 1u);
}

void main() {
  if (gl_LocalInvocationID.x != 0u) return;
  const uint n = min(WordArray(pc.count).words[0], pc.max_n);
  const uint tiles = (n + pc.tile_keys - 1u) / pc.tile_keys;
  const uint histogram_groups =
      min((n + pc.histogram_keys_per_group - 1u) / pc.histogram_keys_per_group, pc.histogram_max_groups);
  Control c = Control(pc.control);
  c.control.n = n;
  c.control.tiles = tiles;
  c.control.histogram_groups = histogram_groups;
  const uvec3 h = folded(histogram_groups), o = folded(tiles);
  for (uint i = 0u; i < 3u; i++) {
    c.control.histogram_dispatch[i] = h[i];
    c.control.onesweep_dispatch[i] = o[i];
  }
}
