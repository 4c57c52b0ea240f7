/* gpusort select, partition, unique, rle and reduce-by-key: the look-back family
 * (gpusort_compact_file), one GPU pass each, with sort's file handling, report and checksum,
 * and the count of what was kept. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

/* The options every command of the family takes; each puts its own in front. */
#define COMPACT_OPTIONS CLI_LAYOUT_OPTIONS, CLI_OUTPUT_OPTIONS, CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}

static const struct option where_options[] = {{"where", required_argument, NULL, OPT_WHERE}, COMPACT_OPTIONS};
static const struct option unique_options[] = {COMPACT_OPTIONS};
static const struct option rle_options[] = {{"count-type", required_argument, NULL, OPT_COUNT_TYPE}, COMPACT_OPTIONS};
static const struct option reduce_options[] = {{"op", required_argument, NULL, OPT_OP},
                                               {"acc", required_argument, NULL, OPT_ACC},
                                               COMPACT_OPTIONS};

typedef struct {
  const char *name;
  gpusort_compact_op op;
  const struct option *longopts; /* exactly the options it takes: any other is unknown */
  const char *counted;           /* the --json member of the count */
} compact_command;

static const compact_command commands[] = {
    {"select", GPUSORT_SELECT, where_options, "kept"},
    {"partition", GPUSORT_PARTITION, where_options, "split"},
    {"unique", GPUSORT_UNIQUE, unique_options, "runs"},
    {"rle", GPUSORT_RLE, rle_options, "runs"},
    {"reduce-by-key", GPUSORT_REDUCE_BY_KEY, reduce_options, "runs"},
};

typedef struct {
  const compact_command *command;
  cli_common common;
  cli_layout layout_options;
  gpusort_layout layout;
  gpusort_compact_options compact;
  const char *input, *output;
} compact_args;

static int compact_option(compact_args *o, int opt, const char *arg) {
  switch (opt) {
  case OPT_KEYS: return cli_parse_field_type("--keys", arg, &o->layout_options.key, NULL); /* numbers of every form */
  case OPT_WHERE: /* (a second one would silently replace the first) */
    if (o->compact.where)
      return cli_fail(GPUSORT_ERROR_USAGE, "--where is given twice; join the expressions with 'and' or 'or'");
    o->compact.where = arg;
    return GPUSORT_OK;
  case OPT_COUNT_TYPE:
    if (strcmp(arg, "u32") != 0 && strcmp(arg, "u64") != 0)
      return cli_fail(GPUSORT_ERROR_USAGE, "--count-type takes u32 or u64, not '%s'", arg);
    o->compact.count_type = arg[1] == '6' ? GPUSORT_U64 : GPUSORT_U32;
    return GPUSORT_OK;
  case OPT_OP: return cli_parse_scan_op(arg, &o->compact.reduce);
  case OPT_ACC: return cli_parse_type("--acc", arg, &o->compact.acc);
  default: return -1;
  }
}

/* INPUT [OUTPUT], then the checks that need every option; the library checks the rest (the
 * expression among them, against the key's type, which a .npy INPUT only tells it). */
static int finish_compact_args(int argc, char **argv, compact_args *o) {
  const char *name = o->command->name;
  int rc;
  if ((rc = cli_input_output(argc, argv, name, &o->input, &o->output)) ||
      (rc = cli_layout_resolve(&o->layout_options, &o->layout)))
    return rc;
  for (uint32_t i = 0; i < o->layout.part_count; i++)
    if (o->layout.parts[i].flags & GPUSORT_KEY_DESCENDING) /* (records keep their input order) */
      return cli_fail(GPUSORT_ERROR_USAGE, "%s: --key takes no direction here: records keep their input order", name);
  const gpusort_compact_op op = o->compact.op;
  if ((op == GPUSORT_SELECT || op == GPUSORT_PARTITION) && !o->compact.where)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s: missing --where EXPR: the test on the key (see 'gpusort %s --help')",
                    name, name);
  if (o->compact.where && !*o->compact.where) /* (the library takes "" for no expression at all) */
    return cli_fail(GPUSORT_ERROR_USAGE, "--where: the expression is empty");
  if (op == GPUSORT_REDUCE_BY_KEY && o->layout.key != GPUSORT_TYPE_NONE && o->layout.value == GPUSORT_TYPE_NONE)
    return cli_fail(GPUSORT_ERROR_USAGE, "reduce-by-key: missing --values TYPE: it combines the values of "
                                         "(key, value) pairs");
  return GPUSORT_OK;
}

static int parse_compact_args(int argc, char **argv, compact_args *o, bool *done) {
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[0], commands[i].name) == 0) o->command = &commands[i];
  if (!o->command) return cli_fail(GPUSORT_ERROR_USAGE, "unknown command '%s'", argv[0]); /* (main's table) */
  const gpusort_compact_options defaults = GPUSORT_COMPACT_OPTIONS_INIT(o->command->op);
  o->compact = defaults;
  const struct option *longopts = o->command->longopts;
  cli_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":o:fqvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&o->common, opt, optarg)) != 0 ||
        (rc = cli_output_option(opt, optarg, &o->output, &o->compact.flags)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if ((rc = compact_option(o, opt, optarg)) == -1) {
      if ((rc = cli_layout_option(&o->layout_options, opt, optarg)) == 1) continue;
      if (rc == 0) rc = cli_other_option(opt, argv, longopts, done);
    }
    if (rc || *done) return rc;
  }
  return finish_compact_args(argc, argv, o);
}

/* "select where 'key > 0'", "rle, u64 counts", "reduce-by-key: sum, f64 accumulator" */
static void describe_job(const compact_args *o, char *buf, size_t size) {
  static const char *const ops[] = {"sum", "min", "max"};
  const gpusort_compact_options *c = &o->compact;
  switch (c->op) {
  case GPUSORT_SELECT:
  case GPUSORT_PARTITION: snprintf(buf, size, "%s where '%s'", o->command->name, c->where); break;
  case GPUSORT_RLE: snprintf(buf, size, "rle, %s counts", c->count_type == GPUSORT_U64 ? "u64" : "u32"); break;
  case GPUSORT_REDUCE_BY_KEY:
    snprintf(buf, size, "reduce-by-key: %s%s%s", (unsigned)c->reduce <= GPUSORT_MAX ? ops[c->reduce] : "?",
             c->acc ? ", accumulator " : "", c->acc ? gpusort_type_name(c->acc) : "");
    break;
  default: snprintf(buf, size, "%s", o->command->name); break;
  }
}

/* "kept 123 of 1000 records", "split at 123 of 1000 records", "456 runs in 1000 records" */
static void note_count(gpusort_compact_op op, uint64_t count, uint64_t records) {
  const unsigned long long k = count, n = records;
  if (op == GPUSORT_SELECT)
    cli_note("kept %llu of %llu records", k, n);
  else if (op == GPUSORT_PARTITION)
    cli_note("split at %llu of %llu records", k, n);
  else
    cli_note("%llu runs in %llu records", k, n);
}

static void print_report(const compact_args *o, gpusort_context *ctx, const gpusort_report *r, uint64_t count) {
  char size[32], layout[160], job[300];
  const bool verbose = o->common.verbosity >= 2;
  cli_note_device(ctx);
  cli_format_bytes(size, sizeof size, (double)r->input_bytes);
  cli_describe_layout(&o->layout, layout, sizeof layout);
  describe_job(o, job, sizeof job);
  cli_note("%llu %s, %s: %s", (unsigned long long)r->records, layout, size, job);
  if (verbose && r->tile_items) {
    char holding[80] = ""; /* the early walk: a subgroup of the tile holds no keys */
    if (r->tile_invocations * r->tile_items_per_invocation != r->tile_items)
      snprintf(holding, sizeof holding, " (%u holding keys, a subgroup walking the look-back)",
               r->tile_items / r->tile_items_per_invocation);
    cli_note("tile: %u invocations%s x %u keys = %u keys; %u GPU batch%s", r->tile_invocations, holding,
             r->tile_items_per_invocation, r->tile_items, r->batches, r->batches == 1 ? "" : "es");
  }
  cli_report_start(r);
  cli_report_gpu("compact", r->stage_seconds[GPUSORT_STAGE_COMPACT], r->records, "keys", r->input_bytes);
  if (r->stage_seconds[GPUSORT_STAGE_GATHER] > 0)
    cli_report_row("gather", r->stage_seconds[GPUSORT_STAGE_GATHER], "GPU: whole records in output order");
  cli_report_row("download", r->stage_seconds[GPUSORT_STAGE_DOWNLOAD], "GPU copy");
  cli_report_row("write", r->stage_seconds[GPUSORT_STAGE_WRITE], "host: output and checksum");
  if (verbose && r->stage_seconds[GPUSORT_STAGE_ASSEMBLE] > 0)
    cli_report_row(" assemble", r->stage_seconds[GPUSORT_STAGE_ASSEMBLE], "host: output records assembled");
  cli_report_total(r, "keys");
  note_count(o->compact.op, count, r->records);
  cli_print_checksum(o->output, r->xxh3);
}

int cli_compact(int argc, char **argv) {
  compact_args o;
  bool done;
  int rc = parse_compact_args(argc, argv, &o, &done);
  if (rc || done) return rc;
  gpusort_context *ctx;
  if ((rc = cli_open(&o.common, &ctx))) return rc;
  gpusort_report r = GPUSORT_REPORT_INIT;
  uint64_t count = 0;
  if ((rc = gpusort_compact_file(ctx, o.input, o.output, &o.layout, &o.compact, &count, &r))) {
    rc = cli_library_error(rc);
  } else if (o.common.json) {
    cli_json j;
    cli_json_begin(&j, cli_json_stream(o.output));
    cli_json_report(&j, o.command->name, ctx, &r, o.output);
    cli_json_count(&j, o.command->counted, count);
    cli_json_end(&j);
  } else if (o.common.verbosity >= 1) {
    print_report(&o, ctx, &r, count);
  }
  gpusort_close(ctx);
  return rc;
}
