/* Status codes shared by every layer (the public gpusort_status values), and the one-line
 * message of the last failure.
 *
 * A function that fails records a message with gs_fail() and returns the status; callers
 * pass the status up unchanged, and the public API leaves the message for
 * gpusort_last_error(). */
#ifndef GS_UTIL_ERROR_H
#define GS_UTIL_ERROR_H

#include "gpusort.h"

#if defined(__GNUC__)
#define GS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GS_PRINTF(a, b)
#endif

/* Record a message (printf-style, one line, no trailing newline) and return `status`. */
int gs_fail(int status, const char *fmt, ...) GS_PRINTF(2, 3);

/* The message of the most recent gs_fail() on this thread ("" if none). */
const char *gs_last_error(void);

/* Forget the message (a call that succeeds leaves none behind). */
void gs_clear_error(void);

#endif
