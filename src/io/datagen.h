/* Deterministic test data: the same type, distribution, seed and count always give the same
 * bytes, on any machine and with any number of threads (each key is a function of its index:
 * XXH3 of the index, seeded). Keys are made as ordered bits (src/prim/keys.h) and mapped to
 * the type, so "sorted" is ascending in the type's own order. */
#ifndef GS_IO_DATAGEN_H
#define GS_IO_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

#include "prim/keys.h"

typedef enum {
  GS_DIST_UNIFORM,  /* every bit random */
  GS_DIST_SORTED,   /* ascending, evenly spread over the whole range */
  GS_DIST_REVERSED, /* descending */
  GS_DIST_EQUAL,    /* one value */
  GS_DIST_FEW,      /* `param` distinct values (default 16) in random order */
  GS_DIST_ENTROPY,  /* bitwise AND of `param` uniform words (Thearling & Smith) */
  GS_DIST_LOWBITS,  /* only the lowest `param` bits vary */
  GS_DIST_HIGHBITS, /* only the highest `param` bits vary */
} gs_dist_kind;

typedef struct {
  gs_dist_kind kind;
  unsigned param;
} gs_dist;

/* Parses "uniform", "entropy:3", "few:100", "lowbits:8", ...; 0 on success, else -1. */
int gs_dist_parse(const char *text, gs_dist *out);

/* The accepted distribution spellings, for help and messages. */
const char *gs_dist_names(void);

/* Writes keys [first, first + count) of an n-key data set of `type` to out
 * (count * key bytes), so large sets can be made in pieces. */
void gs_generate(gs_key_type type, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                 void *out);

#endif
