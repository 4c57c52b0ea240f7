#include "cli/args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "util/error.h"

void gs_common_defaults(gs_common_options *c) {
  c->device = -1;
  c->verbosity = 1;
  c->timeout_s = 60;
}

int gs_common_option(gs_common_options *c, int opt, const char *arg) {
  char *end;
  switch (opt) {
  case 'q': c->verbosity = 0; return 1;
  case 'v': c->verbosity = 2; return 1;
  case OPT_DEVICE: {
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || !*arg || v < 0 || v > 1000000)
      return gs_fail(GS_ERR_USAGE, "--device takes a device index (see 'gpusort devices'), not '%s'", arg);
    c->device = (int)v;
    return 1;
  }
  case OPT_TIMEOUT: {
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || *end || !*arg || !(v > 0) || v > 1e6)
      return gs_fail(GS_ERR_USAGE, "--timeout takes a positive number of seconds, not '%s'", arg);
    c->timeout_s = v;
    return 1;
  }
  default: return 0;
  }
}

int gs_parse_count(const char *text, uint64_t *out) {
  char *end;
  if (strncmp(text, "2^", 2) == 0) {
    errno = 0;
    unsigned long k = strtoul(text + 2, &end, 10);
    if (errno || *end || !text[2] || k > 62) return -1;
    *out = (uint64_t)1 << k;
    return 0;
  }
  if (!*text || *text < '0' || *text > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int gs_parse_type(const char *option, const char *text, gs_key_type *out) {
  if (gs_key_type_from_name(text, out) != 0)
    return gs_fail(GS_ERR_USAGE, "%s: unknown type '%s' (types: %s)", option, text, gs_key_type_names());
  return GS_OK;
}

static int parse_bytes(const char *option, const char *text, unsigned long *out) {
  uint64_t v;
  if (gs_parse_count(text, &v) != 0 || v > 0xFFFFFFFFull)
    return gs_fail(GS_ERR_USAGE, "%s takes a number of bytes, not '%s'", option, text);
  *out = (unsigned long)v;
  return GS_OK;
}

int gs_layout_option(gs_layout_options *l, int opt, const char *arg) {
  int rc;
  switch (opt) {
  case OPT_KEYS:
    if ((rc = gs_parse_type("--keys", arg, &l->key))) return rc;
    l->have_key = true;
    return 1;
  case OPT_VALUES:
    if ((rc = gs_parse_type("--values", arg, &l->value))) return rc;
    l->have_value = true;
    return 1;
  case OPT_RECORD_SIZE:
    if ((rc = parse_bytes("--record-size", arg, &l->record_bytes))) return rc;
    if (l->record_bytes == 0) return gs_fail(GS_ERR_USAGE, "--record-size must be at least 1");
    return 1;
  case OPT_KEY_OFFSET:
    if ((rc = parse_bytes("--key-offset", arg, &l->key_offset))) return rc;
    l->have_key_offset = true;
    return 1;
  default: return 0;
  }
}

int gs_parse_bits(const char *text, unsigned key_bits, unsigned *lo, unsigned *hi) {
  char *end;
  errno = 0;
  unsigned long a = strtoul(text, &end, 10), b = 0;
  bool ok = !errno && end != text && *end == ':' && end[1] >= '0' && end[1] <= '9';
  if (ok) {
    const char *second = end + 1;
    b = strtoul(second, &end, 10);
    ok = !errno && !*end;
  }
  if (!ok) return gs_fail(GS_ERR_USAGE, "--bits takes LO:HI, e.g. 0:16, not '%s'", text);
  if (!(a < b && b <= key_bits))
    return gs_fail(GS_ERR_USAGE, "--bits %s: need 0 <= LO < HI <= %u for %u-bit keys", text, key_bits, key_bits);
  *lo = (unsigned)a, *hi = (unsigned)b;
  return GS_OK;
}

int gs_other_option(int opt, char **argv, bool *done) {
  switch (opt) {
  case 'h': gs_print_help(); *done = true; return GS_OK;
  case 'V': gs_print_version(); *done = true; return GS_OK;
  case ':': return gs_fail(GS_ERR_USAGE, "option '%s' needs a value (see 'gpusort --help')", argv[optind - 1]);
  default: return gs_fail(GS_ERR_USAGE, "unknown option '%s' (see 'gpusort --help')", argv[optind - 1]);
  }
}

void gs_options_begin(gs_common_options *c, bool *done) {
  gs_common_defaults(c);
  *done = false;
  optind = 1;
  opterr = 0; /* unknown options are reported by gs_other_option */
}

void gs_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("gpusort: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
