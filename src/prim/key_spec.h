/* Keys of any form: narrow and half types, big-endian integers and floats, byte strings, and
 * composite keys of several parts with their own directions.
 *
 * Every such key has a *normalized form*: a byte string whose memcmp order is the key's
 * order. Each part contributes its ordered bits (keys.h: unsigned unchanged, signed with the
 * sign bit flipped, floats in IEEE 754 totalOrder) written most significant byte first, or
 * its bytes as they are (bytes:N); a descending part is complemented. The GPU sorts the
 * normalized form 64 bits at a time, least significant word first (src/job/sort_engine.c),
 * and the host checks orders by comparing normalized forms (src/io/verify.c). */
#ifndef GS_PRIM_KEY_SPEC_H
#define GS_PRIM_KEY_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpusort.h"
#include "prim/keys.h"

enum {
  GS_KEY_SPEC_MAX_PARTS = 16,
  GS_KEY_SPEC_MAX_BYTES = 128, /* of the normalized form, and of a bytes:N key */
};

typedef enum { GS_PART_UNSIGNED, GS_PART_SIGNED, GS_PART_FLOAT, GS_PART_BYTES } gs_part_kind;

/* A field type: one of the public gpusort_type values (bytes:N has bytes 0 here). */
typedef struct {
  const char *name;  /* "u16be" */
  unsigned bytes;    /* 1, 2, 4 or 8; 0 for bytes:N */
  gs_part_kind kind;
  bool big_endian;
} gs_field_type;

/* The type of a public gpusort_type value, or NULL for NONE and unknown values. */
const gs_field_type *gs_field_type_of(gpusort_type type);

/* Parses a type name: the library's ("u16", "f32be", "bytes") and NumPy's ("uint16",
 * "float16"). Returns 0, or -1 for an unknown name. */
int gs_field_type_from_name(const char *name, gpusort_type *type);

/* The type of fields of this kind, size and byte order (a byte of either order is the same
 * byte); the first in gpusort_type's order, so the IEEE f16 before bf16. NONE if none. */
gpusort_type gs_field_type_find(gs_part_kind kind, unsigned bytes, bool big_endian);

/* Every type name, comma-separated, for messages. */
const char *gs_field_type_names(void);

typedef struct {
  unsigned offset; /* in the record */
  unsigned bytes;  /* of the field */
  gs_part_kind kind;
  bool big_endian;
  bool descending;
  gpusort_type type;
} gs_key_part;

typedef struct {
  unsigned count;
  gs_key_part parts[GS_KEY_SPEC_MAX_PARTS];
  unsigned bytes; /* of the normalized form: the parts' bytes together */
  /* A sort's bit range (gs_key_spec_set_bits): only bits [begin_bit, end_bit) of the
   * normalized form count (bit 0 is the lowest bit of its last byte); the others read as 0.
   * 0, 0: all bits. */
  unsigned begin_bit, end_bit;
  unsigned char bit_mask[GS_KEY_SPEC_MAX_BYTES]; /* per byte of the form, with a bit range */
} gs_key_spec;

/* Restricts the spec's normalized form to bits [begin_bit, end_bit) (0, 0: all of it); the
 * caller has checked that end_bit <= 8 * bytes. */
void gs_key_spec_set_bits(gs_key_spec *s, unsigned begin_bit, unsigned end_bit);

/* A numeric field of `bytes` bytes as unsigned bits, its byte order undone; and back. */
static inline uint64_t gs_field_bits(const unsigned char *field, unsigned bytes, bool big_endian) {
  uint64_t bits = 0;
  for (unsigned b = 0; b < bytes; b++) bits |= (uint64_t)field[big_endian ? bytes - 1 - b : b] << (8 * b);
  return bits;
}

static inline void gs_field_store_bits(unsigned char *field, unsigned bytes, bool big_endian, uint64_t bits) {
  for (unsigned b = 0; b < bytes; b++) field[big_endian ? bytes - 1 - b : b] = (unsigned char)(bits >> (8 * b));
}

/* A numeric part's field as unsigned bits, its byte order undone. */
static inline uint64_t gs_key_part_bits(const gs_key_part *part, const unsigned char *field) {
  return gs_field_bits(field, part->bytes, part->big_endian);
}

/* Writes the normalized form of the key of `record` (spec->bytes bytes) to out; `descending`
 * complements the whole of it, on top of each part's own direction. */
static inline void gs_key_spec_normalize(const gs_key_spec *s, bool descending, const unsigned char *record,
                                         unsigned char *out) {
  unsigned char *const form = out;
  for (unsigned p = 0; p < s->count; p++) {
    const gs_key_part *part = &s->parts[p];
    const unsigned char *field = record + part->offset;
    const unsigned w = part->bytes;
    if (part->kind == GS_PART_BYTES) {
      memcpy(out, field, w);
    } else {
      const uint64_t ordered = gs_ordered_from_bits((gs_key_kind)part->kind, w, gs_key_part_bits(part, field));
      for (unsigned b = 0; b < w; b++) out[b] = (unsigned char)(ordered >> (8 * (w - 1 - b)));
    }
    if (part->descending != descending)
      for (unsigned b = 0; b < w; b++) out[b] = (unsigned char)~out[b];
    out += w;
  }
  if (s->end_bit) /* a bit range: the bits outside it cleared */
    for (unsigned b = 0; b < s->bytes; b++) form[b] &= s->bit_mask[b];
}

/* The key of a record as text, part by part ("3, 0x41424344"), for messages. */
void gs_key_spec_format(const gs_key_spec *s, const unsigned char *record, char *buf, size_t size);

#endif
