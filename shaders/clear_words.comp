#version 460
#extension GL_GOOGLE_include_directive : require
// Zeroes `words` 32-bit words at a 16-byte aligned address, 16 bytes per store: clears the
// sort's and the scan's counters and look-back descriptors with a compute dispatch, so that
// a recorded sort is compute work only (no transfer commands, one kind of barrier).
#include "lib/common.glsl"

layout(push_constant, std430) uniform Push { gs_words_push pc; };

const uint VECTORS_PER_INVOCATION = 4u;

void main() {
  const uint words = (pc.flags & GS_WORDS_FROM_MEMORY) != 0u ? WordArray(pc.count).words[0] * pc.words : pc.words;
  const uint first = linear_group_index() * WORKGROUP_SIZE * VECTORS_PER_INVOCATION + gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < VECTORS_PER_INVOCATION; i++) {
    const uint v = first + i * WORKGROUP_SIZE;
    if (4u * v + 4u <= words) {
      VectorArray(pc.destination).vectors[v] = uvec4(0u);
    } else {
      for (uint w = 4u * v; w < words && w < 4u * v + 4u; w++) WordArray(pc.destination).words[w] = 0u;
    }
  }
}
