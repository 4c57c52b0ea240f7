#include "sort_harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/transfer.h"
#include "util/error.h"

int harness_open(harness *h) {
  memset(h, 0, sizeof *h);
  h->algo = GS_SORT_ONESWEEP;
  /* Five minutes before a GPU wait counts as a stall (gpusort's default: 60 s): lavapipe compiles
   * a pipeline's code at its first dispatch, inside that wait, and a cold compile of the largest
   * tiles the tests ask for (64 x 36, held keys) took over 60 s on two busy cores. */
  gs_context_init(&h->ctx, -1, 300, 0);
  int rc = gs_context_device(&h->ctx, NULL, NULL);
  if (rc) fprintf(stderr, "cannot open a device: %s\n", gs_last_error());
  return rc;
}

void harness_close(harness *h) {
  gs_buffer_destroy(&h->ctx.dev, &h->kept_state);
  gs_context_close(&h->ctx);
}

static int sorter_for(harness *h, gs_key_type key, bool descending, unsigned value_bytes, gs_radix_sort **s) {
  const gs_radix_sort_config config = {.key = key, .descending = descending, .value_bytes = value_bytes,
                                       .algo = h->algo};
  return gs_context_sorter(&h->ctx, &config, s);
}

int harness_sorter(harness *h, const sort_case *c, gs_radix_sort **s) {
  return sorter_for(h, c->key, c->descending, c->value_bytes, s);
}

uint32_t harness_tile_keys(harness *h, const sort_case *c) {
  gs_radix_sort *s;
  return harness_sorter(h, c, &s) == GPUSORT_OK ? s->tile_keys : 0;
}

uint32_t harness_histogram_groups(harness *h) {
  gs_radix_sort *s;
  return sorter_for(h, GS_KEY_U32, false, 0, &s) == GPUSORT_OK ? s->histogram_max_groups : 0;
}

typedef struct {
  unsigned char *out[2];
  unsigned bytes[2];
} copy_sink;

static int sink_copy(void *ctx, const void *const *fields, size_t count) {
  copy_sink *c = ctx;
  for (int f = 0; f < 2; f++) {
    if (!c->bytes[f]) continue;
    memcpy(c->out[f], fields[f], count * c->bytes[f]);
    c->out[f] += count * c->bytes[f];
  }
  return GPUSORT_OK;
}

/* The sort's buffers: [0] in, [1] tmp, [2] out (PLACE_SEPARATE), for keys and for values. */
typedef struct {
  gs_buffer keys[3], values[3], state, count;
} sort_buffers;

static void free_buffers(gs_device *dev, sort_buffers *b) {
  for (int i = 0; i < 3; i++) {
    gs_buffer_destroy(dev, &b->keys[i]);
    gs_buffer_destroy(dev, &b->values[i]);
  }
  gs_buffer_destroy(dev, &b->state);
  gs_buffer_destroy(dev, &b->count);
}

static int make_buffers(harness *h, const gs_radix_sort *s, uint64_t max_n, unsigned vb, sort_buffers *b) {
  gs_device *dev = &h->ctx.dev;
  const uint64_t kbytes = (max_n ? max_n : 1) * s->info->bytes, vbytes = (max_n ? max_n : 1) * vb;
  int rc = GPUSORT_OK;
  for (int i = 0; i < 3 && !rc; i++) {
    if (i == 2 && h->place != PLACE_SEPARATE) break;
    rc = gs_buffer_create(dev, &b->keys[i], kbytes, GS_MEM_DEVICE, "test keys");
    if (!rc && vb) rc = gs_buffer_create(dev, &b->values[i], vbytes, GS_MEM_DEVICE, "test values");
  }
  if (!rc) rc = gs_buffer_create(dev, &b->state, gs_radix_sort_state_bytes(s, max_n), GS_MEM_DEVICE, "test state");
  if (!rc) rc = gs_buffer_create(dev, &b->count, 16, GS_MEM_DEVICE, "test count");
  return rc;
}

static gs_radix_sort_array arrangement(const harness *h, const gs_buffer *a) {
  const gs_range in = gs_buffer_range(&a[0]), tmp = gs_buffer_range(&a[1]);
  return (gs_radix_sort_array){in, h->place == PLACE_SEPARATE ? gs_buffer_range(&a[2]) : in, tmp};
}

/* A segmented sort submits after every segment (the bounded-submission path). */
static int flush_every_segment(void *ctx, VkCommandBuffer *cb, uint64_t keys) {
  (void)keys;
  harness *h = ctx;
  h->flushes++;
  int rc = gs_submitter_flush(&h->ctx.dev, &h->submitter);
  *cb = gs_submitter_cb(&h->submitter);
  return rc;
}

/* Records, submits and waits for the sort. */
static int run_sort(harness *h, gs_radix_sort *s, gs_radix_sort_run *run, const gs_radix_sort_buffers *b) {
  gs_device *dev = &h->ctx.dev;
  int rc = GPUSORT_OK;
  if (h->segment_keys && h->place != PLACE_INDIRECT) {
    run->segment_keys = h->segment_keys;
    run->flush = flush_every_segment;
    run->flush_ctx = h;
    if ((rc = gs_radix_sort_enable_segments(s))) return rc;
  }
  if (!(rc = gs_submitter_init(dev, &h->submitter, "the test sort")) && !(rc = gs_submitter_begin(dev, &h->submitter)) &&
      !(rc = gs_radix_sort_record(s, gs_submitter_cb(&h->submitter), run, b, NULL)))
    rc = gs_submitter_finish(dev, &h->submitter);
  gs_submitter_destroy(dev, &h->submitter);
  return rc;
}

/* Which passes of the sort just run copied their keys, and which of them it skipped: the marks
 * on their tickets, the first words of the state's control block (gs_sort_control); and how
 * many tickets its first pass took. */
static int read_copy_passes(harness *h, gs_stager *down, gs_range state, gs_transfer_stats *stats) {
  uint32_t tickets[GS_RADIX_MAX_PASSES];
  const gs_field field = {state, 0, sizeof tickets[0]};
  copy_sink sink = {{(unsigned char *)tickets, NULL}, {sizeof tickets[0], 0}};
  int rc = gs_download_fields(down, &field, 1, GS_RADIX_MAX_PASSES, sink_copy, &sink, stats);
  h->copy_passes = h->skipped_passes = 0;
  h->first_pass_tickets = rc ? 0 : tickets[0] & ~(GS_SORT_COPY_TICKETS | GS_SORT_SKIPPED_TICKETS);
  for (unsigned p = 0; p < GS_RADIX_MAX_PASSES && !rc; p++) {
    if (tickets[p] & GS_SORT_COPY_TICKETS) h->copy_passes |= 1u << p;
    if (tickets[p] & GS_SORT_SKIPPED_TICKETS) h->skipped_passes |= 1u << p;
  }
  return rc;
}

/* The kept state block, at least `bytes` long: a new block (untracked) when it grows. */
static int kept_block(harness *h, VkDeviceSize bytes) {
  if (h->kept_state.buffer && h->kept_state.size >= bytes) return GPUSORT_OK;
  gs_buffer_destroy(&h->ctx.dev, &h->kept_state);
  h->rest = (gs_radix_sort_rest){0};
  return gs_buffer_create(&h->ctx.dev, &h->kept_state, bytes, GS_MEM_DEVICE, "test kept state");
}

/* Before a sort on kept state: nonzero words where it must zero them (harness.kept). */
static int plant_ones(harness *h, gs_stager *up, const gs_radix_sort_state_parts *parts, uint64_t first_pass_tiles,
                      gs_transfer_stats *stats) {
  const uint64_t lookback_words = first_pass_tiles * GS_RADIX, histogram_words = parts->histograms[0].size / 4;
  const uint64_t words = lookback_words > histogram_words ? lookback_words : histogram_words;
  uint32_t *ones = malloc(words * 4);
  if (!ones) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  for (uint64_t i = 0; i < words; i++) ones[i] = 0x40000000u | (uint32_t)(i % 7 + 1); /* (a descriptor's flag) */
  int rc = gs_upload(up, parts->control, ones, GS_RADIX_MAX_PASSES * 4, stats);
  if (!rc) rc = gs_upload(up, parts->lookback[0], ones, lookback_words * 4, stats);
  if (!rc) rc = gs_upload(up, parts->histograms[1 - h->rest.half], ones, histogram_words * 4, stats);
  free(ones);
  return rc;
}

/* Counts a failure unless `words` words at `where` read zero. */
static int check_zero(harness *h, gs_stager *down, gs_range where, uint64_t words, uint64_t n, const char *what,
                      gs_transfer_stats *stats) {
  uint32_t *got = malloc((words ? words : 1) * 4);
  if (!got) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  copy_sink sink = {{(unsigned char *)got, NULL}, {4, 0}};
  const gs_field field = {where, 0, 4};
  int rc = gs_download_fields(down, &field, 1, words, sink_copy, &sink, stats);
  uint64_t nonzero = 0;
  for (uint64_t i = 0; i < words && !rc; i++) nonzero += got[i] != 0;
  h->checks++;
  if (nonzero) {
    h->failures++;
    fprintf(stderr, "FAIL kept state: n=%llu: %llu words of %s are not zero\n", (unsigned long long)n,
            (unsigned long long)nonzero, what);
  }
  free(got);
  return rc;
}

/* After a sort that leaves the block at rest: the histograms the next sort counts into read zero.
 * After one on kept state whose first pass copied its keys and posted nothing, in at most two
 * passes (a third would zero them again), so do the first pass's descriptors. */
static int check_rest(harness *h, gs_stager *down, const gs_radix_sort_state_parts *parts, uint64_t n,
                      bool on_rest, unsigned passes, uint64_t first_pass_tiles, gs_transfer_stats *stats) {
  int rc = check_zero(h, down, parts->histograms[h->rest.half], parts->histograms[0].size / 4, n,
                      "the histograms left for the next sort", stats);
  if (!rc && on_rest && (h->copy_passes & 1u) && passes <= 2)
    rc = check_zero(h, down, parts->lookback[0], first_pass_tiles * GS_RADIX, n,
                    "the descriptors of a first pass that copied", stats);
  return rc;
}

int harness_gpu_sort(harness *h, const sort_case *c, const void *keys, const void *values, uint64_t n,
                     void *out_keys, void *out_values) {
  gs_device *dev = &h->ctx.dev;
  const unsigned kb = gs_key_info_of(c->key)->bytes, vb = c->value_bytes;
  gs_radix_sort *s;
  int rc = sorter_for(h, c->key, c->descending, vb, &s);
  if (rc) return rc;
  /* an indirect sort's arrays and state are sized for more than it sorts */
  const uint64_t slack = h->indirect_slack ? h->indirect_slack : 2 * s->tile_keys + 5;
  const uint64_t max_n = h->place == PLACE_INDIRECT ? n + slack
                         : h->kept && h->kept_capacity >= n ? h->kept_capacity
                                                             : n;
  h->max_n = max_n;
  sort_buffers buffers = {0};
  gs_stager up = {0}, down = {0};
  gs_transfer_stats stats = {0};
  const uint32_t count = (uint32_t)n;
  gs_radix_sort_buffers b = {.state = gs_buffer_range(&buffers.state)};
  gs_radix_sort_run run = {.n = n, .max_n = max_n, .begin_bit = c->begin_bit, .end_bit = c->end_bit,
                           .index_values = c->index_values};
  copy_sink sink = {{out_keys, out_values}, {kb, vb}};
  const size_t bytes = n * (kb + vb);
  if (!(rc = make_buffers(h, s, max_n, vb, &buffers))) {
    b.keys = arrangement(h, buffers.keys);
    b.values = arrangement(h, buffers.values);
    if (h->place == PLACE_INDIRECT) b.count = gs_buffer_range(&buffers.count);
    b.state = gs_buffer_range(&buffers.state);
  }
  if (!rc && h->kept && !(rc = kept_block(h, gs_radix_sort_state_bytes(s, max_n)))) {
    b.state = gs_buffer_range(&h->kept_state);
    run.rest = &h->rest;
  }
  const gs_radix_sort_state_parts parts = gs_radix_sort_state_parts_of(s, b.state, max_n);
  /* what a direct Onesweep sort of `s` on the block at rest must zero itself (harness.kept) */
  const bool on_rest = h->kept && h->rest.of == s && h->rest.at_rest && h->algo == GS_SORT_ONESWEEP &&
                       h->place != PLACE_INDIRECT && n > 0;
  /* (a segmented sort takes the layout's own tile, an unsegmented one its capacity's: run_sort,
   * src/prim/radix_sort.c's plan_segments; the test's segments are whole tiles) */
  const bool segmented = h->segment_keys && h->place != PLACE_INDIRECT && n > h->segment_keys;
  const uint64_t first_pass_tiles =
      gs_groups_for(n, segmented ? s->tile_keys : gs_radix_sort_tile_for(s, max_n).tile_keys);
  if (on_rest) h->kept_sorts++;
  if (!rc && !(rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, bytes + 16)) &&
      !(rc = gs_stager_create(dev, &down, GS_MEM_READBACK, bytes)) &&
      !(on_rest && (rc = plant_ones(h, &up, &parts, first_pass_tiles, &stats))) &&
      !(rc = gs_upload(&up, b.keys.in, keys, n * kb, &stats)) &&
      !(vb && !c->index_values && (rc = gs_upload(&up, b.values.in, values, n * vb, &stats))) &&
      !(rc = gs_upload(&up, gs_buffer_range(&buffers.count), &count, 4, &stats)) &&
      !(rc = run_sort(h, s, &run, &b))) {
    gs_field fields[2] = {{b.keys.out, 0, kb}, {b.values.out, 0, vb}};
    rc = gs_download_fields(&down, fields, vb ? 2 : 1, n, sink_copy, &sink, &stats);
    if (!rc && h->algo == GS_SORT_ONESWEEP && n > 0) rc = read_copy_passes(h, &down, b.state, &stats);
    unsigned passes = 0;
    if (!rc && h->kept && h->rest.at_rest && !(rc = gs_radix_sort_passes(s, c->begin_bit, c->end_bit, &passes)))
      rc = check_rest(h, &down, &parts, n, on_rest, passes, first_pass_tiles, &stats);
  }
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  free_buffers(dev, &buffers);
  return rc;
}

/* LSD with 8-bit digits on the sort key: obviously stable. */
unsigned reference_permutation(const sort_case *c, const void *keys, uint64_t n, uint64_t *perm, unsigned *copy_passes) {
  const gs_key_info *info = gs_key_info_of(c->key);
  const unsigned bytes = info->bytes;
  unsigned begin = c->begin_bit, end = c->end_bit;
  if (begin == 0 && end == 0) end = bytes * 8;
  uint64_t *sort_key = malloc((n ? n : 1) * sizeof *sort_key), *tmp = malloc((n ? n : 1) * sizeof *tmp);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t o = gs_key_ordered(info, (const unsigned char *)keys + i * bytes);
    sort_key[i] = c->descending ? ~o : o;
    perm[i] = i;
  }
  *copy_passes = 0;
  unsigned pass = 0;
  for (unsigned shift = begin; shift < end; shift += 8, pass++) {
    const unsigned width = end - shift < 8 ? end - shift : 8;
    const uint64_t mask = (1u << width) - 1;
    uint64_t count[257] = {0};
    for (uint64_t i = 0; i < n; i++) count[((sort_key[perm[i]] >> shift) & mask) + 1]++;
    for (int d = 0; d < 256; d++) {
      if (count[d + 1] == n) *copy_passes |= 1u << pass; /* every key has digit d */
      count[d + 1] += count[d];
    }
    for (uint64_t i = 0; i < n; i++) tmp[count[(sort_key[perm[i]] >> shift) & mask]++] = perm[i];
    memcpy(perm, tmp, n * sizeof *perm);
  }
  free(sort_key);
  free(tmp);
  return pass;
}

/* Onesweep skips pairs of copy passes in a row, neither of them the first or the last pass,
 * taken from the start of each run of copy passes. */
static unsigned reference_skipped_passes(unsigned copy_passes, unsigned passes) {
  unsigned skipped = 0;
  for (unsigned p = 1; p + 2 < passes;) {
    if ((copy_passes >> p & 3u) == 3u) {
      skipped |= 3u << p;
      p += 2;
    } else {
      p++;
    }
  }
  return skipped;
}

static void report_difference(harness *h, const char *label, const char *what, uint64_t n, const unsigned char *want,
                              const unsigned char *got, unsigned bytes, const gs_key_info *as_key) {
  uint64_t first = 0, wrong = 0;
  for (uint64_t i = n; i-- > 0;)
    if (memcmp(want + i * bytes, got + i * bytes, bytes) != 0) first = i, wrong++;
  char a[64], b[64];
  gs_key_format(as_key, want + first * bytes, a, sizeof a);
  gs_key_format(as_key, got + first * bytes, b, sizeof b);
  fprintf(stderr, "FAIL %s: n=%" PRIu64 ": %" PRIu64 " %s differ, first at %" PRIu64 ": want %s got %s\n", label, n,
          wrong, what, first, a, b);
  h->failures++;
}

void check_case(harness *h, const sort_case *c, gs_dist dist, uint64_t n, const char *label) {
  const unsigned kb = gs_key_info_of(c->key)->bytes, vb = c->value_bytes;
  const size_t m = n ? n : 1;
  unsigned char *keys = malloc(m * kb), *values = malloc(m * (vb ? vb : 1));
  unsigned char *want_keys = malloc(m * kb), *want_values = malloc(m * (vb ? vb : 1));
  unsigned char *got_keys = malloc(m * kb), *got_values = malloc(m * (vb ? vb : 1));
  uint64_t *perm = malloc(m * sizeof *perm);
  gs_generate(c->key, dist, 12345 + n, n, 0, n, keys, kb);
  for (uint64_t i = 0; i < n && vb; i++) /* values: the input index, scrambled for 64-bit values */
    gs_key_store_bits(vb, values + i * vb, vb == 8 ? i * 0x9E3779B97F4A7C15ull : i);
  unsigned copy_passes;
  const unsigned passes = reference_permutation(c, keys, n, perm, &copy_passes);
  const unsigned skipped_passes = reference_skipped_passes(copy_passes, passes);
  for (uint64_t i = 0; i < n; i++) {
    memcpy(want_keys + i * kb, keys + perm[i] * kb, kb);
    if (c->index_values)
      gs_key_store_bits(4, want_values + i * 4, perm[i]);
    else if (vb)
      memcpy(want_values + i * vb, values + perm[i] * vb, vb);
  }
  memset(got_keys, 0xA5, m * kb);
  memset(got_values, 0xA5, m * (vb ? vb : 1));
  h->checks++;
  int rc = harness_gpu_sort(h, c, keys, values, n, got_keys, got_values);
  if (rc) {
    h->failures++;
    fprintf(stderr, "FAIL %s: n=%" PRIu64 ": %s\n", label, n, gs_last_error());
  } else if (memcmp(want_keys, got_keys, n * kb) != 0) {
    report_difference(h, label, "keys", n, want_keys, got_keys, kb, gs_key_info_of(c->key));
  } else if (vb && memcmp(want_values, got_values, n * vb) != 0) {
    report_difference(h, label, "values", n, want_values, got_values, vb, gs_key_info_of(vb == 8 ? GS_KEY_U64 : GS_KEY_U32));
  } else if (h->algo == GS_SORT_ONESWEEP && n > 0 &&
             (h->copy_passes != copy_passes || h->skipped_passes != skipped_passes)) {
    /* a pass where all keys share the digit must copy them (or be skipped); any other must sort */
    h->failures++;
    fprintf(stderr, "FAIL %s: n=%" PRIu64 ": passes 0x%x copied and 0x%x of them were skipped, where 0x%x should copy and 0x%x be skipped\n",
            label, n, h->copy_passes, h->skipped_passes, copy_passes, skipped_passes);
  }
  free(keys);
  free(values);
  free(want_keys);
  free(want_values);
  free(got_keys);
  free(got_values);
  free(perm);
}

void check_sort(harness *h, gs_key_type key, gs_dist dist, uint64_t n, const char *label) {
  sort_case c = {.key = key};
  check_case(h, &c, dist, n, label);
}
