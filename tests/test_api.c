/* libgpusort's context and job tiers through gpusort.h alone, against the CPU reference of
 * tests/reference.c: versions, errors and types; devices and contexts; sorts, argsorts,
 * scans, reductions and compactions of host arrays in every layout and option; the file jobs and their
 * reports (checksums recomputed with libxxhash); and every error path the API documents.
 *
 *   test_api WORKDIR           the checks (files go to WORKDIR)
 *   test_api WORKDIR corrupt   with GPUSORT_TEST_CORRUPT=1: GPUSORT_VERIFY catches the damage,
 *                              and a file job then writes nothing
 *   test_api WORKDIR compact   the look-back family alone (select, partition, unique, rle,
 *                              reduce-by-key) against the test's own references */
#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "gpusort.h"
#include "reference.h"

static int failures, checks;
static const char *workdir;

static void expect(bool ok, const char *what) {
  checks++;
  if (!ok) {
    failures++;
    fprintf(stderr, "FAIL %s\n", what);
  }
}

/* The call failed with `want`, and said why. */
static void expect_status(int rc, int want, const char *what) {
  char label[512];
  snprintf(label, sizeof label, "%s: want %s, got %s (%s)", what, gpusort_status_name(want), gpusort_status_name(rc),
           gpusort_last_error());
  expect(rc == want && (want == GPUSORT_OK || gpusort_last_error()[0]), label);
}

static char *path(const char *name) {
  static char buf[4][1024];
  static int next;
  char *p = buf[next++ % 4];
  snprintf(p, sizeof buf[0], "%s/%s", workdir, name);
  return p;
}

static unsigned char *read_all(const char *file, size_t *size) {
  FILE *f = fopen(file, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(*size + 1);
  if (fread(data, 1, *size, f) != *size) *size = 0;
  fclose(f);
  return data;
}

static bool no_temporary_files(void) {
  DIR *d = opendir(workdir);
  bool clean = true;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strstr(e->d_name, ".gpusort-")) clean = false;
  if (d) closedir(d);
  return clean;
}

/* ---- Versions, errors, types ---- */

static void basics(void) {
  expect(gpusort_version_number() == GPUSORT_VERSION_NUMBER, "gpusort_version_number matches the header");
  expect(strcmp(gpusort_version_string(), GPUSORT_VERSION_STRING) == 0, "gpusort_version_string matches the header");
  const int codes[] = {GPUSORT_OK, GPUSORT_ERROR_RUNTIME, GPUSORT_ERROR_USAGE, GPUSORT_ERROR_VERIFY,
                       GPUSORT_ERROR_NO_DEVICE, GPUSORT_ERROR_OUT_OF_MEMORY, GPUSORT_ERROR_IO, GPUSORT_ERROR_TOO_LARGE,
                       GPUSORT_ERROR_GPU_STALL, GPUSORT_ERROR_BAD_INPUT, GPUSORT_ERROR_OUTPUT_EXISTS,
                       GPUSORT_ERROR_OUTPUT_IS_INPUT, GPUSORT_ERROR_OUTPUT_IS_TERMINAL, GPUSORT_ERROR_NO_SUCH_DEVICE,
                       GPUSORT_ERROR_NOT_SORTED};
  const int classes[] = {0, 1, 2, 3, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    char label[96];
    snprintf(label, sizeof label, "status %d has a name and class %d", codes[i], classes[i]);
    expect(strncmp(gpusort_status_name(codes[i]), "GPUSORT_", 8) == 0 &&
               gpusort_status_class(codes[i]) == classes[i], label);
  }
  expect(strcmp(gpusort_status_name(12345), "unknown status") == 0, "an unknown status is named so");
  for (int t = GPUSORT_U32; t <= GPUSORT_F64; t++) {
    gpusort_type back;
    expect(gpusort_type_from_name(gpusort_type_name((gpusort_type)t), &back) == GPUSORT_OK && back == (gpusort_type)t,
           "type names round-trip");
    expect(gpusort_type_size((gpusort_type)t) == (t <= GPUSORT_F32 ? 4u : 8u), "type sizes");
  }
  gpusort_type out;
  expect_status(gpusort_type_from_name("u33", &out), GPUSORT_ERROR_USAGE, "an unknown type name");
  expect(gpusort_type_name(GPUSORT_TYPE_NONE) == NULL && gpusort_type_size((gpusort_type)99) == 0, "no type");
  for (int s = 0; s < GPUSORT_STAGE_COUNT; s++) expect(gpusort_stage_name((gpusort_stage)s) != NULL, "stage names");
  expect(gpusort_stage_name(GPUSORT_STAGE_COUNT) == NULL, "no name past the last stage");
}

/* ---- Devices and contexts ---- */

static void devices_and_contexts(gpusort_context **ctx) {
  uint32_t count = 0;
  expect_status(gpusort_list_devices(NULL, 0, &count), GPUSORT_OK, "counting devices");
  gpusort_device_info *infos = calloc(count ? count : 1, sizeof *infos);
  infos[0].struct_size = sizeof *infos;
  expect_status(gpusort_list_devices(infos, count, &count), GPUSORT_OK, "listing devices");
  int defaults = 0;
  for (uint32_t i = 0; i < count; i++) defaults += infos[i].is_default && infos[i].usable;
  expect(count >= 1 && defaults == 1, "one usable default device");
  expect(infos[0].preset[0] && infos[0].sort_workgroup_size && infos[0].sort_workgroup_size_wide &&
             infos[0].subgroup_size,
         "the configuration is given");
  expect(infos[0].subgroup_size && infos[0].sort_workgroup_size % infos[0].subgroup_size == 0 &&
             infos[0].sort_workgroup_size_wide % infos[0].subgroup_size == 0 &&
             infos[0].sort_workgroup_size_narrow_pairs && infos[0].sort_workgroup_size_narrow_pairs % infos[0].subgroup_size == 0 &&
             infos[0].sort_workgroup_size_pairs && infos[0].sort_workgroup_size_pairs % infos[0].subgroup_size == 0 &&
             infos[0].sort_workgroup_size_wide_pairs &&
             infos[0].sort_workgroup_size_wide_pairs % infos[0].subgroup_size == 0,
         "sort tiles are whole subgroups");
  expect(infos[0].sort_keys_per_invocation && infos[0].sort_keys_per_invocation_pairs &&
             infos[0].sort_keys_per_invocation_narrow_pairs &&
             infos[0].sort_keys_per_invocation_wide &&
             infos[0].sort_keys_per_invocation_wide_pairs,
         "every sort tile shape is given");
  expect(infos[0].compact_workgroup_size && infos[0].compact_workgroup_size % infos[0].subgroup_size == 0 &&
             infos[0].compact_subtiles,
         "the look-back family's tiles are given");
  expect_status(gpusort_list_devices(infos, 1, NULL), GPUSORT_ERROR_USAGE, "listing without a count");
  infos[0].struct_size = 0;
  expect_status(gpusort_list_devices(infos, 1, &count), GPUSORT_ERROR_USAGE, "an uninitialized device info");
  free(infos);

  gpusort_context *c = NULL;
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  p.device = 999;
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_NO_SUCH_DEVICE, "a device index past the last");
  expect(c == NULL, "no context after a failed open");
  p = (gpusort_context_params)GPUSORT_CONTEXT_PARAMS_INIT;
  p.flags = 1u << 7;
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_USAGE, "an unknown flag");
  p = (gpusort_context_params)GPUSORT_CONTEXT_PARAMS_INIT;
  p.timeout_seconds = -1;
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_USAGE, "a negative timeout");
  p.struct_size = 0;
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_USAGE, "uninitialized params");
  p.struct_size = 0x7FFFFFF0u; /* junk: never read past the struct */
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_USAGE, "a struct_size no struct has");
  p = (gpusort_context_params)GPUSORT_CONTEXT_PARAMS_INIT;
  p.reserved = 1;
  expect_status(gpusort_open(&c, &p), GPUSORT_ERROR_USAGE, "a reserved field that is not zero");
  expect_status(gpusort_open(NULL, NULL), GPUSORT_ERROR_USAGE, "no context pointer");
  /* a program built against a later header: unknown fields must be zero */
  struct {
    gpusort_context_params p;
    uint64_t later;
  } bigger = {GPUSORT_CONTEXT_PARAMS_INIT, 0};
  bigger.p.struct_size = sizeof bigger;
  bigger.p.flags = GPUSORT_OPEN_DEFERRED;
  expect_status(gpusort_open(&c, &bigger.p), GPUSORT_OK, "params of a later version, unknown fields zero");
  gpusort_close(c);
  bigger.later = 1;
  expect_status(gpusort_open(&c, &bigger.p), GPUSORT_ERROR_USAGE, "params of a later version setting unknown fields");

  p = (gpusort_context_params)GPUSORT_CONTEXT_PARAMS_INIT;
  p.flags = GPUSORT_OPEN_DEFERRED;
  expect_status(gpusort_open(&c, &p), GPUSORT_OK, "a deferred context");
  gpusort_device_info info = GPUSORT_DEVICE_INFO_INIT;
  expect_status(gpusort_context_device(c, &info), GPUSORT_OK, "the deferred context's device");
  expect(info.usable && info.name[0], "the context's device is named");
  gpusort_close(c);
  gpusort_close(NULL);
  expect_status(gpusort_open(ctx, NULL), GPUSORT_OK, "a context with defaults");
}

/* ---- Sorts of arrays ---- */

typedef struct {
  const char *name;
  gpusort_layout layout;
} layout_case;

static gpusort_sort_algo sort_algo = GPUSORT_SORT_AUTO; /* of every sort_array() */

/* Sorts n records in one layout and checks them (in place or not), and their argsort. */
static void sort_array(gpusort_context *ctx, const layout_case *lc, uint64_t n, uint32_t flags, unsigned begin,
                       unsigned end, bool in_place) {
  const gpusort_layout *L = &lc->layout;
  const size_t kb = gpusort_type_size(L->key), vb = gpusort_type_size(L->value);
  const size_t R = L->record_bytes ? L->record_bytes : kb + vb, key_offset = L->record_bytes ? L->key_offset : 0;
  unsigned char *input = malloc(n * R + 1), *output = malloc(n * R + 1);
  uint64_t seed = 31 + n;
  for (uint64_t i = 0; i < n * R; i++) input[i] = (unsigned char)ref_random(&seed);
  ref_fill_keys(L->key, input + key_offset, R, n, n + 3);
  memcpy(output, input, n * R);
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.flags = flags, o.begin_bit = begin, o.end_bit = end, o.algo = sort_algo;
  const int rc = gpusort_sort(ctx, in_place ? output : input, output, n, L, &o);
  uint64_t *order = ref_sort_order(L->key, input, R, key_offset, n, flags & GPUSORT_DESCENDING, begin, end);
  bool same = rc == GPUSORT_OK;
  for (uint64_t i = 0; i < n && same; i++) same = memcmp(output + i * R, input + order[i] * R, R) == 0;
  char label[256];
  snprintf(label, sizeof label, "sort %s, n=%llu, flags %x, bits %u:%u%s, algorithm %d: %s", lc->name,
           (unsigned long long)n, flags, begin, end, in_place ? ", in place" : "", (int)sort_algo,
           rc ? gpusort_last_error() : "");
  expect(same, label);
  /* argsort of the same records, u32 and u64 indices */
  for (int wide = 0; wide < 2; wide++) {
    unsigned char *indices = malloc(n * 8 + 8);
    const int arc = gpusort_argsort(ctx, input, n, L, wide ? GPUSORT_U64 : GPUSORT_U32, indices, &o);
    bool right = arc == GPUSORT_OK;
    for (uint64_t i = 0; i < n && right; i++) {
      uint64_t index = 0;
      memcpy(&index, indices + i * (wide ? 8 : 4), wide ? 8 : 4);
      right = index == order[i];
    }
    snprintf(label, sizeof label, "argsort %s, n=%llu, %s indices", lc->name, (unsigned long long)n, wide ? "u64" : "u32");
    expect(right, label);
    free(indices);
  }
  free(order);
  free(input);
  free(output);
}

static void array_sorts(gpusort_context *ctx) {
  const layout_case layouts[] = {
      {"u32 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_U32)},
      {"i32 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_I32)},
      {"f32 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_F32)},
      {"u64 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_U64)},
      {"i64 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_I64)},
      {"f64 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_F64)},
      {"(u32, f64) pairs", GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_F64)},
      {"(f64, i32) pairs", GPUSORT_LAYOUT_PAIRS(GPUSORT_F64, GPUSORT_I32)},
      {"7-byte records, i32 key at byte 3", GPUSORT_LAYOUT_RECORDS(GPUSORT_I32, 7, 3)},
      {"16-byte records, f32 key at byte 12", GPUSORT_LAYOUT_RECORDS(GPUSORT_F32, 16, 12)},
      {"100-byte records, u64 key at byte 9", GPUSORT_LAYOUT_RECORDS(GPUSORT_U64, 100, 9)},
  };
  const uint64_t sizes[] = {0, 1, 1000, 50001};
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      sort_array(ctx, &layouts[l], sizes[s], 0, 0, 0, s % 2 == 1);
      sort_array(ctx, &layouts[l], sizes[s], GPUSORT_DESCENDING | GPUSORT_VERIFY, 0, 0, s % 2 == 0);
    }
  const layout_case u64 = {"u64 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_U64)}, f32 = {"f32 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_F32)};
  sort_array(ctx, &u64, 20000, GPUSORT_VERIFY, 20, 50, true);
  sort_array(ctx, &f32, 20000, GPUSORT_DESCENDING, 0, 9, false);
}

/* Every algorithm through the array and file jobs; the 0.3 options struct; bad values. */
static void algorithms(gpusort_context *ctx) {
  const layout_case layouts[] = {
      {"u64 keys", GPUSORT_LAYOUT_KEYS(GPUSORT_U64)},
      {"(f32, u64) pairs", GPUSORT_LAYOUT_PAIRS(GPUSORT_F32, GPUSORT_U64)},
      {"13-byte records, i32 key at byte 5", GPUSORT_LAYOUT_RECORDS(GPUSORT_I32, 13, 5)},
  };
  const uint64_t sizes[] = {1, 1000, 50001};
  for (sort_algo = GPUSORT_SORT_ONESWEEP; sort_algo <= GPUSORT_SORT_BITONIC; sort_algo++)
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        sort_array(ctx, &layouts[l], sizes[s], s == 1 ? GPUSORT_DESCENDING | GPUSORT_VERIFY : 0, 0, 0, s % 2 == 0);
  sort_algo = GPUSORT_SORT_AUTO;

  const gpusort_layout L = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  uint32_t keys[300];
  for (uint32_t i = 0; i < 300; i++) keys[i] = 300 - i;
  struct { /* gpusort_sort_options as 0.3 had it */
    uint32_t struct_size, flags, begin_bit, end_bit;
  } old = {16, 0, 0, 0};
  expect_status(gpusort_sort(ctx, keys, keys, 300, &L, (const gpusort_sort_options *)(const void *)&old), GPUSORT_OK,
                "sort options of 0.3's size");
  expect(keys[0] == 1 && keys[299] == 300, "sorted with 0.3's options");
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.algo = (gpusort_sort_algo)4;
  expect_status(gpusort_sort(ctx, keys, keys, 300, &L, &o), GPUSORT_ERROR_USAGE, "an unknown algorithm");

  /* a file job's report says what ran */
  FILE *f = fopen(path("algo.bin"), "wb");
  fwrite(keys, 4, 300, f);
  fclose(f);
  for (int a = GPUSORT_SORT_ONESWEEP; a <= GPUSORT_SORT_BITONIC; a++) {
    gpusort_report report = GPUSORT_REPORT_INIT;
    o.algo = (gpusort_sort_algo)a;
    o.flags = GPUSORT_OVERWRITE | GPUSORT_VERIFY;
    const int rc = gpusort_sort_file(ctx, path("algo.bin"), path("algo-out.bin"), &L, &o, &report);
    expect(rc == GPUSORT_OK && report.algo == (gpusort_sort_algo)a && report.verified, "a file sort reports its algorithm");
  }
  gpusort_bench_result bench = GPUSORT_BENCH_RESULT_INIT;
  bench.algo = GPUSORT_SORT_REDUCE_THEN_SCAN;
  expect(gpusort_bench_sort(ctx, &L, 5000, 1, &bench) == GPUSORT_OK && bench.checked &&
             bench.algo == GPUSORT_SORT_REDUCE_THEN_SCAN,
         "a benchmark of the algorithm asked for");
  bench = (gpusort_bench_result)GPUSORT_BENCH_RESULT_INIT;
  bench.algo = GPUSORT_SORT_ONESWEEP;
  expect(gpusort_bench_sort(ctx, &L, 5000, 1, &bench) == GPUSORT_OK && bench.checked && bench.histogram_seconds > 0 &&
             bench.histogram_seconds < bench.sort_seconds,
         "a benchmark of Onesweep times its histogram pass");
  /* a caller built against 0.7.15's header (120 bytes, no histogram_seconds) still names a
   * distribution, and nothing is written past its struct */
  gpusort_bench_result old_bench = GPUSORT_BENCH_RESULT_INIT;
  old_bench.struct_size = offsetof(gpusort_bench_result, histogram_seconds);
  old_bench.distribution = "zipf";
  expect(gpusort_bench_sort(ctx, &L, 3000, 1, &old_bench) == GPUSORT_ERROR_USAGE &&
             strstr(gpusort_last_error(), "unknown distribution 'zipf'"),
         "0.7.15's bench result still carries its distribution");
  old_bench.distribution = "sorted";
  old_bench.histogram_seconds = -1;
  expect(gpusort_bench_sort(ctx, &L, 3000, 1, &old_bench) == GPUSORT_OK && old_bench.checked &&
             old_bench.histogram_seconds == -1,
         "0.7.15's bench result is filled up to its own size");
  gpusort_bench_result sorted = GPUSORT_BENCH_RESULT_INIT;
  sorted.distribution = "reversed";
  expect(gpusort_bench_sort(ctx, &L, 3000, 1, &sorted) == GPUSORT_OK && sorted.checked,
         "a benchmark of reversed keys");
  sorted.distribution = "zipf";
  expect(gpusort_bench_sort(ctx, &L, 3000, 1, &sorted) == GPUSORT_ERROR_USAGE &&
             strstr(gpusort_last_error(), "unknown distribution 'zipf'"),
         "a benchmark of an unknown distribution is refused");
}

/* ---- Scans and reductions of arrays ---- */

/* Small integers in every type: sums are exact in any order, so every result is exact. */
static void small_values(gpusort_type type, unsigned char *out, uint64_t n, uint64_t seed) {
  seed |= 1;
  for (uint64_t i = 0; i < n; i++) {
    const int64_t v = (int64_t)(ref_random(&seed) % 2001) - 1000;
    const float f = (float)v;
    const double d = (double)v;
    const uint64_t u = (uint64_t)(v + 1000);
    const size_t b = gpusort_type_size(type);
    if (type == GPUSORT_F32) memcpy(out + i * b, &f, 4);
    else if (type == GPUSORT_F64) memcpy(out + i * b, &d, 8);
    else if (type == GPUSORT_I32 || type == GPUSORT_I64) memcpy(out + i * b, &v, b);
    else memcpy(out + i * b, &u, b);
  }
}

static double as_double(gpusort_type type, const unsigned char *p) {
  union {
    uint32_t u32;
    int32_t i32;
    float f32;
    uint64_t u64;
    int64_t i64;
    double f64;
  } v;
  memcpy(&v, p, gpusort_type_size(type));
  switch (type) {
  case GPUSORT_U32: return v.u32;
  case GPUSORT_I32: return v.i32;
  case GPUSORT_F32: return v.f32;
  case GPUSORT_U64: return (double)v.u64;
  case GPUSORT_I64: return (double)v.i64;
  default: return v.f64;
  }
}

static void scan_array(gpusort_context *ctx, const gpusort_scan_options *o, uint64_t n, bool in_place) {
  const gpusort_type acc = o->acc ? o->acc : o->type;
  const size_t ib = gpusort_type_size(o->type), ab = gpusort_type_size(acc), big = ib > ab ? ib : ab;
  unsigned char *input = malloc(n * big + 8), *output = malloc(n * big + 8), result[8];
  small_values(o->type, input, n, n + 11);
  memcpy(output, input, n * ib);
  const int rc = gpusort_scan(ctx, in_place ? output : input, output, n, o);
  const bool reduce = !(o->flags & GPUSORT_EXCLUSIVE); /* reductions take no GPUSORT_EXCLUSIVE */
  const int rrc = reduce ? gpusort_reduce(ctx, input, n, o, result) : GPUSORT_OK;
  double running = o->op == GPUSORT_SUM ? 0 : o->op == GPUSORT_MIN ? INFINITY : -INFINITY;
  bool ok = rc == GPUSORT_OK;
  for (uint64_t i = 0; i < n && ok; i++) {
    const double x = as_double(o->type, input + i * ib), before = running;
    running = o->op == GPUSORT_SUM ? running + x : o->op == GPUSORT_MIN ? fmin(running, x) : fmax(running, x);
    const double want = (o->flags & GPUSORT_EXCLUSIVE) ? before : running;
    if (!(isinf(want) && i == 0)) ok = as_double(acc, output + i * ab) == want;
  }
  char label[160];
  snprintf(label, sizeof label, "scan %s op %d acc %s, n=%llu, flags %x%s: %s", gpusort_type_name(o->type), o->op,
           gpusort_type_name(acc), (unsigned long long)n, o->flags, in_place ? ", in place" : "",
           rc ? gpusort_last_error() : "");
  expect(ok, label);
  if (reduce) {
    if (n == 0 && o->op != GPUSORT_SUM)
      expect_status(rrc, GPUSORT_ERROR_BAD_INPUT, "the min or max of no elements");
    else
      expect(rrc == GPUSORT_OK && as_double(acc, result) == running, "the reduction equals the last inclusive value");
  }
  free(input);
  free(output);
}

static void array_scans(gpusort_context *ctx) {
  const uint64_t sizes[] = {0, 1, 5000, 300007};
  for (int t = GPUSORT_U32; t <= GPUSORT_F64; t++)
    for (int op = GPUSORT_SUM; op <= GPUSORT_MAX; op++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        gpusort_scan_options o = GPUSORT_SCAN_OPTIONS_INIT((gpusort_type)t);
        o.op = (gpusort_scan_op)op;
        o.flags = s % 2 ? GPUSORT_EXCLUSIVE : 0;
        scan_array(ctx, &o, sizes[s], s == 2);
      }
  gpusort_scan_options wide = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  wide.acc = GPUSORT_U64;
  scan_array(ctx, &wide, 70001, true);
  gpusort_scan_options f = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F32);
  f.acc = GPUSORT_F64, f.flags = GPUSORT_DETERMINISTIC;
  scan_array(ctx, &f, 70001, false);
  gpusort_scan_options lb = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_I64);
  lb.algo = GPUSORT_SCAN_REDUCE_THEN_SCAN, lb.op = GPUSORT_MIN;
  scan_array(ctx, &lb, 70001, false);
}

/* Arrays of other numeric forms (since 0.7), and a scan in place whose wider results span
 * several chunks: later chunks' elements must be read before earlier results overwrite them. */
static void array_scans_of_forms(void) {
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  p.memory_budget = 1u << 20;
  gpusort_context *small = NULL;
  expect_status(gpusort_open(&small, &p), GPUSORT_OK, "a context of a 1 MiB budget");
  if (!small) return;
  const uint64_t n = 1u << 20;
  unsigned char *x = malloc(n * 8), *copy = malloc(n);
  for (uint64_t i = 0; i < n; i++) x[i] = copy[i] = (unsigned char)(i * 37 + 11);
  gpusort_scan_options o = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_I8);
  o.acc = GPUSORT_I64;
  int rc = gpusort_scan(small, x, x, n, &o);
  int64_t running = 0;
  bool ok = rc == GPUSORT_OK;
  for (uint64_t i = 0; i < n && ok; i++) {
    running += (int8_t)copy[i];
    int64_t got;
    memcpy(&got, x + 8 * i, 8);
    ok = got == running;
  }
  expect(ok, "i8 elements scanned in place into i64 results, over several chunks");
  /* u16be without an accumulator: sums wrap at 16 bits, big-endian as the input */
  const uint64_t m = 5001;
  unsigned char in[2 * 5001], out[2 * 5001];
  for (uint64_t i = 0; i < m; i++) in[2 * i] = (unsigned char)(i >> 3), in[2 * i + 1] = (unsigned char)(i * 91);
  o = (gpusort_scan_options)GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U16BE);
  rc = gpusort_scan(small, in, out, m, &o);
  uint16_t sum = 0;
  ok = rc == GPUSORT_OK;
  for (uint64_t i = 0; i < m && ok; i++) {
    sum = (uint16_t)(sum + (in[2 * i] << 8 | in[2 * i + 1]));
    ok = out[2 * i] == sum >> 8 && out[2 * i + 1] == (sum & 0xFF);
  }
  expect(ok, "u16be elements: sums wrapping at 16 bits, big-endian");
  unsigned char total[2];
  expect(gpusort_reduce(small, in, m, &o, total) == GPUSORT_OK && total[0] == sum >> 8 && total[1] == (sum & 0xFF),
         "u16be reduction: the last running sum");
  char text[32];
  expect(gpusort_format_value(GPUSORT_U16BE, total, text, sizeof text) > 0 && strtoul(text, NULL, 10) == sum,
         "gpusort_format_value of a u16be value");
  const uint16_t tenth = 0x2E66; /* f16 0.1 */
  expect(gpusort_format_value(GPUSORT_F16, &tenth, text, sizeof text) == 3 && strcmp(text, "0.1") == 0,
         "gpusort_format_value of f16 0.1: the fewest digits that read back");
  expect(gpusort_format_value(GPUSORT_BYTES, &tenth, text, sizeof text) == -1 && text[0] == 0,
         "gpusort_format_value of no numeric type");
  free(x);
  free(copy);
  gpusort_close(small);
}

/* ---- File jobs ---- */

static bool report_matches_file(const gpusort_report *r, const char *file, uint64_t records) {
  size_t size;
  unsigned char *data = read_all(file, &size);
  const bool ok = data && r->output_bytes == size && r->xxh3 == XXH3_64bits(data, size) && r->records == records &&
                  r->total_seconds > 0;
  free(data);
  return ok;
}

static void file_jobs(gpusort_context *ctx) {
  const gpusort_layout L = GPUSORT_LAYOUT_PAIRS(GPUSORT_I64, GPUSORT_U32);
  gpusort_generate_options g = GPUSORT_GENERATE_OPTIONS_INIT(30011);
  g.distribution = "few:50", g.seed = 9, g.flags = GPUSORT_OVERWRITE;
  gpusort_report r = GPUSORT_REPORT_INIT;
  expect_status(gpusort_generate_file(ctx, path("in.bin"), &L, &g, &r), GPUSORT_OK, "generate_file");
  expect(report_matches_file(&r, path("in.bin"), 30011), "generate_file's report");
  unsigned char *made = malloc(30011 * 12);
  expect_status(gpusort_generate(&L, &g, 0, 30011, made), GPUSORT_ERROR_USAGE, "a file flag on generate");
  g.flags = 0;
  expect_status(gpusort_generate(&L, &g, 0, 30011, made), GPUSORT_OK, "generate into memory");
  size_t size;
  unsigned char *file = read_all(path("in.bin"), &size);
  expect(file && size == 30011 * 12 && memcmp(file, made, size) == 0, "generate and generate_file agree");

  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.flags = GPUSORT_OVERWRITE | GPUSORT_VERIFY | GPUSORT_DESCENDING;
  r = (gpusort_report)GPUSORT_REPORT_INIT;
  expect_status(gpusort_sort_file(ctx, path("in.bin"), path("out.bin"), &L, &o, &r), GPUSORT_OK, "sort_file");
  expect(report_matches_file(&r, path("out.bin"), 30011) && r.verified && r.input_bytes == 30011 * 12 &&
             r.stage_seconds[GPUSORT_STAGE_SORT] > 0 && r.passes == 8,
         "sort_file's report");
  size_t sorted_size;
  unsigned char *sorted = read_all(path("out.bin"), &sorted_size);
  uint64_t *order = ref_sort_order(L.key, file, 12, 0, 30011, true, 0, 0);
  bool same = sorted && sorted_size == size;
  for (uint64_t i = 0; i < 30011 && same; i++) same = memcmp(sorted + i * 12, file + order[i] * 12, 12) == 0;
  expect(same, "sort_file's output");
  gpusort_sort_options check = GPUSORT_SORT_OPTIONS_INIT;
  check.flags = GPUSORT_DESCENDING;
  r = (gpusort_report)GPUSORT_REPORT_INIT;
  expect_status(gpusort_check_file(ctx, path("out.bin"), &L, &check, &r), GPUSORT_OK, "check_file of the output");
  expect(r.records == 30011, "check_file counts the records");
  expect_status(gpusort_check_file(NULL, path("in.bin"), &L, &check, NULL), GPUSORT_ERROR_NOT_SORTED,
                "check_file of the unsorted input");

  r = (gpusort_report)GPUSORT_REPORT_INIT;
  expect_status(gpusort_argsort_file(ctx, path("in.bin"), path("idx.bin"), &L, GPUSORT_TYPE_NONE, &o, &r), GPUSORT_OK,
                "argsort_file");
  unsigned char *indices = read_all(path("idx.bin"), &size);
  same = indices && size == 30011 * 4 && report_matches_file(&r, path("idx.bin"), 30011);
  for (uint64_t i = 0; i < 30011 && same; i++) {
    uint32_t index;
    memcpy(&index, indices + i * 4, 4);
    same = index == order[i];
  }
  expect(same, "argsort_file writes u32 indices below 2^32 records");

  gpusort_scan_options s = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  s.acc = GPUSORT_U64, s.flags = GPUSORT_OVERWRITE;
  uint32_t values[1000];
  for (uint32_t i = 0; i < 1000; i++) values[i] = i * 7919u;
  FILE *f = fopen(path("values.bin"), "wb");
  fwrite(values, 4, 1000, f);
  fclose(f);
  r = (gpusort_report)GPUSORT_REPORT_INIT;
  expect_status(gpusort_scan_file(ctx, path("values.bin"), path("sums.bin"), &s, &r), GPUSORT_OK, "scan_file");
  unsigned char *sums = read_all(path("sums.bin"), &size);
  uint64_t last = 0, total = 0;
  if (sums && size == 8000) memcpy(&last, sums + 7992, 8);
  for (int i = 0; i < 1000; i++) total += values[i];
  expect(last == total && report_matches_file(&r, path("sums.bin"), 1000), "scan_file's output and report");
  uint64_t reduced = 0;
  s.flags = 0;
  expect_status(gpusort_reduce_file(ctx, path("values.bin"), &s, &reduced, NULL), GPUSORT_OK, "reduce_file");
  expect(reduced == total, "reduce_file's sum");

  /* refusals: nothing is written, the input is left alone, no temporary file stays */
  o.flags = GPUSORT_VERIFY;
  expect_status(gpusort_sort_file(ctx, path("in.bin"), path("out.bin"), &L, &o, NULL), GPUSORT_ERROR_OUTPUT_EXISTS,
                "an existing output without GPUSORT_OVERWRITE");
  o.flags = GPUSORT_OVERWRITE;
  expect_status(gpusort_sort_file(ctx, path("in.bin"), path("in.bin"), &L, &o, NULL), GPUSORT_ERROR_OUTPUT_IS_INPUT,
                "the output is the input");
  expect_status(gpusort_sort_file(ctx, path("missing.bin"), path("o.bin"), &L, &o, NULL), GPUSORT_ERROR_IO,
                "a missing input");
  f = fopen(path("odd.bin"), "wb");
  fwrite(values, 1, 13, f);
  fclose(f);
  expect_status(gpusort_sort_file(ctx, path("odd.bin"), path("o.bin"), &L, &o, NULL), GPUSORT_ERROR_BAD_INPUT,
                "an input that is not a whole number of records");
  expect_status(gpusort_sort_file(ctx, workdir, path("o.bin"), &L, &o, NULL), GPUSORT_ERROR_BAD_INPUT,
                "a directory as input");
  expect_status(gpusort_sort_file(ctx, path("in.bin"), path("no/such/dir/o.bin"), &L, &o, NULL), GPUSORT_ERROR_IO,
                "an output in a missing directory");
  gpusort_scan_options mins = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  mins.op = GPUSORT_MIN;
  f = fopen(path("empty.bin"), "wb");
  fclose(f);
  expect_status(gpusort_reduce_file(ctx, path("empty.bin"), &mins, &reduced, NULL), GPUSORT_ERROR_BAD_INPUT,
                "the minimum of no elements");
  unsigned char *again = read_all(path("in.bin"), &size);
  expect(again && size == 30011 * 12 && memcmp(again, made, size) == 0, "the input is never modified");
  expect(no_temporary_files(), "no temporary file is left");
  free(again), free(sums), free(indices), free(order), free(sorted), free(file), free(made);
}

/* ---- Error paths of the array jobs ---- */

static void error_paths(gpusort_context *ctx) {
  uint32_t data[64] = {0};
  const gpusort_layout keys = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  expect_status(gpusort_sort(NULL, data, data, 64, &keys, NULL), GPUSORT_ERROR_USAGE, "no context");
  expect_status(gpusort_sort(ctx, NULL, data, 64, &keys, NULL), GPUSORT_ERROR_USAGE, "no input");
  expect_status(gpusort_sort(ctx, data, data, 64, NULL, NULL), GPUSORT_ERROR_USAGE, "no layout");
  expect_status(gpusort_sort(ctx, NULL, NULL, 0, &keys, NULL), GPUSORT_OK, "no data for no records");
  gpusort_layout zero = {0};
  expect_status(gpusort_sort(ctx, data, data, 64, &zero, NULL), GPUSORT_ERROR_USAGE, "an uninitialized layout");
  gpusort_layout none = GPUSORT_LAYOUT_KEYS(GPUSORT_TYPE_NONE);
  expect_status(gpusort_sort(ctx, data, data, 64, &none, NULL), GPUSORT_ERROR_USAGE, "a layout without a key type");
  gpusort_layout both = GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U32);
  both.record_bytes = 8;
  expect_status(gpusort_sort(ctx, data, data, 8, &both, NULL), GPUSORT_ERROR_USAGE, "values and records");
  gpusort_layout misfit = GPUSORT_LAYOUT_RECORDS(GPUSORT_U64, 10, 4);
  expect_status(gpusort_sort(ctx, data, data, 8, &misfit, NULL), GPUSORT_ERROR_USAGE, "a key beyond its record");
  o.flags = GPUSORT_OVERWRITE;
  expect_status(gpusort_sort(ctx, data, data, 64, &keys, &o), GPUSORT_ERROR_USAGE, "a file flag on an array");
  o.flags = 0, o.begin_bit = 8, o.end_bit = 33;
  expect_status(gpusort_sort(ctx, data, data, 64, &keys, &o), GPUSORT_ERROR_USAGE, "bits beyond the key");
  o.begin_bit = 9, o.end_bit = 9;
  expect_status(gpusort_sort(ctx, data, data, 64, &keys, &o), GPUSORT_ERROR_USAGE, "an empty bit range");
  expect_status(gpusort_sort(ctx, data, data + 1, 32, &keys, NULL), GPUSORT_ERROR_USAGE, "overlapping arrays");
  expect_status(gpusort_sort(ctx, data, data, (uint64_t)1 << 40, &keys, NULL), GPUSORT_ERROR_TOO_LARGE,
                "more records than a sort takes");
  expect_status(gpusort_argsort(ctx, data, 64, &keys, GPUSORT_F32, data + 32, NULL), GPUSORT_ERROR_USAGE,
                "float indices");
  gpusort_scan_options s = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F32);
  s.algo = GPUSORT_SCAN_LOOKBACK, s.flags = GPUSORT_DETERMINISTIC;
  expect_status(gpusort_scan(ctx, data, data, 64, &s), GPUSORT_ERROR_USAGE, "deterministic look-back float sums");
  s = (gpusort_scan_options)GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U64);
  s.acc = GPUSORT_U32;
  expect_status(gpusort_scan(ctx, data, data, 8, &s), GPUSORT_ERROR_USAGE, "a narrower accumulator");
  s = (gpusort_scan_options)GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F32);
  s.acc = GPUSORT_I64;
  expect_status(gpusort_scan(ctx, data, data, 8, &s), GPUSORT_ERROR_USAGE, "an integer accumulator for floats");
  s = (gpusort_scan_options)GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_I32);
  s.acc = GPUSORT_U64, s.op = GPUSORT_MIN;
  expect_status(gpusort_scan(ctx, data, data, 8, &s), GPUSORT_ERROR_USAGE, "an unsigned accumulator for signed input");
  expect_status(gpusort_scan(ctx, data, data, 8, NULL), GPUSORT_ERROR_USAGE, "no scan options");
  s = (gpusort_scan_options)GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  s.flags = GPUSORT_EXCLUSIVE;
  expect_status(gpusort_reduce(ctx, data, 8, &s, data), GPUSORT_ERROR_USAGE, "an exclusive reduction");
  gpusort_report bad = {0};
  expect_status(gpusort_sort_file(ctx, path("in.bin"), path("x.bin"), &keys, NULL, &bad), GPUSORT_ERROR_USAGE,
                "an uninitialized report");
  /* a context whose memory budget no sort fits */
  gpusort_context *tight = NULL;
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  p.memory_budget = 4096;
  uint32_t *many = calloc(100000, 4);
  if (gpusort_open(&tight, &p) == GPUSORT_OK)
    expect_status(gpusort_sort(tight, many, many, 100000, &keys, NULL), GPUSORT_ERROR_TOO_LARGE,
                  "a sort beyond the memory budget");
  else
    expect(false, gpusort_last_error());
  gpusort_close(tight);
  free(many);
}

/* ---- Files beyond the memory budget ---- */

typedef struct {
  uint64_t calls, last_done, last_total;
  bool monotonic, finished;
} progress_log;

static void on_progress(void *user, uint64_t done, uint64_t total) {
  progress_log *p = user;
  if (p->calls && done < p->last_done) p->monotonic = false;
  if (done > total) p->monotonic = false;
  p->calls++;
  p->last_done = done, p->last_total = total;
  p->finished = done == total;
}

/* A context with a small budget sorts a file out of core (scratch files in temp_dir), in the
 * same bytes as the default context; scans go in chunks; progress is reported. */
static void files_beyond_the_budget(gpusort_context *ctx) {
  const uint64_t n = 600000;
  const gpusort_layout pairs = GPUSORT_LAYOUT_PAIRS(GPUSORT_F32, GPUSORT_U32);
  unsigned char *data = malloc(n * 8);
  ref_fill_keys(GPUSORT_F32, data, 8, n, 21);
  for (uint64_t i = 0; i < n; i++) memcpy(data + i * 8 + 4, &(uint32_t){(uint32_t)i}, 4);
  FILE *f = fopen(path("big.bin"), "wb");
  fwrite(data, 8, n, f);
  fclose(f);
  char scratch[4096];
  snprintf(scratch, sizeof scratch, "%s", path("scratch"));
  mkdir(scratch, 0755);
  progress_log log = {.monotonic = true};
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  p.memory_budget = 3u << 20;
  p.temp_dir = scratch;
  p.flags = GPUSORT_OPEN_DEFERRED;
  p.progress = on_progress;
  p.progress_user = &log;
  gpusort_context *small = NULL;
  expect_status(gpusort_open(&small, &p), GPUSORT_OK, "a context with a 3 MiB budget");
  if (!small) return;
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.flags = GPUSORT_OVERWRITE | GPUSORT_DESCENDING | GPUSORT_VERIFY;
  gpusort_report r = GPUSORT_REPORT_INIT, in_core = GPUSORT_REPORT_INIT;
  expect_status(gpusort_sort_file(small, path("big.bin"), path("big-ooc.bin"), &pairs, &o, &r), GPUSORT_OK,
                "a file sort beyond the budget");
  expect(r.batches > 1 && r.stage_seconds[GPUSORT_STAGE_BUCKETS] > 0 && r.stage_seconds[GPUSORT_STAGE_PARTITION] > 0,
         "an out-of-core sort reports its bins and passes");
  expect(r.verified, "the out-of-core sort verified");
  expect(report_matches_file(&r, path("big-ooc.bin"), n), "the out-of-core report matches its file");
  expect_status(gpusort_sort_file(ctx, path("big.bin"), path("big-in.bin"), &pairs, &o, &in_core), GPUSORT_OK,
                "the same file in core");
  expect(in_core.batches == 1 && in_core.stage_seconds[GPUSORT_STAGE_PARTITION] == 0, "in core: one batch");
  expect(in_core.xxh3 == r.xxh3, "out of core and in core give the same bytes");
  size_t size;
  unsigned char *out = read_all(path("big-ooc.bin"), &size);
  uint64_t *order = ref_sort_order(GPUSORT_F32, data, 8, 0, n, true, 0, 0);
  bool same = out && size == n * 8;
  for (uint64_t i = 0; i < n && same; i++) same = memcmp(out + i * 8, data + order[i] * 8, 8) == 0;
  expect(same, "the out-of-core sort against the reference");
  expect(log.calls > 0 && log.monotonic && log.finished, "progress rose to its total");
  DIR *d = opendir(scratch);
  int entries = 0;
  for (struct dirent *e; d && (e = readdir(d));) entries += e->d_name[0] != '.';
  if (d) closedir(d);
  expect(entries == 0 && no_temporary_files(), "no scratch or temporary file is left");
  /* argsort out of core */
  gpusort_report ar = GPUSORT_REPORT_INIT;
  o.flags = GPUSORT_OVERWRITE | GPUSORT_DESCENDING;
  expect_status(gpusort_argsort_file(small, path("big.bin"), path("big-idx.bin"), &pairs, GPUSORT_U64, &o, &ar),
                GPUSORT_OK, "an argsort beyond the budget");
  free(out);
  out = read_all(path("big-idx.bin"), &size);
  same = out && size == n * 8 && ar.batches > 1;
  for (uint64_t i = 0; i < n && same; i++) {
    uint64_t idx;
    memcpy(&idx, out + i * 8, 8);
    same = idx == order[i];
  }
  expect(same, "the out-of-core argsort against the reference");
  /* a scan in chunks */
  gpusort_scan_options so = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  so.acc = GPUSORT_U64;
  so.flags = GPUSORT_OVERWRITE;
  gpusort_report sr = GPUSORT_REPORT_INIT;
  expect_status(gpusort_scan_file(small, path("big.bin"), path("big-scan.bin"), &so, &sr), GPUSORT_OK,
                "a scan beyond the budget");
  free(out);
  out = read_all(path("big-scan.bin"), &size);
  uint64_t sum = 0;
  same = out && size == 2 * n * 8 && sr.batches > 1;
  for (uint64_t i = 0; i < 2 * n && same; i++) {
    uint32_t x;
    uint64_t got;
    memcpy(&x, data + i * 4, 4);
    sum += x;
    memcpy(&got, out + i * 8, 8);
    same = got == sum;
  }
  expect(same, "a scan in chunks against the reference");
  expect(strcmp(gpusort_stage_name(GPUSORT_STAGE_PARTITION), "partition") == 0 &&
             strcmp(gpusort_stage_name(GPUSORT_STAGE_SPILL), "spill") == 0,
         "the new stages' names");
  gpusort_close(small);
  free(out);
  free(order);
  free(data);
}

/* Records of 16 bytes: a u16be at 0 (ascending), an i8 at 2 (descending), 3 bytes at 4
 * (ascending); the test's own comparison, independent of the library's normalized forms. */
enum { KEYED_RECORD = 16, KEYED_N = 3000 };

static int keyed_compare(const unsigned char *a, const unsigned char *b) {
  const int ua = a[0] << 8 | a[1], ub = b[0] << 8 | b[1];
  if (ua != ub) return ua < ub ? -1 : 1;
  const int ia = (int8_t)a[2], ib = (int8_t)b[2];
  if (ia != ib) return ia > ib ? -1 : 1; /* descending */
  return memcmp(a + 4, b + 4, 3);
}

static void key_forms(gpusort_context *ctx) {
  static unsigned char records[KEYED_N * KEYED_RECORD], sorted[KEYED_N * KEYED_RECORD];
  static uint32_t order[KEYED_N];
  uint64_t seed = 9;
  for (int i = 0; i < KEYED_N * KEYED_RECORD; i++) records[i] = (unsigned char)(ref_random(&seed) % 3); /* ties */
  const gpusort_key_part parts[] = {{0, GPUSORT_U16BE, 0, 0}, {2, GPUSORT_I8, 0, GPUSORT_KEY_DESCENDING},
                                    {4, GPUSORT_BYTES, 3, 0}};
  const gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE(KEYED_RECORD, 3, parts);
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.flags = GPUSORT_VERIFY;
  expect_status(gpusort_sort(ctx, records, sorted, KEYED_N, &composite, &o), GPUSORT_OK, "a composite key");
  expect_status(gpusort_argsort(ctx, records, KEYED_N, &composite, GPUSORT_U32, order, &o), GPUSORT_OK,
                "a composite argsort");
  bool ordered = true, stable = true, same = true;
  for (int i = 0; i < KEYED_N; i++) {
    same &= memcmp(sorted + i * KEYED_RECORD, records + (size_t)order[i] * KEYED_RECORD, KEYED_RECORD) == 0;
    if (i == 0) continue;
    const int c = keyed_compare(records + (size_t)order[i - 1] * KEYED_RECORD, records + (size_t)order[i] * KEYED_RECORD);
    ordered &= c <= 0;
    stable &= c != 0 || order[i - 1] < order[i];
  }
  expect(ordered && stable && same, "a composite key: in order, stable, records and indices agree");
  /* descending reverses every part, and stays stable */
  o.flags = GPUSORT_DESCENDING;
  expect_status(gpusort_argsort(ctx, records, KEYED_N, &composite, GPUSORT_U32, order, &o), GPUSORT_OK,
                "a descending composite argsort");
  ordered = stable = true;
  for (int i = 1; i < KEYED_N; i++) {
    const int c = keyed_compare(records + (size_t)order[i - 1] * KEYED_RECORD, records + (size_t)order[i] * KEYED_RECORD);
    ordered &= c >= 0;
    stable &= c != 0 || order[i - 1] < order[i];
  }
  expect(ordered && stable, "a descending composite key: in order, stable");
  /* a byte string in place, and a layout of libgpusort 0.2's size */
  const gpusort_layout strings = GPUSORT_LAYOUT_BYTES(KEYED_RECORD, 4, 3);
  memcpy(sorted, records, sizeof records);
  expect_status(gpusort_sort(ctx, sorted, sorted, KEYED_N, &strings, NULL), GPUSORT_OK, "bytes:3 in place");
  bool strings_ordered = true;
  for (int i = 1; i < KEYED_N; i++)
    strings_ordered &= memcmp(sorted + (i - 1) * KEYED_RECORD + 4, sorted + i * KEYED_RECORD + 4, 3) <= 0;
  expect(strings_ordered, "bytes:3 in place: in order");
  gpusort_layout old = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  old.struct_size = 20;
  uint32_t few[4] = {3, 1, 2, 0};
  expect_status(gpusort_sort(ctx, few, few, 4, &old, NULL), GPUSORT_OK, "a layout of 20 bytes");
  expect(few[0] == 0 && few[3] == 3, "a layout of 20 bytes: sorted");
  old.struct_size = 30; /* part of the parts pointer: no layout ever had this size */
  expect_status(gpusort_sort(ctx, few, few, 4, &old, NULL), GPUSORT_ERROR_USAGE, "a layout of 30 bytes");
  /* the names of the new types */
  gpusort_type t = GPUSORT_TYPE_NONE;
  expect(gpusort_type_from_name("bf16", &t) == GPUSORT_OK && t == GPUSORT_BF16 && gpusort_type_size(t) == 2 &&
             gpusort_type_from_name("float16", &t) == GPUSORT_OK && t == GPUSORT_F16 &&
             strcmp(gpusort_type_name(GPUSORT_I64BE), "i64be") == 0 && gpusort_type_size(GPUSORT_BYTES) == 0,
         "names and sizes of the narrow, half, big-endian and bytes types");
  /* errors */
  gpusort_layout bad = composite;
  bad.parts = NULL;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "parts missing");
  bad = composite, bad.part_count = 17;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "17 parts");
  bad = composite, bad.key = GPUSORT_U32;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "parts and a key type");
  bad = (gpusort_layout)GPUSORT_LAYOUT_BYTES(KEYED_RECORD, 4, 0);
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "a bytes key of 0 bytes");
  bad = (gpusort_layout)GPUSORT_LAYOUT_BYTES(KEYED_RECORD, 4, 13);
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "a bytes key past the record");
  bad = (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_U16, GPUSORT_BYTES);
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "a bytes value");
  gpusort_key_part flagged[] = {{0, GPUSORT_U8, 0, 2}};
  bad = (gpusort_layout)GPUSORT_LAYOUT_COMPOSITE(KEYED_RECORD, 1, flagged);
  expect_status(gpusort_sort(ctx, records, sorted, 4, &bad, NULL), GPUSORT_ERROR_USAGE, "an unknown part flag");
  o = (gpusort_sort_options)GPUSORT_SORT_OPTIONS_INIT;
  o.begin_bit = 0, o.end_bit = 8;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &composite, &o), GPUSORT_OK, "bits of a composite key");
  o.end_bit = 8 * 129;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &composite, &o), GPUSORT_ERROR_USAGE,
                "bits past a composite key's normalized form");
  const gpusort_layout from_file = GPUSORT_LAYOUT_NPY;
  expect_status(gpusort_sort(ctx, records, sorted, 4, &from_file, NULL), GPUSORT_ERROR_USAGE,
                "an array with a layout from a .npy header");
  const char *const names[] = {"a"};
  const gpusort_layout named = GPUSORT_LAYOUT_NPY_FIELDS(1, parts, names);
  expect_status(gpusort_sort(ctx, records, sorted, 4, &named, NULL), GPUSORT_ERROR_USAGE, "an array of named fields");
  FILE *raw = fopen(path("raw.bin"), "wb");
  fwrite(records, 1, 64, raw);
  fclose(raw);
  expect_status(gpusort_sort_file(ctx, path("raw.bin"), path("raw-out.bin"), &from_file, NULL, NULL),
                GPUSORT_ERROR_USAGE, "a file that is not .npy, with a layout from its header");
  const gpusort_layout narrow = GPUSORT_LAYOUT_KEYS(GPUSORT_U16);
  gpusort_generate_options g = GPUSORT_GENERATE_OPTIONS_INIT(4);
  g.distribution = "sorted";
  uint16_t narrow_keys[4] = {0};
  expect_status(gpusort_generate(&narrow, &g, 0, 4, narrow_keys), GPUSORT_OK, "test data of u16 keys");
  expect(narrow_keys[0] == 0 && narrow_keys[1] == 16384 && narrow_keys[2] == 32768 && narrow_keys[3] == 49152,
         "sorted u16 test data spreads over the whole range");
}

/* ---- The look-back family ---- */

/* A layout of the compaction tests, with where its key and value are. */
typedef struct {
  const char *name;
  gpusort_layout layout;
  gpusort_type key, value;
  size_t record, key_offset, value_offset;
} compact_layout;

static compact_layout compact_layout_of(const char *name, gpusort_layout L) {
  compact_layout c = {name, L, L.key, L.value, 0, 0, 0};
  c.record = L.record_bytes ? L.record_bytes : gpusort_type_size(L.key) + gpusort_type_size(L.value);
  c.key_offset = L.record_bytes ? L.key_offset : 0;
  c.value_offset = gpusort_type_size(L.key);
  return c;
}

static bool is_float(gpusort_type t) { return t == GPUSORT_F32 || t == GPUSORT_F64; }

static void store_number(gpusort_type type, double v, unsigned char *p) {
  switch (type) {
  case GPUSORT_U32: memcpy(p, &(uint32_t){(uint32_t)(int64_t)v}, 4); break;
  case GPUSORT_I32: memcpy(p, &(int32_t){(int32_t)v}, 4); break;
  case GPUSORT_F32: memcpy(p, &(float){(float)v}, 4); break;
  case GPUSORT_U64: memcpy(p, &(uint64_t){(uint64_t)(int64_t)v}, 8); break;
  case GPUSORT_I64: memcpy(p, &(int64_t){(int64_t)v}, 8); break;
  default: memcpy(p, &v, 8); break;
  }
}

/* Records of random bytes whose keys come in runs (lengths about 1 to 6) of small numbers;
 * float keys also -0.0 beside +0.0 (keys that differ) and NaNs. Pair values: small numbers. */
static unsigned char *compact_records(const compact_layout *cl, uint64_t n, uint64_t seed) {
  unsigned char *records = malloc(n * cl->record + 16);
  seed = seed * 2654435761u + 1;
  for (uint64_t i = 0; i < n * cl->record; i++) records[i] = (unsigned char)ref_random(&seed);
  const size_t kb = gpusort_type_size(cl->key);
  unsigned char key[8];
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = ref_random(&seed);
    if (i == 0 || r % 3 == 0) {
      double v = (double)(int64_t)((r >> 8) % 61) - 30;
      if (cl->key == GPUSORT_U32 || cl->key == GPUSORT_U64) v += 30;
      store_number(cl->key, v, key);
      if (is_float(cl->key) && (r >> 20) % 8 == 0) { /* the specials */
        const int which = (int)((r >> 24) % 3);
        store_number(cl->key, which == 0 ? -0.0 : which == 1 ? 0.0 : NAN, key);
      }
    }
    memcpy(records + i * cl->record + cl->key_offset, key, kb);
  }
  if (cl->value != GPUSORT_TYPE_NONE) {
    const size_t vb = gpusort_type_size(cl->value);
    unsigned char *values = malloc(n * vb + 8);
    small_values(cl->value, values, n, seed);
    for (uint64_t i = 0; i < n; i++) memcpy(records + i * cl->record + cl->value_offset, values + i * vb, vb);
    free(values);
  }
  return records;
}

/* The predicate of the tests for each key type, and the test's own reading of it. */
static const char *compact_where(gpusort_type key) {
  if (is_float(key)) return "== 0 or > 20.5 or isnan";
  if (key == GPUSORT_I32 || key == GPUSORT_I64) return "key < -10 or (in [3,40) and not == 7)";
  return "& 3 == 1 or < 5";
}

static bool compact_satisfies(gpusort_type key, const unsigned char *p) {
  const double v = as_double(key, p);
  if (is_float(key)) return v == 0 || v > 20.5 || isnan(v);
  if (key == GPUSORT_I32 || key == GPUSORT_I64) return v < -10 || (v >= 3 && v < 40 && v != 7);
  uint64_t bits = 0;
  memcpy(&bits, p, gpusort_type_size(key));
  return (bits & 3) == 1 || v < 5;
}

/* The expected output (CPU reference) into `out`: its bytes; *result as gpusort_compact sets it. */
static size_t compact_reference(const compact_layout *cl, const gpusort_compact_options *o, const unsigned char *in,
                                uint64_t n, unsigned char *out, uint64_t *result) {
  const size_t R = cl->record, kb = gpusort_type_size(cl->key);
  size_t bytes = 0;
  uint64_t records = 0;
  if (o->op == GPUSORT_SELECT || o->op == GPUSORT_PARTITION) {
    for (int pass = 0; pass < (o->op == GPUSORT_PARTITION ? 2 : 1); pass++)
      for (uint64_t i = 0; i < n; i++)
        if (compact_satisfies(cl->key, in + i * R + cl->key_offset) == (pass == 0)) {
          memcpy(out + bytes, in + i * R, R);
          bytes += R;
          records += pass == 0;
        }
    *result = records;
    return bytes;
  }
  const gpusort_type acc = o->acc ? o->acc : cl->value;
  for (uint64_t i = 0; i < n;) {
    uint64_t end = i + 1;
    while (end < n && memcmp(in + end * R + cl->key_offset, in + i * R + cl->key_offset, kb) == 0) end++;
    if (o->op == GPUSORT_UNIQUE) {
      memcpy(out + bytes, in + i * R, R);
      bytes += R;
    } else {
      memcpy(out + bytes, in + i * R + cl->key_offset, kb);
      bytes += kb;
      if (o->op == GPUSORT_RLE) {
        const size_t cb = o->count_type == GPUSORT_U64 ? 8 : 4;
        store_number(cb == 8 ? GPUSORT_U64 : GPUSORT_U32, (double)(end - i), out + bytes);
        bytes += cb;
      } else {
        double v = as_double(cl->value, in + i * R + cl->value_offset);
        for (uint64_t j = i + 1; j < end; j++) {
          const double x = as_double(cl->value, in + j * R + cl->value_offset);
          v = o->reduce == GPUSORT_SUM ? v + x : o->reduce == GPUSORT_MIN ? fmin(v, x) : fmax(v, x);
        }
        store_number(acc, v, out + bytes);
        bytes += gpusort_type_size(acc);
      }
    }
    records++;
    i = end;
  }
  *result = records;
  return bytes;
}

static const char *const compact_op_names[] = {"", "select", "partition", "unique", "rle", "reduce-by-key"};

/* One compaction of an array against the reference. */
static void compact_array(gpusort_context *ctx, const compact_layout *cl, const gpusort_compact_options *o, uint64_t n,
                          const char *context_name) {
  unsigned char *in = compact_records(cl, n, n + o->op);
  const size_t out_size = gpusort_compact_record_size(&cl->layout, o);
  unsigned char *got = malloc(n * out_size + 16), *want = malloc(n * (cl->record + 16) + 16);
  uint64_t count = UINT64_MAX, want_count = 0;
  const size_t want_bytes = compact_reference(cl, o, in, n, want, &want_count);
  const int rc = gpusort_compact(ctx, in, got, n, &cl->layout, o, &count);
  const uint64_t written = o->op == GPUSORT_PARTITION ? n : count;
  char label[256];
  snprintf(label, sizeof label, "%s of %s, n=%llu%s%s: %s", compact_op_names[o->op], cl->name, (unsigned long long)n,
           context_name, o->count_type == GPUSORT_U64 ? ", u64 counts" : "", rc ? gpusort_last_error() : "");
  expect(rc == GPUSORT_OK && count == want_count && written * out_size == want_bytes &&
             memcmp(got, want, want_bytes) == 0,
         label);
  free(in), free(got), free(want);
}

static void compact_arrays(gpusort_context *ctx, const char *context_name, const uint64_t *sizes, size_t size_count) {
  const compact_layout layouts[] = {
      compact_layout_of("u32 keys", (gpusort_layout)GPUSORT_LAYOUT_KEYS(GPUSORT_U32)),
      compact_layout_of("f64 keys", (gpusort_layout)GPUSORT_LAYOUT_KEYS(GPUSORT_F64)),
      compact_layout_of("(i64, u32) pairs", (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_I64, GPUSORT_U32)),
      compact_layout_of("(f32, f32) pairs", (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_F32, GPUSORT_F32)),
      compact_layout_of("13-byte records, u64 key at byte 3", (gpusort_layout)GPUSORT_LAYOUT_RECORDS(GPUSORT_U64, 13, 3)),
      compact_layout_of("20-byte records, i32 key at byte 16", (gpusort_layout)GPUSORT_LAYOUT_RECORDS(GPUSORT_I32, 20, 16)),
  };
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (size_t s = 0; s < size_count; s++)
      for (int op = GPUSORT_SELECT; op <= GPUSORT_RLE; op++) {
        gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT((gpusort_compact_op)op);
        if (op <= GPUSORT_PARTITION) o.where = compact_where(layouts[l].key);
        if (op == GPUSORT_RLE) o.count_type = s % 2 ? GPUSORT_U64 : GPUSORT_U32;
        compact_array(ctx, &layouts[l], &o, sizes[s], context_name);
      }
  /* reduce-by-key: pairs, every operator, widened accumulators */
  const struct {
    gpusort_type key, value, acc;
  } by_key[] = {{GPUSORT_U32, GPUSORT_U32, GPUSORT_TYPE_NONE}, {GPUSORT_I64, GPUSORT_I32, GPUSORT_I64},
                {GPUSORT_F32, GPUSORT_F32, GPUSORT_F64},       {GPUSORT_U64, GPUSORT_F64, GPUSORT_TYPE_NONE},
                {GPUSORT_F64, GPUSORT_U32, GPUSORT_U64}};
  for (size_t b = 0; b < sizeof by_key / sizeof by_key[0]; b++) {
    char name[64];
    snprintf(name, sizeof name, "(%s, %s) pairs into %s", gpusort_type_name(by_key[b].key),
             gpusort_type_name(by_key[b].value), gpusort_type_name(by_key[b].acc ? by_key[b].acc : by_key[b].value));
    const compact_layout cl = compact_layout_of(name, (gpusort_layout)GPUSORT_LAYOUT_PAIRS(by_key[b].key, by_key[b].value));
    for (int op = GPUSORT_SUM; op <= GPUSORT_MAX; op++)
      for (size_t s = 0; s < size_count; s++) {
        gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
        o.reduce = (gpusort_scan_op)op, o.acc = by_key[b].acc;
        compact_array(ctx, &cl, &o, sizes[s], context_name);
      }
  }
}

/* A .npy header (version 1.0) for `count` elements of `descr` (a quoted type or a list). */
static size_t compact_npy_header(const char *descr, uint64_t count, unsigned char *buf) {
  char dict[512];
  const int len = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (%llu,), }", descr,
                           (unsigned long long)count);
  const size_t total = (10 + (size_t)len + 1 + 63) / 64 * 64;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)((total - 10) & 0xFF), buf[9] = (unsigned char)((total - 10) >> 8);
  memcpy(buf + 10, dict, (size_t)len);
  memset(buf + 10 + len, ' ', total - 10 - (size_t)len - 1);
  buf[total - 1] = '\n';
  return total;
}

static void write_file(const char *file, const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  FILE *f = fopen(file, "wb");
  if (a_bytes) fwrite(a, 1, a_bytes, f);
  if (b_bytes) fwrite(b, 1, b_bytes, f);
  fclose(f);
}

/* One file job against the reference (a .npy input when descr is given: then the output's
 * header must hold want_descr and the count). */
static void compact_file(gpusort_context *ctx, const compact_layout *cl, const gpusort_compact_options *options,
                         uint64_t n, const char *descr, const char *want_descr, const char *context_name,
                         bool several_batches) {
  unsigned char *in = compact_records(cl, n, 7 * n + options->op);
  unsigned char *want = malloc(n * (cl->record + 16) + 16), header[256];
  uint64_t want_count = 0, count = UINT64_MAX;
  const size_t want_bytes = compact_reference(cl, options, in, n, want, &want_count);
  const size_t header_bytes = descr ? compact_npy_header(descr, n, header) : 0;
  write_file(path(descr ? "compact-in.npy" : "compact-in.bin"), header, header_bytes, in, n * cl->record);
  gpusort_compact_options o = *options;
  o.flags = GPUSORT_OVERWRITE;
  gpusort_report r = GPUSORT_REPORT_INIT;
  const gpusort_layout from_header = GPUSORT_LAYOUT_NPY;
  const char *out_file = path(descr ? "compact-out.npy" : "compact-out.bin");
  const int rc = gpusort_compact_file(ctx, path(descr ? "compact-in.npy" : "compact-in.bin"), out_file,
                                      descr && !cl->layout.part_fields ? &from_header : &cl->layout, &o, &count, &r);
  size_t size = 0;
  unsigned char *got = read_all(out_file, &size);
  size_t at = 0;
  bool header_ok = true;
  if (descr && got && size >= 10) { /* the output's header: its dtype and its count */
    at = 10 + (size_t)(got[8] | got[9] << 8);
    char text[1024], want_header[512];
    snprintf(text, sizeof text, "%.*s", (int)(at - 10 < 1000 ? at - 10 : 1000), (const char *)got + 10);
    snprintf(want_header, sizeof want_header, "{'descr': %s, 'fortran_order': False, 'shape': (%llu,), }", want_descr,
             (unsigned long long)(options->op == GPUSORT_PARTITION ? n : want_count));
    header_ok = strncmp(text, want_header, strlen(want_header)) == 0 && at % 64 == 0 && at <= size;
  }
  char label[320];
  snprintf(label, sizeof label, "%s file of %s%s, n=%llu%s: %s", compact_op_names[options->op], cl->name,
           descr ? " (.npy)" : "", (unsigned long long)n, context_name, rc ? gpusort_last_error() : "");
  expect(rc == GPUSORT_OK && got && header_ok && size == at + want_bytes && memcmp(got + at, want, want_bytes) == 0 &&
             count == want_count,
         label);
  snprintf(label, sizeof label, "%s file of %s%s, n=%llu%s: the report", compact_op_names[options->op], cl->name,
           descr ? " (.npy)" : "", (unsigned long long)n, context_name);
  expect(rc == GPUSORT_OK && report_matches_file(&r, out_file, n) && r.input_bytes == n * cl->record &&
             (n == 0 || r.stage_seconds[GPUSORT_STAGE_COMPACT] > 0) && (n == 0 || r.tile_items > 0) &&
             r.tile_items == r.tile_invocations * r.tile_items_per_invocation && /* (over select's sub-tiles) */
             (several_batches ? r.batches > 1 : r.batches == (n ? 1u : 0u)),
         label);
  free(got), free(want), free(in);
}

static void compact_files(gpusort_context *ctx, const char *context_name, uint64_t n, bool several_batches) {
  const compact_layout records = compact_layout_of("24-byte records, f32 key at byte 5",
                                                   (gpusort_layout)GPUSORT_LAYOUT_RECORDS(GPUSORT_F32, 24, 5));
  const compact_layout keys = compact_layout_of("i32 keys", (gpusort_layout)GPUSORT_LAYOUT_KEYS(GPUSORT_I32));
  const compact_layout pairs = compact_layout_of("(u64, i32) pairs",
                                                 (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_U64, GPUSORT_I32));
  for (int op = GPUSORT_SELECT; op <= GPUSORT_REDUCE_BY_KEY; op++) {
    gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT((gpusort_compact_op)op);
    const compact_layout *cl = op == GPUSORT_REDUCE_BY_KEY ? &pairs : &records;
    if (op <= GPUSORT_PARTITION) o.where = compact_where(cl->key);
    if (op == GPUSORT_REDUCE_BY_KEY) o.acc = GPUSORT_I64;
    compact_file(ctx, cl, &o, n, NULL, NULL, context_name, several_batches);
    /* .npy: keys from the header's dtype */
    if (op <= GPUSORT_PARTITION) o.where = compact_where(keys.key);
    if (op == GPUSORT_RLE) o.count_type = GPUSORT_U64;
    if (op != GPUSORT_REDUCE_BY_KEY)
      compact_file(ctx, &keys, &o, n, "'<i4'",
                   op == GPUSORT_RLE ? "[('key', '<i4'), ('count', '<u8')]" : "'<i4'", context_name, several_batches);
  }
  /* .npy of a structured dtype, its key named: reduce-by-key's pairs */
  const gpusort_key_part part = {0, GPUSORT_TYPE_NONE, 0, 0};
  const char *const fields[] = {"key"};
  compact_layout named = pairs;
  named.name = "a structured .npy of (key u8, value i4)";
  named.layout = (gpusort_layout)GPUSORT_LAYOUT_NPY_FIELDS(1, &part, fields);
  gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
  o.reduce = GPUSORT_MAX;
  compact_file(ctx, &named, &o, n, "[('key', '<u8'), ('value', '<i4')]", "[('key', '<u8'), ('value', '<i4')]",
               context_name, several_batches);
  o = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  compact_file(ctx, &named, &o, n, "[('key', '<u8'), ('value', '<i4')]", "[('key', '<u8'), ('value', '<i4')]",
               context_name, several_batches);
}

/* Usage errors: options that do not apply, layouts of other key forms, bad expressions. */
static void compact_errors(gpusort_context *ctx) {
  uint32_t data[64] = {0}, out[256];
  uint64_t count = 0;
  const gpusort_layout keys = GPUSORT_LAYOUT_KEYS(GPUSORT_U32), pairs = GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U64);
  gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_SELECT);
  o.where = "< 5";
  expect_status(gpusort_compact(NULL, data, out, 8, &keys, &o, &count), GPUSORT_ERROR_USAGE, "compact: no context");
  expect_status(gpusort_compact(ctx, NULL, out, 8, &keys, &o, &count), GPUSORT_ERROR_USAGE, "compact: no input");
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, NULL, &count), GPUSORT_ERROR_USAGE, "compact: no options");
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &o, NULL), GPUSORT_ERROR_USAGE, "compact: no result_count");
  expect_status(gpusort_compact(ctx, NULL, NULL, 0, &keys, &o, &count), GPUSORT_OK, "compact: no data for no records");
  expect(count == 0, "compact: no records kept of none");
  expect_status(gpusort_compact(ctx, data, data + 4, 8, &keys, &o, &count), GPUSORT_ERROR_USAGE,
                "compact: overlapping arrays");
  gpusort_compact_options bad = o;
  bad.struct_size = 0;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE,
                "compact: uninitialized options");
  bad = o, bad.op = (gpusort_compact_op)0;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "compact: op 0");
  bad = o, bad.op = (gpusort_compact_op)6;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "compact: op 6");
  bad = o, bad.flags = GPUSORT_OVERWRITE;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE,
                "compact: a file flag on an array");
  bad = o, bad.flags = GPUSORT_DESCENDING;
  expect_status(gpusort_compact_file(ctx, path("x.bin"), path("y.bin"), &keys, &bad, NULL, NULL), GPUSORT_ERROR_USAGE,
                "compact_file: a sort flag");
  bad = o, bad.where = NULL;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "select without where");
  bad.op = GPUSORT_PARTITION, bad.where = "";
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE,
                "partition with an empty where");
  bad = o, bad.op = GPUSORT_UNIQUE;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "unique with a where");
  bad = o, bad.where = "< 5 and";
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "a malformed where");
  bad.where = "< 0.5";
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE,
                "a fraction for an integer key");
  bad = o, bad.count_type = GPUSORT_U64;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "count_type on select");
  bad = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
  bad.count_type = GPUSORT_I32;
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &bad, &count), GPUSORT_ERROR_USAGE, "i32 rle counts");
  bad = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  bad.reduce = GPUSORT_MIN;
  expect_status(gpusort_compact(ctx, data, out, 8, &pairs, &bad, &count), GPUSORT_ERROR_USAGE, "reduce on unique");
  bad.reduce = GPUSORT_SUM, bad.acc = GPUSORT_U64;
  expect_status(gpusort_compact(ctx, data, out, 8, &pairs, &bad, &count), GPUSORT_ERROR_USAGE, "acc on unique");
  gpusort_compact_options rbk = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
  expect_status(gpusort_compact(ctx, data, out, 8, &keys, &rbk, &count), GPUSORT_ERROR_USAGE,
                "reduce-by-key of keys alone");
  const gpusort_layout records = GPUSORT_LAYOUT_RECORDS(GPUSORT_U32, 16, 0);
  expect_status(gpusort_compact(ctx, data, out, 8, &records, &rbk, &count), GPUSORT_ERROR_USAGE,
                "reduce-by-key of records");
  rbk.acc = GPUSORT_U32;
  expect_status(gpusort_compact(ctx, data, out, 8, &pairs, &rbk, &count), GPUSORT_ERROR_USAGE,
                "reduce-by-key into a narrower accumulator");
  const gpusort_layout float_pairs = GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_F32);
  rbk.acc = GPUSORT_I64;
  expect_status(gpusort_compact(ctx, data, out, 8, &float_pairs, &rbk, &count), GPUSORT_ERROR_USAGE,
                "float values into an integer accumulator");
  rbk.acc = GPUSORT_TYPE_NONE, rbk.reduce = (gpusort_scan_op)3;
  expect_status(gpusort_compact(ctx, data, out, 8, &pairs, &rbk, &count), GPUSORT_ERROR_USAGE,
                "an unknown reduce operator");
  /* keys of other numeric forms (since 0.7): widened on their way to the GPU, kept as they were */
  const gpusort_layout narrow = GPUSORT_LAYOUT_KEYS(GPUSORT_U16), big = GPUSORT_LAYOUT_KEYS(GPUSORT_U32BE);
  const uint16_t narrow_keys[8] = {7, 2, 9, 4, 65535, 0, 5, 3};
  const unsigned char big_keys[8][4] = {{0, 0, 0, 7}, {0, 0, 0, 2}, {1, 0, 0, 0}, {0, 0, 0, 4},
                                        {0, 0, 0, 9}, {0, 0, 0, 0}, {0, 0, 0, 5}, {0, 0, 0, 1}};
  uint16_t narrow_out[8];
  unsigned char big_out[8][4];
  expect_status(gpusort_compact(ctx, narrow_keys, narrow_out, 8, &narrow, &o, &count), GPUSORT_OK, "select of u16 keys");
  expect(count == 4 && narrow_out[0] == 2 && narrow_out[1] == 4 && narrow_out[2] == 0 && narrow_out[3] == 3,
         "select < 5 of u16 keys: 2, 4, 0, 3 in input order");
  expect_status(gpusort_compact(ctx, big_keys, big_out, 8, &big, &o, &count), GPUSORT_OK, "select of u32be keys");
  expect(count == 4 && memcmp(big_out[0], big_keys[1], 4) == 0 && memcmp(big_out[3], big_keys[7], 4) == 0,
         "select < 5 of u32be keys: 2, 4, 0, 1 as they were stored");
  const gpusort_key_part two[] = {{0, GPUSORT_U32, 0, 0}, {4, GPUSORT_U32, 0, 0}};
  const gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE(8, 2, two);
  expect_status(gpusort_compact(ctx, data, out, 8, &composite, &o, &count), GPUSORT_ERROR_USAGE,
                "select of a composite key");
  const gpusort_layout narrow_values = GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U16);
  rbk = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
  expect_status(gpusort_compact(ctx, data, out, 8, &narrow_values, &rbk, &count), GPUSORT_ERROR_USAGE,
                "reduce-by-key of u16 values");
  const gpusort_layout from_header = GPUSORT_LAYOUT_NPY;
  expect_status(gpusort_compact(ctx, data, out, 8, &from_header, &o, &count), GPUSORT_ERROR_USAGE,
                "an array with a layout from a .npy header");
  write_file(path("compact-raw.bin"), data, sizeof data, NULL, 0);
  expect_status(gpusort_compact_file(ctx, path("compact-raw.bin"), path("compact-raw-out.bin"), &from_header, &o, NULL,
                                     NULL),
                GPUSORT_ERROR_USAGE, "compact_file: a raw file with a layout from a .npy header");
  gpusort_report bad_report = {0};
  expect_status(gpusort_compact_file(ctx, path("compact-raw.bin"), path("compact-raw-out.bin"), &keys, &o, NULL,
                                     &bad_report),
                GPUSORT_ERROR_USAGE, "compact_file: an uninitialized report");
  o.flags = GPUSORT_OVERWRITE;
  expect_status(gpusort_compact_file(ctx, path("compact-raw.bin"), path("compact-raw.bin"), &keys, &o, NULL, NULL),
                GPUSORT_ERROR_OUTPUT_IS_INPUT, "compact_file: the output is the input");
  /* the record sizes */
  gpusort_compact_options s = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
  expect(gpusort_compact_record_size(&pairs, &s) == 8, "record size: rle of u32 keys, u32 counts");
  s.count_type = GPUSORT_U64;
  expect(gpusort_compact_record_size(&pairs, &s) == 12, "record size: rle of u32 keys, u64 counts");
  s = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
  expect(gpusort_compact_record_size(&pairs, &s) == 12, "record size: reduce-by-key of (u32, u64)");
  s.acc = GPUSORT_F64;
  expect(gpusort_compact_record_size(&float_pairs, &s) == 12, "record size: reduce-by-key into f64");
  s = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  expect(gpusort_compact_record_size(&records, &s) == 16, "record size: unique records");
  expect(gpusort_compact_record_size(&narrow, &s) == 2, "record size: unique u16 keys");
  s = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
  expect(gpusort_compact_record_size(&narrow, &s) == 6, "record size: rle of u16 keys, u32 counts");
  s = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  expect(gpusort_compact_record_size(&keys, &rbk) == 0 &&
             gpusort_compact_record_size(&from_header, &s) == 0 && gpusort_compact_record_size(NULL, &s) == 0,
         "record size: 0 for what does not go together");
}

/* Layouts beyond the plain ones: pairs of another value type, a composite key of one part. */
static void compact_other_layouts(gpusort_context *ctx) {
  compact_layout narrow = compact_layout_of("(u32, u16) pairs", (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U16));
  narrow.value = GPUSORT_TYPE_NONE; /* random bytes */
  gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_SELECT);
  o.where = compact_where(GPUSORT_U32);
  compact_array(ctx, &narrow, &o, 3001, "");
  const gpusort_key_part part = {4, GPUSORT_F64, 0, GPUSORT_KEY_DESCENDING};
  compact_layout one_part = compact_layout_of("a one-part composite f64 key at byte 4 of 12",
                                              (gpusort_layout)GPUSORT_LAYOUT_COMPOSITE(12, 1, &part));
  one_part.key = GPUSORT_F64, one_part.key_offset = 4, one_part.record = 12;
  o = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  compact_array(ctx, &one_part, &o, 3001, "");
}

/* gpusort_sort_then_file: keys with 997 distinct values (multiples of 3, each many times) sorted,
 * then unique (ascending and descending; pairs keep the first value in input order) and rle,
 * against counts made here; then the combinations it refuses. */
static void sort_then_files(gpusort_context *ctx) {
  enum { N = 20011, DISTINCT = 997 };
  uint32_t *keys = malloc(N * 4), counts[DISTINCT] = {0}, first[DISTINCT];
  unsigned char *pairs = malloc(N * 12);
  for (uint32_t i = 0; i < N; i++) {
    const uint32_t d = (uint32_t)((i * 7919ull) % DISTINCT);
    keys[i] = d * 3;
    if (counts[d]++ == 0) first[d] = i;
    const uint64_t value = i;
    memcpy(pairs + i * 12, &keys[i], 4), memcpy(pairs + i * 12 + 4, &value, 8);
  }
  write_file(path("then-keys.bin"), keys, N * 4, NULL, 0);
  write_file(path("then-pairs.bin"), pairs, N * 12, NULL, 0);
  const gpusort_layout kl = GPUSORT_LAYOUT_KEYS(GPUSORT_U32), pl = GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U64);
  char out[1024]; /* (path() reuses its buffers) */
  snprintf(out, sizeof out, "%s", path("then-out.bin"));
  for (int descending = 0; descending < 2; descending++) {
    gpusort_sort_options so = GPUSORT_SORT_OPTIONS_INIT;
    so.flags = GPUSORT_OVERWRITE | (descending ? GPUSORT_DESCENDING : 0);
    const gpusort_compact_options unique = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
    gpusort_compact_options rle = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
    rle.count_type = GPUSORT_U64;
    for (int step = 0; step < 3; step++) { /* unique keys, unique pairs, rle */
      const unsigned width = step == 0 ? 4 : 12;
      gpusort_report r = GPUSORT_REPORT_INIT;
      uint64_t count = 0;
      size_t size = 0;
      const int rc = gpusort_sort_then_file(ctx, path(step == 1 ? "then-pairs.bin" : "then-keys.bin"), out,
                                            step == 1 ? &pl : &kl, &so, step == 2 ? &rle : &unique, &count, &r);
      unsigned char *got = read_all(out, &size);
      bool ok = rc == GPUSORT_OK && got && count == DISTINCT && size == DISTINCT * width;
      for (uint32_t j = 0; ok && j < DISTINCT; j++) {
        const uint32_t d = descending ? DISTINCT - 1 - j : j;
        uint32_t key;
        uint64_t tail = 0;
        memcpy(&key, got + j * width, 4);
        if (width == 12) memcpy(&tail, got + j * width + 4, 8);
        ok = key == d * 3 && (step == 0 || tail == (step == 1 ? first[d] : counts[d]));
      }
      char label[160];
      snprintf(label, sizeof label, "sort_then_file: %s%s: %s", step == 0 ? "unique keys" : step == 1 ? "unique pairs" : "rle",
               descending ? ", descending" : "", rc ? gpusort_last_error() : "");
      expect(ok && report_matches_file(&r, out, N) && r.stage_seconds[GPUSORT_STAGE_COMPACT] > 0 &&
                 r.stage_seconds[GPUSORT_STAGE_SORT] > 0,
             label);
      free(got);
    }
  }
  gpusort_sort_options so = GPUSORT_SORT_OPTIONS_INIT;
  so.flags = GPUSORT_OVERWRITE;
  gpusort_compact_options then = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &so, &then, NULL, NULL), GPUSORT_OK,
                "sort_then_file: no result_count, no report");
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &so, NULL, NULL, NULL), GPUSORT_ERROR_USAGE,
                "sort_then_file: no step");
  gpusort_compact_options bad = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_SELECT);
  bad.where = "< 5";
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &so, &bad, NULL, NULL), GPUSORT_ERROR_USAGE,
                "sort_then_file: select after a sort");
  bad = then, bad.count_type = GPUSORT_U64;
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &so, &bad, NULL, NULL), GPUSORT_ERROR_USAGE,
                "sort_then_file: count_type on unique");
  bad = then, bad.flags = GPUSORT_OVERWRITE;
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &so, &bad, NULL, NULL), GPUSORT_ERROR_USAGE,
                "sort_then_file: file flags in the step's options");
  bad = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
  expect_status(gpusort_sort_then_file(ctx, path("then-pairs.bin"), out, &pl, &so, &bad, NULL, NULL), GPUSORT_ERROR_USAGE,
                "sort_then_file: rle of pairs");
  gpusort_sort_options verify = so, bits = so;
  verify.flags |= GPUSORT_VERIFY;
  bits.begin_bit = 0, bits.end_bit = 8;
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &verify, &then, NULL, NULL),
                GPUSORT_ERROR_USAGE, "sort_then_file: with verification");
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &kl, &bits, &then, NULL, NULL),
                GPUSORT_ERROR_USAGE, "sort_then_file: with a bit range");
  const gpusort_layout narrow = GPUSORT_LAYOUT_KEYS(GPUSORT_U16);
  expect_status(gpusort_sort_then_file(ctx, path("then-keys.bin"), out, &narrow, &so, &then, NULL, NULL),
                GPUSORT_ERROR_USAGE, "sort_then_file: u16 keys");
  free(keys), free(pairs);
}

static void compact(gpusort_context *ctx) {
  const uint64_t sizes[] = {0, 1, 4099, 100003};
  compact_arrays(ctx, "", sizes, sizeof sizes / sizeof sizes[0]);
  compact_files(ctx, "", 30011, false);
  compact_files(ctx, "", 0, false);
  compact_errors(ctx);
  compact_other_layouts(ctx);
  sort_then_files(ctx);
  /* a budget that takes many chunks: runs and partitions across them */
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  p.memory_budget = 256u << 10;
  p.flags = GPUSORT_OPEN_DEFERRED;
  gpusort_context *small = NULL;
  expect_status(gpusort_open(&small, &p), GPUSORT_OK, "a context with a 256 KiB budget");
  if (!small) return;
  const uint64_t chunked[] = {100003};
  compact_arrays(small, ", 256 KiB budget", chunked, 1);
  /* one run through every chunk */
  const compact_layout pairs = compact_layout_of("(u32, u64) pairs of one key",
                                                 (gpusort_layout)GPUSORT_LAYOUT_PAIRS(GPUSORT_U32, GPUSORT_U64));
  const uint64_t n = 100003;
  unsigned char *same = malloc(n * 12), out[24];
  for (uint64_t i = 0; i < n; i++) memcpy(same + i * 12, &(uint32_t){7}, 4), memcpy(same + i * 12 + 4, &(uint64_t){i}, 8);
  uint64_t count = 0, value = 0, rle_count = 0;
  gpusort_compact_options o = GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_REDUCE_BY_KEY);
  const int rc = gpusort_compact(small, same, out, n, &pairs.layout, &o, &count);
  memcpy(&value, out + 4, 8);
  expect(rc == GPUSORT_OK && count == 1 && value == n * (n - 1) / 2, "reduce-by-key of one run through every chunk");
  o = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_RLE);
  o.count_type = GPUSORT_U64;
  expect(gpusort_compact(small, same, out, n, &pairs.layout, &o, &count) == GPUSORT_OK && count == 1 &&
             (memcpy(&rle_count, out + 4, 8), rle_count == n),
         "rle of one run through every chunk");
  o = (gpusort_compact_options)GPUSORT_COMPACT_OPTIONS_INIT(GPUSORT_UNIQUE);
  expect(gpusort_compact(small, same, out, n, &pairs.layout, &o, &count) == GPUSORT_OK && count == 1 &&
             memcmp(out, same, 12) == 0,
         "unique of one run through every chunk");
  free(same);
  compact_files(small, ", 256 KiB budget", 100003, true);
  expect(no_temporary_files(), "compact: no temporary file is left");
  gpusort_close(small);
}

/* With GPUSORT_TEST_CORRUPT=1 every sort's output is damaged: GPUSORT_VERIFY must say so. */
static void corrupt(gpusort_context *ctx) {
  const gpusort_layout L = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  uint32_t data[5000];
  uint64_t seed = 5;
  for (int i = 0; i < 5000; i++) data[i] = (uint32_t)ref_random(&seed);
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  o.flags = GPUSORT_VERIFY;
  for (int a = GPUSORT_SORT_ONESWEEP; a <= GPUSORT_SORT_BITONIC; a++) {
    o.algo = (gpusort_sort_algo)a;
    expect_status(gpusort_sort(ctx, data, data, 5000, &L, &o), GPUSORT_ERROR_VERIFY, "a damaged array sort");
  }
  o.algo = GPUSORT_SORT_AUTO;
  FILE *f = fopen(path("c.bin"), "wb");
  fwrite(data, 4, 5000, f);
  fclose(f);
  remove(path("c-out.bin"));
  o.flags = GPUSORT_VERIFY | GPUSORT_OVERWRITE;
  expect_status(gpusort_sort_file(ctx, path("c.bin"), path("c-out.bin"), &L, &o, NULL), GPUSORT_ERROR_VERIFY,
                "a damaged file sort");
  struct stat st;
  expect(stat(path("c-out.bin"), &st) != 0 && no_temporary_files(), "a failed verification writes nothing");
  /* and the sort of normalized forms too */
  const gpusort_layout narrow = GPUSORT_LAYOUT_KEYS(GPUSORT_U16BE);
  o.flags = GPUSORT_VERIFY;
  expect_status(gpusort_sort(ctx, data, data, 10000, &narrow, &o), GPUSORT_ERROR_VERIFY, "a damaged u16be sort");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_api WORKDIR [corrupt | compact]\n");
    return 2;
  }
  workdir = argv[1];
  mkdir(workdir, 0755);
  gpusort_context *ctx = NULL;
  basics();
  devices_and_contexts(&ctx);
  if (!ctx) {
    fprintf(stderr, "FAIL: no context\n");
    return 1;
  }
  if (argc > 2 && strcmp(argv[2], "corrupt") == 0) {
    corrupt(ctx);
  } else if (argc > 2 && strcmp(argv[2], "compact") == 0) {
    compact(ctx);
  } else {
    array_sorts(ctx);
    algorithms(ctx);
    array_scans(ctx);
    array_scans_of_forms();
    file_jobs(ctx);
    files_beyond_the_budget(ctx);
    error_paths(ctx);
    key_forms(ctx);
    compact(ctx);
  }
  gpusort_close(ctx);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
