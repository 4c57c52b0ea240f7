/* Timed events of the host path, printed on stderr when GPUSORT_TRACE is set: what the
 * report's stages do not show (waits, unmapping, closing, the device's teardown). */
#ifndef GS_UTIL_TRACE_H
#define GS_UTIL_TRACE_H

#include <stdbool.h>

bool gs_tracing(void);
/* "gpusort: trace    12.345 ms  <message>", milliseconds since the process's first event */
void gs_trace(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
