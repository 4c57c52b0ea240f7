#version 460
#extension GL_GOOGLE_include_directive : require
// The keys of records, as an array: keys[i] = the key at key_offset in record i, at any
// alignment (a key spans at most three input words). The first step of sorting records that
// live on the GPU: their keys are sorted with their indices, then gather_records moves them.
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_extract_push pc; };

uint word_at_byte(uint at) {
  const uint shift = 8u * (at % 4u);
  WordArray records = WordArray(pc.records);
  const uint lo = records.words[at / 4u];
  if (shift == 0u) return lo;
  return (lo >> shift) | (records.words[at / 4u + 1u] << (32u - shift));
}

void main() {
  const uint group = linear_group_index();
  if (group >= pc.groups) return;
  const uint i = group * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const uint at = i * pc.record_bytes + pc.key_offset;
#if KEY_BITS == 64
  KeyArray(pc.keys).keys[i] = uint64_t(word_at_byte(at)) | (uint64_t(word_at_byte(at + 4u)) << 32);
#else
  KeyArray(pc.keys).keys[i] = word_at_byte(at);
#endif
}
