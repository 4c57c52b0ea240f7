/* Tuning and test knobs read from the environment. */
#ifndef GS_UTIL_ENV_H
#define GS_UTIL_ENV_H

#include <stdint.h>
#include <stdlib.h>

/* The variable as a positive number, or `fallback` when unset, empty, 0 or not a number. */
static inline uint32_t gs_env_u32(const char *name, uint32_t fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end;
  unsigned long x = strtoul(v, &end, 10);
  return (*end || x == 0 || x > UINT32_MAX) ? fallback : (uint32_t)x;
}

#endif
