#include "prim/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/knobs.h"

enum { MODE_LOOKBACK, MODE_REDUCE, MODE_DOWNSWEEP };
enum { MAX_ELEMENTS = 0x7FFFFFF0u /* element indices stay below 2^31 */ };

const char *gs_scan_op_name(gs_scan_op op) { return op == GS_SCAN_MIN ? "min" : op == GS_SCAN_MAX ? "max" : "sum"; }

unsigned gs_scan_accumulator_rep(const gs_scan_config *c) {
  const gs_key_info *acc = gs_key_info_of(c->acc);
  const bool wide = acc->bytes == 8;
  if (c->op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT) return wide ? 4 : 3;
  return wide ? 2 : 1;
}

int gs_scan_check_config(const gs_device *dev, const gs_scan_config *c) {
  const gs_key_info *in = gs_key_info_of(c->input), *acc = gs_key_info_of(c->acc);
  if (c->acc != c->input) {
    if (acc->bytes < in->bytes)
      return gs_fail(GPUSORT_ERROR_USAGE, "a %s accumulator is narrower than the %s input", acc->name, in->name);
    if (in->kind == GS_KEY_KIND_FLOAT && acc->kind != GS_KEY_KIND_FLOAT)
      return gs_fail(GPUSORT_ERROR_USAGE, "a float input needs a float accumulator (f64), not %s", acc->name);
    if (in->kind == GS_KEY_KIND_SIGNED && acc->kind == GS_KEY_KIND_UNSIGNED)
      return gs_fail(GPUSORT_ERROR_USAGE, "a signed input needs a signed or float accumulator (i64, f64), not %s",
                     acc->name);
    if (acc->bytes == in->bytes && acc->kind != in->kind)
      return gs_fail(GPUSORT_ERROR_USAGE, "an accumulator as wide as the %s input must be of its type, not %s",
                     in->name, acc->name);
  }
  if (!dev) return GPUSORT_OK;
  const bool wide = in->bytes == 8 || acc->bytes == 8;
  if (wide && (!dev->int64 || !dev->subgroup_extended))
    return gs_fail(GPUSORT_ERROR_NO_DEVICE,
                   "%s cannot scan 64-bit values (no shaderInt64 or 64-bit subgroup operations)", dev->info.name);
  if (gs_scan_accumulator_rep(c) == 4 && !dev->float64)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot add f64 values (no shaderFloat64)", dev->info.name);
  return GPUSORT_OK;
}

uint64_t gs_scan_max_elements(const gs_device *dev, const gs_scan_config *c) {
  const unsigned in = gs_key_info_of(c->input)->bytes, acc = gs_key_info_of(c->acc)->bytes;
  const unsigned widest = in > acc ? in : acc;
  /* buffers are allocated in whole 16-byte vectors: the rounded size must fit */
  const uint64_t limit = (dev->info.max_data_buffer & ~(uint64_t)15) / widest;
  return limit < MAX_ELEMENTS ? limit : MAX_ELEMENTS;
}

static int make_kernel(gs_scan *s, gs_kernel *k, int mode, bool spine, bool split, uint32_t inclusive,
                       uint32_t spin, uint32_t rows) {
  const gs_scan_config *c = &s->config;
  const gs_key_info *in = gs_key_info_of(spine ? c->acc : c->input), *acc = gs_key_info_of(c->acc);
  char name[64];
  static const char *const modes[] = {"lookback", "reduce", "downsweep"};
  snprintf(name, sizeof name, "scan_%s_i%u_r%u%s", modes[mode], in->bytes * 8, gs_scan_accumulator_rep(c),
           split ? "_split" : "");
  uint32_t spec[GS_SPEC_COUNT] = {0};
  spec[GS_SPEC_WORKGROUP_SIZE] = s->workgroup_size;
  spec[GS_SPEC_TILE_ROWS] = rows;
  spec[GS_SPEC_LOOKBACK_SPIN] = spin;
  spec[GS_SPEC_SCAN_OP] = (uint32_t)c->op;
  spec[GS_SPEC_SCAN_IN_KIND] = (uint32_t)in->kind;
  spec[GS_SPEC_SCAN_ACC_KIND] = (uint32_t)acc->kind;
  spec[GS_SPEC_SCAN_INCLUSIVE] = inclusive;
  spec[GS_SPEC_EARLY_WALK] = mode == MODE_LOOKBACK && s->early_walk;
  /* the walker's read-ahead, in whole tiles (at least one); none in small scans' tiles, whose
   * scans end sooner than NVIDIA's distance */
  if (mode == MODE_LOOKBACK && s->read_ahead_kib && rows == s->rows) {
    const uint64_t tile_bytes = (uint64_t)gs_scan_holding_invocations(s) * rows * 16;
    const uint64_t tiles = (uint64_t)s->read_ahead_kib * 1024 / tile_bytes;
    spec[GS_SPEC_READ_AHEAD] = tiles == 0 ? 1 : tiles > 1u << 20 ? 1u << 20 : (uint32_t)tiles;
  }
  return gs_kernel_create(s->dev, k, name, sizeof(gs_scan_push), spec, sizeof spec / sizeof spec[0]);
}

bool gs_scan_descriptors_split(const gs_device *dev, gs_key_type acc) {
  return gs_key_info_of(acc)->bytes == 8 || !dev->int64_atomics || !dev->int64 || gs_knobs_get()->scan_split;
}

int gs_scan_create(gs_device *dev, const gs_memops *memops, const gs_device_config *device_config,
                   const gs_scan_config *config, gs_scan *s) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->memops = memops;
  s->config = *config;
  int rc = gs_scan_check_config(dev, config);
  if (rc) return rc;
  const gs_key_info *in = gs_key_info_of(config->input), *acc = gs_key_info_of(config->acc);
  s->workgroup_size = device_config->scan_workgroup_size;
  s->rows = device_config->scan_rows;
  if (s->workgroup_size % dev->subgroup_size || s->workgroup_size > dev->info.max_workgroup_size ||
      s->workgroup_size < 64 || s->rows == 0 || s->rows > 32)
    return gs_fail(GPUSORT_ERROR_USAGE, "scan tile of %u invocations x %u rows does not suit this device",
                   s->workgroup_size, s->rows);
  /* a widened accumulator holds each element in two words: at most 8 rows, as many registers
   * as 16 rows of elements kept at their width */
  if (acc->bytes > in->bytes && s->rows > 8) s->rows = 8;
  /* The early walk (scan_tiles.comp's scan_tile_early_walk): subgroup 0 of a look-back scan's
   * tiles holds no elements and walks the look-back while the others load theirs, so its tiles
   * are a subgroup short. NVIDIA's preset takes it; not lavapipe, where llvmpipe runs a
   * workgroup's subgroups in turn between barriers on one thread, so the walk holds up the
   * loads. As it walks, the walker reads the input read_ahead_kib past its tile into cache
   * (scan_tiles.comp's look_back_read_ahead), so that the memory stays busy while the tiles
   * wait; NVIDIA's preset reads 8192 KiB ahead
   * (doc/tuning.md, "Scan: early walk and read-ahead"). */
  s->early_walk = device_config->scan_early_walk && config->algo == GS_SCAN_LOOKBACK && !config->reduce_only &&
                  s->workgroup_size > dev->subgroup_size;
  s->read_ahead_kib = s->early_walk ? device_config->scan_read_ahead_kib : 0;
  const uint32_t data_invocations = gs_scan_holding_invocations(s);
  s->tile = data_invocations * s->rows * (in->bytes == 8 ? 2 : 4);
  s->split_descriptors = gs_scan_descriptors_split(dev, config->acc);
  const uint32_t spin = device_config->lookback_spin ? device_config->lookback_spin : 1;
  const uint32_t rows = s->rows;
  if (config->reduce_only)
    return (rc = make_kernel(s, &s->reduce[0], MODE_REDUCE, false, false, 0, spin, rows))
               ? rc
               : make_kernel(s, &s->reduce[1], MODE_REDUCE, true, false, 0, spin, rows);
  if (config->algo == GS_SCAN_LOOKBACK) {
    if ((rc = make_kernel(s, &s->lookback, MODE_LOOKBACK, false, s->split_descriptors, config->inclusive, spin, rows)))
      return rc;
    /* small scans: a tile of fewer rows (the same workgroup), where it is smaller */
    const uint32_t small = device_config->scan_small_rows;
    if (small == 0 || small >= rows) return GPUSORT_OK;
    s->small_rows = small;
    s->small_tile = data_invocations * small * (in->bytes == 8 ? 2 : 4);
    s->small_min_tiles = device_config->scan_small_min_tiles ? device_config->scan_small_min_tiles : 1;
    return make_kernel(s, &s->small_lookback, MODE_LOOKBACK, false, s->split_descriptors, config->inclusive, spin,
                       small);
  }
  /* [0] reads the input (user's inclusive flag); [1] reads tile values and scans them
   * exclusively, in place. */
  if ((rc = make_kernel(s, &s->downsweep[0], MODE_DOWNSWEEP, false, false, config->inclusive, spin, rows)) ||
      (rc = make_kernel(s, &s->reduce[0], MODE_REDUCE, false, false, 0, spin, rows)) ||
      (rc = make_kernel(s, &s->downsweep[1], MODE_DOWNSWEEP, true, false, 0, spin, rows)) ||
      (rc = make_kernel(s, &s->reduce[1], MODE_REDUCE, true, false, 0, spin, rows)))
    return rc;
  return GPUSORT_OK;
}

void gs_scan_destroy(gs_scan *s) {
  gs_device *dev = s->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use them: leave to exit */
  gs_kernel_destroy(dev, &s->lookback);
  gs_kernel_destroy(dev, &s->small_lookback);
  for (int i = 0; i < 2; i++) {
    gs_kernel_destroy(dev, &s->reduce[i]);
    gs_kernel_destroy(dev, &s->downsweep[i]);
  }
  memset(s, 0, sizeof *s);
}

/* Elements of a tile at a level: the kernel's tile holds WORKGROUP x ROWS 16-byte vectors of
 * its elements, input elements at level 0 and accumulator-typed tile values above (of half as
 * many elements when the accumulator is wider). */
static uint64_t tile_at(const gs_scan *s, unsigned level) {
  const unsigned bytes = gs_key_info_of(level ? s->config.acc : s->config.input)->bytes;
  return (uint64_t)s->workgroup_size * s->rows * (16 / bytes);
}

static uint64_t tiles_of(const gs_scan *s, uint64_t count, unsigned level) {
  return gs_groups_for(count, tile_at(s, level));
}

static VkDeviceSize round16(VkDeviceSize bytes) { return (bytes + 15) & ~(VkDeviceSize)15; }

/* Tile values of reduce-then-scan (and reductions), level by level: level l + 1 holds one value
 * per tile of level l, until one tile holds them (one value, for a reduction). Returns the
 * number of levels above the input and each level's offset in the state block. */
static unsigned spine_layout(const gs_scan *s, uint64_t n, VkDeviceSize *offsets, uint64_t *counts) {
  const unsigned acc = gs_key_info_of(s->config.acc)->bytes;
  unsigned levels = 0;
  VkDeviceSize at = 0;
  counts[0] = n ? n : 1;
  while ((counts[levels] > (s->config.reduce_only ? 1 : tile_at(s, levels)) || (s->config.reduce_only && levels == 0)) &&
         levels + 1 < GS_SCAN_MAX_LEVELS) {
    counts[levels + 1] = tiles_of(s, counts[levels], levels);
    levels++;
    offsets[levels] = at;
    at += round16(counts[levels] * acc);
  }
  offsets[0] = at; /* total bytes */
  return levels;
}

/* Whether a look-back scan of capacity max_n takes the small scans' tile. */
static bool small_scan(const gs_scan *s, uint64_t max_n) {
  return s->small_rows && (uint64_t)s->tile * s->small_min_tiles > max_n;
}

uint32_t gs_scan_tile_for(const gs_scan *s, uint64_t max_n) { return small_scan(s, max_n) ? s->small_tile : s->tile; }

uint64_t gs_scan_lookback_slots(const gs_scan *s, uint64_t max_n) {
  uint64_t tiles = gs_groups_for(max_n ? max_n : 1, s->tile);
  if (s->small_rows) { /* the small tile serves capacities below its bound: more, smaller tiles */
    const uint64_t below = (uint64_t)s->tile * s->small_min_tiles - 1, n = max_n < below ? max_n : below;
    const uint64_t small_tiles = gs_groups_for(n ? n : 1, s->small_tile);
    if (small_tiles > tiles) tiles = small_tiles;
  }
  return tiles;
}

VkDeviceSize gs_scan_state_bytes(const gs_scan *s, uint64_t max_n) {
  if (s->config.algo == GS_SCAN_LOOKBACK && !s->config.reduce_only) {
    const VkDeviceSize per_tile = gs_scan_descriptor_bytes(s->split_descriptors);
    return GS_SCAN_CONTROL_BYTES + round16(gs_scan_lookback_slots(s, max_n) * per_tile);
  }
  VkDeviceSize offsets[GS_SCAN_MAX_LEVELS + 1];
  uint64_t counts[GS_SCAN_MAX_LEVELS + 1];
  spine_layout(s, max_n, offsets, counts);
  return offsets[0] ? offsets[0] : 16;
}

static int dispatch(const gs_scan *s, VkCommandBuffer cb, const gs_kernel *k, gs_scan_push *push) {
  return gs_kernel_dispatch(s->dev, cb, k, push, push->tiles);
}

bool gs_scan_keeps_state(const gs_scan *s) {
  return s->config.algo == GS_SCAN_LOOKBACK && !s->config.reduce_only && !s->split_descriptors;
}

int gs_scan_record(const gs_scan *s, VkCommandBuffer cb, uint64_t n, uint64_t max_n, gs_range input,
                   gs_range output, gs_range state, bool kept_state, const gs_scan_carry *carry, gs_timestamps *ts) {
  const uint32_t carry_flags = !carry ? 0 : (carry->in ? GS_SCAN_CARRY_IN : 0) | (carry->out ? GS_SCAN_CARRY_OUT : 0);
  if (n > max_n) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: scan beyond its capacity");
  gs_cmd_barrier(cb); /* after earlier work on the same arrays and state */
  if (ts) gs_timestamps_write(cb, ts, 0);
  int rc = GPUSORT_OK;
  VkDeviceSize offsets[GS_SCAN_MAX_LEVELS + 1];
  uint64_t count[GS_SCAN_MAX_LEVELS + 1];
  if (carry && s->config.reduce_only) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a carried reduction");
  if (n == 0 && !s->config.reduce_only) {
    /* nothing to scan (the carry, if any, stays where it is: callers skip empty chunks) */
  } else if (s->config.reduce_only) {
    /* Reduce level by level until one value remains; the last level writes the output. */
    const unsigned levels = spine_layout(s, n, offsets, count);
    for (unsigned l = 0; l < levels && !rc; l++) {
      gs_scan_push push = {.elements = l == 0 ? input.address : state.address + offsets[l],
                           .results = 0,
                           .tile_data = l + 1 == levels ? output.address : state.address + offsets[l + 1],
                           .n = (uint32_t)(l == 0 ? n : count[l]),
                           .tiles = (uint32_t)count[l + 1]};
      rc = dispatch(s, cb, &s->reduce[l ? 1 : 0], &push);
    }
  } else if (s->config.algo == GS_SCAN_LOOKBACK) {
    const gs_range control = gs_subrange(state, 0, GS_SCAN_CONTROL_BYTES);
    const gs_range descriptors = gs_subrange(state, GS_SCAN_CONTROL_BYTES, state.size - GS_SCAN_CONTROL_BYTES);
    const VkDeviceSize per_tile = gs_scan_descriptor_bytes(s->split_descriptors);
    const bool small = small_scan(s, max_n);
    const uint64_t tiles = gs_groups_for(n, small ? s->small_tile : s->tile), slots = gs_scan_lookback_slots(s, max_n);
    /* every slot, not only this scan's tiles: a later scan on the kept state may take more */
    if (!kept_state || !gs_scan_keeps_state(s))
      rc = gs_record_clear(s->dev, cb, s->memops, state, (GS_SCAN_CONTROL_BYTES + slots * per_tile) / 4);
    gs_scan_push push = {.elements = input.address,
                         .results = output.address,
                         .control = control.address,
                         .tile_data = descriptors.address,
                         .carry_in = carry ? carry->in : 0,
                         .carry_out = carry ? carry->out : 0,
                         .n = (uint32_t)n,
                         .tiles = (uint32_t)tiles,
                         .flags = carry_flags,
                         .capacity = (uint32_t)slots};
    if (!rc) rc = dispatch(s, cb, small ? &s->small_lookback : &s->lookback, &push);
  } else {
    /* Reduce level by level until one tile holds the tile values, scan that tile, then scan
     * each level down from the prefixes of the level above. Level l > 0 is scanned in place. */
    const unsigned levels = spine_layout(s, n, offsets, count);
    count[0] = n;
    for (unsigned l = 0; l < levels && !rc; l++) {
      gs_scan_push push = {.elements = l == 0 ? input.address : state.address + offsets[l],
                           .tile_data = state.address + offsets[l + 1],
                           .n = (uint32_t)count[l],
                           .tiles = (uint32_t)count[l + 1]};
      rc = dispatch(s, cb, &s->reduce[l ? 1 : 0], &push);
    }
    for (unsigned l = levels + 1; l-- > 0 && !rc;) {
      const VkDeviceAddress level = l == 0 ? input.address : state.address + offsets[l];
      /* the top level, one tile, starts from the carry and produces the next one */
      gs_scan_push push = {.elements = level,
                           .results = l == 0 ? output.address : level,
                           .tile_data = l < levels ? state.address + offsets[l + 1] : 0,
                           .carry_in = carry && l == levels ? carry->in : 0,
                           .carry_out = carry && l == levels ? carry->out : 0,
                           .n = (uint32_t)count[l],
                           .tiles = (uint32_t)tiles_of(s, count[l], l),
                           .flags = l == levels ? GS_SCAN_TILE_NO_PREFIX | carry_flags : 0};
      rc = dispatch(s, cb, &s->downsweep[l ? 1 : 0], &push);
    }
  }
  if (ts) gs_timestamps_write(cb, ts, 1);
  return rc;
}
