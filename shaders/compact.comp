#version 460
#extension GL_GOOGLE_include_directive : require
// The look-back family in one pass (the contract: gs_compact_push in kernel_interface.h):
// select, partition, unique and, compiled with REDUCE_BY_KEY, reduce-by-key.
//
// A tile is one sub-tile of WORKGROUP_SIZE x ITEMS keys (unique, reduce-by-key) or SUBTILES of
// them (select, partition), a subgroup fewer with EARLY_WALK. Each subgroup holds a segment in
// ROWS rows, lane l holding VEC consecutive keys of each row, so every row loads one contiguous
// stretch and the kept keys of a row land side by side in the output. Per tile:
//   1. flag each key (predicate, or "first of a run of equal keys"), rank the flags, and post
//      the tile's count as soon as it is known;
//   2. look back for the count kept before the tile (lib/lookback.glsl);
//   3. reduce-by-key only: look back over the scan's descriptors for the value of the run open
//      at the tile's start (lib/scan_lookback.glsl; with COUNT_RUNS, rle, from head positions);
//   4. write every kept key (and index, and value) to its place: select and partition from
//      records staged in shared memory, the others reading kept keys again from the input.
// With EARLY_WALK (NVIDIA's preset for unique and rle) a subgroup holding no keys takes steps 2
// and 3 from the tile's start while the others go through step 1 (unique_tile_early_walk,
// runs_tile_early_walk) (doc/tuning.md, "Look-back family: the pass in outline").
#if KEY_BITS == 64 || (defined(REDUCE_BY_KEY) && (IN_BITS == 64 || ACC_REP == 2 || ACC_REP == 4 || !defined(SPLIT_DESCRIPTORS)))
#define NEEDS_INT64
#endif
#include "lib/common.glsl"
#ifdef REDUCE_BY_KEY
#if ACC_REP == 2
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif
// The value descriptors: packed (status and a 32-bit value in one 64-bit atomic word), or split
// (SPLIT_DESCRIPTORS: any width, no 64-bit atomics, but a release store and an acquire load
// each). Packed is the faster (H100, 2^28: reduce-by-key 1.518 ms against 1.635)
// (doc/tuning.md, "Look-back family: packed or split value descriptors").
#ifndef SPLIT_DESCRIPTORS
#extension GL_EXT_shader_atomic_int64 : require
#endif
#define SCAN_LOOK_BACK_SERIAL // (see count_before)
#include "lib/scan_ops.glsl"
#endif
#include "lib/keys.glsl"

layout(push_constant, std430) uniform Push { gs_compact_push pc; };

#include "lib/lookback.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint ITEMS = 8; // keys per invocation, a multiple of VEC, at most 32
layout(constant_id = GS_SPEC_COMPACT_MODE) const uint MODE = GS_COMPACT_SELECT;
layout(constant_id = GS_SPEC_COMPACT_SUBTILES) const uint SUBTILES = 1; // select and partition only
layout(constant_id = GS_SPEC_READ_AHEAD) const uint READ_AHEAD = 0; // select and partition only (see read_ahead)
layout(constant_id = GS_SPEC_EARLY_WALK) const uint EARLY_WALK = 0; // unique, rle, reduce-by-key (unique_tile_early_walk, runs_tile_early_walk)
layout(constant_id = GS_SPEC_SUBGROUP_WALK) const uint SUBGROUP_WALK = 0; // tiles that walk after loading (walk_for_count)
const bool STAGED_STORES = GS_COMPACT_STAGES(MODE); // select and partition (see staged_tile)
// subgroups that hold keys: all, or all but the one that walks (EARLY_WALK)
const uint DATA_SUBGROUPS = EARLY_WALK != 0u ? NUM_SUBGROUPS - 1u : NUM_SUBGROUPS;
const uint SUBTILE = DATA_SUBGROUPS * SUBGROUP_SIZE * ITEMS;
const uint TILE = STAGED_STORES ? SUBTILE * SUBTILES : SUBTILE;
const uint LOAD_VEC = 128u / KEY_BITS;       // keys of one 16-byte load
// Keys a lane holds side by side in a row (VEC): one load's, or in rle and reduce-by-key up to
// four loads' (a lane's keys then lie in one row, in a block: one shuffle, ballot and scan
// across the lanes where four rows took four of each), faster for both; reduce-by-key in blocks
// holds its values in registers through the look-back (write_runs). The other modes are slower
// in blocks (doc/tuning.md, "Look-back family: a lane's keys in blocks of loads").
#ifdef REDUCE_BY_KEY
const uint LOADS = ITEMS / LOAD_VEC;
const uint CHUNK_LOADS = LOADS % 4u == 0u ? 4u : LOADS % 2u == 0u ? 2u : 1u;
#else
const uint CHUNK_LOADS = 1u;
#endif
const uint VEC = LOAD_VEC * CHUNK_LOADS;
const uint ROWS = ITEMS / VEC;
const uint SEGMENT = SUBGROUP_SIZE * ITEMS;  // the keys of one subgroup
const uint VEC_MASK = (1u << VEC) - 1u;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Program { gs_predicate_op ops[]; };
#if KEY_BITS == 64
#define key_vector_t u64vec2
#else
#define key_vector_t uvec4
#endif
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
#if defined(REDUCE_BY_KEY) && !defined(SPLIT_DESCRIPTORS)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer PackedDescriptors { uint64_t descriptors[]; };
#endif

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

// Comparison `code` on key k (o: its ordered bits, nan: whether it is a NaN).
bool compares(uint code, key_t a, key_t b, key_t k, key_t o, bool nan) {
  switch (code) {
  case GS_PRED_LT: return !nan && o < a;
  case GS_PRED_LE: return !nan && o <= a;
  case GS_PRED_GT: return !nan && o > a;
  case GS_PRED_GE: return !nan && o >= a;
  case GS_PRED_EQ: return !nan && o == a;
  case GS_PRED_NE: return nan || o != a;
  case GS_PRED_RANGE: return !nan && a <= o && o < b;
  case GS_PRED_ISNAN: return nan;
  case GS_PRED_NOTNAN: return !nan;
  case GS_PRED_MASK_EQ: return (k & a) == b;
  case GS_PRED_MASK_NE: return (k & a) != b;
  }
  return false;
}

// One step of the program on one key: `stack` holds truth values, the top in bit 0 (the
// parser bounds the depth to 32).
void apply_op(uint code, key_t a, key_t b, key_t k, key_t o, bool nan, inout uint stack) {
  bool r;
  switch (code) {
  case GS_PRED_NOT: r = (stack & 1u) == 0u; stack >>= 1; break;
  case GS_PRED_AND: r = (stack & 3u) == 3u; stack >>= 2; break;
  case GS_PRED_OR: r = (stack & 3u) != 0u; stack >>= 2; break;
  default: r = compares(code, a, b, k, o, nan);
  }
  stack = (stack << 1) | (r ? 1u : 0u);
}

bool satisfies(key_t k) {
  uint stack = 0u;
  for (uint i = 0u; i < pc.program_length; i++) {
    const gs_predicate_op op = Program(pc.program).ops[i];
    apply_op(op.code, constant_of(op.a_lo, op.a_hi), constant_of(op.b_lo, op.b_hi), k, comparable(k), is_nan(k), stack);
  }
  return (stack & 1u) != 0u;
}

// The flags of this invocation's keys (bit j: key j satisfies the program). A program of one
// comparison (the usual `--where`) branches once on its op, outside the loop over the keys
// (H100, 2^28 u32 keys: select 1.49 ms against 1.52 with the switch inside); longer ones run
// their ops once each, over all keys.
#define EACH_KEY(c) case c: [[unroll]] for (uint j = 0u; j < ITEMS; j++) \
    if (compares(c, a, b, keys[j], ordered[j], is_nan(keys[j]))) flags |= 1u << j; break
uint satisfied_flags(key_t keys[ITEMS]) {
  key_t ordered[ITEMS];
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) ordered[j] = comparable(keys[j]);
  uint flags = 0u;
  if (pc.program_length == 1u) { // (a comparison: the parser emits no lone logical op)
    const gs_predicate_op op = Program(pc.program).ops[0];
    const key_t a = constant_of(op.a_lo, op.a_hi), b = constant_of(op.b_lo, op.b_hi);
    switch (op.code) {
      EACH_KEY(GS_PRED_LT); EACH_KEY(GS_PRED_LE); EACH_KEY(GS_PRED_GT); EACH_KEY(GS_PRED_GE);
      EACH_KEY(GS_PRED_EQ); EACH_KEY(GS_PRED_NE); EACH_KEY(GS_PRED_RANGE); EACH_KEY(GS_PRED_ISNAN);
      EACH_KEY(GS_PRED_NOTNAN); EACH_KEY(GS_PRED_MASK_EQ); EACH_KEY(GS_PRED_MASK_NE);
    }
    return flags;
  }
  uint stacks[ITEMS];
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) stacks[j] = 0u;
  for (uint i = 0u; i < pc.program_length; i++) {
    const gs_predicate_op op = Program(pc.program).ops[i];
    const key_t a = constant_of(op.a_lo, op.a_hi), b = constant_of(op.b_lo, op.b_hi);
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) apply_op(op.code, a, b, keys[j], ordered[j], is_nan(keys[j]), stacks[j]);
  }
  [[unroll]] for (uint j = 0u; j < ITEMS; j++) flags |= (stacks[j] & 1u) << j;
  return flags;
}
#undef EACH_KEY

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

// The look-backs below use no subgroup operation on NVIDIA, the early walks aside: on an H200
// this kernel's subgroup-wide walks (ballots over 32 predecessors) read wrong prefixes in a few
// tile shapes, the same ones every run, which single-invocation walks never did. The count's
// walk there is the workgroup's, through shared memory; the value's (reduce-by-key) runs in one
// invocation, reading one descriptor at a time. The early walk (count_before_by_subgroup), one
// subgroup's ballots in that subgroup's own control flow while the others load, passes there.
// lavapipe's preset walks by subgroup 0 after loading as well (SUBGROUP_WALK, walk_for_count);
// on NVIDIA that walk read wrong counts in rle's and reduce-by-key's tiles (runs_tile): never
// taken there (device_config.c) (doc/tuning.md, "Look-back family: subgroup walks on NVIDIA").

// The number kept in all tiles before `tile` (whose count post_tile_count has posted); posts the
// tile's inclusive count on the way.
// The whole workgroup walks, in uniform control flow, WALK_WIDTH predecessors a step: each
// of the first WALK_WIDTH invocations polls one descriptor, and through shared atomics they
// find the nearest empty descriptor and the nearest inclusive count and add up the counts
// before them (no loop over the window: llvmpipe ends a shader's loops after 65535
// iterations in all). Decisions travel through shared memory under barriers, so no subgroup
// operation's convergence is relied on (see above). A predecessor that stays empty for
// LOOKBACK_SPIN_LIMIT steps is counted by the whole workgroup.
// A window of 32 is the fastest (doc/tuning.md, "Look-back family: the count walk's window").
// The walk is where the family loses most to CUB, its time spent waiting for the predecessors'
// counts, and no form of the walk itself has shortened that. The memory it leaves idle serves
// select's and partition's read_ahead instead, and the early walks wait alongside the tile's
// own loads (doc/tuning.md, "Look-back family: what the count's walk waits for").
const uint WALK_WIDTH = WORKGROUP_SIZE < 32u ? WORKGROUP_SIZE : 32u;
shared uint s_walk_next, s_walk_prefix, s_walk_spins, s_walk_count, s_walk_empty, s_walk_inclusive;

// The invocation that posts the tile's counts: lane 0 of the last subgroup, which learns the
// tile's count first. Both posts come from it, so the inclusive one cannot be overtaken by the
// earlier aggregate (barriers order shared memory only).
bool posts_counts() { return gl_SubgroupID == NUM_SUBGROUPS - 1u && gl_SubgroupInvocationID == 0u; }

// Posts the tile's own count (inclusive for tile 0), as soon as it is known, so that successors
// wait less (from posts_counts()'s invocation).
void post_tile_count(uint tile, uint tile_count) {
  lookback_post(tile, (tile == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | tile_count);
}

// The keys kept of tile `tile` at positions first, first + stride, ... (a look-back's fallback,
// counting a predecessor that kept it waiting).
uint kept_in_tile(uint tile, uint first, uint stride) {
  uint count = 0u;
  for (uint i = first; i < TILE; i += stride) {
    const uint g = tile * TILE + i;
    if (g < pc.n && kept(g, key_at(g))) count++;
  }
  return count;
}

uint count_before(uint tile, uint tile_count) {
  const uint lid = gl_LocalInvocationID.x;
  if (lid == 0u) {
    s_walk_next = tile == 0u ? LOOKBACK_DONE : tile - 1u;
    s_walk_prefix = 0u;
    s_walk_spins = 0u;
  }
  barrier();
  while (s_walk_next != LOOKBACK_DONE) { // (uniform: read after a barrier, written before the next)
    const uint next = s_walk_next;
    if (s_walk_spins < LOOKBACK_SPIN_LIMIT) {
      if (lid == 0u) s_walk_empty = WALK_WIDTH, s_walk_inclusive = WALK_WIDTH;
      barrier();
      uint word = 0u;
      if (lid < WALK_WIDTH) { /* past tile 0: an inclusive 0 that ends the walk */
        word = lid <= next ? lookback_poll(next - lid) : LOOKBACK_INCLUSIVE;
        const uint status = word & LOOKBACK_STATUS;
        if (status == LOOKBACK_EMPTY) atomicMin(s_walk_empty, lid);
        if (status == LOOKBACK_INCLUSIVE) atomicMin(s_walk_inclusive, lid);
      }
      barrier();
      // the counts up to the first empty descriptor, and up to the first inclusive one with it
      const uint empty = s_walk_empty, inclusive = s_walk_inclusive;
      if (lid < WALK_WIDTH && lid < empty && lid <= inclusive) atomicAdd(s_walk_prefix, word & LOOKBACK_COUNT);
      if (lid == 0u) {
        if (inclusive < empty) s_walk_next = LOOKBACK_DONE;
        else if (empty > 0u) s_walk_next = next - empty, s_walk_spins = 0u;
        else s_walk_spins++;
      }
    } else { // tile `next` kept us waiting: the workgroup counts it and goes on past it
      if (lid == 0u) s_walk_count = 0u;
      barrier();
      const uint mine = kept_in_tile(next, lid, WORKGROUP_SIZE);
      if (mine != 0u) atomicAdd(s_walk_count, mine);
      barrier();
      if (lid == 0u) {
        const uint count = s_walk_count;
        lookback_post_if_empty(next, (next == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | count);
        s_walk_prefix += count;
        s_walk_next = next == 0u ? LOOKBACK_DONE : next - 1u;
        s_walk_spins = 0u;
      }
    }
    barrier();
  }
  if (posts_counts() && tile != 0u) lookback_post(tile, LOOKBACK_INCLUSIVE | (s_walk_prefix + tile_count));
  return s_walk_prefix;
}

// The number kept in all tiles before `tile` (> 0), by one subgroup, in its own control flow:
// lane l polls tile next - l, and one ballot finds the nearest empty descriptor and the
// nearest inclusive one. A predecessor that stays empty for LOOKBACK_SPIN_LIMIT steps is
// counted by the subgroup.
uint count_before_by_subgroup(uint tile) {
  const uint lane = gl_SubgroupInvocationID;
  const uint window = SUBGROUP_SIZE < 32u ? SUBGROUP_SIZE : 32u;
  uint prefix = 0u, next = tile - 1u, spins = 0u;
  for (;;) {
    uint word = LOOKBACK_EMPTY;
    if (lane < window) word = lane <= next ? lookback_poll(next - lane) : LOOKBACK_INCLUSIVE; // (past tile 0: 0)
    const uint status = word & LOOKBACK_STATUS;
    const uint inclusive_lanes = subgroupBallot(lane < window && status == LOOKBACK_INCLUSIVE).x;
    const uint empty_lanes = subgroupBallot(lane < window && status == LOOKBACK_EMPTY).x;
    const uint first_inclusive = inclusive_lanes != 0u ? findLSB(inclusive_lanes) : window;
    const uint first_empty = empty_lanes != 0u ? findLSB(empty_lanes) : window;
    const uint take = first_inclusive < first_empty ? first_inclusive + 1u : first_empty;
    prefix += subgroupAdd(lane < take ? word & LOOKBACK_COUNT : 0u);
    if (first_inclusive < first_empty) return prefix;
    if (take > 0u) {
      next -= take;
      spins = 0u;
    } else if (++spins >= LOOKBACK_SPIN_LIMIT) { // tile `next` kept us waiting: count it
      const uint count = subgroupAdd(kept_in_tile(next, lane, SUBGROUP_SIZE));
      if (lane == 0u) lookback_post_if_empty(next, (next == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | count);
      prefix += count;
      if (next == 0u) return prefix;
      next -= 1u;
      spins = 0u;
    }
  }
  return prefix;
}

// The count kept before the tile, into s_count_before, once a barrier has passed; tile_count is
// the tile's own. With SUBGROUP_WALK subgroup 0 walks by ballots (count_before_by_subgroup)
// while the others go on to the barrier, and post_inclusive_count posts the tile's inclusive
// count after it; else the whole workgroup walks (count_before) and posts it on the way.
// lavapipe takes subgroup 0's walk, the faster there in all five modes. NVIDIA keeps the
// workgroup's: select and partition were no faster by subgroup 0, and rle's and reduce-by-key's
// tiles read wrong counts by it (see the walks' note above), so they never take it there
// (src/prim/device_config.c) (doc/tuning.md, "Look-back family: subgroup 0's walk after loading").
void walk_for_count(uint tile, uint tile_count) {
  if (SUBGROUP_WALK != 0u) {
    if (gl_SubgroupID == 0u) {
      const uint prefix = tile == 0u ? 0u : count_before_by_subgroup(tile);
      if (gl_SubgroupInvocationID == 0u) s_count_before = prefix;
    }
  } else {
    const uint prefix = count_before(tile, tile_count);
    if (gl_LocalInvocationID.x == 0u) s_count_before = prefix;
  }
}

// After walk_for_count and a barrier: with SUBGROUP_WALK, the tile's inclusive count, from the
// invocation that posted its own count (so that the later post cannot be overtaken).
void post_inclusive_count(uint tile, uint tile_count) {
  if (SUBGROUP_WALK != 0u && posts_counts() && tile != 0u)
    lookback_post(tile, LOOKBACK_INCLUSIVE | (s_count_before + tile_count));
}

// The early walk's meeting point: the data subgroups' counts in the low 16 bits (a tile keeps
// fewer than 65536: src/prim/compact.c), their arrivals above.
shared uint s_arrivals;

#ifdef REDUCE_BY_KEY
// ---- Reduce-by-key: a segmented reduction of the values along the keys' runs ----

#ifdef COUNT_RUNS
shared uint s_segment_last_head[NUM_SUBGROUPS];
#else
shared bool s_segment_head[NUM_SUBGROUPS];
shared rep_t s_segment_value[NUM_SUBGROUPS];
#endif
shared rep_t s_value_before;

rep_t value_at(uint g) {
  if (g >= pc.n) return rep_identity();
  return (pc.flags & GS_COMPACT_COUNT_RUNS) != 0u ? rep_t(1) : rep_of_input(ValuesIn(pc.values_in).values[g]);
}

#ifndef COUNT_RUNS
// The values of a row (the VEC keys from `first`, a multiple of VEC), in whole vectors where
// aligned and inside n: one 16-byte load (two for u32 keys' 64-bit values, one 8-byte load
// for u64 keys' 32-bit values), where a load per value had used a quarter of each 16-byte
// stretch it touched (half for 64-bit values).
#if KEY_BITS == 64 && IN_BITS == 32
#define value_vector_t uvec2
#define VALUE_VECTOR_BYTES 8
#elif IN_BITS == 64
#define value_vector_t u64vec2
#define VALUE_VECTOR_BYTES 16
#else
#define value_vector_t uvec4
#define VALUE_VECTOR_BYTES 16
#endif
layout(buffer_reference, std430, buffer_reference_align = VALUE_VECTOR_BYTES) readonly buffer ValueVectors { value_vector_t vectors[]; };
const uint VALUE_VEC = VALUE_VECTOR_BYTES * 8u / IN_BITS; // values of one load
// The VALUE_VEC values from `first` (a multiple of VALUE_VEC): one load where aligned and inside n.
void load_value_vector(uint first, out rep_t part[VALUE_VEC]) {
  if ((pc.flags & GS_COMPACT_VALUES_ALIGNED) != 0u && first + VALUE_VEC <= pc.n) {
    const value_vector_t raw = ValueVectors(pc.values_in).vectors[first / VALUE_VEC];
    [[unroll]] for (uint k = 0u; k < VALUE_VEC; k++) part[k] = rep_of_input(raw[k]);
  } else {
    [[unroll]] for (uint k = 0u; k < VALUE_VEC; k++) part[k] = value_at(first + k);
  }
}
// (a vector at a time, each tested against n on its own: faster than one test for the whole row
// (doc/tuning.md, "Look-back family: bounds tests"))
void load_value_row(uint first, out rep_t row[VEC]) {
  [[unroll]] for (uint v = 0u; v < VEC / VALUE_VEC; v++) {
    rep_t part[VALUE_VEC];
    load_value_vector(first + v * VALUE_VEC, part);
    [[unroll]] for (uint k = 0u; k < VALUE_VEC; k++) row[v * VALUE_VEC + k] = part[k];
  }
}
#endif

// (head, value) pairs combine as a segmented scan's: a later part that holds a head starts over.
void segment_combine(inout bool head, inout rep_t value, bool later_head, rep_t later_value) {
  value = later_head ? later_value : combine(value, later_value);
  head = head || later_head;
}

// Fallback of the value look-back: tile t's values from its last run head on (then
// `inclusive`: nothing before it counts), computed here.
rep_t reduce_tile(uint t, out bool inclusive) {
  rep_t sum = rep_identity();
  inclusive = false;
  for (uint i = 0u; i < TILE; i++) {
    const uint g = t * TILE + i;
    if (g >= pc.n) break;
    if (starts_run(g, key_at(g))) sum = rep_identity(), inclusive = true;
    sum = combine(sum, value_at(g));
  }
  return sum;
}
#include "lib/scan_lookback.glsl"
#endif

// The first of the VEC keys this lane holds in row r of the segment from segment_first.
uint row_first(uint segment_first, uint r) { return segment_first + (r * SUBGROUP_SIZE + gl_SubgroupInvocationID) * VEC; }

// The highest lane in `lanes` (a ballot), or lane 0 where it holds none.
uint last_lane_or_0(uvec4 lanes) { return subgroupBallotBitCount(lanes) != 0u ? subgroupBallotFindMSB(lanes) : 0u; }

// 64-bit keys cross lanes as two 32-bit halves.
key_t shuffle_up_key(key_t k) {
#if KEY_BITS == 64
  return packUint2x32(subgroupShuffleUp(unpackUint2x32(k), 1u));
#else
  return subgroupShuffleUp(k, 1u);
#endif
}

key_t shuffle_key(key_t k, uint lane) {
#if KEY_BITS == 64
  return packUint2x32(subgroupShuffle(unpackUint2x32(k), lane));
#else
  return subgroupShuffle(k, lane);
#endif
}

#ifndef REDUCE_BY_KEY
// ---- Staged stores (select, partition) ----
// A lane's kept keys in one row are consecutive in the output but interleaved with its
// neighbours', so stores straight from registers would write each 32-byte sector in several
// partial pieces. The tile's records instead wait in shared memory in output order (kept ones
// at their rank in the tile; for partition the rejected ones from the end, the last of them
// first), and after the look-back the workgroup writes them out in contiguous stretches.
// Keys alone are staged as keys; with indices (or carried values), as positions in the tile,
// and the keys are read again from the input (now in cache) as they are written (one round of
// staging). Unique keeps its direct stores (doc/tuning.md, "Look-back family: staged stores").
// A tile is SUBTILES sub-tiles of WORKGROUP_SIZE x ITEMS keys, flagged and staged one after
// another in the same registers, so one look-back serves SUBTILES times the keys
// (doc/tuning.md, "Look-back family: sub-tiles under one look-back").
const uint KEY_WORDS = KEY_BITS / 32u;
shared uint s_staged[STAGED_STORES ? TILE * KEY_WORDS : 1u]; // word w of record s at w * TILE + s

// Stages this lane's records of one sub-tile: its keys (as_keys), or their positions in the
// tile; kept_before_segment counts the keys kept in the tile before this segment.
void stage_records(bool as_keys, key_t keys[ITEMS], uint flags, uint segment_first, uint tile,
                   uint kept_before_segment, uint kept_before_row[ROWS]) {
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    uint at = kept_before_segment + kept_before_row[r]; // rank in the tile of this lane's next kept key
    const uint first = row_first(segment_first, r);
    [[unroll]] for (uint k = 0u; k < VEC; k++) {
      const uint i = r * VEC + k, g = first + k, in_tile = g - tile * TILE;
      uint slot = TILE; // none
      if ((flags & (1u << i)) != 0u) slot = at++;
      else if (MODE == GS_COMPACT_PARTITION && g < pc.n) slot = TILE - 1u - (in_tile - at); // (in_tile - at rejected before it)
      if (slot < TILE) {
        if (!as_keys) {
          s_staged[slot] = in_tile;
        } else {
#if KEY_BITS == 64
          const uvec2 halves = unpackUint2x32(keys[i]);
          s_staged[slot] = halves.x, s_staged[TILE + slot] = halves.y;
#else
          s_staged[slot] = keys[i];
#endif
        }
      }
    }
  }
}

// Read-ahead: before its look-back, a tile reads one word of each 32-byte sector of the keys of
// the tile READ_AHEAD tickets on, so that they wait in cache for whichever workgroup draws it.
// Select's and partition's sub-tiles load one after another, each waiting on memory, and hit
// the cache instead. The words stay in registers, unused until read_ahead_done: nothing waits
// for them before the stores (doc/tuning.md, "Look-back family: read-ahead distance").
const uint READ_AHEAD_WORDS = TILE * KEY_WORDS;
const uint READ_AHEAD_LOADS = READ_AHEAD == 0u ? 1u : (READ_AHEAD_WORDS / 8u + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
void read_ahead(uint tile, out uint words[READ_AHEAD_LOADS]) {
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) words[i] = 0u;
  if (READ_AHEAD == 0u || tile + READ_AHEAD >= pc.tiles) return;
  const uint first = (tile + READ_AHEAD) * READ_AHEAD_WORDS; // (n < 2^30: compact.c's MAX_ELEMENTS)
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) {
    const uint w = first + (i * WORKGROUP_SIZE + gl_LocalInvocationID.x) * 8u;
    if (w < pc.n * KEY_WORDS) words[i] = WordArray(pc.keys_in).words[w];
  }
}

// Consumes the words read ahead where they can no longer delay anything (a store no run makes:
// n = 1 is a single tile, which reads nothing ahead).
void read_ahead_done(uint words[READ_AHEAD_LOADS]) {
  uint folded = 0u;
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) folded ^= words[i];
  if (READ_AHEAD != 0u && pc.n == 1u && folded == 1u) WordArray(pc.control).words[2] = folded;
}

// Writes the staged records: the tile's tile_kept kept ones after the count_before_tile kept
// before it, and (partition) its rejected ones from the end of the output backwards.
// Invocation v writes the record whose output position is v (mod STORE_ALIGN) past an aligned
// start, so that each subgroup's stores fill whole aligned stretches of the output: the kept
// records take slots [kept_shift, kept_end) of a virtual range, the rejected ones start again
// at an aligned slot after them. That costs at most one more pass of the loop, and is faster
// than stores from slot 0 (doc/tuning.md, "Look-back family: aligned output stretches").
const uint STORE_ALIGN = 32u;
void store_staged(bool as_keys, uint tile, uint count_before_tile, uint tile_kept) {
  const uint tile_first = tile * TILE;
  const uint rejected = MODE == GS_COMPACT_PARTITION ? min(TILE, pc.n - tile_first) - tile_kept : 0u;
  const uint rejected_before_tile = tile_first - count_before_tile;
  // the output position of the tile's first rejected record (its records keep their order there)
  const uint rejected_first_at = pc.n - rejected_before_tile - rejected;
  const uint kept_shift = count_before_tile % STORE_ALIGN, kept_end = kept_shift + tile_kept;
  const uint rejected_start = (kept_end + STORE_ALIGN - 1u) / STORE_ALIGN * STORE_ALIGN +
                              rejected_first_at % STORE_ALIGN;
  const uint end = rejected == 0u ? kept_end : rejected_start + rejected;
  for (uint v = gl_LocalInvocationID.x; v < end; v += WORKGROUP_SIZE) {
    uint s, at;
    if (v < kept_end) {
      if (v < kept_shift) continue;
      s = v - kept_shift, at = count_before_tile + s;
    } else {
      if (v < rejected_start) continue;
      s = TILE - rejected + (v - rejected_start), at = rejected_first_at + (v - rejected_start);
    }
    if (as_keys) {
#if KEY_BITS == 64
      KeysOut(pc.keys_out).keys[at] = packUint2x32(uvec2(s_staged[s], s_staged[TILE + s]));
#else
      KeysOut(pc.keys_out).keys[at] = s_staged[s];
#endif
    } else {
      const uint g = tile_first + s_staged[s];
      if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[at] = key_at(g);
      if ((pc.flags & GS_COMPACT_INDICES) != 0u) write_index(at, g);
    }
  }
}
#endif

// The keys kept in the segment before this lane's chunk of each row (kept_before_row[r]: all
// of rows 0 to r - 1, then row r's lanes before this one), from the flags; returns the
// segment's count. A row of a subgroup keeps at most SUBGROUP_SIZE x VEC keys, so the rows'
// counts travel packed in ROW_COUNT_BITS fields, and one subgroup scan serves ROWS_PER_WORD
// rows, faster than a scan and a sum per row
// (doc/tuning.md, "Look-back family: rows' counts ranked packed").
const uint ROW_COUNT_BITS = VEC * SUBGROUP_SIZE < 256u ? 8u : 16u;
const uint ROWS_PER_WORD = 32u / ROW_COUNT_BITS;
const uint ROW_COUNT_MASK = 0xFFFFFFFFu >> (32u - ROW_COUNT_BITS);
uint rank_rows(uint flags, out uint kept_before_row[ROWS]) {
  uint segment_kept = 0u;
  [[unroll]] for (uint word_first = 0u; word_first < ROWS; word_first += ROWS_PER_WORD) {
    uint counts = 0u;
    [[unroll]] for (uint r = word_first; r < ROWS && r < word_first + ROWS_PER_WORD; r++)
      counts |= bitCount((flags >> (r * VEC)) & VEC_MASK) << ((r - word_first) * ROW_COUNT_BITS);
    const uint before = subgroupExclusiveAdd(counts);
    // Rle, every mode whose rows' packed counts take two words or more, and every mode with an
    // early walk take the total from the last lane's inclusive sum: subgroupAdd there counted
    // wrong on the H200 (lavapipe passed; the cause was not found). The others keep subgroupAdd
    // in one word, where the shuffle made partition slower
    // (doc/tuning.md, "Look-back family: a packed word's total").
    uint total;
#ifndef COUNT_RUNS
    if (EARLY_WALK == 0u && ROWS <= ROWS_PER_WORD) total = subgroupAdd(counts);
    else
#endif
      total = subgroupShuffle(before + counts, SUBGROUP_SIZE - 1u);
    [[unroll]] for (uint r = word_first; r < ROWS && r < word_first + ROWS_PER_WORD; r++) {
      const uint shift = (r - word_first) * ROW_COUNT_BITS;
      kept_before_row[r] = segment_kept + ((before >> shift) & ROW_COUNT_MASK);
      segment_kept += (total >> shift) & ROW_COUNT_MASK;
    }
  }
  return segment_kept;
}

// The keys the subgroups before this one kept in the sub-tile (segment_kept: this subgroup's
// count); the caller passes a barrier before the next call. Each invocation adds up the counts
// of the subgroups before its own from shared memory, faster than a workgroup scan of the
// counts (three barriers, two subgroup scans and a shuffle)
// (doc/tuning.md, "Look-back family: segments' counts from shared memory").
shared uint s_segment_kept[NUM_SUBGROUPS];
uint kept_before_segment_of(uint segment_kept) {
  if (gl_SubgroupInvocationID == 0u) s_segment_kept[gl_SubgroupID] = segment_kept;
  barrier();
  uint before = 0u;
  for (uint s = 0u; s < gl_SubgroupID; s++) before += s_segment_kept[s];
  return before;
}

// With an early walk (unique_tile_early_walk, runs_tile_early_walk): the data segments' counts
// to the counts kept in the tile before each, once, by the last data subgroup to arrive, where
// every invocation had added up its predecessors' counts itself (and reduce-by-key's and rle's
// summaries, segment_summaries_to_prefixes), the faster for rle and reduce-by-key
// (doc/tuning.md, "Look-back family: segment prefixes by the last to arrive").
void segment_counts_to_prefixes() {
  uint kept = 0u;
  for (uint s = 1u; s < NUM_SUBGROUPS; s++) {
    const uint count = s_segment_kept[s];
    s_segment_kept[s] = kept;
    kept += count;
  }
}

// The VEC keys from `first` (a row's, in 16-byte loads where aligned; 0 past n).
void load_row(uint first, out key_t row[VEC]) {
  if ((pc.flags & GS_COMPACT_ALIGNED) != 0u && first + VEC <= pc.n) {
    [[unroll]] for (uint c = 0u; c < CHUNK_LOADS; c++) {
      const key_vector_t v = KeyVectors(pc.keys_in).vectors[first / LOAD_VEC + c];
      [[unroll]] for (uint k = 0u; k < LOAD_VEC; k++) row[c * LOAD_VEC + k] = v[k];
    }
  } else {
    [[unroll]] for (uint k = 0u; k < VEC; k++) row[k] = first + k < pc.n ? key_at(first + k) : key_t(0);
  }
}

// 1. Loads the segment from segment_first (key i = r * VEC + k of this lane at
// row_first(segment_first, r) + k) and flags its keys (bit i: key i is kept); returns the
// segment's kept count, and the keys kept before each row of this lane in the segment.
// Each row tests its own bounds: one test for the whole segment (as the scan's) made
// reduce-by-key's results wrong on an H100 (doc/tuning.md, "Look-back family: bounds tests").
uint flag_segment(uint segment_first, out key_t keys[ITEMS], out uint flags, out uint kept_before_row[ROWS]) {
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    key_t row[VEC];
    load_row(row_first(segment_first, r), row);
    [[unroll]] for (uint k = 0u; k < VEC; k++) keys[r * VEC + k] = row[k];
  }
  const uint lane = gl_SubgroupInvocationID;
  flags = 0u;
  if (MODE == GS_COMPACT_SELECT || MODE == GS_COMPACT_PARTITION) {
    flags = satisfied_flags(keys);
  } else { // a run starts where a key differs from the one before it
    key_t before_row = key_t(0); // the key before this row's first, for lane 0
    const bool segment_opens_run = segment_first == 0u && (pc.flags & GS_COMPACT_PREVIOUS) == 0u;
    if (segment_first == 0u) before_row = constant_of(pc.prev_lo, pc.prev_hi);
    else if (segment_first <= pc.n) before_row = key_at(segment_first - 1u);
    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
      const key_t lane_before = shuffle_up_key(keys[r * VEC + VEC - 1u]);
      const key_t previous = lane == 0u ? before_row : lane_before;
      [[unroll]] for (uint k = 0u; k < VEC; k++) {
        const uint i = r * VEC + k;
        const bool opens = k == 0u ? (r == 0u && lane == 0u && segment_opens_run) || keys[i] != previous
                                   : keys[i] != keys[i - 1u];
        if (opens) flags |= 1u << i;
      }
      before_row = shuffle_key(keys[r * VEC + VEC - 1u], SUBGROUP_SIZE - 1u);
    }
  }
  [[unroll]] for (uint r = 0u; r < ROWS; r++) { // keys past n are never kept
    const uint first = row_first(segment_first, r);
    [[unroll]] for (uint k = 0u; k < VEC; k++)
      if (first + k >= pc.n) flags &= ~(1u << (r * VEC + k));
  }
  return rank_rows(flags, kept_before_row);
}

#ifdef REDUCE_BY_KEY
#ifdef COUNT_RUNS
// Rle: per row, the last head (position + 1; 0: none yet) in the segment before this lane's
// chunk; returns the segment's last head (0: none).
uint last_heads(uint segment_first, uint flags, out uint heads_before_row[ROWS]) {
  uint segment_last_head = 0u;
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    const uint first = row_first(segment_first, r);
    uint lane_last_head = 0u;
    [[unroll]] for (uint k = 0u; k < VEC; k++)
      if ((flags & (1u << (r * VEC + k))) != 0u) lane_last_head = first + k + 1u;
    // Head positions grow with the lane, so the last head before this lane's chunk is the
    // one of the nearest lane below with a head: a row takes one ballot and two shuffles, where
    // a max-scan took seven. (With subgroupExclusiveMax and subgroupMax here an H100 found about
    // half the runs' heads.) (doc/tuning.md, "Look-back family: rle's last heads by ballot")
    const uvec4 heads_below = subgroupBallot(lane_last_head != 0u) & gl_SubgroupLtMask;
    const bool head_below = subgroupBallotBitCount(heads_below) != 0u;
    const uint below_lane = subgroupShuffle(lane_last_head, last_lane_or_0(heads_below));
    heads_before_row[r] = head_below ? below_lane : segment_last_head;
    segment_last_head = subgroupShuffle(max(heads_before_row[r], lane_last_head), SUBGROUP_SIZE - 1u);
  }
  return segment_last_head;
}
#endif

#ifndef COUNT_RUNS
// A segment's values as its keys lie: values[r] are those of this lane's chunk in row r.
void load_segment_values(uint segment_first, out rep_t values[ROWS][VEC]) {
  [[unroll]] for (uint r = 0u; r < ROWS; r++) load_value_row(row_first(segment_first, r), values[r]);
}

// Reduce-by-key: values along the runs. Per row, (head_before_row, value_before_row):
// everything in the segment before this lane's chunk, as a segmented scan's (head, value) pair
// (the chunk's own values wait in `values` until its runs are written); and the segment's.
void segment_values(uint flags, rep_t values[ROWS][VEC], out bool head_before_row[ROWS], out rep_t value_before_row[ROWS],
                    out bool segment_head, out rep_t segment_value) {
  const uint lane = gl_SubgroupInvocationID;
  segment_head = false;
  segment_value = rep_identity();
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    bool head_in = false;
    rep_t value_in = rep_identity();
    [[unroll]] for (uint k = 0u; k < VEC; k++)
      segment_combine(head_in, value_in, (flags & (1u << (r * VEC + k))) != 0u, values[r][k]);
    // An inclusive segmented scan over the lanes. The heads come from one ballot: lane l
    // combines only from the last lane at or below it whose chunk holds a head (run_lane), so
    // each step shuffles the value alone, where it shuffled each step's head as well; the
    // same combinations in the same order, faster
    // (doc/tuning.md, "Look-back family: reduce-by-key's scan across lanes").
    const uvec4 heads = subgroupBallot(head_in);
    const uvec4 heads_upto = heads & gl_SubgroupLeMask;
    const uint run_lane = last_lane_or_0(heads_upto);
    for (uint d = 1u; d < SUBGROUP_SIZE; d <<= 1) {
      const rep_t value_up = subgroupShuffleUp(value_in, d);
      if (lane >= run_lane + d) value_in = combine(value_up, value_in);
    }
    rep_t v = subgroupShuffleUp(value_in, 1u);
    if (lane == 0u) v = rep_identity();
    head_before_row[r] = segment_head, value_before_row[r] = segment_value;
    segment_combine(head_before_row[r], value_before_row[r], subgroupBallotBitCount(heads & gl_SubgroupLtMask) != 0u, v);
    segment_combine(segment_head, segment_value, subgroupBallotBitCount(heads) != 0u,
                    subgroupShuffle(value_in, SUBGROUP_SIZE - 1u));
  }
}
#endif

// The tile's value descriptor's value (its values from its last head on, or all of them),
// from its segments' summaries from first_segment on (1 with an early walk), which become the
// summaries of the segments before each (rle: the last head's position + 1, 0 where none).
rep_t segment_summaries_to_prefixes(uint tile, uint first_segment, out bool has_head) {
#ifdef COUNT_RUNS
  uint last = 0u;
  for (uint s = first_segment; s < NUM_SUBGROUPS; s++) {
    const uint segment_last = s_segment_last_head[s];
    s_segment_last_head[s] = last;
    last = max(last, segment_last);
  }
  const uint tile_first = tile * TILE, tile_end = min(pc.n, tile_first + TILE);
  has_head = last != 0u;
  return rep_t(has_head ? tile_end - (last - 1u) : tile_end - tile_first);
#else
  bool head = false;
  rep_t value = rep_identity();
  for (uint s = first_segment; s < NUM_SUBGROUPS; s++) {
    const bool segment_head = s_segment_head[s];
    const rep_t segment_value = s_segment_value[s];
    s_segment_head[s] = head, s_segment_value[s] = value;
    segment_combine(head, value, segment_head, segment_value);
  }
  has_head = head;
  return value;
#endif
}

// The keys of a row's chunk (its flags: row_flags) that end a run: those before a head, the
// last one where the key after the chunk opens a run (the next lane's first flag, lane 0's of
// the next row, or the next segment's first key), and the last key of all; none past n.
uint run_ends(uint r, uint first, uint row_flags, uint next_lane_flags, uint lane0_flags, bool next_segment_opens) {
  bool next_opens;
  if (gl_SubgroupInvocationID + 1u < SUBGROUP_SIZE) next_opens = (next_lane_flags & (1u << (r * VEC))) != 0u;
  else if (r + 1u < ROWS) next_opens = (lane0_flags & (1u << ((r + 1u) * VEC))) != 0u;
  else next_opens = next_segment_opens;
  uint ends = (row_flags >> 1) | (next_opens ? 1u << (VEC - 1u) : 0u);
  if (first + VEC >= pc.n) {
    const uint valid = pc.n > first ? pc.n - first : 0u; // (at most VEC)
    ends = valid == 0u ? 0u : (ends & ((2u << (valid - 1u)) - 1u)) | (1u << (valid - 1u));
  }
  return ends;
}

// The keys of a row's chunk from `first` that open runs (`heads`), each read again from the
// input, in cache, to output indices at, at + 1, ... (the keys need not wait in registers
// through the look-back), with their positions where asked.
void write_heads(uint first, uint heads, uint at) {
  for (; heads != 0u; heads &= heads - 1u, at++) {
    const uint g = first + findLSB(heads);
    if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[at] = key_at(g);
    if ((pc.flags & GS_COMPACT_INDICES) != 0u) Indices(pc.indices_out).indices[at] = g;
  }
}

// Step 4 of a tile of runs: every run of a segment to its place, its head's key (and index) at
// output index kept_before + kept_before_row[r] on, and its value (rle: its length) where it
// ends (run_ends). What came before each lane's chunk: heads_before_row (rle; else the row's
// and the segment's (head, value) pairs), and open_run, the run still open at the tile's start.
// Heads are written a pass per head (write_heads), and rle's lengths a pass per run end, not a
// pass per key: in CUB's inputs one key in 16 opens a run. Reduce-by-key keeps a pass per key
// for its values (it needs each key's), held in registers (`values`) through the look-back,
// taking the run ends as a mask (doc/tuning.md, "Look-back family: writing runs").
#ifdef COUNT_RUNS
void write_runs(uint tile, uint segment_first, uint flags, uint kept_before, uint kept_before_row[ROWS],
                uint heads_before_row[ROWS], uint heads_before_segment, rep_t open_run, uint next_lane_flags,
                uint lane0_flags, bool next_segment_opens) {
#else
void write_runs(uint tile, uint segment_first, uint flags, uint kept_before, uint kept_before_row[ROWS],
                bool head_before_row[ROWS], rep_t value_before_row[ROWS], bool head_before_segment,
                rep_t value_before_segment, rep_t open_run, uint next_lane_flags, uint lane0_flags,
                bool next_segment_opens, rep_t values[ROWS][VEC]) {
#endif
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    uint at = kept_before + kept_before_row[r]; // output index of this lane's next head
    const uint first = row_first(segment_first, r);
    const uint row_ends = run_ends(r, first, (flags >> (r * VEC)) & VEC_MASK, next_lane_flags, lane0_flags, next_segment_opens);
#ifdef COUNT_RUNS
    const uint row_flags = (flags >> (r * VEC)) & VEC_MASK;
    // Each run ending in the chunk, its length to the output index of its head (the chunk's
    // j-th head at at + j - 1, one before the chunk's at - 1): a pass per end, not per key.
    const uint last_head = heads_before_row[r] != 0u ? heads_before_row[r] : heads_before_segment;
    for (uint ends = row_ends; ends != 0u; ends &= ends - 1u) {
      const uint k = findLSB(ends), g = first + k, heads = row_flags & ((2u << k) - 1u);
      rep_t length; // from its head, or from before the tile
      if (heads != 0u) length = rep_t(k + 1u - uint(findMSB(heads)));
      else if (last_head != 0u) length = rep_t(g + 2u - last_head);
      else length = combine(open_run, rep_t(g + 1u - tile * TILE));
      AccArray(pc.values_out).values[at + bitCount(heads) - 1u] = bits_from_rep(length);
    }
    write_heads(first, row_flags, at);
#else
    rep_t chunk_value = rep_identity(); // the values of key g's run since the chunk's first key (or its head)
    write_heads(first, (flags >> (r * VEC)) & VEC_MASK, at);
    [[unroll]] for (uint k = 0u; k < VEC; k++) { // (keys past n: neither flags nor ends)
      const uint i = r * VEC + k;
      if ((flags & (1u << i)) != 0u) at++;
      chunk_value = (flags & (1u << i)) != 0u ? values[r][k] : combine(chunk_value, values[r][k]);
      if ((row_ends & (1u << k)) != 0u) { // the run's value, with what came before this chunk if it started there
        rep_t value = chunk_value;
        if ((flags & (((2u << k) - 1u) << (r * VEC))) == 0u) {
          value = combine(value_before_row[r], value);
          if (!head_before_row[r]) {
            value = combine(value_before_segment, value);
            if (!head_before_segment) value = combine(open_run, value);
          }
        }
        AccArray(pc.values_out).values[at - 1u] = bits_from_rep(value);
      }
    }
#endif
  }
}

// Reduce-by-key and rle: a tile of one sub-tile. Both read their heads' keys again from the
// input, now in cache, as they write their runs after the look-back (write_runs); reduce-by-key
// holds its values in registers through the look-back, in blocks (VEC). Every key and running
// value held across the look-back took far more registers, and time
// (doc/tuning.md, "Look-back family: what a tile of runs holds across the look-back").
void runs_tile(uint tile) {
  const uint lid = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;
  // the invocation that posts the tile's value descriptors and walks for the value of the run open
  // at its start: with SUBGROUP_WALK lane 0 of subgroup 1, beside the count's walk (step 2)
  const uint value_walker = SUBGROUP_WALK != 0u && NUM_SUBGROUPS > 1u ? SUBGROUP_SIZE : 0u;
  const uint segment_first = tile * TILE + gl_SubgroupID * SEGMENT;
  key_t keys[ITEMS];
  uint flags, kept_before_row[ROWS];
  const uint segment_kept = flag_segment(segment_first, keys, flags, kept_before_row);
  // the keys kept in the tile before this segment
  const uint kept_before_segment = kept_before_segment_of(segment_kept);
  if (posts_counts()) {
    s_tile_count = kept_before_segment + segment_kept;
    post_tile_count(tile, kept_before_segment + segment_kept);
  }
  barrier();

#ifdef COUNT_RUNS
  // Run lengths: a run ending at key g has length g + 1 - its head's position, and as heads'
  // positions only grow, its head is the greatest head position <= g. Per row, the last head
  // (position + 1; 0: none yet) in the segment before this lane's chunk (last_heads); runs
  // open at the tile's start are counted by the value look-back as for any
  // reduce-by-key (a tile's value: its keys from its last head on, or all of them).
  uint heads_before_row[ROWS];
  const uint segment_last_head = last_heads(segment_first, flags, heads_before_row);
  if (lane == 0u) s_segment_last_head[gl_SubgroupID] = segment_last_head;
  barrier();
  if (lid == value_walker) { // the segments' last heads to exclusive maxima, and the tile's summary
    bool has_head;
    const rep_t v = segment_summaries_to_prefixes(tile, 0u, has_head);
    scan_post(tile, has_head ? SCAN_INCLUSIVE : SCAN_AGGREGATE, v);
    s_value_before = v; // (the tile's summary, until the look-back below)
  }
  barrier();
  const uint heads_before_segment = s_segment_last_head[gl_SubgroupID];
#else
  bool head_before_row[ROWS], segment_head;
  rep_t value_before_row[ROWS], segment_value, values[ROWS][VEC];
  load_segment_values(segment_first, values);
  segment_values(flags, values, head_before_row, value_before_row, segment_head, segment_value);
  if (lane == 0u) s_segment_head[gl_SubgroupID] = segment_head, s_segment_value[gl_SubgroupID] = segment_value;
  barrier();
  if (lid == value_walker) { // the segments' summaries to exclusive prefixes, and the tile's summary
    bool has_head;
    const rep_t v = segment_summaries_to_prefixes(tile, 0u, has_head);
    // post now: a tile with a head knows its inclusive value (tile 0 always has one)
    scan_post(tile, has_head ? SCAN_INCLUSIVE : SCAN_AGGREGATE, v);
    s_value_before = v; // (the tile's summary, until the look-back below)
  }
  barrier();
  const bool head_before_segment = s_segment_head[gl_SubgroupID];
  const rep_t value_before_segment = s_segment_value[gl_SubgroupID];
#endif
  const bool tile_has_head = s_tile_count != 0u;
  const bool first_is_head = tile * TILE < pc.n && starts_run(tile * TILE, key_at(tile * TILE));
  // whether the key after each lane's chunk opens a run: the next lane's first flag, lane 0's
  // of the next row, or (the segment's last key) the next segment's first key
  const uint next_lane_flags = subgroupShuffleDown(flags, 1u), lane0_flags = subgroupShuffle(flags, 0u);
  const uint segment_end = segment_first + SEGMENT;
  const bool next_segment_opens = segment_end >= pc.n || starts_run(segment_end, key_at(segment_end));

  // 2. The count kept before this tile (walk_for_count), and 3. the value of the run open at the
  // tile's start, from the tiles before, by one invocation: with SUBGROUP_WALK lane 0 of subgroup
  // 1, beside the count's walk, else invocation 0 after it. Rle reads the value descriptor of the
  // tile before as the count's walk starts, so that its load waits alongside the walk's;
  // reduce-by-key, the slower so, reads it after the walk
  // (doc/tuning.md, "Look-back family: the value walk beside the count's").
#ifdef COUNT_RUNS
  rep_t value_of_tile_before = rep_identity();
  uint status_of_tile_before = SCAN_EMPTY;
  if (lid == value_walker && !first_is_head && tile > 0u)
    status_of_tile_before = scan_poll(tile - 1u, value_of_tile_before);
#endif
  walk_for_count(tile, s_tile_count);
  if (lid == value_walker && !first_is_head) {
#ifdef COUNT_RUNS
    const rep_t prefix = status_of_tile_before == SCAN_INCLUSIVE ? value_of_tile_before : scan_look_back_serial(tile);
#else
    const rep_t prefix = scan_look_back_serial(tile);
#endif
    if (!tile_has_head) scan_post(tile, SCAN_INCLUSIVE, combine(prefix, s_value_before));
    s_value_before = prefix;
  }
  barrier();
  post_inclusive_count(tile, s_tile_count);
  if (tile + 1u == pc.tiles && lid == 0u) WordArray(pc.control).words[1] = s_count_before + s_tile_count;

  // 4. Every run to its place.
#ifdef COUNT_RUNS
  write_runs(tile, segment_first, flags, s_count_before + kept_before_segment, kept_before_row, heads_before_row,
             heads_before_segment, first_is_head ? rep_identity() : s_value_before, next_lane_flags, lane0_flags,
             next_segment_opens);
#else
  write_runs(tile, segment_first, flags, s_count_before + kept_before_segment, kept_before_row, head_before_row,
             value_before_row, head_before_segment, value_before_segment,
             first_is_head ? rep_identity() : s_value_before, next_lane_flags, lane0_flags, next_segment_opens, values);
#endif
}

// Reduce-by-key and rle with an early walk (as unique_tile_early_walk): subgroup 0 holds no
// keys; it walks for the count before the tile and then, where the tile's first key continues
// a run, for the value of that run before the tile (rle: its length), while the others load,
// flag and rank their keys and values. The last of them to arrive posts the tile's count and
// its value (segment_summaries_to_prefixes), the segments' summaries read after a fence (each
// written before its segment's arrival). A tile with no head posts its value as an aggregate
// first and as inclusive after its look-back; either order leaves a descriptor that reads right
// (split descriptors keep the two values apart).
shared bool s_first_is_head;
shared rep_t s_tile_value; // (its value descriptor's value)

void runs_tile_early_walk(uint tile) {
  const uint lid = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;
  const uint tile_first = tile * TILE;
  const uint segment_first = tile_first + (gl_SubgroupID - 1u) * SEGMENT;
  key_t keys[ITEMS];
  uint flags = 0u, kept_before_row[ROWS], next_lane_flags = 0u, lane0_flags = 0u;
  bool next_segment_opens = false;
#ifdef COUNT_RUNS
  uint heads_before_row[ROWS];
#else
  bool head_before_row[ROWS];
  rep_t value_before_row[ROWS], values[ROWS][VEC];
#endif
  if (gl_SubgroupID == 0u) {
    const bool first_is_head = starts_run(tile_first, key_at(tile_first)); // (tile_first < n)
    const uint prefix = tile == 0u ? 0u : count_before_by_subgroup(tile);
    if (lane == 0u) {
      s_count_before = prefix;
      s_first_is_head = first_is_head;
      s_value_before = first_is_head ? rep_identity() : scan_look_back_serial(tile); // (tile 0 opens a run: no earlier chunk)
    }
  } else {
#ifndef COUNT_RUNS
    // The values are loaded with the keys, in one round of loads, and held until their runs are
    // written (doc/tuning.md, "Look-back family: reduce-by-key's values loaded with the keys").
    load_segment_values(segment_first, values);
#endif
    const uint segment_kept = flag_segment(segment_first, keys, flags, kept_before_row);
#ifdef COUNT_RUNS
    const uint segment_last_head = last_heads(segment_first, flags, heads_before_row);
#else
    bool segment_head;
    rep_t segment_value;
    segment_values(flags, values, head_before_row, value_before_row, segment_head, segment_value);
#endif
    next_lane_flags = subgroupShuffleDown(flags, 1u), lane0_flags = subgroupShuffle(flags, 0u);
    const uint segment_end = segment_first + SEGMENT;
    next_segment_opens = segment_end >= pc.n || starts_run(segment_end, key_at(segment_end));
    if (lane == 0u) {
      s_segment_kept[gl_SubgroupID] = segment_kept;
#ifdef COUNT_RUNS
      s_segment_last_head[gl_SubgroupID] = segment_last_head;
#else
      s_segment_head[gl_SubgroupID] = segment_head, s_segment_value[gl_SubgroupID] = segment_value;
#endif
      memoryBarrierShared();
      const uint arrival = (1u << 16) | segment_kept;
      const uint state = atomicAdd(s_arrivals, arrival) + arrival;
      if ((state >> 16) == DATA_SUBGROUPS) {
        memoryBarrierShared();
        lookback_post_if_empty(tile, (tile == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | (state & 0xFFFFu));
        bool has_head;
        const rep_t value = segment_summaries_to_prefixes(tile, 1u, has_head);
        scan_post(tile, has_head ? SCAN_INCLUSIVE : SCAN_AGGREGATE, value);
        s_tile_value = value;
        segment_counts_to_prefixes();
      }
    }
  }
  barrier();
  const uint tile_count = s_arrivals & 0xFFFFu, count_before_tile = s_count_before;
  const bool first_is_head = s_first_is_head;
  if (lid == 0u) {
    if (tile != 0u) lookback_post(tile, LOOKBACK_INCLUSIVE | (count_before_tile + tile_count));
    if (tile_count == 0u) // (so the tile's first key continues a run, and s_value_before is its value)
      scan_post(tile, SCAN_INCLUSIVE, combine(s_value_before, s_tile_value));
    if (tile + 1u == pc.tiles) WordArray(pc.control).words[1] = count_before_tile + tile_count;
  }
  if (gl_SubgroupID == 0u) return;

  const uint kept_before = count_before_tile + s_segment_kept[gl_SubgroupID];
  const rep_t open_run = first_is_head ? rep_identity() : s_value_before;
#ifdef COUNT_RUNS
  const uint heads_before_segment = s_segment_last_head[gl_SubgroupID];
  write_runs(tile, segment_first, flags, kept_before, kept_before_row, heads_before_row, heads_before_segment,
             open_run, next_lane_flags, lane0_flags, next_segment_opens);
#else
  const bool head_before_segment = s_segment_head[gl_SubgroupID];
  const rep_t value_before_segment = s_segment_value[gl_SubgroupID];
  write_runs(tile, segment_first, flags, kept_before, kept_before_row, head_before_row, value_before_row,
             head_before_segment, value_before_segment, open_run, next_lane_flags, lane0_flags, next_segment_opens, values);
#endif
}
#endif

#ifndef REDUCE_BY_KEY
// Unique's writes: the segment's kept keys (its `flags`), each read again from the input, now in
// cache, to their places from output index kept_before on, a row at a time, a pass per kept key
// (as reduce-by-key's and rle's heads in write_runs)
// (doc/tuning.md, "Look-back family: unique's writes").
void write_kept(uint flags, uint segment_first, uint kept_before) {
  uint kept_before_row[ROWS];
  rank_rows(flags, kept_before_row);
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    const uint row_flags = (flags >> (r * VEC)) & VEC_MASK;
    uint at = kept_before + kept_before_row[r]; // output index of this lane's next kept key
    const uint first = row_first(segment_first, r);
    for (uint kept = row_flags; kept != 0u; kept &= kept - 1u, at++) {
      const uint g = first + findLSB(kept);
      if ((pc.flags & GS_COMPACT_KEYS) != 0u) KeysOut(pc.keys_out).keys[at] = key_at(g);
      if ((pc.flags & GS_COMPACT_INDICES) != 0u) write_index(at, g);
    }
  }
}

// Unique: a tile of one sub-tile of which only the flags stay in registers across the
// look-back; each kept key is read again from the input, now in cache, as it is written, and
// each row's ranks are taken again. (Its tile: src/prim/compact.c.)
// (doc/tuning.md, "Look-back family: unique's tile")
void unique_tile(uint tile) {
  const uint lid = gl_LocalInvocationID.x;
  const uint segment_first = tile * TILE + gl_SubgroupID * SEGMENT;
  // 1. Flags and the tile's count.
  uint flags, kept_before_segment;
  {
    key_t keys[ITEMS];
    uint kept_before_row[ROWS];
    const uint segment_kept = flag_segment(segment_first, keys, flags, kept_before_row);
    kept_before_segment = kept_before_segment_of(segment_kept);
    if (posts_counts()) {
      s_tile_count = kept_before_segment + segment_kept;
      post_tile_count(tile, kept_before_segment + segment_kept);
    }
    barrier();
  }

  // 2. The count kept before this tile (walk_for_count).
  walk_for_count(tile, s_tile_count);
  barrier();
  post_inclusive_count(tile, s_tile_count);
  if (tile + 1u == pc.tiles && lid == 0u) WordArray(pc.control).words[1] = s_count_before + s_tile_count;

  // 3. Every kept key, read again, to its place.
  write_kept(flags, segment_first, s_count_before + kept_before_segment);
}

// Unique with an early walk: subgroup 0 holds no keys and walks from the start, while the
// others load and flag theirs; the last of them to add its count to s_arrivals (count in the
// low 16 bits, arrivals above) posts the tile's count. So the walk waits alongside the tile's
// own loads instead of after them. Both posts are safe in either order: the count only into
// an empty descriptor, the inclusive one over anything.
void unique_tile_early_walk(uint tile) {
  const uint lid = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;
  const uint segment_first = tile * TILE + (gl_SubgroupID - 1u) * SEGMENT;
  uint flags = 0u;
  if (gl_SubgroupID == 0u) {
    const uint prefix = tile == 0u ? 0u : count_before_by_subgroup(tile);
    if (lane == 0u) s_count_before = prefix;
  } else {
    key_t keys[ITEMS];
    uint kept_before_row[ROWS];
    const uint segment_kept = flag_segment(segment_first, keys, flags, kept_before_row);
    if (lane == 0u) {
      s_segment_kept[gl_SubgroupID] = segment_kept;
      memoryBarrierShared(); // (read by the last to arrive)
      const uint arrival = (1u << 16) | segment_kept;
      const uint state = atomicAdd(s_arrivals, arrival) + arrival;
      if ((state >> 16) == DATA_SUBGROUPS) {
        lookback_post_if_empty(tile, (tile == 0u ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | (state & 0xFFFFu));
        memoryBarrierShared();
        segment_counts_to_prefixes();
      }
    }
  }
  barrier();
  const uint tile_count = s_arrivals & 0xFFFFu, count_before_tile = s_count_before;
  if (lid == 0u && tile != 0u) lookback_post(tile, LOOKBACK_INCLUSIVE | (count_before_tile + tile_count));
  if (lid == 0u && tile + 1u == pc.tiles) WordArray(pc.control).words[1] = count_before_tile + tile_count;
  if (gl_SubgroupID == 0u) return;

  // Every kept key, read again, to its place.
  write_kept(flags, segment_first, count_before_tile + s_segment_kept[gl_SubgroupID]);
}

// Select and partition: SUBTILES sub-tiles staged in shared memory, one look-back, then the
// staged records written out.
void staged_tile(uint tile) {
  const uint lid = gl_LocalInvocationID.x;
  // 1. The tile's sub-tiles in turn, each flagged, ranked and staged in shared memory.
  const bool as_keys = (pc.flags & GS_COMPACT_KEYS) != 0u && (pc.flags & GS_COMPACT_INDICES) == 0u;
  uint tile_kept = 0u;
  for (uint part = 0u; part < SUBTILES; part++) {
    const uint segment_first = tile * TILE + part * SUBTILE + gl_SubgroupID * SEGMENT;
    key_t keys[ITEMS];
    uint flags, kept_before_row[ROWS];
    const uint segment_kept = flag_segment(segment_first, keys, flags, kept_before_row);
    // the keys kept in the sub-tile before this segment
    const uint kept_before_segment = kept_before_segment_of(segment_kept);
    if (posts_counts()) {
      s_tile_count = kept_before_segment + segment_kept;
      if (part + 1u == SUBTILES) post_tile_count(tile, tile_kept + kept_before_segment + segment_kept); // (before staging)
    }
    stage_records(as_keys, keys, flags, segment_first, tile, tile_kept + kept_before_segment, kept_before_row);
    barrier();
    tile_kept += s_tile_count; // (rewritten only after the next sub-tile's kept_before_segment_of's barrier)
  }

  // 2. The count kept before this tile (walk_for_count), with a later tile's keys read into
  // cache meanwhile.
  uint ahead[READ_AHEAD_LOADS];
  read_ahead(tile, ahead);
  walk_for_count(tile, tile_kept);
  barrier();
  const uint count_before_tile = s_count_before;
  post_inclusive_count(tile, tile_kept);
  if (tile + 1u == pc.tiles && lid == 0u) WordArray(pc.control).words[1] = count_before_tile + tile_kept;

  // 3. The staged records to their places.
  store_staged(as_keys, tile, count_before_tile, tile_kept);
  read_ahead_done(ahead);
}
#endif

// What the next pass on this state needs zero, zeroed as this one goes (src/prim/compact.c's
// gs_compact_rest): this tile's descriptors in the other half of the state, which this pass
// never reads, and, by the workgroup that drew the dispatch's last ticket (every other has
// drawn its own), the ticket counter.
void leave_at_rest(uint tile) {
  const uint lid = gl_LocalInvocationID.x;
  if (lid == 0u && tile + 1u == gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z)
    atomicStore(WordArray(pc.control).words[0], 0u, gl_ScopeQueueFamily, 0, 0);
  if (tile >= pc.tiles) return;
  WordArray other = WordArray(pc.next_lookback);
  if (lid == 0u) other.words[tile] = 0u;
#ifdef REDUCE_BY_KEY
#ifdef SPLIT_DESCRIPTORS
  const uint value_words = SPLIT_WORDS;
#else
  const uint value_words = 2u; // (one 64-bit descriptor)
#endif
  // (the value descriptors sit as far past the counts in either half: the low words of two
  // addresses in one block differ by as much, modulo 2^32, whatever carries into the high words)
  const uint values_at = (pc.tile_data.x - pc.lookback.x) / 4u;
  if (lid < value_words) other.words[values_at + tile * value_words + lid] = 0u;
#endif
}

// Tiles go by ticket, so a tile's predecessors have all started, on any device (the workgroup's
// index, which leans on the device starting workgroups in order, made reduce-by-key 8% slower on
// an H200) (doc/tuning.md, "Look-back family: tiles by ticket").
void main() {
  if (gl_LocalInvocationID.x == 0u) {
    s_ticket = atomicAdd(WordArray(pc.control).words[0], 1u);
    if (EARLY_WALK != 0u) s_arrivals = 0u;
  }
  barrier();
  const uint tile = s_ticket;
  if (pc.next_lookback != uvec2(0u)) leave_at_rest(tile);
  if (tile >= pc.tiles) return; // surplus workgroup of a folded dispatch
#ifdef REDUCE_BY_KEY
  if (EARLY_WALK != 0u) runs_tile_early_walk(tile);
  else runs_tile(tile);
#else
  if (STAGED_STORES) staged_tile(tile);
  else if (EARLY_WALK != 0u) unique_tile_early_walk(tile);
  else unique_tile(tile);
#endif
}
