/* Sizes in messages, in one form across the library. */
#ifndef GS_UTIL_FORMAT_H
#define GS_UTIL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* "N bytes" under 10 KiB, then KiB and MiB to one decimal, GiB to two: two different amounts
 * never print alike at the scale of either. */
void gs_format_bytes(char *buf, size_t size, uint64_t bytes);

#endif
