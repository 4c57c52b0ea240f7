/* gpusort bench: GPU time of the sort on device-resident data, beside a buffer-to-buffer
 * copy of the same bytes measured in the same run, so the figure is a ratio to the
 * device's own bandwidth rather than an absolute from another day. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "io/datagen.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "prim/radix_sort.h"
#include "prim/scan.h"
#include "prim/scan_reference.h"
#include "util/error.h"

enum { MAX_SIZES = 32, WARMUP_RUNS = 2 };

static int parse_sizes(const char *text, uint64_t *sizes, unsigned *count) {
  char *copy = strdup(text);
  if (!copy) return gs_fail(GS_ERR_RUNTIME, "out of host memory");
  *count = 0;
  int rc = GS_OK;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*count == MAX_SIZES || gs_parse_count(tok, &sizes[*count]) != 0 || sizes[*count] == 0) {
      rc = gs_fail(GS_ERR_USAGE, "--sizes takes up to %d positive counts (decimal or 2^K), not '%s'", MAX_SIZES, tok);
      break;
    }
    (*count)++;
  }
  free(copy);
  if (rc == GS_OK && *count == 0) rc = gs_fail(GS_ERR_USAGE, "--sizes is empty");
  return rc;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median GPU time of the commands `record` puts between two timestamps. */
typedef struct {
  gs_device *dev;
  gs_kernel *kernel; /* NULL: vkCmdCopyBuffer */
  VkDescriptorSet set;
  gs_buffer *from, *to;
  VkDeviceSize bytes;
} copy_job;

static int record_copy(const copy_job *job, VkCommandBuffer cb) {
  if (!job->kernel) {
    VkBufferCopy region = {.size = job->bytes};
    vkCmdCopyBuffer(cb, job->from->buffer, job->to->buffer, 1, &region);
    return GS_OK;
  }
  /* whole 16-byte vectors inside the buffers (a 4..12-byte tail is left out of the copy) */
  const uint32_t count = (uint32_t)(job->bytes / 16), per_group = job->kernel->workgroup_size * 4;
  const uint32_t push[2] = {count, (count + per_group - 1) / per_group};
  return gs_kernel_dispatch(job->dev, cb, job->kernel, job->set, push, push[1]);
}

/* Median GPU time of what `record` puts between two timestamps, after two warm-up runs. */
static int time_commands(gs_device *dev, gs_submission *sub, gs_timestamps *ts, unsigned reps,
                         int (*record)(const void *ctx, VkCommandBuffer cb), const void *ctx, double *seconds) {
  double t[256];
  for (unsigned r = 0; r < WARMUP_RUNS + reps; r++) {
    gs_timestamps_reset(dev, ts);
    int rc = gs_submission_begin(dev, sub);
    if (rc) return rc;
    gs_timestamps_write(sub->cb, ts, 0);
    if ((rc = record(ctx, sub->cb))) return rc;
    gs_timestamps_write(sub->cb, ts, 1);
    if ((rc = gs_submission_submit(dev, sub, "the benchmark")) || (rc = gs_submission_wait(dev, sub, "the benchmark")))
      return rc;
    uint64_t ticks[2];
    if ((rc = gs_timestamps_read(dev, ts, 0, 2, ticks))) return rc;
    if (r >= WARMUP_RUNS) t[r - WARMUP_RUNS] = gs_timestamps_seconds(dev, ticks[0], ticks[1]);
  }
  *seconds = median(t, reps);
  return GS_OK;
}

static int record_copy_job(const void *ctx, VkCommandBuffer cb) { return record_copy(ctx, cb); }

static int time_copy(gs_submission *sub, gs_timestamps *ts, const copy_job *job, unsigned reps, double *seconds) {
  return time_commands(job->dev, sub, ts, reps, record_copy_job, job, seconds);
}

/* Median GPU time of the sort of n keys (and values), each run starting from the same
 * pristine data. */
static int time_sort(gs_radix_sort *s, gs_buffer *pristine, gs_buffer *pristine_values, uint64_t n, unsigned reps,
                     double *seconds, double *pass_seconds, gs_radix_sort_result *result) {
  gs_device *dev = s->dev;
  double t[256], passes[GS_RADIX_MAX_PASSES][256];
  gs_radix_sort_run_options run = {.n = n};
  for (unsigned r = 0; r < WARMUP_RUNS + reps; r++) {
    gs_radix_sort_reset_times(s);
    int rc = gs_submission_begin(dev, &s->submission);
    if (rc) return rc;
    VkBufferCopy region = {.size = n * s->info->bytes};
    vkCmdCopyBuffer(s->submission.cb, pristine->buffer, gs_radix_sort_input(s)->buffer, 1, &region);
    if (s->config.value_bytes) {
      VkBufferCopy values = {.size = n * s->config.value_bytes};
      vkCmdCopyBuffer(s->submission.cb, pristine_values->buffer, gs_radix_sort_values_input(s)->buffer, 1, &values);
    }
    gs_cmd_barrier(s->submission.cb);
    if ((rc = gs_radix_sort_record(s, s->submission.cb, &run, result)) ||
        (rc = gs_submission_submit(dev, &s->submission, "the sort benchmark")) ||
        (rc = gs_submission_wait(dev, &s->submission, "the sort benchmark")) ||
        (rc = gs_radix_sort_collect_times(s)))
      return rc;
    if (r < WARMUP_RUNS) continue;
    t[r - WARMUP_RUNS] = s->times.total;
    for (unsigned p = 0; p < s->times.passes; p++) passes[p][r - WARMUP_RUNS] = s->times.pass[p];
  }
  *seconds = median(t, reps);
  for (unsigned p = 0; p < s->times.passes; p++) pass_seconds[p] = median(passes[p], reps);
  return GS_OK;
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
  return GS_OK;
}

/* --scan-algos: u32 exclusive sums by the look-back scan, reduce-then-scan and the four
 * textbook references, beside the compute-kernel copy of the same bytes. */
typedef struct {
  gs_scan *scan;
  gs_scan_reference *reference;
  gs_refscan_algo algo;
  uint64_t n;
} scan_job;

static int record_scan(const void *ctx, VkCommandBuffer cb) {
  const scan_job *j = ctx;
  if (j->scan) {
    gs_timestamps_reset(j->scan->dev, &j->scan->timestamps); /* its own, written inside */
    return gs_scan_record(j->scan, cb, j->n);
  }
  return gs_scan_reference_record(j->reference, cb, j->algo, j->n, false);
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
  return GS_OK;
}

static int bench_scans(gs_device *dev, uint64_t *sizes, unsigned nsizes, bool default_sizes, unsigned reps) {
  const gs_scan_config base = {.input = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM, .inclusive = false};
  uint64_t largest = 0;
  bool fits[MAX_SIZES];
  for (unsigned i = 0; i < nsizes; i++) {
    /* inputs and outputs of three scan objects and the references' power-of-two work area */
    fits[i] = sizes[i] <= gs_scan_max_elements(dev, &base) && 10 * sizes[i] * 4 <= dev->info.device_local_bytes / 4 * 3;
    if (fits[i] && sizes[i] > largest) largest = sizes[i];
  }
  if (largest == 0) return gs_fail(GS_ERR_RUNTIME, "none of the sizes fits %s", dev->info.name);
  gs_scan lookback = {0}, rts = {0};
  gs_scan_reference refs = {0};
  gs_stager up = {0}, down = {0};
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  gs_kernel copy_kernel = {0};
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet copy_set;
  uint32_t *host = malloc(largest * 4);
  gs_scan_config lc = base, rc_config = base;
  lc.algo = GS_SCAN_LOOKBACK, lc.capacity = largest;
  rc_config.algo = GS_SCAN_REDUCE_THEN_SCAN, rc_config.capacity = largest;
  const uint32_t copy_spec[] = {256, 0};
  int rc = host ? GS_OK : gs_fail(GS_ERR_RUNTIME, "out of host memory");
  if (!rc) rc = gs_scan_create(dev, &lookback, &lc);
  if (!rc) rc = gs_scan_create(dev, &rts, &rc_config);
  if (!rc) rc = gs_scan_reference_create(dev, &refs, largest);
  if (!rc) rc = gs_stager_create(dev, &up, GS_MEM_UPLOAD, largest * 4);
  if (!rc) rc = gs_stager_create(dev, &down, GS_MEM_READBACK, largest * 4);
  if (!rc) rc = gs_submission_init(dev, &sub);
  if (!rc) rc = gs_timestamps_create(dev, &ts, 2);
  if (!rc) rc = gs_kernel_create(dev, &copy_kernel, "copy_words", 2, 8, copy_spec, 2);
  if (!rc) rc = gs_descriptor_pool_create(dev, 1, &pool);
  const gs_buffer *copy_buffers[] = {&refs.input, &refs.output};
  if (!rc) rc = gs_kernel_bind(dev, &copy_kernel, pool, copy_buffers, &copy_set);
  if (!rc) {
    char desc[512];
    gs_device_describe(&dev->info, desc, sizeof desc);
    printf("gpusort bench --scan-algos: device %u: %s\n", dev->info.index, desc);
    printf("u32 exclusive sums of uniform random keys (seed 1); look-back tile %u; median of %u runs; GPU "
           "timestamps\nGB/s counts 4 bytes read and 4 written per element; copy = the same bytes copied by a "
           "compute kernel\n",
           lookback.tile, reps);
    printf("%12s  %-28s %10s %10s %8s %8s\n", "n", "algorithm", "ms", "GB/s", "of copy", "checked");
  }
  for (unsigned i = 0; i < nsizes && !rc; i++) {
    const uint64_t n = sizes[i];
    if (!fits[i]) {
      if (!default_sizes) printf("%12llu  skipped: does not fit the device\n", (unsigned long long)n);
      continue;
    }
    gs_generate(GS_KEY_U32, (gs_dist){GS_DIST_UNIFORM, 0}, 1, n, 0, n, host, 4);
    gs_transfer_stats stats = {0};
    if ((rc = gs_upload(&up, gs_scan_input(&lookback), host, n * 4, &stats)) ||
        (rc = gs_upload(&up, gs_scan_input(&rts), host, n * 4, &stats)) ||
        (rc = gs_upload(&up, &refs.input, host, n * 4, &stats)))
      break;
    double copy_s;
    copy_job copy = {dev, &copy_kernel, copy_set, &refs.input, &refs.output, n * 4};
    if ((rc = time_copy(&sub, &ts, &copy, reps, &copy_s))) break;
    const double bytes = 8.0 * (double)n;
    printf("%12llu  %-28s %10.3f %10.1f %7.1f%%\n", (unsigned long long)n, "copy (compute kernel)", copy_s * 1e3,
           bytes / copy_s * 1e-9, 100.0);
    for (int a = -2; a < GS_REFSCAN_COUNT && !rc; a++) {
      scan_job job = {a == -2 ? &lookback : a == -1 ? &rts : NULL, &refs, a < 0 ? GS_REFSCAN_HILLIS_STEELE : (gs_refscan_algo)a, n};
      const char *name = a == -2 ? "look-back (gpusort scan)" : a == -1 ? "reduce-then-scan" : gs_refscan_name((gs_refscan_algo)a);
      double t;
      if ((rc = time_commands(dev, &sub, &ts, reps, record_scan, &job, &t))) break;
      gs_buffer *out = a == -2 ? gs_scan_output(&lookback) : a == -1 ? gs_scan_output(&rts) : &refs.output;
      scan_check check = {host, 0, 0, true};
      gs_field f = {out, 0, 4};
      if ((rc = gs_download_fields(&down, &f, 1, n, check_scan_chunk, &check, &stats))) break;
      printf("%12llu  %-28s %10.3f %10.1f %7.1f%% %8s\n", (unsigned long long)n, name, t * 1e3, bytes / t * 1e-9,
             100.0 * copy_s / t, check.ok ? "ok" : "FAILED");
      fflush(stdout);
      if (!check.ok) rc = gs_fail(GS_ERR_VERIFY, "the benchmark's %s scan of %llu keys gave a wrong result", name,
                                  (unsigned long long)n);
    }
  }
  free(host);
  gs_kernel_destroy(dev, &copy_kernel);
  if (pool && !dev->wedged) vkDestroyDescriptorPool(dev->device, pool, NULL);
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_scan_reference_destroy(&refs);
  gs_scan_destroy(&lookback);
  gs_scan_destroy(&rts);
  return rc;
}

int gs_cmd_bench(int argc, char **argv) {
  static const struct option longopts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                           {"values", required_argument, NULL, OPT_VALUES},
                                           {"sizes", required_argument, NULL, OPT_SIZES},
                                           {"reps", required_argument, NULL, OPT_REPS},
                                           {"scan-algos", no_argument, NULL, OPT_SCAN_ALGOS},
                                           GS_COMMON_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  gs_common_options common;
  bool done, default_sizes = true, have_values = false, scans = false;
  gs_key_type key = GS_KEY_U32, value = GS_KEY_U32;
  uint64_t sizes[MAX_SIZES] = {1u << 16, 1u << 20, 1u << 24, 1u << 26, 1u << 28}, reps = 15;
  unsigned nsizes = 5;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case OPT_KEYS:
      if ((rc = gs_parse_type("--keys", optarg, &key))) return rc;
      break;
    case OPT_VALUES:
      if ((rc = gs_parse_type("--values", optarg, &value))) return rc;
      have_values = true;
      break;
    case OPT_SIZES:
      if ((rc = parse_sizes(optarg, sizes, &nsizes))) return rc;
      default_sizes = false;
      break;
    case OPT_SCAN_ALGOS: scans = true; break;
    case OPT_REPS:
      if (gs_parse_count(optarg, &reps) != 0 || reps == 0 || reps > 255)
        return gs_fail(GS_ERR_USAGE, "--reps takes a count from 1 to 255, not '%s'", optarg);
      break;
    default:
      if ((rc = gs_other_option(opt, argv, &done)) || done) return rc;
    }
  }
  if (optind != argc) return gs_fail(GS_ERR_USAGE, "bench takes no arguments (see 'gpusort --help')");
  const gs_key_info *info = gs_key_info_of(key);
  const unsigned kb = info->bytes, vb = have_values ? gs_key_info_of(value)->bytes : 0, R = kb + vb;

  gs_device dev;
  if ((rc = gs_device_open(&dev, common.device))) return rc;
  dev.timeout_ns = (uint64_t)(common.timeout_s * 1e9);
  if (scans) {
    if (have_values || key != GS_KEY_U32) {
      gs_device_close(&dev);
      return gs_fail(GS_ERR_USAGE, "--scan-algos times u32 sums: it takes no --keys or --values");
    }
    rc = bench_scans(&dev, sizes, nsizes, default_sizes, (unsigned)reps);
    gs_device_close(&dev);
    return rc;
  }
  /* A size fits if one buffer can hold it and three copies (pristine, keys, alternate)
   * leave a quarter of device memory free. */
  const uint64_t max_keys = gs_radix_sort_max_keys(&dev, key, vb);
  uint64_t largest = 0;
  bool fits[MAX_SIZES];
  for (unsigned i = 0; i < nsizes; i++) {
    fits[i] = sizes[i] <= max_keys && 3 * sizes[i] * R <= dev.info.device_local_bytes / 4 * 3;
    if (fits[i] && sizes[i] > largest) largest = sizes[i];
  }
  gs_radix_sort sorter = {0};
  gs_buffer pristine = {0}, pristine_values = {0};
  gs_stager up = {0}, down = {0};
  gs_submission copy_sub = {0};
  gs_timestamps copy_ts = {0};
  gs_kernel copy_kernel = {0};
  VkDescriptorPool copy_pool = VK_NULL_HANDLE;
  VkDescriptorSet copy_set = VK_NULL_HANDLE;
  unsigned char *host = NULL, *host_values = NULL, *records = NULL, *scratch = NULL;
  gs_radix_sort_config config = {.key = key, .value_bytes = vb, .capacity = largest};
  if (largest == 0) {
    rc = gs_fail(GS_ERR_RUNTIME, "none of the sizes fits %s", dev.info.name);
    goto cleanup;
  }
  if ((rc = gs_radix_sort_create(&dev, &sorter, &config)) ||
      (rc = gs_buffer_create(&dev, &pristine, largest * kb, GS_MEM_DEVICE, "the benchmark input")) ||
      (vb && (rc = gs_buffer_create(&dev, &pristine_values, largest * vb, GS_MEM_DEVICE, "the benchmark values"))) ||
      (rc = gs_stager_create(&dev, &up, GS_MEM_UPLOAD, largest * R)) ||
      (rc = gs_stager_create(&dev, &down, GS_MEM_READBACK, largest * R)) ||
      (rc = gs_submission_init(&dev, &copy_sub)) || (rc = gs_timestamps_create(&dev, &copy_ts, 2)))
    goto cleanup;
  const uint32_t copy_spec[] = {256, 0};
  const gs_buffer *copy_buffers[] = {&pristine, &sorter.alt};
  if ((rc = gs_kernel_create(&dev, &copy_kernel, "copy_words", 2, 8, copy_spec, 2)) ||
      (rc = gs_descriptor_pool_create(&dev, 1, &copy_pool)) ||
      (rc = gs_kernel_bind(&dev, &copy_kernel, copy_pool, copy_buffers, &copy_set)))
    goto cleanup;
  host = malloc(largest * kb);
  host_values = malloc(largest * (vb ? vb : 1));
  records = malloc(largest * R);
  scratch = malloc(down.chunk / R * R + R);
  if (!host || !host_values || !records || !scratch) {
    rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
    goto cleanup;
  }

  char desc[512];
  gs_device_describe(&dev.info, desc, sizeof desc);
  printf("gpusort bench: device %u: %s\n", dev.info.index, desc);
  if (vb)
    printf("%s keys with %s values (each its index), ", info->name, gs_key_info_of(value)->name);
  else
    printf("%s keys, ", info->name);
  printf("uniform random (seed 1); tile %u x %u; median of %llu runs; GPU timestamps\n", sorter.workgroup_size,
         sorter.keys_per_thread, (unsigned long long)reps);
  printf("copy = the keys' bytes copied buffer to buffer by a compute kernel; GB/s counts bytes read + written\n");
  printf("%12s %10s %10s %10s %11s %10s %8s\n", "n", "sort ms", "Gkeys/s", "copy ms", "copy GB/s", "sort/copy",
         "checked");
  for (unsigned i = 0; i < nsizes; i++) {
    const uint64_t n = sizes[i];
    if (!fits[i]) {
      if (!default_sizes) printf("%12llu  skipped: does not fit the device\n", (unsigned long long)n);
      continue;
    }
    const size_t bytes = n * R; /* what one pass reads and writes */
    gs_generate(key, (gs_dist){GS_DIST_UNIFORM, 0}, 1, n, 0, n, host, kb);
    if (vb) gs_generate_index_values(value, 0, n, host_values, vb);
    gs_transfer_stats stats = {0};
    if ((rc = gs_upload(&up, &pristine, host, n * kb, &stats)) ||
        (vb && (rc = gs_upload(&up, &pristine_values, host_values, n * vb, &stats))))
      goto cleanup;
    double sort_s, copy_s, dma_s, pass_s[GS_RADIX_MAX_PASSES];
    gs_radix_sort_result result;
    if ((rc = time_sort(&sorter, &pristine, &pristine_values, n, (unsigned)reps, &sort_s, pass_s, &result)))
      goto cleanup;
    /* The copies overwrite `alt`; a result there is recomputed below before it is checked. */
    /* the copy moves as many bytes as one sort pass: keys and values (alt holds n * max(kb, vb)) */
    copy_job kernel_copy = {&dev, &copy_kernel, copy_set, &pristine, &sorter.alt, n * kb};
    copy_job command_copy = {&dev, NULL, VK_NULL_HANDLE, &pristine, &sorter.alt, n * kb};
    if ((rc = time_copy(&copy_sub, &copy_ts, &kernel_copy, (unsigned)reps, &copy_s)) ||
        (rc = time_copy(&copy_sub, &copy_ts, &command_copy, (unsigned)reps, &dma_s)))
      goto cleanup;
    /* The timed sort must also be right: check the last run's output on the host. */
    gs_multiset_hash in_hash = {0}, out_hash = {0};
    for (uint64_t r = 0; r < n; r++) {
      memcpy(records + r * R, host + r * kb, kb);
      if (vb) memcpy(records + r * R + kb, host_values + r * vb, vb);
    }
    gs_multiset_hash_add(&in_hash, records, bytes, R);
    gs_order_check order;
    gs_order_check_init(&order, key, false, R, 0, 0, 0);
    check_sink sink = {&order, &out_hash, kb, vb, scratch};
    if (result.keys == &sorter.alt) {
      gs_radix_sort_run_options run = {.n = n};
      VkBufferCopy region = {.size = n * kb}, values = {.size = n * vb};
      if ((rc = gs_submission_begin(&dev, &copy_sub))) goto cleanup;
      vkCmdCopyBuffer(copy_sub.cb, pristine.buffer, gs_radix_sort_input(&sorter)->buffer, 1, &region);
      if (vb) vkCmdCopyBuffer(copy_sub.cb, pristine_values.buffer, gs_radix_sort_values_input(&sorter)->buffer, 1, &values);
      if ((rc = gs_submission_submit(&dev, &copy_sub, "the benchmark")) ||
          (rc = gs_submission_wait(&dev, &copy_sub, "the benchmark")) ||
          (rc = gs_radix_sort_run(&sorter, &run, &result)))
        goto cleanup;
    }
    gs_transfer_stats dstats = {0};
    gs_field fields[2] = {{result.keys, 0, kb}, {result.values, 0, vb}};
    if ((rc = gs_download_fields(&down, fields, vb ? 2 : 1, n, check_chunk, &sink, &dstats))) goto cleanup;
    const bool ok = order.sorted && gs_multiset_hash_equal(&in_hash, &out_hash);
    printf("%12llu %10.3f %10.3f %10.3f %11.1f %10.2f %8s\n", (unsigned long long)n, sort_s * 1e3,
           (double)n / sort_s * 1e-9, copy_s * 1e3, 2.0 * (double)(n * kb) / copy_s * 1e-9, sort_s / copy_s,
           ok ? "ok" : "FAILED");
    if (common.verbosity >= 2) {
      printf("%12s vkCmdCopyBuffer %.3f ms, %.1f GB/s\n", "", dma_s * 1e3, 2.0 * (double)(n * kb) / dma_s * 1e-9);
      printf("%12s", "passes ms:");
      for (unsigned p = 0; p < sorter.times.passes; p++) printf(" %.3f", pass_s[p] * 1e3);
      printf("\n");
    }
    fflush(stdout);
    if (!ok) {
      rc = gs_fail(GS_ERR_VERIFY, "the benchmark's sort of %llu keys gave a wrong result", (unsigned long long)n);
      goto cleanup;
    }
  }

cleanup:
  free(host);
  free(host_values);
  free(records);
  free(scratch);
  gs_timestamps_destroy(&dev, &copy_ts);
  gs_kernel_destroy(&dev, &copy_kernel);
  if (copy_pool && !dev.wedged) vkDestroyDescriptorPool(dev.device, copy_pool, NULL);
  gs_submission_destroy(&dev, &copy_sub);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_buffer_destroy(&dev, &pristine);
  gs_buffer_destroy(&dev, &pristine_values);
  gs_radix_sort_destroy(&sorter);
  gs_device_close(&dev);
  return rc;
}
