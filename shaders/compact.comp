#version 460
#extension GL_GOOGLE_include_directive : require
// The look-back family in one pass (the contract: gs_compact_push in kernel_interface.h):
// select, partition, unique and, compiled with REDUCE_BY_KEY, reduce-by-key.
//
// A tile is WORKGROUP_SIZE x ITEMS keys; invocation i holds the ITEMS consecutive keys from
// i * ITEMS, so an invocation's kept keys are consecutive in the output and a segmented
// reduction runs along them serially. Per tile:
//   1. flag each key (predicate, or "first of a run of equal keys"), count the flags per
//      invocation and rank them in the tile (a workgroup prefix sum);
//   2. post the tile's count and look back for the count kept before it (lib/lookback.glsl:
//      30-bit count descriptors, a bounded wait, then the tile counts the stalled one itself);
//   3. reduce-by-key only: the value of the run still open at the tile's start comes from a
//      second look-back over the scan's descriptors (lib/scan_lookback.glsl), where a tile's
//      value is the combination since its last run head, and a tile holding a head posts it as
//      inclusive at once (a segmented scan);
//   4. write every kept key (and index, and value) to its place.
#if KEY_BITS == 64 || (defined(REDUCE_BY_KEY) && (IN_BITS == 64 || ACC_REP == 2 || ACC_REP == 4))
#define NEEDS_INT64
#endif
#include "lib/common.glsl"
#ifdef REDUCE_BY_KEY
#if ACC_REP == 2
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif
#define SPLIT_DESCRIPTORS // the value descriptors: any accumulator width, no 64-bit atomics
#include "lib/scan_ops.glsl"
#endif
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_compact_push pc; };

#include "lib/lookback.glsl"
#include "lib/workgroup_scan.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint ITEMS = 8; // keys per invocation, at most 32
layout(constant_id = GS_SPEC_COMPACT_MODE) const uint MODE = GS_COMPACT_SELECT;
const uint TILE = WORKGROUP_SIZE * ITEMS;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Program { gs_predicate_op ops[]; };
#if KEY_BITS == 64
#define key_vector_t u64vec2
#else
#define key_vector_t uvec4
#endif
const uint KEYS_PER_VECTOR = 128u / KEY_BITS;
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer KeyVectors { key_vector_t vectors[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Indices { uint indices[]; };
#ifdef REDUCE_BY_KEY
#if IN_BITS == 64
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ValuesIn { in_t values[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ValuesIn { in_t values[]; };
#endif
#if ACC_BITS == 64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer AccArray { acc_bits_t values[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer AccArray { acc_bits_t values[]; };
#endif
#endif

shared uint s_ticket, s_tile_count, s_count_before;

// ---- Predicates (select, partition): the postfix program of src/prim/predicate.h ----

key_t constant_of(uint lo, uint hi) {
#if KEY_BITS == 64
  return uint64_t(lo) | (uint64_t(hi) << 32);
#else
  return lo;
#endif
}

bool is_nan(key_t k) {
  if (KEY_KIND != 2u) return false;
#if KEY_BITS == 64
  return (k & ~KEY_SIGN_BIT) > 0x7FF0000000000000ul;
#else
  return (k & ~KEY_SIGN_BIT) > 0x7F800000u;
#endif
}

// Ordered bits with -0.0 taken as +0.0: unsigned order is then IEEE order for non-NaNs.
key_t comparable(key_t k) {
  if (KEY_KIND == 2u && k == KEY_SIGN_BIT) k = key_t(0);
  return key_to_ordered(k);
}

bool satisfies(key_t k) {
  const key_t o = comparable(k);
  const bool nan = is_nan(k);
  uint stack = 0u; // truth values, the top in bit 0 (the parser bounds the depth to 32)
  for (uint i = 0u; i < pc.program_length; i++) {
    const gs_predicate_op op = Program(pc.program).ops[i]; // the same for every key: cached
    const key_t a = constant_of(op.a_lo, op.a_hi), b = constant_of(op.b_lo, op.b_hi);
    bool r = false;
    switch (op.code) {
    case GS_PRED_LT: r = !nan && o < a; break;
    case GS_PRED_LE: r = !nan && o <= a; break;
    case GS_PRED_GT: r = !nan && o > a; break;
    case GS_PRED_GE: r = !nan && o >= a; break;
    case GS_PRED_EQ: r = !nan && o == a; break;
    case GS_PRED_NE: r = nan || o != a; break;
    case GS_PRED_RANGE: r = !nan && a <= o && o < b; break;
    case GS_PRED_ISNAN: r = nan; break;
    case GS_PRED_NOTNAN: r = !nan; break;
    case GS_PRED_MASK_EQ: r = (k & a) == b; break;
    case GS_PRED_MASK_NE: r = (k & a) != b; break;
    case GS_PRED_NOT: r = (stack & 1u) == 0u; stack >>= 1; break;
    case GS_PRED_AND: r = (stack & 3u) == 3u; stack >>= 2; break;
    case GS_PRED_OR: r = (stack & 3u) != 0u; stack >>= 2; break;
    }
    stack = (stack << 1) | (r ? 1u : 0u);
  }
  return (stack & 1u) != 0u;
}

// ---- Keys and flags ----

key_t key_at(uint g) { return KeysIn(pc.keys_in).keys[g]; }

// Whether key g (< n) starts a run of equal stored bits.
bool starts_run(uint g, key_t k) {
  if (g == 0u) {
    if ((pc.flags & GS_COMPACT_PREVIOUS) == 0u) return true;
    return k != constant_of(pc.prev_lo, pc.prev_hi);
  }
  return k != key_at(g - 1u);
}

bool kept(uint g, key_t k) {
  if (g >= pc.n) return false;
  if (MODE == GS_COMPACT_SELECT || MODE == GS_COMPACT_PARTITION) return satisfies(k);
  return starts_run(g, k);
}

// Output `at` of indices_out: the position g of a kept key, or (CARRY) its value's words (a
// sort's values or record indices, kept with the first key of each run).
void write_index(uint at, uint g) {
  if ((pc.flags & GS_COMPACT_CARRY) == 0u) {
    Indices(pc.indices_out).indices[at] = g;
    return;
  }
  const uint words = (pc.flags & GS_COMPACT_CARRY_WIDE) != 0u ? 2u : 1u;
  for (uint w = 0u; w < words; w++)
    Indices(pc.indices_out).indices[at * words + w] = WordArray(pc.values_in).words[g * words + w];
}

// Fallback of the count look-back: the flags of (full, earlier) tile t, counted by subgroup 0.
uint count_tile_by_subgroup(uint t) {
  uint count = 0u;
  for (uint i = gl_SubgroupInvocationID; i < TILE; i += SUBGROUP_SIZE) {
    const uint g = t * TILE + i;
    if (g < pc.n && kept(g, key_at(g))) count++;
  }
  return subgroupAdd(count);
}

// The number kept in all tiles before `tile`, in subgroup 0, which posts the tile's inclusive
// count on the way. Every lane posts (the same word): no lane runs ahead of the others into the
// walk's ballots (a device may not reconverge a subgroup after one lane's branch).
uint count_before(uint tile, uint tile_count) {
  if (tile == 0u) {
    lookback_post(0u, LOOKBACK_INCLUSIVE | tile_count);
    return 0u;
  }
  lookback_post(tile, LOOKBACK_AGGREGATE | tile_count);
  uint next = tile - 1u, prefix = 0u;
  for (;;) {
    lookback_walk_subgroup(next, prefix, 0u, 1u);
    if (next == LOOKBACK_DONE) break;
    // tile `next` keeps us waiting: count it ourselves and go on past it
    const uint count = count_tile_by_subgroup(next);
    lookback_post_if_empty(next, (next == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | count);
    prefix += count;
    if (next == 0u) break;
    next--;
  }
  lookback_post(tile, LOOKBACK_INCLUSIVE | (prefix + tile_count));
  return prefix;
}

#ifdef REDUCE_BY_KEY
// ---- Reduce-by-key: a segmented reduction of the values along the keys' runs ----

shared bool s_segment_head[NUM_SUBGROUPS];
shared rep_t s_segment_value[NUM_SUBGROUPS];
shared rep_t s_value_before;

rep_t value_at(uint g) {
  if (g >= pc.n) return rep_identity();
  return (pc.flags & GS_COMPACT_COUNT_RUNS) != 0u ? rep_t(1) : rep_of_input(ValuesIn(pc.values_in).values[g]);
}

// (head, value) pairs combine as a segmented scan's: a later part that holds a head starts over.
void segment_combine(inout bool head, inout rep_t value, bool later_head, rep_t later_value) {
  value = later_head ? later_value : combine(value, later_value);
  head = head || later_head;
}

// Fallback of the value look-back: tile t's values from its last run head on (then
// `inclusive`: nothing before it counts), by subgroup 0.
rep_t reduce_tile_by_subgroup(uint t, out bool inclusive) {
  uint last_head = 0u;
  bool any_head = false;
  for (uint i = gl_SubgroupInvocationID; i < TILE; i += SUBGROUP_SIZE) {
    const uint g = t * TILE + i;
    if (g < pc.n && starts_run(g, key_at(g))) {
      any_head = true;
      last_head = i;
    }
  }
  inclusive = subgroupAny(any_head);
  const uint from = inclusive ? subgroupMax(any_head ? last_head : 0u) : 0u;
  rep_t sum = rep_identity();
  for (uint i = gl_SubgroupInvocationID; i < TILE; i += SUBGROUP_SIZE) // (the same trip count in every lane)
    if (i >= from) sum = combine(sum, value_at(t * TILE + i));
  return subgroup_reduce(sum);
}
#include "lib/scan_lookback.glsl"
#endif

void main() {
  const uint lid = gl_LocalInvocationID.x;
  if (lid == 0u) s_ticket = atomicAdd(WordArray(pc.control).words[0], 1u);
  barrier();
  const uint tile = s_ticket;
  if (tile >= pc.tiles) return; // surplus workgroup of a folded dispatch

  // 1. This invocation's keys and flags, and their ranks in the tile.
  const uint first = tile * TILE + lid * ITEMS;
  key_t keys[ITEMS];
  if (first + ITEMS <= pc.n && ITEMS % KEYS_PER_VECTOR == 0u) { // 16-byte loads
    [[unroll]] for (uint j = 0u; j < ITEMS; j += KEYS_PER_VECTOR) {
      const key_vector_t v = KeyVectors(pc.keys_in).vectors[(first + j) / KEYS_PER_VECTOR];
      [[unroll]] for (uint k = 0u; k < KEYS_PER_VECTOR; k++) keys[j + k] = v[k];
    }
  } else {
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) keys[j] = first + j < pc.n ? key_at(first + j) : key_t(0);
  }
  uint flags = 0u; // bit j: key first + j is kept
  [[unroll]] for (uint j = 0u; j < ITEMS; j++)
    if (kept(first + j, keys[j])) flags |= 1u << j;
  const uint mine = bitCount(flags);
  const uint before_mine = workgroup_exclusive_add(mine);
  if (lid == WORKGROUP_SIZE - 1u) s_tile_count = before_mine + mine;
  barrier();

#ifdef REDUCE_BY_KEY
  // This invocation's values: each one's combination since its run's head (or since the
  // invocation's first key), and the invocation's own (head, value) summary.
  rep_t running[ITEMS];
  bool head_mine = false;
  rep_t value_mine = rep_identity();
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
    segment_combine(head_mine, value_mine, (flags & (1u << j)) != 0u, value_at(first + j));
    running[j] = value_mine;
  }
  // Segmented exclusive scan of the summaries over the tile: in the subgroup by doubling
  // steps, then over the subgroups' totals.
  const uint lane = gl_SubgroupInvocationID;
  bool head_in = head_mine;
  rep_t value_in = value_mine;
  for (uint d = 1u; d < SUBGROUP_SIZE; d <<= 1) {
    const bool head_up = subgroupShuffleUp(head_in, d);
    const rep_t value_up = subgroupShuffleUp(value_in, d);
    if (lane >= d) {
      bool h = head_up;
      rep_t v = value_up;
      segment_combine(h, v, head_in, value_in);
      head_in = h, value_in = v;
    }
  }
  if (lane == SUBGROUP_SIZE - 1u) s_segment_head[gl_SubgroupID] = head_in, s_segment_value[gl_SubgroupID] = value_in;
  bool head_before = subgroupShuffleUp(head_in, 1u);
  rep_t value_before = subgroupShuffleUp(value_in, 1u);
  if (lane == 0u) head_before = false, value_before = rep_identity();
  barrier();
  if (lid == 0u) { // the subgroups' totals to exclusive prefixes, and the tile's summary
    bool h = false;
    rep_t v = rep_identity();
    for (uint s = 0u; s < NUM_SUBGROUPS; s++) {
      const bool th = s_segment_head[s];
      const rep_t tv = s_segment_value[s];
      s_segment_head[s] = h, s_segment_value[s] = v;
      segment_combine(h, v, th, tv);
    }
    // post now: a tile with a head knows its inclusive value (tile 0 always has one)
    scan_post(tile, h ? SCAN_INCLUSIVE : SCAN_AGGREGATE, v);
    s_value_before = v; // (the tile's summary, until the look-back below)
  }
  barrier();
  {
    bool h = s_segment_head[gl_SubgroupID];
    rep_t v = s_segment_value[gl_SubgroupID];
    segment_combine(h, v, head_before, value_before);
    head_before = h, value_before = v; // everything in the tile before this invocation
  }
  const bool tile_has_head = s_tile_count != 0u;
  const bool first_is_head = tile * TILE < pc.n && starts_run(tile * TILE, key_at(tile * TILE));
#endif

  // 2. The count kept before this tile.
  if (gl_SubgroupID == 0u) {
    const uint before = count_before(tile, s_tile_count);
    s_count_before = before; // (by every lane: see count_before)
#ifdef REDUCE_BY_KEY
    // 3. The value of the run open at the tile's start, from the tiles before.
    if (!first_is_head) {
      const rep_t tile_value = s_value_before;
      const rep_t prefix = scan_look_back(tile);
      if (gl_SubgroupInvocationID == 0u) {
        if (!tile_has_head) scan_post(tile, SCAN_INCLUSIVE, combine(prefix, tile_value));
        s_value_before = prefix;
      }
    }
#endif
  }
  barrier();
  if (tile + 1u == pc.tiles && lid == 0u) WordArray(pc.control).words[1] = s_count_before + s_tile_count;

  // 4. Everything kept to its place.
  uint at = s_count_before + before_mine; // output index of this invocation's next kept key
#ifdef REDUCE_BY_KEY
  const rep_t open_run = first_is_head ? rep_identity() : s_value_before;
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
    const uint g = first + j;
    if (g >= pc.n) break;
    const bool head = (flags & (1u << j)) != 0u;
    if (head) {
      if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[at] = keys[j];
      if ((pc.flags & GS_COMPACT_INDICES) != 0u) Indices(pc.indices_out).indices[at] = g;
      at++;
    }
    // the run ends here: its value, with what came before this invocation if it started there
    const bool ends = g + 1u == pc.n || (j + 1u < ITEMS ? (flags & (2u << j)) != 0u : starts_run(g + 1u, key_at(g + 1u)));
    if (ends) {
      const bool started_here = (flags & ((2u << j) - 1u)) != 0u;
      rep_t value = running[j];
      if (!started_here) {
        value = combine(value_before, value);
        if (!head_before) value = combine(open_run, value);
      }
      AccArray(pc.values_out).values[at - 1u] = bits_from_rep(value);
    }
  }
#else
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
    const uint g = first + j;
    if ((flags & (1u << j)) != 0u) {
      if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[at] = keys[j];
      if ((pc.flags & GS_COMPACT_INDICES) != 0u) write_index(at, g);
      at++;
    } else if (MODE == GS_COMPACT_PARTITION && g < pc.n) {
      // rejected: from the end backwards; g - at of them came before this one
      const uint back = pc.n - 1u - (g - at);
      if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[back] = keys[j];
      if ((pc.flags & GS_COMPACT_INDICES) != 0u) write_index(back, g);
    }
  }
#endif
}
