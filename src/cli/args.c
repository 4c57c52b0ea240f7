#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report.h"

static char message[1200];
static int requested_device = -1; /* for messages about it */

int cli_fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return status;
}

/* The library speaks of its parameters; the user gave options. */
int cli_library_error(int status) {
  const char *m = gpusort_last_error();
  switch (status) {
  case GPUSORT_ERROR_OUTPUT_EXISTS: return cli_fail(status, "%s (use -f to overwrite)", m);
  case GPUSORT_ERROR_OUTPUT_IS_TERMINAL: return cli_fail(status, "%s (use -f to force)", m);
  case GPUSORT_ERROR_NO_SUCH_DEVICE:
    return cli_fail(status, "--device %d: %s; see 'gpusort devices'", requested_device, m);
  case GPUSORT_ERROR_GPU_STALL:
    return cli_fail(status, "%s%s", m, strstr(m, "within") ? " (the limit is set by --timeout)" : "");
  case GPUSORT_ERROR_TOO_LARGE:
    return cli_fail(status, "%s%s", m, strstr(m, "budget") ? " (set by --mem-limit)" : "");
  default: return cli_fail(status, "%s", m);
  }
}

const char *cli_error_message(void) { return message; }

void cli_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("gpusort: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_options_begin(cli_common *c, bool *done) {
  memset(c, 0, sizeof *c); /* every option not given is off */
  c->device = -1;
  c->verbosity = 1;
  c->timeout_s = 60;
  *done = false;
  optind = 1;
  opterr = 0; /* unknown options are reported by cli_other_option */
}

int cli_common_option(cli_common *c, int opt, const char *arg) {
  char *end;
  switch (opt) {
  case 'q': c->verbosity = 0; return 1;
  case 'v': c->verbosity = 2; return 1;
  case OPT_DEVICE: {
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || !*arg || v < 0 || v > 1000000)
      return cli_fail(GPUSORT_ERROR_USAGE, "--device takes a device index (see 'gpusort devices'), not '%s'", arg);
    c->device = (int)v;
    return 1;
  }
  case OPT_TIMEOUT: {
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || *end || !*arg || !(v > 0) || v > 1e6)
      return cli_fail(GPUSORT_ERROR_USAGE, "--timeout takes a positive number of seconds, not '%s'", arg);
    c->timeout_s = v;
    return 1;
  }
  case OPT_MEM_LIMIT:
    if (cli_parse_size(arg, &c->mem_limit) != 0 || c->mem_limit == 0)
      return cli_fail(GPUSORT_ERROR_USAGE, "--mem-limit takes a size such as 512M or 8G (K, M, G, T: powers of 1024), "
                                           "not '%s'", arg);
    return 1;
  case OPT_TEMP_DIR:
    if (!*arg) return cli_fail(GPUSORT_ERROR_USAGE, "--temp-dir takes a directory");
    c->temp_dir = arg;
    return 1;
  case OPT_JSON: c->json = true; return 1;
  case OPT_PROGRESS: c->progress = CLI_PROGRESS_ON; return 1;
  case OPT_NO_PROGRESS: c->progress = CLI_PROGRESS_OFF; return 1;
  default: return 0;
  }
}

int cli_parse_size(const char *text, uint64_t *out) {
  char digits[32];
  size_t len = 0;
  while (text[len] >= '0' && text[len] <= '9' && len + 1 < sizeof digits) len++;
  if (strchr(text, '^') || len + 1 >= sizeof digits) return cli_parse_count(text, out); /* 2^K */
  if (len == 0) return -1;
  memcpy(digits, text, len);
  digits[len] = '\0';
  uint64_t v;
  if (cli_parse_count(digits, &v) != 0) return -1;
  const char *unit = text + len;
  unsigned shift = 0;
  switch (*unit) {
  case '\0': break;
  case 'k': case 'K': shift = 10; break;
  case 'm': case 'M': shift = 20; break;
  case 'g': case 'G': shift = 30; break;
  case 't': case 'T': shift = 40; break;
  default: return -1;
  }
  if (shift) {
    unit++;
    if (strcmp(unit, "") != 0 && strcmp(unit, "B") != 0 && strcmp(unit, "iB") != 0) return -1;
  }
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = v << shift;
  return 0;
}

int cli_output_option(int opt, const char *arg, const char **output, uint32_t *flags) {
  switch (opt) {
  case 'o': *output = arg; return 1;
  case 'f': *flags |= GPUSORT_OVERWRITE; return 1;
  case OPT_SYNC: *flags |= GPUSORT_SYNC; return 1;
  default: return 0;
  }
}

int cli_input_output(int argc, char **argv, const char *command, const char **input, const char **output) {
  const int positional = argc - optind;
  if (positional > 2)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s: too many arguments: '%s' (see 'gpusort %s --help')", command,
                    argv[optind + 2], command);
  *input = positional >= 1 ? argv[optind] : "-"; /* left out: stdin and stdout, as sort(1) */
  if (positional == 2) {
    if (*output)
      return cli_fail(GPUSORT_ERROR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], *output);
    *output = argv[optind + 1];
  }
  if (!*output) *output = "-";
  return GPUSORT_OK;
}

int cli_parse_scan_op(const char *text, gpusort_scan_op *op) {
  static const char *const names[] = {"sum", "min", "max", NULL};
  for (unsigned i = 0; names[i]; i++)
    if (strcmp(text, names[i]) == 0) {
      *op = (gpusort_scan_op)i;
      return GPUSORT_OK;
    }
  return cli_fail(GPUSORT_ERROR_USAGE, "--op takes sum, min or max, not '%s'", text);
}

int cli_parse_count(const char *text, uint64_t *out) {
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

int cli_parse_type(const char *option, const char *text, gpusort_type *out) {
  if (gpusort_type_from_name(text, out) != GPUSORT_OK || *out > GPUSORT_F64)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s: unknown type '%s' (types: u32, i32, f32, u64, i64, f64, or NumPy's uint32, int32, float32, uint64, int64, float64)", option, text);
  return GPUSORT_OK;
}

int cli_parse_field_type(const char *option, const char *text, gpusort_type *out, uint32_t *string_bytes) {
  static const char types[] = "u8, i8, u16, i16, u32, i32, u64, i64, f16, bf16, f32, f64, their big-endian forms "
                              "u16be ... f64be, NumPy's names (uint8 ... float64), or bytes:N";
  if (string_bytes && strncmp(text, "bytes:", 6) == 0) {
    uint64_t n;
    if (cli_parse_count(text + 6, &n) != 0 || n < 1 || n > 128)
      return cli_fail(GPUSORT_ERROR_USAGE, "%s: '%s': bytes:N takes N from 1 to 128", option, text);
    *out = GPUSORT_BYTES;
    *string_bytes = (uint32_t)n;
    return GPUSORT_OK;
  }
  if (string_bytes) *string_bytes = 0; /* (a --keys bytes:N given before is replaced) */
  if (gpusort_type_from_name(text, out) != GPUSORT_OK || *out == GPUSORT_BYTES)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s: unknown type '%s' (types: %.*s)", option, text,
                    (int)(string_bytes ? sizeof types - 1 : strlen(types) - strlen(", or bytes:N")), types);
  return GPUSORT_OK;
}

/* --key OFFSET:TYPE[:desc] (or :asc) */
static int parse_key_part(const char *text, cli_layout *l) {
  if (l->part_count == sizeof l->parts / sizeof l->parts[0])
    return cli_fail(GPUSORT_ERROR_USAGE, "--key: at most %zu parts", sizeof l->parts / sizeof l->parts[0]);
  char buf[64];
  if (strlen(text) >= sizeof buf) return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s' is too long", text);
  strcpy(buf, text);
  gpusort_key_part *part = &l->parts[l->part_count];
  *part = (gpusort_key_part){0};
  l->field_names[l->part_count][0] = '\0';
  if (!(buf[0] >= '0' && buf[0] <= '9')) { /* FIELD[:desc]: a field of a .npy file's structured dtype */
    char *direction = strchr(buf, ':');
    if (direction && strcmp(direction, ":desc") != 0 && strcmp(direction, ":asc") != 0)
      return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s': give OFFSET:TYPE[:desc] (OFFSET a number of bytes) or a .npy "
                      "field as FIELD[:desc]", text);
    if (direction && strcmp(direction, ":desc") == 0) part->flags = GPUSORT_KEY_DESCENDING;
    if (direction) *direction = '\0';
    if (!buf[0] || strlen(buf) >= sizeof l->field_names[0])
      return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s' names no field", text);
    snprintf(l->field_names[l->part_count], sizeof l->field_names[0], "%s", buf);
    l->part_count++;
    return GPUSORT_OK;
  }
  char *type = strchr(buf, ':');
  uint64_t offset;
  if (!type) return cli_fail(GPUSORT_ERROR_USAGE, "--key takes OFFSET:TYPE[:desc], not '%s'", text);
  *type++ = '\0';
  if (cli_parse_count(buf, &offset) != 0 || offset > 0xFFFFFFFFull)
    return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s': the offset is not a number of bytes", text);
  char *direction = strrchr(type, ':');
  if (direction && (strcmp(direction, ":desc") == 0 || strcmp(direction, ":asc") == 0)) {
    if (strcmp(direction, ":desc") == 0) part->flags = GPUSORT_KEY_DESCENDING;
    *direction = '\0';
  } else if (direction && strncmp(type, "bytes:", 6) != 0) {
    return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s': the direction is desc or asc, not '%s'", text, direction + 1);
  } else if (direction && strchr(type + 6, ':')) {
    return cli_fail(GPUSORT_ERROR_USAGE, "--key '%s': the direction is desc or asc, not '%s'", text, direction + 1);
  }
  part->offset = (uint32_t)offset;
  int rc = cli_parse_field_type("--key", type, &part->type, &part->bytes);
  if (rc) return rc;
  l->part_count++;
  return GPUSORT_OK;
}

static int parse_bytes(const char *option, const char *text, unsigned long *out) {
  uint64_t v;
  if (cli_parse_count(text, &v) != 0 || v > 0xFFFFFFFFull)
    return cli_fail(GPUSORT_ERROR_USAGE, "%s takes a number of bytes, not '%s'", option, text);
  *out = (unsigned long)v;
  return GPUSORT_OK;
}

int cli_layout_option(cli_layout *l, int opt, const char *arg) {
  int rc;
  switch (opt) {
  case OPT_KEYS: return (rc = cli_parse_field_type("--keys", arg, &l->key, &l->key_bytes)) ? rc : 1;
  case OPT_VALUES: return (rc = cli_parse_field_type("--values", arg, &l->value, NULL)) ? rc : 1;
  case OPT_KEY: return (rc = parse_key_part(arg, l)) ? rc : 1;
  case OPT_RECORD_SIZE:
    if ((rc = parse_bytes("--record-size", arg, &l->record_bytes))) return rc;
    if (l->record_bytes == 0) return cli_fail(GPUSORT_ERROR_USAGE, "--record-size must be at least 1");
    return 1;
  case OPT_KEY_OFFSET:
    if ((rc = parse_bytes("--key-offset", arg, &l->key_offset))) return rc;
    l->have_key_offset = true;
    return 1;
  default: return 0;
  }
}

int cli_layout_resolve(cli_layout *l, gpusort_layout *layout) {
  unsigned named = 0;
  for (unsigned i = 0; i < l->part_count; i++) {
    named += l->field_names[i][0] != '\0';
    l->fields[i] = l->field_names[i];
  }
  if (named && named != l->part_count)
    return cli_fail(GPUSORT_ERROR_USAGE, "--key: name every part by field (.npy files) or give each OFFSET:TYPE");
  if (named) {
    if (l->key != GPUSORT_TYPE_NONE || l->have_key_offset || l->value != GPUSORT_TYPE_NONE)
      return cli_fail(GPUSORT_ERROR_USAGE, "--key FIELD names the key's fields: leave out --keys, --key-offset and --values");
    const gpusort_layout fields = GPUSORT_LAYOUT_NPY_FIELDS(l->part_count, l->parts, l->fields);
    *layout = fields;
    layout->record_bytes = (uint32_t)l->record_bytes;
    return GPUSORT_OK;
  }
  if (l->key == GPUSORT_TYPE_NONE && !l->part_count && l->value == GPUSORT_TYPE_NONE && !l->record_bytes &&
      !l->have_key_offset) {
    const gpusort_layout from_file = GPUSORT_LAYOUT_NPY; /* a .npy input's, else refused by the library */
    *layout = from_file;
    return GPUSORT_OK;
  }
  if (l->part_count) {
    if (l->key != GPUSORT_TYPE_NONE || l->have_key_offset)
      return cli_fail(GPUSORT_ERROR_USAGE, "--key gives the key's parts: leave out --keys and --key-offset");
    if (l->value != GPUSORT_TYPE_NONE) return cli_fail(GPUSORT_ERROR_USAGE, "--key takes --record-size, not --values");
    if (!l->record_bytes) return cli_fail(GPUSORT_ERROR_USAGE, "--key needs --record-size");
    if (l->record_bytes > 0xFFFFFFFFul)
      return cli_fail(GPUSORT_ERROR_USAGE, "--record-size %lu is too large", l->record_bytes);
    const gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE((uint32_t)l->record_bytes, l->part_count, l->parts);
    *layout = composite;
    return GPUSORT_OK;
  }
  if (l->key == GPUSORT_TYPE_NONE)
    return cli_fail(GPUSORT_ERROR_USAGE,
                    "missing --keys TYPE: say what the file holds (u32, i32, f32, u64, i64, f64, ...)");
  if (l->value != GPUSORT_TYPE_NONE && l->record_bytes)
    return cli_fail(GPUSORT_ERROR_USAGE, "--values and --record-size both describe the records: give one of them");
  if (l->have_key_offset && !l->record_bytes) return cli_fail(GPUSORT_ERROR_USAGE, "--key-offset needs --record-size");
  if (l->record_bytes > 0xFFFFFFFFul)
    return cli_fail(GPUSORT_ERROR_USAGE, "--record-size %lu is too large", l->record_bytes);
  const gpusort_layout resolved =
      GPUSORT_LAYOUT_RECORDS(l->key, (uint32_t)l->record_bytes, (uint32_t)l->key_offset);
  *layout = resolved;
  layout->value = l->value;
  layout->key_bytes = l->key_bytes;
  return GPUSORT_OK;
}

/* The bits --bits counts: the key's (its normalized form's for other forms: the parts'
 * bytes together); a .npy file's key is known only from its header, and the library checks
 * the range then. */
int cli_layout_key_bits(const gpusort_layout *layout, unsigned *key_bits) {
  unsigned bytes = 0;
  if (layout->key == GPUSORT_BYTES) bytes = layout->key_bytes;
  else if (layout->key != GPUSORT_TYPE_NONE) bytes = (unsigned)gpusort_type_size(layout->key);
  for (uint32_t p = 0; p < layout->part_count; p++)
    bytes += layout->parts[p].type == GPUSORT_BYTES ? layout->parts[p].bytes
                                                    : (unsigned)gpusort_type_size(layout->parts[p].type);
  *key_bits = bytes && !layout->part_fields ? bytes * 8 : 8 * 128;
  return GPUSORT_OK;
}

static const char *const sort_algo_names[] = {"auto", "onesweep", "reduce-then-scan", "bitonic", NULL};

int cli_parse_sort_algo(const char *text, gpusort_sort_algo *algo) {
  for (unsigned i = 0; sort_algo_names[i]; i++)
    if (strcmp(text, sort_algo_names[i]) == 0) {
      *algo = (gpusort_sort_algo)i;
      return GPUSORT_OK;
    }
  const char *near = cli_nearest(text, sort_algo_names);
  if (near) return cli_fail(GPUSORT_ERROR_USAGE, "--algo: unknown algorithm '%s' (did you mean '%s'?)", text, near);
  return cli_fail(GPUSORT_ERROR_USAGE, "--algo takes auto, onesweep, reduce-then-scan or bitonic, not '%s'", text);
}

const char *cli_sort_algo_name(gpusort_sort_algo algo) {
  return (unsigned)algo <= GPUSORT_SORT_BITONIC ? sort_algo_names[algo] : "unknown";
}

int cli_parse_bits(const char *text, unsigned key_bits, unsigned *lo, unsigned *hi) {
  char *end;
  errno = 0;
  unsigned long a = strtoul(text, &end, 10), b = 0;
  bool ok = !errno && end != text && *end == ':' && end[1] >= '0' && end[1] <= '9';
  if (ok) {
    const char *second = end + 1;
    b = strtoul(second, &end, 10);
    ok = !errno && !*end;
  }
  if (!ok) return cli_fail(GPUSORT_ERROR_USAGE, "--bits takes LO:HI, e.g. 0:16, not '%s'", text);
  if (!(a < b && b <= key_bits))
    return cli_fail(GPUSORT_ERROR_USAGE, "--bits %s: need 0 <= LO < HI <= %u for %u-bit keys", text, key_bits,
                    key_bits);
  *lo = (unsigned)a, *hi = (unsigned)b;
  return GPUSORT_OK;
}

/* Edit distance (insertions, deletions, substitutions, adjacent swaps), capped at 9. */
static unsigned distance(const char *a, const char *b) {
  const size_t n = strlen(a), m = strlen(b);
  if (n > 40 || m > 40) return 9;
  unsigned d[42][42];
  for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m] < 9 ? d[n][m] : 9;
}

const char *cli_nearest(const char *typed, const char *const *names) {
  const char *best = NULL;
  unsigned best_d = strlen(typed) <= 4 ? 1 : 2; /* farther than this is no suggestion */
  for (; *names; names++) {
    const unsigned d = distance(typed, *names);
    if (d <= best_d && (!best || d < best_d)) best = *names, best_d = d;
  }
  return best;
}

int cli_other_option(int opt, char **argv, const struct option *longopts, bool *done) {
  /* argv[0] is the command's name, or the program's when none was given: then the whole help */
  const char *named = NULL, *command = "sort";
  for (const char *const *c = cli_command_names; *c; c++)
    if (strcmp(argv[0], *c) == 0) named = command = *c;
  switch (opt) {
  case 'h': cli_print_help(named); *done = true; return GPUSORT_OK;
  case 'V': cli_print_version(); *done = true; return GPUSORT_OK;
  case ':': return cli_fail(GPUSORT_ERROR_USAGE, "option '%s' needs a value (see 'gpusort %s --help')", argv[optind - 1], command);
  default: break;
  }
  if (optopt) /* a short option, perhaps inside a bundle such as -fZ: named alone */
    return cli_fail(GPUSORT_ERROR_USAGE, "unknown option '-%c' (see 'gpusort %s --help')", optopt, command);
  char typed[64];
  const char *arg = argv[optind - 1];
  snprintf(typed, sizeof typed, "%.*s", (int)strcspn(arg + (arg[0] == '-' && arg[1] == '-' ? 2 : 0), "="),
           arg + (arg[0] == '-' && arg[1] == '-' ? 2 : 0));
  const char *names[128];
  size_t count = 0;
  for (const struct option *o = longopts; o && o->name && count + 1 < sizeof names / sizeof names[0]; o++)
    names[count++] = o->name;
  names[count] = NULL;
  const char *near = cli_nearest(typed, names);
  if (near)
    return cli_fail(GPUSORT_ERROR_USAGE, "unknown option '--%s' (did you mean '--%s'?)", typed, near);
  return cli_fail(GPUSORT_ERROR_USAGE, "unknown option '%s' (see 'gpusort %s --help')", arg, command);
}

int cli_open(const cli_common *c, gpusort_context **ctx) {
  gpusort_context_params params = GPUSORT_CONTEXT_PARAMS_INIT;
  params.device = c->device;
  params.timeout_seconds = c->timeout_s;
  params.flags = GPUSORT_OPEN_DEFERRED; /* a file job opens the device while it reads the input */
  params.memory_budget = c->mem_limit;
  params.temp_dir = c->temp_dir;
  cli_progress_setup(c->progress, c->verbosity, &params.progress, &params.progress_user);
  requested_device = c->device;
  int rc = gpusort_open(ctx, &params);
  return rc ? cli_library_error(rc) : GPUSORT_OK;
}
