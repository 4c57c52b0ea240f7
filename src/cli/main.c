/* gpusort: sort binary files of fixed-width keys on the GPU. The command line is a client of
 * libgpusort (gpusort.h) and of nothing else: it parses options, calls the library, and
 * prints reports and messages. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"

/* The help, in sections: the whole of it for gpusort --help, a command's own for
 * gpusort help COMMAND and gpusort COMMAND --help. */
static const char help_usage[] =
    "Usage: gpusort [sort] [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort check [OPTIONS] [FILE]\n"
    "       gpusort scan [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort reduce [OPTIONS] [INPUT]\n"
    "       gpusort select --where EXPR [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort partition --where EXPR [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort unique [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort rle [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort reduce-by-key [OPTIONS] [INPUT [OUTPUT]]\n"
    "       gpusort gen [OPTIONS] -n N [OUTPUT]\n"
    "       gpusort bench [OPTIONS]\n"
    "       gpusort devices [OPTIONS]\n"
    "       gpusort help [COMMAND]\n";

static const char help_intro[] =
    "\n"
    "Sort and scan binary files of fixed-width numbers on the GPU with Vulkan compute\n"
    "(Onesweep LSD radix sort: 8-bit digits, decoupled look-back; the sort is stable).\n"
    "\n"
    "INPUT and OUTPUT are paths; - is stdin or stdout, as are those left out (binary data goes\n"
    "to a terminal only with -f). A regular INPUT is memory-mapped and\n"
    "never modified. OUTPUT is written to a temporary file beside it and renamed when\n"
    "complete, so a failed run leaves no partial output; through a symbolic link, its target is\n"
    "replaced and the link stays; /dev/stdout and /dev/fd/N are written through the descriptor.\n"
    "An empty INPUT gives an empty OUTPUT.\n"
    "Inputs of any size: one larger than the memory budget is sorted out of core (its keys'\n"
    "top bits partition it into bins that are sorted in core), scanned in chunks, and a stream\n"
    "past the budget is spilled to a scratch file.\n";

static const char help_layout[] =
    "\n"
    "Layout of INPUT (sort, check, gen):\n"
    "  --keys TYPE        key type (required: a binary file does not say): u32, i32, f32,\n"
    "                     u64, i64, f64; u8, i8, u16, i16, f16, bf16; big-endian u16be,\n"
    "                     i16be, u32be, i32be, f32be, u64be, i64be, f64be; NumPy's names\n"
    "                     (uint8 ... float64); bytes:N (N from 1 to 128: unsigned bytes, the\n"
    "                     first most significant, as memcmp). Integers sort numerically;\n"
    "                     floats by IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 <\n"
    "                     ... < +inf < +NaN, NaNs among themselves by their bits\n"
    "  --values TYPE      records are (key, value) pairs, packed without padding; the value\n"
    "                     (any of the types but bytes:N) moves with its key\n"
    "  --record-size BYTES  fixed-size records of BYTES bytes, moved whole...\n"
    "  --key-offset BYTES   ...ordered by the key at this byte offset (default 0)\n"
    "  --key OFFSET:TYPE[:desc]  ...or by a composite key: repeat for each part, most\n"
    "                     significant first, each ascending or :desc (with --record-size,\n"
    "                     instead of --keys); in a .npy file, --key FIELD[:desc] names fields\n"
    "A NumPy .npy INPUT (format 1.0 to 3.0) says what it holds: --keys may be left out, and\n"
    "the output is a .npy file of the same dtype (argsort: int64 indices, as numpy.argsort).\n"
    "Keys and values are in the machine's byte order (little-endian on x86 and Arm) unless\n"
    "their type ends in be. Keys other than u32, i32, f32, u64, i64 and f64 sort by their\n"
    "normalized form (a bit range counts its bits); their argsort runs in core only (as large\n"
    "as the device and the memory budget allow).\n";

static const char help_sort[] =
    "\n"
    "sort (the default command):\n"
    "  --descending       largest key first; still stable (equal keys keep input order)\n"
    "  --bits LO:HI       sort on bits LO to HI-1 of the ordered key only (the key mapped\n"
    "                     so that unsigned order is its order, complemented for\n"
    "                     --descending); keys equal on those bits keep input order\n"
    "  --argsort          write the records' indices in sorted order instead of the data\n"
    "  --index-type T     u32 or u64 indices for --argsort (default u32 below 2^32 records)\n"
    "  --unique           then, on the GPU, keep the first record of each run of equal keys:\n"
    "                     the distinct keys, each with its first record in input order;\n"
    "                     prints 'R runs in N records' (JSON: runs)\n"
    "  --rle              then, on the GPU, write one (key, count) record per distinct key, as\n"
    "                     'gpusort rle' does (keys alone; --count-type u32 or u64, default u32).\n"
    "                     --unique and --rle run in core only, on the six GPU key types,\n"
    "                     without --verify, --bits or --argsort\n"
    "  --algo A           auto (default), onesweep, reduce-then-scan or bitonic; all give the\n"
    "                     same output. onesweep: one pass per 8-bit digit with look-back;\n"
    "                     reduce-then-scan: three steps per digit, no workgroup waits on\n"
    "                     another (what auto picks on devices without forward progress,\n"
    "                     and on lavapipe);\n"
    "                     bitonic: a sorting network, for small inputs (at most 2^31 keys)\n"
    "  -o, --output FILE  write the output to FILE (instead of the OUTPUT argument)\n"
    "  -f, --force        overwrite an existing OUTPUT; allow binary data to a terminal\n"
    "  --sync             flush OUTPUT and its directory entry to storage before success (so\n"
    "                     it survives a power loss); by default, as with cp, the OS decides\n"
    "  --verify           check on the host that the output is sorted and a permutation of\n"
    "                     the input (for --argsort: the indices are a permutation, in key\n"
    "                     order, equal keys in input order); if not, write no output, exit 3\n";

static const char help_check[] =
    "\n"
    "check: exit 0 if FILE is sorted by its key, 3 if not. Takes the layout options,\n"
    "  --descending and --bits LO:HI as sort does.\n";

static const char help_scan[] =
    "\n"
    "scan: running sums, minima or maxima of INPUT (same file handling and report as sort).\n"
    "  --keys TYPE        element type: u32, i32, f32, u64, i64, f64, or u8, i8, u16, i16,\n"
    "                     f16, bf16 and the big-endian forms u16be ... f64be, widened exactly\n"
    "                     and written back in that type (required unless INPUT is a .npy file)\n"
    "  --op OP            sum (default), min or max; integer sums wrap modulo 2^width; min and\n"
    "                     max order floats by totalOrder, as the sort does\n"
    "  --inclusive        element i includes input i (the default)\n"
    "  --exclusive        element i combines inputs 0..i-1; the first is the identity (0 for\n"
    "                     sums, the type's largest value for min, its smallest for max)\n"
    "  --acc TYPE         accumulate and write u64, i64 or f64 (u32 counts that never wrap),\n"
    "                     or u32, i32 for 8- and 16-bit integers; in the elements' byte order\n"
    "  --algo A           lookback (single pass, decoupled look-back) or reduce-then-scan (no\n"
    "                     workgroup waits on another); default lookback, but reduce-then-scan\n"
    "                     for float sums, whose fixed association order makes them\n"
    "                     bit-identical run to run. Integers and min/max agree exactly\n"
    "  --deterministic    guarantee bit-identical output run to run (refuses lookback float sums)\n"
    "  -o, --output FILE, -f, --force, --sync  as for sort\n";

static const char help_reduce[] =
    "\n"
    "reduce: print the sum, minimum or maximum of all of INPUT on stdout, as text.\n"
    "  Takes --keys, --op, --acc and --deterministic (reductions always combine in a fixed order).\n";

/* The look-back family: what its five commands share, then each one's own options. */
static const char help_compact[] =
    "\n"
    "select, partition, unique, rle, reduce-by-key: one GPU pass over INPUT each, with the\n"
    "same file handling, report and checksum as sort. INPUT holds numeric keys (any type but\n"
    "bytes:N), alone, in pairs or in records; records are written whole, in\n"
    "their input order. A .npy INPUT says its layout and gives a .npy OUTPUT. The count of\n"
    "what was kept goes to stderr (not with -q), and into the --json object. Keys are equal\n"
    "(unique, rle, reduce-by-key) when their stored bits are: -0.0 and +0.0 differ, and a\n"
    "NaN equals only a NaN of the same bits.\n"
    "  --keys TYPE        key type: u32, i32, f32, u64, i64, f64, u8, i8, u16, i16, f16, bf16,\n"
    "                     u16be ... f64be or NumPy's names (required unless INPUT is a .npy file)\n"
    "  --values TYPE      records are (key, value) pairs packed without padding; the value\n"
    "                     (any type but bytes:N) moves with its key\n"
    "  --record-size BYTES  records of BYTES bytes, moved whole...\n"
    "  --key-offset BYTES   ...with the key at this byte offset (default 0)\n"
    "  --key OFFSET:TYPE  the same as --keys TYPE --key-offset OFFSET; in a .npy file of a\n"
    "                     structured dtype, --key FIELD names the key's field (for\n"
    "                     reduce-by-key: of two fields, the key, then the value)\n"
    "  -o, --output FILE, -f, --force, --sync  as for sort\n";

static const char help_select[] =
    "\n"
    "select: keep the records whose key satisfies EXPR, in input order; prints\n"
    "'kept K of N records' (JSON: kept).\n"
    "  --where EXPR       the test on the key (required; see Expressions)\n";

static const char help_partition[] =
    "\n"
    "partition: the records whose key satisfies EXPR, then all the others, both parts in\n"
    "input order (a stable partition of every record); prints 'split at K of N records',\n"
    "K the number that satisfy EXPR (JSON: split).\n"
    "  --where EXPR       the test on the key (required; see Expressions)\n";

static const char help_unique[] =
    "\n"
    "unique: drop consecutive duplicate keys: keep the first record of each run of equal\n"
    "keys (sort first for one record per key); prints 'R runs in N records' (JSON: runs).\n";

static const char help_rle[] =
    "\n"
    "rle: one (key, count) record per run of consecutive equal keys, packed without\n"
    "padding; prints 'R runs in N records' (JSON: runs).\n"
    "  --count-type T     u32 (default) or u64 counts; a run too long for a u32 count is an\n"
    "                     error unless u64\n";

static const char help_reduce_by_key[] =
    "\n"
    "reduce-by-key: one (key, value) record per run of consecutive equal keys of (key,\n"
    "value) pairs whose values are u32, i32, f32, u64, i64 or f64, packed without padding:\n"
    "the run's values combined; prints 'R runs in N records' (JSON: runs).\n"
    "  --op OP            sum (default), min or max, as for scan: integer sums wrap at the\n"
    "                     value's width; min and max order floats by totalOrder\n"
    "  --acc TYPE         accumulate in u64, i64 or f64, the type of the output's values then\n"
    "                     (at least as wide as the values, a float for float values)\n"
    "Float sums round, adding each run's values in a fixed order.\n";

static const char help_expressions[] =
    "\n"
    "Expressions (EXPR of --where): tests of the key against constants of its type.\n"
    "  < <= > >= == != C  compare with C, e.g. '>= 10', '< 0.5', '== 7', '!= 0'\n"
    "  in [A,B)           A <= key < B\n"
    "  isnan, notnan      whether a float key is a NaN\n"
    "  & M == C (or !=)   the key's stored bits AND M compared with C, e.g. '& 0xff == 3'\n"
    "  not, and, or, ( )  combine tests; not binds tightest, then and, then or\n"
    "A test may start with the word key ('key >= 10'). Constants are decimal or 0x hex\n"
    "(integers, and the bits of a mask test), or decimal with inf for floats. Float\n"
    "comparisons are IEEE ones: -0.0 == +0.0, and a NaN satisfies only !=. Quote EXPR for\n"
    "the shell. A malformed EXPR is a usage error naming the offending token.\n";

static const char help_gen[] =
    "\n"
    "gen: write deterministic test data (the same options give the same bytes). Takes the\n"
    "layout options (keys of every form, composite keys too): pair values are the record's\n"
    "index (as the value's type); record bytes around the key are random. Keys other than\n"
    "the six GPU types are drawn over their normalized form: sorted is ascending in the\n"
    "key's own order (each part's direction included), lowbits and highbits vary the form's\n"
    "lowest and highest bits.\n"
    "  -n N               number of records: decimal, or 2^K\n"
    "  --dist D           uniform (default), sorted, reversed, equal, few[:K] (K distinct\n"
    "                     values, default 16), entropy[:K] (AND of K uniform words,\n"
    "                     default 2), lowbits[:B] / highbits[:B] (only the lowest / highest\n"
    "                     B bits vary, default 8), special (edge values mixed with ordinary\n"
    "                     ones: +-0, +-inf, NaNs, denormals for floats; extremes for integers)\n"
    "  --seed S           seed (default 1)\n"
    "  -f, --force, --sync  as for sort\n";

static const char help_bench[] =
    "\n"
    "bench: sort device-resident keys of several sizes (uniform random unless --dist) and\n"
    "print the median GPU time beside a compute-kernel copy of the same bytes, measured in\n"
    "the same run.\n"
    "  --keys TYPE        key type (default u32)\n"
    "  --values TYPE      sort (key, value) pairs\n"
    "  --sizes LIST       comma-separated key counts, e.g. 2^20,2^24,1000000\n"
    "                     (default 2^16,2^20,2^24,2^26,2^28, those that fit the device)\n"
    "  --reps N           timed runs per size (default 15), after 0.4 s of warm-up\n"
    "  --algo A           the sort algorithm, as for sort (default auto)\n"
    "  --dist D           the keys' distribution, as for gen (default uniform)\n"
    "  --scan-algos       time u32 exclusive sums instead: the look-back scan, reduce-then-scan,\n"
    "                     and textbook Hillis-Steele, Blelloch (global and shared memory) and\n"
    "                     subgroup-blocked scans (the look-back scan's runs after the first\n"
    "                     skip clearing its state, as a file's later chunks do)\n"
    "  --compact          time the look-back family on u32 keys instead: select and partition\n"
    "                     of uniform keys (the upper half kept); unique, rle and reduce-by-key\n"
    "                     of sorted keys with about n/16 distinct values (CUB's inputs)\n";

static const char help_devices[] =
    "\n"
    "devices: list the Vulkan devices: index, type, subgroup size, device-local memory,\n"
    "largest buffer, name and driver; * marks the one chosen by default. With -v, also the\n"
    "configuration gpusort runs with on each: its preset, the sort and scan tiles, the\n"
    "look-back family's workgroup and sub-tiles. With --json, one object a line for each.\n";

static const char help_common[] =
    "\n"
    "Options of every command:\n"
    "  --device N         use device N of 'gpusort devices' (default: the first discrete\n"
    "                     GPU, else integrated, virtual, then CPU)\n"
    "  --timeout SEC      fail a GPU stage that runs longer than SEC seconds (default 60)\n"
    "  --mem-limit SIZE   GPU and pinned staging memory a job may use, e.g. 512M or 8G (K, M,\n"
    "                     G, T: powers of 1024; default 3/4 of the free device memory); larger\n"
    "                     jobs run out of core within it\n"
    "  --temp-dir DIR     scratch files (a spilled stream, out-of-core work) go to DIR (default:\n"
    "                     OUTPUT's directory, else $TMPDIR, else /tmp); they never outlive the run\n"
    "  --progress, --no-progress  show or hide the progress line of jobs over a second\n"
    "                     (default: shown when stderr is a terminal)\n"
    "  --json             print the report as one JSON object instead (on stdout, or on\n"
    "                     stderr when stdout carries the data): command, records, bytes,\n"
    "                     device, stages (name: seconds), total_seconds, xxh3, output, ...;\n"
    "                     bench prints one object per size, reduce adds its result, the\n"
    "                     look-back family its count (kept, split or runs), check\n"
    "                     sorted (true or false)\n"
    "  -q, --quiet        print errors only\n"
    "  -v, --verbose      print more: tile shape, histogram and per-pass GPU times\n"
    "  -h, --help         print this help and exit\n"
    "  -V, --version      print the version and exit\n";

static const char help_report[] =
    "\n"
    "Report (on stderr unless -q): the device; the number of records and bytes; the time to\n"
    "read, upload, sort (scan, compact) on the GPU, download and write; the GPU stage's and\n"
    "the end-to-end throughput; the count of select, partition, unique, rle and\n"
    "reduce-by-key; then the output's checksum as 'XXH3 (OUTPUT) = <16 hex digits>', the\n"
    "line 'xxhsum -H3 --tag OUTPUT' prints, so that 'xxhsum -c' accepts it.\n";

static const char help_exit[] =
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  runtime failure: I/O (a full disk), device, memory, a GPU stage past --timeout, a\n"
    "     --mem-limit too small for any sort, a run too long for rle's u32 counts\n"
    "  2  usage error or malformed input: bad option or combination, a malformed EXPR, a file\n"
    "     size that is not a whole number of records, OUTPUT exists without -f, OUTPUT is INPUT\n"
    "  3  verification failure: --verify found a bad output, or check found disorder\n";

static const char help_floats[] =
    "\n"
    "Float sums round; for element k the error against exact summation is at most\n"
    "gamma_D * (|x_0| + ... + |x_k|), gamma_D = D*u/(1 - D*u), u = 2^-24 (f32) or 2^-53 (f64),\n"
    "D = (k + 1)/1024 + 64 (the additions on the path from an input to a result).\n";

/* The sections of each command's help, after its usage line. */
static const struct {
  const char *name, *usage;
  const char *sections[8];
} command_help[] = {
    {"sort", "Usage: gpusort [sort] [OPTIONS] [INPUT [OUTPUT]]\n", {help_intro, help_layout, help_sort, help_common, help_report, help_exit}},
    {"check", "Usage: gpusort check [OPTIONS] [FILE]\n", {help_layout, help_check, help_common, help_exit}},
    {"scan", "Usage: gpusort scan [OPTIONS] [INPUT [OUTPUT]]\n", {help_scan, help_common, help_report, help_exit, help_floats}},
    {"reduce", "Usage: gpusort reduce [OPTIONS] [INPUT]\n", {help_reduce, help_common, help_exit, help_floats}},
    {"select", "Usage: gpusort select --where EXPR [OPTIONS] [INPUT [OUTPUT]]\n",
     {help_compact, help_select, help_expressions, help_common, help_report, help_exit}},
    {"partition", "Usage: gpusort partition --where EXPR [OPTIONS] [INPUT [OUTPUT]]\n",
     {help_compact, help_partition, help_expressions, help_common, help_report, help_exit}},
    {"unique", "Usage: gpusort unique [OPTIONS] [INPUT [OUTPUT]]\n", {help_compact, help_unique, help_common, help_report, help_exit}},
    {"rle", "Usage: gpusort rle [OPTIONS] [INPUT [OUTPUT]]\n", {help_compact, help_rle, help_common, help_report, help_exit}},
    {"reduce-by-key", "Usage: gpusort reduce-by-key [OPTIONS] [INPUT [OUTPUT]]\n",
     {help_compact, help_reduce_by_key, help_common, help_report, help_exit}},
    {"gen", "Usage: gpusort gen [OPTIONS] -n N [OUTPUT]\n", {help_layout, help_gen, help_common, help_exit}},
    {"bench", "Usage: gpusort bench [OPTIONS]\n", {help_bench, help_common, help_exit}},
    {"devices", "Usage: gpusort devices [OPTIONS]\n", {help_devices, help_common, help_exit}},
};

void cli_print_help(const char *command) {
  for (size_t i = 0; command && i < sizeof command_help / sizeof command_help[0]; i++) {
    if (strcmp(command, command_help[i].name) != 0) continue;
    fputs(command_help[i].usage, stdout);
    for (size_t k = 0; k < 8 && command_help[i].sections[k]; k++) fputs(command_help[i].sections[k], stdout);
    return;
  }
  const char *all[] = {help_usage,  help_intro,   help_layout, help_sort,      help_check,  help_scan,
                       help_reduce, help_compact, help_select, help_partition, help_unique, help_rle,
                       help_reduce_by_key, help_expressions, help_gen, help_bench, help_devices,
                       help_common, help_report,  help_exit,   help_floats};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) fputs(all[k], stdout);
}

void cli_print_version(void) { printf("gpusort %s\n", gpusort_version_string()); }

static void write_stderr(const char *text) {
  size_t left = 0;
  while (text[left]) left++;
  while (left > 0) {
    const ssize_t put = write(STDERR_FILENO, text, left);
    if (put <= 0) return;
    text += put, left -= (size_t)put;
  }
}

/* An interrupted run leaves no temporary file: remove them, then die of the signal as before
 * (the shell sees 128 + the signal: 130 for SIGINT, 143 for SIGTERM). A SIGBUS in a file a job
 * has mapped (an input truncated by another process) is a runtime failure that says so. */
static void on_fatal_signal(int sig, siginfo_t *info, void *context) {
  (void)context;
  gpusort_remove_temporary_files();
  /* (si_code > 0: raised by the kernel at si_addr, not sent by kill) */
  const char *fault = sig == SIGBUS && info && info->si_code > 0 ? gpusort_fault_message(info->si_addr) : NULL;
  if (fault) {
    /* several threads may fault at once: one says why and ends the process */
    static atomic_flag reported = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&reported))
      for (;;) pause();
    write_stderr("gpusort: ");
    write_stderr(fault);
    write_stderr("\n");
    _exit(1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void handle_fatal_signals(void) {
  /* also the faults a truncated input mapping (SIGBUS) or a bug (SIGSEGV) raise */
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGBUS, SIGSEGV};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa = {0};
    /* keep a disposition of "ignore" (e.g. nohup) as it was */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
  /* A file-size limit (ulimit -f) fails the write past it with EFBIG, reported like a full
   * disk, rather than killing the process with its temporary file left behind. */
  signal(SIGXFSZ, SIG_IGN);
}

const char *const cli_command_names[] = {"sort", "check", "scan", "reduce", "select", "partition", "unique", "rle",
                                         "reduce-by-key", "gen", "bench", "devices", "help", NULL};

/* `gpusort help [COMMAND]` */
static int cli_help(int argc, char **argv) {
  if (argc > 2) return cli_fail(GPUSORT_ERROR_USAGE, "help: too many arguments: '%s'", argv[2]);
  if (argc == 2) {
    bool known = false;
    for (const char *const *n = cli_command_names; *n; n++) known |= strcmp(argv[1], *n) == 0;
    if (!known) {
      const char *near = cli_nearest(argv[1], cli_command_names);
      return near ? cli_fail(GPUSORT_ERROR_USAGE, "help: unknown command '%s' (did you mean '%s'?)", argv[1], near)
                  : cli_fail(GPUSORT_ERROR_USAGE, "help: unknown command '%s' (commands: sort, check, scan, reduce, "
                                                  "select, partition, unique, rle, reduce-by-key, gen, bench, devices)",
                             argv[1]);
    }
  }
  cli_print_help(argc == 2 && strcmp(argv[1], "help") != 0 ? argv[1] : NULL);
  return GPUSORT_OK;
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } commands[] = {{"sort", cli_sort},           {"check", cli_check},         {"scan", cli_scan},
                  {"reduce", cli_reduce},       {"select", cli_compact},      {"partition", cli_compact},
                  {"unique", cli_compact},      {"rle", cli_compact},         {"reduce-by-key", cli_compact},
                  {"gen", cli_gen},             {"bench", cli_bench},         {"devices", cli_devices},
                  {"help", cli_help}};
  int (*command)(int, char **) = cli_sort;
  int shift = 0;
  for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) command = commands[i].fn, shift = 1;
  /* A first word that is no command, no option and no existing file, but near a command's
   * name, is a mistyped command rather than the INPUT of a sort. */
  const char *near = argc > 1 && !shift && argv[1][0] != '-' && access(argv[1], F_OK) != 0 ? cli_nearest(argv[1], cli_command_names) : NULL;
  handle_fatal_signals();
  const int status = near ? cli_fail(GPUSORT_ERROR_USAGE, "unknown command '%s' (did you mean '%s'?)", argv[1], near)
                          : command(argc - shift, argv + shift);
  if (status != GPUSORT_OK && cli_error_message()[0]) fprintf(stderr, "gpusort: %s\n", cli_error_message());
  fflush(stdout);
  fflush(stderr);
  /* After a GPU stall the driver's teardown may wait on the stalled work forever. */
  if (status == GPUSORT_ERROR_GPU_STALL) _exit(gpusort_status_class(status));
  return gpusort_status_class(status);
}
