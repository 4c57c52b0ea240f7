/* Key types: their names, widths, and the order-preserving map to unsigned bits that
 * every sort, check and verification uses.
 *
 * The map ("ordered bits") turns a key into an unsigned integer whose unsigned order is
 * the key's order: unsigned keys are unchanged, signed keys get their sign bit flipped,
 * floats get all bits flipped when negative and the sign bit flipped otherwise, which
 * gives IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN.
 * The GPU kernels apply the same map (shaders/lib/keys.glsl). */
#ifndef GS_PRIM_KEYS_H
#define GS_PRIM_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
  GS_KEY_U32,
  GS_KEY_I32,
  GS_KEY_F32,
  GS_KEY_U64,
  GS_KEY_I64,
  GS_KEY_F64,
  GS_KEY_TYPE_COUNT
} gs_key_type;

/* How the ordered-bits map treats a type; the value is also the shader's KEY_KIND. */
typedef enum { GS_KEY_KIND_UNSIGNED = 0, GS_KEY_KIND_SIGNED = 1, GS_KEY_KIND_FLOAT = 2 } gs_key_kind;

typedef struct {
  const char *name; /* as on the command line: "u32" */
  unsigned bytes;   /* 4 or 8 */
  gs_key_kind kind;
} gs_key_info;

const gs_key_info *gs_key_info_of(gs_key_type type);

/* Parses "u32", "i64", ...; returns 0 on success, -1 for an unknown name. */
int gs_key_type_from_name(const char *name, gs_key_type *out);

/* The comma-separated list of all type names, for messages and help. */
const char *gs_key_type_names(void);

/* The public API's types are the same list, numbered from 1 (0 is GPUSORT_TYPE_NONE). */
static inline int gs_key_type_from_public(int type, gs_key_type *out) {
  if (type < 1 || type > GS_KEY_TYPE_COUNT) return -1;
  *out = (gs_key_type)(type - 1);
  return 0;
}

static inline int gs_key_type_to_public(gs_key_type type) { return (int)type + 1; }

static inline uint64_t gs_ordered_from_bits(gs_key_kind kind, unsigned bytes, uint64_t bits) {
  const uint64_t sign = (uint64_t)1 << (bytes * 8 - 1);
  switch (kind) {
  case GS_KEY_KIND_SIGNED: return bits ^ sign;
  case GS_KEY_KIND_FLOAT: {
    const uint64_t all = bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (bytes * 8)) - 1;
    return (bits & sign) ? (~bits & all) : (bits | sign);
  }
  default: return bits;
  }
}

static inline uint64_t gs_bits_from_ordered(gs_key_kind kind, unsigned bytes, uint64_t ordered) {
  const uint64_t sign = (uint64_t)1 << (bytes * 8 - 1);
  switch (kind) {
  case GS_KEY_KIND_SIGNED: return ordered ^ sign;
  case GS_KEY_KIND_FLOAT: {
    const uint64_t all = bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (bytes * 8)) - 1;
    return (ordered & sign) ? (ordered ^ sign) : (~ordered & all);
  }
  default: return ordered;
  }
}

/* Loads the key's raw bits (native byte order, unaligned-safe). */
static inline uint64_t gs_key_load_bits(unsigned bytes, const void *p) {
  if (bytes == 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline void gs_key_store_bits(unsigned bytes, void *p, uint64_t bits) {
  if (bytes == 8) {
    memcpy(p, &bits, 8);
  } else {
    uint32_t v = (uint32_t)bits;
    memcpy(p, &v, 4);
  }
}

/* The key at p as ordered bits. */
static inline uint64_t gs_key_ordered(const gs_key_info *info, const void *p) {
  return gs_ordered_from_bits(info->kind, info->bytes, gs_key_load_bits(info->bytes, p));
}

/* Writes a key's value as text (decimal, or %.9g/%.17g with the raw bits for floats). */
void gs_key_format(const gs_key_info *info, const void *p, char *buf, size_t size);

#endif
