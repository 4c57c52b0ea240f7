/* The look-back family on the GPU (src/prim/compact.h) against CPU references.
 *
 *   test_compact matrix   select (selectivities 0, 1, 50 and 100 %, compound predicates, NaNs
 *                         and signed zeros), partition, unique (with and without the key of a
 *                         previous chunk) and reduce-by-key (every value type, operator and
 *                         widened accumulator), for every key type, over sizes at every tile
 *                         boundary, with runs within tiles, across them and over many; run
 *                         lengths (reduce-by-key of ones) into u32 and u64
 *   test_compact small    a few of each (for runs under the validation layer)
 *   test_compact misaligned   the small set with keys and values starting one element into
 *                         their buffers (not 16-byte aligned: loads of one element each)
 *   test_compact MODE TYPE   only keys of TYPE (u32, i32, f32, u64, i64, f64)
 *   test_compact MODE [TYPE] only:M,...   only the commands M (select, partition, unique, rle,
 *                         reduce-by-key), their tiles' edges alone among the sizes: for the knobs'
 *                         reruns (tests/meson.build) whose knob shapes only some of them, as
 *                         lavapipe spends most of their time compiling the others' pipelines
 *   (run matrix with GPUSORT_LOOKBACK_SPIN=1 for the look-back fallback) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "io/transfer.h"
#include "job/context.h"
#include "prim/compact.h"
#include "util/error.h"

/* the commands a run checks (only:) */
enum { ONLY_SELECT = 1, ONLY_PARTITION = 2, ONLY_UNIQUE = 4, ONLY_RLE = 8, ONLY_REDUCE = 16, ONLY_ALL = 31 };
static const char *const only_names[] = {"select", "partition", "unique", "rle", "reduce-by-key"}; /* (ONLY_* bit i: [i]) */

typedef struct {
  gs_context ctx;
  gs_device *dev;
  unsigned only; /* ONLY_* */
  bool small;
  bool misaligned; /* inputs one element into their buffers */
  bool kept;       /* each pass checked finds its state as passes before it left it (kept_passes) */
  int failures, checks;
} tester;

static const gs_key_type all_types[] = {GS_KEY_U32, GS_KEY_I32, GS_KEY_F32, GS_KEY_U64, GS_KEY_I64, GS_KEY_F64};

static uint64_t rnd(uint64_t i, uint64_t seed) { return XXH3_64bits_withSeed(&i, 8, seed); }

/* ---- Inputs ---- */

typedef enum { KEYS_UNIFORM, KEYS_SPECIAL, KEYS_RUNS_SHORT, KEYS_RUNS_LONG, KEYS_EQUAL, KEYS_DISTINCT } key_dist;

static uint64_t float_bits(const gs_key_info *info, double v) {
  if (info->bytes == 8) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
  }
  const float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* Stored bits of key i. Runs: a new key after each run (lengths 1-4, or up to 3 tiles). */
static void make_keys(const gs_key_info *info, key_dist dist, uint64_t n, uint64_t tile, uint64_t *keys) {
  const uint64_t mask = info->bytes == 8 ? UINT64_MAX : UINT32_MAX;
  uint64_t current = 0, left = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = rnd(i, 7 + n);
    switch (dist) {
    case KEYS_UNIFORM: keys[i] = r & mask; break;
    case KEYS_SPECIAL: {
      static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 1e-310, 3.5};
      keys[i] = info->kind == GS_KEY_KIND_FLOAT ? float_bits(info, specials[r % 10]) : (r % 3 == 0 ? 0 : r & mask);
      break;
    }
    case KEYS_EQUAL: keys[i] = 0x1234 & mask; break;
    case KEYS_DISTINCT: keys[i] = i & mask; break;
    case KEYS_RUNS_SHORT:
    case KEYS_RUNS_LONG:
      if (left == 0) {
        current = r & mask;
        left = dist == KEYS_RUNS_SHORT ? 1 + r % 4 : 1 + (r >> 8) % (3 * tile);
      }
      keys[i] = current;
      left--;
      break;
    }
  }
}

static void store_all(unsigned bytes, const uint64_t *bits, uint64_t n, unsigned char *out) {
  for (uint64_t i = 0; i < n; i++) gs_key_store_bits(bytes, out + i * bytes, bits[i]);
}

/* ---- Running a compaction ---- */

static int append(void *ctx, const void *data, size_t size) {
  unsigned char **cursor = ctx;
  memcpy(*cursor, data, size);
  *cursor += size;
  return GPUSORT_OK;
}

/* Downloads `bytes` of a device range into host memory. */
static int download(tester *t, gs_range from, void *to, size_t bytes) {
  if (bytes == 0) return GPUSORT_OK;
  gs_stager down = {0};
  gs_transfer_stats stats = {0};
  unsigned char *cursor = to;
  int rc = gs_stager_create(t->dev, &down, GS_MEM_READBACK, bytes);
  if (!rc) rc = gs_download(&down, from, bytes, append, &cursor, &stats);
  gs_stager_destroy(&down);
  return rc;
}

typedef struct {
  uint32_t total;
  unsigned char *keys;  /* n keys */
  uint32_t *indices;    /* n */
  unsigned char *values; /* n accumulator values */
} gpu_result;

enum { OUT_KEYS = 1, OUT_INDICES = 2, OUT_BOTH = 3 };

static bool all_zero(const unsigned char *bytes, size_t size) {
  for (size_t i = 0; i < size; i++)
    if (bytes[i]) return false;
  return true;
}

/* Records one pass on `run` in a submission of its own and waits for it. */
static int one_pass(tester *t, const gs_compact *compact, uint64_t n, const gs_compact_run *run) {
  gs_submission sub = {0};
  int rc = gs_submission_init(t->dev, &sub);
  if (!rc) rc = gs_submission_begin(t->dev, &sub);
  if (!rc) rc = gs_compact_record(compact, sub.cb, n, run, NULL);
  if (!rc) rc = gs_submission_submit(t->dev, &sub, "a pass before");
  if (!rc) rc = gs_submission_wait(t->dev, &sub, "a pass before");
  gs_submission_destroy(t->dev, &sub);
  return rc;
}

/* Fills half `half`'s descriptors of the first `tiles` tiles with ones: NULL, or what failed. */
static const char *plant_ones(tester *t, const gs_compact *compact, gs_range state, unsigned half, uint64_t tiles) {
  gs_range counts, values;
  gs_compact_descriptors(compact, state, half, tiles, &counts, &values);
  const size_t bytes = counts.size > values.size ? counts.size : values.size;
  unsigned char *ones = malloc(bytes);
  if (!ones) return "out of host memory";
  memset(ones, 0xff, bytes);
  gs_transfer_stats stats = {0};
  gs_stager up = {0};
  const bool failed = gs_stager_create(t->dev, &up, GS_MEM_UPLOAD, bytes) ||
                      gs_upload(&up, counts, ones, counts.size, &stats) ||
                      (values.size && gs_upload(&up, values, ones, values.size, &stats));
  gs_stager_destroy(&up);
  free(ones);
  return failed ? "the descriptors could not be filled" : NULL;
}

/* Whether the ticket counter and half `half`'s descriptors of the first `tiles` tiles read
 * zero: NULL, or what does not. */
static const char *left_nonzero(tester *t, const gs_compact *compact, gs_range state, unsigned half, uint64_t tiles) {
  gs_range counts, values;
  gs_compact_descriptors(compact, state, half, tiles, &counts, &values);
  const size_t bytes = 4 + counts.size + values.size;
  unsigned char *words = malloc(bytes);
  if (!words) return "out of host memory";
  const char *wrong = NULL;
  if (download(t, gs_subrange(state, 0, 4), words, 4) || download(t, counts, words + 4, counts.size) ||
      download(t, values, words + 4 + counts.size, values.size))
    wrong = "the state could not be read";
  else if (!all_zero(words, 4))
    wrong = "the ticket counter was left nonzero";
  else if (!all_zero(words + 4, counts.size))
    wrong = "count descriptors were left";
  else if (!all_zero(words + 4 + counts.size, values.size))
    wrong = "value descriptors were left";
  free(words);
  return wrong;
}

/* Before the pass checked, two on its state block that track what it holds (gs_compact_rest):
 * one over the later keys alone, which clears the block and takes half 0, whose descriptors
 * for all the keys' tiles are then filled with ones; then one over all keys in half 1, whose
 * tiles must zero those. The pass checked, in half 0 again, clears nothing: it needs them
 * zeroed and the ticket counter too, which this checks on the block itself first (on lavapipe
 * a tile seldom reads a descriptor its predecessor has not yet posted again). */
static int kept_passes(tester *t, const gs_compact *compact, uint64_t n, gs_compact_run *run, unsigned kb,
                       unsigned vb, gs_compact_rest *rest) {
  const uint64_t skip = n / 2, tiles = gs_groups_for(n, compact->tile);
  gs_compact_run later = *run;
  later.rest = run->rest = rest;
  later.keys_in = gs_subrange(run->keys_in, skip * kb, (n - skip) * kb);
  if (vb) later.values_in = gs_subrange(run->values_in, skip * vb, (n - skip) * vb);
  int rc = one_pass(t, compact, n - skip, &later);
  const char *wrong = rc || n == 0 ? NULL : plant_ones(t, compact, run->state, 0, tiles);
  if (!rc && !wrong) rc = one_pass(t, compact, n, run);
  if (rc || n == 0) return rc;
  if (!wrong && (rest->half != 0 || rest->zeroed_tiles[0] < tiles))
    wrong = "the pass checked would not find its half at rest";
  if (!wrong) wrong = left_nonzero(t, compact, run->state, 0, tiles);
  return wrong ? gs_fail(GPUSORT_ERROR_RUNTIME, "%s", wrong) : GPUSORT_OK;
}

/* Runs one compaction of n keys (and values) with the outputs asked for (OUT_*) and downloads
 * everything it wrote. */
static int run_gpu(tester *t, const gs_compact_config *c, const unsigned char *keys, const unsigned char *values,
                   uint64_t n, const gs_predicate_op *program, uint32_t program_length, bool has_previous,
                   uint64_t previous, unsigned outputs, gpu_result *out) {
  const unsigned kb = gs_key_info_of(c->key)->bytes;
  const bool rbk = c->mode == GS_COMPACT_REDUCE_BY_KEY;
  const unsigned vb = rbk ? gs_key_info_of(c->value)->bytes : 0, ab = rbk ? gs_key_info_of(c->acc)->bytes : 0;
  const uint64_t m = n ? n : 1;
  /* misaligned: the inputs start one element into buffers one element longer */
  const unsigned key_shift = t->misaligned ? kb : 0, value_shift = t->misaligned ? vb : 0;
  gs_buffer keys_in = {0}, values_in = {0}, keys_out = {0}, indices_out = {0}, values_out = {0}, state = {0},
            program_buf = {0};
  gs_stager up = {0};
  gs_submission sub = {0};
  gs_transfer_stats stats = {0};
  const gs_compact *compact = NULL;
  int rc = gs_context_compact(&t->ctx, c, &compact);
  if (!rc) rc = gs_buffer_create(t->dev, &keys_in, m * kb + key_shift, GS_MEM_DEVICE, "test keys");
  if (!rc) rc = gs_buffer_create(t->dev, &keys_out, m * kb, GS_MEM_DEVICE, "test kept keys");
  if (!rc) rc = gs_buffer_create(t->dev, &indices_out, m * 4, GS_MEM_DEVICE, "test indices");
  if (!rc && rbk) rc = gs_buffer_create(t->dev, &values_in, m * vb + value_shift, GS_MEM_DEVICE, "test values");
  if (!rc && rbk) rc = gs_buffer_create(t->dev, &values_out, m * ab, GS_MEM_DEVICE, "test reduced values");
  if (!rc) rc = gs_buffer_create(t->dev, &state, gs_compact_state_bytes(compact, n), GS_MEM_DEVICE, "test state");
  if (!rc) rc = gs_buffer_create(t->dev, &program_buf, sizeof(gs_predicate_op) * GS_PREDICATE_MAX_OPS, GS_MEM_DEVICE,
                                 "test program");
  if (!rc) rc = gs_stager_create(t->dev, &up, GS_MEM_UPLOAD, m * (kb > vb ? kb : vb) + 4096);
  const gs_range keys_range = gs_subrange(gs_buffer_range(&keys_in), key_shift, m * kb);
  const gs_range values_range = rbk ? gs_subrange(gs_buffer_range(&values_in), value_shift, m * vb) : (gs_range){0};
  if (!rc && n) rc = gs_upload(&up, keys_range, keys, n * kb, &stats);
  if (!rc && n && rbk) rc = gs_upload(&up, values_range, values, n * vb, &stats);
  if (!rc && program_length)
    rc = gs_upload(&up, gs_buffer_range(&program_buf), program, program_length * sizeof *program, &stats);
  if (!rc) {
    gs_compact_run run = {.keys_in = keys_range,
                          .values_in = values_range,
                          .keys_out = outputs & OUT_KEYS ? gs_buffer_range(&keys_out) : (gs_range){0},
                          .indices_out = outputs & OUT_INDICES ? gs_buffer_range(&indices_out) : (gs_range){0},
                          .values_out = gs_buffer_range(&values_out),
                          .state = gs_buffer_range(&state),
                          .program = gs_buffer_range(&program_buf),
                          .program_length = program_length,
                          .has_previous = has_previous,
                          .previous_bits = previous};
    gs_compact_rest rest = {0};
    if (t->kept) rc = kept_passes(t, compact, n, &run, kb, rbk ? vb : 0, &rest);
    if (!rc) rc = gs_submission_init(t->dev, &sub);
    if (!rc) rc = gs_submission_begin(t->dev, &sub);
    if (!rc) rc = gs_compact_record(compact, sub.cb, n, &run, NULL);
  }
  if (!rc) rc = gs_submission_submit(t->dev, &sub, "the test compaction");
  if (!rc) rc = gs_submission_wait(t->dev, &sub, "the test compaction");
  unsigned char control[8];
  if (!rc) rc = download(t, gs_buffer_range(&state), control, 8);
  if (!rc) memcpy(&out->total, control + GS_COMPACT_TOTAL_OFFSET, 4);
  const uint64_t written = c->mode == GS_COMPACT_PARTITION ? n : out->total;
  if (!rc && written > n) rc = gs_fail(GPUSORT_ERROR_RUNTIME, "a total of %u for %llu keys", out->total,
                                       (unsigned long long)n);
  if (!rc && (outputs & OUT_KEYS)) rc = download(t, gs_buffer_range(&keys_out), out->keys, written * kb);
  if (!rc && (outputs & OUT_INDICES)) rc = download(t, gs_buffer_range(&indices_out), out->indices, written * 4);
  if (!rc && rbk) rc = download(t, gs_buffer_range(&values_out), out->values, written * ab);
  gs_submission_destroy(t->dev, &sub);
  gs_stager_destroy(&up);
  gs_buffer_destroy(t->dev, &keys_in);
  gs_buffer_destroy(t->dev, &values_in);
  gs_buffer_destroy(t->dev, &keys_out);
  gs_buffer_destroy(t->dev, &indices_out);
  gs_buffer_destroy(t->dev, &values_out);
  gs_buffer_destroy(t->dev, &state);
  gs_buffer_destroy(t->dev, &program_buf);
  return rc;
}

/* ---- References ---- */

/* A predicate both as the kernel's program and as a plain C test on the key's value. */
typedef struct {
  const char *name;
  gs_predicate_op ops[4];
  uint32_t length;
  bool (*test)(const gs_key_info *info, uint64_t bits, uint64_t param);
  uint64_t param;
} predicate;

static bool is_nan_bits(const gs_key_info *info, uint64_t bits) {
  if (info->kind != GS_KEY_KIND_FLOAT) return false;
  if (info->bytes == 8) {
    double d;
    memcpy(&d, &bits, 8);
    return isnan(d);
  }
  float f;
  uint32_t b = (uint32_t)bits;
  memcpy(&f, &b, 4);
  return isnan(f);
}

/* The key's value as a long double where that is exact enough to compare with constants of
 * its type (integers of 64 bits compare as integers below). */
static long double value_of(const gs_key_info *info, uint64_t bits) {
  if (info->kind == GS_KEY_KIND_FLOAT) {
    if (info->bytes == 8) {
      double d;
      memcpy(&d, &bits, 8);
      return d;
    }
    float f;
    uint32_t b = (uint32_t)bits;
    memcpy(&f, &b, 4);
    return f;
  }
  if (info->kind == GS_KEY_KIND_SIGNED) return info->bytes == 8 ? (long double)(int64_t)bits : (int32_t)bits;
  return info->bytes == 8 ? (long double)bits : (uint32_t)bits;
}

/* key >= the value whose stored bits are `param` (numeric comparison: NaNs fail, -0 == +0) */
static bool test_at_least(const gs_key_info *info, uint64_t bits, uint64_t param) {
  if (is_nan_bits(info, bits)) return false;
  if (info->kind != GS_KEY_KIND_FLOAT && info->bytes == 8) {
    if (info->kind == GS_KEY_KIND_SIGNED) return (int64_t)bits >= (int64_t)param;
    return bits >= param;
  }
  return value_of(info, bits) >= value_of(info, param);
}

/* (key & 3) == 1 or not (key < 0) -- masks on stored bits, a sign test on the value */
static bool test_compound(const gs_key_info *info, uint64_t bits, uint64_t param) {
  (void)param;
  const bool below_zero = !is_nan_bits(info, bits) && value_of(info, bits) < 0;
  return (bits & 3) == 1 || !below_zero;
}

static bool test_nan(const gs_key_info *info, uint64_t bits, uint64_t param) {
  (void)param;
  return is_nan_bits(info, bits);
}

/* key == 0 (for floats, both zeros) */
static bool test_zero(const gs_key_info *info, uint64_t bits, uint64_t param) {
  (void)param;
  return !is_nan_bits(info, bits) && value_of(info, bits) == 0;
}

/* Ordered bits of a constant with -0 as +0, as the predicate encoding wants them. */
static uint64_t comparable(const gs_key_info *info, uint64_t bits) {
  if (info->kind == GS_KEY_KIND_FLOAT && bits == (uint64_t)1 << (info->bytes * 8 - 1)) bits = 0;
  return gs_ordered_from_bits(info->kind, info->bytes, bits);
}

static gs_predicate_op op_of(uint32_t code, uint64_t a, uint64_t b) {
  return (gs_predicate_op){code, 0, (uint32_t)a, (uint32_t)(a >> 32), (uint32_t)b, (uint32_t)(b >> 32)};
}

/* key >= the constant whose stored bits are `bits` */
static predicate at_least(const gs_key_info *info, uint64_t bits, const char *name) {
  predicate p = {name, {op_of(GS_PRED_GE, comparable(info, bits), 0)}, 1, test_at_least, bits};
  return p;
}

/* ---- Checks ---- */

static void report(tester *t, bool ok, const char *what, const char *label, uint64_t n, const char *detail) {
  t->checks++;
  if (ok) return;
  t->failures++;
  if (t->failures <= 30) fprintf(stderr, "FAIL %s %s n=%llu: %s\n", what, label, (unsigned long long)n, detail);
}

static void check_select(tester *t, gs_key_type type, bool partition, const predicate *p, key_dist dist, uint64_t n,
                         uint64_t tile) {
  if (!(t->only & (partition ? ONLY_PARTITION : ONLY_SELECT))) return;
  const gs_key_info *info = gs_key_info_of(type);
  const unsigned kb = info->bytes;
  const uint64_t m = n ? n : 1;
  uint64_t *bits = malloc(m * 8);
  unsigned char *keys = malloc(m * kb), *got_keys = malloc(m * kb);
  uint32_t *want = malloc(m * 4), *got_indices = calloc(m, 4);
  make_keys(info, dist, n, tile, bits);
  store_all(kb, bits, n, keys);
  char label[160];
  snprintf(label, sizeof label, "%s %s %s dist %d", partition ? "partition" : "select", info->name, p->name, (int)dist);
  /* reference: kept indices in order, then (partition) the others in reverse order */
  uint64_t kept = 0, back = n;
  for (uint64_t i = 0; i < n; i++) {
    if (p->test(info, bits[i], p->param))
      want[kept++] = (uint32_t)i;
    else if (partition)
      want[--back] = (uint32_t)i;
  }
  const gs_compact_config c = {.mode = partition ? GS_COMPACT_PARTITION : GS_COMPACT_SELECT, .key = type};
  gpu_result r = {0, got_keys, got_indices, NULL};
  /* keys alone, indices alone (the records' path) or both, in turn: the kernel stages keys
   * for the first, positions in the tile for the others */
  const unsigned outputs = 1 + (unsigned)(t->checks % 3);
  int rc = run_gpu(t, &c, keys, NULL, n, p->ops, p->length, false, 0, outputs, &r);
  char detail[256] = "";
  bool ok = rc == GPUSORT_OK;
  if (!ok) snprintf(detail, sizeof detail, "%s", gs_last_error());
  if (ok && r.total != kept) ok = false, snprintf(detail, sizeof detail, "kept %u, want %llu", r.total,
                                                  (unsigned long long)kept);
  const uint64_t written = partition ? n : kept;
  for (uint64_t i = 0; ok && i < written; i++) {
    if (((outputs & OUT_INDICES) && got_indices[i] != want[i]) ||
        ((outputs & OUT_KEYS) && memcmp(got_keys + i * kb, keys + (uint64_t)want[i] * kb, kb) != 0)) {
      ok = false;
      snprintf(detail, sizeof detail, "output %llu (outputs %u): index %u, want %u", (unsigned long long)i, outputs,
               got_indices[i], want[i]);
    }
  }
  report(t, ok, "", label, n, detail);
  free(bits), free(keys), free(got_keys), free(want), free(got_indices);
}

/* Unique: the first index of each run (a chunk's first key continues `previous` when given). */
static void check_unique(tester *t, gs_key_type type, key_dist dist, uint64_t n, uint64_t tile, bool with_previous) {
  if (!(t->only & ONLY_UNIQUE)) return;
  const gs_key_info *info = gs_key_info_of(type);
  const unsigned kb = info->bytes;
  const uint64_t m = n ? n : 1;
  uint64_t *bits = malloc(m * 8);
  unsigned char *keys = malloc(m * kb), *got_keys = malloc(m * kb);
  uint32_t *want = malloc(m * 4), *got_indices = malloc(m * 4);
  make_keys(info, dist, n, tile, bits);
  store_all(kb, bits, n, keys);
  const uint64_t previous = n ? bits[0] : 0; /* the first run continues the previous chunk's */
  uint64_t runs = 0;
  for (uint64_t i = 0; i < n; i++)
    if (i == 0 ? !with_previous : bits[i] != bits[i - 1]) want[runs++] = (uint32_t)i;
  char label[160];
  snprintf(label, sizeof label, "unique %s dist %d%s", info->name, (int)dist, with_previous ? " after a chunk" : "");
  const gs_compact_config c = {.mode = GS_COMPACT_UNIQUE, .key = type};
  gpu_result r = {0, got_keys, got_indices, NULL};
  int rc = run_gpu(t, &c, keys, NULL, n, NULL, 0, with_previous, previous, OUT_BOTH, &r);
  char detail[256] = "";
  bool ok = rc == GPUSORT_OK;
  if (!ok) snprintf(detail, sizeof detail, "%s", gs_last_error());
  if (ok && r.total != runs) ok = false, snprintf(detail, sizeof detail, "%u runs, want %llu", r.total,
                                                  (unsigned long long)runs);
  for (uint64_t i = 0; ok && i < runs; i++)
    if (got_indices[i] != want[i] || memcmp(got_keys + i * kb, keys + (uint64_t)want[i] * kb, kb) != 0) {
      ok = false;
      snprintf(detail, sizeof detail, "run %llu: index %u, want %u", (unsigned long long)i, got_indices[i], want[i]);
    }
  /* and keys alone (a run writing no indices) */
  if (ok && n) {
    memset(got_keys, 0, m * kb);
    gpu_result alone = {0, got_keys, NULL, NULL};
    rc = run_gpu(t, &c, keys, NULL, n, NULL, 0, with_previous, previous, OUT_KEYS, &alone);
    if (rc != GPUSORT_OK) ok = false, snprintf(detail, sizeof detail, "keys alone: %s", gs_last_error());
    for (uint64_t i = 0; ok && i < runs; i++)
      if (memcmp(got_keys + i * kb, keys + (uint64_t)want[i] * kb, kb) != 0)
        ok = false, snprintf(detail, sizeof detail, "keys alone: run %llu", (unsigned long long)i);
  }
  report(t, ok, "", label, n, detail);
  free(bits), free(keys), free(got_keys), free(want), free(got_indices);
}

/* Values for reduce-by-key: integers of every size; floats with small integer values, whose
 * sums are exact in any order. */
static uint64_t make_value(const gs_key_info *info, uint64_t i) {
  const uint64_t r = rnd(i, 31);
  if (info->kind == GS_KEY_KIND_FLOAT) return float_bits(info, (double)((int64_t)(r % 2001) - 1000));
  return info->bytes == 8 ? r : (uint32_t)r;
}

/* The host's combination of accumulator bits, as lib/scan_ops.glsl defines it. */
static uint64_t combine_bits(const gs_key_info *acc, gs_scan_op op, uint64_t a, uint64_t b) {
  if (op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT) {
    if (acc->bytes == 8) {
      double x, y;
      memcpy(&x, &a, 8), memcpy(&y, &b, 8);
      x += y;
      memcpy(&a, &x, 8);
      return a;
    }
    float x, y;
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    memcpy(&x, &ua, 4), memcpy(&y, &ub, 4);
    x += y;
    memcpy(&ua, &x, 4);
    return ua;
  }
  const uint64_t mask = acc->bytes == 8 ? UINT64_MAX : UINT32_MAX;
  if (op == GS_SCAN_SUM) return (a + b) & mask;
  const uint64_t oa = gs_ordered_from_bits(acc->kind, acc->bytes, a), ob = gs_ordered_from_bits(acc->kind, acc->bytes, b);
  return (op == GS_SCAN_MIN) == (ob < oa) ? b : a;
}

/* A value's bits widened to the accumulator (integers extended, numbers converted to f64). */
static uint64_t widen(const gs_key_info *in, const gs_key_info *acc, uint64_t bits) {
  if (in == acc) return bits;
  if (acc->kind == GS_KEY_KIND_FLOAT) {
    const double d = (double)value_of(in, bits);
    uint64_t out;
    memcpy(&out, &d, 8);
    return out;
  }
  if (in->kind == GS_KEY_KIND_SIGNED && in->bytes == 4) return (uint64_t)(int64_t)(int32_t)bits;
  return bits;
}

/* count_runs: the values are ones (run-length encoding), whatever values_in holds. */
static void check_reduce(tester *t, gs_key_type key, gs_key_type value, gs_key_type acc, gs_scan_op op, key_dist dist,
                         uint64_t n, uint64_t tile, bool count_runs) {
  if (!(t->only & (count_runs ? ONLY_RLE : ONLY_REDUCE))) return;
  const gs_key_info *ki = gs_key_info_of(key), *vi = gs_key_info_of(value), *ai = gs_key_info_of(acc);
  const unsigned kb = ki->bytes, vb = vi->bytes, ab = ai->bytes;
  const uint64_t m = n ? n : 1;
  uint64_t *bits = malloc(m * 8), *want_values = malloc(m * 8);
  unsigned char *keys = malloc(m * kb), *values = malloc(m * vb), *got_keys = malloc(m * kb),
                *got_values = malloc(m * ab);
  uint32_t *want = malloc(m * 4), *got_indices = malloc(m * 4);
  make_keys(ki, dist, n, tile, bits);
  store_all(kb, bits, n, keys);
  uint64_t runs = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t v = make_value(vi, i);
    gs_key_store_bits(vb, values + i * vb, v);
    const uint64_t w = count_runs ? 1 : widen(vi, ai, v);
    if (i == 0 || bits[i] != bits[i - 1]) {
      want[runs] = (uint32_t)i;
      want_values[runs++] = w;
    } else {
      want_values[runs - 1] = combine_bits(ai, op, want_values[runs - 1], w);
    }
  }
  char label[160];
  snprintf(label, sizeof label, "%s %s/%s->%s %s dist %d", count_runs ? "run lengths" : "reduce-by-key", ki->name,
           vi->name, ai->name, gs_scan_op_name(op), (int)dist);
  const gs_compact_config c = {
      .mode = GS_COMPACT_REDUCE_BY_KEY, .key = key, .value = value, .acc = acc, .op = op, .count_runs = count_runs};
  gpu_result r = {0, got_keys, got_indices, got_values};
  int rc = run_gpu(t, &c, keys, values, n, NULL, 0, false, 0, OUT_BOTH, &r);
  char detail[256] = "";
  bool ok = rc == GPUSORT_OK;
  if (!ok) snprintf(detail, sizeof detail, "%s", gs_last_error());
  if (ok && r.total != runs) ok = false, snprintf(detail, sizeof detail, "%u runs, want %llu", r.total,
                                                  (unsigned long long)runs);
  for (uint64_t i = 0; ok && i < runs; i++) {
    const uint64_t got = gs_key_load_bits(ab, got_values + i * ab);
    const uint64_t mask = ab == 8 ? UINT64_MAX : UINT32_MAX;
    if (got_indices[i] != want[i] || memcmp(got_keys + i * kb, keys + (uint64_t)want[i] * kb, kb) != 0 ||
        got != (want_values[i] & mask)) {
      ok = false;
      snprintf(detail, sizeof detail, "run %llu (from %u): index %u, value %llx, want %llx", (unsigned long long)i,
               want[i], got_indices[i], (unsigned long long)got, (unsigned long long)(want_values[i] & mask));
    }
  }
  report(t, ok, "", label, n, detail);
  free(bits), free(want_values), free(keys), free(values), free(got_keys), free(got_values), free(want),
      free(got_indices);
}

/* Passes of growing, shrinking and no keys on one state block, each in its own submission and
 * tracked by one gs_compact_rest (some clear the block, most find it at rest): after each,
 * the total is n (distinct keys, each a run of its own) and the ticket counter and every tile
 * the account calls zero, in each half, read zero. */
static void check_kept_sequence(tester *t, const gs_compact_config *config, const char *label) {
  const gs_compact *c = NULL;
  if (gs_context_compact(&t->ctx, config, &c)) {
    report(t, false, "kept sequence", label, 0, gs_last_error());
    return;
  }
  const uint64_t T = c->tile, most = 5 * T;
  const uint64_t sizes[] = {3 * T + 1, 1, 0, 5 * T, 5 * T, 5 * T - 1, 2 * T + 7, 0, 1, 4 * T + 3, 5 * T, 5 * T};
  const bool rbk = config->mode == GS_COMPACT_REDUCE_BY_KEY;
  uint32_t *keys = malloc(most * 4), *ones = malloc(most * 4);
  gs_buffer keys_in = {0}, values_in = {0}, keys_out = {0}, values_out = {0}, state = {0};
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  int rc = keys && ones ? GPUSORT_OK : gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  for (uint64_t i = 0; !rc && i < most; i++) keys[i] = (uint32_t)i, ones[i] = 1;
  if (!rc) rc = gs_buffer_create(t->dev, &keys_in, most * 4, GS_MEM_DEVICE, "test keys");
  if (!rc) rc = gs_buffer_create(t->dev, &values_in, most * 4, GS_MEM_DEVICE, "test values");
  if (!rc) rc = gs_buffer_create(t->dev, &keys_out, most * 4, GS_MEM_DEVICE, "test kept keys");
  if (!rc) rc = gs_buffer_create(t->dev, &values_out, most * 4, GS_MEM_DEVICE, "test reduced values");
  if (!rc) rc = gs_buffer_create(t->dev, &state, gs_compact_state_bytes(c, most), GS_MEM_DEVICE, "test state");
  if (!rc) rc = gs_stager_create(t->dev, &up, GS_MEM_UPLOAD, most * 4);
  if (!rc) rc = gs_upload(&up, gs_buffer_range(&keys_in), keys, most * 4, &stats);
  if (!rc) rc = gs_upload(&up, gs_buffer_range(&values_in), ones, most * 4, &stats);
  gs_stager_destroy(&up);
  if (rc) report(t, false, "kept sequence", label, 0, gs_last_error());
  gs_compact_rest rest = {0};
  for (size_t k = 0; !rc && k < sizeof sizes / sizeof sizes[0]; k++) {
    const uint64_t n = sizes[k];
    const gs_compact_run run = {.keys_in = gs_subrange(gs_buffer_range(&keys_in), 0, (n ? n : 1) * 4),
                                .values_in = rbk ? gs_subrange(gs_buffer_range(&values_in), 0, (n ? n : 1) * 4)
                                                 : (gs_range){0},
                                .keys_out = gs_buffer_range(&keys_out),
                                .values_out = rbk ? gs_buffer_range(&values_out) : (gs_range){0},
                                .state = gs_buffer_range(&state),
                                .rest = &rest};
    const char *wrong = NULL;
    uint32_t total = UINT32_MAX;
    if (one_pass(t, c, n, &run) || download(t, gs_subrange(run.state, GS_COMPACT_TOTAL_OFFSET, 4), &total, 4))
      wrong = gs_last_error();
    else if (total != n)
      wrong = "a wrong total";
    for (unsigned h = 0; h < 2 && !wrong; h++)
      if (rest.zeroed_tiles[h]) wrong = left_nonzero(t, c, run.state, h, rest.zeroed_tiles[h]);
    char detail[160];
    snprintf(detail, sizeof detail, "pass %zu: %s", k, wrong ? wrong : "");
    report(t, !wrong, "kept sequence", label, n, detail);
    rc = wrong != NULL;
  }
  free(keys), free(ones);
  gs_buffer_destroy(t->dev, &keys_in);
  gs_buffer_destroy(t->dev, &values_in);
  gs_buffer_destroy(t->dev, &keys_out);
  gs_buffer_destroy(t->dev, &values_out);
  gs_buffer_destroy(t->dev, &state);
}

/* The keys of one tile of a compaction (the members' tiles can differ: select's and
 * partition's are staged in shared memory, and each mode bounds its invocations and rows by
 * what it keeps in registers: src/prim/compact.c). */
static uint64_t tile_of(tester *t, gs_compact_config config) {
  const gs_compact *c = NULL;
  return gs_context_compact(&t->ctx, &config, &c) ? 1024 : c->tile;
}

/* Each member's compaction of `type` keys whose tiles the checks shape: unique's, select's,
 * partition's, rle's and reduce-by-key's (of u32 sums), in shape_only's order. */
static const unsigned shape_only[] = {ONLY_UNIQUE, ONLY_SELECT, ONLY_PARTITION, ONLY_RLE, ONLY_REDUCE};
static void member_shapes(gs_key_type type, gs_compact_config shapes[5]) {
  const gs_compact_config sum = {.mode = GS_COMPACT_REDUCE_BY_KEY, .key = type, .value = GS_KEY_U32,
                                 .acc = GS_KEY_U32, .op = GS_SCAN_SUM};
  shapes[0] = (gs_compact_config){.mode = GS_COMPACT_UNIQUE, .key = type};
  shapes[1] = (gs_compact_config){.mode = GS_COMPACT_SELECT, .key = type};
  shapes[2] = (gs_compact_config){.mode = GS_COMPACT_PARTITION, .key = type};
  shapes[3] = sum;
  shapes[3].count_runs = true;
  shapes[4] = sum;
}

static void run_type(tester *t, gs_key_type type) {
  const gs_key_info *info = gs_key_info_of(type);
  /* each tile's edges: those of the members checked, where they differ; the first of those
   * tiles (unique's where checked) also shapes the inputs' runs */
  gs_compact_config shapes[5];
  member_shapes(type, shapes);
  uint64_t tiles[5];
  size_t ntiles = 0;
  for (size_t k = 0; k < 5; k++)
    if (t->only & shape_only[k]) tiles[ntiles++] = tile_of(t, shapes[k]);
  /* unique, rle and reduce-by-key walk early exactly where the device's configuration names
   * them (GPUSORT_EARLY_WALK_*; GPUSORT_COMPACT_EARLY_WALK names some or all; lavapipe's tiles
   * all fit the walk's bounds) */
  const uint32_t walk_member[] = {GPUSORT_EARLY_WALK_UNIQUE, 0, 0, GPUSORT_EARLY_WALK_RLE, GPUSORT_EARLY_WALK_REDUCE_BY_KEY};
  for (size_t k = 0; k < 5; k++) {
    const gs_compact *c = NULL;
    if (!walk_member[k] || !(t->only & shape_only[k]) || gs_context_compact(&t->ctx, &shapes[k], &c)) continue;
    const bool named = (t->ctx.config.compact_early_walk & walk_member[k]) != 0;
    report(t, c->early_walk == named, "early walk", only_names[__builtin_ctz(shape_only[k])], 0,
           named ? "named by the configuration, but its tiles do not walk" : "walks, unnamed by the configuration");
  }
  /* every member's compaction walks for its count as the device's configuration says
   * (GPUSORT_COMPACT_SUBGROUP_WALK; lavapipe's preset: by subgroup 0), rle and reduce-by-key
   * by the workgroup where that walk is known wrong for them (NVIDIA) */
  for (size_t k = 0; k < 5; k++) {
    const gs_compact *c = NULL;
    if (!(t->only & shape_only[k]) || gs_context_compact(&t->ctx, &shapes[k], &c)) continue;
    const bool runs = shapes[k].mode == GS_COMPACT_REDUCE_BY_KEY;
    const bool expected = t->ctx.config.compact_subgroup_walk && (!runs || t->ctx.config.compact_runs_subgroup_walk);
    report(t, (c->subgroup_walk != 0) == expected, "subgroup walk", only_names[__builtin_ctz(shape_only[k])], 0,
           "its tiles walk other than the configuration says");
  }
  const uint64_t sg = t->dev->subgroup_size, tile = tiles[0];
  uint64_t sizes[28] = {0, 1};
  size_t count = 2;
  if (!t->small) sizes[count++] = 7, sizes[count++] = sg - 1, sizes[count++] = sg + 1, sizes[count++] = 40 * tile + 3;
  for (size_t k = 0; k < ntiles; k++) {
    bool seen = false;
    for (size_t j = 0; j < k; j++) seen = seen || tiles[j] == tiles[k];
    if (seen) continue;
    if (t->small) {
      sizes[count++] = tiles[k] + 1, sizes[count++] = 5 * tiles[k] + 3;
    } else {
      sizes[count++] = tiles[k] - 1, sizes[count++] = tiles[k], sizes[count++] = tiles[k] + 1;
      sizes[count++] = 3 * tiles[k] + 5;
    }
  }
  const uint64_t top = info->bytes == 8 ? UINT64_MAX : UINT32_MAX;
  /* thresholds on uniform keys: 100 %, 50 %, about 1 %, 0 % of them */
  predicate preds[8];
  size_t np = 0;
  if (info->kind == GS_KEY_KIND_UNSIGNED) {
    preds[np++] = at_least(info, 0, ">= 0 (all)");
    preds[np++] = at_least(info, top / 2 + 1, ">= half");
    preds[np++] = at_least(info, top - top / 100, ">= 99%");
    preds[np++] = at_least(info, top, ">= max");
  } else if (info->kind == GS_KEY_KIND_SIGNED) {
    const uint64_t min = (uint64_t)1 << (info->bytes * 8 - 1);
    preds[np++] = at_least(info, min, ">= min (all)");
    preds[np++] = at_least(info, 0, ">= 0 (half)");
    preds[np++] = at_least(info, (top >> 1) - (top >> 1) / 50, ">= 98% of max");
    preds[np++] = at_least(info, top >> 1, ">= max");
  } else {
    preds[np++] = at_least(info, float_bits(info, -INFINITY), ">= -inf (all but NaN)");
    preds[np++] = at_least(info, float_bits(info, -0.0), ">= -0.0 (half)");
    preds[np++] = at_least(info, float_bits(info, INFINITY), ">= inf (none)");
    preds[np++] = (predicate){"isnan", {op_of(GS_PRED_ISNAN, 0, 0)}, 1, test_nan, 0};
    preds[np++] = (predicate){"== 0", {op_of(GS_PRED_EQ, comparable(info, 0), 0)}, 1, test_zero, 0};
  }
  preds[np++] = (predicate){"(& 3 == 1) or not (< 0)",
                            {op_of(GS_PRED_MASK_EQ, 3, 1), op_of(GS_PRED_LT, comparable(info, 0), 0),
                             op_of(GS_PRED_NOT, 0, 0), op_of(GS_PRED_OR, 0, 0)},
                            4,
                            test_compound,
                            0};
  for (size_t s = 0; s < count; s++) {
    const uint64_t n = sizes[s];
    for (size_t p = 0; p < np; p++) {
      check_select(t, type, false, &preds[p], info->kind == GS_KEY_KIND_FLOAT && p >= 3 ? KEYS_SPECIAL : KEYS_UNIFORM,
                   n, tile);
      if (p == 1 || p + 1 == np) check_select(t, type, true, &preds[p], KEYS_UNIFORM, n, tile);
    }
    if (info->kind == GS_KEY_KIND_FLOAT) check_select(t, type, false, &preds[0], KEYS_SPECIAL, n, tile);
    static const key_dist run_dists[] = {KEYS_RUNS_SHORT, KEYS_RUNS_LONG, KEYS_EQUAL, KEYS_DISTINCT, KEYS_SPECIAL};
    for (size_t d = 0; d < 5; d++) check_unique(t, type, run_dists[d], n, tile, false);
    check_unique(t, type, KEYS_RUNS_LONG, n, tile, true);
    check_unique(t, type, KEYS_DISTINCT, n, tile, true);
  }
  /* reduce-by-key: every value type against this key type, then the operators and widened
   * accumulators, on runs short, long, all equal and all distinct; each configuration over
   * every size in turn (the context keeps a few compactions, and lavapipe compiles each) */
  static const key_dist run_dists[] = {KEYS_RUNS_SHORT, KEYS_RUNS_LONG, KEYS_EQUAL, KEYS_DISTINCT};
  static const gs_key_type widened[][2] = {{GS_KEY_U32, GS_KEY_U64}, {GS_KEY_I32, GS_KEY_I64}, {GS_KEY_F32, GS_KEY_F64},
                                           {GS_KEY_I32, GS_KEY_F64}};
  for (size_t v = 0; v < 6; v++)
    for (int op = 0; op < 3; op++)
      for (size_t s = 0; s < count && (!t->small || op == 0 || v == 2); s++)
        check_reduce(t, type, all_types[v], all_types[v], (gs_scan_op)op, run_dists[(v + op) % 4], sizes[s], tile,
                     false);
  for (size_t w = 0; w < 4 && !t->small; w++)
    for (size_t s = 0; s < count; s++)
      check_reduce(t, type, widened[w][0], widened[w][1], GS_SCAN_SUM, run_dists[w], sizes[s], tile, false);
  for (size_t d = 0; d < 4; d++)
    for (size_t s = 0; s < count; s++)
      check_reduce(t, type, GS_KEY_U32, d % 2 ? GS_KEY_U64 : GS_KEY_U32, GS_SCAN_SUM, run_dists[d], sizes[s], tile,
                   true);
}

/* Where the subgroup walk is known wrong for rle and reduce-by-key (NVIDIA: src/prim/device_config.c),
 * their compactors walk by the workgroup even when the walk is asked for, and the others still take
 * it: NVIDIA's configuration chosen for a device that names itself so, and compactors built here
 * under such a configuration. */
static void check_runs_walk_bound(tester *t) {
  gs_device_info nvidia = t->dev->info;
  nvidia.vendor_id = 0x10DE;
  nvidia.driver_id = VK_DRIVER_ID_NVIDIA_PROPRIETARY;
  gs_device_config config;
  gs_device_config_choose(&nvidia, &config);
  report(t, !config.compact_runs_subgroup_walk, "subgroup walk", "nvidia", 0,
         "rle and reduce-by-key may take the subgroup walk on NVIDIA");
  config = t->ctx.config;
  config.compact_subgroup_walk = true;
  config.compact_runs_subgroup_walk = false;
  gs_compact_config members[5];
  member_shapes(GS_KEY_U32, members);
  const size_t checked[] = {0, 1, 3, 4}; /* unique, select, rle, reduce-by-key */
  for (size_t j = 0; j < 4; j++) {
    const size_t i = checked[j];
    const char *name = only_names[__builtin_ctz(shape_only[i])];
    gs_compact c;
    if (gs_compact_create(t->dev, &t->ctx.memops, &config, &members[i], &c)) {
      report(t, false, "subgroup walk bound", name, 0, gs_last_error());
      gs_compact_destroy(&c);
      continue;
    }
    const bool expected = members[i].mode != GS_COMPACT_REDUCE_BY_KEY;
    report(t, (c.subgroup_walk != 0) == expected, "subgroup walk bound", name, 0,
           expected ? "walks by the workgroup, though asked to walk by subgroup 0"
                    : "walks by subgroup 0 where that walk is known wrong");
    gs_compact_destroy(&c);
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "matrix";
  tester t = {.only = ONLY_ALL};
  t.misaligned = strcmp(mode, "misaligned") == 0;
  t.small = t.misaligned || strcmp(mode, "small") == 0;
  gs_key_type only = GS_KEY_U32;
  bool one_type = false, usage = !t.small && strcmp(mode, "matrix") != 0;
  for (int i = 2; i < argc && !usage; i++) {
    if (strcmp(argv[i], "kept") == 0) {
      t.kept = true;
    } else if (strncmp(argv[i], "only:", 5) == 0) {
      t.only = 0;
      for (const char *m = argv[i] + 5; *m && !usage; m += *m == ',') {
        const size_t len = strcspn(m, ",");
        unsigned bit = 0;
        for (unsigned c = 0; c < 5; c++)
          if (strlen(only_names[c]) == len && strncmp(m, only_names[c], len) == 0) bit = 1u << c;
        usage = bit == 0;
        t.only |= bit;
        m += len;
      }
    } else {
      usage = one_type || gs_key_type_from_name(argv[i], &only) != 0;
      one_type = true;
    }
  }
  if (usage || t.only == 0) {
    fprintf(stderr, "usage: test_compact matrix|small|misaligned [u32|i32|f32|u64|i64|f64] "
                    "[only:select,partition,unique,rle,reduce-by-key] [kept]\n");
    return 2;
  }
  gs_context_init(&t.ctx, -1, 60, 0);
  if (gs_context_device(&t.ctx, NULL, NULL)) {
    fprintf(stderr, "cannot open a device: %s\n", gs_last_error());
    return 1;
  }
  t.dev = &t.ctx.dev;
  printf("device: %s, subgroup %u, mode %s%s, commands", t.dev->info.name, t.dev->subgroup_size, mode,
         t.kept ? " (kept state)" : "");
  for (unsigned c = 0; c < 5; c++)
    if (t.only & (1u << c)) printf(" %s", only_names[c]);
  printf("\n");
  if (!t.small && !t.kept) check_runs_walk_bound(&t);
  for (size_t i = 0; i < 6; i++)
    if (!one_type || all_types[i] == only) run_type(&t, all_types[i]);
  if (t.kept && (t.only & ONLY_UNIQUE))
    check_kept_sequence(&t, &(gs_compact_config){.mode = GS_COMPACT_UNIQUE, .key = GS_KEY_U32}, "unique u32");
  if (t.kept && (t.only & ONLY_REDUCE))
    check_kept_sequence(&t,
                        &(gs_compact_config){.mode = GS_COMPACT_REDUCE_BY_KEY, .key = GS_KEY_U32, .value = GS_KEY_U32,
                                             .acc = GS_KEY_U32, .op = GS_SCAN_SUM},
                        "reduce-by-key u32");
  printf("%d checks, %d failures\n", t.checks, t.failures);
  gs_context_close(&t.ctx);
  return t.failures ? 1 : 0;
}
