/* gpusort check: is FILE sorted by its key? Exit 0 if so, 3 if not. Runs on the host only. */
#include <getopt.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "report.h"

int cli_check(int argc, char **argv) {
  static const struct option longopts[] = {CLI_LAYOUT_OPTIONS,
                                           {"descending", no_argument, NULL, OPT_DESCENDING},
                                           {"bits", required_argument, NULL, OPT_BITS},
                                           CLI_COMMON_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  cli_common common;
  cli_layout layout_options = {0};
  gpusort_sort_options sort = GPUSORT_SORT_OPTIONS_INIT;
  const char *bits_text = NULL;
  bool done;
  cli_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&common, opt, optarg)) != 0 || (rc = cli_layout_option(&layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if (opt == OPT_DESCENDING) {
      sort.flags |= GPUSORT_DESCENDING;
    } else if (opt == OPT_BITS) {
      bits_text = optarg;
    } else if ((rc = cli_other_option(opt, argv, longopts, &done)) || done) {
      return rc;
    }
  }
  if (argc - optind > 1) return cli_fail(GPUSORT_ERROR_USAGE, "check takes one FILE (see 'gpusort check --help')");
  const char *file = argc - optind == 1 ? argv[optind] : "-"; /* left out: stdin */
  gpusort_layout layout;
  if ((rc = cli_layout_resolve(&layout_options, &layout))) return rc;
  unsigned key_bits;
  if (bits_text && ((rc = cli_layout_key_bits(&layout, &key_bits)) ||
                    (rc = cli_parse_bits(bits_text, key_bits, &sort.begin_bit, &sort.end_bit))))
    return rc;
  gpusort_report r = GPUSORT_REPORT_INIT;
  rc = gpusort_check_file(NULL, file, &layout, &sort, &r);
  if (common.json && (rc == GPUSORT_OK || rc == GPUSORT_ERROR_NOT_SORTED)) { /* (records out of order: the line too) */
    cli_json j;
    cli_json_begin(&j, stdout);
    cli_json_report(&j, "check", NULL, &r, NULL);
    cli_json_raw(&j, "sorted", rc == GPUSORT_OK ? "true" : "false");
    cli_json_end(&j);
  }
  if (rc) return cli_library_error(rc);
  if (!common.json && common.verbosity >= 1) {
    char what[160];
    cli_describe_layout(&layout, what, sizeof what);
    cli_note("%s: sorted%s, %llu %s", strcmp(file, "-") == 0 ? "stdin" : file,
             (sort.flags & GPUSORT_DESCENDING) ? " (descending)" : "", (unsigned long long)r.records, what);
  }
  return GPUSORT_OK;
}
