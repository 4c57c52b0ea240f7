#include "util/knobs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h" /* (GPUSORT_EARLY_WALK_*) */

static gs_knobs knobs;
static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

static uint64_t number(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  return *end ? 0 : (uint64_t)x;
}

static uint32_t number32(const char *name) {
  const uint64_t x = number(name);
  return x > UINT32_MAX ? 0 : (uint32_t)x;
}

static bool flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

static bool equals(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* 0 or 1 (any value but 0), or GS_KNOB_UNSET when the variable is unset or empty. */
static uint32_t switch_knob(const char *name) {
  const char *v = getenv(name);
  return v && *v ? strcmp(v, "0") != 0 : GS_KNOB_UNSET;
}

/* GPUSORT_COMPACT_EARLY_WALK: the members of the look-back family that walk early, as
 * GPUSORT_EARLY_WALK_* bits: "0" none, names separated by commas ("unique,rle") those, any
 * other value all three (as a switch knob's); GS_KNOB_UNSET when unset or empty. */
static uint32_t early_walk_knob(const char *name) {
  static const struct {
    const char *name;
    uint32_t bit;
  } members[] = {{"unique", GPUSORT_EARLY_WALK_UNIQUE},
                 {"rle", GPUSORT_EARLY_WALK_RLE},
                 {"reduce-by-key", GPUSORT_EARLY_WALK_REDUCE_BY_KEY}};
  const uint32_t all = GPUSORT_EARLY_WALK_UNIQUE | GPUSORT_EARLY_WALK_RLE | GPUSORT_EARLY_WALK_REDUCE_BY_KEY;
  const char *v = getenv(name);
  if (!v || !*v) return GS_KNOB_UNSET;
  if (strcmp(v, "0") == 0) return 0;
  uint32_t bits = 0;
  for (const char *at = v;; at++) {
    const size_t length = strcspn(at, ",");
    uint32_t bit = 0;
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
      if (strlen(members[i].name) == length && strncmp(at, members[i].name, length) == 0) bit = members[i].bit;
    if (!bit) return all;
    bits |= bit;
    at += length;
    if (*at == '\0') return bits;
  }
}

/* The "@T" that may end a small-tile knob (T: tiles, 1 to 2^20; 0 where absent): false for
 * anything else. */
static bool min_tiles_suffix(const char *at, uint32_t *tiles) {
  *tiles = 0;
  if (*at == '\0') return true;
  if (*at != '@') return false;
  char *end;
  const unsigned long t = strtoul(at + 1, &end, 10);
  if (end == at + 1 || *end || t == 0 || t > 1u << 20) return false;
  *tiles = (uint32_t)t;
  return true;
}

/* GPUSORT_SORT_SMALL_TILES: "0" (none), or up to GS_KNOB_SMALL_TILES shapes "WxK" separated
 * by commas, then optionally "@T"; anything else leaves the knob unset. */
static void small_tiles_knob(const char *name) {
  knobs.sort_small_tile_count = GS_KNOB_UNSET;
  knobs.sort_small_min_tiles = 0;
  const char *v = getenv(name);
  if (!v || !*v) return;
  if (strcmp(v, "0") == 0) {
    knobs.sort_small_tile_count = 0;
    return;
  }
  uint32_t count = 0, min_tiles;
  const char *at = v;
  for (;;) {
    char *end;
    const unsigned long w = strtoul(at, &end, 10);
    if (end == at || *end != 'x') return;
    at = end + 1;
    const unsigned long k = strtoul(at, &end, 10);
    if (end == at || w == 0 || k == 0 || w > 4096 || k > 64 || count == GS_KNOB_SMALL_TILES) return;
    knobs.sort_small_tiles[count][0] = (uint32_t)w;
    knobs.sort_small_tiles[count][1] = (uint32_t)k;
    count++;
    at = end;
    if (*at != ',') break;
    at++;
  }
  if (!min_tiles_suffix(at, &min_tiles)) return;
  knobs.sort_small_tile_count = count;
  knobs.sort_small_min_tiles = min_tiles;
}

/* A number, 0 included, or GS_KNOB_UNSET when the variable is unset, empty or not a number. */
static uint32_t number_or_unset(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return GS_KNOB_UNSET;
  char *end;
  const unsigned long long x = strtoull(v, &end, 10);
  return *end || x >= GS_KNOB_UNSET ? GS_KNOB_UNSET : (uint32_t)x;
}

/* GPUSORT_SCAN_SMALL_ROWS: "0" (none), or "R" or "R@T"; anything else leaves the knob unset. */
static void scan_small_rows_knob(const char *name) {
  knobs.scan_small_rows = GS_KNOB_UNSET;
  knobs.scan_small_min_tiles = 0;
  const char *v = getenv(name);
  if (!v || !*v) return;
  char *end;
  const unsigned long rows = strtoul(v, &end, 10);
  uint32_t tiles;
  if (end == v || rows > 32 || !min_tiles_suffix(end, &tiles)) return;
  knobs.scan_small_rows = (uint32_t)rows;
  knobs.scan_small_min_tiles = tiles;
}

static void read_knobs(void) {
  knobs.subgroup_size = number32("GPUSORT_SUBGROUP_SIZE");
  knobs.sort_workgroup = number32("GPUSORT_SORT_WORKGROUP");
  knobs.sort_keys_per_thread = number32("GPUSORT_SORT_KEYS_PER_THREAD");
  knobs.scan_workgroup = number32("GPUSORT_SCAN_WORKGROUP");
  knobs.scan_rows = number32("GPUSORT_SCAN_ROWS");
  knobs.scan_early_walk = switch_knob("GPUSORT_SCAN_EARLY_WALK");
  knobs.scan_read_ahead_kib = number_or_unset("GPUSORT_SCAN_READ_AHEAD_KIB");
  knobs.compact_subtiles = number32("GPUSORT_COMPACT_SUBTILES");
  knobs.compact_read_ahead_kib = number_or_unset("GPUSORT_COMPACT_READ_AHEAD_KIB");
  knobs.compact_subgroup_walk = switch_knob("GPUSORT_COMPACT_SUBGROUP_WALK");
  knobs.compact_early_walk = early_walk_knob("GPUSORT_COMPACT_EARLY_WALK");
  knobs.histogram_groups = number32("GPUSORT_HISTOGRAM_GROUPS");
  knobs.lookback_spin = number32("GPUSORT_LOOKBACK_SPIN");
  knobs.sort_hold_keys = switch_knob("GPUSORT_SORT_HOLD_KEYS");
  knobs.sort_early_counts = switch_knob("GPUSORT_SORT_EARLY_COUNTS");
  knobs.sort_split_maps = switch_knob("GPUSORT_SORT_SPLIT_MAPS");
  knobs.sort_float_fewer_keys = switch_knob("GPUSORT_SORT_FLOAT_FEWER_KEYS");
  small_tiles_knob("GPUSORT_SORT_SMALL_TILES");
  scan_small_rows_knob("GPUSORT_SCAN_SMALL_ROWS");
  knobs.submit_keys = number("GPUSORT_SUBMIT_KEYS");
  knobs.threads = number32("GPUSORT_THREADS");
  knobs.chunk_bytes = number("GPUSORT_CHUNK_BYTES");
  knobs.graphics_queue = equals("GPUSORT_QUEUE", "graphics");
  knobs.no_pipeline_cache = equals("GPUSORT_PIPELINE_CACHE", "0");
  knobs.no_host_import = equals("GPUSORT_HOST_IMPORT", "0");
  knobs.max_buffer_bytes = number("GPUSORT_MAX_BINDING_BYTES");
  knobs.max_shared_bytes = number32("GPUSORT_MAX_SHARED_BYTES");
  knobs.max_workgroups = number32("GPUSORT_MAX_WORKGROUPS");
  knobs.scan_split = flag("GPUSORT_SCAN_SPLIT");
  knobs.record_gather = equals("GPUSORT_RECORD_GATHER", "host")  ? GS_GATHER_HOST
                        : equals("GPUSORT_RECORD_GATHER", "gpu") ? GS_GATHER_GPU
                                                                  : GS_GATHER_AUTO;
  knobs.test_corrupt = flag("GPUSORT_TEST_CORRUPT");
  knobs.test_fail_alloc_bytes = number("GPUSORT_TEST_FAIL_ALLOC_BYTES");
  knobs.test_u32_count_max = number("GPUSORT_TEST_U32_COUNT_MAX");
  knobs.validation = flag("GPUSORT_VALIDATION");
  knobs.pipeline_stats = flag("GPUSORT_PIPELINE_STATS");
  knobs.trace = flag("GPUSORT_TRACE");
}

const gs_knobs *gs_knobs_get(void) {
  pthread_once(&knobs_once, read_knobs);
  return &knobs;
}
