/* gpusort sort: a file sorted on the GPU into another (gpusort_sort_file), with a per-stage
 * report and the output's checksum. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

typedef struct {
  cli_common common;
  cli_layout layout_options;
  gpusort_layout layout;
  gpusort_sort_options sort;
  const char *input, *output, *bits_text;
  bool argsort, have_index_type;
  gpusort_type index_type;
  gpusort_compact_options then; /* --unique, --rle: op 0 for none */
} sort_args;

static int sort_option(sort_args *o, int opt, const char *arg) {
  if (cli_output_option(opt, arg, &o->output, &o->sort.flags)) return GPUSORT_OK;
  switch (opt) {
  case OPT_VERIFY: o->sort.flags |= GPUSORT_VERIFY; return GPUSORT_OK;
  case OPT_DESCENDING: o->sort.flags |= GPUSORT_DESCENDING; return GPUSORT_OK;
  case OPT_BITS: o->bits_text = arg; return GPUSORT_OK;
  case OPT_ALGO: return cli_parse_sort_algo(arg, &o->sort.algo);
  case OPT_ARGSORT: o->argsort = true; return GPUSORT_OK;
  case OPT_UNIQUE:
  case OPT_RLE:
    if (o->then.op && o->then.op != (opt == OPT_UNIQUE ? GPUSORT_UNIQUE : GPUSORT_RLE))
      return cli_fail(GPUSORT_ERROR_USAGE, "--unique and --rle are two different steps: give one");
    o->then.op = opt == OPT_UNIQUE ? GPUSORT_UNIQUE : GPUSORT_RLE;
    return GPUSORT_OK;
  case OPT_COUNT_TYPE:
    if (strcmp(arg, "u32") != 0 && strcmp(arg, "u64") != 0)
      return cli_fail(GPUSORT_ERROR_USAGE, "--count-type takes u32 or u64, not '%s'", arg);
    o->then.count_type = arg[1] == '6' ? GPUSORT_U64 : GPUSORT_U32;
    return GPUSORT_OK;
  case OPT_INDEX_TYPE:
    if (strcmp(arg, "u32") != 0 && strcmp(arg, "u64") != 0)
      return cli_fail(GPUSORT_ERROR_USAGE, "--index-type takes u32 or u64, not '%s'", arg);
    o->index_type = arg[1] == '6' ? GPUSORT_U64 : GPUSORT_U32;
    o->have_index_type = true;
    return GPUSORT_OK;
  default: return -1;
  }
}

/* INPUT [OUTPUT] (or -o), then the checks that need every option. */
static int finish_sort_args(int argc, char **argv, sort_args *o) {
  const int positional = argc - optind;
  int rc;
  if (positional > 2)
    return cli_fail(GPUSORT_ERROR_USAGE, "too many arguments: '%s' (see 'gpusort sort --help')", argv[optind + 2]);
  o->input = positional >= 1 ? argv[optind] : "-"; /* left out: stdin and stdout, as sort(1) */
  if (positional == 2) {
    if (o->output)
      return cli_fail(GPUSORT_ERROR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], o->output);
    o->output = argv[optind + 1];
  }
  if (!o->output) o->output = "-";
  if ((rc = cli_layout_resolve(&o->layout_options, &o->layout))) return rc;
  if (o->have_index_type && !o->argsort) return cli_fail(GPUSORT_ERROR_USAGE, "--index-type needs --argsort");
  if (o->then.count_type && o->then.op != GPUSORT_RLE) return cli_fail(GPUSORT_ERROR_USAGE, "--count-type needs --rle");
  if (o->then.op && o->argsort)
    return cli_fail(GPUSORT_ERROR_USAGE, "--%s does not go with --argsort", o->then.op == GPUSORT_RLE ? "rle" : "unique");
  unsigned key_bits;
  if (o->bits_text && (rc = cli_layout_key_bits(&o->layout, &key_bits))) return rc;
  if (o->bits_text) return cli_parse_bits(o->bits_text, key_bits, &o->sort.begin_bit, &o->sort.end_bit);
  return GPUSORT_OK;
}

/* Returns GPUSORT_OK with *done set when --help/--version was handled. */
static int parse_sort_args(int argc, char **argv, sort_args *o, bool *done) {
  static const struct option longopts[] = {CLI_LAYOUT_OPTIONS,
                                           {"output", required_argument, NULL, 'o'},
                                           {"force", no_argument, NULL, 'f'},
                                           {"sync", no_argument, NULL, OPT_SYNC},
                                           {"verify", no_argument, NULL, OPT_VERIFY},
                                           {"descending", no_argument, NULL, OPT_DESCENDING},
                                           {"bits", required_argument, NULL, OPT_BITS},
                                           {"argsort", no_argument, NULL, OPT_ARGSORT},
                                           {"index-type", required_argument, NULL, OPT_INDEX_TYPE},
                                           {"unique", no_argument, NULL, OPT_UNIQUE},
                                           {"rle", no_argument, NULL, OPT_RLE},
                                           {"count-type", required_argument, NULL, OPT_COUNT_TYPE},
                                           {"algo", required_argument, NULL, OPT_ALGO},
                                           CLI_COMMON_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  const gpusort_sort_options defaults = GPUSORT_SORT_OPTIONS_INIT;
  const gpusort_compact_options then = GPUSORT_COMPACT_OPTIONS_INIT(0);
  memset(o, 0, sizeof *o);
  o->sort = defaults;
  o->then = then;
  cli_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":o:fqvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&o->common, opt, optarg)) != 0 ||
        (rc = cli_layout_option(&o->layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if ((rc = sort_option(o, opt, optarg)) == -1) rc = cli_other_option(opt, argv, longopts, done);
    if (rc || *done) return rc;
  }
  return finish_sort_args(argc, argv, o);
}

static void print_report(const sort_args *o, gpusort_context *ctx, const gpusort_report *r, uint64_t runs) {
  char size[32], layout[160], order[96] = "", line[200];
  const bool descending = o->sort.flags & GPUSORT_DESCENDING;
  cli_note_device(ctx);
  cli_format_bytes(size, sizeof size, (double)r->input_bytes);
  cli_describe_layout(&o->layout, layout, sizeof layout);
  if (descending || o->bits_text || o->argsort)
    snprintf(order, sizeof order, " (%s%s%s%s)", descending ? "descending" : "ascending", o->bits_text ? ", bits " : "",
             o->bits_text ? o->bits_text : "",
             o->argsort ? (r->output_bytes == 8 * r->records && r->records ? ", u64 indices out" : ", u32 indices out") : "");
  cli_note("%llu %s, %s%s", (unsigned long long)r->records, layout, size, order);
  const bool verbose = o->common.verbosity >= 2;
  if (verbose) {
    const char *why = o->sort.algo != GPUSORT_SORT_AUTO ? " (--algo)"
                      : r->algo == GPUSORT_SORT_REDUCE_THEN_SCAN
                          ? " (auto: this device does not promise forward progress between workgroups, or is lavapipe)"
                      : r->algo == GPUSORT_SORT_BITONIC ? " (auto: below the device's bitonic crossover)"
                                                        : " (auto)";
    cli_note("algorithm: %s%s", cli_sort_algo_name(r->algo), why);
    cli_note("tile: %u invocations x %u keys = %u keys, %u bytes of shared memory; %u passes", r->tile_invocations,
             r->tile_items_per_invocation, r->tile_items, r->tile_shared_bytes, r->passes);
  }
  cli_report_start(r);
  cli_report_gpu("sort", r->stage_seconds[GPUSORT_STAGE_SORT], r->records, "keys", r->input_bytes);
  if (o->then.op)
    cli_report_row(o->then.op == GPUSORT_RLE ? "rle" : "unique", r->stage_seconds[GPUSORT_STAGE_COMPACT],
                   "GPU: runs of equal keys, in the sort's submission");
  if (r->stage_seconds[GPUSORT_STAGE_GATHER] > 0)
    cli_report_row("gather", r->stage_seconds[GPUSORT_STAGE_GATHER], "GPU: whole records in sorted order");
  if (verbose) {
    cli_report_row(" histogram", r->histogram_seconds, "GPU");
    for (unsigned p = 0; p < r->passes && p < 8; p++) {
      snprintf(line, sizeof line, " pass %u", p);
      cli_report_row(line, r->pass_seconds[p], "GPU");
    }
  }
  cli_report_row("download", r->stage_seconds[GPUSORT_STAGE_DOWNLOAD], "GPU copy");
  cli_report_row("write", r->stage_seconds[GPUSORT_STAGE_WRITE], "host: output and checksum");
  if (verbose && r->stage_seconds[GPUSORT_STAGE_ASSEMBLE] > 0)
    cli_report_row(" assemble", r->stage_seconds[GPUSORT_STAGE_ASSEMBLE],
                   o->layout.record_bytes && !o->argsort ? "host: records gathered by index" : "host: output assembled");
  if (r->verified) cli_report_row("verify", r->stage_seconds[GPUSORT_STAGE_VERIFY], "host: order and permutation");
  cli_report_total(r, "keys");
  if (o->then.op) cli_note("%llu runs in %llu records", (unsigned long long)runs, (unsigned long long)r->records);
  if (r->verified)
    cli_note(o->argsort ? "verified: the indices are a stable sorted permutation of the input"
                        : "verified: output sorted and a permutation of the input");
  cli_print_checksum(strcmp(o->output, "-") == 0 ? "-" : o->output, r->xxh3);
}

int cli_sort(int argc, char **argv) {
  sort_args o;
  bool done;
  int rc = parse_sort_args(argc, argv, &o, &done);
  if (rc || done) return rc;
  gpusort_context *ctx;
  if ((rc = cli_open(&o.common, &ctx))) return rc;
  gpusort_report report = GPUSORT_REPORT_INIT;
  uint64_t runs = 0;
  if (o.then.op)
    rc = gpusort_sort_then_file(ctx, o.input, o.output, &o.layout, &o.sort, &o.then, &runs, &report);
  else if (o.argsort)
    rc = gpusort_argsort_file(ctx, o.input, o.output, &o.layout, o.index_type, &o.sort, &report);
  else
    rc = gpusort_sort_file(ctx, o.input, o.output, &o.layout, &o.sort, &report);
  if (rc) {
    rc = cli_library_error(rc);
  } else if (o.common.json) {
    cli_json j;
    cli_json_begin(&j, cli_json_stream(o.output));
    cli_json_report(&j, o.argsort ? "argsort" : "sort", ctx, &report, o.output);
    if (o.then.op) cli_json_count(&j, "runs", runs);
    cli_json_end(&j);
  } else if (o.common.verbosity >= 1) {
    print_report(&o, ctx, &report, runs);
  }
  gpusort_close(ctx);
  return rc;
}
