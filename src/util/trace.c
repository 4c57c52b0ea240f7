#include "util/trace.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/clock.h"
#include "util/knobs.h"

bool gs_tracing(void) { return gs_knobs_get()->trace; }

void gs_trace(const char *format, ...) {
  if (!gs_tracing()) return;
  static double first; /* a race on the first two events only shifts the origin */
  const double now = gs_now();
  if (first == 0) first = now;
  char line[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  fprintf(stderr, "gpusort: trace %10.3f ms  %s\n", (now - first) * 1e3, line);
}
