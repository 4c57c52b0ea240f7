/* Option parsing shared by the subcommands. */
#ifndef GS_CLI_ARGS_H
#define GS_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "prim/keys.h"

/* Options every subcommand takes. */
typedef struct {
  int device;       /* -1: choose */
  int verbosity;    /* 0 quiet, 1 normal, 2 verbose */
  double timeout_s; /* bound on each GPU wait */
} gs_common_options;

/* getopt_long codes of the common long-only options. */
enum {
  OPT_DEVICE = 1000, OPT_TIMEOUT, OPT_KEYS, OPT_VERIFY, OPT_DIST, OPT_SEED, OPT_SIZES, OPT_REPS,
  OPT_VALUES, OPT_RECORD_SIZE, OPT_KEY_OFFSET, OPT_DESCENDING, OPT_BITS, OPT_ARGSORT, OPT_INDEX_TYPE,
  OPT_SCAN_ALGOS, OPT_SYNC
};

/* getopt_long entries of the layout options (--keys, --values, --record-size, --key-offset). */
#define GS_LAYOUT_LONG_OPTIONS                                                                   \
  {"keys", required_argument, NULL, OPT_KEYS}, {"values", required_argument, NULL, OPT_VALUES},  \
      {"record-size", required_argument, NULL, OPT_RECORD_SIZE},                                 \
      {"key-offset", required_argument, NULL, OPT_KEY_OFFSET}

/* getopt_long entries of the options every command takes. */
#define GS_COMMON_LONG_OPTIONS                                                                        \
  {"device", required_argument, NULL, OPT_DEVICE}, {"timeout", required_argument, NULL, OPT_TIMEOUT}, \
      {"quiet", no_argument, NULL, 'q'}, {"verbose", no_argument, NULL, 'v'},                         \
      {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}

void gs_common_defaults(gs_common_options *c);

/* Handles a common option (q, v, OPT_DEVICE, OPT_TIMEOUT). Returns 1 if handled, 0 if
 * not a common option, or a status on a bad value. */
int gs_common_option(gs_common_options *c, int opt, const char *arg);

/* A count: decimal digits, or 2^K. */
int gs_parse_count(const char *text, uint64_t *out);

/* A key or value type name, with a usage error naming `option` for unknown types. */
int gs_parse_type(const char *option, const char *text, gs_key_type *out);

/* Handles a layout option (OPT_KEYS, OPT_VALUES, OPT_RECORD_SIZE, OPT_KEY_OFFSET). Returns 1 if
 * handled, 0 if not a layout option, or a status on a bad value. */
#include "io/layout.h"
int gs_layout_option(gs_layout_options *l, int opt, const char *arg);

/* --bits LO:HI: 0 <= LO < HI <= key_bits. */
int gs_parse_bits(const char *text, unsigned key_bits, unsigned *lo, unsigned *hi);

/* The rest of a getopt_long loop: -h/--help and -V/--version print and set *done;
 * anything else is the usage error for an unknown option or a missing value. */
int gs_other_option(int opt, char **argv, bool *done);

/* Starts a getopt_long loop over a subcommand's argv (argv[0] is the command's name). */
void gs_options_begin(gs_common_options *c, bool *done);

/* Message helpers: everything goes to stderr, prefixed "gpusort: ". */
void gs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
