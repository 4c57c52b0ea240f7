/* The progress line of long jobs: "gpusort: 41%, 6.56 GiB of 16.00 GiB moved, 5.12 GB/s, 2.1 s left"
 * (bytes read, partitioned and written, as the library counts them). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "report.h"

static struct {
  bool terminal; /* redraw one line; else one line per update */
  double start, last;
  bool shown;
} progress;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void show(void *user, uint64_t done, uint64_t total) {
  (void)user;
  const double t = now();
  const bool finished = done >= total;
  if (finished) { /* the job is over: clear the line it used */
    if (progress.shown && progress.terminal) fputs("\r\033[K", stderr);
    progress.start = t; /* a next job counts from here */
    progress.shown = false;
    return;
  }
  const double elapsed = t - progress.start;
  if (elapsed < 1.0 || t - progress.last < 1.0 / 6) return;
  progress.last = t;
  char moved[32], size[32], rate[32], left[48] = "";
  cli_format_bytes(moved, sizeof moved, (double)done);
  cli_format_bytes(size, sizeof size, (double)total);
  const double per_second = done / elapsed;
  cli_format_rate(rate, sizeof rate, per_second, "B");
  if (per_second > 0 && done > 0) snprintf(left, sizeof left, ", %.1f s left", (double)(total - done) / per_second);
  fprintf(stderr, "%sgpusort: %2.0f%%, %s of %s moved, %s%s%s", progress.terminal ? "\r\033[K" : "",
          100.0 * (double)done / (double)total, moved, size, rate, left, progress.terminal ? "" : "\n");
  fflush(stderr);
  progress.shown = true;
}

void cli_progress_setup(int mode, int verbosity, gpusort_progress_fn *fn, void **user) {
  progress.terminal = isatty(STDERR_FILENO);
  progress.start = now(); /* the job's second counts from the command's start */
  const bool on = mode == CLI_PROGRESS_ON || (mode == CLI_PROGRESS_AUTO && progress.terminal && verbosity > 0);
  *fn = on ? show : NULL;
  *user = NULL;
}
