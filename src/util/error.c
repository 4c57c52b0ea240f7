#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

int gs_fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *gs_last_error(void) { return last_error; }

void gs_clear_error(void) { last_error[0] = '\0'; }
