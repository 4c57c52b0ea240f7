/* The one place that chooses how gpusort runs on a device: subgroup size, tile shapes and
 * look-back patience, from the device's vendor, driver and limits (a table of presets, as
 * CUB keeps per-architecture policies), with a generic preset for devices not in the table.
 * GPUSORT_* tuning knobs (src/util/knobs.h) override single values for experiments.
 * `gpusort devices -v` prints the choice. */
#ifndef GS_PRIM_DEVICE_CONFIG_H
#define GS_PRIM_DEVICE_CONFIG_H

#include "gpusort.h" /* (GPUSORT_EARLY_WALK_*) */
#include "vk/device.h"

/* Sort algorithms (src/prim/radix_sort.h); the values are gpusort_sort_algo's. */
typedef enum { GS_SORT_AUTO, GS_SORT_ONESWEEP, GS_SORT_REDUCE_THEN_SCAN, GS_SORT_BITONIC } gs_sort_algo;

/* The sort's layouts, for choices made per layout: an index into per-layout tables, and a bit
 * (GS_SORT_LAYOUT_BIT) in per-layout sets. */
typedef enum {
  GS_SORT_KEYS32,     /* 32-bit keys alone */
  GS_SORT_PAIRS32_32, /* 32-bit keys with 32-bit values (or indices) */
  GS_SORT_PAIRS32_64, /* 32-bit keys with 64-bit values */
  GS_SORT_KEYS64,     /* 64-bit keys alone */
  GS_SORT_PAIRS64,    /* 64-bit keys with values */
  GS_SORT_LAYOUTS
} gs_sort_layout;
#define GS_SORT_LAYOUT_BIT(layout) (1u << (layout))
#define GS_SORT_LAYOUT_ALL ((1u << GS_SORT_LAYOUTS) - 1u)

/* The layout of keys of key_bytes (4 or 8) with values of value_bytes (0: none). */
gs_sort_layout gs_sort_layout_of(unsigned key_bytes, unsigned value_bytes);

/* A digit-binning tile (radix_onesweep.comp): invocations x keys each. */
#define GS_SORT_SMALL_TILES 4 /* tiles of small sorts at most */
typedef struct {
  uint32_t workgroup_size, keys_per_thread;
} gs_sort_tile;

typedef struct {
  char preset[64];                  /* "nvidia", "lavapipe", "generic", + " (tuned by GPUSORT_*)" */
  uint32_t subgroup_size;           /* pinned for every pipeline */
  gs_sort_tile sort_tiles[GS_SORT_LAYOUTS]; /* per layout (fewer keys where shared memory is short:
                                             * src/prim/radix_sort.c) */
  /* Tiles for small sorts, smallest first, for every layout (Onesweep only): a sort of capacity
   * n takes, of those smaller than its layout's own tile and that tile, the largest that still
   * leaves it sort_small_min_tiles tiles, or the smallest; so a few keys still spread over the
   * device, and a tile's serial work is short (src/prim/radix_sort.c). */
  gs_sort_tile sort_small_tiles[GS_SORT_SMALL_TILES];
  uint32_t sort_small_tile_count;
  uint32_t sort_small_min_tiles;
  uint32_t sort_hold_keys;          /* the layouts whose keys wait in shared memory while they are
                                     * ranked (fewer registers, smaller tiles) */
  uint32_t sort_early_counts;       /* the layouts whose tiles publish their digit counts before
                                     * ranking their keys (radix_onesweep.comp) */
  uint32_t sort_split_maps;         /* the layouts whose first and last passes of keys that are
                                     * mapped (signed, float, descending) take pipelines of their
                                     * own (radix_onesweep.comp's PASS_MAPS) */
  uint32_t sort_float_fewer_keys;   /* the layouts whose float keys take one key an invocation
                                     * fewer than the layout's tile (src/prim/radix_sort.c) */
  uint32_t scan_workgroup_size;
  uint32_t scan_rows;               /* 16-byte vectors per invocation of a scan tile (a widened
                                     * accumulator's scan takes at most 8) */
  uint32_t scan_small_rows;         /* rows of small look-back scans' tiles (0: none): a scan of
                                     * capacity below scan_small_min_tiles of its own tiles takes
                                     * them (src/prim/scan.c) */
  uint32_t scan_small_min_tiles;
  uint32_t compact_workgroup_size;  /* the look-back family's, before each mode's cap (compact.c) */
  uint32_t compact_subtiles;        /* sub-tiles of select and partition per look-back (compact.c) */
  uint32_t compact_read_ahead_kib;  /* select and partition: how far past its own tile a tile reads
                                     * the input into cache before its look-back (0: none) */
  uint32_t compact_early_walk;      /* GPUSORT_EARLY_WALK_* bits: the members of the look-back
                                     * family (unique, rle, reduce-by-key) whose tiles' subgroup 0
                                     * walks the look-back while the others load the tile's keys
                                     * (compact.c) */
  bool compact_subgroup_walk;       /* the look-back family's tiles that walk after loading theirs:
                                     * subgroup 0 walks for the count while the others wait (and
                                     * rle's and reduce-by-key's value walk runs beside it), instead
                                     * of the whole workgroup (compact.comp's walk_for_count) */
  bool compact_runs_subgroup_walk;  /* whether rle's and reduce-by-key's tiles take that walk where
                                     * it is asked for (false: they walk by the workgroup whatever
                                     * compact_subgroup_walk says; src/prim/device_config.c) */
  bool scan_early_walk;             /* the look-back scan: subgroup 0 of a tile walks the look-back
                                     * while the others load the tile's elements (scan.c) */
  uint32_t scan_read_ahead_kib;     /* the look-back scan's early walk: how far past its own tile
                                     * the walker reads the input into cache as it walks (0: none,
                                     * and always without the walk) */
  uint32_t lookback_spin;           /* polls of an empty descriptor before recounting */
  uint32_t histogram_groups;        /* workgroups of the sort's histogram pass at most, each
                                     * taking tiles in turn (src/prim/radix_sort.c) */
  /* Keys one submission's sort pass covers at most, about a quarter of a second of work on
   * the device (desktop watchdogs reset a GPU after about two seconds); 0: no bound. */
  uint64_t submit_keys;
  /* Whether a workgroup spinning on another's result is sure to see it come: Onesweep's
   * look-back needs that (it has a bounded fallback, but the fallback is slow); without it
   * `auto` sorts by reduce-then-scan. */
  bool forward_progress;
  /* Whether `auto` sorts beyond the bitonic crossover by Onesweep (forward progress, and
   * Onesweep the faster there); else by reduce-then-scan. */
  bool auto_onesweep;
  uint64_t bitonic_max_keys; /* `auto` sorts up to this many keys by bitonic sort (measured crossover) */
} gs_device_config;

/* The configuration for a device gs_device_probe described. */
void gs_device_config_choose(const gs_device_info *info, gs_device_config *config);

/* The algorithm a sort of up to n keys runs with: `requested`, or for GS_SORT_AUTO bitonic up
 * to the device's crossover, then Onesweep where the device has forward progress (and
 * Onesweep is the faster there) and reduce-then-scan where it does not. */
gs_sort_algo gs_sort_algo_for(const gs_device_config *config, gs_sort_algo requested, uint64_t n);

/* "auto", "onesweep", "reduce-then-scan", "bitonic"; NULL for no algorithm. */
const char *gs_sort_algo_name(gs_sort_algo algo);

#endif
