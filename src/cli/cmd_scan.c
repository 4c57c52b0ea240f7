/* gpusort scan: running sums, minima or maxima of a file of numbers, on the GPU.
 * gpusort reduce: the sum, minimum or maximum of all of them, printed on stdout. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/report.h"
#include "io/input.h"
#include "io/output.h"
#include "io/transfer.h"
#include "prim/scan.h"
#include "util/clock.h"
#include "util/error.h"

typedef struct {
  gs_common_options common;
  gs_scan_config config;
  bool have_keys, have_acc, have_algo, deterministic, force, sync;
  const char *input, *output;
} scan_options;

/* Options of scan (and, without --inclusive/--exclusive/--algo/-o/-f, of reduce). */
static int parse_scan_options(int argc, char **argv, scan_options *o, bool reduce, bool *done) {
  enum { OPT_OP = 2000, OPT_INCLUSIVE, OPT_EXCLUSIVE, OPT_ACC, OPT_ALGO, OPT_DETERMINISTIC };
  static const struct option scan_longopts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                                {"op", required_argument, NULL, OPT_OP},
                                                {"inclusive", no_argument, NULL, OPT_INCLUSIVE},
                                                {"exclusive", no_argument, NULL, OPT_EXCLUSIVE},
                                                {"acc", required_argument, NULL, OPT_ACC},
                                                {"algo", required_argument, NULL, OPT_ALGO},
                                                {"deterministic", no_argument, NULL, OPT_DETERMINISTIC},
                                                {"output", required_argument, NULL, 'o'},
                                                {"force", no_argument, NULL, 'f'},
                                                {"sync", no_argument, NULL, OPT_SYNC},
                                                GS_COMMON_LONG_OPTIONS,
                                                {NULL, 0, NULL, 0}};
  static const struct option reduce_longopts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                                  {"op", required_argument, NULL, OPT_OP},
                                                  {"acc", required_argument, NULL, OPT_ACC},
                                                  {"deterministic", no_argument, NULL, OPT_DETERMINISTIC},
                                                  GS_COMMON_LONG_OPTIONS,
                                                  {NULL, 0, NULL, 0}};
  const char *command = reduce ? "reduce" : "scan";
  memset(o, 0, sizeof *o);
  o->config.inclusive = true;
  gs_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, reduce ? ":qvhV" : ":o:fqvhV", reduce ? reduce_longopts : scan_longopts,
                            NULL)) != -1) {
    if ((rc = gs_common_option(&o->common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case OPT_KEYS:
      if ((rc = gs_parse_type("--keys", optarg, &o->config.input))) return rc;
      o->have_keys = true;
      break;
    case OPT_ACC:
      if ((rc = gs_parse_type("--acc", optarg, &o->config.acc))) return rc;
      o->have_acc = true;
      break;
    case OPT_OP:
      if (gs_scan_op_from_name(optarg, &o->config.op) != 0)
        return gs_fail(GS_ERR_USAGE, "--op takes sum, min or max, not '%s'", optarg);
      break;
    case OPT_INCLUSIVE: o->config.inclusive = true; break;
    case OPT_EXCLUSIVE: o->config.inclusive = false; break;
    case OPT_ALGO:
      if (strcmp(optarg, "lookback") == 0)
        o->config.algo = GS_SCAN_LOOKBACK;
      else if (strcmp(optarg, "reduce-then-scan") == 0)
        o->config.algo = GS_SCAN_REDUCE_THEN_SCAN;
      else
        return gs_fail(GS_ERR_USAGE, "--algo takes lookback or reduce-then-scan, not '%s'", optarg);
      o->have_algo = true;
      break;
    case OPT_DETERMINISTIC: o->deterministic = true; break;
    case 'o': o->output = optarg; break;
    case 'f': o->force = true; break;
    case OPT_SYNC: o->sync = true; break;
    default:
      if ((rc = gs_other_option(opt, argv, done)) || *done) return rc;
    }
  }
  const int positional = argc - optind, wanted = reduce ? 1 : 2;
  if (positional < 1) return gs_fail(GS_ERR_USAGE, "%s: missing INPUT (see 'gpusort --help')", command);
  if (positional > wanted) return gs_fail(GS_ERR_USAGE, "%s: too many arguments: '%s'", command, argv[optind + wanted]);
  o->input = argv[optind];
  if (positional == 2) {
    if (o->output) return gs_fail(GS_ERR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], o->output);
    o->output = argv[optind + 1];
  }
  if (!reduce && !o->output) return gs_fail(GS_ERR_USAGE, "scan: missing OUTPUT: name a file, or - for stdout");
  if (!o->have_keys) return gs_fail(GS_ERR_USAGE, "%s: missing --keys TYPE: say what INPUT holds", command);
  if (!o->have_acc) o->config.acc = o->config.input;
  if ((rc = gs_scan_check_config(NULL, &o->config))) return rc;
  /* Float sums depend on the association order: reduce-then-scan fixes it (the default);
   * the look-back scan is faster and may differ in the last bits from run to run. */
  const bool float_sum = o->config.op == GS_SCAN_SUM && gs_key_info_of(o->config.acc)->kind == GS_KEY_KIND_FLOAT;
  if (!o->have_algo) o->config.algo = float_sum ? GS_SCAN_REDUCE_THEN_SCAN : GS_SCAN_LOOKBACK;
  if (o->deterministic && float_sum && o->config.algo == GS_SCAN_LOOKBACK)
    return gs_fail(GS_ERR_USAGE, "--deterministic float sums need --algo reduce-then-scan (the look-back scan's "
                                 "association order varies between runs)");
  o->config.reduce_only = reduce;
  return GS_OK;
}

/* Opens the input and the device, uploads the input into a new scan object. */
typedef struct {
  gs_input in;
  gs_device dev;
  gs_scan scan;
  uint64_t n;
  double start, device, setup, read, upload, gpu;
} scan_job;

static int prepare(scan_options *o, scan_job *j, const char *output) {
  const gs_key_info *info = gs_key_info_of(o->config.input);
  char what[32];
  snprintf(what, sizeof what, "%s %s element", info->name[0] == 'i' ? "an" : "a", info->name);
  int rc;
  j->start = gs_now();
  if ((rc = gs_input_open(&j->in, o->input))) return rc;
  if (!j->in.is_stream && (rc = gs_input_check_width(&j->in, info->bytes, what))) return rc;
  if (output && (rc = gs_output_preflight(output, o->force, &j->in))) return rc;
  if ((rc = gs_open_device_for(&j->dev, o->common.device, o->common.timeout_s, &j->in))) return rc;
  j->device = gs_now() - j->start;
  const uint64_t max = gs_scan_max_elements(&j->dev, &o->config);
  if (j->in.is_stream) {
    const double t0 = gs_now();
    if ((rc = gs_input_read_stream(&j->in, max * info->bytes, "what the device can scan in one buffer"))) return rc;
    if ((rc = gs_input_check_width(&j->in, info->bytes, what))) return rc;
    j->read += gs_now() - t0;
  }
  j->n = j->in.bytes / info->bytes;
  if (j->n > max)
    return gs_fail(GS_ERR_RUNTIME, "%s holds %llu elements; %s can scan at most %llu in one buffer", j->in.name,
                   (unsigned long long)j->n, j->dev.info.name, (unsigned long long)max);
  o->config.capacity = j->n;
  if ((rc = gs_scan_create(&j->dev, &j->scan, &o->config))) return rc;
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  if (!(rc = gs_stager_create(&j->dev, &up, GS_MEM_UPLOAD, j->in.bytes)))
    rc = gs_upload(&up, gs_scan_input(&j->scan), j->in.data, j->in.bytes, &stats);
  gs_stager_destroy(&up);
  j->setup = gs_now() - j->start - j->read - stats.wall_seconds;
  j->read += stats.host_seconds;
  j->upload = stats.gpu_seconds;
  if (rc) return rc;
  if ((rc = gs_scan_run(&j->scan, j->n))) return rc;
  j->gpu = j->scan.seconds;
  return GS_OK;
}

static void finish(scan_job *j) {
  gs_scan_destroy(&j->scan);
  gs_device_close(&j->dev);
  gs_input_close(&j->in);
}

static void report(const scan_options *o, const scan_job *j, const char *verb, double download, double write,
                   double total) {
  const gs_key_info *in = gs_key_info_of(o->config.input), *acc = gs_key_info_of(o->config.acc);
  char desc[512], size[32], a[32], b[32], line[200];
  gs_device_describe(&j->dev.info, desc, sizeof desc);
  gs_note("device %u: %s", j->dev.info.index, desc);
  gs_format_bytes(size, sizeof size, (double)j->in.bytes);
  char acc_note[32] = "";
  if (o->config.acc != o->config.input) snprintf(acc_note, sizeof acc_note, ", %s accumulator", acc->name);
  gs_note("%llu %s elements, %s: %s %s%s%s, %s", (unsigned long long)j->n, in->name, size, verb,
          gs_scan_op_name(o->config.op), o->config.reduce_only ? "" : (o->config.inclusive ? ", inclusive" : ", exclusive"),
          acc_note,
          o->config.reduce_only ? "fixed order" : o->config.algo == GS_SCAN_LOOKBACK ? "look-back" : "reduce-then-scan");
  snprintf(line, sizeof line, "opening the device %.0f ms, pipelines and buffers %.0f ms", j->device * 1e3,
           (j->setup - j->device) * 1e3);
  gs_report_row("setup", j->setup, line);
  gs_report_row("read", j->read, "host: input into staging memory");
  gs_report_row("upload", j->upload, "GPU copy");
  gs_format_rate(a, sizeof a, j->gpu > 0 ? (double)j->n / j->gpu : 0, "elements");
  gs_format_rate(b, sizeof b, j->gpu > 0 ? (double)j->in.bytes / j->gpu : 0, "B");
  snprintf(line, sizeof line, "GPU, %s, %s", a, b);
  gs_report_row(verb, j->gpu, line);
  gs_report_row("download", download, "GPU copy");
  if (write >= 0) gs_report_row("write", write, "host: output and checksum");
  gs_format_rate(a, sizeof a, total > 0 ? (double)j->n / total : 0, "elements");
  gs_format_rate(b, sizeof b, total > 0 ? (double)j->in.bytes / total : 0, "B");
  snprintf(line, sizeof line, "end to end, %s, %s", a, b);
  gs_report_row("total", total, line);
}

/* Downloaded results go straight to the output (and its checksum). */
static int emit_chunk(void *emitter, const void *data, size_t bytes) { return gs_emit(emitter, data, bytes); }

int gs_cmd_scan(int argc, char **argv) {
  scan_options o;
  bool done;
  int rc = parse_scan_options(argc, argv, &o, false, &done);
  if (rc || done) return rc;
  scan_job j = {0};
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_stager down = {0};
  const unsigned acc_bytes = gs_key_info_of(o.config.acc)->bytes;
  if ((rc = prepare(&o, &j, o.output))) goto cleanup;
  if ((rc = gs_output_open(&out, o.output)) || (rc = gs_emitter_init(&emitter, &out))) goto cleanup;
  out.sync = o.sync;
  gs_transfer_stats stats = {0};
  if ((rc = gs_stager_create(&j.dev, &down, GS_MEM_READBACK, j.n * acc_bytes))) goto cleanup;
  if ((rc = gs_download(&down, gs_scan_output(&j.scan), j.n * acc_bytes, emit_chunk, &emitter, &stats)))
    goto cleanup;
  if ((rc = gs_output_commit(&out))) goto cleanup;
  if (o.common.verbosity >= 1) {
    report(&o, &j, "scan", stats.gpu_seconds, stats.host_seconds, gs_now() - j.start);
    gs_print_checksum(strcmp(o.output, "-") == 0 ? "-" : o.output, gs_emitter_digest(&emitter));
  }
cleanup:
  if (rc) gs_output_abort(&out);
  gs_emitter_free(&emitter);
  gs_stager_destroy(&down);
  finish(&j);
  return rc;
}

/* The value as text: integers in decimal, floats with enough digits to read back exactly. */
static void format_value(const gs_key_info *info, uint64_t bits, char *buf, size_t size) {
  if (info->kind == GS_KEY_KIND_FLOAT) {
    if (info->bytes == 8) {
      double d;
      memcpy(&d, &bits, 8);
      snprintf(buf, size, "%.17g", d);
    } else {
      float f;
      uint32_t b = (uint32_t)bits;
      memcpy(&f, &b, 4);
      snprintf(buf, size, "%.9g", (double)f);
    }
  } else if (info->kind == GS_KEY_KIND_SIGNED) {
    snprintf(buf, size, "%" PRId64, info->bytes == 8 ? (int64_t)bits : (int64_t)(int32_t)bits);
  } else {
    snprintf(buf, size, "%" PRIu64, bits);
  }
}

typedef struct {
  uint64_t bits;
  unsigned bytes;
} value_sink;

static int take_value(void *ctx, const void *data, size_t bytes) {
  value_sink *v = ctx;
  if (bytes >= v->bytes) v->bits = gs_key_load_bits(v->bytes, data);
  return GS_OK;
}

int gs_cmd_reduce(int argc, char **argv) {
  scan_options o;
  bool done;
  int rc = parse_scan_options(argc, argv, &o, true, &done);
  if (rc || done) return rc;
  scan_job j = {0};
  gs_stager down = {0};
  const gs_key_info *acc = gs_key_info_of(o.config.acc);
  value_sink value = {0, acc->bytes};
  gs_transfer_stats stats = {0};
  if ((rc = prepare(&o, &j, NULL))) goto cleanup;
  if (j.n == 0 && o.config.op != GS_SCAN_SUM) {
    rc = gs_fail(GS_ERR_USAGE, "%s: the %s of no elements is undefined", j.in.name, gs_scan_op_name(o.config.op));
    goto cleanup;
  }
  if (j.n > 0) {
    if ((rc = gs_stager_create(&j.dev, &down, GS_MEM_READBACK, 16))) goto cleanup;
    if ((rc = gs_download(&down, gs_scan_reduce_result(&j.scan, j.n), 8, take_value, &value, &stats))) goto cleanup;
  }
  char text[64];
  format_value(acc, value.bits, text, sizeof text);
  printf("%s\n", text);
  if (o.common.verbosity >= 2) report(&o, &j, "reduce", stats.gpu_seconds, -1, gs_now() - j.start);
cleanup:
  gs_stager_destroy(&down);
  finish(&j);
  return rc;
}
