// Decoupled look-back for the scan: per-tile descriptors holding a status and a value of the
// accumulator, and a look-back in which subgroup 0 reads SUBGROUP_SIZE predecessors at once.
//
// Two layouts:
//  - packed (32-bit accumulators): one 64-bit word per tile, status in the high half and the
//    value in the low half, written and read with single 64-bit atomics;
//  - split (SPLIT_DESCRIPTORS; any width): per tile a status word and separate aggregate and
//    inclusive slots. A value is stored (as 32-bit halves, relaxed) before a release store of
//    the status; a reader acquires the status and then reads the slot that status names, which
//    was written before the status and never again. Needs no 64-bit atomics.
// Waiting is bounded as in lib/lookback.glsl: a predecessor that stays empty for
// LOOKBACK_SPIN_LIMIT polls is reduced by the waiting subgroup itself.
// Stamps (packed layout): a status carries, above its two bits, scan_stamp: the low 30 bits of
// the epoch of the dispatch that posted it (scan_tiles.comp draws the epoch with its ticket);
// a descriptor stamped by another dispatch reads as empty, so scans one after another on the
// same state need no clearing in between. Left at 0 by kernels whose state is cleared.
//
// Requires: push constants `pc` with the descriptors' address in `pc.tile_data` (a
// PackedDescriptors reference type for the packed layout) and the carry's in `pc.carry_in`,
// an AccArray reference type, lib/scan_ops.glsl, and a function
// rep_t reduce_tile_by_subgroup(uint tile, out bool inclusive) (for scan_look_back) or
// rep_t reduce_tile(uint tile, out bool inclusive) (for SCAN_LOOK_BACK_SERIAL's
// scan_look_back_serial), where `inclusive` says that the value already holds everything
// before (a segmented scan's tile that starts a segment). With SCAN_LOOK_BACK_READ_AHEAD
// defined, also void look_back_read_ahead(uint tile), called as each step of scan_look_back
// begins (it may issue loads), and void look_back_read_ahead_done(), called once the step's
// descriptors are in (it consumes them): scan_tiles.comp's walker reads a later tile into cache
// while it waits.

const uint SCAN_EMPTY = 0u, SCAN_AGGREGATE = 1u, SCAN_INCLUSIVE = 2u;
#ifdef SPLIT_DESCRIPTORS
#define DESCRIPTORS WordArray(pc.tile_data).words
#else
#define DESCRIPTORS PackedDescriptors(pc.tile_data).descriptors
#endif

const uint SPLIT_WORDS = 5u; // status, aggregate lo/hi, inclusive lo/hi
uint scan_stamp = 0u;        // (epoch & SCAN_STAMP_MASK) << 2, this dispatch's
const uint SCAN_STAMP_MASK = 0x3FFFFFFFu;

void scan_post(uint tile, uint status, rep_t value) {
  const acc_bits_t bits = bits_from_rep(value);
#ifdef SPLIT_DESCRIPTORS
  const uint slot = tile * SPLIT_WORDS + (status == SCAN_AGGREGATE ? 1u : 3u);
  atomicStore(DESCRIPTORS[slot], uint(bits), gl_ScopeQueueFamily, 0, 0);
#if ACC_BITS == 64
  atomicStore(DESCRIPTORS[slot + 1u], uint(bits >> 32), gl_ScopeQueueFamily, 0, 0);
#endif
  atomicStore(DESCRIPTORS[tile * SPLIT_WORDS], status, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
              gl_SemanticsRelease);
#else
  atomicStore(DESCRIPTORS[tile], (uint64_t(scan_stamp | status) << 32) | uint64_t(bits), gl_ScopeQueueFamily, 0, 0);
#endif
}

// Status of a tile's descriptor, and its value when not empty.
uint scan_poll(uint tile, out rep_t value) {
#ifdef SPLIT_DESCRIPTORS
  const uint status = atomicLoad(DESCRIPTORS[tile * SPLIT_WORDS], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                                 gl_SemanticsAcquire);
  acc_bits_t bits = acc_bits_t(0);
  if (status != SCAN_EMPTY) {
    const uint slot = tile * SPLIT_WORDS + (status == SCAN_AGGREGATE ? 1u : 3u);
    bits = acc_bits_t(atomicLoad(DESCRIPTORS[slot], gl_ScopeQueueFamily, 0, 0));
#if ACC_BITS == 64
    bits |= acc_bits_t(atomicLoad(DESCRIPTORS[slot + 1u], gl_ScopeQueueFamily, 0, 0)) << 32;
#endif
  }
  value = rep_from_bits(bits);
  return status;
#else
  const uint64_t word = atomicLoad(DESCRIPTORS[tile], gl_ScopeQueueFamily, 0, 0);
  value = rep_from_bits(acc_bits_t(uint(word)));
  const uint status = uint(word >> 32);
  return (status & ~3u) == scan_stamp ? status & 3u : SCAN_EMPTY;
#endif
}

// Predecessors read at once: the subgroup, up to the 32 lanes the first ballot word covers.
// Each lane reading 2 or 4 predecessors a step, taken in order, was slower
// (doc/tuning.md, "Scan: look-back window").
const uint LOOKBACK_WINDOW = SUBGROUP_SIZE < 32u ? SUBGROUP_SIZE : 32u;

// What comes before tile 0: the carry of the chunks before this one (GS_SCAN_CARRY_IN), or
// nothing.
rep_t scan_initial_prefix() {
  return (pc.flags & GS_SCAN_CARRY_IN) != 0u ? rep_from_bits(AccArray(pc.carry_in).values[0]) : rep_identity();
}

#ifdef SCAN_LOOK_BACK_SERIAL
// The combination of all tiles before `tile` (tile > 0), by one invocation, one predecessor at
// a time.
rep_t scan_look_back_serial(uint tile) {
  rep_t prefix = rep_identity();
  uint end = tile, spins = 0u; // tiles [0, end) are not yet accounted for
  while (end > 0u) {
    rep_t value;
    const uint status = scan_poll(end - 1u, value);
    if (status != SCAN_EMPTY) {
      prefix = combine(value, prefix);
      if (status == SCAN_INCLUSIVE) return prefix;
      end--;
      spins = 0u;
    } else if (++spins >= LOOKBACK_SPIN_LIMIT) { // tile end - 1 keeps us waiting: reduce it ourselves
      bool inclusive;
      prefix = combine(reduce_tile(end - 1u, inclusive), prefix);
      if (inclusive) return prefix;
      end--;
      spins = 0u;
    }
  }
  return combine(scan_initial_prefix(), prefix);
}
#else
// The combination of all tiles before `tile` (tile > 0), in subgroup 0. Lane l reads tile
// end - 1 - l; the lanes up to the nearest inclusive descriptor are combined in one subgroup
// reduction. Before the first tile stands an inclusive descriptor of the initial prefix
// (reached when tile 0 was reduced by a waiting tile instead of posting its own).
rep_t scan_look_back(uint tile) {
  const uint lane = gl_SubgroupInvocationID;
  rep_t prefix = rep_identity();
  uint end = tile; // tiles [0, end) are not yet accounted for
  uint spins = 0u;
  for (;;) {
#ifdef SCAN_LOOK_BACK_READ_AHEAD
    look_back_read_ahead(tile);
#endif
    rep_t value = rep_identity();
    uint status = SCAN_INCLUSIVE;
    if (lane >= LOOKBACK_WINDOW)
      status = SCAN_EMPTY; /* not in the window (its ballot bit is not read) */
    else if (end >= lane + 1u)
      status = scan_poll(end - 1u - lane, value);
    else if (end == lane)
      value = scan_initial_prefix();
    const uint inclusive_lanes = subgroupBallot(status == SCAN_INCLUSIVE).x;
    const uint empty_lanes = subgroupBallot(status == SCAN_EMPTY).x;
    const uint first_inclusive = inclusive_lanes != 0u ? findLSB(inclusive_lanes) : LOOKBACK_WINDOW;
    const uint first_empty = empty_lanes != 0u ? findLSB(empty_lanes) : LOOKBACK_WINDOW;
    // Lanes before the first empty one are ready; stop at the nearest inclusive.
    const uint take = first_inclusive < first_empty ? first_inclusive + 1u : first_empty;
#ifdef SCAN_LOOK_BACK_READ_AHEAD
    look_back_read_ahead_done();
#endif
    prefix = combine(subgroup_reduce(lane < take ? value : rep_identity()), prefix);
    if (first_inclusive < first_empty) return prefix;
    if (take == LOOKBACK_WINDOW) { // the whole window was aggregates: move on
      end -= LOOKBACK_WINDOW;
      spins = 0u;
      continue;
    }
    end -= take;
    spins = take > 0u ? 0u : spins + 1u;
    if (spins >= LOOKBACK_SPIN_LIMIT) { // tile end - 1 keeps us waiting: reduce it ourselves
      bool inclusive;
      prefix = combine(reduce_tile_by_subgroup(end - 1u, inclusive), prefix);
      if (inclusive) return prefix;
      end -= 1u;
      spins = 0u;
      if (end == 0u) return combine(scan_initial_prefix(), prefix);
    }
  }
  return prefix;
}
#endif
