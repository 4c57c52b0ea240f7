/* Numbers of every form (narrow, half and big-endian types) as the GPU's six types.
 *
 * Scans and reductions run on u32, i32, f32, u64, i64 and f64. Elements of another numeric
 * form widen to the GPU type of their kind exactly (u8 and u16 to u32, i8 and i16 to i32,
 * f16 and bf16 to f32, a big-endian type to its native twin); results come back in the
 * elements' form (integers truncated, so sums wrap at the elements' width; f32 rounded to the
 * half type, to nearest even) or in a wider accumulator's type, in the elements' byte order. */
#ifndef GS_PRIM_ELEMENTS_H
#define GS_PRIM_ELEMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpusort.h"
#include "prim/keys.h"

/* The GPU type a numeric form widens to: 0, or -1 for bytes:N and unknown values. */
int gs_element_gpu_type(gpusort_type form, gs_key_type *gpu);

/* The form of the GPU type `gpu` in the byte order of `like` (u64 like u16be: u64be). */
gpusort_type gs_element_form_like(gs_key_type gpu, gpusort_type like);

/* n elements of `form` at src as values of the GPU type it widens to, at dst. */
void gs_elements_widen(gpusort_type form, const void *src, void *dst, size_t n);

/* n values of the GPU type `gpu` at src as `form` (its widened type is gpu, or form is gpu's
 * in another byte order), at dst. Integers are truncated (sums wrap), or with `saturate` (min
 * and max, whose only values out of the form's range are the wider type's identities)
 * clamped to the form's range. */
void gs_elements_narrow(gs_key_type gpu, gpusort_type form, bool saturate, const void *src, void *dst, size_t n);

/* IEEE binary16 and bfloat16 to and from f32: exact one way, rounded to nearest even the
 * other (NaNs stay NaNs of their sign). */
float gs_f16_to_f32(uint16_t h);
uint16_t gs_f32_to_f16(float f);
float gs_bf16_to_f32(uint16_t h);
uint16_t gs_f32_to_bf16(float f);
/* A double to a half type, rounded to nearest even once (not through f32's rounding). */
uint16_t gs_f64_to_f16(double d);
uint16_t gs_f64_to_bf16(double d);

#endif
