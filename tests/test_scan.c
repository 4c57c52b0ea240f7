/* GPU scans against a CPU reference.
 *
 *   test_scan matrix        every input type x op x inclusive/exclusive x algorithm over
 *                           boundary sizes: integers and min/max exactly, float sums within
 *                           the documented error bound
 *   test_scan acc           widened accumulators (u32 -> u64, i32 -> i64, ints and f32 -> f64)
 *   test_scan wrap          integer sums that overflow wrap modulo 2^width
 *   test_scan levels        reduce-then-scan and reductions with two and three levels of tile
 *                           values, also with wider accumulators (run with a small tile:
 *                           GPUSORT_SCAN_WORKGROUP=64 GPUSORT_SCAN_ROWS=1)
 *   test_scan deterministic reduce-then-scan float sums of a few million values, bit-identical
 *                           over repeated runs
 *   test_scan references    the benchmark's textbook scans (Hillis-Steele, Blelloch over global
 *                           and shared memory, subgroup-blocked), inclusive and exclusive
 *   test_scan reduce        reductions of every type and operator over boundary sizes
 *   test_scan small         small look-back scans' tiles (run with GPUSORT_SCAN_SMALL_ROWS where
 *                           the device's preset has none): sizes around the small tile and the
 *                           change of tile, each scan checked for the tiles it took
 *   test_scan chunks        scans and reductions of arrays larger than a chunk, in chunks that
 *                           carry the combination of the earlier ones (as files of any size
 *                           are scanned): every type, operator, direction and algorithm
 *   test_scan kept          look-back scans one after another on one state, cleared only
 *                           before the first (gs_scan_keeps_state): sizes that grow and
 *                           shrink, epochs about to pass 2^30 (the stamps' width) and 2^32, and
 *                           stale descriptors stamped for a later scan, which the scans before
 *                           it must have emptied
 *   (run matrix with GPUSORT_SCAN_SPLIT=1 for the split descriptor layout, with
 *    GPUSORT_LOOKBACK_SPIN=1 for the look-back fallback, and with GPUSORT_SCAN_EARLY_WALK=1 for
 *    the early walk, whose tiles matrix checks) */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "io/transfer.h"
#include "job/context.h"
#include "job/scan_engine.h"
#include "prim/scan_reference.h"
#include "util/error.h"

typedef struct {
  gs_context ctx;
  gs_device *dev;
  uint64_t chunk; /* non-zero: scan through the scan engine in chunks of this many elements */
  uint32_t tickets; /* the tiles the last look-back scan took (not in chunks) */
  gs_buffer *kept_state; /* non-NULL: scans take this state as the scan before left it */
  uint64_t kept_max_n;   /* what it is sized for */
  int failures, checks;
} tester;

/* Downloads land here, in order. */
typedef struct {
  unsigned char *cursor;
  unsigned bytes;
} copy_sink;

static int sink_copy(void *ctx, const void *const *data, size_t count) {
  copy_sink *c = ctx;
  memcpy(c->cursor, data[0], count * c->bytes);
  c->cursor += count * c->bytes;
  return 0;
}

static uint64_t rnd(uint64_t i, uint64_t seed) { return XXH3_64bits_withSeed(&i, 8, seed); }

/* Input values: integers of every size (or near the top, to wrap); floats finite with a spread
 * of magnitudes for sums, any bits (NaNs included) for min/max. */
static void make_input(gs_key_type t, gs_scan_op op, bool wrapping, uint64_t n, uint64_t seed, unsigned char *out) {
  const gs_key_info *info = gs_key_info_of(t);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t r = rnd(i, seed), bits;
    if (info->kind == GS_KEY_KIND_FLOAT && op == GS_SCAN_SUM) {
      const double v = (double)(int32_t)(r >> 32) / 2147483648.0 * ldexp(1.0, (int)(r % 16) - 8);
      if (info->bytes == 8) {
        memcpy(&bits, &v, 8);
      } else {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        bits = b;
      }
    } else if (wrapping) {
      bits = info->bytes == 8 ? (UINT64_MAX - (r >> 8)) : (UINT32_MAX - (uint32_t)(r >> 40));
    } else {
      bits = (i % 5 == 0) ? r : (r >> (r % 31)); /* some large, most of varied size */
    }
    gs_key_store_bits(info->bytes, out + i * info->bytes, bits);
  }
}

/* The accumulator's raw bits for an input element (numeric conversion when widening). */
static uint64_t to_acc(gs_key_type in, gs_key_type acc, uint64_t bits) {
  const gs_key_info *i = gs_key_info_of(in), *a = gs_key_info_of(acc);
  if (in == acc) return bits;
  if (a->kind == GS_KEY_KIND_FLOAT) {
    double d;
    if (i->kind == GS_KEY_KIND_FLOAT) {
      float f;
      uint32_t b = (uint32_t)bits;
      memcpy(&f, &b, 4);
      d = f;
    } else if (i->kind == GS_KEY_KIND_SIGNED) {
      d = i->bytes == 8 ? (double)(int64_t)bits : (double)(int32_t)bits;
    } else {
      d = i->bytes == 8 ? (double)bits : (double)(uint32_t)bits;
    }
    uint64_t out;
    memcpy(&out, &d, 8);
    return out;
  }
  if (i->kind == GS_KEY_KIND_SIGNED && i->bytes == 4) return (uint64_t)(int64_t)(int32_t)bits;
  return bits;
}

static long double as_real(const gs_key_info *a, uint64_t bits) {
  if (a->bytes == 8) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
  }
  float f;
  uint32_t b = (uint32_t)bits;
  memcpy(&f, &b, 4);
  return f;
}

static int append(void *ctx, const void *data, size_t bytes) {
  unsigned char **cursor = ctx;
  memcpy(*cursor, data, bytes);
  *cursor += bytes;
  return GPUSORT_OK;
}

/* The scan engine, in chunks of t->chunk elements (each starting from the carry of the ones
 * before; a reduction's chunk values combined on the host). */
static int scan_in_chunks(tester *t, const gs_scan_config *c, const unsigned char *input, uint64_t n, void *out,
                          unsigned *tile) {
  gs_scan_engine e;
  const unsigned in = gs_key_info_of(c->input)->bytes;
  unsigned char *cursor = out;
  int rc = gs_scan_engine_init(&e, &t->ctx, c, t->chunk);
  for (uint64_t first = 0; !rc && (first < n || first == 0); first += t->chunk) {
    const uint64_t count = n - first < t->chunk ? n - first : t->chunk;
    const gs_record_source source = {.data = input + first * in, .fd = -1};
    rc = gs_scan_engine_chunk(&e, &source, count, append, &cursor);
    if (n == 0) break;
  }
  if (!rc && c->reduce_only) gs_scan_engine_value(&e, out);
  if (!rc) *tile = gs_scan_tile_for(e.scan, e.capacity);
  gs_scan_engine_free(&e);
  return rc;
}

/* Scans (or reduces) n elements on the GPU into `out`; *tile: the scan's tile. */
static int scan_on_gpu(tester *t, const gs_scan_config *c, const void *input, uint64_t n, void *out, unsigned *tile) {
  if (t->chunk) return scan_in_chunks(t, c, input, n, out, tile);
  const unsigned in = gs_key_info_of(c->input)->bytes, acc = gs_key_info_of(c->acc)->bytes;
  const uint64_t results = c->reduce_only ? 1 : n;
  const gs_scan *s;
  gs_buffer in_buf = {0}, out_buf = {0}, own_state = {0}, *state = t->kept_state ? t->kept_state : &own_state;
  const uint64_t max_n = t->kept_state ? t->kept_max_n : n;
  gs_stager up = {0}, down = {0};
  gs_submission sub = {0};
  gs_transfer_stats stats = {0};
  int rc = gs_context_scan(&t->ctx, c, &s);
  if (!rc) rc = gs_buffer_create(t->dev, &in_buf, n * in, GS_MEM_DEVICE, "test input");
  if (!rc) rc = gs_buffer_create(t->dev, &out_buf, results * acc, GS_MEM_DEVICE, "test output");
  if (!rc && !t->kept_state) rc = gs_buffer_create(t->dev, state, gs_scan_state_bytes(s, n), GS_MEM_DEVICE, "test state");
  if (!rc) rc = gs_stager_create(t->dev, &up, GS_MEM_UPLOAD, n * in);
  if (!rc) rc = gs_stager_create(t->dev, &down, GS_MEM_READBACK, results * acc);
  if (!rc) rc = gs_upload(&up, gs_buffer_range(&in_buf), input, n * in, &stats);
  if (!rc) rc = gs_submission_init(t->dev, &sub);
  if (!rc) rc = gs_submission_begin(t->dev, &sub);
  if (!rc)
    rc = gs_scan_record(s, sub.cb, n, max_n, gs_buffer_range(&in_buf), gs_buffer_range(&out_buf), gs_buffer_range(state),
                        t->kept_state != NULL, NULL, NULL);
  if (!rc) rc = gs_submission_submit(t->dev, &sub, "the test scan");
  if (!rc) rc = gs_submission_wait(t->dev, &sub, "the test scan");
  if (!rc && results) {
    gs_field f = {gs_buffer_range(&out_buf), 0, acc};
    copy_sink sink = {out, acc};
    rc = gs_download_fields(&down, &f, 1, results, sink_copy, &sink, &stats);
  }
  if (!rc) *tile = gs_scan_tile_for(s, n);
  /* the tiles it took: the tickets its workgroups drew (a look-back scan's third state word) */
  t->tickets = 0;
  if (!rc && c->algo == GS_SCAN_LOOKBACK && !c->reduce_only && n) {
    gs_field f = {gs_subrange(gs_buffer_range(state), 8, 4), 0, 4};
    copy_sink sink = {(unsigned char *)&t->tickets, 4};
    rc = gs_download_fields(&down, &f, 1, 1, sink_copy, &sink, &stats);
  }
  gs_submission_destroy(t->dev, &sub);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_buffer_destroy(t->dev, &in_buf);
  gs_buffer_destroy(t->dev, &out_buf);
  gs_buffer_destroy(t->dev, &own_state);
  return rc;
}

static void check(tester *t, const gs_scan_config *c, uint64_t n, bool wrapping, const char *label) {
  const gs_key_info *in = gs_key_info_of(c->input), *acc = gs_key_info_of(c->acc);
  const size_t m = n ? n : 1;
  unsigned char *input = malloc(m * in->bytes), *got = malloc(m * acc->bytes);
  make_input(c->input, c->op, wrapping, n, 99 + n, input);
  memset(got, 0xA5, m * acc->bytes);
  t->checks++;
  unsigned tile = 0;
  int rc = scan_on_gpu(t, c, input, n, got, &tile);
  if (rc) {
    t->failures++;
    fprintf(stderr, "FAIL %s n=%llu: %s\n", label, (unsigned long long)n, gs_last_error());
    free(input);
    free(got);
    return;
  }
  /* Reference. */
  const bool real = c->op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT;
  const uint64_t mask = acc->bytes == 8 ? UINT64_MAX : UINT32_MAX;
  uint64_t running = c->op == GS_SCAN_MIN ? gs_bits_from_ordered(acc->kind, acc->bytes, mask)
                                          : c->op == GS_SCAN_MAX ? gs_bits_from_ordered(acc->kind, acc->bytes, 0) : 0;
  long double exact = 0, magnitude = 0;
  const long double eps = acc->bytes == 8 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t x = to_acc(c->input, c->acc, gs_key_load_bits(in->bytes, input + i * in->bytes));
    uint64_t next = running;
    long double next_exact = exact;
    if (real) {
      next_exact = exact + as_real(acc, x);
      magnitude += fabsl(as_real(acc, x));
    } else if (c->op == GS_SCAN_SUM) {
      next = (running + x) & mask;
    } else {
      const uint64_t a = gs_ordered_from_bits(acc->kind, acc->bytes, running),
                     b = gs_ordered_from_bits(acc->kind, acc->bytes, x);
      next = gs_bits_from_ordered(acc->kind, acc->bytes, c->op == GS_SCAN_MIN ? (a < b ? a : b) : (a > b ? a : b));
    }
    const uint64_t want = c->inclusive ? next : running;
    const long double want_real = c->inclusive ? next_exact : exact;
    const uint64_t value = gs_key_load_bits(acc->bytes, got + i * acc->bytes);
    bool ok;
    if (real) {
      /* documented bound: gamma_D * sum |x|, D = tiles up to here + 64 */
      const long double d = (long double)(i / tile + 1 + 64);
      const long double bound = d * eps / (1 - d * eps) * magnitude;
      ok = fabsl(as_real(acc, value) - want_real) <= bound;
    } else {
      ok = value == want;
    }
    if (!ok) {
      t->failures++;
      fprintf(stderr, "FAIL %s n=%llu: element %llu: want %llx (%.17Lg) got %llx (%.17Lg)\n", label,
              (unsigned long long)n, (unsigned long long)i, (unsigned long long)want, want_real,
              (unsigned long long)value, as_real(acc, value));
      break;
    }
    running = next;
    exact = next_exact;
  }
  free(input);
  free(got);
}

/* A reduction: the GPU's one value against the last inclusive value of the reference (for
 * float sums within the scan's documented bound, which the reduction's shorter paths meet). */
static void check_reduce(tester *t, const gs_scan_config *c, uint64_t n, const char *label) {
  const gs_key_info *in = gs_key_info_of(c->input), *acc = gs_key_info_of(c->acc);
  unsigned char *input = malloc((n ? n : 1) * in->bytes), got[8];
  make_input(c->input, c->op, false, n, 7 + n, input);
  t->checks++;
  unsigned tile = 0;
  int rc = scan_on_gpu(t, c, input, n, got, &tile);
  const bool real = c->op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT;
  const uint64_t mask = acc->bytes == 8 ? UINT64_MAX : UINT32_MAX;
  uint64_t want = c->op == GS_SCAN_MIN ? gs_bits_from_ordered(acc->kind, acc->bytes, mask)
                  : c->op == GS_SCAN_MAX ? gs_bits_from_ordered(acc->kind, acc->bytes, 0) : 0;
  long double exact = 0, magnitude = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t x = to_acc(c->input, c->acc, gs_key_load_bits(in->bytes, input + i * in->bytes));
    if (real) {
      exact += as_real(acc, x);
      magnitude += fabsl(as_real(acc, x));
    } else if (c->op == GS_SCAN_SUM) {
      want = (want + x) & mask;
    } else {
      const uint64_t a = gs_ordered_from_bits(acc->kind, acc->bytes, want), b = gs_ordered_from_bits(acc->kind, acc->bytes, x);
      want = gs_bits_from_ordered(acc->kind, acc->bytes, c->op == GS_SCAN_MIN ? (a < b ? a : b) : (a > b ? a : b));
    }
  }
  const uint64_t value = gs_key_load_bits(acc->bytes, got);
  bool ok = rc == GPUSORT_OK;
  if (ok && real) {
    const long double eps = acc->bytes == 8 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    const long double d = (long double)(n / (tile ? tile : 1) + 1 + 64);
    ok = fabsl(as_real(acc, value) - exact) <= d * eps / (1 - d * eps) * magnitude;
  } else if (ok) {
    ok = value == want;
  }
  if (!ok) {
    t->failures++;
    fprintf(stderr, "FAIL reduce %s n=%llu: %s want %llx (%.17Lg) got %llx\n", label, (unsigned long long)n,
            rc ? gs_last_error() : "", (unsigned long long)want, exact, (unsigned long long)value);
  }
  free(input);
}

static const gs_key_type all_types[] = {GS_KEY_U32, GS_KEY_I32, GS_KEY_F32, GS_KEY_U64, GS_KEY_I64, GS_KEY_F64};

/* The scan's tile; a scan the device refuses fails here and leaves a tile of 1, so that the
 * sizes made from it stay small and each of their checks fails in turn. */
static uint64_t tile_of(tester *t, const gs_scan_config *c) {
  const gs_scan *s;
  if (gs_context_scan(&t->ctx, c, &s) == GPUSORT_OK) return s->tile;
  t->checks++;
  t->failures++;
  fprintf(stderr, "FAIL: %s\n", gs_last_error());
  return 1;
}

/* A look-back scan walks early where the device's configuration says so (GPUSORT_SCAN_EARLY_WALK),
 * its tile then a subgroup short; reduce-then-scan never does. */
static void check_tile_shape(tester *t, const gs_scan_config *c) {
  const gs_scan *s;
  t->checks++;
  if (gs_context_scan(&t->ctx, c, &s)) {
    t->failures++;
    fprintf(stderr, "FAIL tile shape: %s\n", gs_last_error());
    return;
  }
  const bool walks = c->algo == GS_SCAN_LOOKBACK && t->ctx.config.scan_early_walk;
  const uint64_t invocations = s->workgroup_size - (walks ? t->dev->subgroup_size : 0);
  const uint64_t tile = invocations * s->rows * (16 / gs_key_info_of(c->input)->bytes);
  if (s->early_walk != walks || s->tile != tile) {
    t->failures++;
    fprintf(stderr, "FAIL tile shape: %s tile of %u elements, early walk %d; want %llu, %d\n",
            c->algo == GS_SCAN_LOOKBACK ? "look-back" : "reduce-then-scan", s->tile, s->early_walk,
            (unsigned long long)tile, walks);
  }
}

static void run_config(tester *t, gs_scan_config c, bool wrapping, const uint64_t *sizes, size_t nsizes) {
  char label[128];
  snprintf(label, sizeof label, "%s %s%s%s %s %s", gs_scan_op_name(c.op), gs_key_info_of(c.input)->name,
           c.acc != c.input ? "->" : "", c.acc != c.input ? gs_key_info_of(c.acc)->name : "",
           c.inclusive ? "inclusive" : "exclusive", c.algo == GS_SCAN_LOOKBACK ? "look-back" : "reduce-then-scan");
  for (size_t i = 0; i < nsizes; i++) check(t, &c, sizes[i], wrapping, label);
}

/* A look-back state (scan.c, scan_tiles.comp, scan_lookback.glsl): GS_SCAN_CONTROL_BYTES of
 * control words, the first [epoch:32 | tickets:32], then one 64-bit descriptor a slot, status
 * << 32 | value, the status being the epoch's low 30 bits above a 2-bit kind. */
enum { CONTROL_WORDS = GS_SCAN_CONTROL_BYTES / 8, KIND_INCLUSIVE = 2 };
static uint32_t status_of(uint32_t epoch, uint32_t kind) { return (epoch & 0x3FFFFFFFu) << 2 | kind; }

/* The state's first `count` 64-bit words. */
static int read_words(tester *t, gs_buffer *state, uint64_t *words, uint64_t count) {
  gs_stager down = {0};
  gs_transfer_stats stats = {0};
  gs_field f = {gs_buffer_range(state), 0, 8};
  copy_sink sink = {(unsigned char *)words, 8};
  int rc = gs_stager_create(t->dev, &down, GS_MEM_READBACK, count * 8);
  if (!rc) rc = gs_download_fields(&down, &f, 1, count, sink_copy, &sink, &stats);
  gs_stager_destroy(&down);
  return rc;
}

/* What the state must hold after `scans` scans from epoch `epoch`, the last of `tiles` tiles:
 * the next epoch at ticket 0, and the last scan's descriptors inclusive and stamped with its
 * epoch (a descriptor is status << 32 | value, scan_lookback.glsl). */
static void check_state(tester *t, gs_buffer *state, uint32_t epoch, size_t scans, uint64_t tiles, const char *label) {
  uint64_t *words = calloc(CONTROL_WORDS + tiles, 8);
  const uint32_t next = epoch + (uint32_t)scans, status = status_of(next - 1, KIND_INCLUSIVE);
  t->checks++;
  int rc = read_words(t, state, words, CONTROL_WORDS + tiles);
  uint64_t bad = 0;
  while (!rc && bad < tiles && words[CONTROL_WORDS + bad] >> 32 == status) bad++;
  if (rc || words[0] != (uint64_t)next << 32 || bad < tiles) {
    t->failures++;
    fprintf(stderr, "FAIL %s: %s; control %#llx, want %#llx; descriptor %llu of %llu: %#llx, want status %#x\n", label,
            rc ? gs_last_error() : "state", (unsigned long long)words[0], (unsigned long long)next << 32,
            (unsigned long long)bad, (unsigned long long)tiles,
            bad < tiles ? (unsigned long long)words[CONTROL_WORDS + bad] : 0ull, status);
  }
  free(words);
}

/* Scans of `sizes` in turn on one state, which starts at epoch `epoch` and otherwise empty,
 * or (planted) with every descriptor past the first holding an inclusive prefix stamped for
 * the last scan; each scan checked against the reference, and where the scan keeps its state
 * the state after the scans (before the last one where planted: no planted descriptor may be
 * left). Where it does not (split descriptors), the results alone. */
static void check_kept(tester *t, const gs_scan_config *c, const uint64_t *sizes, size_t count, uint32_t epoch,
                       bool planted) {
  uint64_t max_n = 0;
  for (size_t i = 0; i < count; i++) max_n = sizes[i] > max_n ? sizes[i] : max_n;
  const gs_scan *s;
  gs_buffer state = {0};
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  int rc = gs_context_scan(&t->ctx, c, &s);
  const VkDeviceSize bytes = rc ? 0 : gs_scan_state_bytes(s, max_n);
  const uint64_t slots = rc ? 0 : gs_scan_lookback_slots(s, max_n);
  uint64_t *words = calloc(bytes / 8 + 1, 8);
  if (!rc) rc = gs_buffer_create(t->dev, &state, bytes, GS_MEM_DEVICE, "test state");
  if (!rc) rc = gs_stager_create(t->dev, &up, GS_MEM_UPLOAD, bytes);
  const bool inspect = !rc && gs_scan_keeps_state(s);
  if (!rc && inspect) {
    words[0] = (uint64_t)epoch << 32;
    const uint32_t last = epoch + (uint32_t)count - 1;
    for (uint64_t slot = 1; planted && slot < slots; slot++)
      words[CONTROL_WORDS + slot] = (uint64_t)status_of(last, KIND_INCLUSIVE) << 32 | 0x5A5A5A5Au;
    rc = gs_upload(&up, gs_buffer_range(&state), words, bytes, &stats);
  }
  if (rc) {
    t->failures++;
    fprintf(stderr, "FAIL kept: %s\n", gs_last_error());
  } else {
    char label[96];
    snprintf(label, sizeof label, "kept %s %s from epoch %#x%s", gs_scan_op_name(c->op), gs_key_info_of(c->input)->name,
             epoch, planted ? ", planted" : "");
    t->kept_state = &state;
    t->kept_max_n = max_n;
    for (size_t i = 0; i < count; i++) {
      if (inspect && planted && i + 1 == count) { /* every planted descriptor was emptied or written since */
        uint64_t *now = calloc(bytes / 8, 8);
        t->checks++;
        rc = read_words(t, &state, now, bytes / 8);
        for (uint64_t slot = 1; !rc && slot < slots; slot++)
          if (now[CONTROL_WORDS + slot] == words[CONTROL_WORDS + slot]) {
            t->failures++;
            fprintf(stderr, "FAIL %s: descriptor %llu still planted after %zu scans\n", label, (unsigned long long)slot,
                    i);
            break;
          }
        free(now);
      }
      check(t, c, sizes[i], false, label);
    }
    if (inspect)
      check_state(t, &state, epoch, count, gs_groups_for(sizes[count - 1], gs_scan_tile_for(s, max_n)), label);
    t->kept_state = NULL;
  }
  free(words);
  gs_stager_destroy(&up);
  gs_buffer_destroy(t->dev, &state);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "matrix";
  tester t = {0};
  gs_context_init(&t.ctx, -1, 60, 0);
  if (gs_context_device(&t.ctx, NULL, NULL)) {
    fprintf(stderr, "cannot open a device: %s\n", gs_last_error());
    return 1;
  }
  t.dev = &t.ctx.dev;
  const uint64_t sg = t.dev->subgroup_size;
  printf("device: %s, subgroup %llu, mode %s\n", t.dev->info.name, (unsigned long long)sg, mode);
  if (strcmp(mode, "matrix") == 0) {
    for (size_t ti = 0; ti < 6; ti++)
      for (int op = 0; op < 3; op++)
        for (int inclusive = 0; inclusive < 2; inclusive++)
          for (int algo = 0; algo < 2; algo++) {
            gs_scan_config c = {.input = all_types[ti], .acc = all_types[ti], .op = (gs_scan_op)op,
                                .inclusive = inclusive, .algo = (gs_scan_algo)algo};
            check_tile_shape(&t, &c);
            const uint64_t tile = tile_of(&t, &c);
            const uint64_t sizes[] = {0, 1, 7, 8, 9, sg - 1, sg + 1, tile - 1, tile, tile + 1, 3 * tile + 5, 40 * tile + 3};
            run_config(&t, c, false, sizes, sizeof sizes / sizeof sizes[0]);
          }
  } else if (strcmp(mode, "acc") == 0) {
    const gs_key_type pairs[][2] = {{GS_KEY_U32, GS_KEY_U64}, {GS_KEY_I32, GS_KEY_I64}, {GS_KEY_U32, GS_KEY_I64},
                                    {GS_KEY_U32, GS_KEY_F64}, {GS_KEY_I32, GS_KEY_F64}, {GS_KEY_F32, GS_KEY_F64}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
      for (int op = 0; op < 3; op++)
        for (int algo = 0; algo < 2; algo++) {
          gs_scan_config c = {.input = pairs[p][0], .acc = pairs[p][1], .op = (gs_scan_op)op, .inclusive = true,
                              .algo = (gs_scan_algo)algo};
          /* each element held in two words: at most 8 rows, whatever the device asks */
          const gs_scan *s = NULL;
          t.checks++;
          if (gs_context_scan(&t.ctx, &c, &s) || s->rows > 8 || (t.ctx.config.scan_rows >= 8 && s->rows != 8)) {
            t.failures++;
            fprintf(stderr, "FAIL: a %s scan into %s asked for %u rows runs %u\n", gs_key_info_of(c.input)->name,
                    gs_key_info_of(c.acc)->name, t.ctx.config.scan_rows, s ? s->rows : 0);
          }
          const uint64_t tile = s ? s->tile : 0;
          const uint64_t sizes[] = {1, tile + 1, 9 * tile + 7};
          run_config(&t, c, false, sizes, 3);
        }
    /* u32 counts that would wrap, kept exact in u64 */
    gs_scan_config c = {.input = GS_KEY_U32, .acc = GS_KEY_U64, .op = GS_SCAN_SUM, .inclusive = true};
    const uint64_t sizes[] = {100003};
    run_config(&t, c, true, sizes, 1);
  } else if (strcmp(mode, "wrap") == 0) {
    for (size_t ti = 0; ti < 6; ti++) {
      if (gs_key_info_of(all_types[ti])->kind == GS_KEY_KIND_FLOAT) continue;
      for (int algo = 0; algo < 2; algo++) {
        gs_scan_config c = {.input = all_types[ti], .acc = all_types[ti], .op = GS_SCAN_SUM, .inclusive = true,
                            .algo = (gs_scan_algo)algo};
        const uint64_t sizes[] = {1000, 77777};
        run_config(&t, c, true, sizes, 2);
      }
    }
  } else if (strcmp(mode, "levels") == 0) {
    for (size_t ti = 0; ti < 6; ti += 2) {
      gs_scan_config c = {.input = all_types[ti], .acc = all_types[ti], .op = ti == 4 ? GS_SCAN_MAX : GS_SCAN_SUM,
                          .inclusive = ti == 0, .algo = GS_SCAN_REDUCE_THEN_SCAN};
      const uint64_t tile = tile_of(&t, &c);
      /* two levels of tile values; three (tile^3 elements) only for 32-bit inputs, in time */
      const uint64_t sizes[] = {tile * tile + 1, tile <= 256 ? tile * tile * tile + tile + 3 : tile * tile + 2};
      printf("tile %llu: sizes %llu and %llu\n", (unsigned long long)tile, (unsigned long long)sizes[0],
             (unsigned long long)sizes[1]);
      run_config(&t, c, false, sizes, 2);
    }
    /* Widened accumulators: above level 0 a tile holds half as many (wider) tile values. */
    const gs_key_type widened[][2] = {{GS_KEY_U32, GS_KEY_U64}, {GS_KEY_F32, GS_KEY_F64}, {GS_KEY_I32, GS_KEY_I64}};
    for (size_t w = 0; w < 3; w++) {
      gs_scan_config c = {.input = widened[w][0], .acc = widened[w][1], .op = w == 2 ? GS_SCAN_MAX : GS_SCAN_SUM,
                          .inclusive = true, .algo = GS_SCAN_REDUCE_THEN_SCAN};
      const uint64_t tile = tile_of(&t, &c), sizes[] = {tile * tile / 2 + 3, tile * tile + 1};
      run_config(&t, c, false, sizes, 2);
      c.reduce_only = true;
      for (int i = 0; i < 2; i++) check_reduce(&t, &c, sizes[i], "widened, levels");
    }
  } else if (strcmp(mode, "deterministic") == 0) {
    for (int ti = 0; ti < 2; ti++) {
      const gs_key_type type = ti ? GS_KEY_F64 : GS_KEY_F32;
      const gs_key_info *info = gs_key_info_of(type);
      const uint64_t n = 3000017;
      gs_scan_config c = {.input = type, .acc = type, .op = GS_SCAN_SUM, .inclusive = true,
                          .algo = GS_SCAN_REDUCE_THEN_SCAN};
      unsigned char *input = malloc(n * info->bytes), *out = malloc(n * info->bytes);
      make_input(type, GS_SCAN_SUM, false, n, 5, input);
      uint64_t first = 0;
      unsigned tile;
      int rc = GPUSORT_OK;
      for (int run = 0; run < 3 && !rc; run++) {
        rc = scan_on_gpu(&t, &c, input, n, out, &tile);
        const uint64_t h = XXH3_64bits(out, n * info->bytes);
        t.checks++;
        if (run == 0) first = h;
        else if (h != first) {
          t.failures++;
          fprintf(stderr, "FAIL deterministic %s: run %d differs from run 0\n", info->name, run);
        }
      }
      if (rc) {
        t.failures++;
        fprintf(stderr, "FAIL deterministic: %s\n", gs_last_error());
      }
      free(input);
      free(out);
    }
  } else if (strcmp(mode, "chunks") == 0) {
    for (size_t ti = 0; ti < 6; ti++)
      for (int op = 0; op < 3; op++)
        for (int inclusive = 0; inclusive < 2; inclusive++)
          for (int algo = 0; algo < 2; algo++) {
            gs_scan_config c = {.input = all_types[ti], .acc = all_types[ti], .op = (gs_scan_op)op,
                                .inclusive = inclusive, .algo = (gs_scan_algo)algo};
            const uint64_t tile = tile_of(&t, &c);
            t.chunk = 3 * tile + 5; /* chunks end inside a tile */
            const uint64_t sizes[] = {t.chunk - 1, t.chunk, t.chunk + 1, 4 * t.chunk + tile / 2};
            run_config(&t, c, false, sizes, sizeof sizes / sizeof sizes[0]);
            if (inclusive && algo) {
              c.reduce_only = true;
              for (size_t i = 0; i < 4; i++) check_reduce(&t, &c, sizes[i], "in chunks");
            }
            t.chunk = 0;
          }
    /* widened accumulators carry the wide running value */
    gs_scan_config c = {.input = GS_KEY_U32, .acc = GS_KEY_U64, .op = GS_SCAN_SUM, .inclusive = false};
    t.chunk = 10007;
    const uint64_t sizes[] = {100003};
    run_config(&t, c, true, sizes, 1);
    t.chunk = 0;
  } else if (strcmp(mode, "reduce") == 0) {
    for (size_t ti = 0; ti < 6; ti++)
      for (int op = 0; op < 3; op++) {
        gs_scan_config c = {.input = all_types[ti], .acc = all_types[ti], .op = (gs_scan_op)op, .reduce_only = true};
        const uint64_t tile = tile_of(&t, &c);
        const uint64_t sizes[] = {0, 1, sg + 1, tile - 1, tile, tile + 1, 40 * tile + 3, tile * tile + 9};
        /* tile * tile + 9 takes a third level; with 32-row tiles that is 2^28 elements, minutes
         * on lavapipe, so there the two levels of 40 tiles are the most */
        const size_t count = tile <= 4096 ? 8 : 7;
        for (size_t i = 0; i < count; i++)
          check_reduce(&t, &c, sizes[i], gs_key_info_of(c.input)->name);
      }
    /* widened: u32 counts summed in u64 */
    gs_scan_config c = {.input = GS_KEY_U32, .acc = GS_KEY_U64, .op = GS_SCAN_SUM, .reduce_only = true};
    check_reduce(&t, &c, 100003, "u32->u64");
  } else if (strcmp(mode, "references") == 0) {
    const uint64_t sizes[] = {0, 1, 2, 7, 8, 9, 255, 256, 257, 511, 512, 513, 100003, (1u << 17) + 5};
    const uint64_t largest = (1u << 17) + 5;
    gs_scan_reference r;
    gs_stager up = {0}, down = {0};
    gs_submission sub = {0};
    uint32_t *input = malloc(largest * 4), *got = malloc(largest * 4);
    int rc = gs_scan_reference_create(t.dev, &t.ctx.memops, &r, largest);
    if (!rc) rc = gs_stager_create(t.dev, &up, GS_MEM_UPLOAD, largest * 4);
    if (!rc) rc = gs_stager_create(t.dev, &down, GS_MEM_READBACK, largest * 4);
    if (!rc) rc = gs_submission_init(t.dev, &sub);
    for (int algo = 0; algo < GS_REFSCAN_COUNT && !rc; algo++)
      for (int inclusive = 0; inclusive < 2 && !rc; inclusive++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && !rc; si++) {
          const uint64_t n = sizes[si];
          for (uint64_t i = 0; i < n; i++) input[i] = (uint32_t)rnd(i, n + 3);
          gs_transfer_stats stats = {0};
          if (n) rc = gs_upload(&up, gs_buffer_range(&r.input), input, n * 4, &stats);
          if (!rc) rc = gs_submission_begin(t.dev, &sub);
          if (!rc) rc = gs_scan_reference_record(&r, sub.cb, (gs_refscan_algo)algo, n, inclusive);
          if (!rc) rc = gs_submission_submit(t.dev, &sub, "a reference scan");
          if (!rc) rc = gs_submission_wait(t.dev, &sub, "a reference scan");
          copy_sink sink = {(unsigned char *)got, 4};
          gs_field f = {gs_buffer_range(&r.output), 0, 4};
          if (!rc && n) rc = gs_download_fields(&down, &f, 1, n, sink_copy, &sink, &stats);
          t.checks++;
          uint32_t sum = 0;
          for (uint64_t i = 0; i < n && !rc; i++) {
            const uint32_t want = inclusive ? sum + input[i] : sum;
            sum += input[i];
            if (got[i] != want) {
              t.failures++;
              fprintf(stderr, "FAIL %s %s n=%llu: element %llu: want %u got %u\n", gs_refscan_name(algo),
                      inclusive ? "inclusive" : "exclusive", (unsigned long long)n, (unsigned long long)i, want, got[i]);
              break;
            }
          }
        }
    if (rc) {
      t.failures++;
      fprintf(stderr, "FAIL references: %s\n", gs_last_error());
    }
    gs_submission_destroy(t.dev, &sub);
    gs_stager_destroy(&up);
    gs_stager_destroy(&down);
    gs_scan_reference_destroy(&r);
    free(input);
    free(got);
  } else if (strcmp(mode, "kept") == 0) {
    const gs_scan_config configs[] = {{.input = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM},
                                      {.input = GS_KEY_F32, .acc = GS_KEY_F32, .op = GS_SCAN_SUM, .inclusive = true},
                                      {.input = GS_KEY_I32, .acc = GS_KEY_I32, .op = GS_SCAN_MIN}};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
      const gs_scan *s;
      if (gs_context_scan(&t.ctx, &configs[i], &s)) {
        t.failures++;
        fprintf(stderr, "FAIL kept: %s\n", gs_last_error());
        continue;
      }
      if (!gs_scan_keeps_state(s))
        printf("%s scans clear their state each time here: their results alone are checked\n",
               gs_key_info_of(configs[i].input)->name);
      const uint64_t tile = s->tile, max_n = 5 * tile + 7;
      const uint64_t sizes[] = {max_n, 1, tile + 1, max_n, sg + 1, 3 * tile - 1, max_n - 1, 2, max_n};
      const uint32_t epochs[] = {0, 0x3FFFFFFFu - 3, 0xFFFFFFFFu - 3};
      for (size_t e = 0; e < 3; e++) check_kept(&t, &configs[i], sizes, sizeof sizes / sizeof sizes[0], epochs[e], false);
      if (s->small_rows) { /* capacities past the small tiles' bound take the scan's own tiles */
        const uint64_t big = tile * s->small_min_tiles + 7, big_sizes[] = {big, 1, big - 1, tile + 1, big};
        check_kept(&t, &configs[i], big_sizes, sizeof big_sizes / sizeof big_sizes[0], 0x3FFFFFFFu - 2, false);
      }
      if (!gs_scan_keeps_state(s)) continue;
      /* one-element scans, one per descriptor the state holds, then one over them all */
      const uint64_t slots = gs_scan_lookback_slots(s, max_n);
      uint64_t *planted = malloc((slots + 1) * sizeof *planted);
      for (uint64_t k = 0; k < slots; k++) planted[k] = 1;
      planted[slots] = max_n;
      check_kept(&t, &configs[i], planted, slots + 1, 0x3FFFFFFFu - 2, true);
      check_kept(&t, &configs[i], planted, slots + 1, 7, true);
      free(planted);
    }
  } else if (strcmp(mode, "small") == 0) {
    /* packed and split descriptors, a widened accumulator, floats, min and max */
    const gs_scan_config configs[] = {
        {.input = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM},
        {.input = GS_KEY_F32, .acc = GS_KEY_F32, .op = GS_SCAN_SUM, .inclusive = true},
        {.input = GS_KEY_U64, .acc = GS_KEY_U64, .op = GS_SCAN_SUM},
        {.input = GS_KEY_U32, .acc = GS_KEY_U64, .op = GS_SCAN_SUM, .inclusive = true},
        {.input = GS_KEY_I32, .acc = GS_KEY_I32, .op = GS_SCAN_MAX},
        {.input = GS_KEY_F64, .acc = GS_KEY_F64, .op = GS_SCAN_MIN, .inclusive = true}};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
      const gs_scan_config c = configs[i]; /* (look-back: the algorithm 0) */
      const gs_scan *s;
      const int refused = gs_context_scan(&t.ctx, &c, &s);
      if (refused || s->small_rows == 0) {
        fprintf(stderr, "FAIL: no small scans' tile for %s: %s\n", gs_key_info_of(c.input)->name,
                refused ? gs_last_error() : "set GPUSORT_SCAN_SMALL_ROWS");
        t.checks++;
        t.failures++;
        break;
      }
      const uint64_t small = s->small_tile, at = (uint64_t)s->tile * s->small_min_tiles;
      const uint64_t sizes[] = {1, sg + 1, small - 1, small, small + 1, 3 * small + 5, at - 1, at, at + s->tile + 1};
      for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const int failures = t.failures;
        run_config(&t, c, false, &sizes[z], 1);
        if (t.failures != failures) continue;
        const uint64_t want = sizes[z] < at ? small : s->tile, tiles = (sizes[z] + want - 1) / want;
        t.checks++;
        if (gs_scan_tile_for(s, sizes[z]) != want || t.tickets != tiles) {
          fprintf(stderr, "FAIL small %s n=%llu: %u tiles of %u, where %llu of %llu were due\n",
                  gs_key_info_of(c.input)->name, (unsigned long long)sizes[z], t.tickets, gs_scan_tile_for(s, sizes[z]),
                  (unsigned long long)tiles, (unsigned long long)want);
          t.failures++;
        }
      }
      /* a state sized for a capacity serves every smaller one */
      t.checks++;
      for (uint64_t m = 2, before = gs_scan_state_bytes(s, 1); m <= 2 * at; m++) {
        const uint64_t bytes = gs_scan_state_bytes(s, m);
        if (bytes < before) {
          fprintf(stderr, "FAIL small %s: the state for %llu elements is smaller than for %llu\n",
                  gs_key_info_of(c.input)->name, (unsigned long long)m, (unsigned long long)m - 1);
          t.failures++;
          break;
        }
        before = bytes;
      }
    }
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (t.dev->validating) { /* GPUSORT_VALIDATION=1: any message of the layer fails the run */
    const unsigned messages = t.dev->validation_messages;
    printf("validation messages: %u\n", messages);
    t.checks++;
    if (messages) t.failures++;
  }
  printf("%d passed, %d failed\n", t.checks - t.failures, t.failures);
  gs_context_close(&t.ctx);
  return t.failures ? 1 : 0;
}
