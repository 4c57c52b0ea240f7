/* libFuzzer target: the command line's option parsing, from main() through every command's
 * getopt loop and the checks of options against each other, with no device and no file.
 *
 * An input is argv after the program's name, one argument per NUL-separated piece
 * (corpus/args holds real command lines). main.c is compiled with main renamed to
 * gpusort_cli_main (tests/fuzz/meson.build), and the link wraps the library's entry points
 * that come after parsing (-Wl,--wrap): each records that the options were accepted and
 * fails, so no context opens, no file is read or written, no Vulkan instance is made. An
 * entry point added to the command line later needs a wrapper here, or the target would run
 * it for real.
 *
 * --where expressions are parsed by the library once a job runs (past gpusort_open, which is
 * stubbed here): their words are in args.dict for the option parsing around them; a target
 * for the expression parser alone would sit beside this one (fuzz_where.c). */
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort.h"

int gpusort_cli_main(int argc, char **argv);

enum { MAX_ARGS = 64, STOPPED = GPUSORT_ERROR_NO_DEVICE };

/* The command line's fatal-signal handlers would replace the sanitizers' for the rest of the
 * run; they are put back after each input (and __asan_default_options keeps SEGV and BUS with
 * AddressSanitizer meanwhile). */
static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGBUS, SIGSEGV, SIGXFSZ};
static struct sigaction saved[sizeof handled_signals / sizeof handled_signals[0]];

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "handle_segv=2:handle_sigbus=2:detect_leaks=0"; }

int __wrap_gpusort_open(gpusort_context **ctx, const gpusort_context_params *params);
int __wrap_gpusort_open(gpusort_context **ctx, const gpusort_context_params *params) {
  (void)params;
  *ctx = NULL;
  return STOPPED;
}

int __wrap_gpusort_check_file(gpusort_context *ctx, const char *input, const gpusort_layout *layout,
                              const gpusort_sort_options *options, gpusort_report *report);
int __wrap_gpusort_check_file(gpusort_context *ctx, const char *input, const gpusort_layout *layout,
                              const gpusort_sort_options *options, gpusort_report *report) {
  (void)ctx, (void)input, (void)layout, (void)options, (void)report;
  return STOPPED;
}

int __wrap_gpusort_generate_file(gpusort_context *ctx, const char *output, const gpusort_layout *layout,
                                 const gpusort_generate_options *options, gpusort_report *report);
int __wrap_gpusort_generate_file(gpusort_context *ctx, const char *output, const gpusort_layout *layout,
                                 const gpusort_generate_options *options, gpusort_report *report) {
  (void)ctx, (void)output, (void)layout, (void)options, (void)report;
  return STOPPED;
}

int __wrap_gpusort_list_devices(gpusort_device_info *infos, uint32_t capacity, uint32_t *count);
int __wrap_gpusort_list_devices(gpusort_device_info *infos, uint32_t capacity, uint32_t *count) {
  (void)infos, (void)capacity;
  *count = 0;
  return STOPPED;
}

/* glibc's getopt keeps its place inside a bundle of short options (-fZ) between calls;
 * optind = 0 makes the next call start afresh, as a new process would. */
static void reset_getopt(void) {
  char name[] = "fuzz";
  char *argv[] = {name, NULL};
  optind = 0;
  opterr = 0;
  (void)getopt(1, argv, "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A NUL-terminated copy, split at NULs: argv[1..] point into it. */
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char program[] = "gpusort";
  char *argv[MAX_ARGS + 2] = {program};
  int argc = 1;
  for (size_t start = 0; start < size && argc <= MAX_ARGS; start += strlen(text + start) + 1)
    argv[argc++] = text + start;
  argv[argc] = NULL;

  for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
    sigaction(handled_signals[i], NULL, &saved[i]);
  reset_getopt();
  const int status = gpusort_cli_main(argc, argv);
  for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
    sigaction(handled_signals[i], &saved[i], NULL);
  if (status < 0 || status > 3) abort(); /* main returns an exit code of 0 to 3 */
  free(text);
  return 0;
}
