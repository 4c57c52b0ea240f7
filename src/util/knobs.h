/* Every environment variable gpusort reads, read in one place, once per process.
 *
 * None is needed in normal use: they override the per-device configuration for tuning
 * experiments, or push the code onto paths and limits that tests must reach on small inputs
 * (README, "Test and tuning knobs"). A numeric knob that is unset, empty, 0 or not a number
 * counts as unset (0 here); a flag knob is on when set to anything but "" or "0". */
#ifndef GS_UTIL_KNOBS_H
#define GS_UTIL_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { GS_GATHER_AUTO, GS_GATHER_HOST, GS_GATHER_GPU } gs_gather_choice;

#define GS_KNOB_UNSET UINT32_MAX /* a knob left to the device's configuration */
#define GS_KNOB_SMALL_TILES 4    /* small-sort tiles a knob gives at most */

typedef struct {
  /* Tuning: override the device's configuration (src/prim/device_config.c). */
  uint32_t subgroup_size;        /* GPUSORT_SUBGROUP_SIZE */
  uint32_t sort_workgroup;       /* GPUSORT_SORT_WORKGROUP */
  uint32_t sort_keys_per_thread; /* GPUSORT_SORT_KEYS_PER_THREAD */
  uint32_t scan_workgroup;       /* GPUSORT_SCAN_WORKGROUP */
  uint32_t scan_rows;            /* GPUSORT_SCAN_ROWS */
  uint32_t scan_early_walk;      /* GPUSORT_SCAN_EARLY_WALK=0|1, else GS_KNOB_UNSET */
  uint32_t scan_read_ahead_kib;  /* GPUSORT_SCAN_READ_AHEAD_KIB (0: none); GS_KNOB_UNSET if unset */
  uint32_t compact_subtiles;     /* GPUSORT_COMPACT_SUBTILES */
  uint32_t compact_read_ahead_kib; /* GPUSORT_COMPACT_READ_AHEAD_KIB (0: none); GS_KNOB_UNSET if unset */
  uint32_t compact_subgroup_walk; /* GPUSORT_COMPACT_SUBGROUP_WALK=0|1, else GS_KNOB_UNSET */
  uint32_t compact_early_walk;   /* GPUSORT_COMPACT_EARLY_WALK=0|1|members: GPUSORT_EARLY_WALK_* bits, else GS_KNOB_UNSET */
  uint32_t histogram_groups;     /* GPUSORT_HISTOGRAM_GROUPS: workgroups of the sort's histogram at most */
  uint32_t lookback_spin;        /* GPUSORT_LOOKBACK_SPIN: 1 makes every look-back wait fall back */
  uint32_t sort_hold_keys;       /* GPUSORT_SORT_HOLD_KEYS=0|1, else GS_KNOB_UNSET */
  uint32_t sort_early_counts;    /* GPUSORT_SORT_EARLY_COUNTS=0|1, else GS_KNOB_UNSET */
  uint32_t sort_split_maps;      /* GPUSORT_SORT_SPLIT_MAPS=0|1, else GS_KNOB_UNSET */
  uint32_t sort_float_fewer_keys; /* GPUSORT_SORT_FLOAT_FEWER_KEYS=0|1, else GS_KNOB_UNSET */
  /* GPUSORT_SORT_SMALL_TILES=WxK[,WxK...][@T]: the tiles of small sorts, smallest first, and
   * how many tiles a sort must fill to take the next larger one (T, default 128); "0": none.
   * small_tile_count: GS_KNOB_UNSET when unset (the device's configuration), 0 for none. */
  uint32_t sort_small_tile_count;
  uint32_t sort_small_tiles[GS_KNOB_SMALL_TILES][2]; /* invocations, keys per invocation */
  uint32_t sort_small_min_tiles;
  /* GPUSORT_SCAN_SMALL_ROWS=R[@T]: the rows of small look-back scans' tiles, taken by scans of
   * capacity below T (default 256) of their own tiles; "0": none. scan_small_rows: GS_KNOB_UNSET
   * when unset. */
  uint32_t scan_small_rows, scan_small_min_tiles;
  uint64_t submit_keys;          /* GPUSORT_SUBMIT_KEYS: keys per submission of a sort pass (segments) */
  uint32_t threads;              /* GPUSORT_THREADS: host worker threads */
  uint64_t chunk_bytes;          /* GPUSORT_CHUNK_BYTES: staging slot size */
  bool graphics_queue;           /* GPUSORT_QUEUE=graphics: prefer the universal queue family */
  bool no_pipeline_cache;        /* GPUSORT_PIPELINE_CACHE=0: no pipeline cache on disk */
  bool no_host_import;           /* GPUSORT_HOST_IMPORT=0: every transfer through staging buffers */
  /* Tests: limits and paths reached on small inputs. */
  uint64_t max_buffer_bytes;     /* GPUSORT_MAX_BINDING_BYTES: largest data array of one buffer */
  uint32_t max_shared_bytes;     /* GPUSORT_MAX_SHARED_BYTES: shared memory of one workgroup */
  uint32_t max_workgroups;       /* GPUSORT_MAX_WORKGROUPS: dispatch limit in x (folded dispatches) */
  bool scan_split;               /* GPUSORT_SCAN_SPLIT: split scan descriptors on every device */
  gs_gather_choice record_gather; /* GPUSORT_RECORD_GATHER=host|gpu */
  bool test_corrupt;             /* GPUSORT_TEST_CORRUPT: damage each sort's output (--verify tests) */
  uint64_t test_fail_alloc_bytes; /* GPUSORT_TEST_FAIL_ALLOC_BYTES: device memory allocations larger
                                     than this fail as out of device memory */
  uint64_t test_u32_count_max;   /* GPUSORT_TEST_U32_COUNT_MAX: the longest run rle's u32 counts take
                                    across chunks (instead of 2^32 - 1) */
  /* Development. */
  bool validation;               /* GPUSORT_VALIDATION: the Khronos validation layer, any message
                                    counted (tests fail on them) */
  bool pipeline_stats;           /* GPUSORT_PIPELINE_STATS: print each pipeline's compiler statistics */
  bool trace;                    /* GPUSORT_TRACE: print timed events of the host path (util/trace.h) */
} gs_knobs;

const gs_knobs *gs_knobs_get(void);

#endif
