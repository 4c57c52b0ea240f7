#version 460
#extension GL_GOOGLE_include_directive : require
// Whole records in sorted order: out[i] = in[index[i]], word by word (records of a multiple
// of 4 bytes). One invocation per output word, so writes are contiguous; each record's
// words are read together. An index out of range (never from a correct sort) writes a
// poison word rather than read outside the input.
#include "lib/common.glsl"

layout(std430, binding = 0) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 1) readonly buffer RecordsIn { uint records_in[]; };
layout(std430, binding = 2) writeonly buffer RecordsOut { uint records_out[]; };

layout(push_constant) uniform Push {
  uint n;     // records
  uint words; // per record
  uint groups;
} pc;

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= pc.groups) return;
  const uint word = group * WORKGROUP_SIZE + gl_LocalInvocationID.x;
  if (word >= pc.n * pc.words) return;
  const uint record = word / pc.words, within = word - record * pc.words;
  const uint from = indices[record];
  records_out[word] = from < pc.n ? records_in[from * pc.words + within] : 0xDEADBEEFu;
}
