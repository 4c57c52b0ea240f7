/* gpusort bench: GPU time of the sort (or the scans, or the look-back family) on device-resident data, beside a
 * buffer-to-buffer copy of the same bytes measured in the same run (gpusort_bench_sort,
 * gpusort_bench_scans), one line per size. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

enum { MAX_SIZES = 32 };

typedef struct {
  cli_common common;
  gpusort_layout layout;
  uint64_t sizes[MAX_SIZES];
  unsigned nsizes;
  bool default_sizes, scans, compact;
  gpusort_sort_algo algo;
  const char *dist; /* NULL: uniform */
  uint64_t reps;
  char device_name[256]; /* for --json */
} bench_args;

static int parse_sizes(const char *text, bench_args *o) {
  char *copy = strdup(text);
  if (!copy) return cli_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  o->nsizes = 0;
  int rc = GPUSORT_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (o->nsizes == MAX_SIZES || cli_parse_count(tok, &o->sizes[o->nsizes]) != 0 || o->sizes[o->nsizes] == 0) {
      rc = cli_fail(GPUSORT_ERROR_USAGE, "--sizes takes up to %d positive counts (decimal or 2^K), not '%s'",
                    MAX_SIZES, tok);
      break;
    }
    o->nsizes++;
  }
  free(copy);
  if (rc == GPUSORT_OK && o->nsizes == 0) rc = cli_fail(GPUSORT_ERROR_USAGE, "--sizes is empty");
  o->default_sizes = false;
  return rc;
}

static int parse_bench_args(int argc, char **argv, bench_args *o, bool *done) {
  static const struct option longopts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                           {"values", required_argument, NULL, OPT_VALUES},
                                           {"sizes", required_argument, NULL, OPT_SIZES},
                                           {"reps", required_argument, NULL, OPT_REPS},
                                           {"scan-algos", no_argument, NULL, OPT_SCAN_ALGOS},
                                           {"compact", no_argument, NULL, OPT_BENCH_COMPACT},
                                           {"algo", required_argument, NULL, OPT_ALGO},
                                           {"dist", required_argument, NULL, OPT_DIST},
                                           CLI_COMMON_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  const gpusort_layout keys = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  *o = (bench_args){.layout = keys, .sizes = {1u << 16, 1u << 20, 1u << 24, 1u << 26, 1u << 28}, .nsizes = 5,
                    .default_sizes = true, .reps = 15};
  bool keys_given = false;
  cli_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&o->common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case OPT_KEYS: keys_given = true; rc = cli_parse_type("--keys", optarg, &o->layout.key); break;
    case OPT_VALUES: rc = cli_parse_type("--values", optarg, &o->layout.value); break;
    case OPT_SIZES: rc = parse_sizes(optarg, o); break;
    case OPT_SCAN_ALGOS: o->scans = true; break;
    case OPT_BENCH_COMPACT: o->compact = true; break;
    case OPT_ALGO: rc = cli_parse_sort_algo(optarg, &o->algo); break;
    case OPT_DIST: o->dist = optarg; break;
    case OPT_REPS:
      if (cli_parse_count(optarg, &o->reps) != 0 || o->reps == 0 || o->reps > 255)
        rc = cli_fail(GPUSORT_ERROR_USAGE, "--reps takes a count from 1 to 255, not '%s'", optarg);
      break;
    default: rc = cli_other_option(opt, argv, longopts, done);
    }
    if (rc || *done) return rc;
  }
  if (optind != argc) return cli_fail(GPUSORT_ERROR_USAGE, "bench takes no arguments (see 'gpusort --help')");
  if (o->scans && o->compact) return cli_fail(GPUSORT_ERROR_USAGE, "--scan-algos and --compact are two benchmarks: "
                                                                    "give one");
  if ((o->scans || o->compact) && o->dist)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s times its own inputs: it takes no --dist",
                    o->scans ? "--scan-algos" : "--compact");
  if ((o->scans || o->compact) && (keys_given || o->layout.value))
    return cli_fail(GPUSORT_ERROR_USAGE, "%s times u32 keys: it takes no --keys or --values",
                    o->scans ? "--scan-algos" : "--compact");
  return GPUSORT_OK;
}

/* A size that does not fit the device is skipped (silently among the default sizes). */
static bool skipped(const bench_args *o, uint64_t n, int rc) {
  if (rc != GPUSORT_ERROR_TOO_LARGE) return false;
  if (!o->default_sizes) printf("%12llu  skipped: does not fit the device\n", (unsigned long long)n);
  return true;
}

static int bench_sorts(const bench_args *o, gpusort_context *ctx) {
  const gpusort_layout *L = &o->layout;
  const size_t kb = gpusort_type_size(L->key);
  int rc = GPUSORT_OK, ran = 0;
  for (unsigned i = 0; i < o->nsizes; i++) {
    const uint64_t n = o->sizes[i];
    gpusort_bench_result r = GPUSORT_BENCH_RESULT_INIT;
    r.algo = o->algo;
    r.distribution = o->dist;
    rc = gpusort_bench_sort(ctx, L, n, (uint32_t)o->reps, &r);
    if (skipped(o, n, rc)) continue;
    if (rc && rc != GPUSORT_ERROR_VERIFY) return cli_library_error(rc);
    if (o->common.json) { /* one object per size */
      ran++;
      cli_json j;
      char passes[256] = "[";
      for (unsigned p = 0; p < r.passes && p < 8; p++)
        snprintf(passes + strlen(passes), sizeof passes - strlen(passes), "%s%.9g", p ? ", " : "", r.pass_seconds[p]);
      strcat(passes, "]");
      cli_json_begin(&j, stdout);
      cli_json_string(&j, "command", "bench");
      cli_json_string(&j, "device", o->device_name);
      cli_json_string(&j, "keys", gpusort_type_name(L->key));
      if (L->value) cli_json_string(&j, "values", gpusort_type_name(L->value));
      cli_json_count(&j, "records", n);
      cli_json_count(&j, "bytes", n * kb);
      cli_json_count(&j, "reps", o->reps);
      cli_json_string(&j, "algo", cli_sort_algo_name(r.algo));
      cli_json_string(&j, "distribution", o->dist ? o->dist : "uniform");
      cli_json_number(&j, "sort_seconds", r.sort_seconds);
      cli_json_number(&j, "copy_seconds", r.copy_seconds);
      cli_json_number(&j, "copy_command_seconds", r.copy_command_seconds);
      cli_json_number(&j, "histogram_seconds", r.histogram_seconds);
      cli_json_raw(&j, "pass_seconds", passes);
      cli_json_count(&j, "tile_invocations", r.tile_invocations);
      cli_json_count(&j, "tile_keys_per_invocation", r.tile_keys_per_invocation);
      cli_json_raw(&j, "checked", r.checked ? "true" : "false");
      cli_json_end(&j);
      if (rc) return cli_library_error(rc);
      continue;
    }
    if (ran++ == 0) {
      if (L->value)
        printf("%s keys with %s values (each its index), ", gpusort_type_name(L->key), gpusort_type_name(L->value));
      else
        printf("%s keys, ", gpusort_type_name(L->key));
      printf("%s%s (seed 1); %s%s; median of %llu runs; GPU timestamps\n", o->dist ? "distribution " : "",
             o->dist ? o->dist : "uniform random", cli_sort_algo_name(r.algo),
             o->algo == GPUSORT_SORT_AUTO ? " (auto, at the first size)" : "", (unsigned long long)o->reps);
      printf("copy = the keys' bytes copied buffer to buffer by a compute kernel; GB/s counts bytes read + written;\n"
             "tile = invocations x keys each (small sorts take smaller tiles)\n");
      printf("%12s %10s %10s %10s %11s %10s %8s %8s\n", "n", "sort ms", "Gkeys/s", "copy ms", "copy GB/s", "sort/copy",
             "checked", "tile");
    }
    char tile[32];
    snprintf(tile, sizeof tile, "%ux%u", r.tile_invocations, r.tile_keys_per_invocation);
    printf("%12llu %10.3f %10.3f %10.3f %11.1f %10.2f %8s %8s\n", (unsigned long long)n, r.sort_seconds * 1e3,
           (double)n / r.sort_seconds * 1e-9, r.copy_seconds * 1e3, 2.0 * (double)(n * kb) / r.copy_seconds * 1e-9,
           r.sort_seconds / r.copy_seconds, r.checked ? "ok" : "FAILED", tile);
    if (o->common.verbosity >= 2) {
      printf("%12s vkCmdCopyBuffer %.3f ms, %.1f GB/s\n", "", r.copy_command_seconds * 1e3,
             2.0 * (double)(n * kb) / r.copy_command_seconds * 1e-9);
      printf("%14s %.3f\n", "histogram ms:", r.histogram_seconds * 1e3);
      printf("%14s", "passes ms:");
      for (unsigned p = 0; p < r.passes && p < 8; p++) printf(" %.3f", r.pass_seconds[p] * 1e3);
      printf("\n");
    }
    fflush(stdout);
    if (rc) return cli_library_error(rc);
  }
  return ran ? GPUSORT_OK : cli_fail(GPUSORT_ERROR_TOO_LARGE, "none of the sizes fits the device");
}

/* Named timings beside the copy: the scans (--scan-algos) or the look-back family (--compact). */
static int bench_named(const bench_args *o, gpusort_context *ctx) {
  int rc = GPUSORT_OK, ran = 0;
  uint32_t tile = 0; /* the look-back tile of the size before */
  for (unsigned i = 0; i < o->nsizes; i++) {
    const uint64_t n = o->sizes[i];
    gpusort_bench_scan_result r = GPUSORT_BENCH_SCAN_RESULT_INIT;
    rc = o->compact ? gpusort_bench_compact(ctx, n, (uint32_t)o->reps, &r)
                    : gpusort_bench_scans(ctx, n, (uint32_t)o->reps, &r);
    if (skipped(o, n, rc)) continue;
    if (rc && rc != GPUSORT_ERROR_VERIFY) return cli_library_error(rc);
    if (o->common.json) { /* one object per size */
      ran++;
      char algos[2048] = "{";
      for (unsigned a = 0; a < r.algorithms; a++)
        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s\"%s\": {\"seconds\": %.9g, \"checked\": %s}",
                 a ? ", " : "", r.algorithm[a].name, r.algorithm[a].seconds, r.algorithm[a].checked ? "true" : "false");
      strcat(algos, "}");
      cli_json j;
      cli_json_begin(&j, stdout);
      cli_json_string(&j, "command", "bench");
      cli_json_string(&j, "device", o->device_name);
      cli_json_string(&j, "keys", "u32");
      cli_json_count(&j, "records", n);
      cli_json_count(&j, "bytes", 4 * n);
      cli_json_count(&j, "reps", o->reps);
      cli_json_count(&j, "lookback_tile", r.lookback_tile);
      cli_json_number(&j, "copy_seconds", r.copy_seconds);
      cli_json_raw(&j, o->compact ? "compactions" : "scans", algos);
      cli_json_end(&j);
      if (rc) return cli_library_error(rc);
      continue;
    }
    if (ran++ == 0 && o->compact)
      printf("u32 keys: select and partition of uniform keys (the upper half kept); unique, rle and reduce-by-key\n"
             "of sorted keys with n/16 distinct values (CUB's inputs); select's tile %u keys; median of %llu runs; GPU\n"
             "timestamps; GB/s counts 4 bytes read and 4 written per key; copy = the keys copied by a compute "
             "kernel\n",
             r.lookback_tile, (unsigned long long)o->reps);
    else if (ran == 1)
      printf("u32 exclusive sums of uniform random keys (seed 1); look-back tile %u (small scans take smaller "
             "tiles); median of %llu runs;\nGPU timestamps; GB/s counts 4 bytes read and 4 written per element; "
             "copy = the same bytes copied by a compute kernel\n",
             r.lookback_tile, (unsigned long long)o->reps);
    if (ran == 1) printf("%12s  %-30s %10s %10s %8s %8s\n", "n", "algorithm", "ms", "GB/s", "of copy", "checked");
    else if (!o->compact && r.lookback_tile != tile)
      printf("%12s  look-back tile %u from here\n", "", r.lookback_tile);
    tile = r.lookback_tile;
    const double bytes = 8.0 * (double)n;
    printf("%12llu  %-30s %10.3f %10.1f %7.1f%%\n", (unsigned long long)n, "copy (compute kernel)",
           r.copy_seconds * 1e3, bytes / r.copy_seconds * 1e-9, 100.0);
    for (unsigned a = 0; a < r.algorithms; a++)
      printf("%12llu  %-30s %10.3f %10.1f %7.1f%% %8s\n", (unsigned long long)n, r.algorithm[a].name,
             r.algorithm[a].seconds * 1e3, bytes / r.algorithm[a].seconds * 1e-9,
             100.0 * r.copy_seconds / r.algorithm[a].seconds, r.algorithm[a].checked ? "ok" : "FAILED");
    fflush(stdout);
    if (rc) return cli_library_error(rc);
  }
  return ran ? GPUSORT_OK : cli_fail(GPUSORT_ERROR_TOO_LARGE, "none of the sizes fits the device");
}

int cli_bench(int argc, char **argv) {
  bench_args o;
  bool done;
  int rc = parse_bench_args(argc, argv, &o, &done);
  if (rc || done) return rc;
  gpusort_context *ctx;
  gpusort_device_info info = GPUSORT_DEVICE_INFO_INIT;
  if ((rc = cli_open(&o.common, &ctx))) return rc;
  if ((rc = gpusort_context_device(ctx, &info))) {
    gpusort_close(ctx);
    return cli_library_error(rc);
  }
  char desc[1024];
  cli_describe_device(&info, desc, sizeof desc);
  snprintf(o.device_name, sizeof o.device_name, "%s", info.name);
  if (!o.common.json)
    printf("gpusort bench%s: device %u: %s\n", o.scans ? " --scan-algos" : o.compact ? " --compact" : "", info.index,
           desc);
  rc = o.scans || o.compact ? bench_named(&o, ctx) : bench_sorts(&o, ctx);
  gpusort_close(ctx);
  return rc;
}
