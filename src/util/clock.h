/* Wall-clock time for host-side stage timings (GPU stages use timestamp queries). */
#ifndef GS_UTIL_CLOCK_H
#define GS_UTIL_CLOCK_H

#include <time.h>

static inline double gs_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
