/* gpusort scan: running sums, minima or maxima of a file of numbers, on the GPU.
 * gpusort reduce: the sum, minimum or maximum of all of them, printed on stdout. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

typedef struct {
  cli_common common;
  gpusort_scan_options scan;
  const char *input, *output;
} scan_args;

static bool is_float(gpusort_type t) {
  return t == GPUSORT_F32 || t == GPUSORT_F64 || t == GPUSORT_F16 || t == GPUSORT_BF16 || t == GPUSORT_F32BE ||
         t == GPUSORT_F64BE;
}

static bool float_sum(const gpusort_scan_options *s) {
  return s->op == GPUSORT_SUM && is_float(s->acc ? s->acc : s->type);
}

/* The algorithm gpusort_scan_options.algo = GPUSORT_SCAN_AUTO stands for. */
static gpusort_scan_algo chosen_algo(const gpusort_scan_options *s) {
  if (s->algo != GPUSORT_SCAN_AUTO) return s->algo;
  return float_sum(s) ? GPUSORT_SCAN_REDUCE_THEN_SCAN : GPUSORT_SCAN_LOOKBACK;
}

static int scan_option(scan_args *o, int opt, const char *arg) {
  if (cli_output_option(opt, arg, &o->output, &o->scan.flags)) return GPUSORT_OK;
  switch (opt) {
  case OPT_KEYS: return cli_parse_field_type("--keys", arg, &o->scan.type, NULL);
  case OPT_ACC: return cli_parse_type("--acc", arg, &o->scan.acc);
  case OPT_OP: return cli_parse_scan_op(arg, &o->scan.op);
  case OPT_INCLUSIVE: o->scan.flags &= ~GPUSORT_EXCLUSIVE; return GPUSORT_OK;
  case OPT_EXCLUSIVE: o->scan.flags |= GPUSORT_EXCLUSIVE; return GPUSORT_OK;
  case OPT_ALGO:
    if (strcmp(arg, "lookback") == 0) o->scan.algo = GPUSORT_SCAN_LOOKBACK;
    else if (strcmp(arg, "reduce-then-scan") == 0) o->scan.algo = GPUSORT_SCAN_REDUCE_THEN_SCAN;
    else return cli_fail(GPUSORT_ERROR_USAGE, "--algo takes lookback or reduce-then-scan, not '%s'", arg);
    return GPUSORT_OK;
  case OPT_DETERMINISTIC: o->scan.flags |= GPUSORT_DETERMINISTIC; return GPUSORT_OK;
  default: return -1;
  }
}

static int finish_scan_args(int argc, char **argv, scan_args *o, bool reduce) {
  const char *command = reduce ? "reduce" : "scan";
  const int positional = argc - optind, wanted = reduce ? 1 : 2;
  if (positional > wanted)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s: too many arguments: '%s' (see 'gpusort %s --help')", command,
                    argv[optind + wanted], command);
  o->input = positional >= 1 ? argv[optind] : "-"; /* left out: stdin and stdout, as sort(1) */
  if (positional == 2) {
    if (o->output)
      return cli_fail(GPUSORT_ERROR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], o->output);
    o->output = argv[optind + 1];
  }
  if (!reduce && !o->output) o->output = "-";
  /* (without --keys, the library reads the type from a .npy INPUT's header, or refuses) */
  if ((o->scan.flags & GPUSORT_DETERMINISTIC) && float_sum(&o->scan) && !reduce &&
      chosen_algo(&o->scan) == GPUSORT_SCAN_LOOKBACK)
    return cli_fail(GPUSORT_ERROR_USAGE, "--deterministic float sums need --algo reduce-then-scan (the look-back "
                                         "scan's association order varies between runs)");
  return GPUSORT_OK;
}

/* Options of scan (and, without --inclusive/--exclusive/--algo/-o/-f/--sync, of reduce). */
static int parse_scan_args(int argc, char **argv, scan_args *o, bool reduce, bool *done) {
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
                                                CLI_COMMON_OPTIONS,
                                                {NULL, 0, NULL, 0}};
  static const struct option reduce_longopts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                                  {"op", required_argument, NULL, OPT_OP},
                                                  {"acc", required_argument, NULL, OPT_ACC},
                                                  {"deterministic", no_argument, NULL, OPT_DETERMINISTIC},
                                                  CLI_COMMON_OPTIONS,
                                                  {NULL, 0, NULL, 0}};
  const gpusort_scan_options defaults = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_TYPE_NONE);
  memset(o, 0, sizeof *o);
  o->scan = defaults;
  cli_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, reduce ? ":qvhV" : ":o:fqvhV", reduce ? reduce_longopts : scan_longopts,
                            NULL)) != -1) {
    if ((rc = cli_common_option(&o->common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if ((rc = scan_option(o, opt, optarg)) == -1) rc = cli_other_option(opt, argv, reduce ? reduce_longopts : scan_longopts, done);
    if (rc || *done) return rc;
  }
  return finish_scan_args(argc, argv, o, reduce);
}

static void report(const scan_args *o, gpusort_context *ctx, const gpusort_report *r, bool reduce) {
  gpusort_scan_options ran = o->scan; /* with the type a .npy input named */
  ran.type = r->element_type;
  const char *type = gpusort_type_name(r->element_type), *verb = reduce ? "reduce" : "scan";
  static const char *const ops[] = {"sum", "min", "max"};
  char size[32], acc_note[32] = "";
  cli_note_device(ctx);
  cli_format_bytes(size, sizeof size, (double)r->input_bytes);
  if (o->scan.acc && o->scan.acc != r->element_type)
    snprintf(acc_note, sizeof acc_note, ", %s accumulator", gpusort_type_name(o->scan.acc));
  cli_note("%llu %s elements, %s: %s %s%s%s, %s", (unsigned long long)r->records, type, size, verb, ops[o->scan.op],
           reduce ? "" : (o->scan.flags & GPUSORT_EXCLUSIVE) ? ", exclusive" : ", inclusive", acc_note,
           reduce ? "fixed order" : chosen_algo(&ran) == GPUSORT_SCAN_LOOKBACK ? "look-back" : "reduce-then-scan");
  cli_report_start(r);
  cli_report_gpu(verb, r->stage_seconds[reduce ? GPUSORT_STAGE_REDUCE : GPUSORT_STAGE_SCAN], r->records, "elements",
                 r->input_bytes);
  cli_report_row("download", r->stage_seconds[GPUSORT_STAGE_DOWNLOAD], "GPU copy");
  if (!reduce) cli_report_row("write", r->stage_seconds[GPUSORT_STAGE_WRITE], "host: output and checksum");
  cli_report_total(r, "elements");
}

int cli_scan(int argc, char **argv) {
  scan_args o;
  bool done;
  int rc = parse_scan_args(argc, argv, &o, false, &done);
  if (rc || done) return rc;
  gpusort_context *ctx;
  if ((rc = cli_open(&o.common, &ctx))) return rc;
  gpusort_report r = GPUSORT_REPORT_INIT;
  if ((rc = gpusort_scan_file(ctx, o.input, o.output, &o.scan, &r))) {
    rc = cli_library_error(rc);
  } else if (o.common.json) {
    cli_json j;
    cli_json_begin(&j, cli_json_stream(o.output));
    cli_json_report(&j, "scan", ctx, &r, o.output);
    cli_json_end(&j);
  } else if (o.common.verbosity >= 1) {
    report(&o, ctx, &r, false);
    cli_print_checksum(strcmp(o.output, "-") == 0 ? "-" : o.output, r.xxh3);
  }
  gpusort_close(ctx);
  return rc;
}

int cli_reduce(int argc, char **argv) {
  scan_args o;
  bool done;
  int rc = parse_scan_args(argc, argv, &o, true, &done);
  if (rc || done) return rc;
  gpusort_context *ctx;
  if ((rc = cli_open(&o.common, &ctx))) return rc;
  gpusort_report r = GPUSORT_REPORT_INIT;
  unsigned char result[8] = {0};
  if ((rc = gpusort_reduce_file(ctx, o.input, &o.scan, result, &r))) {
    rc = cli_library_error(rc);
  } else {
    char text[64];
    gpusort_format_value(r.result_type, result, text, sizeof text);
    if (o.common.json) { /* the result inside the object: one thing on stdout to parse */
      char quoted[80];
      const bool finite = strspn(text, "+-0123456789.e") == strlen(text);
      snprintf(quoted, sizeof quoted, finite ? "%s" : "\"%s\"", text); /* nan and inf are no JSON numbers */
      cli_json j;
      cli_json_begin(&j, stdout);
      cli_json_report(&j, "reduce", ctx, &r, NULL);
      cli_json_raw(&j, "result", quoted);
      cli_json_end(&j);
    } else {
      printf("%s\n", text);
      if (o.common.verbosity >= 2) report(&o, ctx, &r, true);
    }
  }
  gpusort_close(ctx);
  return rc;
}
