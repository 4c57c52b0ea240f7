/* GPU sort against the CPU reference, byte for byte, over sizes at every boundary and
 * every test distribution.
 *
 *   test_sort matrix    boundary sizes x distributions
 *   test_sort large     a few million keys
 *   test_sort fold      sizes needing more workgroups than GPUSORT_MAX_WORKGROUPS allows
 *                       per dispatch dimension (run with that variable set low)
 *   test_sort fallback  as matrix, for runs with GPUSORT_LOOKBACK_SPIN=1 (every wait
 *                       on an earlier tile falls back to recounting it)
 *   test_sort validation  a few sizes with GPUSORT_VALIDATION=1: fails on any message of
 *                       the Khronos validation layer
 *   test_sort types     every key type x ascending/descending x keys / 32-bit values /
 *                       64-bit values / argsort, over boundary sizes and distributions
 *   test_sort bits      bit ranges (--bits) of every key width, both directions
 *   test_sort stability many equal keys with their input index as value: equal keys must
 *                       keep input order in both directions
 *   test_sort stability32  the same for 32-bit keys only (32-bit keys with 32-bit values),
 *                       for tile shapes slow to compile elsewhere
 *   test_sort placements  the arrays arranged in place, apart, and with n read from a GPU
 *                       buffer (indirect), with even and odd pass counts and every payload
 *   test_sort segments  sorts in segments of a few tiles (as sorts too large for one pass's
 *                       look-back run), each segment in its own submission: every payload,
 *                       both directions, bit ranges, in place and apart, sizes around the
 *                       segment boundaries
 *   test_sort small     small sorts' tiles (run with GPUSORT_SORT_SMALL_TILES where the
 *                       device's preset has none): sizes around each tile and each change of
 *                       tile, every layout, every placement; each sort must have taken the
 *                       tiles its capacity calls for
 *   test_sort MODE [ALGORITHM] sampled   types and segments in one direction per key type and
 *                       payload, alternating (both directions still meet every key type and
 *                       every payload): half the pipelines, which lavapipe spends most of these
 *                       modes' time compiling (the knobs' reruns, tests/meson.build) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort_harness.h"
#include "util/error.h"

/* (lowbits:16 leaves the last two passes of u32 keys copies after a sorting one: a copy run
 * that must not pair up with the last pass) */
static const char *const dist_specs[] = {"uniform",   "equal",      "sorted",     "reversed", "few:5",
                                         "lowbits:8", "lowbits:16", "highbits:8", "entropy:3"};
enum { DIST_COUNT = sizeof dist_specs / sizeof dist_specs[0] };

static void run_sizes(harness *h, gs_key_type key, const uint64_t *sizes, size_t nsizes, const char *const *dists,
                      size_t ndists) {
  for (size_t s = 0; s < nsizes; s++) {
    for (size_t d = 0; d < ndists; d++) {
      gs_dist dist;
      if (gs_dist_parse(dists[d], &dist) != 0) {
        fprintf(stderr, "bad distribution %s\n", dists[d]);
        h->failures++;
        continue;
      }
      char label[64];
      snprintf(label, sizeof label, "%s %s", gs_key_info_of(key)->name, dists[d]);
      check_sort(h, key, dist, sizes[s], label);
    }
  }
}

static const char *const payload_names[] = {"keys", "u32 values", "u64 values", "argsort"};

/* One case per payload: keys only, 32- and 64-bit values, and input indices (argsort). */
static sort_case payload_case(gs_key_type key, bool descending, int payload) {
  sort_case c = {.key = key, .descending = descending};
  if (payload == 1) c.value_bytes = 4;
  if (payload == 2) c.value_bytes = 8;
  if (payload == 3) c.value_bytes = 4, c.index_values = true;
  return c;
}

/* The tile keys a sort of capacity max_n should take: the largest of the small sorts' tiles
 * and the layout's own that leaves at least small_min_tiles tiles, or the smallest. */
static uint64_t expected_tile_keys(const gs_radix_sort *s, uint64_t max_n) {
  uint64_t keys = s->small_count ? s->small[0].tile.tile_keys : s->tile_keys;
  for (uint32_t i = 0; i <= s->small_count; i++) {
    const uint64_t t = i < s->small_count ? s->small[i].tile.tile_keys : s->tile_keys;
    if (t * s->small_min_tiles <= max_n) keys = t;
  }
  return keys;
}

/* The knob's tiles smaller than `tile` keys (its shapes "WxK", before any "@T"). */
static uint32_t knob_tiles_below(uint64_t tile) {
  const char *v = getenv("GPUSORT_SORT_SMALL_TILES");
  uint32_t count = 0;
  unsigned w, k;
  int used;
  while (v && sscanf(v, "%ux%u%n", &w, &k, &used) == 2) {
    if ((uint64_t)w * k < tile) count++;
    if (v[used] != ',') break;
    v += used + 1;
  }
  return count;
}

static void run_small(harness *h) {
  static const char *const names[PLACE_COUNT] = {"in place", "apart", "indirect"};
  const struct {
    gs_key_type key;
    bool descending;
    int payload;
  } layouts[] = {{GS_KEY_U32, false, 0}, {GS_KEY_U32, false, 1}, {GS_KEY_U32, false, 2}, {GS_KEY_U64, false, 0},
                 {GS_KEY_U64, false, 2}, {GS_KEY_U32, false, 3}, {GS_KEY_F32, true, 0},  {GS_KEY_I64, true, 1}};
  const char *const dists[] = {"uniform", "equal", "reversed", "lowbits:16"};
  const uint64_t sg = h->ctx.dev.subgroup_size;
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
    const sort_case c = payload_case(layouts[l].key, layouts[l].descending, layouts[l].payload);
    gs_radix_sort *s;
    if (harness_sorter(h, &c, &s)) {
      fprintf(stderr, "no sorter: %s\n", gs_last_error());
      h->failures++;
      return;
    }
    if (s->small_count == 0) {
      fprintf(stderr, "no small sorts' tiles for %s keys: set GPUSORT_SORT_SMALL_TILES\n", gs_key_info_of(c.key)->name);
      h->failures++;
      return;
    }
    /* every tile the knob gives below the layout's own reached the sorter */
    h->checks++;
    if (getenv("GPUSORT_SORT_SMALL_TILES") && s->small_count != knob_tiles_below(s->tile_keys)) {
      fprintf(stderr, "FAIL %s keys: the sorter has %u small tiles, the knob %u\n", gs_key_info_of(c.key)->name,
              s->small_count, knob_tiles_below(s->tile_keys));
      h->failures++;
    }
    /* a state sized for a capacity serves every smaller one: it never shrinks as capacity grows */
    h->checks++;
    const uint64_t last = 2 * (uint64_t)s->tile_keys * s->small_min_tiles;
    for (uint64_t m = 2, before = gs_radix_sort_state_bytes(s, 1); m <= last; m++) {
      const uint64_t bytes = gs_radix_sort_state_bytes(s, m);
      if (bytes < before) {
        fprintf(stderr, "FAIL %s keys: the state for %llu keys is smaller than for %llu\n", gs_key_info_of(c.key)->name,
                (unsigned long long)m, (unsigned long long)m - 1);
        h->failures++;
        break;
      }
      before = bytes;
    }
    /* around the smallest tile, and on both sides of every change of tile (an indirect sort's
     * capacity is 3 more: at - 4 is then just below the change) */
    uint64_t sizes[5 + 4 * (GS_SORT_SMALL_TILES + 1)];
    size_t count = 0;
    const uint64_t first = s->small[0].tile.tile_keys;
    sizes[count++] = 1, sizes[count++] = sg + 1, sizes[count++] = first - 1, sizes[count++] = first,
    sizes[count++] = first + 1;
    for (uint32_t i = 1; i <= s->small_count; i++) {
      const uint64_t t = i < s->small_count ? s->small[i].tile.tile_keys : s->tile_keys, at = t * s->small_min_tiles;
      sizes[count++] = at - 4, sizes[count++] = at - 1, sizes[count++] = at, sizes[count++] = at + t + 1;
    }
    h->indirect_slack = 3;
    for (int place = 0; place < PLACE_COUNT; place++) {
      h->place = (placement)place;
      for (size_t z = 0; z < count; z++) {
        for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
          if (place != PLACE_IN_PLACE && d > 0) break; /* the other placements: uniform keys */
          gs_dist dist;
          gs_dist_parse(dists[d], &dist);
          char label[128];
          snprintf(label, sizeof label, "small %s %s %s %s %s", names[place], gs_key_info_of(c.key)->name,
                   payload_names[layouts[l].payload], c.descending ? "descending" : "ascending", dists[d]);
          const int failures = h->failures;
          check_case(h, &c, dist, sizes[z], label);
          if (h->failures != failures) continue;
          /* the tiles it took: those of its capacity (an indirect sort's is more than n) */
          const uint64_t want = expected_tile_keys(s, h->max_n), tiles = (sizes[z] + want - 1) / want;
          h->checks++;
          if (gs_radix_sort_tile_for(s, h->max_n).tile_keys != want || h->first_pass_tickets != tiles) {
            fprintf(stderr, "FAIL %s: n=%llu (capacity %llu): %u tiles of %u keys, where %llu tiles of %llu were due\n",
                    label, (unsigned long long)sizes[z], (unsigned long long)h->max_n, h->first_pass_tickets,
                    gs_radix_sort_tile_for(s, h->max_n).tile_keys, (unsigned long long)tiles, (unsigned long long)want);
            h->failures++;
          }
        }
      }
    }
  }
  h->place = PLACE_IN_PLACE;
  h->indirect_slack = 0;
}

static void run_types(harness *h) {
  const char *const dists[] = {"uniform", "equal", "sorted", "reversed", "few:5", "special", "lowbits:8", "highbits:8"};
  for (int key = 0; key < GS_KEY_TYPE_COUNT; key++) {
    for (int payload = 0; payload < 4; payload++) {
      for (int desc = 0; desc < 2; desc++) {
        if (h->sampled && desc != (key + payload) % 2) continue;
        sort_case c = payload_case((gs_key_type)key, desc, payload);
        const uint64_t tile = harness_tile_keys(h, &c), sg = h->ctx.dev.subgroup_size;
        const uint64_t sizes[] = {0, 1, sg + 1, tile - 1, tile + 1, 3 * tile + 77};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
          for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
            gs_dist dist;
            gs_dist_parse(dists[d], &dist);
            char label[96];
            snprintf(label, sizeof label, "%s %s %s %s", gs_key_info_of(c.key)->name, payload_names[payload],
                     desc ? "descending" : "ascending", dists[d]);
            check_case(h, &c, dist, sizes[s], label);
          }
        }
      }
    }
  }
}

/* Every arrangement of the arrays with even and odd pass counts, each payload, boundary sizes. */
static void run_placements(harness *h) {
  static const char *const names[PLACE_COUNT] = {"in place", "apart", "indirect"};
  static const unsigned ranges[][2] = {{0, 0}, {0, 24}, {0, 8}, {5, 21}};
  const gs_key_type types[] = {GS_KEY_U32, GS_KEY_I64};
  for (int place = 0; place < PLACE_COUNT; place++) {
    h->place = (placement)place;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      for (int payload = 0; payload < 4; payload++) {
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
          sort_case c = payload_case(types[t], r % 2 == 1, payload);
          c.begin_bit = ranges[r][0], c.end_bit = ranges[r][1];
          const uint64_t tile = harness_tile_keys(h, &c);
          const uint64_t sizes[] = {0, 1, tile + 1, 3 * tile + 77};
          for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            char label[128];
            snprintf(label, sizeof label, "%s %s %s bits %u:%u %s", names[place], gs_key_info_of(c.key)->name,
                     payload_names[payload], c.begin_bit, c.end_bit, c.descending ? "descending" : "ascending");
            check_case(h, &c, (gs_dist){GS_DIST_FEW, 40}, sizes[z], label);
          }
        }
      }
    }
  }
  h->place = PLACE_IN_PLACE;
}

/* Segmented sorts: segments of 3 tiles (4 for some runs), so that every size below spans several,
 * ending on a segment boundary, one past it, and inside one. */
static void run_segments(harness *h) {
  static const unsigned ranges[][2] = {{0, 0}, {3, 19}};
  const gs_key_type types[] = {GS_KEY_U32, GS_KEY_F32, GS_KEY_I64, GS_KEY_F64};
  const char *const dists[] = {"uniform", "equal", "few:5", "reversed", "special"};
  for (int place = 0; place < 2; place++) {
    h->place = place ? PLACE_SEPARATE : PLACE_IN_PLACE;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      for (int payload = 0; payload < 4; payload++) {
        for (size_t r = 0; r < 2; r++) {
          for (int desc = 0; desc < 2; desc++) {
            /* (not (t + payload) % 2: that picks the segment's length) */
            if (h->sampled && desc != (int)(t + payload / 2) % 2) continue;
            sort_case c = payload_case(types[t], desc, payload);
            c.begin_bit = ranges[r][0], c.end_bit = ranges[r][1];
            const uint64_t tile = harness_tile_keys(h, &c);
            h->segment_keys = (3 + (t + payload) % 2) * tile;
            const uint64_t seg = h->segment_keys;
            const uint64_t sizes[] = {seg + 1, 2 * seg, 2 * seg + 1, 3 * seg + tile / 2, 7 * seg - 1};
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
              gs_dist dist;
              gs_dist_parse(dists[(z + t + payload) % 5], &dist);
              char label[160];
              snprintf(label, sizeof label, "segments of %llu, %s %s %s bits %u:%u %s %s",
                       (unsigned long long)seg, place ? "apart" : "in place", gs_key_info_of(c.key)->name,
                       payload_names[payload], c.begin_bit, c.end_bit, desc ? "descending" : "ascending",
                       dists[(z + t + payload) % 5]);
              const unsigned before = h->flushes;
              check_case(h, &c, dist, sizes[z], label);
              h->checks++;
              if (h->flushes == before) { /* the segmented path must have run */
                fprintf(stderr, "FAIL %s: no submission ended between segments\n", label);
                h->failures++;
              }
            }
          }
        }
      }
    }
  }
  h->segment_keys = 0;
  h->place = PLACE_IN_PLACE;
}

static void run_bits(harness *h) {
  static const unsigned ranges32[][2] = {{0, 8}, {4, 12}, {8, 24}, {1, 31}, {24, 32}, {31, 32}, {0, 1}};
  static const unsigned ranges64[][2] = {{0, 64}, {20, 50}, {56, 64}, {0, 9}, {32, 33}, {3, 61}};
  const gs_key_type types[] = {GS_KEY_U32, GS_KEY_I32, GS_KEY_F32, GS_KEY_U64, GS_KEY_I64, GS_KEY_F64};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const bool wide = gs_key_info_of(types[t])->bytes == 8;
    const size_t nranges = wide ? sizeof ranges64 / sizeof ranges64[0] : sizeof ranges32 / sizeof ranges32[0];
    for (size_t r = 0; r < nranges; r++) {
      for (int desc = 0; desc < 2; desc++) {
        /* index values show whether keys equal on the range keep their input order */
        sort_case c = {.key = types[t], .descending = desc, .value_bytes = 4, .index_values = true,
                       .begin_bit = wide ? ranges64[r][0] : ranges32[r][0],
                       .end_bit = wide ? ranges64[r][1] : ranges32[r][1]};
        const uint64_t tile = harness_tile_keys(h, &c);
        const char *const dists[] = {"uniform", "special", "few:9"};
        for (size_t d = 0; d < 3; d++) {
          gs_dist dist;
          gs_dist_parse(dists[d], &dist);
          char label[96];
          snprintf(label, sizeof label, "%s bits %u:%u %s %s", gs_key_info_of(c.key)->name, c.begin_bit, c.end_bit,
                   desc ? "descending" : "ascending", dists[d]);
          check_case(h, &c, dist, 5 * tile + 13, label);
        }
      }
    }
  }
}

/* Independent of the reference: among equal keys, the input indices must increase. */
static void run_stability(harness *h, bool keys32_only) {
  const gs_key_type types[] = {GS_KEY_U32, GS_KEY_F32, GS_KEY_I64, GS_KEY_F64}; /* 32-bit keys first */
  for (size_t t = 0; t < (keys32_only ? 2 : sizeof types / sizeof types[0]); t++) {
    for (int desc = 0; desc < 2; desc++) {
      sort_case c = {.key = types[t], .descending = desc, .value_bytes = 4, .index_values = true};
      const unsigned kb = gs_key_info_of(c.key)->bytes;
      const uint64_t n = 20 * harness_tile_keys(h, &c) + 5;
      unsigned char *keys = malloc(n * kb), *out = malloc(n * kb);
      uint32_t *index = malloc(n * 4);
      gs_generate(c.key, (gs_dist){GS_DIST_FEW, 3}, 77, n, 0, n, keys, kb);
      h->checks++;
      int bad = harness_gpu_sort(h, &c, keys, NULL, n, out, index) != GPUSORT_OK;
      for (uint64_t i = 1; i < n && !bad; i++)
        if (memcmp(out + (i - 1) * kb, out + i * kb, kb) == 0 && index[i - 1] >= index[i]) {
          fprintf(stderr, "FAIL stability %s %s: equal keys at %llu and %llu have indices %u, %u\n",
                  gs_key_info_of(c.key)->name, desc ? "descending" : "ascending", (unsigned long long)(i - 1),
                  (unsigned long long)i, index[i - 1], index[i]);
          bad = 1;
        }
      h->failures += bad;
      check_case(h, &c, (gs_dist){GS_DIST_FEW, 3}, n, "stability against the reference");
      free(keys);
      free(out);
      free(index);
    }
  }
}

/* Sorts one after another on one state block, as a program's later sorts run
 * (gs_radix_sort_rest): each of a case's sorts after the first finds the block as the one before
 * left it, with ones planted where it must zero them itself (harness.kept). The sizes grow
 * past and shrink below the tiles the sorts before zeroed, with none between; equal keys and low
 * bits only copy or skip passes; one sort of the run sizes its tiles for its own n (smaller
 * ones, with GPUSORT_SORT_SMALL_TILES), one is indirect and one segmented, each between sorts on
 * kept state. */
static void run_kept(harness *h) {
  const sort_case cases[] = {{.key = GS_KEY_U32},
                             {.key = GS_KEY_U32, .value_bytes = 4},
                             {.key = GS_KEY_U64},
                             {.key = GS_KEY_F32, .descending = true, .value_bytes = 8},
                             {.key = GS_KEY_I64, .value_bytes = 4, .index_values = true, .begin_bit = 3, .end_bit = 37},
                             {.key = GS_KEY_U32, .begin_bit = 4, .end_bit = 19}};
  const char *const dists[] = {"uniform", "equal", "lowbits:8", "sorted", "reversed", "few:5", "highbits:8"};
  enum { DIRECT, OWN_TILES, INDIRECT, SEGMENTED };
  h->kept = true;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const sort_case *c = &cases[k];
    const uint64_t tile = harness_tile_keys(h, c);
    const struct {
      uint64_t n;
      int how;
    } runs[] = {{tile + 1, DIRECT},   {1, DIRECT},          {5 * tile + 3, DIRECT},  {0, DIRECT},
                {2 * tile, DIRECT},   {9 * tile + 5, DIRECT}, {tile - 1, DIRECT},    {3 * tile + 5, OWN_TILES},
                {3 * tile, DIRECT},   {4 * tile + 1, INDIRECT}, {6 * tile, DIRECT},  {5 * tile + 7, SEGMENTED},
                {9 * tile + 5, DIRECT}, {2, DIRECT}};
    const unsigned kept_before = h->kept_sorts;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
      h->kept_capacity = runs[i].how == OWN_TILES ? 0 : 9 * tile + 5;
      h->place = runs[i].how == INDIRECT ? PLACE_INDIRECT : (i + k) % 2 ? PLACE_SEPARATE : PLACE_IN_PLACE;
      h->segment_keys = runs[i].how == SEGMENTED ? 2 * tile : 0;
      /* (equal keys where the tiles differ from the layout's capacity's: a first pass that copies
       * leaves its descriptors as the histogram kernel did, for check_rest to read) */
      const char *name = runs[i].how == OWN_TILES || runs[i].how == SEGMENTED
                             ? "equal"
                             : dists[(i + k) % (sizeof dists / sizeof dists[0])];
      gs_dist dist;
      gs_dist_parse(name, &dist);
      char label[160];
      snprintf(label, sizeof label, "kept state, sort %zu: %s%s %s bits %u:%u %s %s", i + 1, gs_key_info_of(c->key)->name,
               c->descending ? " descending" : "", c->index_values ? "argsort" : c->value_bytes ? "pairs" : "keys",
               c->begin_bit, c->end_bit, name,
               runs[i].how == OWN_TILES   ? "(its own tiles)"
               : runs[i].how == INDIRECT  ? "(indirect)"
               : runs[i].how == SEGMENTED ? "(segmented)"
                                          : h->place == PLACE_SEPARATE ? "(apart)" : "(in place)");
      check_case(h, c, dist, runs[i].n, label);
    }
    /* Onesweep: every direct sort of keys after the first (the block is untracked for a new
     * sorter) found the block at rest; the other algorithms leave it untracked */
    const unsigned want = h->algo == GS_SORT_ONESWEEP ? 11 : 0;
    h->checks++;
    if (h->kept_sorts - kept_before != want) {
      h->failures++;
      fprintf(stderr, "FAIL kept state, %s: %u sorts found the block at rest, not %u\n", gs_key_info_of(c->key)->name,
              h->kept_sorts - kept_before, want);
    }
  }
  h->kept = false;
  h->place = PLACE_IN_PLACE;
  h->segment_keys = 0;
}

/* usage: test_sort [MODE [ALGORITHM] [sampled]], ALGORITHM onesweep (default), reduce-then-scan
 * or bitonic */
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "matrix";
  harness h;
  if (harness_open(&h)) return 1;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "sampled") == 0) {
      h.sampled = true;
      continue;
    }
    for (gs_sort_algo a = GS_SORT_ONESWEEP; a <= GS_SORT_BITONIC; a++)
      if (strcmp(argv[i], gs_sort_algo_name(a)) == 0) h.algo = a;
    if (strcmp(argv[i], gs_sort_algo_name(h.algo)) != 0) {
      fprintf(stderr, "unknown algorithm '%s'\n", argv[i]);
      return 1;
    }
  }
  const uint64_t sg = h.ctx.dev.subgroup_size;
  const uint64_t tile = harness_tile_keys(&h, &(sort_case){.key = GS_KEY_U32});
  printf("device: %s, subgroup %llu, tile %llu keys, mode %s%s, algorithm %s\n", h.ctx.dev.info.name,
         (unsigned long long)sg, (unsigned long long)tile, mode, h.sampled ? " (sampled)" : "",
         gs_sort_algo_name(h.algo));
  if (tile == 0) { /* the tile does not suit the device (a GPUSORT_SORT_* knob, say) */
    fprintf(stderr, "no sort tile: %s\n", gs_last_error());
    return 1;
  }
  /* the suites that set GPUSORT_HISTOGRAM_GROUPS test nothing new unless it reaches the sorter */
  const char *groups_knob = getenv("GPUSORT_HISTOGRAM_GROUPS");
  if (groups_knob && *groups_knob) {
    const uint32_t groups = harness_histogram_groups(&h);
    printf("histogram workgroups at most: %u\n", groups);
    if (groups != strtoul(groups_knob, NULL, 10)) {
      fprintf(stderr, "GPUSORT_HISTOGRAM_GROUPS=%s, but the histogram runs in up to %u workgroups\n", groups_knob,
              groups);
      return 1;
    }
  }

  /* ... nor those that set GPUSORT_SORT_SPLIT_MAPS=1, unless the sorters of mapped keys hold
   * their first and last passes' own pipelines */
  const char *split_knob = getenv("GPUSORT_SORT_SPLIT_MAPS");
  if (split_knob && strcmp(split_knob, "1") == 0 && h.algo != GS_SORT_BITONIC) {
    const gs_key_type mapped[] = {GS_KEY_I64, GS_KEY_F32};
    for (size_t i = 0; i < sizeof mapped / sizeof mapped[0]; i++) {
      const sort_case c = {.key = mapped[i]};
      gs_radix_sort *s;
      if (harness_sorter(&h, &c, &s) || !s->onesweep_first.pipeline || !s->onesweep_last.pipeline) {
        fprintf(stderr, "GPUSORT_SORT_SPLIT_MAPS=1, but the %s sorter has no first and last pass pipelines\n",
                gs_key_info_of(mapped[i])->name);
        return 1;
      }
    }
    printf("first and last passes in pipelines of their own\n");
  }

  /* ... nor those that set GPUSORT_SORT_FLOAT_FEWER_KEYS=1, unless float keys' tiles (both ways,
   * alone and with 32-bit values) hold a key an invocation fewer than the other keys' */
  const char *fewer_knob = getenv("GPUSORT_SORT_FLOAT_FEWER_KEYS");
  if (fewer_knob && strcmp(fewer_knob, "1") == 0) {
    for (unsigned value_bytes = 0; value_bytes <= 4; value_bytes += 4) {
      const sort_case cases[] = {{.key = GS_KEY_U32, .value_bytes = value_bytes},
                                 {.key = GS_KEY_I32, .value_bytes = value_bytes},
                                 {.key = GS_KEY_U32, .descending = true, .value_bytes = value_bytes},
                                 {.key = GS_KEY_F32, .value_bytes = value_bytes},
                                 {.key = GS_KEY_F32, .descending = true, .value_bytes = value_bytes}};
      uint32_t keys[5];
      for (size_t i = 0; i < 5; i++) {
        gs_radix_sort *s;
        if (harness_sorter(&h, &cases[i], &s)) {
          fprintf(stderr, "no sorter: %s\n", gs_last_error());
          return 1;
        }
        keys[i] = s->keys_per_thread;
      }
      if (keys[1] != keys[0] || keys[2] != keys[0] || keys[3] + 1 != keys[0] || keys[4] + 1 != keys[0]) {
        fprintf(stderr,
                "GPUSORT_SORT_FLOAT_FEWER_KEYS=1, but with %u-byte values u32, i32 and descending u32 tiles take "
                "%u, %u and %u keys an invocation, f32 both ways %u and %u\n",
                value_bytes, keys[0], keys[1], keys[2], keys[3], keys[4]);
        return 1;
      }
      printf("with %u-byte values, float keys' tiles: %u keys an invocation, the others' %u\n", value_bytes, keys[3],
             keys[0]);
    }
  }

  if (strcmp(mode, "matrix") == 0 || strcmp(mode, "fallback") == 0) {
    /* (1023 to 4097: around the bitonic sort's blocks of 1024 elements and their multiples) */
    const uint64_t sizes[] = {0,        1,        7,        8,         9,             sg - 1,        sg,
                              sg + 1,   tile - 1, tile,     tile + 1,  2 * tile,      3 * tile + 77, 17 * tile + 1,
                              1023,     1024,     1025,     4095,      4097};
    run_sizes(&h, GS_KEY_U32, sizes, sizeof sizes / sizeof sizes[0], dist_specs, DIST_COUNT);
  } else if (strcmp(mode, "large") == 0) {
    const uint64_t big[] = {3000017};
    run_sizes(&h, GS_KEY_U32, big, 1, dist_specs, 1);
    const uint64_t mid[] = {(1u << 20) + 3};
    const char *const some[] = {"equal", "few:5", "highbits:8", "reversed"};
    run_sizes(&h, GS_KEY_U32, mid, 1, some, 4);
  } else if (strcmp(mode, "fold") == 0) {
    /* every size below needs more workgroups than one dimension then allows */
    if (h.ctx.dev.max_groups_x >= 7) {
      fprintf(stderr, "fold mode needs GPUSORT_MAX_WORKGROUPS set below 7\n");
      return 1;
    }
    printf("dispatch limit per dimension: %u workgroups\n", h.ctx.dev.max_groups_x);
    const uint64_t sizes[] = {7 * tile + 3, 23 * tile, 23 * tile + 1, 100 * tile + 999};
    const char *const some[] = {"uniform", "few:5", "sorted"};
    run_sizes(&h, GS_KEY_U32, sizes, sizeof sizes / sizeof sizes[0], some, 3);
    /* 64-bit keys: eight digit positions, whose histograms' scan is folded too */
    const uint64_t wide_size[] = {7 * harness_tile_keys(&h, &(sort_case){.key = GS_KEY_U64}) + 3};
    const char *const wide[] = {"uniform", "lowbits:16"};
    run_sizes(&h, GS_KEY_U64, wide_size, 1, wide, 2);
  } else if (strcmp(mode, "types") == 0) {
    run_types(&h);
  } else if (strcmp(mode, "bits") == 0) {
    run_bits(&h);
  } else if (strcmp(mode, "stability") == 0 || strcmp(mode, "stability32") == 0) {
    run_stability(&h, strcmp(mode, "stability32") == 0);
  } else if (strcmp(mode, "placements") == 0) {
    run_placements(&h);
  } else if (strcmp(mode, "segments") == 0) {
    run_segments(&h);
  } else if (strcmp(mode, "small") == 0) {
    run_small(&h);
  } else if (strcmp(mode, "kept") == 0) {
    run_kept(&h);
  } else if (strcmp(mode, "validation") == 0) {
    if (!h.ctx.dev.validating) {
      fprintf(stderr, "validation mode needs GPUSORT_VALIDATION=1 and the validation layer "
                      "(Debian package vulkan-validationlayers)\n");
      return 1;
    }
    const uint64_t sizes[] = {0, 1, tile + 1, 5 * tile + 3};
    const char *const some[] = {"uniform", "few:5"};
    run_sizes(&h, GS_KEY_U32, sizes, sizeof sizes / sizeof sizes[0], some, 2);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (h.ctx.dev.validating) { /* GPUSORT_VALIDATION=1: any message of the layer fails the run */
    const unsigned messages = h.ctx.dev.validation_messages;
    printf("validation messages: %u\n", messages);
    h.checks++;
    if (messages) h.failures++;
  }
  printf("%d passed, %d failed\n", h.checks - h.failures, h.failures);
  harness_close(&h);
  return h.failures ? 1 : 0;
}
