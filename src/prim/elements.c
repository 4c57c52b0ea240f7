#include "prim/elements.h"

#include <math.h>
#include <string.h>

#include "prim/key_spec.h"
#include "util/parallel.h"

int gs_element_gpu_type(gpusort_type form, gs_key_type *gpu) {
  const gs_field_type *f = gs_field_type_of(form);
  if (!f || f->kind == GS_PART_BYTES) return -1;
  const bool wide = f->bytes == 8;
  switch (f->kind) {
  case GS_PART_UNSIGNED: *gpu = wide ? GS_KEY_U64 : GS_KEY_U32; break;
  case GS_PART_SIGNED: *gpu = wide ? GS_KEY_I64 : GS_KEY_I32; break;
  default: *gpu = wide ? GS_KEY_F64 : GS_KEY_F32; break;
  }
  return 0;
}

gpusort_type gs_element_form_like(gs_key_type gpu, gpusort_type like) {
  const gs_field_type *l = gs_field_type_of(like);
  const gs_key_info *g = gs_key_info_of(gpu);
  static const gs_part_kind kinds[] = {[GS_KEY_KIND_UNSIGNED] = GS_PART_UNSIGNED, [GS_KEY_KIND_SIGNED] = GS_PART_SIGNED,
                                       [GS_KEY_KIND_FLOAT] = GS_PART_FLOAT};
  return gs_field_type_find(kinds[g->kind], g->bytes, l && l->big_endian);
}

float gs_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 31, mantissa = h & 1023;
  uint32_t bits;
  if (exponent == 31) {
    bits = sign | 0x7F800000 | mantissa << 13; /* inf, or a NaN with its payload */
  } else if (exponent) {
    bits = sign | (exponent + 112) << 23 | mantissa << 13;
  } else if (mantissa) { /* subnormal: normal as an f32 */
    unsigned shift = 0;
    uint32_t m = mantissa;
    while (!(m & 1024)) m <<= 1, shift++;
    bits = sign | (113 - shift) << 23 | (m & 1023) << 13;
  } else {
    bits = sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t gs_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000, abs = x & 0x7FFFFFFF;
  if (abs > 0x7F800000) return (uint16_t)(sign | 0x7E00 | ((abs >> 13) & 0x1FF)); /* NaN, quiet */
  if (abs >= 0x477FF000) return (uint16_t)(sign | 0x7C00); /* at least 65520 rounds to inf */
  if (abs < 0x38800000) { /* below the smallest normal half: a subnormal, rounded */
    if (abs < 0x33000000) return (uint16_t)sign; /* at most half the smallest subnormal: 0 */
    const uint32_t exponent = abs >> 23, mantissa = (abs & 0x7FFFFF) | 0x800000;
    const uint32_t shift = 126 - exponent; /* mantissa >> shift: units of 2^-24 */
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    h += rest > half || (rest == half && (h & 1));
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1FFF;
  h += rest > 0x1000 || (rest == 0x1000 && (h & 1)); /* (a carry into the exponent is right) */
  return (uint16_t)(sign | h);
}

float gs_bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t gs_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((x >> 16) | 0x40); /* NaN, quiet */
  const uint32_t rest = x & 0xFFFF, h = x >> 16;
  return (uint16_t)(h + (rest > 0x8000 || (rest == 0x8000 && (h & 1))));
}

/* d as an f32 rounded to odd (toward zero, the last bit set if anything was cut off): rounding
 * that to a half type to nearest even then rounds d itself, with no double rounding. */
static float to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || !isfinite(f)) return f;
  if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
  uint32_t b;
  memcpy(&b, &f, 4);
  b |= 1;
  memcpy(&f, &b, 4);
  return f;
}

uint16_t gs_f64_to_f16(double d) { return gs_f32_to_f16(to_f32_odd(d)); }
uint16_t gs_f64_to_bf16(double d) { return gs_f32_to_bf16(to_f32_odd(d)); }

typedef struct {
  const gs_field_type *form;
  bool bfloat;
  gs_key_type gpu;
  bool saturate;
  const unsigned char *src;
  unsigned char *dst;
} convert_job;

static void widen_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const convert_job *j = arg;
  const gs_field_type *f = j->form;
  const unsigned out = gs_key_info_of(j->gpu)->bytes;
  for (size_t i = begin; i < end; i++) {
    uint64_t bits = gs_field_bits(j->src + i * f->bytes, f->bytes, f->big_endian);
    if (f->kind == GS_PART_SIGNED && f->bytes < out) { /* sign-extended */
      const uint64_t sign = (uint64_t)1 << (8 * f->bytes - 1);
      bits = (bits ^ sign) - sign;
    } else if (f->kind == GS_PART_FLOAT && f->bytes == 2) {
      const float v = j->bfloat ? gs_bf16_to_f32((uint16_t)bits) : gs_f16_to_f32((uint16_t)bits);
      uint32_t b;
      memcpy(&b, &v, 4);
      bits = b;
    }
    gs_field_store_bits(j->dst + i * out, out, false, bits);
  }
}

static void narrow_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const convert_job *j = arg;
  const gs_field_type *f = j->form;
  const unsigned in = gs_key_info_of(j->gpu)->bytes;
  for (size_t i = begin; i < end; i++) {
    uint64_t bits = gs_field_bits(j->src + i * in, in, false);
    if (f->kind == GS_PART_FLOAT && f->bytes == 2) {
      float v;
      const uint32_t b = (uint32_t)bits;
      memcpy(&v, &b, 4);
      bits = j->bfloat ? gs_f32_to_bf16(v) : gs_f32_to_f16(v);
    } else if (j->saturate && f->bytes < in) { /* (a min or max identity of the wider type) */
      const unsigned width = 8 * f->bytes;
      if (f->kind == GS_PART_SIGNED) {
        const int64_t v = in == 8 ? (int64_t)bits : (int64_t)(int32_t)(uint32_t)bits;
        const int64_t hi = ((int64_t)1 << (width - 1)) - 1, lo = -hi - 1;
        bits = (uint64_t)(v > hi ? hi : v < lo ? lo : v);
      } else if (bits > ((uint64_t)1 << width) - 1) {
        bits = ((uint64_t)1 << width) - 1;
      }
    }
    gs_field_store_bits(j->dst + i * f->bytes, f->bytes, f->big_endian, bits); /* (integers: the low bytes) */
  }
}

void gs_elements_widen(gpusort_type form, const void *src, void *dst, size_t n) {
  convert_job j = {gs_field_type_of(form), form == GPUSORT_BF16, GS_KEY_U32, false, src, dst};
  gs_element_gpu_type(form, &j.gpu);
  gs_parallel_for(n, 1 << 16, widen_range, &j);
}

void gs_elements_narrow(gs_key_type gpu, gpusort_type form, bool saturate, const void *src, void *dst, size_t n) {
  convert_job j = {gs_field_type_of(form), form == GPUSORT_BF16, gpu, saturate, src, dst};
  gs_parallel_for(n, 1 << 16, narrow_range, &j);
}
