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
enum { OPT_DEVICE = 1000, OPT_TIMEOUT, OPT_KEYS, OPT_VERIFY, OPT_DIST, OPT_SEED, OPT_SIZES, OPT_REPS };

void gs_common_defaults(gs_common_options *c);

/* Handles a common option (q, v, OPT_DEVICE, OPT_TIMEOUT). Returns 1 if handled, 0 if
 * not a common option, or a status on a bad value. */
int gs_common_option(gs_common_options *c, int opt, const char *arg);

/* A count: decimal digits, or 2^K. */
int gs_parse_count(const char *text, uint64_t *out);

/* --keys TYPE, with a usage error for unknown or not yet supported types. */
int gs_parse_key_type(const char *text, gs_key_type *out);

/* The rest of a getopt_long loop: -h/--help and -V/--version print and set *done;
 * anything else is the usage error for an unknown option or a missing value. */
int gs_other_option(int opt, char **argv, bool *done);

/* Starts a getopt_long loop over a subcommand's argv (argv[0] is the command's name). */
void gs_options_begin(gs_common_options *c, bool *done);

/* Message helpers: everything goes to stderr, prefixed "gpusort: ". */
void gs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
