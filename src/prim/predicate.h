/* Predicates on keys for select and partition: `--where` expressions parsed into the postfix
 * program compact.comp runs (gs_predicate_op, shaders/kernel_interface.h), and the same
 * program run on the host (the reference the tests compare with).
 *
 * Grammar (keywords in lower case; spaces between tokens optional where unambiguous):
 *   expr   := and_expr { "or" and_expr }
 *   and    := unary { "and" unary }
 *   unary  := "not" unary | "(" expr ")" | ["key"] test
 *   test   := CMP CONST | "in" "[" CONST "," CONST ")" | "isnan" | "notnan"
 *           | "&" CONST ("==" | "!=") CONST
 *   CMP    := "<" | "<=" | ">" | ">=" | "==" | "!="
 * CONST is a number of the key's type: decimal, 0x hex (integers; also the mask tests'
 * constants, which are the stored bits), or a float with "inf"; NaN is no constant (isnan
 * is). A constant out of the type's range, a fraction for an integer key, or any other
 * malformed text is a usage error naming the offending token. */
#ifndef GS_PRIM_PREDICATE_H
#define GS_PRIM_PREDICATE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel_interface.h"
#include "gpusort.h"
#include "prim/keys.h"

typedef struct {
  gs_key_type key;
  uint32_t count;
  gs_predicate_op ops[GS_PREDICATE_MAX_OPS];
} gs_predicate;

/* Parses `text` for keys of `type`: GPUSORT_OK, or GPUSORT_ERROR_USAGE with gs_fail's message
 * ("--where: unexpected 'foo' at 7 in '...'", "--where: 300 is out of range for i8"...). */
int gs_predicate_parse(const char *text, gs_key_type type, gs_predicate *out);

/* The same for keys of another form (narrow, half, big-endian: prim/elements.h) compared as
 * `type`, the GPU type they widen to: constants take the form's range, and a half's are
 * rounded to it (to nearest even, as the keys were); mask tests are on the value's bits
 * (not a half's). */
int gs_predicate_parse_form(const char *text, gs_key_type type, gpusort_type form, gs_predicate *out);

/* Whether a key with stored bits `bits` (zero-extended) satisfies the predicate. */
bool gs_predicate_test(const gs_predicate *p, uint64_t bits);

#endif
