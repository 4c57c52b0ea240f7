/* Benchmarks: GPU time of sorts and scans of device-resident data, beside a copy of the same
 * bytes measured in the same run, so that a figure is a ratio to the device's own bandwidth
 * rather than an absolute from another day. Every timed result is also checked on the host. */
#include "job/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/datagen.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "prim/compact.h"
#include "prim/scan_reference.h"
#include "util/clock.h"
#include "util/error.h"

enum { MAX_REPS = 255, MAX_FIGURES = 2 + GS_RADIX_MAX_PASSES, MAX_RUNS_PER_WARMUP = 256 };
/* A GPU left idle while the host prepares or checks a large input drops its clocks (an H100
 * to 345 MHz within a second) and brings them back in steps over a second or more; runs of a
 * millisecond, each waited for, did not bring them all the way back (the same kernel took
 * 1.0 or 2.2 ms from one benchmark to the next). So warm-up keeps the GPU busy without a
 * pause for WARMUP_SECONDS: submissions of back-to-back runs of WARMUP_SUBMISSION_SECONDS. */
static const double WARMUP_SECONDS = 0.4, WARMUP_SUBMISSION_SECONDS = 0.05;

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Work to time: `record` puts it in a command buffer, writing its own timestamps; `collect`
 * reads one run's figures from them (figure 0: the total time). */
typedef struct {
  int (*record)(void *work, VkCommandBuffer cb, gs_timestamps *ts);
  int (*collect)(void *work, gs_device *dev, gs_timestamps *ts, double *figures);
  unsigned figures;
  void *work;
} timed_work;

/* Records `runs` runs of the work back to back, each after a barrier, the timestamps reset
 * before each (the last run's stay). */
static int record_runs(const timed_work *w, VkCommandBuffer cb, gs_timestamps *ts, unsigned runs) {
  int rc = GPUSORT_OK;
  for (unsigned i = 0; i < runs && !rc; i++) {
    if (i) {
      gs_cmd_barrier(cb);
      vkCmdResetQueryPool(cb, ts->pool, 0, ts->count);
    }
    rc = w->record(w->work, cb, ts);
  }
  return rc;
}

/* The timing loop every benchmark shares: one run to learn its length, warm-up, then `reps`
 * timed runs, one submission each; the median of each figure. */
static int time_runs(gs_device *dev, unsigned reps, const timed_work *w, double *medians) {
  double samples[MAX_FIGURES][MAX_REPS];
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  int rc = gs_submission_init(dev, &sub);
  if (!rc) rc = gs_timestamps_create(dev, &ts, GS_RADIX_SORT_TIMESTAMPS);
  const double warmup_start = gs_now();
  unsigned runs_per_submission = 1;
  for (int r = -1; r < (int)reps && !rc; r++) { /* r < 0: warm-up */
    double figures[MAX_FIGURES];
    gs_timestamps_reset(dev, &ts);
    if ((rc = gs_submission_begin(dev, &sub)) || (rc = record_runs(w, sub.cb, &ts, r < 0 ? runs_per_submission : 1)) ||
        (rc = gs_submission_submit(dev, &sub, "the benchmark")) ||
        (rc = gs_submission_wait(dev, &sub, "the benchmark")) || (rc = w->collect(w->work, dev, &ts, figures)))
      break;
    if (r >= 0) {
      for (unsigned f = 0; f < w->figures; f++) samples[f][r] = figures[f];
    } else if (gs_now() - warmup_start < WARMUP_SECONDS) {
      const double each = figures[0] > 1e-6 ? figures[0] : 1e-6;
      const double fit = WARMUP_SUBMISSION_SECONDS / each;
      runs_per_submission = fit < 1 ? 1 : fit > MAX_RUNS_PER_WARMUP ? MAX_RUNS_PER_WARMUP : (unsigned)fit;
      r--;
    }
  }
  if (!rc)
    for (unsigned f = 0; f < w->figures; f++) medians[f] = median(samples[f], reps);
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  return rc;
}

/* Figure 0 is the time between timestamps 0 and 1. */
static int collect_span(void *work, gs_device *dev, gs_timestamps *ts, double *figures) {
  (void)work;
  uint64_t t[2];
  int rc = gs_timestamps_read(dev, ts, 0, 2, t);
  if (!rc) figures[0] = gs_timestamps_seconds(dev, t[0], t[1]);
  return rc;
}

/* A copy of `words` words, by the compute kernel or by vkCmdCopyBuffer. */
typedef struct {
  gs_context *c;
  gs_range from, to;
  uint64_t words;
  bool command;
} copy_work;

static int record_copy(void *work, VkCommandBuffer cb, gs_timestamps *ts) {
  copy_work *w = work;
  int rc = GPUSORT_OK;
  gs_cmd_barrier(cb);
  gs_timestamps_write(cb, ts, 0);
  if (w->command) {
    VkBufferCopy region = {.srcOffset = w->from.offset, .dstOffset = w->to.offset, .size = w->words * 4};
    vkCmdCopyBuffer(cb, w->from.buffer, w->to.buffer, 1, &region);
  } else {
    rc = gs_record_copy(&w->c->dev, cb, &w->c->memops, w->from, w->to, w->words);
  }
  gs_timestamps_write(cb, ts, 1);
  return rc;
}

static int time_copy(gs_context *c, gs_range from, gs_range to, uint64_t words, bool command, unsigned reps,
                     double *seconds) {
  copy_work w = {c, from, to, words, command};
  const timed_work work = {record_copy, collect_span, 1, &w};
  return time_runs(&c->dev, reps, &work, seconds);
}

/* ---- Sorts ---- */

typedef struct {
  gs_context *c;
  gs_radix_sort *sorter;
  gs_range pristine_keys, pristine_values;
  gs_radix_sort_buffers b;
  gs_radix_sort_run run;
  gs_radix_sort_rest rest; /* runs after the first find the state as the one before left it */
  unsigned passes, kb, vb;
} sort_work;

/* Each run starts from the same pristine data (the copy is outside the timestamps). */
static int record_sort(void *work, VkCommandBuffer cb, gs_timestamps *ts) {
  sort_work *w = work;
  gs_device *dev = &w->c->dev;
  gs_cmd_barrier(cb);
  int rc = gs_record_copy(dev, cb, &w->c->memops, w->pristine_keys, w->b.keys.in, w->run.n * w->kb / 4);
  if (!rc && w->vb)
    rc = gs_record_copy(dev, cb, &w->c->memops, w->pristine_values, w->b.values.in, w->run.n * w->vb / 4);
  w->run.rest = &w->rest;
  return rc ? rc : gs_radix_sort_record(w->sorter, cb, &w->run, &w->b, ts);
}

/* Figures: the total, the time before the first pass (the histogram), each pass. */
static int collect_sort(void *work, gs_device *dev, gs_timestamps *ts, double *figures) {
  (void)dev;
  sort_work *w = work;
  gs_radix_sort_times t;
  int rc = gs_radix_sort_collect_times(w->sorter, ts, w->passes, &t);
  figures[0] = t.total;
  figures[1] = t.histogram;
  for (unsigned p = 0; p < t.passes; p++) figures[2 + p] = t.pass[p];
  return rc;
}

/* Checks downloaded (key, value) records: in key order, and the same multiset as the input. */
typedef struct {
  gs_order_check *order;
  gs_multiset_hash *hash;
  unsigned key_bytes, value_bytes;
  unsigned char *scratch;
} check_sink;

static int check_chunk(void *ctx, const void *const *fields, size_t count) {
  check_sink *c = ctx;
  const unsigned kb = c->key_bytes, vb = c->value_bytes, R = kb + vb;
  const unsigned char *records = fields[0];
  if (vb) {
    for (size_t i = 0; i < count; i++) {
      memcpy(c->scratch + i * R, (const unsigned char *)fields[0] + i * kb, kb);
      memcpy(c->scratch + i * R + kb, (const unsigned char *)fields[1] + i * vb, vb);
    }
    records = c->scratch;
  }
  gs_order_check_feed(c->order, records, count * R);
  gs_multiset_hash_add(c->hash, records, count * R, R);
  return GPUSORT_OK;
}

/* Keys of the distribution (seed 1) and, for pairs, values that are each record's index. */
static int make_sort_data(const gs_layout *L, gs_dist dist, uint64_t n, unsigned char **records) {
  const size_t R = L->record_bytes;
  if (!(*records = malloc(n * R))) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  gs_generate(L->key, dist, 1, n, 0, n, *records, R);
  if (L->kind == GS_LAYOUT_PAIRS) gs_generate_index_values(L->value, 0, n, *records + L->value_offset, R);
  return GPUSORT_OK;
}

/* Downloads the sorted keys (and values) and checks them against the input records. */
static int check_sorted(gs_context *c, const gs_layout *L, const unsigned char *records, uint64_t n,
                        const sort_work *w, bool *ok) {
  const unsigned R = L->record_bytes;
  gs_multiset_hash in_hash = {0}, out_hash = {0};
  gs_multiset_hash_add(&in_hash, records, n * R, R);
  gs_order_check order;
  gs_order_check_init(&order, L->key, false, R, 0, 0, 0);
  gs_stager down = {0};
  gs_transfer_stats stats = {0};
  check_sink sink = {&order, &out_hash, w->kb, w->vb, NULL};
  int rc = gs_stager_create(&c->dev, &down, GS_MEM_READBACK, n * R);
  if (!rc && !(sink.scratch = malloc(down.chunk / R * R + R))) rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  gs_field fields[2] = {{w->b.keys.out, 0, w->kb}, {w->b.values.out, 0, w->vb}};
  if (!rc) rc = gs_download_fields(&down, fields, w->vb ? 2 : 1, n, check_chunk, &sink, &stats);
  *ok = order.sorted && gs_multiset_hash_equal(&in_hash, &out_hash);
  free(sink.scratch);
  gs_stager_destroy(&down);
  return rc;
}

int gs_bench_sort(gs_context *c, const gs_layout *L, uint64_t n, unsigned reps, gs_sort_algo algo, gs_dist dist,
                  gpusort_bench_result *result) {
  gs_device *dev = &c->dev;
  const unsigned kb = gs_key_info_of(L->key)->bytes, vb = L->kind == GS_LAYOUT_PAIRS ? L->record_bytes - kb : 0;
  const uint64_t R = kb + vb;
  if (n == 0 || n > gs_radix_sort_max_keys(dev, L->key, vb, false) || 3 * n * R > c->budget)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu keys do not fit %s", (unsigned long long)n, dev->info.name);
  const gs_radix_sort_config config = {.key = L->key, .value_bytes = vb, .algo = gs_sort_algo_for(&c->config, algo, n)};
  if (config.algo == GS_SORT_BITONIC && n > gs_bitonic_sort_max_keys())
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "a bitonic sort takes at most 2^31 keys");
  sort_work w = {.c = c, .kb = kb, .vb = vb, .run = {.n = n, .max_n = n}};
  gs_buffer pristine = {0}, pristine_values = {0}, keys = {0}, alt = {0}, values = {0}, values_alt = {0}, state = {0};
  unsigned char *records = NULL;
  int rc;
  if ((rc = gs_context_sorter(c, &config, &w.sorter)) || (rc = gs_radix_sort_passes(w.sorter, 0, 0, &w.passes)) ||
      (rc = gs_buffer_create(dev, &pristine, n * kb, GS_MEM_DEVICE, "the benchmark keys")) ||
      (rc = gs_buffer_create(dev, &keys, n * kb, GS_MEM_DEVICE, "the sort keys")) ||
      (rc = gs_buffer_create(dev, &alt, n * kb, GS_MEM_DEVICE, "the sort's second key buffer")) ||
      (rc = gs_buffer_create(dev, &state, gs_radix_sort_state_bytes(w.sorter, n), GS_MEM_DEVICE, "the sort state")) ||
      (vb && ((rc = gs_buffer_create(dev, &pristine_values, n * vb, GS_MEM_DEVICE, "the benchmark values")) ||
              (rc = gs_buffer_create(dev, &values, n * vb, GS_MEM_DEVICE, "the sort values")) ||
              (rc = gs_buffer_create(dev, &values_alt, n * vb, GS_MEM_DEVICE, "the sort's second values")))) ||
      (rc = make_sort_data(L, dist, n, &records)))
    goto done;
  const bool odd = w.passes % 2;
  w.pristine_keys = gs_buffer_range(&pristine);
  w.pristine_values = gs_buffer_range(&pristine_values);
  w.b = (gs_radix_sort_buffers){
      .keys = {gs_buffer_range(&keys), gs_buffer_range(odd ? &alt : &keys), gs_buffer_range(odd ? &keys : &alt)},
      .values = {gs_buffer_range(&values), gs_buffer_range(odd ? &values_alt : &values),
                 gs_buffer_range(odd ? &values : &values_alt)},
      .state = gs_buffer_range(&state)};
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  gs_field fields[2] = {{w.pristine_keys, 0, kb}, {w.pristine_values, kb, vb}};
  if (!(rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, n * R)))
    rc = gs_upload_fields(&up, records, n, (unsigned)R, fields, vb ? 2 : 1, &stats);
  gs_stager_destroy(&up);
  double figures[MAX_FIGURES];
  const timed_work sort = {record_sort, collect_sort, 2 + w.passes, &w};
  if (rc || (rc = time_runs(dev, reps, &sort, figures))) goto done;
  result->sort_seconds = figures[0];
  result->histogram_seconds = figures[1];
  result->passes = w.passes;
  for (unsigned p = 0; p < w.passes && p < 8; p++) result->pass_seconds[p] = figures[2 + p];
  const gs_radix_sort_tile tile = gs_radix_sort_tile_for(w.sorter, n);
  result->tile_invocations = tile.workgroup_size;
  result->tile_keys_per_invocation = tile.keys_per_thread;
  result->algo = (gpusort_sort_algo)config.algo;
  /* the copies move one pass's keys and overwrite the temporary array, not the result */
  const gs_range scratch = w.b.keys.tmp;
  if ((rc = time_copy(c, w.pristine_keys, scratch, n * kb / 4, false, reps, &result->copy_seconds)) ||
      (rc = time_copy(c, w.pristine_keys, scratch, n * kb / 4, true, reps, &result->copy_command_seconds)))
    goto done;
  bool ok = false;
  if ((rc = check_sorted(c, L, records, n, &w, &ok))) goto done;
  result->checked = ok;
  if (!ok) rc = gs_fail(GPUSORT_ERROR_VERIFY, "the benchmark's sort of %llu keys gave a wrong result", (unsigned long long)n);
done:
  free(records);
  gs_buffer_destroy(dev, &pristine);
  gs_buffer_destroy(dev, &pristine_values);
  gs_buffer_destroy(dev, &keys);
  gs_buffer_destroy(dev, &alt);
  gs_buffer_destroy(dev, &values);
  gs_buffer_destroy(dev, &values_alt);
  gs_buffer_destroy(dev, &state);
  return rc;
}

/* ---- Scans ---- */

/* One scan of the shared input into the shared output: gpusort's (scan set) or a textbook one. */
typedef struct {
  const gs_scan *scan;
  gs_range state;
  bool kept_state; /* the state holds the last run's (runs after the first, as in a program
                    * that scans again and again: gs_scan_keeps_state) */
  gs_scan_reference *refs;
  gs_refscan_algo algo;
  uint64_t n;
} scan_work;

static int record_scan(void *work, VkCommandBuffer cb, gs_timestamps *ts) {
  scan_work *w = work;
  if (w->scan) {
    const int rc = gs_scan_record(w->scan, cb, w->n, w->n, gs_buffer_range(&w->refs->input),
                                  gs_buffer_range(&w->refs->output), w->state, w->kept_state, NULL, ts);
    w->kept_state = rc == GPUSORT_OK;
    return rc;
  }
  gs_cmd_barrier(cb);
  gs_timestamps_write(cb, ts, 0);
  int rc = gs_scan_reference_record(w->refs, cb, w->algo, w->n, false);
  gs_timestamps_write(cb, ts, 1);
  return rc;
}

typedef struct {
  const uint32_t *input;
  uint64_t at;
  uint32_t sum;
  bool ok;
} scan_check;

static int check_scan_chunk(void *ctx, const void *const *fields, size_t count) {
  scan_check *c = ctx;
  const uint32_t *got = fields[0];
  for (size_t i = 0; i < count && c->ok; i++, c->at++) {
    if (got[i] != c->sum) c->ok = false;
    c->sum += c->input[c->at];
  }
  return GPUSORT_OK;
}

/* Times one algorithm into the result's next entry and checks its output on the host. */
static int bench_one_scan(gs_context *c, scan_work *w, const char *name, const uint32_t *input, unsigned reps,
                          gs_stager *down, gpusort_bench_scan_result *result) {
  const timed_work work = {record_scan, collect_span, 1, w};
  double seconds;
  int rc = time_runs(&c->dev, reps, &work, &seconds);
  if (rc) return rc;
  scan_check check = {input, 0, 0, true};
  gs_field f = {gs_buffer_range(&w->refs->output), 0, 4};
  gs_transfer_stats stats = {0};
  if ((rc = gs_download_fields(down, &f, 1, w->n, check_scan_chunk, &check, &stats))) return rc;
  const unsigned i = result->algorithms++;
  snprintf(result->algorithm[i].name, sizeof result->algorithm[i].name, "%s", name);
  result->algorithm[i].seconds = seconds;
  result->algorithm[i].checked = check.ok;
  if (!check.ok)
    return gs_fail(GPUSORT_ERROR_VERIFY, "the benchmark's %s scan of %llu keys gave a wrong result", name,
                   (unsigned long long)w->n);
  return GPUSORT_OK;
}

int gs_bench_scans(gs_context *c, uint64_t n, unsigned reps, gpusort_bench_scan_result *result) {
  gs_device *dev = &c->dev;
  const gs_scan_config base = {.input = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM, .inclusive = false};
  gs_scan_config lookback = base, rts = base;
  lookback.algo = GS_SCAN_LOOKBACK;
  rts.algo = GS_SCAN_REDUCE_THEN_SCAN;
  /* input, output and the references' power-of-two work area and block sums */
  if (n == 0 || n > gs_scan_max_elements(dev, &base) || 10 * n * 4 > c->budget)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu elements do not fit %s", (unsigned long long)n, dev->info.name);
  gs_scan_reference refs = {0};
  gs_stager up = {0}, down = {0};
  gs_buffer state[2] = {{0}};
  const gs_scan *scans[2] = {NULL, NULL};
  uint32_t *input = malloc(n * 4);
  gs_transfer_stats stats = {0};
  int rc = input ? GPUSORT_OK : gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (!rc) rc = gs_context_scan(c, &lookback, &scans[0]);
  if (!rc) rc = gs_context_scan(c, &rts, &scans[1]);
  if (!rc) rc = gs_buffer_create(dev, &state[0], gs_scan_state_bytes(scans[0], n), GS_MEM_DEVICE, "scan state");
  if (!rc) rc = gs_buffer_create(dev, &state[1], gs_scan_state_bytes(scans[1], n), GS_MEM_DEVICE, "scan state");
  if (!rc) rc = gs_scan_reference_create(dev, &c->memops, &refs, n);
  if (!rc) rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, n * 4);
  if (!rc) rc = gs_stager_create(dev, &down, GS_MEM_READBACK, n * 4);
  if (!rc) {
    gs_generate(GS_KEY_U32, (gs_dist){GS_DIST_UNIFORM, 0}, 1, n, 0, n, input, 4);
    rc = gs_upload(&up, gs_buffer_range(&refs.input), input, n * 4, &stats);
  }
  if (!rc)
    rc = time_copy(c, gs_buffer_range(&refs.input), gs_buffer_range(&refs.output), n, false, reps,
                   &result->copy_seconds);
  result->lookback_tile = scans[0] && !rc ? gs_scan_tile_for(scans[0], n) : 0;
  for (int a = -2; a < GS_REFSCAN_COUNT && !rc; a++) {
    scan_work w = {.scan = a < 0 ? scans[a + 2] : NULL,
                   .state = a < 0 ? gs_buffer_range(&state[a + 2]) : (gs_range){0},
                   .refs = &refs,
                   .algo = a < 0 ? GS_REFSCAN_HILLIS_STEELE : (gs_refscan_algo)a,
                   .n = n};
    const char *name = a == -2 ? "look-back (gpusort scan)" : a == -1 ? "reduce-then-scan" : gs_refscan_name(w.algo);
    rc = bench_one_scan(c, &w, name, input, reps, &down, result);
  }
  free(input);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_buffer_destroy(dev, &state[0]);
  gs_buffer_destroy(dev, &state[1]);
  gs_scan_reference_destroy(&refs);
  return rc;
}

/* ---- The look-back family ---- */

/* One compaction of the shared input; timestamps around the primitive alone. */
typedef struct {
  const gs_compact *compact;
  gs_compact_run run;
  uint64_t n;
  gs_compact_rest rest; /* runs after the first find the state as the one before left it (each
                         * case starts from none: the cases share one state block in turn) */
} compact_work;

static int record_compact(void *work, VkCommandBuffer cb, gs_timestamps *ts) {
  compact_work *w = work;
  w->run.rest = &w->rest;
  return gs_compact_record(w->compact, cb, w->n, &w->run, ts);
}

/* CUB's inputs for the same primitives (../shared/bench/cub_bench.cu): uniform keys for select
 * and partition (kept: the upper half); sorted keys of about n/16 distinct values for unique,
 * run-length encoding and reduce-by-key (whose values are the uniform keys). */
typedef struct {
  const char *name;
  gs_compact_config config;
  bool sorted_keys;
} compact_case;

/* keys[i] % distinct for every i, in ascending order, by counting (qsort of 2^28 keys took
 * longer than the GPU machine lets a command run). */
static int sorted_residues(const uint32_t *keys, uint64_t n, uint64_t distinct, uint32_t *out) {
  uint64_t *counts = calloc(distinct, sizeof *counts);
  if (!counts) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  for (uint64_t i = 0; i < n; i++) counts[keys[i] % distinct]++;
  uint64_t at = 0;
  for (uint64_t v = 0; v < distinct; v++)
    for (uint64_t k = 0; k < counts[v]; k++) out[at++] = (uint32_t)v;
  free(counts);
  return GPUSORT_OK;
}

/* What the GPU should have written: keys (and values) and the count, from the host. */
static uint64_t expected_compaction(const compact_case *k, const uint32_t *keys, const uint32_t *values, uint64_t n,
                                    uint32_t *out_keys, uint32_t *out_values) {
  uint64_t m = 0;
  if (k->config.mode == GS_COMPACT_SELECT || k->config.mode == GS_COMPACT_PARTITION) {
    for (uint64_t i = 0; i < n; i++)
      if (keys[i] >= 0x80000000u) out_keys[m++] = keys[i];
    if (k->config.mode == GS_COMPACT_PARTITION)
      for (uint64_t i = n, back = m; i-- > 0;)
        if (keys[i] < 0x80000000u) out_keys[back++] = keys[i];
    return m;
  }
  for (uint64_t i = 0; i < n; i++) {
    const uint32_t v = k->config.count_runs ? 1 : values ? values[i] : 0;
    if (i == 0 || keys[i] != keys[i - 1]) {
      out_keys[m] = keys[i];
      out_values[m++] = v;
    } else {
      out_values[m - 1] += v;
    }
  }
  return m;
}

typedef struct {
  const uint32_t *want;
  uint64_t at;
  bool ok;
  uint64_t first_wrong; /* where !ok: the first word that differs, and what it held */
  uint32_t got;
} words_check;

static int check_words(void *ctx, const void *const *fields, size_t count) {
  words_check *c = ctx;
  if (c->ok && memcmp(fields[0], c->want + c->at, count * 4) != 0) {
    const uint32_t *got = fields[0];
    size_t i = 0;
    while (got[i] == c->want[c->at + i]) i++;
    c->ok = false, c->first_wrong = c->at + i, c->got = got[i];
  }
  c->at += count;
  return GPUSORT_OK;
}

/* "keys from index 5: 7, want 8": the first of a check's words that differ */
static void describe_wrong(const char *what, const words_check *c, char *out, size_t size) {
  if (!c->ok && !out[0])
    snprintf(out, size, "%s from index %llu: %u, want %u", what, (unsigned long long)c->first_wrong, c->got,
             c->want[c->first_wrong]);
}

int gs_bench_compact(gs_context *c, uint64_t n, unsigned reps, gpusort_bench_scan_result *result) {
  gs_device *dev = &c->dev;
  static const compact_case cases[] = {
      {"select (50% kept)", {.mode = GS_COMPACT_SELECT, .key = GS_KEY_U32}, false},
      {"partition (50% first)", {.mode = GS_COMPACT_PARTITION, .key = GS_KEY_U32}, false},
      {"unique (n/16 runs)", {.mode = GS_COMPACT_UNIQUE, .key = GS_KEY_U32}, true},
      {"rle (n/16 runs)",
       {.mode = GS_COMPACT_REDUCE_BY_KEY, .key = GS_KEY_U32, .value = GS_KEY_U32, .acc = GS_KEY_U32, .count_runs = true},
       true},
      {"reduce-by-key sum (n/16 runs)",
       {.mode = GS_COMPACT_REDUCE_BY_KEY, .key = GS_KEY_U32, .value = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM},
       true},
  };
  const unsigned ncases = sizeof cases / sizeof cases[0];
  /* uniform keys, sorted keys, values; kept keys and values out; the expected ones on the host */
  if (n == 0 || n > gs_compact_max_elements(dev, &cases[4].config) || 6 * n * 4 > c->budget)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu elements do not fit %s", (unsigned long long)n, dev->info.name);
  gs_buffer uniform = {0}, sorted = {0}, keys_out = {0}, values_out = {0}, state = {0}, program = {0};
  gs_stager up = {0}, down = {0};
  gs_transfer_stats stats = {0};
  uint32_t *keys = malloc(n * 4), *sorted_keys = malloc(n * 4), *want_keys = malloc(n * 4), *want_values = malloc(n * 4);
  int rc = keys && sorted_keys && want_keys && want_values ? GPUSORT_OK
                                                           : gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  const gs_compact *compacts[sizeof cases / sizeof cases[0]] = {NULL};
  for (unsigned k = 0; k < ncases && !rc; k++) rc = gs_context_compact(c, &cases[k].config, &compacts[k]);
  VkDeviceSize state_bytes = 0;
  for (unsigned k = 0; k < ncases && !rc; k++)
    if (gs_compact_state_bytes(compacts[k], n) > state_bytes) state_bytes = gs_compact_state_bytes(compacts[k], n);
  if (!rc) rc = gs_buffer_create(dev, &uniform, n * 4, GS_MEM_DEVICE, "benchmark keys");
  if (!rc) rc = gs_buffer_create(dev, &sorted, n * 4, GS_MEM_DEVICE, "benchmark sorted keys");
  if (!rc) rc = gs_buffer_create(dev, &keys_out, n * 4, GS_MEM_DEVICE, "benchmark kept keys");
  if (!rc) rc = gs_buffer_create(dev, &values_out, n * 4, GS_MEM_DEVICE, "benchmark values");
  if (!rc) rc = gs_buffer_create(dev, &state, state_bytes, GS_MEM_DEVICE, "benchmark state");
  if (!rc) rc = gs_buffer_create(dev, &program, sizeof(gs_predicate_op), GS_MEM_DEVICE, "benchmark predicate");
  if (!rc) rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, n * 4);
  if (!rc) rc = gs_stager_create(dev, &down, GS_MEM_READBACK, n * 4 + 16);
  if (!rc) {
    gs_generate(GS_KEY_U32, (gs_dist){GS_DIST_UNIFORM, 0}, 1, n, 0, n, keys, 4);
    rc = sorted_residues(keys, n, n / 16 ? n / 16 : 1, sorted_keys);
    if (!rc) rc = gs_upload(&up, gs_buffer_range(&uniform), keys, n * 4, &stats);
  }
  if (!rc) rc = gs_upload(&up, gs_buffer_range(&sorted), sorted_keys, n * 4, &stats);
  if (!rc) {
    const gs_predicate_op upper_half = {GS_PRED_GE, 0, 0x80000000u, 0, 0, 0};
    rc = gs_upload(&up, gs_buffer_range(&program), &upper_half, sizeof upper_half, &stats);
  }
  if (!rc)
    rc = time_copy(c, gs_buffer_range(&uniform), gs_buffer_range(&keys_out), n, false, reps, &result->copy_seconds);
  result->lookback_tile = compacts[0] && !rc ? compacts[0]->tile : 0;
  for (unsigned k = 0; k < ncases && !rc; k++) {
    const compact_case *cc = &cases[k];
    const bool reduces = cc->config.mode == GS_COMPACT_REDUCE_BY_KEY;
    compact_work w = {compacts[k],
                      {.keys_in = gs_buffer_range(cc->sorted_keys ? &sorted : &uniform),
                       .values_in = gs_buffer_range(&uniform),
                       .keys_out = gs_buffer_range(&keys_out),
                       .values_out = reduces ? gs_buffer_range(&values_out) : (gs_range){0},
                       .state = gs_buffer_range(&state),
                       .program = gs_buffer_range(&program),
                       .program_length = 1},
                      n,
                      {0}};
    const timed_work work = {record_compact, collect_span, 1, &w};
    double seconds;
    if ((rc = time_runs(dev, reps, &work, &seconds))) break;
    /* the last run's count and outputs against the host's */
    const uint64_t m = expected_compaction(cc, cc->sorted_keys ? sorted_keys : keys, keys, n, want_keys, want_values);
    const uint32_t want_total = (uint32_t)m;
    words_check total_ok = {.want = &want_total, .ok = true};
    gs_field total_field = {gs_subrange(gs_buffer_range(&state), GS_COMPACT_TOTAL_OFFSET, 4), 0, 4};
    if ((rc = gs_download_fields(&down, &total_field, 1, 1, check_words, &total_ok, &stats))) break;
    words_check keys_ok = {.want = want_keys, .ok = true}, values_ok = {.want = want_values, .ok = true};
    const uint64_t written = cc->config.mode == GS_COMPACT_PARTITION ? n : m;
    gs_field kf = {gs_buffer_range(&keys_out), 0, 4}, vf = {gs_buffer_range(&values_out), 0, 4};
    if (!rc && written) rc = gs_download_fields(&down, &kf, 1, written, check_words, &keys_ok, &stats);
    if (!rc && written && reduces) rc = gs_download_fields(&down, &vf, 1, written, check_words, &values_ok, &stats);
    if (rc) break;
    const unsigned i = result->algorithms++;
    snprintf(result->algorithm[i].name, sizeof result->algorithm[i].name, "%s", cc->name);
    result->algorithm[i].seconds = seconds;
    result->algorithm[i].checked = total_ok.ok && keys_ok.ok && values_ok.ok;
    if (!result->algorithm[i].checked) {
      char detail[128] = "";
      describe_wrong("the count", &total_ok, detail, sizeof detail);
      describe_wrong("keys", &keys_ok, detail, sizeof detail);
      describe_wrong("values", &values_ok, detail, sizeof detail);
      rc = gs_fail(GPUSORT_ERROR_VERIFY, "the benchmark's %s of %llu keys gave a wrong result: %s of %llu", cc->name,
                   (unsigned long long)n, detail, (unsigned long long)m);
    }
  }
  free(keys), free(sorted_keys), free(want_keys), free(want_values);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_buffer_destroy(dev, &uniform);
  gs_buffer_destroy(dev, &sorted);
  gs_buffer_destroy(dev, &keys_out);
  gs_buffer_destroy(dev, &values_out);
  gs_buffer_destroy(dev, &state);
  gs_buffer_destroy(dev, &program);
  return rc;
}
