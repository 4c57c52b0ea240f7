#version 460
#extension GL_GOOGLE_include_directive : require
// One digit-binning pass of the Onesweep LSD radix sort (Adinets & Merrill 2022).
//
// Each workgroup sorts one tile of WORKGROUP_SIZE * KEYS_PER_THREAD keys by one digit:
//  1. take a tile index from an atomic ticket (never gl_WorkGroupID: tiles must start in
//     order for the look-back to make progress, and no driver promises that);
//  2. rank the tile's keys by digit with subgroup ballots into per-subgroup counters;
//  3. publish the tile's per-digit counts (with EARLY_COUNTS, counted and published before
//     step 2), then look back over earlier tiles' counts to learn where each digit's keys go
//     in the output (lib/lookback.glsl), recounting a tile itself when its counts are slow
//     to appear;
//  4. stage the keys in shared memory in tile order, so that each digit's run is written
//     to consecutive addresses.
// The order of equal digits is kept (stable), which makes the LSD passes a sort.
// With VALUE_WORDS (1 or 2, a compile-time define) a 32- or 64-bit value follows each key
// through the same ranks; the first pass can make each value its key's input index (argsort).
// The SEGMENTED pipeline runs one segment of a pass too large for one dispatch
// (kernel_interface.h): its look-back starts from zero at the segment's first tile, the
// digit starts are added after it, and outputs are addressed with 64-bit offsets.
// The REDUCE_THEN_SCAN pipeline is the downsweep of a pass in which no workgroup waits on
// another (for devices without forward progress between workgroups): radix_upsweep counted
// every tile's digits into a table that a scan turned into each (digit, tile)'s first output
// position (kernel_interface.h); step 1 takes the workgroup's own index and step 3 reads the
// table instead of looking back.
// A copy pass, in which every key has the same digit (radix_scan_histograms marks its tickets),
// keeps the keys' order: its tiles copy their keys (and values) through, and two copy passes in
// a row between the first and the last are skipped; Onesweep's only.
#ifndef VALUE_WORDS
#define VALUE_WORDS 0
#endif
#include "lib/common.glsl"
#include "lib/keys.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint KEYS_PER_THREAD = 9;
layout(constant_id = GS_SPEC_SEGMENTED) const bool SEGMENTED = false;
layout(constant_id = GS_SPEC_REDUCE_THEN_SCAN) const bool REDUCE_THEN_SCAN = false;
layout(constant_id = GS_SPEC_HOLD_KEYS) const bool HOLD_KEYS = true;
layout(constant_id = GS_SPEC_EARLY_COUNTS) const bool EARLY_COUNTS = false;
layout(constant_id = GS_SPEC_PASS_MAPS) const uint PASS_MAPS = GS_SORT_MAPS_BY_FLAGS;

#if VALUE_WORDS == 2
#define value_t uint64_t
layout(buffer_reference, std430, buffer_reference_align = 8) readonly restrict buffer ValuesIn { value_t values[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly restrict buffer ValuesOut { value_t values[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly restrict buffer ValueOut { value_t value; };
#elif VALUE_WORDS == 1
#define value_t uint
layout(buffer_reference, std430, buffer_reference_align = 4) readonly restrict buffer ValuesIn { value_t values[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly restrict buffer ValuesOut { value_t values[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly restrict buffer ValueOut { value_t value; };
#endif
layout(buffer_reference, std430, buffer_reference_align = KEY_BITS / 8) writeonly restrict buffer KeyOut { key_t key; };

// base + index * bytes in 64-bit arithmetic on (low, high) words: a segmented pass writes
// anywhere in arrays of up to 2^32 elements, past what 32-bit array indexing reaches.
uvec2 element_address(uvec2 base, uint index, uint bytes) {
  uint high, low, carry;
  umulExtended(index, bytes, high, low);
  low = uaddCarry(base.x, low, carry);
  return uvec2(low, base.y + high + carry);
}

layout(push_constant, std430) uniform Push { gs_onesweep_push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Control { gs_sort_control control; };

#if KEY_BITS == 64
// H100: a window of 4 took u64 keys' pass from 64 registers to 66, past the 64 that let two
// workgroups of 512 share an SM (2^28 u64 keys: 43.9 ms against 29.4)
#define LOOKBACK_WALK_WINDOW 1u
#endif
#include "lib/lookback.glsl"
#include "lib/subgroup_multisplit.glsl"
#include "lib/workgroup_scan.glsl"

const uint TILE_KEYS = WORKGROUP_SIZE * KEYS_PER_THREAD;
const uint SUBGROUP_KEYS = SUBGROUP_SIZE * KEYS_PER_THREAD;
const uint KEY_WORDS = KEY_BITS / 32;
const uint COUNTER_WORDS = NUM_SUBGROUPS * RADIX;
const uint ITEM_WORDS = VALUE_WORDS > KEY_WORDS ? VALUE_WORDS : KEY_WORDS;
// 64-bit keys alone, in registers, are staged one 32-bit half at a time: the low halves before
// the look-back, the high halves after it, so the staged tile takes half the shared memory
// (the shapes: doc/tuning.md, "Presets: 64-bit keys alone on NVIDIA"). The high halves are
// read again from the input (in cache) before the look-back, whose wait hides their latency;
// kept in registers from the keys' loads instead, they took far more registers and left one
// workgroup an SM (doc/tuning.md, "Sort: staging 64-bit keys in halves").
const bool STAGE_HALVES = GS_SORT_STAGES_HALVES(KEY_BITS / 8, VALUE_WORDS * 4, HOLD_KEYS);
const uint STAGED_WORDS = TILE_KEYS * (STAGE_HALVES ? 1u : ITEM_WORDS);
const uint HELD_WORDS = COUNTER_WORDS + (HOLD_KEYS ? TILE_KEYS * KEY_WORDS : 0u); // counters, then held keys
const uint STAGE_WORDS = HELD_WORDS > STAGED_WORDS ? HELD_WORDS : STAGED_WORDS;
const uint DIGITS_PER_INVOCATION = (RADIX + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
// An invocation's digits packed into words, RADIX_BITS each (the held keys' digits while they
// are ranked, the written positions' digits while their values wait).
const uint DIGITS_PER_WORD = 32u / RADIX_BITS;
const uint PACKED_DIGIT_WORDS = (KEYS_PER_THREAD + DIGITS_PER_WORD - 1u) / DIGITS_PER_WORD;
#define PACK_DIGIT(words, i, digit) words[(i) / DIGITS_PER_WORD] |= (digit) << (RADIX_BITS * ((i) % DIGITS_PER_WORD))
#define PACKED_DIGIT(words, i) \
  bitfieldExtract(words[(i) / DIGITS_PER_WORD], int(RADIX_BITS * ((i) % DIGITS_PER_WORD)), int(RADIX_BITS))

// Reused: first each subgroup's digit counters (and the keys, held while ranked), then the
// tile's keys in sorted order, then its values.
shared uint s_stage[STAGE_WORDS];
shared uint s_digit_count[RADIX]; // keys of each digit in this tile
shared uint s_digit_start[RADIX]; // first position of each digit in tile order
shared uint s_digit_dest[RADIX];  // keys of each digit before this tile; then the output index
                                  // of tile position 0 for that digit (mod 2^32)
shared uint s_walk_next[RADIX];   // look-back: the earlier tile to read next, or LOOKBACK_DONE
shared uint s_recount[RADIX];     // fallback: digit counts of a recounted tile
shared uint s_ticket;
shared uint s_stuck_tile;         // fallback: 1 + the newest tile a digit waits on; 0 if none

uint digit_of(key_t ordered) { return key_digit(ordered, pc.shift, pc.bits); }

// The pass's key count and tiles: from the push constants, or for an indirect sort from the
// control block that radix_prepare_indirect filled from the caller's count.
uint g_n, g_tiles;

// How many of an invocation's rows, first + i * SUBGROUP_SIZE, fall before n: all of a full tile's.
uint rows_before_n(uint first, bool full_tile) {
  return full_tile ? KEYS_PER_THREAD : (g_n > first ? (g_n - first + SUBGROUP_SIZE - 1u) / SUBGROUP_SIZE : 0u);
}

// Whether this pass maps keys to their ordered bits as it loads them (the first), and back as it
// stores them (the last): from the push constants, or fixed in the pipeline (PASS_MAPS), which
// then holds one map's code, not both (src/prim/radix_sort.c's split_maps).
// (Bit operations on constants, not || and &&, which would branch at every use.)
const uint FLAGS_MAPPING = PASS_MAPS == GS_SORT_MAPS_BY_FLAGS ? GS_SORT_FIRST_PASS | GS_SORT_LAST_PASS : 0u;
const uint ALWAYS_MAPPING = PASS_MAPS == GS_SORT_MAPS_IN ? GS_SORT_FIRST_PASS : PASS_MAPS == GS_SORT_MAPS_OUT ? GS_SORT_LAST_PASS : 0u;
bool first_pass() { return (((pc.flags & FLAGS_MAPPING) | ALWAYS_MAPPING) & GS_SORT_FIRST_PASS) != 0u; }

key_t load_key(uint index) {
  const key_t k = KeysIn(pc.keys_in).keys[index];
  return first_pass() ? key_to_ordered(k) : k;
}

#if KEY_BITS == 64
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer KeyHalvesIn { uvec2 halves[]; };
// The high half of load_key(index), read alone: a key's ordered high half depends on its high
// half only.
uint load_high_half(uint index) {
  const uint high = KeyHalvesIn(pc.keys_in).halves[index].y;
  return first_pass() ? uint(key_to_ordered(key_t(high) << 32) >> 32) : high;
}
#endif

void stage_key(uint position, key_t ordered) {
#if KEY_BITS == 64
  s_stage[position] = uint(ordered);
  s_stage[TILE_KEYS + position] = uint(ordered >> 32);
#else
  s_stage[position] = ordered;
#endif
}

key_t staged_key(uint position) {
#if KEY_BITS == 64
  return key_t(s_stage[position]) | (key_t(s_stage[TILE_KEYS + position]) << 32);
#else
  return s_stage[position];
#endif
}

bool last_pass() { return (((pc.flags & FLAGS_MAPPING) | ALWAYS_MAPPING) & GS_SORT_LAST_PASS) != 0u; }

// A key as a pass writes it: the last pass maps the ordered bits back to the key's type.
key_t output_key(key_t ordered, bool last) { return last ? key_from_ordered(ordered) : ordered; }

// Whether the keys' type has a map at all (unsigned ascending keys' ordered bits are the keys).
const bool MAPPED_KEYS = KEY_KIND != 0u || KEY_DESCENDING != 0u;

void store_key(uint to, key_t ordered, bool last) {
  const key_t stored = output_key(ordered, last);
  if (SEGMENTED)
    KeyOut(element_address(pc.keys_out, to, KEY_BITS / 8)).key = stored;
  else
    KeysOut(pc.keys_out).keys[to] = stored;
}

#if VALUE_WORDS > 0
void stage_value(uint position, value_t v) {
#if VALUE_WORDS == 2
  s_stage[position] = uint(v);
  s_stage[TILE_KEYS + position] = uint(v >> 32);
#else
  s_stage[position] = v;
#endif
}

value_t staged_value(uint position) {
#if VALUE_WORDS == 2
  return value_t(s_stage[position]) | (value_t(s_stage[TILE_KEYS + position]) << 32);
#else
  return s_stage[position];
#endif
}

void store_value(uint to, value_t v) {
  if (SEGMENTED)
    ValueOut(element_address(pc.values_out, to, VALUE_WORDS * 4)).value = v;
  else
    ValuesOut(pc.values_out).values[to] = v;
}

// The invocation's values at first + i * SUBGROUP_SIZE for i < rows (zero past them), from one
// row pointer at constant offsets: no bounds test per value, and no index kept per value.
void load_value_rows(out value_t values[KEYS_PER_THREAD], uint first, uint rows) {
  if ((pc.flags & GS_SORT_INDEX_VALUES) != 0u) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) values[i] = value_t(pc.index_base + first + i * SUBGROUP_SIZE);
  } else {
    ValuesIn row = ValuesIn(element_address(pc.values_in, first, VALUE_WORDS * 4u));
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) values[i] = i < rows ? row.values[i * SUBGROUP_SIZE] : value_t(0);
  }
}
#endif

// Exclusive prefix sum of s_digit_start[] in place; invocation i owns a run of digits.
void scan_digit_starts() {
  const uint first = gl_LocalInvocationID.x * DIGITS_PER_INVOCATION;
  uint sum = 0u;
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++)
    if (first + r < RADIX) sum += s_digit_start[first + r];
  uint prefix = workgroup_exclusive_add(sum);
  for (uint r = 0u; r < DIGITS_PER_INVOCATION; r++) {
    if (first + r < RADIX) {
      const uint count = s_digit_start[first + r];
      s_digit_start[first + r] = prefix;
      prefix += count;
    }
  }
  barrier();
}

// Records digit d's look-back state; once the walk is done, publishes this tile's
// inclusive count so later tiles can stop here.
void settle_digit(uint tile, uint d, uint next, uint prefix) {
  s_walk_next[d] = next;
  s_digit_dest[d] = prefix;
  if (next == LOOKBACK_DONE) lookback_post(tile * RADIX + d, LOOKBACK_INCLUSIVE | (prefix + s_digit_count[d]));
}

void walk_digit(uint tile, uint d) {
  uint next = s_walk_next[d], prefix = s_digit_dest[d];
  if (next == LOOKBACK_DONE) return;
  lookback_walk(next, prefix, d, RADIX);
  settle_digit(tile, d, next, prefix);
}

// Fallback: counts the digits of earlier tile k from its keys (tiles before the last are
// full). Tile 0 also carries the pass's digit starts, as its inclusive count does (but for
// a segment, whose counts start from zero).
void recount_tile(uint k) {
  const uint lid = gl_LocalInvocationID.x;
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) s_recount[d] = 0u;
  barrier();
#define RECOUNT_KEY(i) atomicAdd(s_recount[digit_of(load_key(k * TILE_KEYS + (i) * WORKGROUP_SIZE + lid))], 1u)
  // (With STAGE_HALVES a key at a time, as the tile's ranks wait in registers meanwhile.)
  if (STAGE_HALVES) {
    [[dont_unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) RECOUNT_KEY(i);
  } else {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) RECOUNT_KEY(i);
  }
#undef RECOUNT_KEY
  barrier();
}

// Completes s_digit_dest[d] = keys of digit d in all tiles before `tile`, plus the digit's
// start in the output, publishing this tile's inclusive counts on the way.
void look_back(uint tile) {
  const uint lid = gl_LocalInvocationID.x;
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) walk_digit(tile, d);
  for (;;) {
    if (lid == 0u) s_stuck_tile = 0u;
    barrier();
    for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE)
      if (s_walk_next[d] != LOOKBACK_DONE) atomicMax(s_stuck_tile, s_walk_next[d] + 1u);
    barrier();
    const uint stuck = s_stuck_tile;
    if (stuck == 0u) break;
    // Recount the newest tile anyone waits on and move those digits past it.
    const uint k = stuck - 1u;
    recount_tile(k);
    for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) {
      if (s_walk_next[d] == k) {
        const uint count = k == 0u && !SEGMENTED ? s_recount[d] + WordArray(pc.digit_starts).words[pc.pass * RADIX + d]
                                                 : s_recount[d];
        lookback_post_if_empty(k * RADIX + d, (k == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | count);
        settle_digit(tile, d, k == 0u ? LOOKBACK_DONE : k - 1u, s_digit_dest[d] + count);
      }
      walk_digit(tile, d);
    }
    barrier();
  }
}

// From each subgroup's digit counts in its counters: per digit, each subgroup's offset within
// the tile's run of that digit, and the tile's count, published at once so later tiles can look
// back past this one (tile 0 knows its inclusive count at once: the pass's digit start plus its
// own count); then the digit starts in the tile. With fold_starts, each subgroup's counter
// becomes the tile position of its first key of that digit, so that a key's position takes one
// shared load, not two: with two, every held key's loads in flight at once were this kernel's
// register peak. Not on lavapipe's path, where the extra pass over the counters costs more than
// it saves (doc/tuning.md, "Sort: folding digit starts into the counters").
void publish_counts(uint tile, bool fold_starts) {
  const uint lid = gl_LocalInvocationID.x;
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) {
    uint total = 0u;
    for (uint s = 0u; s < NUM_SUBGROUPS; s++) {
      const uint c = s_stage[s * RADIX + d];
      s_stage[s * RADIX + d] = total;
      total += c;
    }
    s_digit_count[d] = total;
    s_digit_start[d] = total;
    if (REDUCE_THEN_SCAN) {
      s_walk_next[d] = LOOKBACK_DONE;
      s_digit_dest[d] = WordArray(pc.digit_starts).words[d * pc.tile_stride + tile];
    } else if (tile == 0u) {
      settle_digit(tile, d, LOOKBACK_DONE, SEGMENTED ? 0u : WordArray(pc.digit_starts).words[pc.pass * RADIX + d]);
    } else {
      lookback_post(tile * RADIX + d, LOOKBACK_AGGREGATE | total);
      s_walk_next[d] = tile - 1u;
      s_digit_dest[d] = 0u;
    }
  }
  barrier();
  scan_digit_starts();
  if (fold_starts) {
    for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) {
      const uint start = s_digit_start[d];
      for (uint s = 0u; s < NUM_SUBGROUPS; s++) s_stage[s * RADIX + d] += start;
    }
    barrier();
  }
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint lane = gl_SubgroupInvocationID;
  const uint counters = gl_SubgroupID * RADIX;

  const bool indirect = (pc.flags & GS_SORT_INDIRECT) != 0u;
  g_n = indirect ? Control(pc.control).control.n : pc.n;
  g_tiles = indirect ? Control(pc.control).control.tiles : pc.tiles;
  if (lid == 0u && !REDUCE_THEN_SCAN) s_ticket = atomicAdd(Control(pc.control).control.tickets[pc.pass], 1u);
  for (uint i = lid; i < COUNTER_WORDS; i += WORKGROUP_SIZE) s_stage[i] = 0u;
  barrier();
  // A skipped pass (radix_scan_histograms.comp) keeps GS_SORT_SKIPPED_TICKETS in every ticket,
  // which puts every tile out of range: its tiles do nothing, and clear nothing either. The pass
  // after the pair looks back in the array that the pass before it cleared, which neither pass
  // of the pair touched. Skipped tiles leave through the range test below: a test of its own
  // before the loads slowed uniform keys' passes (doc/tuning.md, "Sort: skipped pass pairs").
  const uint tile = REDUCE_THEN_SCAN ? linear_group_index() : s_ticket & ~GS_SORT_COPY_TICKETS;
  if (tile >= g_tiles) return; // surplus workgroup of a folded dispatch, or a skipped pass
  // The next pass's descriptors live in a second array that no tile of this pass reads: each
  // tile zeroes its own row there, instead of a clearing dispatch between the passes.
  if ((pc.flags & GS_SORT_CLEAR_NEXT) != 0u)
    for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) WordArray(pc.lookback_next).words[tile * RADIX + d] = 0u;

  // Load: subgroup s owns keys [s * SUBGROUP_KEYS, (s + 1) * SUBGROUP_KEYS) of the tile, lane by
  // lane, so every load is contiguous across the subgroup and ranks follow input order.
  // Positions past n hold the largest key, which ranks after every real key. Every tile but the
  // last is full and loads its keys without bounds checks, which lets NVIDIA's compiler keep
  // fewer registers (doc/tuning.md, "Sort: loading full tiles without bounds checks").
  const uint tile_first = tile * TILE_KEYS;
  const uint first = tile_first + gl_SubgroupID * SUBGROUP_KEYS + lane;
  const bool full_tile = g_n - tile_first >= TILE_KEYS; // (tile_first < g_n; no overflow near 2^32)
  key_t keys[KEYS_PER_THREAD];
  if (KEY_KIND != 2u && full_tile) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) keys[i] = load_key(first + i * SUBGROUP_SIZE);
  } else if (KEY_KIND != 2u) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      const uint index = first + i * SUBGROUP_SIZE;
      keys[i] = index < g_n ? load_key(index) : ORDERED_KEY_MAX;
    }
  } else {
    // Floats: all loads first, then the map in one uniform branch, which suits float keys but
    // not the others, hence two forms (doc/tuning.md, "Sort: loading and mapping float keys").
    if (full_tile) {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) keys[i] = KeysIn(pc.keys_in).keys[first + i * SUBGROUP_SIZE];
    } else {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
        const uint index = first + i * SUBGROUP_SIZE;
        keys[i] = index < g_n ? KeysIn(pc.keys_in).keys[index] : key_t(0);
      }
    }
    if (first_pass())
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) keys[i] = key_to_ordered(keys[i]);
    if (!full_tile)
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++)
        if (first + i * SUBGROUP_SIZE >= g_n) keys[i] = ORDERED_KEY_MAX;
  }

  // A copy pass (radix_scan_histograms found every key's digit the same, and marked the pass's
  // tickets) keeps the keys' order: each key goes where it was, and the tile neither ranks nor
  // looks back (nor posts: the digit starts of a segment, which radix_next_segment moves on
  // from the posts, go unread). A copy pass takes about as long as the device's copy; the
  // branch makes uniform keys' passes 0.4% longer (doc/tuning.md, "Sort: copy passes").
  if (!REDUCE_THEN_SCAN && s_ticket >= GS_SORT_COPY_TICKETS) {
    // Rows at constant offsets from one pointer each (keys out, values in and out), as the
    // values after the look-back are loaded: an index and a bounds test per key kept every
    // key's index live beside its key and value, and this branch set the pipeline's registers
    // (doc/tuning.md, "Sort: copy passes").
    const uint rows = rows_before_n(first, full_tile);
    const uint to_first = pc.index_base + first; // (index_base: a segment's first key)
#if VALUE_WORDS > 0
    // All loaded before any is stored, not one by one after the keys' stores
    // (doc/tuning.md, "Sort: copy passes").
    value_t copied[KEYS_PER_THREAD];
    load_value_rows(copied, first, rows);
    ValuesOut value_row = ValuesOut(element_address(pc.values_out, to_first, VALUE_WORDS * 4u));
#endif
    KeysOut key_row = KeysOut(element_address(pc.keys_out, to_first, KEY_BITS / 8u));
    const bool last = last_pass(); // (tested once, not per key)
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      if (i < rows) {
        key_row.keys[i * SUBGROUP_SIZE] = output_key(keys[i], last);
#if VALUE_WORDS > 0
        value_row.values[i * SUBGROUP_SIZE] = copied[i];
#endif
      }
    }
    return;
  }

  // With HOLD_KEYS (the device's preset) the keys wait in shared memory, after the counters in
  // each invocation's own slots, while they are ranked, and come back to registers to be
  // staged: fewer registers live through the ranking, so a tile holds more keys. Not on
  // lavapipe, where every shared access is a loop over the lanes
  // (doc/tuning.md, "Sort: holding keys in shared memory while ranking").
  const uint held = COUNTER_WORDS + gl_SubgroupID * SUBGROUP_KEYS + lane;
  if (HOLD_KEYS) [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
#if KEY_BITS == 64
    s_stage[held + i * SUBGROUP_SIZE] = uint(keys[i]);
    s_stage[held + TILE_KEYS + i * SUBGROUP_SIZE] = uint(keys[i] >> 32);
#define HELD_KEY(i) (key_t(s_stage[held + (i) * SUBGROUP_SIZE]) | (key_t(s_stage[held + TILE_KEYS + (i) * SUBGROUP_SIZE]) << 32))
#else
    s_stage[held + i * SUBGROUP_SIZE] = keys[i];
#define HELD_KEY(i) s_stage[held + (i) * SUBGROUP_SIZE]
#endif
  }
  // The held keys' digits wait in registers, packed (RADIX_BITS each), so that ranking reads no
  // held key: only the staging below does. Not for 64-bit keys in registers, whose digits take
  // a 64-bit shift each: packed, they took more registers and left one workgroup an SM
  // (doc/tuning.md, "Sort: packed digits of held keys").
  uint held_digits[PACKED_DIGIT_WORDS];
  if (HOLD_KEYS) {
    [[unroll]] for (uint w = 0u; w < held_digits.length(); w++) held_digits[w] = 0u;
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++)
      PACK_DIGIT(held_digits, i, digit_of(keys[i]));
  }
  // Keys in registers are ranked by digits taken at rank_shift, the pass's shift until the early
  // counts are published, then an opaque copy of it (below).
  uint rank_shift = pc.shift;
#define RANKED_DIGIT(i) \
  (HOLD_KEYS ? PACKED_DIGIT(held_digits, i) : key_digit(keys[i], rank_shift, pc.bits))
  // EARLY_COUNTS: the tile's digit counts are counted (a shared atomic a key) and published
  // before the keys are ranked; the counters then start at each subgroup's first tile position
  // of each digit, and the ranks below are tile positions. What it buys is registers, and so
  // more workgroups an SM, not a shorter wait (doc/tuning.md, "Sort: early counts"; the shapes:
  // "Presets: early counts on NVIDIA").
  if (EARLY_COUNTS) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) atomicAdd(s_stage[counters + RANKED_DIGIT(i)], 1u);
    barrier();
    publish_counts(tile, true);
    // The shift through an identity shuffle, which the compiler cannot see through: otherwise
    // NVIDIA's compiler took every key's digit (and its counter's address) once, for the counts
    // above and the ranking below, and kept them live through publish_counts, two registers a
    // key. Held keys' packed digits through the same shuffle took fewer registers but were no
    // faster, their shared memory allowing two workgroups an SM either way
    // (doc/tuning.md, "Sort: early counts").
    if (!HOLD_KEYS) rank_shift = subgroupShuffle(rank_shift, lane);
  }
  // Rank within the subgroup: keys before this one with the same digit, counting earlier
  // rounds through the subgroup's counters and this round through the ballot.
  uint rank[KEYS_PER_THREAD];
  if (SUBGROUP_SIZE == 8u) {
    // Subgroups of 8 (lavapipe, whose subgroup is one CPU vector): the peers from 8 broadcasts
    // of the digit (each one vector compare, where a ballot is a loop over the lanes), and
    // every peer reads the counter itself (no shuffle from the leader); the lowest peer writes
    // it back. The same ranks as below.
    const uint lanes_below = (1u << lane) - 1u;
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      const uint d = RANKED_DIGIT(i);
      const uint peers = (subgroupBroadcast(d, 0u) == d ? 1u : 0u) | (subgroupBroadcast(d, 1u) == d ? 2u : 0u) |
                         (subgroupBroadcast(d, 2u) == d ? 4u : 0u) | (subgroupBroadcast(d, 3u) == d ? 8u : 0u) |
                         (subgroupBroadcast(d, 4u) == d ? 16u : 0u) | (subgroupBroadcast(d, 5u) == d ? 32u : 0u) |
                         (subgroupBroadcast(d, 6u) == d ? 64u : 0u) | (subgroupBroadcast(d, 7u) == d ? 128u : 0u);
      const uint before = s_stage[counters + d];
      // every peer has read the counter before the leader writes it; the write is seen by the
      // next round's readers
      controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
      if ((peers & lanes_below) == 0u) s_stage[counters + d] = before + bitCount(peers);
      controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
      rank[i] = before + bitCount(peers & lanes_below);
    }
  } else
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
    const uint d = RANKED_DIGIT(i);
    const uvec4 peers = subgroup_match_digit(d);
    const uint leader = subgroupBallotFindLSB(peers);
    const uint group_size = subgroupBallotBitCount(peers);
    uint before = 0u;
    if (lane == leader) {
      before = s_stage[counters + d];
      s_stage[counters + d] = before + group_size;
    }
    // The identity shuffle makes the sum here: NVIDIA's compiler otherwise kept both terms of
    // every rank live (two registers per key) until it could fold them into a three-input add
    // after the block scan (doc/tuning.md, "Sort: ranking keys in a subgroup").
    rank[i] = subgroupShuffle(subgroupShuffle(before, leader) + subgroupBallotExclusiveBitCount(peers), lane);
    // The next round's leader may be another invocation: order the counters' shared-memory
    // accesses within the subgroup (and nothing else).
    controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
  }
  if (!EARLY_COUNTS) {
    barrier();
    publish_counts(tile, HOLD_KEYS);
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      const uint d = RANKED_DIGIT(i);
      rank[i] += HOLD_KEYS ? s_stage[counters + d] : s_digit_start[d] + s_stage[counters + d];
    }
  }
  if (HOLD_KEYS) [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) keys[i] = HELD_KEY(i);
  barrier(); // all counters (and held keys) read before staged items overwrite them
#if KEY_BITS == 64 && VALUE_WORDS == 0
  // STAGE_HALVES: the low halves now, the high ones after the look-back. The ranks wait for
  // them packed two a register (tile positions are below 2^16): f64 keys' pipeline, whose map
  // takes registers, went from 82 to 80 at 384 x 18, so two workgroups share an SM
  // (doc/tuning.md, "Sort: staging 64-bit keys in halves").
  uint packed_ranks[(KEYS_PER_THREAD + 1u) / 2u];
  uint high_halves[KEYS_PER_THREAD]; // (read before the look-back, below)
  if (STAGE_HALVES) {
    [[unroll]] for (uint w = 0u; w < packed_ranks.length(); w++) packed_ranks[w] = 0u;
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      packed_ranks[i / 2u] |= rank[i] << (16u * (i % 2u));
      s_stage[rank[i]] = uint(keys[i]);
    }
  } else
#endif
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) stage_key(rank[i], keys[i]);

#if VALUE_WORDS > 0
  value_t values[KEYS_PER_THREAD];
#endif
#if VALUE_WORDS > 0 && KEY_BITS == 64
  // 64-bit keys' values are loaded before the look-back, whose wait then hides their latency;
  // their tiles leave the registers for it (on NVIDIA 384 invocations, two workgroups per SM at
  // up to 80). Not for 32-bit keys, whose pass in tiles of 512 went past 64 registers so
  // (doc/tuning.md, "Sort: loading 64-bit keys' values before the look-back").
  load_value_rows(values, first, rows_before_n(first, full_tile));
#endif
#if KEY_BITS == 64 && VALUE_WORDS == 0
  if (STAGE_HALVES) // (as the values above)
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
      const uint index = first + i * SUBGROUP_SIZE;
      high_halves[i] = index < g_n ? load_high_half(index) : uint(ORDERED_KEY_MAX >> 32);
    }
#endif
  if (!REDUCE_THEN_SCAN && tile != 0u) look_back(tile);
  barrier();
  for (uint d = lid; d < RADIX; d += WORKGROUP_SIZE) {
    // a segment's counts start from zero: the digit's start past earlier segments comes after
    const uint segment_start = SEGMENTED && !REDUCE_THEN_SCAN ? WordArray(pc.digit_starts).words[pc.pass * RADIX + d] : 0u;
    s_digit_dest[d] += segment_start - s_digit_start[d];
  }
  barrier();

  // Write out in tile order: consecutive invocations mostly share a digit, so they write
  // consecutive addresses. Padding sorts last and is never written.
  const uint valid = min(TILE_KEYS, g_n - tile_first);
#if KEY_BITS == 64 && VALUE_WORDS == 0
  if (STAGE_HALVES) {
    // Each written position's low half waits in a register while the high halves are staged
    // in the same words; the whole key is then written at once.
    uint low_halves[KEYS_PER_THREAD];
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) low_halves[i] = s_stage[lid + i * WORKGROUP_SIZE];
    barrier();
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++)
      s_stage[bitfieldExtract(packed_ranks[i / 2u], int(16u * (i % 2u)), 16)] = high_halves[i];
    barrier();
#define WRITE_OUT_WHOLE_KEY(i, last)                                   \
  {                                                                     \
    const uint j = lid + (i) * WORKGROUP_SIZE;                          \
    if (j < valid) {                                                    \
      const key_t k = key_t(low_halves[i]) | (key_t(s_stage[j]) << 32); \
      store_key(s_digit_dest[digit_of(k)] + j, k, last);                \
    }                                                                   \
  }
    if (MAPPED_KEYS && last_pass()) { // (as below)
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) WRITE_OUT_WHOLE_KEY(i, true)
    } else {
      [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) WRITE_OUT_WHOLE_KEY(i, false)
    }
#undef WRITE_OUT_WHOLE_KEY
    return;
  }
#endif
#if VALUE_WORDS > 0
  // Each written position's digit, packed as the held digits are: its value goes where its key
  // went. (Each destination kept instead: ten registers more, H200, 384 x 14, 104 against 94.)
  uint written_digits[PACKED_DIGIT_WORDS];
  [[unroll]] for (uint w = 0u; w < written_digits.length(); w++) written_digits[w] = 0u;
#endif
#if VALUE_WORDS > 0
#define PACK_WRITTEN_DIGIT(i, d) PACK_DIGIT(written_digits, i, d)
#else
#define PACK_WRITTEN_DIGIT(i, d)
#endif
#define WRITE_OUT_KEY(i, last)                        \
  {                                                   \
    const uint j = lid + (i) * WORKGROUP_SIZE;        \
    if (j < valid) {                                  \
      const key_t k = staged_key(j);                  \
      const uint d = digit_of(k);                     \
      store_key(s_digit_dest[d] + j, k, last);        \
      PACK_WRITTEN_DIGIT(i, d);                       \
    }                                                 \
  }
  // Keys alone choose the last pass's unmap once for the tile, around two copies of the loop: a
  // choice per key cost every pass of the pipeline a select a key. With values it was no faster,
  // so they keep the choice per key (doc/tuning.md, "Sort: unmapping keys once per tile").
  const bool unmaps = MAPPED_KEYS && last_pass();
  if (VALUE_WORDS == 0 && unmaps) {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) WRITE_OUT_KEY(i, true)
  } else {
    [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) WRITE_OUT_KEY(i, VALUE_WORDS > 0 && unmaps)
  }
#undef WRITE_OUT_KEY
#undef PACK_WRITTEN_DIGIT

#if VALUE_WORDS > 0
  // Values take the same way: staged at their keys' ranks, written where the keys went.
#if KEY_BITS == 32
  // 32-bit keys' values are loaded now, all before any is staged (CUB's order), from one row
  // pointer at constant offsets. The tile's first index comes through an identity shuffle, as
  // rank_shift does: otherwise NVIDIA's compiler hoisted the loads above the look-back and kept
  // every value live through it. Loaded beside the keys (held in shared memory while the keys
  // were ranked), or right after the look-back before the keys' write-out, they were slower
  // (doc/tuning.md, "Sort: loading 32-bit keys' values after the write-out").
  const uint value_first = subgroupShuffle(first, lane);
  load_value_rows(values, value_first, rows_before_n(value_first, full_tile));
#endif
  barrier(); // staged keys read before the values overwrite them
  // (padding's ranks lie past the valid positions, which alone are written out)
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) stage_value(rank[i], values[i]);
  barrier();
  // (through the shuffle, the positions are not the key write-out's, kept live until here)
  const uint value_lid = subgroupShuffle(lid, lane);
  [[unroll]] for (uint i = 0u; i < KEYS_PER_THREAD; i++) {
    const uint j = value_lid + i * WORKGROUP_SIZE;
    if (j < valid) store_value(s_digit_dest[PACKED_DIGIT(written_digits, i)] + j, staged_value(j));
  }
#endif
}
