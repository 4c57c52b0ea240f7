/* Option parsing shared by the subcommands, and the message a failed command prints. The
 * command line uses only the public API (gpusort.h). */
#ifndef GS_CLI_ARGS_H
#define GS_CLI_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpusort.h"

/* Options every subcommand takes. */
typedef enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF } cli_progress_mode;

typedef struct {
  int device;       /* -1: choose */
  int verbosity;    /* 0 quiet, 1 normal, 2 verbose */
  double timeout_s; /* bound on each GPU wait */
  uint64_t mem_limit; /* --mem-limit: GPU and staging memory in bytes; 0: the default */
  const char *temp_dir;
  cli_progress_mode progress;
  bool json;        /* --json: the report as one JSON object */
} cli_common;

/* The layout options as given, before they are checked against each other. */
typedef struct {
  gpusort_type key, value;
  uint32_t key_bytes;         /* --keys bytes:N */
  unsigned long record_bytes; /* 0: not given */
  unsigned long key_offset;
  bool have_key_offset;
  gpusort_key_part parts[16]; /* --key OFFSET:TYPE[:desc] or FIELD[:desc], in the order given */
  unsigned part_count;
  char field_names[16][64];   /* --key FIELD: a .npy field's name ("" for OFFSET:TYPE parts) */
  const char *fields[16];
} cli_layout;

/* getopt_long codes of the long-only options. */
enum {
  OPT_DEVICE = 1000, OPT_TIMEOUT, OPT_KEYS, OPT_VERIFY, OPT_DIST, OPT_SEED, OPT_SIZES, OPT_REPS,
  OPT_VALUES, OPT_RECORD_SIZE, OPT_KEY_OFFSET, OPT_DESCENDING, OPT_BITS, OPT_ARGSORT, OPT_INDEX_TYPE,
  OPT_SCAN_ALGOS, OPT_SYNC, OPT_OP, OPT_INCLUSIVE, OPT_EXCLUSIVE, OPT_ACC, OPT_ALGO, OPT_DETERMINISTIC,
  OPT_MEM_LIMIT, OPT_TEMP_DIR, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_JSON, OPT_KEY, OPT_WHERE, OPT_COUNT_TYPE, OPT_UNIQUE, OPT_RLE,
  OPT_BENCH_COMPACT
};

/* getopt_long entries of the layout options (--keys, --values, --record-size, --key-offset,
 * --key). */
#define CLI_LAYOUT_OPTIONS                                                                       \
  {"keys", required_argument, NULL, OPT_KEYS}, {"values", required_argument, NULL, OPT_VALUES},  \
      {"record-size", required_argument, NULL, OPT_RECORD_SIZE},                                 \
      {"key-offset", required_argument, NULL, OPT_KEY_OFFSET}, {"key", required_argument, NULL, OPT_KEY}

/* getopt_long entries of the options of commands that write an OUTPUT (-o, -f, --sync). */
#define CLI_OUTPUT_OPTIONS                                                                       \
  {"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},                   \
      {"sync", no_argument, NULL, OPT_SYNC}

/* getopt_long entries of the options every command takes. */
#define CLI_COMMON_OPTIONS                                                                            \
  {"device", required_argument, NULL, OPT_DEVICE}, {"timeout", required_argument, NULL, OPT_TIMEOUT}, \
      {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},                                          \
      {"temp-dir", required_argument, NULL, OPT_TEMP_DIR}, {"progress", no_argument, NULL, OPT_PROGRESS}, \
      {"no-progress", no_argument, NULL, OPT_NO_PROGRESS}, {"json", no_argument, NULL, OPT_JSON},     \
      {"quiet", no_argument, NULL, 'q'},                                                              \
      {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},                          \
      {"version", no_argument, NULL, 'V'}

/* Starts a getopt_long loop over a subcommand's argv (argv[0] is the command's name). */
void cli_options_begin(cli_common *c, bool *done);

/* Handles a common option (q, v, OPT_DEVICE, OPT_TIMEOUT). Returns 1 if handled, 0 if
 * not a common option, or a status on a bad value. */
int cli_common_option(cli_common *c, int opt, const char *arg);

/* Handles a layout option. Returns 1 if handled, 0 if not a layout option, or a status. */
int cli_layout_option(cli_layout *l, int opt, const char *arg);

/* The rest of a getopt_long loop: -h/--help (the help of the command argv[0] names) and
 * -V/--version print and set *done; anything else is the usage error for an unknown option
 * (named alone, also inside a bundle such as -fZ, with the nearest of `longopts` suggested)
 * or a missing value. */
int cli_other_option(int opt, char **argv, const struct option *longopts, bool *done);

/* The name among `names` (NULL-terminated) nearest to `typed` within a small edit distance,
 * or NULL. */
const char *cli_nearest(const char *typed, const char *const *names);

/* The layout the options describe, with the checks only the command line can make. With
 * neither --keys nor --key, the layout of a .npy input's header (the library refuses it for
 * other inputs). */
int cli_layout_resolve(cli_layout *l, gpusort_layout *layout);

/* The bits of the layout's key, for --bits: a usage error for keys of other forms. */
int cli_layout_key_bits(const gpusort_layout *layout, unsigned *key_bits);

/* Handles -o, -f and --sync: *output, and GPUSORT_OVERWRITE and GPUSORT_SYNC in *flags.
 * Returns 1 if handled, 0 if not one of them. */
int cli_output_option(int opt, const char *arg, const char **output, uint32_t *flags);

/* The positional INPUT [OUTPUT] left after the options of `command`: those left out are "-"
 * (stdin, stdout); OUTPUT may come from -o instead (*output already set), not from both. */
int cli_input_output(int argc, char **argv, const char *command, const char **input, const char **output);

/* --op of scan, reduce and reduce-by-key: sum, min or max. */
int cli_parse_scan_op(const char *text, gpusort_scan_op *op);

/* A count: decimal digits, or 2^K. */
int cli_parse_count(const char *text, uint64_t *out);

/* A size in bytes: a count, optionally followed by K, M, G or T (powers of 1024; "KiB",
 * "MB" and lower case also read as such). */
int cli_parse_size(const char *text, uint64_t *out);

/* A type name, with a usage error naming `option` for unknown types. */
int cli_parse_type(const char *option, const char *text, gpusort_type *out);

/* A key or value type of any form: the six, narrow, half and big-endian types, NumPy's names,
 * and (with `string_bytes`) bytes:N, whose N goes to *string_bytes. */
int cli_parse_field_type(const char *option, const char *text, gpusort_type *out, uint32_t *string_bytes);

/* --algo of sort and bench: auto, onesweep, reduce-then-scan or bitonic. */
int cli_parse_sort_algo(const char *text, gpusort_sort_algo *algo);

/* "auto", "onesweep", "reduce-then-scan", "bitonic". */
const char *cli_sort_algo_name(gpusort_sort_algo algo);

/* --bits LO:HI: 0 <= LO < HI <= key_bits. */
int cli_parse_bits(const char *text, unsigned key_bits, unsigned *lo, unsigned *hi);

/* Opens a context for the command, its device opened when a job first needs it. */
int cli_open(const cli_common *c, gpusort_context **ctx);

/* The message main() prints for a failed command: cli_fail sets it; cli_library_error takes
 * the library's, adding what only the command line knows (which option sets what). Both
 * return `status`. */
int cli_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_library_error(int status);
const char *cli_error_message(void);

/* Messages on stderr, prefixed "gpusort: ". */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
