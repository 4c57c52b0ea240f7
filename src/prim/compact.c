#include "prim/compact.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

enum {
  CONTROL_BYTES = 256,      /* ticket counter, the total kept */
  MAX_ELEMENTS = 0x3FFFFF00 /* counts in a descriptor's 30 bits */
};

static bool reduces(const gs_compact_config *c) { return c->mode == GS_COMPACT_REDUCE_BY_KEY; }
/* Whether the device's configuration has this member's tiles walk early (where they can). */
static bool walks_early(const gs_device_config *device_config, const gs_compact_config *c) {
  const uint32_t member = c->mode == GS_COMPACT_UNIQUE ? GPUSORT_EARLY_WALK_UNIQUE
                          : !reduces(c)                ? 0
                          : c->count_runs              ? GPUSORT_EARLY_WALK_RLE
                                                       : GPUSORT_EARLY_WALK_REDUCE_BY_KEY;
  return (device_config->compact_early_walk & member) != 0;
}

/* Shared memory of a tile: select and partition stage its records in output order
 * (compact.comp's s_staged), and every mode keeps a few words per subgroup and the walk's
 * (a generous bound for those). */
static uint64_t shared_bytes_for(const gs_compact_config *c, uint32_t workgroup, uint32_t subgroup, uint32_t items,
                                 uint32_t subtiles, unsigned key_bytes) {
  return (GS_COMPACT_STAGES(c->mode) ? (uint64_t)workgroup * items * subtiles * key_bytes : 0) +
         workgroup / subgroup * 32 + 256;
}

static gs_scan_config value_scan(const gs_compact_config *c) {
  return (gs_scan_config){.input = c->value, .acc = c->acc, .op = c->op};
}

int gs_compact_check_config(const gs_device *dev, const gs_compact_config *c) {
  if (c->mode > GS_COMPACT_REDUCE_BY_KEY || (unsigned)c->key >= GS_KEY_TYPE_COUNT)
    return gs_fail(GPUSORT_ERROR_USAGE, "internal error: an unknown compaction");
  if (c->count_runs && (!reduces(c) || c->value != GS_KEY_U32 || c->op != GS_SCAN_SUM ||
                        (c->acc != GS_KEY_U32 && c->acc != GS_KEY_U64)))
    return gs_fail(GPUSORT_ERROR_USAGE, "internal error: run lengths are u32 sums into u32 or u64");
  if (reduces(c)) {
    const gs_scan_config scan = value_scan(c);
    int rc = gs_scan_check_config(dev, &scan);
    if (rc) return rc;
  }
  if (dev && gs_key_info_of(c->key)->bytes == 8 && !dev->int64)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot compare 64-bit keys (no shaderInt64)", dev->info.name);
  return GPUSORT_OK;
}

uint64_t gs_compact_max_elements(const gs_device *dev, const gs_compact_config *c) {
  unsigned widest = gs_key_info_of(c->key)->bytes;
  if (reduces(c)) {
    const unsigned value = gs_key_info_of(c->value)->bytes, acc = gs_key_info_of(c->acc)->bytes;
    widest = value > widest ? value : widest;
    widest = acc > widest ? acc : widest;
  }
  const uint64_t limit = (dev->info.max_data_buffer & ~(uint64_t)15) / widest;
  return limit < MAX_ELEMENTS ? limit : MAX_ELEMENTS;
}

int gs_compact_create(gs_device *dev, const gs_memops *memops, const gs_device_config *device_config,
                      const gs_compact_config *config, gs_compact *c) {
  memset(c, 0, sizeof *c);
  c->dev = dev;
  c->memops = memops;
  c->config = *config;
  int rc = gs_compact_check_config(dev, config);
  if (rc) return rc;
  const unsigned key_bytes = gs_key_info_of(config->key)->bytes;
  /* The family's workgroup (1024 on NVIDIA, else the scan's: device_config.c) and the scan's
   * rows of 16-byte loads (16 u32 or 8 u64 keys in 4), within each mode's bounds on
   * invocations, rows and loads a tile (workgroup x rows), set by what its tile keeps in
   * registers across the look-back:
   *  - select and partition stage their tiles in shared memory, at most 256 x 4 rows a sub-tile
   *    (partition in tiles of one sub-tile up to 384)
   *    (doc/tuning.md, "Look-back family: select's and partition's tile shape");
   *  - unique keeps only its flags, so its tiles are bounded by its 32 flag bits: 8 rows in as
   *    many invocations as the device's family allows (a look-back's wait shrinks as its tiles
   *    grow), 512 with its early walk (doc/tuning.md, "Look-back family: unique's tile shape");
   *  - rle of u32 keys reads its heads' keys again: 512 x 4 rows
   *    (doc/tuning.md, "Look-back family: rle's tile shape");
   *  - reduce-by-key of u32 keys and sums holds its values through the look-back, in blocks:
   *    384 x 4 rows, 512 x 4 with its early walk
   *    (doc/tuning.md, "Look-back family: reduce-by-key's tile shape");
   * 64-bit keys, values or counts in rle and reduce-by-key are unmeasured and keep 256
   * invocations x 4 rows (a bound of 1024 loads). On lavapipe 8 rows beat 4 in unique, rle and
   * reduce-by-key alike, so the modes' bounds are on loads, not rows
   * (doc/tuning.md, "Look-back family: 64-bit and lavapipe tile shapes"). */
  const bool narrow = key_bytes == 4 && (!reduces(config) || (gs_key_info_of(config->value)->bytes == 4 &&
                                                                gs_key_info_of(config->acc)->bytes == 4));
  uint32_t subtiles = GS_COMPACT_STAGES(config->mode) && device_config->compact_subtiles ? device_config->compact_subtiles : 1;
  if (subtiles > 64) subtiles = 64; /* (a knob's; shared memory allows far fewer on any device) */
  uint32_t most = 256, most_rows = 4, most_loads = 4096;
  if (config->mode == GS_COMPACT_PARTITION && subtiles == 1) most = 384;
  if (config->mode == GS_COMPACT_UNIQUE) /* (fewer invocations with an early walk: c->early_walk below) */
    most = walks_early(device_config, config) ? 512 : 1024, most_rows = 8, most_loads = 8192;
  /* (rows whose packed counts take two words or more total each word by a shuffle:
   * compact.comp's rank_rows) Other devices than NVIDIA take the same bounds, unmeasured
   * there (reduce-by-key's 384, from 512 before 0.7.27, too, and unique's 8 rows in AMD's and
   * Intel's 512 invocations, 4 before 0.7.29). */
  if (reduces(config)) {
    const bool wider = config->count_runs || walks_early(device_config, config); /* (the shapes above) */
    most = !narrow ? 256 : wider ? 512 : 384, most_rows = 8, most_loads = !narrow ? 1024 : wider ? 2048 : 1536;
  }
  if (most > dev->info.max_workgroup_size) most = dev->info.max_workgroup_size;
  const uint32_t base = device_config->compact_workgroup_size;
  c->workgroup_size = base < most ? base : most;
  if (c->workgroup_size && most_rows > most_loads / c->workgroup_size) most_rows = most_loads / c->workgroup_size;
  uint32_t rows = device_config->scan_rows < most_rows ? device_config->scan_rows : most_rows;
  if (rows == 0) rows = 1;
  const uint32_t vec = key_bytes == 8 ? 2 : 4; /* keys of one 16-byte load */
  /* fewer sub-tiles, then fewer rows, where shared memory is short (a device with the 16 KiB
   * Vulkan promises) */
  while (subtiles > 1 && shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, rows * vec, subtiles,
                                          key_bytes) > dev->info.max_shared_bytes)
    subtiles--;
  while (rows > 1 && shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, rows * vec, 1, key_bytes) >
                         dev->info.max_shared_bytes)
    rows--;
  c->items = rows * vec;
  c->subtiles = subtiles;
  if (c->workgroup_size % dev->subgroup_size || c->workgroup_size > dev->info.max_workgroup_size ||
      c->workgroup_size < 64 || c->items == 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "compaction tile of %u invocations x %u keys does not suit this device",
                   c->workgroup_size, c->items);
  const uint32_t shared =
      (uint32_t)shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, c->items, c->subtiles, key_bytes);
  if (shared > dev->info.max_shared_bytes)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "a compaction tile needs %u bytes of shared memory; %s offers %u", shared,
                   dev->info.name, dev->info.max_shared_bytes);
  /* The early walk of unique, rle and reduce-by-key (compact.comp's unique_tile_early_walk and
   * runs_tile_early_walk): subgroup 0 holds no keys and walks the look-back from the start while
   * the others load theirs, so the tile is a subgroup short. Its count travels in 16 bits of a
   * shared word. Unique gains most from it in 512 x 8 rows, so with it unique takes at most 512
   * invocations; rle and reduce-by-key take 512 x 4 rows for u32 keys, and their walking
   * subgroup goes on to the value look-back. On lavapipe the gain is within that machine's
   * noise, so its preset (and the other vendors', unmeasured) keeps the whole tile loading
   * before it walks (doc/tuning.md, "Look-back family: the early walk").
   * Select and partition walk after their two sub-tiles: walks of their own lost to that, as
   * did a walker reading a later tile's input into cache as it walks
   * (doc/tuning.md, "Look-back family: early walks that lost"). */
  c->early_walk = walks_early(device_config, config) && c->workgroup_size > dev->subgroup_size &&
                  (uint64_t)(c->workgroup_size - dev->subgroup_size) * c->items < 0x10000;
  c->tile = (c->workgroup_size - (c->early_walk ? dev->subgroup_size : 0)) * c->items * c->subtiles;
  /* The others' walk (compact.comp's walk_for_count): by subgroup 0's ballots where the device's
   * configuration says so (lavapipe: 7 to 21% less time for the five members at 2^22 keys),
   * rle's and reduce-by-key's only where that walk is not known wrong for them (NVIDIA:
   * device_config.c); else by the whole workgroup
   * (doc/tuning.md, "Look-back family: subgroup 0's walk after loading"). */
  c->subgroup_walk =
      device_config->compact_subgroup_walk && (!reduces(config) || device_config->compact_runs_subgroup_walk);
  /* Select's and partition's read-ahead, in whole tiles (at least one where any was asked).
   * NVIDIA's 8192 KiB (256 of their tiles of 32 KiB) is select's best distance on the H200 and
   * the H100 (doc/tuning.md, "Look-back family: read-ahead distance"). The other modes gained
   * nothing from it or lost, as did the scan and the sort's passes
   * (doc/tuning.md, "Look-back family: read-ahead in the other modes"). */
  if (GS_COMPACT_STAGES(config->mode) && device_config->compact_read_ahead_kib) {
    const uint64_t tile_bytes = (uint64_t)c->tile * key_bytes;
    const uint64_t tiles = (uint64_t)device_config->compact_read_ahead_kib * 1024 / tile_bytes;
    c->read_ahead = tiles == 0 ? 1 : tiles > 1u << 20 ? 1u << 20 : (uint32_t)tiles;
  }
  c->split_descriptors = reduces(config) && gs_scan_descriptors_split(dev, config->acc);
  char name[64];
  const gs_scan_config values = value_scan(config);
  const char *layout = c->split_descriptors ? "_split" : "";
  if (config->count_runs)
    snprintf(name, sizeof name, "compact_rle_k%u_r%u%s", key_bytes * 8, gs_scan_accumulator_rep(&values), layout);
  else if (reduces(config))
    snprintf(name, sizeof name, "compact_rbk_k%u_i%u_r%u%s", key_bytes * 8, gs_key_info_of(config->value)->bytes * 8,
             gs_scan_accumulator_rep(&values), layout);
  else
    snprintf(name, sizeof name, "compact_k%u", key_bytes * 8);
  const uint32_t spin = device_config->lookback_spin ? device_config->lookback_spin : 1;
  const uint32_t value_kind = reduces(config) ? (uint32_t)gs_key_info_of(config->value)->kind : 0;
  const uint32_t acc_kind = reduces(config) ? (uint32_t)gs_key_info_of(config->acc)->kind : 0;
  uint32_t spec[GS_SPEC_COUNT] = {0}; /* (the ids compact.comp does not read stay 0) */
  spec[GS_SPEC_WORKGROUP_SIZE] = c->workgroup_size;
  spec[GS_SPEC_KEY_KIND] = (uint32_t)gs_key_info_of(config->key)->kind;
  spec[GS_SPEC_TILE_ROWS] = c->items;
  spec[GS_SPEC_LOOKBACK_SPIN] = spin;
  spec[GS_SPEC_SCAN_OP] = (uint32_t)config->op;
  spec[GS_SPEC_SCAN_IN_KIND] = value_kind;
  spec[GS_SPEC_SCAN_ACC_KIND] = acc_kind;
  spec[GS_SPEC_COMPACT_MODE] = config->mode;
  spec[GS_SPEC_COMPACT_SUBTILES] = c->subtiles;
  spec[GS_SPEC_READ_AHEAD] = c->read_ahead;
  spec[GS_SPEC_EARLY_WALK] = c->early_walk;
  spec[GS_SPEC_SUBGROUP_WALK] = c->subgroup_walk;
  return gs_kernel_create(dev, &c->kernel, name, sizeof(gs_compact_push), spec, GS_SPEC_COUNT);
}

void gs_compact_destroy(gs_compact *c) {
  gs_device *dev = c->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use it: leave to exit */
  gs_kernel_destroy(dev, &c->kernel);
  memset(c, 0, sizeof *c);
}

static uint64_t tiles_of(const gs_compact *c, uint64_t n) { return gs_groups_for(n ? n : 1, c->tile); }

static VkDeviceSize round16(VkDeviceSize bytes) { return (bytes + 15) & ~(VkDeviceSize)15; }

/* State: control words, then two halves of one size, each a count descriptor per tile and
 * (reduce-by-key) after those the value descriptors. A pass reads one half and zeroes its tiles'
 * descriptors in the other, so that the next pass, on that half, finds them empty (gs_compact_rest).
 * The halves' layout follows from the block's size alone, so that passes of any size on one
 * block agree on where each tile's descriptors are. */
static VkDeviceSize tile_descriptor_bytes(const gs_compact *c) {
  return 4 + (reduces(&c->config) ? gs_scan_descriptor_bytes(c->split_descriptors) : 0);
}

VkDeviceSize gs_compact_state_bytes(const gs_compact *c, uint64_t max_n) {
  /* (16 bytes a half more: the value descriptors start at the next 16 bytes after the counts) */
  return CONTROL_BYTES + 2 * round16(tiles_of(c, max_n) * tile_descriptor_bytes(c) + 16);
}

typedef struct {
  VkDeviceSize half_bytes, values_at; /* a half's size; its value descriptors' offset in it */
  uint64_t tiles;                     /* tiles whose descriptors a half holds */
} state_layout;

static state_layout layout_of(const gs_compact *c, VkDeviceSize state_bytes) {
  state_layout l = {((state_bytes - CONTROL_BYTES) / 2) & ~(VkDeviceSize)15, 0, 0};
  l.tiles = (l.half_bytes - 16) / tile_descriptor_bytes(c);
  l.values_at = round16(l.tiles * 4);
  return l;
}

void gs_compact_descriptors(const gs_compact *c, gs_range state, unsigned half, uint64_t tiles, gs_range *counts,
                            gs_range *values) {
  const state_layout l = layout_of(c, state.size);
  *counts = gs_subrange(state, CONTROL_BYTES + half * l.half_bytes, tiles * 4);
  if (values)
    *values = reduces(&c->config) ? gs_subrange(state, CONTROL_BYTES + half * l.half_bytes + l.values_at,
                                                tiles * gs_scan_descriptor_bytes(c->split_descriptors))
                                  : (gs_range){0};
}

int gs_compact_record(const gs_compact *c, VkCommandBuffer cb, uint64_t n, const gs_compact_run *run,
                      gs_timestamps *ts) {
  if (n > gs_compact_max_elements(c->dev, &c->config) || gs_compact_state_bytes(c, n) > run->state.size)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a compaction beyond its capacity");
  if (run->has_previous && reduces(&c->config))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: reduce-by-key continues no earlier chunk");
  const bool selects = c->config.mode == GS_COMPACT_SELECT || c->config.mode == GS_COMPACT_PARTITION;
  if (run->carry_words > 2 || (run->carry_words && reduces(&c->config)))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a compaction carrying values it cannot");
  if (selects && (run->program_length == 0 || run->program_length > GS_PREDICATE_MAX_OPS))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a selection without a predicate");
  gs_cmd_barrier(cb); /* after earlier work on the same arrays and state */
  if (ts) gs_timestamps_write(cb, ts, 0);
  const uint64_t tiles = tiles_of(c, n);
  const state_layout layout = layout_of(c, run->state.size);
  gs_compact_rest *rest = run->rest;
  if (rest && rest->of != c) *rest = (gs_compact_rest){.of = c};
  /* What the pass reads starts empty: the control words and its tiles' descriptors, as the last
   * pass on the block left them, or cleared (with `rest` both halves, without it half 0). A pass
   * over no keys clears the control words alone, so that its total reads 0. */
  const bool at_rest = rest && rest->zeroed_tiles[rest->half] >= tiles;
  const VkDeviceSize clear_bytes = n == 0    ? CONTROL_BYTES
                                   : at_rest ? 0
                                             : CONTROL_BYTES + (rest ? 2 : 1) * layout.half_bytes;
  int rc = clear_bytes ? gs_record_clear(c->dev, cb, c->memops, run->state, clear_bytes / 4) : GPUSORT_OK;
  if (rest && clear_bytes > CONTROL_BYTES) rest->zeroed_tiles[0] = rest->zeroed_tiles[1] = layout.tiles;
  const unsigned half = rest ? rest->half : 0;
  gs_range counts, values, other_counts; /* (the other half's value descriptors lie as far on) */
  gs_compact_descriptors(c, run->state, half, tiles, &counts, &values);
  gs_compact_descriptors(c, run->state, 1 - half, tiles, &other_counts, NULL);
  if (!rc && n) {
    const uint32_t outputs = (run->keys_out.size ? GS_COMPACT_KEYS : 0) | (run->indices_out.size ? GS_COMPACT_INDICES : 0);
    gs_compact_push push = {.keys_in = run->keys_in.address,
                            .keys_out = run->keys_out.address,
                            .indices_out = run->indices_out.address,
                            .values_in = run->values_in.address,
                            .values_out = run->values_out.address,
                            .lookback = counts.address,
                            .tile_data = values.address,
                            .next_lookback = rest ? other_counts.address : 0,
                            .control = run->state.address,
                            .program = selects ? run->program.address : 0,
                            .n = (uint32_t)n,
                            .tiles = (uint32_t)tiles,
                            .flags = outputs | (run->has_previous ? GS_COMPACT_PREVIOUS : 0) |
                                     (c->config.count_runs ? GS_COMPACT_COUNT_RUNS : 0) |
                                     (run->carry_words ? GS_COMPACT_CARRY : 0) |
                                     (run->carry_words == 2 ? GS_COMPACT_CARRY_WIDE : 0) |
                                     (run->keys_in.address % 16 == 0 ? GS_COMPACT_ALIGNED : 0) |
                                     (run->values_in.address % 16 == 0 ? GS_COMPACT_VALUES_ALIGNED : 0),
                            .program_length = selects ? run->program_length : 0,
                            .prev_lo = (uint32_t)run->previous_bits,
                            .prev_hi = (uint32_t)(run->previous_bits >> 32)};
    rc = gs_kernel_dispatch(c->dev, cb, &c->kernel, &push, tiles);
    if (rest) { /* this half's first tiles are dirty, and the other's zeroed */
      rest->zeroed_tiles[half] = 0;
      if (rest->zeroed_tiles[1 - half] < tiles) rest->zeroed_tiles[1 - half] = tiles;
      rest->half = 1 - half;
    }
  }
  if (rc && rest) *rest = (gs_compact_rest){0};
  if (ts) gs_timestamps_write(cb, ts, 1);
  return rc;
}
