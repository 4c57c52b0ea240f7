// Decoupled look-back descriptors (Merrill & Garland 2016) with 30-bit counts.
//
// One 32-bit word per (tile, slot) holds a 2-bit status and a 30-bit count. Status and count
// travel in one atomic access, so a reader can never see one without the other and no fence
// is needed. Counts must stay below 2^30 (callers bound n accordingly).
//
// Waiting is bounded: a reader polls an empty descriptor at most LOOKBACK_SPIN_LIMIT times
// in a row, then the kernel computes the missing count itself ("decoupled fallback",
// Smith, Levien & Owens 2025). Progress therefore never depends on another workgroup being
// scheduled, and no loop runs unbounded (llvmpipe, for one, ends any shader's loops after
// 65535 iterations in total).
//
// Requires push constants `pc` with the descriptors' device address in `pc.lookback`.

const uint LOOKBACK_EMPTY = 0u;
const uint LOOKBACK_AGGREGATE = 1u << 30; // the tile's own count
const uint LOOKBACK_INCLUSIVE = 2u << 30; // the count of this tile and all before it
const uint LOOKBACK_STATUS = 3u << 30;
const uint LOOKBACK_COUNT = GS_LOOKBACK_COUNT_MASK;
const uint LOOKBACK_DONE = 0xFFFFFFFFu; // "no tile left to read" in a walk's position

void lookback_post(uint index, uint status_and_count) {
  atomicStore(WordArray(pc.lookback).words[index], status_and_count, gl_ScopeQueueFamily, 0, 0);
}

// Publishes a count computed on another tile's behalf, unless that tile has posted already
// (its own value is the same, or an inclusive one that must not be downgraded).
void lookback_post_if_empty(uint index, uint status_and_count) {
  atomicCompSwap(WordArray(pc.lookback).words[index], LOOKBACK_EMPTY, status_and_count, gl_ScopeQueueFamily, 0, 0, 0, 0);
}

uint lookback_poll(uint index) {
  return atomicLoad(WordArray(pc.lookback).words[index], gl_ScopeQueueFamily, 0, 0);
}

// Descriptors a walk reads at once (a kernel may choose before including this file): the
// polls of a step are independent loads, so their latencies overlap; 4 beat 1, 8 and 16.
// Polls follow each other without a pause: a pause before a walk's first poll or after a poll
// that found nothing made no look-back kernel but partition faster, and the longer ones slower
// (doc/tuning.md, "Sort: look-back walk window and polling").
#ifndef LOOKBACK_WALK_WINDOW
#define LOOKBACK_WALK_WINDOW 4u
#endif

// One bounded walk back in slot `slot` (`stride` slots per tile): starting at tile `next`,
// add counts to `prefix`, nearest tile first, up to and including the first inclusive count
// (then `next` becomes LOOKBACK_DONE), or up to a tile still empty after LOOKBACK_SPIN_LIMIT
// steps that read no count (then `next` is that tile, to be counted by the caller).
void lookback_walk(inout uint next, inout uint prefix, uint slot, uint stride) {
  uint spins = 0u;
  while (next != LOOKBACK_DONE && spins < LOOKBACK_SPIN_LIMIT) {
    uint words[LOOKBACK_WALK_WINDOW];
    [[unroll]] for (uint j = 0u; j < LOOKBACK_WALK_WINDOW; j++) // (none past tile 0, which is inclusive)
      words[j] = j <= next ? lookback_poll((next - j) * stride + slot) : LOOKBACK_EMPTY;
    uint taken = 0u;
    bool stopped = false, done = false;
    // (written with `!stopped` guarding the whole step: 9.17 ms for 2^28 u32 keys on an H100,
    // against 9.66 for the same logic testing each status unguarded)
    [[unroll]] for (uint j = 0u; j < LOOKBACK_WALK_WINDOW; j++) {
      if (!stopped) {
        const uint status = words[j] & LOOKBACK_STATUS;
        if (status == LOOKBACK_EMPTY) {
          stopped = true;
        } else {
          prefix += words[j] & LOOKBACK_COUNT;
          taken++;
          if (status == LOOKBACK_INCLUSIVE) stopped = true, done = true;
        }
      }
    }
    next = done ? LOOKBACK_DONE : next - taken;
    spins = taken > 0u ? 0u : spins + 1u;
  }
}
