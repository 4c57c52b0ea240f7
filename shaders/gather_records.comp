#version 460
#extension GL_GOOGLE_include_directive : require
// Whole records in sorted order: out[i] = in[indices[i]], for records of any size. One
// invocation per output word, so writes are contiguous and each record's words are read
// together. A record whose size is a multiple of 4 moves word by word; any other size is
// assembled from the (at most two) input words each output byte range spans. An index out of
// range (never from a correct sort) writes a poison word rather than read outside the input.
#include "lib/common.glsl"

layout(push_constant, std430) uniform Push { gs_gather_push pc; };

// Byte `b` of the output, taken from its record's source position.
uint source_byte(uint b) {
  const uint record = b / pc.record_bytes, within = b - record * pc.record_bytes;
  const uint from = WordArray(pc.indices).words[record];
  if (from >= pc.n) return 0xEFu;
  const uint at = from * pc.record_bytes + within;
  return (WordArray(pc.records_in).words[at / 4u] >> (8u * (at % 4u))) & 0xFFu;
}

void main() {
  const uint group = linear_group_index();
  if (group >= pc.groups) return;
  const uint word = group * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  const uint total_bytes = pc.n * pc.record_bytes;
  if (4u * word >= total_bytes) return;
  if (pc.record_bytes % 4u == 0u) {
    const uint words = pc.record_bytes / 4u;
    const uint record = word / words, within = word - record * words;
    const uint from = WordArray(pc.indices).words[record];
    WordArray(pc.records_out).words[word] =
        from < pc.n ? WordArray(pc.records_in).words[from * words + within] : 0xDEADBEEFu;
    return;
  }
  // A partial last word keeps the bytes beyond the output as they were.
  uint value = 0u, keep = 0u;
  for (uint k = 0u; k < 4u; k++) {
    const uint b = 4u * word + k;
    if (b < total_bytes) value |= source_byte(b) << (8u * k);
    else keep |= 0xFFu << (8u * k);
  }
  if (keep == 0u) {
    WordArray(pc.records_out).words[word] = value;
  } else {
    atomicAnd(WordArray(pc.records_out).words[word], keep);
    atomicOr(WordArray(pc.records_out).words[word], value);
  }
}
