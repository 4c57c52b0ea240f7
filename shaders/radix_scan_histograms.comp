#version 460
#extension GL_GOOGLE_include_directive : require
// Exclusive scan of each digit histogram, in place: histograms[p][d] becomes the output
// position of the first key whose digit p is d. One workgroup per digit position; these
// are the "tile -1" prefixes that start each pass's look-back chain.
// A digit position where every key has the same digit marks its pass's ticket counter with
// GS_SORT_COPY_TICKETS: that pass keeps the keys' order, and radix_onesweep copies them through.
#include "lib/common.glsl"
#include "lib/workgroup_scan.glsl"

layout(push_constant, std430) uniform Push { gs_scan_histograms_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint DIGITS_PER_INVOCATION = (RADIX + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;

shared uint s_digits_present;

void main() {
  WordArray histograms = WordArray(pc.histograms);
  const uint base = gl_WorkGroupID.x * RADIX;
  const uint first = gl_LocalInvocationID.x * DIGITS_PER_INVOCATION;
  if (gl_LocalInvocationID.x == 0u) s_digits_present = 0u;
  uint counts[DIGITS_PER_INVOCATION];
  uint sum = 0u, present = 0u;
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    counts[r] = first + r < RADIX ? histograms.words[base + first + r] : 0u;
    sum += counts[r];
    if (counts[r] != 0u) present++;
  }
  barrier();
  if (present != 0u) atomicAdd(s_digits_present, present);
  uint prefix = workgroup_exclusive_add(sum);
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    if (first + r < RADIX) histograms.words[base + first + r] = prefix;
    prefix += counts[r];
  }
  barrier();
  if (gl_LocalInvocationID.x == 0u && s_digits_present <= 1u)
    atomicOr(Control(pc.control).control.tickets[gl_WorkGroupID.x], GS_SORT_COPY_TICKETS);
}
