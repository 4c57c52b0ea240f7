/* gpusort gen: deterministic test data in any layout: keys, pairs whose value is the record's
 * index (so stability can be seen), or records with random bytes around the key. */
#include <getopt.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

int cli_gen(int argc, char **argv) {
  static const struct option longopts[] = {CLI_LAYOUT_OPTIONS,
                                           {"dist", required_argument, NULL, OPT_DIST},
                                           {"seed", required_argument, NULL, OPT_SEED},
                                           {"force", no_argument, NULL, 'f'},
                                           {"sync", no_argument, NULL, OPT_SYNC},
                                           CLI_COMMON_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  cli_common common;
  cli_layout layout_options = {0};
  gpusort_generate_options gen = GPUSORT_GENERATE_OPTIONS_INIT(0);
  gen.seed = 1;
  bool done, have_n = false;
  cli_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":n:fqvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&common, opt, optarg)) != 0 || (rc = cli_layout_option(&layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case 'n':
      if (cli_parse_count(optarg, &gen.count) != 0)
        return cli_fail(GPUSORT_ERROR_USAGE, "-n takes a number of records (decimal or 2^K), not '%s'", optarg);
      have_n = true;
      break;
    case OPT_DIST: gen.distribution = optarg; break;
    case OPT_SEED:
      if (cli_parse_count(optarg, &gen.seed) != 0)
        return cli_fail(GPUSORT_ERROR_USAGE, "--seed takes a non-negative integer, not '%s'", optarg);
      break;
    case 'f': gen.flags |= GPUSORT_OVERWRITE; break;
    case OPT_SYNC: gen.flags |= GPUSORT_SYNC; break;
    default:
      if ((rc = cli_other_option(opt, argv, longopts, &done)) || done) return rc;
    }
  }
  if (argc - optind > 1) return cli_fail(GPUSORT_ERROR_USAGE, "gen takes one OUTPUT (see 'gpusort gen --help')");
  gpusort_layout layout;
  if (layout_options.key == GPUSORT_TYPE_NONE && !layout_options.part_count)
    return cli_fail(GPUSORT_ERROR_USAGE, "missing --keys TYPE (or --key parts): say what to write");
  if ((rc = cli_layout_resolve(&layout_options, &layout))) return rc;
  if (!have_n) return cli_fail(GPUSORT_ERROR_USAGE, "missing -n N, the number of records");
  const char *path = argc - optind == 1 ? argv[optind] : "-"; /* left out: stdout */
  gpusort_report r = GPUSORT_REPORT_INIT;
  if ((rc = gpusort_generate_file(NULL, path, &layout, &gen, &r))) return cli_library_error(rc);
  if (common.json) {
    cli_json j;
    cli_json_begin(&j, cli_json_stream(path));
    cli_json_report(&j, "gen", NULL, &r, path);
    cli_json_end(&j);
  } else if (common.verbosity >= 1) {
    char what[160];
    cli_describe_layout(&layout, what, sizeof what);
    const bool to_stdout = strcmp(path, "-") == 0;
    cli_note("wrote %llu %s to %s", (unsigned long long)gen.count, what, to_stdout ? "stdout" : path);
    cli_print_checksum(to_stdout ? "-" : path, r.xxh3);
  }
  return GPUSORT_OK;
}
