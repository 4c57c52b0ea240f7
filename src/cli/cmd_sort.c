/* gpusort sort: file -> GPU Onesweep sort -> file, with per-stage report and checksum. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "io/input.h"
#include "io/output.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "prim/radix_sort.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

typedef struct {
  gs_common_options common;
  gs_key_type key;
  bool have_key;
  const char *input, *output;
  bool force, verify;
  uint32_t test_flags; /* GPUSORT_TEST_CORRUPT, for the test suite */
} sort_options;

static bool env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* Returns GS_OK with *done set when --help/--version was handled. */
static int parse_sort_options(int argc, char **argv, sort_options *o, bool *done) {
  static const struct option longopts[] = {
      {"keys", required_argument, NULL, OPT_KEYS},     {"output", required_argument, NULL, 'o'},
      {"force", no_argument, NULL, 'f'},               {"verify", no_argument, NULL, OPT_VERIFY},
      {"device", required_argument, NULL, OPT_DEVICE}, {"timeout", required_argument, NULL, OPT_TIMEOUT},
      {"quiet", no_argument, NULL, 'q'},               {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  gs_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":o:fqvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&o->common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case OPT_KEYS:
      if ((rc = gs_parse_key_type(optarg, &o->key))) return rc;
      o->have_key = true;
      break;
    case 'o': o->output = optarg; break;
    case 'f': o->force = true; break;
    case OPT_VERIFY: o->verify = true; break;
    default: return gs_other_option(opt, argv, done);
    }
  }
  int positional = argc - optind;
  if (positional < 1) return gs_fail(GS_ERR_USAGE, "missing INPUT (see 'gpusort --help')");
  if (positional > 2) return gs_fail(GS_ERR_USAGE, "too many arguments: '%s' (see 'gpusort --help')", argv[optind + 2]);
  o->input = argv[optind];
  if (positional == 2) {
    if (o->output) return gs_fail(GS_ERR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], o->output);
    o->output = argv[optind + 1];
  }
  if (!o->output) return gs_fail(GS_ERR_USAGE, "missing OUTPUT: name a file, or - for stdout");
  if (!o->have_key) return gs_fail(GS_ERR_USAGE, "missing --keys TYPE: say what INPUT holds (u32)");
  if (env_flag("GPUSORT_TEST_CORRUPT")) o->test_flags |= GS_SORT_TEST_CORRUPT;
  return GS_OK;
}

/* Where downloaded chunks go: the output file, the checksum, and the verification. */
typedef struct {
  gs_output *out; /* NULL on a verification-only pass */
  XXH3_state_t *checksum;
  gs_order_check *order;
  gs_multiset_hash *hash;
  unsigned key_bytes;
  double verify_seconds;
} sort_sink;

typedef struct {
  sort_sink *sink;
  const void *data;
  size_t bytes;
  int status;
} sink_task;

static void checksum_chunk(void *arg) {
  sink_task *t = arg;
  XXH3_64bits_update(t->sink->checksum, t->data, t->bytes);
}

static void write_chunk(void *arg) {
  sink_task *t = arg;
  t->status = t->sink->out ? gs_output_write(t->sink->out, t->data, t->bytes) : GS_OK;
}

static int sink_chunk(void *ctx, const void *data, size_t bytes) {
  sort_sink *s = ctx;
  if (s->order) {
    const double t = gs_now();
    gs_order_check_feed(s->order, data, bytes);
    gs_multiset_hash_add(s->hash, data, bytes, s->key_bytes);
    s->verify_seconds += gs_now() - t;
  }
  /* The checksum runs beside the (parallel) write of the same chunk. */
  sink_task task = {s, data, bytes, GS_OK};
  gs_run_both(checksum_chunk, &task, write_chunk, &task);
  return task.status;
}

/* Opening the device (hundreds of milliseconds with some drivers) overlaps with bringing
 * the mapped input into memory. */
typedef struct {
  gs_device *dev;
  int index;
  int status;
  char error[1024];
} open_task;

static void open_device(void *arg) {
  open_task *t = arg;
  t->status = gs_device_open(t->dev, t->index);
  if (t->status) snprintf(t->error, sizeof t->error, "%s", gs_last_error()); /* errors are per thread */
}

static void prefault_input(void *arg) { gs_input_prefault(arg); }

typedef struct {
  double device, setup, read, upload, sort, download, write, verify, total;
} sort_times;

static void print_report(const sort_options *o, const gs_device *dev, const gs_radix_sort *sorter, uint64_t n,
                         const sort_times *t) {
  const gs_key_info *info = gs_key_info_of(o->key);
  const double bytes = (double)n * info->bytes;
  char desc[512], size[32], a[32], b[32], line[160];
  gs_device_describe(&dev->info, desc, sizeof desc);
  gs_note("device %u: %s", dev->info.index, desc);
  gs_format_bytes(size, sizeof size, bytes);
  gs_note("%llu %s keys, %s", (unsigned long long)n, info->name, size);
  if (o->common.verbosity >= 2) {
    gs_note("tile: %u invocations x %u keys = %u keys, %u bytes of shared memory; %u passes", sorter->workgroup_size,
            sorter->keys_per_thread, sorter->tile_keys, sorter->shared_bytes, sorter->times.passes);
  }
  snprintf(line, sizeof line, "opening the device %.0f ms, pipelines and buffers %.0f ms", t->device * 1e3,
           (t->setup - t->device) * 1e3);
  gs_report_row("setup", t->setup, line);
  gs_report_row("read", t->read, "host: input into staging memory");
  gs_report_row("upload", t->upload, "GPU copy");
  gs_format_rate(a, sizeof a, t->sort > 0 ? (double)n / t->sort : 0, "keys");
  gs_format_rate(b, sizeof b, t->sort > 0 ? bytes / t->sort : 0, "B");
  snprintf(line, sizeof line, "GPU, %s, %s", a, b);
  gs_report_row("sort", t->sort, line);
  if (o->common.verbosity >= 2) {
    char label[16];
    gs_report_row(" histogram", sorter->times.histogram, "GPU");
    for (unsigned p = 0; p < sorter->times.passes; p++) {
      snprintf(label, sizeof label, " pass %u", p);
      gs_report_row(label, sorter->times.pass[p], "GPU");
    }
  }
  gs_report_row("download", t->download, "GPU copy");
  gs_report_row("write", t->write, "host: output and checksum");
  if (o->verify) gs_report_row("verify", t->verify, "host: order and permutation");
  gs_format_rate(a, sizeof a, t->total > 0 ? (double)n / t->total : 0, "keys");
  gs_format_rate(b, sizeof b, t->total > 0 ? bytes / t->total : 0, "B");
  snprintf(line, sizeof line, "end to end, %s, %s", a, b);
  gs_report_row("total", t->total, line);
}

int gs_cmd_sort(int argc, char **argv) {
  sort_options o;
  bool done;
  int rc = parse_sort_options(argc, argv, &o, &done);
  if (rc || done) return rc;
  const double start = gs_now();
  const gs_key_info *info = gs_key_info_of(o.key);
  char what[32];
  snprintf(what, sizeof what, "a %s key", info->name);

  gs_input in;
  gs_output out = {.fd = -1};
  gs_device dev = {0};
  gs_radix_sort sorter = {0};
  gs_stager up = {0}, down = {0};
  XXH3_state_t *checksum = NULL;
  sort_times t = {0};
  uint64_t n = 0;

  if ((rc = gs_input_open(&in, o.input))) goto cleanup;
  if (!in.is_stream && (rc = gs_input_check_width(&in, info->bytes, what))) goto cleanup;
  if ((rc = gs_output_preflight(o.output, o.force, &in))) goto cleanup;

  open_task opening = {&dev, o.common.device, GS_OK, ""};
  gs_run_both(open_device, &opening, prefault_input, &in);
  if ((rc = opening.status)) {
    gs_fail(rc, "%s", opening.error);
    goto cleanup;
  }
  t.device = gs_now() - start;
  dev.timeout_ns = (uint64_t)(o.common.timeout_s * 1e9);
  const uint64_t max_keys = gs_radix_sort_max_keys(&dev, o.key);
  if (in.is_stream) {
    const double t0 = gs_now();
    char limit[384];
    snprintf(limit, sizeof limit, "the %llu %s keys %s can sort in one buffer", (unsigned long long)max_keys,
             info->name, dev.info.name);
    if ((rc = gs_input_read_stream(&in, max_keys * info->bytes, limit))) goto cleanup;
    if ((rc = gs_input_check_width(&in, info->bytes, what))) goto cleanup;
    t.read += gs_now() - t0;
  }
  n = in.bytes / info->bytes;
  if (n > max_keys) {
    rc = gs_fail(GS_ERR_RUNTIME,
                 "%s holds %llu %s keys; %s can sort at most %llu in one buffer (larger inputs are not supported yet)",
                 in.name, (unsigned long long)n, info->name, dev.info.name, (unsigned long long)max_keys);
    goto cleanup;
  }

  gs_radix_sort_config config = {.key = o.key, .capacity = n};
  if ((rc = gs_radix_sort_create(&dev, &sorter, &config))) goto cleanup;
  if ((rc = gs_stager_create(&dev, &up, GS_MEM_UPLOAD, in.bytes))) goto cleanup;
  if ((rc = gs_stager_create(&dev, &down, GS_MEM_READBACK, in.bytes))) goto cleanup;
  t.setup = gs_now() - start - t.read;

  gs_transfer_stats up_stats = {0}, down_stats = {0};
  if ((rc = gs_upload(&up, gs_radix_sort_input(&sorter), 0, in.data, in.bytes, &up_stats))) goto cleanup;
  t.read += up_stats.host_seconds;
  t.upload = up_stats.gpu_seconds;
  gs_stager_destroy(&up); /* release the staging memory before the sort needs the GPU */

  gs_multiset_hash input_hash = {0}, output_hash = {0};
  gs_order_check order;
  if (o.verify) {
    const double t0 = gs_now();
    gs_multiset_hash_add(&input_hash, in.data, in.bytes, info->bytes);
    gs_order_check_init(&order, o.key, false, info->bytes, 0);
    t.verify += gs_now() - t0;
  }

  gs_radix_sort_run_options run = {.n = n, .test_flags = o.test_flags};
  gs_buffer *sorted;
  if ((rc = gs_radix_sort_run(&sorter, &run, &sorted))) goto cleanup;
  t.sort = sorter.times.total;

  checksum = XXH3_createState();
  if (!checksum || XXH3_64bits_reset(checksum) != XXH_OK) {
    rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
    goto cleanup;
  }
  sort_sink sink = {.checksum = checksum, .key_bytes = info->bytes};
  if (o.verify) sink.order = &order, sink.hash = &output_hash;
  if ((rc = gs_output_open(&out, o.output))) goto cleanup;
  if (o.verify && out.direct) {
    /* Data written to a stream cannot be taken back: verify everything before writing. */
    if ((rc = gs_download(&down, sorted, 0, in.bytes, sink_chunk, &sink, &down_stats))) goto cleanup;
    if (!order.sorted || !gs_multiset_hash_equal(&input_hash, &output_hash)) goto verified;
    XXH3_64bits_reset(checksum);
    sink.order = NULL, sink.hash = NULL;
    t.verify += sink.verify_seconds;
    sink.verify_seconds = 0;
    down_stats.host_seconds = 0;
  }
  sink.out = &out;
  if ((rc = gs_download(&down, sorted, 0, in.bytes, sink_chunk, &sink, &down_stats))) goto cleanup;
verified:
  t.download = down_stats.gpu_seconds;
  t.verify += sink.verify_seconds;
  t.write = down_stats.host_seconds - sink.verify_seconds;
  if (o.verify) {
    if (!order.sorted) {
      rc = gs_fail(GS_ERR_VERIFY, "verification failed: the output is not sorted at key %llu (%s); no output written",
                   (unsigned long long)order.first_bad, order.detail);
      goto cleanup;
    }
    if (!gs_multiset_hash_equal(&input_hash, &output_hash)) {
      rc = gs_fail(GS_ERR_VERIFY,
                   "verification failed: the output is not a permutation of the input (checksums differ); "
                   "no output written");
      goto cleanup;
    }
  }
  if ((rc = gs_output_commit(&out))) goto cleanup;
  t.total = gs_now() - start;
  if (o.common.verbosity >= 1) {
    print_report(&o, &dev, &sorter, n, &t);
    if (o.verify) gs_note("verified: output sorted and a permutation of the input");
    gs_print_checksum(strcmp(o.output, "-") == 0 ? "-" : o.output, XXH3_64bits_digest(checksum));
  }

cleanup:
  if (rc) gs_output_abort(&out);
  XXH3_freeState(checksum);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_radix_sort_destroy(&sorter);
  gs_device_close(&dev);
  gs_input_close(&in);
  return rc;
}
