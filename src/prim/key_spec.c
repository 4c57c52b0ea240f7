#include "prim/key_spec.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "prim/elements.h"

/* Indexed by gpusort_type. */
static const gs_field_type field_types[] = {
    [GPUSORT_U32] = {"u32", 4, GS_PART_UNSIGNED, false},    [GPUSORT_I32] = {"i32", 4, GS_PART_SIGNED, false},
    [GPUSORT_F32] = {"f32", 4, GS_PART_FLOAT, false},       [GPUSORT_U64] = {"u64", 8, GS_PART_UNSIGNED, false},
    [GPUSORT_I64] = {"i64", 8, GS_PART_SIGNED, false},      [GPUSORT_F64] = {"f64", 8, GS_PART_FLOAT, false},
    [GPUSORT_U8] = {"u8", 1, GS_PART_UNSIGNED, false},      [GPUSORT_I8] = {"i8", 1, GS_PART_SIGNED, false},
    [GPUSORT_U16] = {"u16", 2, GS_PART_UNSIGNED, false},    [GPUSORT_I16] = {"i16", 2, GS_PART_SIGNED, false},
    [GPUSORT_F16] = {"f16", 2, GS_PART_FLOAT, false},       [GPUSORT_BF16] = {"bf16", 2, GS_PART_FLOAT, false},
    [GPUSORT_U16BE] = {"u16be", 2, GS_PART_UNSIGNED, true}, [GPUSORT_I16BE] = {"i16be", 2, GS_PART_SIGNED, true},
    [GPUSORT_U32BE] = {"u32be", 4, GS_PART_UNSIGNED, true}, [GPUSORT_I32BE] = {"i32be", 4, GS_PART_SIGNED, true},
    [GPUSORT_F32BE] = {"f32be", 4, GS_PART_FLOAT, true},    [GPUSORT_U64BE] = {"u64be", 8, GS_PART_UNSIGNED, true},
    [GPUSORT_I64BE] = {"i64be", 8, GS_PART_SIGNED, true},   [GPUSORT_F64BE] = {"f64be", 8, GS_PART_FLOAT, true},
    [GPUSORT_BYTES] = {"bytes", 0, GS_PART_BYTES, false},
};
enum { FIELD_TYPE_COUNT = sizeof field_types / sizeof field_types[0] };

/* NumPy's names of the same types (bfloat16 and the big-endian ones have none). */
static const struct {
  const char *name;
  gpusort_type type;
} numpy_names[] = {
    {"uint8", GPUSORT_U8},   {"int8", GPUSORT_I8},   {"uint16", GPUSORT_U16},   {"int16", GPUSORT_I16},
    {"uint32", GPUSORT_U32}, {"int32", GPUSORT_I32}, {"uint64", GPUSORT_U64},   {"int64", GPUSORT_I64},
    {"float16", GPUSORT_F16}, {"float32", GPUSORT_F32}, {"float64", GPUSORT_F64},
};

const gs_field_type *gs_field_type_of(gpusort_type type) {
  if ((unsigned)type == 0 || (unsigned)type >= FIELD_TYPE_COUNT) return NULL;
  return &field_types[type];
}

int gs_field_type_from_name(const char *name, gpusort_type *type) {
  for (unsigned t = 1; t < FIELD_TYPE_COUNT; t++) {
    if (strcmp(name, field_types[t].name) == 0) {
      *type = (gpusort_type)t;
      return 0;
    }
  }
  for (size_t i = 0; i < sizeof numpy_names / sizeof numpy_names[0]; i++) {
    if (strcmp(name, numpy_names[i].name) == 0) {
      *type = numpy_names[i].type;
      return 0;
    }
  }
  return -1;
}

gpusort_type gs_field_type_find(gs_part_kind kind, unsigned bytes, bool big_endian) {
  for (unsigned t = 1; t < FIELD_TYPE_COUNT; t++) {
    const gs_field_type *f = &field_types[t];
    if (f->kind == kind && f->bytes == bytes && (f->big_endian == big_endian || bytes == 1)) return (gpusort_type)t;
  }
  return GPUSORT_TYPE_NONE;
}

const char *gs_field_type_names(void) {
  return "u8, i8, u16, i16, u32, i32, u64, i64, f16, bf16, f32, f64, u16be, i16be, u32be, i32be, u64be, i64be, "
         "f32be, f64be, bytes:N";
}

/* A 16-bit float's value, for messages: f16 (1, 5, 10 bits) or bfloat16 (the top half of an f32). */
static double half_value(uint64_t bits, bool bfloat) {
  return bfloat ? gs_bf16_to_f32((uint16_t)bits) : gs_f16_to_f32((uint16_t)bits);
}

void gs_key_spec_set_bits(gs_key_spec *s, unsigned begin_bit, unsigned end_bit) {
  s->begin_bit = begin_bit;
  s->end_bit = end_bit;
  for (unsigned b = 0; b < s->bytes; b++) { /* byte b from the front holds bits [low, low + 8) */
    const unsigned low = 8 * (s->bytes - 1 - b);
    unsigned keep = 0;
    for (unsigned k = 0; k < 8; k++)
      if (low + k >= begin_bit && low + k < end_bit) keep |= 1u << k;
    s->bit_mask[b] = (unsigned char)keep;
  }
}

void gs_key_spec_format(const gs_key_spec *s, const unsigned char *record, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned p = 0; p < s->count && used + 1 < size; p++) {
    const gs_key_part *part = &s->parts[p];
    const unsigned char *field = record + part->offset;
    char text[300];
    if (part->kind == GS_PART_BYTES) {
      int k = snprintf(text, sizeof text, "0x");
      for (unsigned b = 0; b < part->bytes && k < (int)sizeof text - 3; b++)
        k += snprintf(text + k, sizeof text - (size_t)k, "%02x", field[b]);
    } else {
      const uint64_t bits = gs_key_part_bits(part, field);
      const unsigned shift = 64 - 8 * part->bytes;
      if (part->kind == GS_PART_UNSIGNED) {
        snprintf(text, sizeof text, "%" PRIu64, bits);
      } else if (part->kind == GS_PART_SIGNED) {
        snprintf(text, sizeof text, "%" PRId64, (int64_t)(bits << shift) >> shift);
      } else if (part->bytes == 2) {
        snprintf(text, sizeof text, "%.5g (0x%04" PRIx64 ")", half_value(bits, part->type == GPUSORT_BF16), bits);
      } else {
        const gs_key_info info = {"", part->bytes, GS_KEY_KIND_FLOAT};
        unsigned char native[8];
        gs_key_store_bits(part->bytes, native, bits);
        gs_key_format(&info, native, text, sizeof text);
      }
    }
    used += (size_t)snprintf(buf + used, size - used, "%s%s", p ? ", " : "", text);
    if (used >= size) used = size - 1;
  }
}
