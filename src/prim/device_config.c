#include "prim/device_config.h"

#include <stdio.h>
#include <string.h>

#include "util/knobs.h"

enum { ANY = 0 };

/* Presets, first match wins. Tiles of 16 subgroups; sort tiles of 9 keys per invocation for
 * 32-bit keys with or without values, 5 for 64-bit keys with or without, 16 on lavapipe. On
 * NVIDIA each layout has its own tile (invocations x keys, held or in registers, early counts
 * or not): 32-bit keys alone 256 x 28 in registers, with early counts; with 32-bit values 384
 * x 27 (float keys 384 x 26), the keys in registers and the values loaded after the look-back,
 * with early counts; with 64-bit values 512 x 10, held (as many as shared memory holds); 64-bit
 * keys alone 384 x 18 in registers, staged a half at a time, with early counts; 64-bit keys
 * with values 384 x 13 in registers, with early counts. The AMD and Intel rows carry the
 * earlier shapes at 32 lanes, unmeasured (but 32-bit keys with 64-bit values take the pairs'
 * 9 keys, 5 before 0.7.2). */
/* NVIDIA, occupancy: the driver gives a compute pipeline about 100 KiB of shared memory per SM,
 * not the 228 the SM has, so three workgroups share an SM only when each takes at most about
 * 33 KiB, whatever their registers allow. Two workgroups of 512 share an SM at up to 64
 * registers, two of 384 at up to 80; past that one workgroup runs an SM and the sort slows
 * sharply. Each tile is the fastest shape measured within these bounds.
 * (doc/tuning.md, "Presets: shared memory and occupancy on NVIDIA") */
/* NVIDIA, 32-bit keys alone: 256 x 28 in registers with early counts, each digit taken twice
 * (radix_onesweep.comp's rank_shift), at 79 registers. It is the fastest shape measured, and
 * faster than the held tiles (H200, 2^28 u32 keys: 5.66 ms against 6.32 held at 384 x 20).
 * (doc/tuning.md, "Presets: 32-bit keys alone on NVIDIA") */
/* NVIDIA, keys in registers: only the staged tile takes shared memory, where held 64-bit keys
 * and their counters fill the 48 KiB at 384 x 10. So 64-bit keys, with or without values, sort
 * in registers, and their tiles are bounded by registers instead.
 * (doc/tuning.md, "Presets: keys in registers or held on NVIDIA") */
/* NVIDIA, 64-bit keys alone: 384 x 18 in registers with early counts. The staged tile takes a
 * 32-bit half of each key at a time (radix_onesweep.comp's STAGE_HALVES), which leaves 80
 * registers and 32,824 bytes of shared memory: two workgroups an SM, about as fast as CUB.
 * Larger tiles take too many registers for two workgroups an SM.
 * (doc/tuning.md, "Presets: 64-bit keys alone on NVIDIA") */
/* NVIDIA, 64-bit keys with values: 384 x 13 in registers with early counts, at 78 registers,
 * two workgroups an SM; faster than CUB at 2^24 to 2^28 (H200). Staging the pairs a 32-bit half
 * at a time was slower. (doc/tuning.md, "Presets: 64-bit keys with values on NVIDIA") */
/* NVIDIA, 32-bit keys with 32-bit values: 384 x 27 in registers with early counts, at 80
 * registers, the most that lets two workgroups of 384 share an SM; it fits there once the copy
 * pass (radix_onesweep.comp) stores from row pointers too. Float keys take a key fewer (384 x 26,
 * float_fewer_keys): at 27 the passes that map them take 81 registers and one workgroup an SM.
 * (doc/tuning.md, "Presets: 32-bit keys with 32-bit values on NVIDIA") */
/* NVIDIA, early counts (radix_onesweep.comp's EARLY_COUNTS): a tile's digit counts are counted
 * and published before its keys are ranked, which takes fewer registers. Every layout in
 * registers takes them; the held 32-bit keys with 64-bit values are faster without.
 * (doc/tuning.md, "Presets: early counts on NVIDIA") */
/* hold_keys (NVIDIA only, the one measured): the keys wait in shared memory while they are
 * ranked (radix_onesweep.comp), which leaves registers for more keys. Held, the tile needs up
 * to 48 KiB of shared memory: a device with 32 KiB would get fewer keys per invocation. On
 * NVIDIA only 32-bit keys with 64-bit values stay held (512 x 10): in registers they sort
 * slower. (doc/tuning.md, "Presets: held keys on NVIDIA") */
/* NVIDIA, scan tiles: 512 x 11 rows. 64 registers is the most that lets two workgroups of 512
 * share an SM, and at 2^24 u32 elements 11 rows fill 3.0 rounds of two workgroups an SM where
 * 12 leave the last of 2.8 rounds part-filled. (doc/tuning.md, "Presets: scan tiles on NVIDIA") */
/* NVIDIA, the look-back family takes 1024 invocations before its own caps (src/prim/compact.c).
 * GPUSORT_SCAN_WORKGROUP sets both its workgroup and the scan's.
 * (doc/tuning.md, "Presets: look-back family workgroup on NVIDIA") */
/* Select and partition take tiles of 2 sub-tiles (compact.comp) on NVIDIA and on lavapipe,
 * faster than tiles of one on both. (doc/tuning.md, "Presets: select and partition sub-tiles") */
/* NVIDIA's small sorts take tiles of 256 x 4, 256 x 8 and 512 x 8 keys, each once 128 tiles
 * fill it: a pass of few tiles is the serial work of one tile, and the layouts' tiles of 5000
 * to 7700 keys leave 2^16 keys 9 to 13 tiles.
 * (doc/tuning.md, "Presets: small sort tiles on NVIDIA") */
/* NVIDIA's small look-back scans take tiles of 4 rows (512 x 4 vectors, 8192 u32 elements)
 * below 256 of their own tiles, where they are faster than the large tile.
 * (doc/tuning.md, "Presets: small scan tiles on NVIDIA") */
/* NVIDIA's sort histogram runs in at most 1056 workgroups, as many as an H200 or H100 holds at
 * once (132 multiprocessors x 8 of 256), where others keep 4096: fewer workgroups clear and add
 * up fewer copies of the histograms. Fewer again were no faster.
 * (doc/tuning.md, "Presets: sort histogram workgroups on NVIDIA") */
/* NVIDIA's rle and reduce-by-key never take the look-back family's subgroup walk
 * (runs_subgroup_walk_wrong; compact.comp's walk_for_count), not even where
 * GPUSORT_COMPACT_SUBGROUP_WALK asks for it: on an H100 their tiles read wrong counts by it.
 * `test_compact matrix u32 only:select` checks this bound on the device it runs on.
 * (doc/tuning.md, "Presets: rle and reduce-by-key subgroup walk on NVIDIA") */
/* lavapipe runs subgroups of 8 only and keeps its keys in registers. Every shared-memory access
 * there is a loop over the lanes, and a tile's per-digit work (counters of every subgroup,
 * look-back, digit starts) is paid per tile, so the tile is long: 128 x 16, for 64-bit keys
 * too. (doc/tuning.md, "Presets: sort tiles on lavapipe") */
typedef struct {
  const char *name;
  uint32_t vendor_id; /* ANY, or PCI vendor */
  uint32_t driver_id; /* ANY, or the driver (VkDriverId) */
  uint32_t subgroup_size;
  gs_sort_tile sort[GS_SORT_LAYOUTS]; /* per layout; a workgroup of 0: 16 subgroups */
  uint32_t hold_keys;    /* the layouts whose keys wait in shared memory while ranked */
  uint32_t early_counts; /* the layouts whose tiles count and publish their digits before ranking
                          * their keys (radix_onesweep.comp's EARLY_COUNTS) */
  uint32_t split_maps;   /* the layouts whose first and last passes take pipelines of their own */
  /* the layouts whose float keys' tiles hold a key an invocation fewer */
  uint32_t float_fewer_keys;
  gs_sort_tile small[GS_SORT_SMALL_TILES]; /* tiles of small sorts, smallest first (none: {0}) */
  uint32_t small_min_tiles;
  uint32_t scan_small_rows, scan_small_min_tiles; /* small look-back scans' rows (0: none) */
  uint32_t scan_workgroup, scan_rows, spin;
  uint32_t histogram_groups; /* 0: 4096 */
  uint64_t submit_keys;
  bool forward_progress, onesweep;
  uint64_t bitonic_max_keys;
  uint32_t compact_workgroup; /* the look-back family's workgroup; 0: the scan's */
  uint32_t compact_subtiles;  /* sub-tiles per look-back of select and partition (0: 1) */
  uint32_t compact_read_ahead_kib; /* select's and partition's read-ahead (0: none) */
  uint32_t compact_early_walk;     /* GPUSORT_EARLY_WALK_*: a subgroup walks while the others load */
  bool compact_subgroup_walk;      /* the others' count walk by subgroup 0 (compact.comp's walk_for_count) */
  bool runs_subgroup_walk_wrong;   /* rle and reduce-by-key read wrong counts by that walk: never taken */
  bool scan_early_walk;            /* the look-back scan: a subgroup walks while the others load */
  uint32_t scan_read_ahead_kib;    /* ... and reads the input this far ahead as it walks (0: none) */
} preset;

/* submit_keys: lavapipe runs a sort pass at about 15 M keys/s on two cores (2^22 keys: a
 * quarter of a second); a discrete GPU of these vendors at billions, so a pass of 2^32 keys
 * takes milliseconds and needs no bound; a device unknown to the table might be a slow
 * integrated one. */
/* forward_progress: the mobile and Apple GPUs below are known not to promise that a spinning
 * workgroup lets an earlier one run (Onesweep's look-back hung or crawled on them in other
 * projects), so `auto` sorts by reduce-then-scan there. */
/* onesweep: with forward progress, whether `auto` takes Onesweep (else reduce-then-scan). Not on
 * lavapipe: its look-back walks and waits over 256 digits per tile, each access a loop over the
 * lanes, where reduce-then-scan's upsweep and table scan cost less.
 * (doc/tuning.md, "Presets: Onesweep or reduce-then-scan on lavapipe") */
/* bitonic_max_keys: the crossover below which `auto` sorts by bitonic sort. lavapipe's is the
 * higher: bitonic needs one pipeline where Onesweep needs five, and lavapipe compiles each as
 * the device opens. (doc/tuning.md, "Presets: bitonic crossover") */
/* split_maps: the first and last passes of mapped keys (signed, float or descending) in
 * pipelines that map only in or only out, with no test of the pass flags. On NVIDIA only 64-bit
 * keys alone take them: i64 keys' pipeline for both takes 86 registers (one workgroup an SM),
 * the split ones 80. 32-bit keys lost by it, and 64-bit keys with values gained little or lost.
 * (doc/tuning.md, "Presets: split maps on NVIDIA") */
#define BIT GS_SORT_LAYOUT_BIT
/* One workgroup for every layout, keys32 keys each for 32-bit keys (with or without values),
 * keys64 for 64-bit keys: the presets measured no further than their first shapes. */
#define TILES_OF(workgroup, keys32, keys64)                                                      \
  {[GS_SORT_KEYS32] = {workgroup, keys32}, [GS_SORT_PAIRS32_32] = {workgroup, keys32},          \
   [GS_SORT_PAIRS32_64] = {workgroup, keys32}, [GS_SORT_KEYS64] = {workgroup, keys64},           \
   [GS_SORT_PAIRS64] = {workgroup, keys64}}
static const preset presets[] = {
    {.name = "nvidia", .vendor_id = 0x10DE, .driver_id = ANY, .subgroup_size = 32,
     .sort = {[GS_SORT_KEYS32] = {256, 28}, [GS_SORT_PAIRS32_32] = {384, 27}, [GS_SORT_PAIRS32_64] = {512, 10},
              [GS_SORT_KEYS64] = {384, 18}, [GS_SORT_PAIRS64] = {384, 13}},
     .hold_keys = BIT(GS_SORT_PAIRS32_64),
     .early_counts = BIT(GS_SORT_KEYS32) | BIT(GS_SORT_PAIRS32_32) | BIT(GS_SORT_KEYS64) | BIT(GS_SORT_PAIRS64),
     .split_maps = BIT(GS_SORT_KEYS64), .float_fewer_keys = BIT(GS_SORT_PAIRS32_32),
     .scan_workgroup = 512, .scan_rows = 11, .spin = 256, .submit_keys = 0, .forward_progress = true, .onesweep = true,
     .bitonic_max_keys = 1u << 12, .compact_workgroup = 1024, .compact_subtiles = 2, .histogram_groups = 1056,
     .compact_read_ahead_kib = 8192, .compact_early_walk = GPUSORT_EARLY_WALK_UNIQUE | GPUSORT_EARLY_WALK_RLE,
     .runs_subgroup_walk_wrong = true, .scan_early_walk = true,
     .scan_read_ahead_kib = 8192, .small = {{256, 4}, {256, 8}, {512, 8}}, .small_min_tiles = 128, .scan_small_rows = 4,
     .scan_small_min_tiles = 256},
    {.name = "amd", .vendor_id = 0x1002, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(512, 9, 5),
     .scan_workgroup = 512, .scan_rows = 8, .spin = 256, .submit_keys = 0, .forward_progress = true, .onesweep = true},
    {.name = "intel", .vendor_id = 0x8086, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(512, 9, 5),
     .scan_workgroup = 512, .scan_rows = 8, .spin = 256, .submit_keys = 1u << 26, .forward_progress = true,
     .onesweep = true},
    {.name = "lavapipe", .vendor_id = ANY, .driver_id = VK_DRIVER_ID_MESA_LLVMPIPE, .subgroup_size = 8,
     .sort = TILES_OF(128, 16, 16),
     .scan_workgroup = 128, .scan_rows = 8, .spin = 256, .submit_keys = 1u << 22, .forward_progress = true,
     .onesweep = false, .bitonic_max_keys = 1u << 14, .compact_subtiles = 2, .compact_subgroup_walk = true},
    {.name = "apple", .vendor_id = 0x106B, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 26, .forward_progress = false, .onesweep = true},
    {.name = "arm", .vendor_id = 0x13B5, .driver_id = ANY, .subgroup_size = 16, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "qualcomm", .vendor_id = 0x5143, .driver_id = ANY, .subgroup_size = 64, .sort = TILES_OF(0, 9, 5),
     .scan_rows = 8, .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "imagination", .vendor_id = 0x1010, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5),
     .scan_rows = 8, .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "generic", .vendor_id = ANY, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 26, .forward_progress = true, .onesweep = true}, /* 0: 16 subgroups of the size the device runs */
};
#undef TILES_OF
#undef BIT

static uint32_t clamp_subgroup(const gs_device_info *info, uint32_t want) {
  if (want < info->min_subgroup_size) return info->min_subgroup_size;
  if (want > info->max_subgroup_size) return info->max_subgroup_size;
  return want;
}

/* The preset's workgroup (`want`), else 16 subgroups up to 512 invocations; at least 64, within
 * the device's limits. (At least 64: llvmpipe in Mesa 22.3 computed wrong results for
 * workgroups of 2 to 6 subgroups of 8.) */
static uint32_t workgroup_for(const gs_device_info *info, uint32_t subgroup, uint32_t want) {
  uint32_t wg = want ? want : subgroup * 16;
  if (!want && wg > 512) wg = 512;
  if (wg < 64) wg = 64;
  const uint32_t limit = gs_workgroup_limit(info, subgroup);
  while (wg > limit && wg > subgroup) wg /= 2;
  return wg - wg % subgroup; /* (384 halves to 48, not whole subgroups of 32) */
}

/* A set of layouts from an on/off knob: every layout, none, or (unset) the preset's. */
static uint32_t layouts_switched(uint32_t knob, uint32_t preset_layouts) {
  return knob == GS_KNOB_UNSET ? preset_layouts : knob ? GS_SORT_LAYOUT_ALL : 0;
}

void gs_device_config_choose(const gs_device_info *info, gs_device_config *c) {
  const preset *p = &presets[sizeof presets / sizeof presets[0] - 1];
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    if ((presets[i].vendor_id == ANY || presets[i].vendor_id == info->vendor_id) &&
        (presets[i].driver_id == ANY || presets[i].driver_id == (uint32_t)info->driver_id)) {
      p = &presets[i];
      break;
    }
  }
  const gs_knobs *k = gs_knobs_get();
  memset(c, 0, sizeof *c);
  c->subgroup_size = clamp_subgroup(info, k->subgroup_size ? k->subgroup_size : p->subgroup_size);
  for (int l = 0; l < GS_SORT_LAYOUTS; l++) {
    gs_sort_tile *t = &c->sort_tiles[l];
    t->workgroup_size = k->sort_workgroup ? k->sort_workgroup : workgroup_for(info, c->subgroup_size, p->sort[l].workgroup_size);
    t->keys_per_thread = k->sort_keys_per_thread ? k->sort_keys_per_thread : p->sort[l].keys_per_thread;
  }
  /* small sorts: the knob's tiles, else none where a knob fixed the tile, else the preset's */
  if (k->sort_small_tile_count != GS_KNOB_UNSET) {
    c->sort_small_tile_count = k->sort_small_tile_count;
    for (uint32_t i = 0; i < c->sort_small_tile_count; i++)
      c->sort_small_tiles[i] = (gs_sort_tile){k->sort_small_tiles[i][0], k->sort_small_tiles[i][1]};
    c->sort_small_min_tiles = k->sort_small_min_tiles;
  } else if (!k->sort_workgroup && !k->sort_keys_per_thread) {
    for (uint32_t i = 0; i < GS_SORT_SMALL_TILES && p->small[i].keys_per_thread; i++)
      c->sort_small_tiles[c->sort_small_tile_count++] =
          (gs_sort_tile){workgroup_for(info, c->subgroup_size, p->small[i].workgroup_size), p->small[i].keys_per_thread};
    c->sort_small_min_tiles = p->small_min_tiles;
  }
  if (!c->sort_small_min_tiles) c->sort_small_min_tiles = 128;
  c->sort_hold_keys = layouts_switched(k->sort_hold_keys, p->hold_keys);
  c->sort_early_counts = layouts_switched(k->sort_early_counts, p->early_counts);
  c->sort_split_maps = layouts_switched(k->sort_split_maps, p->split_maps);
  /* (a knob's keys per invocation hold for every sort unless this knob asks too) */
  c->sort_float_fewer_keys =
      layouts_switched(k->sort_float_fewer_keys, k->sort_keys_per_thread ? 0 : p->float_fewer_keys);
  c->scan_workgroup_size = k->scan_workgroup ? k->scan_workgroup : workgroup_for(info, c->subgroup_size, p->scan_workgroup);
  c->scan_rows = k->scan_rows ? k->scan_rows : p->scan_rows;
  /* small scans: the knob's rows, else none where a knob fixed the tile, else the preset's */
  if (k->scan_small_rows != GS_KNOB_UNSET) {
    c->scan_small_rows = k->scan_small_rows;
    c->scan_small_min_tiles = k->scan_small_min_tiles;
  } else if (!k->scan_workgroup && !k->scan_rows) {
    c->scan_small_rows = p->scan_small_rows;
    c->scan_small_min_tiles = p->scan_small_min_tiles;
  }
  if (!c->scan_small_min_tiles) c->scan_small_min_tiles = 256;
  c->compact_workgroup_size = k->scan_workgroup       ? k->scan_workgroup
                              : p->compact_workgroup ? workgroup_for(info, c->subgroup_size, p->compact_workgroup)
                                                     : c->scan_workgroup_size;
  c->compact_subtiles = k->compact_subtiles ? k->compact_subtiles : p->compact_subtiles ? p->compact_subtiles : 1;
  c->compact_read_ahead_kib = k->compact_read_ahead_kib != GS_KNOB_UNSET ? k->compact_read_ahead_kib : p->compact_read_ahead_kib;
  c->compact_early_walk = k->compact_early_walk != GS_KNOB_UNSET ? k->compact_early_walk : p->compact_early_walk;
  c->compact_subgroup_walk =
      k->compact_subgroup_walk != GS_KNOB_UNSET ? k->compact_subgroup_walk != 0 : p->compact_subgroup_walk;
  /* (a correctness bound, not a tuning: no knob lifts it) */
  c->compact_runs_subgroup_walk = !p->runs_subgroup_walk_wrong;
  c->scan_early_walk = k->scan_early_walk != GS_KNOB_UNSET ? k->scan_early_walk != 0 : p->scan_early_walk;
  /* (the walker reads ahead: without the walk, none) */
  c->scan_read_ahead_kib = !c->scan_early_walk                         ? 0
                           : k->scan_read_ahead_kib != GS_KNOB_UNSET ? k->scan_read_ahead_kib
                                                                     : p->scan_read_ahead_kib;
  c->lookback_spin = k->lookback_spin ? k->lookback_spin : p->spin;
  c->histogram_groups = k->histogram_groups ? k->histogram_groups : p->histogram_groups ? p->histogram_groups : 4096;
  c->submit_keys = k->submit_keys ? k->submit_keys : p->submit_keys;
  c->forward_progress = p->forward_progress;
  c->auto_onesweep = p->forward_progress && p->onesweep;
  c->bitonic_max_keys = p->bitonic_max_keys;
  const bool tuned = k->subgroup_size || k->sort_workgroup || k->sort_keys_per_thread || k->scan_workgroup ||
                     k->scan_rows || k->compact_subtiles || k->histogram_groups || k->lookback_spin || k->submit_keys ||
                     k->sort_hold_keys != GS_KNOB_UNSET || k->sort_early_counts != GS_KNOB_UNSET ||
                     k->sort_split_maps != GS_KNOB_UNSET || k->sort_float_fewer_keys != GS_KNOB_UNSET ||
                     k->sort_small_tile_count != GS_KNOB_UNSET || k->scan_small_rows != GS_KNOB_UNSET ||
                     k->compact_read_ahead_kib != GS_KNOB_UNSET || k->compact_early_walk != GS_KNOB_UNSET ||
                     k->compact_subgroup_walk != GS_KNOB_UNSET ||
                     k->scan_early_walk != GS_KNOB_UNSET || k->scan_read_ahead_kib != GS_KNOB_UNSET;
  snprintf(c->preset, sizeof c->preset, "%s%s", p->name, tuned ? " (tuned by GPUSORT_*)" : "");
}

gs_sort_layout gs_sort_layout_of(unsigned key_bytes, unsigned value_bytes) {
  if (key_bytes == 8) return value_bytes ? GS_SORT_PAIRS64 : GS_SORT_KEYS64;
  return value_bytes == 8 ? GS_SORT_PAIRS32_64 : value_bytes ? GS_SORT_PAIRS32_32 : GS_SORT_KEYS32;
}

gs_sort_algo gs_sort_algo_for(const gs_device_config *c, gs_sort_algo requested, uint64_t n) {
  if (requested != GS_SORT_AUTO) return requested;
  if (n <= c->bitonic_max_keys) return GS_SORT_BITONIC;
  return c->auto_onesweep ? GS_SORT_ONESWEEP : GS_SORT_REDUCE_THEN_SCAN;
}

const char *gs_sort_algo_name(gs_sort_algo algo) {
  static const char *const names[] = {"auto", "onesweep", "reduce-then-scan", "bitonic"};
  return (unsigned)algo < sizeof names / sizeof names[0] ? names[algo] : NULL;
}
