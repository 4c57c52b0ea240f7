#version 460
#extension GL_GOOGLE_include_directive : require
// Exclusive scan of each digit histogram, in place: histograms[p][d] becomes the output
// position of the first key whose digit p is d. One workgroup per digit position; these
// are the "tile -1" prefixes that start each pass's look-back chain.
#include "lib/common.glsl"
#include "lib/workgroup_scan.glsl"

layout(push_constant, std430) uniform Push { gs_scan_histograms_push pc; };

const uint DIGITS_PER_INVOCATION = (RADIX + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;

void main() {
  WordArray histograms = WordArray(pc.histograms);
  const uint base = gl_WorkGroupID.x * RADIX;
  const uint first = gl_LocalInvocationID.x * DIGITS_PER_INVOCATION;
  uint counts[DIGITS_PER_INVOCATION];
  uint sum = 0u;
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    counts[r] = first + r < RADIX ? histograms.words[base + first + r] : 0u;
    sum += counts[r];
  }
  uint prefix = workgroup_exclusive_add(sum);
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    if (first + r < RADIX) histograms.words[base + first + r] = prefix;
    prefix += counts[r];
  }
}
