#version 460
#extension GL_GOOGLE_include_directive : require
// Exclusive scan of each digit histogram, in place: histograms[p][d] becomes the output
// position of the first key whose digit p is d. One workgroup per digit position; these
// are the "tile -1" prefixes that start each pass's look-back chain. A dispatch of its own:
// scanning every position in the histogram's last workgroup to finish took 1 us off small
// 32-bit keys' sorts but added 3 to 64-bit keys' (doc/tuning.md, "Sort: scanning the histograms").
// A digit position where every key has the same digit marks its pass's ticket counter with
// GS_SORT_COPY_TICKETS: that pass keeps the keys' order, and radix_onesweep copies them through.
// Two such passes in a row would copy the keys from one array to the other and back: among the
// passes that neither map the keys nor unmap them (all but the first and the last), each run of
// copy passes pairs up from its start, and each pass of a pair is marked GS_SORT_SKIPPED_TICKETS
// as well (a run of odd length copies in its last pass).
#include "lib/common.glsl"
#include "lib/workgroup_scan.glsl"

layout(push_constant, std430) uniform Push { gs_scan_histograms_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

const uint DIGITS_PER_INVOCATION = (RADIX + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;

shared uint s_digits_present;
shared uint s_keys;  // in a copy pass: n, its one digit's count
shared uint s_mixed; // bit q: digit position q has more than one digit

// Whether digit position q's histogram word w shows more than one digit: a count strictly between
// 0 and n. The other positions' workgroups scan theirs in place meanwhile, but a start strictly
// between 0 and n means the same (the start of the second digit present is the first one's
// count), and a position with one digit holds only 0 and n either way, so any mix of counts and
// starts tells the truth.
bool shows_mixed(uint w, uint n) { return w != 0u && w != n; }

// Whether pass p of `passes`, neither the first nor the last, is skipped, given the copy passes
// (bit q: pass q copies).
bool skipped_pass(uint p, uint passes, uint copies) {
  uint run_first = p;
  while (run_first > 1u && (copies & (1u << (run_first - 1u))) != 0u) run_first--;
  if (((p - run_first) & 1u) != 0u) return true; // the second of a pair
  return p + 2u < passes && (copies & (1u << (p + 1u))) != 0u;
}

void main() {
  const uint pass = linear_group_index(), passes = pc.passes;
  if (pass >= passes) return; // surplus workgroup of a folded dispatch
  WordArray histograms = WordArray(pc.histograms);
  const uint base = pass * RADIX;
  const uint first = gl_LocalInvocationID.x * DIGITS_PER_INVOCATION;
  if (gl_LocalInvocationID.x == 0u) s_digits_present = s_keys = s_mixed = 0u;
  uint counts[DIGITS_PER_INVOCATION];
  uint sum = 0u, present = 0u;
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    counts[r] = first + r < RADIX ? histograms.words[base + first + r] : 0u;
    sum += counts[r];
    if (counts[r] != 0u) present++;
  }
  barrier();
  if (present != 0u) {
    atomicAdd(s_digits_present, present);
    atomicMax(s_keys, sum);
  }
  uint prefix = workgroup_exclusive_add(sum);
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    if (first + r < RADIX) // (atomic: the other positions' copy passes read it)
      atomicStore(histograms.words[base + first + r], prefix, gl_ScopeQueueFamily, 0, 0);
    prefix += counts[r];
  }
  barrier();
  if (s_digits_present > 1u) return;
  uint mark = GS_SORT_COPY_TICKETS;
  // (the first pass maps the keys and the last unmaps them; only a copy pass between them reads
  // the others' histograms)
  if (pass > 0u && pass + 1u < passes) {
    for (uint q = 0u; q < passes; q++)
      for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++)
        if (q != pass && first + r < RADIX &&
            shows_mixed(atomicLoad(histograms.words[q * RADIX + first + r], gl_ScopeQueueFamily, 0, 0), s_keys))
          atomicOr(s_mixed, 1u << q);
    barrier();
    if (skipped_pass(pass, passes, ~s_mixed)) mark |= GS_SORT_SKIPPED_TICKETS;
  }
  if (gl_LocalInvocationID.x == 0u) atomicOr(Control(pc.control).control.tickets[pass], mark);
}
