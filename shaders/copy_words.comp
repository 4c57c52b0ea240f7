#version 460
#extension GL_GOOGLE_include_directive : require
// Copies `words` 32-bit words between two 16-byte aligned addresses, 16 bytes per access: the
// benchmark's measure of the device's own memory bandwidth, and the sort's copy of its
// result into place when a pass count leaves it in scratch memory.
#include "lib/common.glsl"

layout(push_constant, std430) uniform Push { gs_words_push pc; };

const uint VECTORS_PER_INVOCATION = 4u;

void main() {
  const uint words = (pc.flags & GS_WORDS_FROM_MEMORY) != 0u ? WordArray(pc.count).words[0] * pc.words : pc.words;
  const uint first = linear_group_index() * WORKGROUP_SIZE * VECTORS_PER_INVOCATION + gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < VECTORS_PER_INVOCATION; i++) {
    const uint v = first + i * WORKGROUP_SIZE;
    if (4u * v + 4u <= words) {
      VectorArray(pc.destination).vectors[v] = VectorArray(pc.source).vectors[v];
    } else {
      for (uint w = 4u * v; w < words && w < 4u * v + 4u; w++)
        WordArray(pc.destination).words[w] = WordArray(pc.source).words[w];
    }
  }
}
