/* gpusort check: is FILE sorted? Exit 0 if so, 3 if not. Runs on the host only. */
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/input.h"
#include "io/verify.h"
#include "util/error.h"

enum { STREAM_CHUNK = 16 << 20 };

/* Feeds a stream to the check in chunks of whole records, never holding all of it. */
static int check_stream(gs_input *in, gs_order_check *order, unsigned width, uint64_t *bytes_read) {
  unsigned char *buf = malloc(STREAM_CHUNK);
  if (!buf) return gs_fail(GS_ERR_RUNTIME, "out of host memory");
  size_t have = 0;
  *bytes_read = 0;
  for (;;) {
    ssize_t got = read(in->fd, buf + have, STREAM_CHUNK - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      free(buf);
      return gs_fail(GS_ERR_RUNTIME, "cannot read %s: %s", in->name, strerror(errno));
    }
    if (got == 0) break;
    have += (size_t)got;
    *bytes_read += (uint64_t)got;
    const size_t whole = have - have % width;
    if (whole >= STREAM_CHUNK / 2) {
      gs_order_check_feed(order, buf, whole);
      memmove(buf, buf + whole, have - whole);
      have -= whole;
    }
  }
  gs_order_check_feed(order, buf, have - have % width);
  free(buf);
  return GS_OK;
}

int gs_cmd_check(int argc, char **argv) {
  static const struct option longopts[] = {
      {"keys", required_argument, NULL, OPT_KEYS},       {"device", required_argument, NULL, OPT_DEVICE},
      {"timeout", required_argument, NULL, OPT_TIMEOUT}, {"quiet", no_argument, NULL, 'q'},
      {"verbose", no_argument, NULL, 'v'},               {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},               {NULL, 0, NULL, 0}};
  gs_common_options common;
  bool done, have_key = false;
  gs_key_type key = GS_KEY_U32;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if (opt == OPT_KEYS) {
      if ((rc = gs_parse_key_type(optarg, &key))) return rc;
      have_key = true;
      continue;
    }
    if ((rc = gs_other_option(opt, argv, &done)) || done) return rc;
  }
  if (argc - optind != 1) return gs_fail(GS_ERR_USAGE, "check takes one FILE (see 'gpusort --help')");
  if (!have_key) return gs_fail(GS_ERR_USAGE, "missing --keys TYPE: say what FILE holds");
  const gs_key_info *info = gs_key_info_of(key);
  char what[32];
  snprintf(what, sizeof what, "a %s key", info->name);

  gs_input in;
  if ((rc = gs_input_open(&in, argv[optind]))) return rc;
  gs_order_check order;
  gs_order_check_init(&order, key, false, info->bytes, 0);
  if (in.is_stream) {
    uint64_t bytes = 0;
    rc = check_stream(&in, &order, info->bytes, &bytes);
    in.bytes = (size_t)bytes;
  } else {
    gs_order_check_feed(&order, in.data, in.bytes - in.bytes % info->bytes);
  }
  if (!rc) rc = gs_input_check_width(&in, info->bytes, what);
  if (!rc && !order.sorted)
    rc = gs_fail(GS_ERR_VERIFY, "%s: not sorted: at key %llu, %s", in.name, (unsigned long long)order.first_bad,
                 order.detail);
  if (!rc && common.verbosity >= 1)
    gs_note("%s: sorted, %llu %s keys", in.name, (unsigned long long)order.records, info->name);
  gs_input_close(&in);
  return rc;
}
