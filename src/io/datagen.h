/* Deterministic test data: the same type, distribution, seed and count always give the same
 * bytes, on any machine and with any number of threads (each key is a function of its index:
 * XXH3 of the index, seeded). Keys are made as ordered bits (src/prim/keys.h) and mapped to
 * the type, so "sorted" is ascending in the type's own order. */
#ifndef GS_IO_DATAGEN_H
#define GS_IO_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

#include "prim/key_spec.h"
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
  GS_DIST_SPECIAL,  /* the type's edge values mixed with ordinary ones: for floats +-0, +-inf,
                       NaNs of both signs and several payloads, denormals; for integers the
                       extremes, 0 and +-1 */
} gs_dist_kind;

typedef struct {
  gs_dist_kind kind;
  unsigned param;
} gs_dist;

/* Parses "uniform", "entropy:3", "few:100", "lowbits:8", ...; 0 on success, else -1. */
int gs_dist_parse(const char *text, gs_dist *out);

/* The accepted distribution spellings, for help and messages. */
const char *gs_dist_names(void);

/* Writes keys [first, first + count) of an n-key data set of `type` to out, one every
 * `stride` bytes (stride = key bytes for an array of keys), so large sets can be made in
 * pieces and keys can be placed inside records. */
void gs_generate(gs_key_type type, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                 void *out, size_t stride);

/* Keys of any form (a key spec: narrow, half and big-endian types, byte strings, composite
 * keys): keys [first, first + count) of an n-key set written into records of `stride` bytes.
 * The distribution is drawn over the key's normalized form, a big-endian number of
 * spec->bytes bytes (sorted: ascending in the key's order, each part's direction included;
 * lowbits and highbits: the form's lowest or highest bits), and each part's field is then
 * the one whose normalized form that is; special puts each part's edge values into every
 * other key (bytes: all zeros, all ones). */
void gs_generate_keyed(const gs_key_spec *spec, gs_dist dist, uint64_t seed, uint64_t n, uint64_t first, uint64_t count,
                       void *out, size_t stride);

/* The index values of records [first, first + count) for a value field of any type (its
 * record index, as that type: integers wrap at their width). */
void gs_generate_index_field(const gs_field_type *type, uint64_t first, uint64_t count, void *out, size_t stride);

/* Fills bytes of records [first, first + count) with seeded random bytes (the parts of records
 * that are neither key nor value). */
void gs_generate_bytes(uint64_t seed, uint64_t first, uint64_t count, size_t record_bytes, void *out);

/* Writes the value of records [first, first + count): its record index, as that type. */
void gs_generate_index_values(gs_key_type type, uint64_t first, uint64_t count, void *out, size_t stride);

#endif
