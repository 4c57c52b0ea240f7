/* gpusort gen: deterministic test data (src/io/datagen.h) in any layout: keys, pairs whose
 * value is the record's index (so stability can be seen), or records with random bytes
 * around the key. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "io/datagen.h"
#include "io/layout.h"
#include "io/output.h"
#include "util/error.h"

enum { GEN_CHUNK_BYTES = 32 << 20 };

int gs_cmd_gen(int argc, char **argv) {
  static const struct option longopts[] = {GS_LAYOUT_LONG_OPTIONS,
                                           {"dist", required_argument, NULL, OPT_DIST},
                                           {"seed", required_argument, NULL, OPT_SEED},
                                           {"force", no_argument, NULL, 'f'},
                                           {"sync", no_argument, NULL, OPT_SYNC},
                                           GS_COMMON_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  gs_common_options common;
  gs_layout_options layout_options = {0};
  bool done, have_n = false, force = false, sync = false;
  gs_dist dist = {GS_DIST_UNIFORM, 0};
  uint64_t n = 0, seed = 1;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":n:fqvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0 || (rc = gs_layout_option(&layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case 'n':
      if (gs_parse_count(optarg, &n) != 0)
        return gs_fail(GS_ERR_USAGE, "-n takes a number of records (decimal or 2^K), not '%s'", optarg);
      have_n = true;
      break;
    case OPT_DIST:
      if (gs_dist_parse(optarg, &dist) != 0)
        return gs_fail(GS_ERR_USAGE, "unknown distribution '%s' (distributions: %s)", optarg, gs_dist_names());
      break;
    case OPT_SEED:
      if (gs_parse_count(optarg, &seed) != 0)
        return gs_fail(GS_ERR_USAGE, "--seed takes a non-negative integer, not '%s'", optarg);
      break;
    case 'f': force = true; break;
    case OPT_SYNC: sync = true; break;
    default:
      if ((rc = gs_other_option(opt, argv, &done)) || done) return rc;
    }
  }
  if (argc - optind != 1) return gs_fail(GS_ERR_USAGE, "gen takes one OUTPUT (see 'gpusort --help')");
  gs_layout layout;
  if ((rc = gs_layout_from_options(&layout_options, &layout))) return rc;
  if (!have_n) return gs_fail(GS_ERR_USAGE, "missing -n N, the number of records");
  const char *path = argv[optind];
  const size_t R = layout.record_bytes;
  if ((rc = gs_output_preflight(path, force, NULL))) return rc;

  gs_output out;
  if ((rc = gs_output_open(&out, path))) return rc;
  out.sync = sync;
  const uint64_t chunk = GEN_CHUNK_BYTES / R ? GEN_CHUNK_BYTES / R : 1;
  unsigned char *buf = malloc((n < chunk ? (n ? n : 1) : chunk) * R);
  XXH3_state_t *checksum = XXH3_createState();
  if (!buf || !checksum || XXH3_64bits_reset(checksum) != XXH_OK) rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
  for (uint64_t first = 0; rc == GS_OK && first < n; first += chunk) {
    const uint64_t count = n - first < chunk ? n - first : chunk;
    if (layout.kind == GS_LAYOUT_RECORDS) gs_generate_bytes(seed, first, count, R, buf);
    gs_generate(layout.key, dist, seed, n, first, count, buf + layout.key_offset, R);
    if (layout.kind == GS_LAYOUT_PAIRS) gs_generate_index_values(layout.value, first, count, buf + layout.value_offset, R);
    XXH3_64bits_update(checksum, buf, count * R);
    rc = gs_output_write(&out, buf, count * R);
  }
  if (rc == GS_OK) rc = gs_output_commit(&out);
  if (rc) gs_output_abort(&out);
  if (rc == GS_OK && common.verbosity >= 1) {
    char what[128];
    gs_layout_describe(&layout, what, sizeof what);
    gs_note("wrote %llu %s to %s", (unsigned long long)n, what, out.name);
    gs_print_checksum(strcmp(path, "-") == 0 ? "-" : path, XXH3_64bits_digest(checksum));
  }
  XXH3_freeState(checksum);
  free(buf);
  return rc;
}
