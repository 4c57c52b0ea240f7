/* gpusort check: is FILE sorted by its key? Exit 0 if so, 3 if not. Runs on the host only. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/input.h"
#include "io/layout.h"
#include "io/verify.h"
#include "util/error.h"

enum { STREAM_CHUNK = 16 << 20 };

/* Feeds a stream to the check in chunks of whole records, never holding all of it. */
static int check_stream(gs_input *in, gs_order_check *order, unsigned width, uint64_t *bytes_read) {
  unsigned char *buf = malloc(STREAM_CHUNK + width);
  if (!buf) return gs_fail(GS_ERR_RUNTIME, "out of host memory");
  size_t have = 0;
  *bytes_read = 0;
  for (;;) {
    ssize_t got = read(in->fd, buf + have, STREAM_CHUNK + width - have);
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
  static const struct option longopts[] = {GS_LAYOUT_LONG_OPTIONS,
                                           {"descending", no_argument, NULL, OPT_DESCENDING},
                                           {"bits", required_argument, NULL, OPT_BITS},
                                           GS_COMMON_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  gs_common_options common;
  gs_layout_options layout_options = {0};
  bool done, descending = false;
  const char *bits_text = NULL;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0 || (rc = gs_layout_option(&layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if (opt == OPT_DESCENDING) {
      descending = true;
    } else if (opt == OPT_BITS) {
      bits_text = optarg;
    } else if ((rc = gs_other_option(opt, argv, &done)) || done) {
      return rc;
    }
  }
  if (argc - optind != 1) return gs_fail(GS_ERR_USAGE, "check takes one FILE (see 'gpusort --help')");
  gs_layout layout;
  if ((rc = gs_layout_from_options(&layout_options, &layout))) return rc;
  unsigned begin_bit = 0, end_bit = 0;
  if (bits_text && (rc = gs_parse_bits(bits_text, gs_key_info_of(layout.key)->bytes * 8, &begin_bit, &end_bit)))
    return rc;
  char unit[64], what[128];
  gs_layout_unit(&layout, unit, sizeof unit);
  gs_layout_describe(&layout, what, sizeof what);

  gs_input in;
  if ((rc = gs_input_open(&in, argv[optind]))) return rc;
  gs_order_check order;
  gs_order_check_init(&order, layout.key, descending, layout.record_bytes, layout.key_offset, begin_bit, end_bit);
  if (in.is_stream) {
    uint64_t bytes = 0;
    rc = check_stream(&in, &order, layout.record_bytes, &bytes);
    in.bytes = (size_t)bytes;
  } else {
    gs_order_check_feed(&order, in.data, in.bytes - in.bytes % layout.record_bytes);
  }
  if (!rc) rc = gs_input_check_width(&in, layout.record_bytes, unit);
  if (!rc && !order.sorted)
    rc = gs_fail(GS_ERR_VERIFY, "%s: not sorted%s: at record %llu, %s", in.name, descending ? " (descending)" : "",
                 (unsigned long long)order.first_bad, order.detail);
  if (!rc && common.verbosity >= 1)
    gs_note("%s: sorted%s, %llu %s", in.name, descending ? " (descending)" : "", (unsigned long long)order.records,
            what);
  gs_input_close(&in);
  return rc;
}
