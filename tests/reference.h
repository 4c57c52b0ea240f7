/* The CPU reference of the API tests, from the documented order alone (gpusort.h): integers
 * numerically, floats by IEEE 754 totalOrder, descending by complement, stable. */
#ifndef GS_TESTS_REFERENCE_H
#define GS_TESTS_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpusort.h"

/* The key at p (of any numeric type: narrow, half and big-endian ones too) as an unsigned
 * integer whose order is the key's order. */
uint64_t ref_ordered(gpusort_type type, const void *p);

/* The input positions of n records (stride bytes apart, key at key_offset) in sorted order,
 * on bits [begin, end) of the ordered key (0, 0: all); malloc'd. */
uint64_t *ref_sort_order(gpusort_type type, const unsigned char *records, size_t stride, size_t key_offset, uint64_t n,
                         bool descending, unsigned begin, unsigned end);

/* xorshift64: the tests' random numbers. */
uint64_t ref_random(uint64_t *state);

/* Keys of a type, `stride` bytes apart: few distinct values (equal keys show stability), some
 * random ones, and for floats the specials (zeros of both signs, infinities, NaNs). */
void ref_fill_keys(gpusort_type type, unsigned char *out, size_t stride, uint64_t n, uint64_t seed);

#endif
