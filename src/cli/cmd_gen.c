/* gpusort gen: deterministic test data (src/io/datagen.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "io/datagen.h"
#include "io/output.h"
#include "util/error.h"

enum { GEN_CHUNK_KEYS = 1 << 22 };

int gs_cmd_gen(int argc, char **argv) {
  static const struct option longopts[] = {
      {"keys", required_argument, NULL, OPT_KEYS},       {"dist", required_argument, NULL, OPT_DIST},
      {"seed", required_argument, NULL, OPT_SEED},       {"force", no_argument, NULL, 'f'},
      {"device", required_argument, NULL, OPT_DEVICE},   {"timeout", required_argument, NULL, OPT_TIMEOUT},
      {"quiet", no_argument, NULL, 'q'},                 {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},                  {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  gs_common_options common;
  bool done, have_key = false, have_n = false, force = false;
  gs_key_type key = GS_KEY_U32;
  gs_dist dist = {GS_DIST_UNIFORM, 0};
  uint64_t n = 0, seed = 1;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":n:fqvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case OPT_KEYS:
      if ((rc = gs_parse_key_type(optarg, &key))) return rc;
      have_key = true;
      break;
    case 'n':
      if (gs_parse_count(optarg, &n) != 0)
        return gs_fail(GS_ERR_USAGE, "-n takes a number of keys (decimal or 2^K), not '%s'", optarg);
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
    default:
      if ((rc = gs_other_option(opt, argv, &done)) || done) return rc;
    }
  }
  if (argc - optind != 1) return gs_fail(GS_ERR_USAGE, "gen takes one OUTPUT (see 'gpusort --help')");
  if (!have_key) return gs_fail(GS_ERR_USAGE, "missing --keys TYPE");
  if (!have_n) return gs_fail(GS_ERR_USAGE, "missing -n N, the number of keys");
  const char *path = argv[optind];
  const gs_key_info *info = gs_key_info_of(key);
  if ((rc = gs_output_preflight(path, force, NULL))) return rc;

  gs_output out;
  if ((rc = gs_output_open(&out, path))) return rc;
  const uint64_t chunk = n < GEN_CHUNK_KEYS ? n : GEN_CHUNK_KEYS;
  unsigned char *buf = malloc(chunk ? chunk * info->bytes : 1);
  XXH3_state_t *checksum = XXH3_createState();
  if (!buf || !checksum || XXH3_64bits_reset(checksum) != XXH_OK) rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
  for (uint64_t first = 0; rc == GS_OK && first < n; first += chunk) {
    const uint64_t count = n - first < chunk ? n - first : chunk;
    gs_generate(key, dist, seed, n, first, count, buf);
    XXH3_64bits_update(checksum, buf, count * info->bytes);
    rc = gs_output_write(&out, buf, count * info->bytes);
  }
  if (rc == GS_OK) rc = gs_output_commit(&out);
  if (rc) gs_output_abort(&out);
  if (rc == GS_OK && common.verbosity >= 1) {
    gs_note("wrote %llu %s keys to %s", (unsigned long long)n, info->name, out.name);
    gs_print_checksum(strcmp(path, "-") == 0 ? "-" : path, XXH3_64bits_digest(checksum));
  }
  XXH3_freeState(checksum);
  free(buf);
  return rc;
}
