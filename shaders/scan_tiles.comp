#version 460
#extension GL_GOOGLE_include_directive : require
// Scan of tiles of WORKGROUP_SIZE * ROWS * VEC elements, in one of three modes (MODE, a
// compile-time define):
//   0 look-back: single-pass chained scan with decoupled look-back (Merrill & Garland 2016):
//     a tile takes its index from an atomic ticket, publishes its aggregate, learns the
//     combination of all earlier tiles from their descriptors (lib/scan_lookback.glsl), and
//     writes its elements' scans; with packed descriptors the state is left ready for the
//     next scan (draw_ticket), so only its first use needs clearing;
//   1 reduce: writes each tile's aggregate (reduce-then-scan, first pass);
//   2 downsweep: scans each tile from the prefix given for it (reduce-then-scan, last pass).
// Within a tile the association order is fixed, so reduce-then-scan is deterministic.
//
// Layout: subgroup s owns a contiguous segment of the tile. In row r, lane l holds the VEC
// consecutive elements (r * SUBGROUP_SIZE + l) * VEC of the segment (one 16-byte load), so
// a row is scanned with one subgroup scan of the lanes' sums. With an early walk (EARLY_WALK,
// look-back only), subgroup 0 holds no elements: it walks the look-back from the tile's start
// while the others load theirs (scan_tile_early_walk), and the tile is a subgroup short.
#if IN_BITS == 64 || ACC_REP == 2 || ACC_REP == 4 || (MODE == 0 && !defined(SPLIT_DESCRIPTORS))
#define NEEDS_INT64
#endif
#include "lib/common.glsl"
#if ACC_REP == 2
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif
#if MODE == 0 && !defined(SPLIT_DESCRIPTORS)
#extension GL_EXT_shader_atomic_int64 : require
#endif
#include "lib/scan_ops.glsl"

layout(constant_id = GS_SPEC_TILE_ROWS) const uint ROWS = 4;
layout(constant_id = GS_SPEC_SCAN_INCLUSIVE) const uint INCLUSIVE = 1;
layout(constant_id = GS_SPEC_EARLY_WALK) const uint EARLY_WALK = 0; // look-back only (scan_tile_early_walk)
layout(constant_id = GS_SPEC_READ_AHEAD) const uint READ_AHEAD = 0;   // tiles; with EARLY_WALK only

const uint VEC = IN_BITS == 64 ? 2u : 4u; // elements per 16-byte load
const uint SEGMENT = ROWS * VEC * SUBGROUP_SIZE;
// subgroups that hold elements: all, or all but the one that walks (EARLY_WALK)
const uint DATA_SUBGROUPS = EARLY_WALK != 0u ? NUM_SUBGROUPS - 1u : NUM_SUBGROUPS;
const uint TILE = DATA_SUBGROUPS * SEGMENT;

#if IN_BITS == 64
#define in_vec_t u64vec2
#else
#define in_vec_t uvec4
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) buffer InputVectors { in_vec_t input_vectors[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer OutputVectors { in_vec_t output_vectors[]; };
#if IN_BITS == 64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer InputScalars { in_t input_scalars[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer InputScalars { in_t input_scalars[]; };
#endif
#if ACC_BITS == 64
layout(buffer_reference, std430, buffer_reference_align = 8) buffer AccArray { acc_bits_t values[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer AccArray { acc_bits_t values[]; };
#endif
#if MODE == 0 && !defined(SPLIT_DESCRIPTORS)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer PackedDescriptors { uint64_t descriptors[]; };
// The look-back's control words (pc.control): with packed descriptors the epoch (this state's
// dispatches so far) in the high half of one 64-bit word and this dispatch's tickets in the
// low, so that one atomic draws both; with split ones the tickets alone, in the first word.
// `last_tickets`: how many the last dispatch drew (for tests).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer ScanControl { uint64_t epoch_and_tickets; uint last_tickets; };
#elif MODE == 0
layout(buffer_reference, std430, buffer_reference_align = 8) buffer ScanControl { uint tickets; uint unused; uint last_tickets; };
#endif

// pc.results receives the scans (16-byte vector stores where elements keep their width);
// pc.tile_data holds the look-back descriptors (MODE 0) or the tile values: aggregates
// written by MODE 1, prefixes read by MODE 2.
layout(push_constant, std430) uniform Push { gs_scan_push pc; };

shared rep_t s_subgroup[NUM_SUBGROUPS]; // subgroup totals, then their exclusive prefixes
shared rep_t s_tile_prefix;
shared uint s_ticket, s_stamp;

// Loads the VEC elements from `first` (a multiple of VEC, first + VEC <= n) in one 16-byte load.
void load_vector(uint first, out rep_t v[4]) {
  const in_vec_t raw = InputVectors(pc.elements).input_vectors[first / VEC];
  [[unroll]] for (uint k = 0u; k < VEC; k++) v[k] = rep_of_input(raw[k]);
}

// Loads row r of this lane (VEC elements), the identity past n.
void load_row(uint first, out rep_t v[4]) {
  if (first + VEC <= pc.n) {
    load_vector(first, v);
  } else {
    [[unroll]] for (uint k = 0u; k < VEC; k++)
      v[k] = first + k < pc.n ? rep_of_input(InputScalars(pc.elements).input_scalars[first + k]) : rep_identity();
  }
}

#if MODE == 0
// The early walker's read-ahead: each step of its walk first reads one element of each of the
// next READ_AHEAD_LOADS x SUBGROUP_SIZE 32-byte sectors of the tile READ_AHEAD tickets on, and
// consumes them once the step's descriptors are in, so that the walk's waits keep the memory
// busy with input that a later tile then finds in cache. The walker holds no elements, so its
// loads fit in registers the data subgroups need anyway; a read-ahead by the whole tile took
// far more (doc/tuning.md, "Scan: early walk and read-ahead").
#define SCAN_LOOK_BACK_READ_AHEAD
const uint READ_AHEAD_LOADS = 16u; // a lane's loads a step
const uint SECTOR_ELEMENTS = 32u / (IN_BITS / 8u);
uint read_ahead_words[READ_AHEAD_LOADS];
uint read_ahead_steps = 0u, read_ahead_folded = 0u;
void look_back_read_ahead(uint tile) {
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) read_ahead_words[i] = 0u;
  const uint first_sector = read_ahead_steps * READ_AHEAD_LOADS * SUBGROUP_SIZE;
  read_ahead_steps++;
  if (READ_AHEAD == 0u || EARLY_WALK == 0u || pc.tiles - tile <= READ_AHEAD || first_sector >= TILE / SECTOR_ELEMENTS)
    return;
  const uint tile_first = (tile + READ_AHEAD) * TILE; // (< n: tiles before the last one are whole)
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) {
    const uint sector = first_sector + i * SUBGROUP_SIZE + gl_SubgroupInvocationID;
    const uint element = tile_first + sector * SECTOR_ELEMENTS;
    if (sector < TILE / SECTOR_ELEMENTS && element < pc.n)
      read_ahead_words[i] = uint(InputScalars(pc.elements).input_scalars[element]);
  }
}
void look_back_read_ahead_done() {
  [[unroll]] for (uint i = 0u; i < READ_AHEAD_LOADS; i++) read_ahead_folded ^= read_ahead_words[i];
}

// Fallback of the look-back: the aggregate of an earlier (full) tile, reduced by subgroup 0
// alone from the tile's input.
rep_t reduce_tile_by_subgroup(uint tile, out bool inclusive) {
  inclusive = false;
  rep_t sum = rep_identity();
  for (uint i = gl_SubgroupInvocationID; i < TILE / VEC; i += SUBGROUP_SIZE) {
    rep_t v[4];
    load_row(tile * TILE + i * VEC, v);
    [[unroll]] for (uint k = 0u; k < VEC; k++) sum = combine(sum, v[k]);
  }
  return subgroup_reduce(sum);
}
#include "lib/scan_lookback.glsl"

// This workgroup's tile (s_ticket) and stamp (s_stamp), from invocation 0. The workgroup that
// draws the dispatch's last ticket knows that every other one has drawn, so it can start the
// next epoch at ticket 0 (packed descriptors: a descriptor of this epoch then reads as empty to
// the next dispatch, cleared or not). So that no descriptor keeps a stamp until its epoch
// comes round again (2^30 dispatches on), it also empties one slot past this dispatch's tiles,
// slot epoch % capacity: any `capacity` dispatches in a row write or empty every slot (any
// 2 x capacity where the epoch passes 2^32).
void draw_ticket() {
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
#ifdef SPLIT_DESCRIPTORS
  const uint ticket = atomicAdd(ScanControl(pc.control).tickets, 1u);
  s_stamp = 0u;
  if (ticket + 1u == groups) ScanControl(pc.control).last_tickets = groups;
#else
  const uint64_t drawn = atomicAdd(ScanControl(pc.control).epoch_and_tickets, uint64_t(1));
  const uint ticket = uint(drawn), epoch = uint(drawn >> 32);
  s_stamp = (epoch & SCAN_STAMP_MASK) << 2;
  if (ticket + 1u == groups) {
    ScanControl(pc.control).last_tickets = groups;
    atomicStore(ScanControl(pc.control).epoch_and_tickets, uint64_t(epoch + 1u) << 32, gl_ScopeQueueFamily, 0, 0);
    const uint slot = epoch % pc.capacity;
    if (slot >= pc.tiles) atomicStore(DESCRIPTORS[slot], uint64_t(0), gl_ScopeQueueFamily, 0, 0);
  }
#endif
  s_ticket = ticket;
}
#endif

// The first element of this lane's vector of row r in the segment from segment_first.
uint row_first(uint segment_first, uint r) { return segment_first + (r * SUBGROUP_SIZE + gl_SubgroupInvocationID) * VEC; }

// Loads this subgroup's segment into v and scans each row across the subgroup: row_before[r]
// is the combination of everything before this lane's vector of row r in the segment (kept,
// not taken again after the look-back from the rows' scans redone, which was slower).
// Returns the segment's total (in every lane).
// Every row's load is issued before any is scanned: loads and subgroup scans interleaved in
// one loop wait for each row in turn (doc/tuning.md, "Scan: loading and scanning a segment").
rep_t load_and_scan_segment(uint segment_first, out rep_t v[ROWS][4], out rep_t row_before[ROWS]) {
  if (segment_first + SEGMENT <= pc.n) {
    [[unroll]] for (uint r = 0u; r < ROWS; r++) load_vector(row_first(segment_first, r), v[r]);
  } else {
    [[unroll]] for (uint r = 0u; r < ROWS; r++) load_row(row_first(segment_first, r), v[r]);
  }
  // Scan each row across the subgroup; `carry` combines the rows before.
  rep_t carry = rep_identity();
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    rep_t lane_total = v[r][0];
    [[unroll]] for (uint k = 1u; k < VEC; k++) lane_total = combine(lane_total, v[r][k]);
    const rep_t inclusive = subgroup_inclusive(lane_total);
    row_before[r] = combine(carry, subgroup_exclusive_from(inclusive));
    carry = combine(carry, subgroupShuffle(inclusive, SUBGROUP_SIZE - 1u));
  }
  return carry;
}

// Writes the segment's scans: each element's is before_segment (everything before the segment),
// then its row's part before its vector, then its place in the vector.
void write_segment(uint segment_first, rep_t before_segment, rep_t v[ROWS][4], rep_t row_before[ROWS]) {
  [[unroll]] for (uint r = 0u; r < ROWS; r++) {
    const uint first = row_first(segment_first, r);
    rep_t running = combine(before_segment, row_before[r]);
    acc_bits_t result[4];
    [[unroll]] for (uint k = 0u; k < VEC; k++) {
      const rep_t inclusive = combine(running, v[r][k]);
      result[k] = bits_from_rep(INCLUSIVE != 0u ? inclusive : running);
      running = inclusive;
    }
#if ACC_BITS == IN_BITS
    if (first + VEC <= pc.n) { // one 16-byte store
#if IN_BITS == 64
      OutputVectors(pc.results).output_vectors[first / VEC] = in_vec_t(result[0], result[1]);
#else
      OutputVectors(pc.results).output_vectors[first / VEC] = in_vec_t(result[0], result[1], result[2], result[3]);
#endif
      continue;
    }
#endif
    [[unroll]] for (uint k = 0u; k < VEC; k++)
      if (first + k < pc.n) AccArray(pc.results).values[first + k] = result[k];
  }
}

#if MODE == 0
// The look-back scan with an early walk: subgroup 0 holds no elements and walks the look-back
// from the tile's start, while the others load and scan theirs, so the walk's polls wait
// alongside the tile's own loads instead of after them (as the look-back family's early walk:
// compact.comp's unique_tile_early_walk). Each data subgroup adds its arrival to s_arrivals
// (low 16 bits) after writing its total; the last to arrive turns the totals into exclusive
// prefixes and posts the tile's descriptor: inclusive where the walk is done (its arrival, bit
// 16, came first), else the aggregate, and then invocation 0 posts the inclusive one after the
// barrier (ordered after it by the barrier's buffer semantics).
const uint WALKED = 1u << 16;
shared uint s_arrivals; // zeroed with the ticket (main)
shared rep_t s_aggregate;
shared bool s_inclusive_posted;

void scan_tile_early_walk(uint tile) {
  const uint lane = gl_SubgroupInvocationID;
  const uint segment_first = tile * TILE + (gl_SubgroupID - 1u) * SEGMENT;
  rep_t v[ROWS][4];
  rep_t row_before[ROWS];
  if (gl_SubgroupID == 0u) {
    const rep_t prefix = tile == 0u ? scan_initial_prefix() : scan_look_back(tile);
    // (a store no scan makes, so that the loads read ahead are not dropped as unused)
    if (READ_AHEAD != 0u && pc.n == 0u && read_ahead_folded == 1u) s_ticket = read_ahead_folded;
    if (lane == 0u) {
      s_tile_prefix = prefix;
      memoryBarrierShared();
      atomicAdd(s_arrivals, WALKED);
    }
  } else {
    const rep_t total = load_and_scan_segment(segment_first, v, row_before);
    if (lane == 0u) {
      s_subgroup[gl_SubgroupID] = total;
      memoryBarrierShared();
      const uint state = atomicAdd(s_arrivals, 1u) + 1u;
      if ((state & (WALKED - 1u)) == DATA_SUBGROUPS) { // the last to arrive
        memoryBarrierShared();
        rep_t running = rep_identity();
        for (uint s = 1u; s < NUM_SUBGROUPS; s++) {
          const rep_t segment_total = s_subgroup[s];
          s_subgroup[s] = running;
          running = combine(running, segment_total);
        }
        s_aggregate = running;
        const bool walked = tile == 0u || (state & WALKED) != 0u;
        if (walked) scan_post(tile, SCAN_INCLUSIVE, combine(tile == 0u ? scan_initial_prefix() : s_tile_prefix, running));
        else scan_post(tile, SCAN_AGGREGATE, running);
        s_inclusive_posted = walked;
        memoryBarrierBuffer(); // (the aggregate before the inclusive posted after the barrier)
      }
    }
  }
  barrier();
  const rep_t prefix = s_tile_prefix;
  if (gl_LocalInvocationID.x == 0u) {
    if (!s_inclusive_posted) scan_post(tile, SCAN_INCLUSIVE, combine(prefix, s_aggregate));
    // the next chunk's prefix: everything up to the end of this one
    if ((pc.flags & GS_SCAN_CARRY_OUT) != 0u && tile + 1u == pc.tiles)
      AccArray(pc.carry_out).values[0] = bits_from_rep(combine(prefix, s_aggregate));
  }
  if (gl_SubgroupID == 0u) return;
  write_segment(segment_first, combine(prefix, s_subgroup[gl_SubgroupID]), v, row_before);
}
#endif

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint lane = gl_SubgroupInvocationID;
#if MODE == 0
  if (lid == 0u) {
    draw_ticket();
    if (EARLY_WALK != 0u) s_arrivals = 0u;
  }
  barrier();
  const uint tile = s_ticket;
  scan_stamp = s_stamp;
#else
  const uint tile = linear_group_index();
#endif
  if (tile >= pc.tiles) return; // surplus workgroup of a folded dispatch
#if MODE == 0
  if (EARLY_WALK != 0u) {
    scan_tile_early_walk(tile);
    return;
  }
#endif

  const uint segment_first = tile * TILE + gl_SubgroupID * SEGMENT;
  rep_t v[ROWS][4];
  rep_t row_before[ROWS];
  const rep_t carry = load_and_scan_segment(segment_first, v, row_before);
  if (lane == SUBGROUP_SIZE - 1u) s_subgroup[gl_SubgroupID] = carry;
  barrier();
  // Subgroup totals to exclusive prefixes, and the tile's aggregate, by the first subgroup.
  if (gl_SubgroupID == 0u) {
    rep_t running = rep_identity();
    for (uint base = 0u; base < NUM_SUBGROUPS; base += SUBGROUP_SIZE) {
      const uint i = base + lane;
      const rep_t total = i < NUM_SUBGROUPS ? s_subgroup[i] : rep_identity();
      const rep_t inclusive = subgroup_inclusive(total);
      if (i < NUM_SUBGROUPS) s_subgroup[i] = combine(running, subgroup_exclusive_from(inclusive));
      running = combine(running, subgroupShuffle(inclusive, SUBGROUP_SIZE - 1u));
    }
    const rep_t aggregate = running;
#if MODE == 0
    rep_t prefix = rep_identity();
    if (tile == 0u) {
      prefix = scan_initial_prefix();
      if (lane == 0u) scan_post(tile, SCAN_INCLUSIVE, combine(prefix, aggregate));
    } else {
      if (lane == 0u) scan_post(tile, SCAN_AGGREGATE, aggregate);
      prefix = scan_look_back(tile);
      if (lane == 0u) scan_post(tile, SCAN_INCLUSIVE, combine(prefix, aggregate));
    }
    if (lane == 0u) s_tile_prefix = prefix;
#elif MODE == 1
    if (lane == 0u) AccArray(pc.tile_data).values[tile] = bits_from_rep(aggregate);
#else
    rep_t prefix = rep_identity();
    if ((pc.flags & GS_SCAN_TILE_NO_PREFIX) == 0u)
      prefix = rep_from_bits(AccArray(pc.tile_data).values[tile]);
    else if ((pc.flags & GS_SCAN_CARRY_IN) != 0u)
      prefix = rep_from_bits(AccArray(pc.carry_in).values[0]);
    if (lane == 0u) s_tile_prefix = prefix;
#endif
#if MODE != 1
    // the next chunk's prefix: everything up to the end of this one
    if ((pc.flags & GS_SCAN_CARRY_OUT) != 0u && tile + 1u == pc.tiles && lane == 0u)
      AccArray(pc.carry_out).values[0] = bits_from_rep(combine(prefix, aggregate));
#endif
  }
#if MODE == 1
}
#else
  barrier();

  // Each element: tile prefix, then subgroup prefix, then its place in the segment.
  write_segment(segment_first, combine(s_tile_prefix, s_subgroup[gl_SubgroupID]), v, row_before);
}
#endif
