/* The one place that chooses how gpusort runs on a device: subgroup size, tile shapes and
 * look-back patience, from the device's vendor, driver and limits (a table of presets, as
 * CUB keeps per-architecture policies), with a generic preset for devices not in the table.
 * GPUSORT_* tuning knobs (src/util/knobs.h) override single values for experiments.
 * `gpusort devices -v` prints the choice. */
#ifndef GS_PRIM_DEVICE_CONFIG_H
#define GS_PRIM_DEVICE_CONFIG_H

#include "vk/device.h"

/* Sort algorithms (src/prim/radix_sort.h); the values are gpusort_sort_algo's. */
typedef enum { GS_SORT_AUTO, GS_SORT_ONESWEEP, GS_SORT_REDUCE_THEN_SCAN, GS_SORT_BITONIC } gs_sort_algo;

/* The sort's layouts, for choices made per layout. */
enum {
  GS_SORT_LAYOUT_KEYS32 = 1u << 0,     /* 32-bit keys alone */
  GS_SORT_LAYOUT_PAIRS32_32 = 1u << 1, /* 32-bit keys with 32-bit values (or indices) */
  GS_SORT_LAYOUT_PAIRS32_64 = 1u << 2, /* 32-bit keys with 64-bit values */
  GS_SORT_LAYOUT_KEYS64 = 1u << 3,     /* 64-bit keys alone */
  GS_SORT_LAYOUT_PAIRS64 = 1u << 4,    /* 64-bit keys with values */
  GS_SORT_LAYOUT_ALL = (1u << 5) - 1u
};

typedef struct {
  char preset[64];                  /* "nvidia", "lavapipe", "generic", + " (tuned by GPUSORT_*)" */
  uint32_t subgroup_size;           /* pinned for every pipeline */
  uint32_t sort_workgroup_size;     /* digit-binning tile of 32-bit keys: invocations ... */
  uint32_t sort_workgroup_size_wide; /* ... of 64-bit keys */
  uint32_t sort_keys_per_thread;    /* ... x keys each, for 32-bit keys alone */
  uint32_t sort_workgroup_size_pairs; /* 32-bit keys with 64-bit values: invocations ... */
  uint32_t sort_keys_per_thread_pairs; /* ... x keys each */
  uint32_t sort_workgroup_size_narrow_pairs; /* 32-bit keys with 32-bit values (or indices): invocations ... */
  uint32_t sort_keys_per_thread_narrow_pairs; /* ... x keys each */
  uint32_t sort_keys_per_thread_wide; /* ... for 64-bit keys alone */
  uint32_t sort_keys_per_thread_wide_pairs; /* ... for 64-bit keys with values (or record indices) */
  bool sort_hold_keys;              /* keys wait in shared memory while ranked: fewer registers */
  uint32_t sort_early_counts;       /* the layouts (GS_SORT_LAYOUT_*) whose tiles publish their digit
                                     * counts before ranking their keys (radix_onesweep.comp) */
  uint32_t scan_workgroup_size;
  uint32_t scan_rows;               /* 16-byte vectors per invocation of a scan tile (a widened
                                     * accumulator's scan takes at most 8) */
  uint32_t compact_workgroup_size;  /* the look-back family's, before each mode's cap (compact.c) */
  uint32_t compact_subtiles;        /* sub-tiles of select and partition per look-back (compact.c) */
  uint32_t lookback_spin;           /* polls of an empty descriptor before recounting */
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
