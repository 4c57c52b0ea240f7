/* Status codes shared by every layer, and the one-line message of the last failure.
 *
 * A function that fails records a message with gs_fail() and returns the status; callers
 * pass the status up unchanged, and the command line prints gs_last_error() once. */
#ifndef GS_UTIL_ERROR_H
#define GS_UTIL_ERROR_H

enum {
  GS_OK = 0,
  GS_ERR_RUNTIME = 1, /* I/O, device, memory, GPU stall */
  GS_ERR_USAGE = 2,   /* bad options, malformed input, refused output */
  GS_ERR_VERIFY = 3,  /* output failed verification, or `check` found disorder */
};

#if defined(__GNUC__)
#define GS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GS_PRINTF(a, b)
#endif

/* Record a message (printf-style, one line, no trailing newline) and return `status`. */
int gs_fail(int status, const char *fmt, ...) GS_PRINTF(2, 3);

/* The message of the most recent gs_fail() on this thread ("" if none). */
const char *gs_last_error(void);

#endif
