/* --where expressions: parsed by gs_predicate_parse and run by gs_predicate_test (the host
 * reference of the GPU kernel), each against the same condition written in C on a set of
 * sample keys of its type (boundaries, both zeros, infinities, NaNs); and malformed ones,
 * which must fail with a usage error naming the offending token. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim/predicate.h"
#include "util/error.h"

static int failures, checks, expressions;

/* The samples of each type, the C type a condition sees them as (x), and their stored bits
 * (raw), zero-extended as gs_predicate_test takes them. */
typedef uint32_t c_U32;
typedef int32_t c_I32;
typedef float c_F32;
typedef uint64_t c_U64;
typedef int64_t c_I64;
typedef double c_F64;

static const uint32_t samples_U32[] = {0, 1, 2, 3, 4, 5, 9, 10, 11, 0xef, 0xff, 0x100, 0x1ef, 150, 0x7fffffff,
                                       0x80000000u, 0xdeadbeefu, 0xfffffffeu, 0xffffffffu};
static const int32_t samples_I32[] = {INT32_MIN, INT32_MIN + 1, -100, -11, -10, -9, -1, 0, 1, 5, 9, 10, 100,
                                      INT32_MAX - 1, INT32_MAX};
static const float samples_F32[] = {0.0f, -0.0f, 1e-3f, 0.1f, 0.5f, 1.0f, 1.5f, 8.0f, 10.0f, -1.0f, -0.1f, -10.0f,
                                    FLT_MIN, 0x1p-149f, -0x1p-149f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN,
                                    -NAN};
static const uint64_t samples_U64[] = {0, 1, 5, 10, 0xffffffffu, 0x100000000u, 0x7fffffffffffffffu,
                                       0x8000000000000000u, 0xdeadbeefcafebabeu, UINT64_MAX - 1, UINT64_MAX};
static const int64_t samples_I64[] = {INT64_MIN, INT64_MIN + 1, INT32_MIN, -2, -1, 0, 1, 2, INT32_MAX,
                                      (int64_t)1 << 32, INT64_MAX - 1, INT64_MAX};
static const double samples_F64[] = {0.0, -0.0, 1e-3, 0.1, 0.5, 1.0, 1.5, 8.0, 10.0, -1.0, -0.1, -10.0, 1e300,
                                     DBL_MIN, 0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX, INFINITY, -INFINITY, NAN,
                                     -NAN};

static uint64_t raw_U32(uint32_t x) { return x; }
static uint64_t raw_I32(int32_t x) { return (uint32_t)x; }
static uint64_t raw_U64(uint64_t x) { return x; }
static uint64_t raw_I64(int64_t x) { return (uint64_t)x; }
static uint64_t raw_F32(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  return b;
}
static uint64_t raw_F64(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}

static bool parse_ok(const char *text, gs_key_type type, gs_predicate *p, int line) {
  expressions++;
  if (gs_predicate_parse(text, type, p) == GPUSORT_OK) return true;
  printf("FAIL line %d: %s '%s' did not parse: %s\n", line, gs_key_info_of(type)->name, text, gs_last_error());
  failures++;
  return false;
}

static void check_key(const gs_predicate *p, uint64_t raw, bool expected, const char *text, int line) {
  checks++;
  const bool got = gs_predicate_test(p, raw);
  if (got == expected) return;
  printf("FAIL line %d: %s '%s' on the key 0x%" PRIx64 ": %s, expected %s\n", line, gs_key_info_of(p->key)->name,
         text, raw, got ? "true" : "false", expected ? "true" : "false");
  failures++;
}

/* Parses `text` for keys of type T and tests it on every sample x of T against `cond`, a C
 * expression of x (and raw, the stored bits). */
#define EACH(T, text, cond)                                                                        \
  do {                                                                                             \
    gs_predicate pred;                                                                             \
    if (!parse_ok(text, GS_KEY_##T, &pred, __LINE__)) break;                                       \
    for (size_t i = 0; i < sizeof samples_##T / sizeof samples_##T[0]; i++) {                      \
      const c_##T x = samples_##T[i];                                                              \
      const uint64_t raw = raw_##T(x);                                                             \
      (void)raw;                                                                                   \
      check_key(&pred, raw, (cond), text, __LINE__);                                               \
    }                                                                                              \
  } while (0)

/* One key given by its stored bits (NaNs with payloads, which no C constant spells). */
static void check_bits(gs_key_type type, const char *text, uint64_t raw, bool expected, int line) {
  gs_predicate p;
  if (parse_ok(text, type, &p, line)) check_key(&p, raw, expected, text, line);
}

static void test_u32(void) {
  EACH(U32, "< 10", x < 10);
  EACH(U32, "<= 10", x <= 10);
  EACH(U32, "> 10", x > 10);
  EACH(U32, ">= 10", x >= 10);
  EACH(U32, "== 10", x == 10);
  EACH(U32, "!= 10", x != 10);
  EACH(U32, "key >= 10", x >= 10);
  EACH(U32, ">=10", x >= 10);
  EACH(U32, "== 0", x == 0);
  EACH(U32, "== 0xffffffff", x == UINT32_MAX);
  EACH(U32, "== 4294967295", x == UINT32_MAX);
  EACH(U32, ">= 0X80000000", x >= 0x80000000u);
  EACH(U32, "== 010", x == 10); /* decimal, not octal */
  EACH(U32, "in [5, 11)", x >= 5 && x < 11);
  EACH(U32, "in [10, 10)", false);
  EACH(U32, "in [11, 5)", false);
  EACH(U32, "in [0, 0xffffffff)", x != UINT32_MAX);
  EACH(U32, "isnan", false);
  EACH(U32, "notnan", true);
  EACH(U32, "key isnan or key notnan", true);
  EACH(U32, "& 0xff == 0xef", (x & 0xff) == 0xef);
  EACH(U32, "& 1 != 0", (x & 1) != 0);
  EACH(U32, "& 0xffffffff == 4294967295", x == UINT32_MAX);
  EACH(U32, "& 0xf0 == 0x01", false); /* value bits outside the mask: never */
  EACH(U32, "not < 10", !(x < 10));
  EACH(U32, "not not < 10", x < 10);
  EACH(U32, "< 5 or > 100 and < 200", x < 5 || (x > 100 && x < 200));
  EACH(U32, "(< 5 or > 100) and < 200", (x < 5 || x > 100) && x < 200);
  EACH(U32, "not < 5 and < 10", !(x < 5) && x < 10);
  EACH(U32, "not (< 5 and < 10)", !(x < 5 && x < 10));
  EACH(U32, "< 3 or == 5 or >= 0x80000000", x < 3 || x == 5 || x >= 0x80000000u);
  EACH(U32, "== 1 or == 2 and == 3 or not == 4 and != 5", x == 1 || (x == 2 && x == 3) || (x != 4 && x != 5));
  EACH(U32, "  key>=10  and key<0xff ", x >= 10 && x < 0xff);
  EACH(U32, "in[1,0x100)", x >= 1 && x < 0x100);
  EACH(U32, "key in [ 1 , 5 )", x >= 1 && x < 5);
  EACH(U32, "\t>= 1\n", x >= 1);
  EACH(U32, "((( == 5 )))", x == 5);
  EACH(U32, "not(==5)and(<10)", x != 5 && x < 10);
}

static void test_i32(void) {
  EACH(I32, "< 0", x < 0);
  EACH(I32, "<= -1", x <= -1);
  EACH(I32, ">= -10", x >= -10);
  EACH(I32, "> -10", x > -10);
  EACH(I32, "== -2147483648", x == INT32_MIN);
  EACH(I32, "== -0x80000000", x == INT32_MIN);
  EACH(I32, "> -0x80000000", x > INT32_MIN);
  EACH(I32, "== 2147483647", x == INT32_MAX);
  EACH(I32, "== 0x7fffffff", x == INT32_MAX);
  EACH(I32, "< 2147483647", x < INT32_MAX);
  EACH(I32, "<= -0", x <= 0);
  EACH(I32, "!= -1 and != 0", x != -1 && x != 0);
  EACH(I32, "== -0x1", x == -1);
  EACH(I32, "in [-10, 10)", x >= -10 && x < 10);
  EACH(I32, "in [-2147483648, 0)", x < 0);
  EACH(I32, "in [0, -10)", false);
  EACH(I32, "& 0x80000000 == 0x80000000", x < 0);
  EACH(I32, "& 0xffffffff == 0xffffffff", x == -1);
  EACH(I32, "& 1 != 1", (x & 1) == 0);
  EACH(I32, "isnan", false);
  EACH(I32, "notnan", true);
  EACH(I32, "not (>= -10 and < 10) or == 5", !(x >= -10 && x < 10) || x == 5);
}

static void test_f32(void) {
  EACH(F32, "== 0", x == 0.0f);
  EACH(F32, "== -0", x == 0.0f);
  EACH(F32, "== -0.0", x == 0.0f);
  EACH(F32, "< 0", x < 0.0f);
  EACH(F32, "< -0", x < 0.0f);
  EACH(F32, "<= 0", x <= 0.0f);
  EACH(F32, "> 0", x > 0.0f);
  EACH(F32, ">= -0", x >= 0.0f);
  EACH(F32, "!= 0", x != 0.0f);
  EACH(F32, "< 0.1", x < 0.1f);
  EACH(F32, "== 0.1", x == 0.1f);
  EACH(F32, "<= -0.1", x <= -0.1f);
  EACH(F32, "> 1.5", x > 1.5f);
  EACH(F32, "== 1", x == 1.0f);
  EACH(F32, "!= 1", x != 1.0f);
  EACH(F32, ">= 0x1p3", x >= 8.0f);
  EACH(F32, "== 1e-3", x == 1e-3f);
  EACH(F32, "== 3.4028234663852886e38", x == FLT_MAX);
  EACH(F32, "== 1.401298464324817e-45", x == 0x1p-149f);
  EACH(F32, "isnan", isnan(x));
  EACH(F32, "notnan", !isnan(x));
  EACH(F32, "== inf", x == INFINITY);
  EACH(F32, "== -inf", x == -INFINITY);
  EACH(F32, "== INFINITY", x == INFINITY);
  EACH(F32, "> -inf", x > -INFINITY);
  EACH(F32, "< inf", x < INFINITY);
  EACH(F32, "!= inf", x != INFINITY);
  EACH(F32, "in [0, inf)", x >= 0.0f && x < INFINITY);
  EACH(F32, "in [-inf, inf)", x >= -INFINITY && x < INFINITY);
  EACH(F32, "in [-0, 1e-3)", x >= 0.0f && x < 1e-3f);
  EACH(F32, "in [1e-3, 1.5)", x >= 1e-3f && x < 1.5f);
  EACH(F32, "in [1, 1)", false);
  EACH(F32, "in [1, -1)", false);
  EACH(F32, "not < 0", !(x < 0.0f));
  EACH(F32, "isnan or > 1", isnan(x) || x > 1.0f);
  EACH(F32, "!= 1 and notnan", x != 1.0f && !isnan(x));
  EACH(F32, "& 0x80000000 == 0x80000000", signbit(x) != 0);
  EACH(F32, "& 0x7f800000 == 0x7f800000", isinf(x) || isnan(x));
  EACH(F32, "& 0x7fffffff == 0", x == 0.0f);
  EACH(F32, "& 0xffffffff != 0x80000000", !(x == 0.0f && signbit(x)));
  EACH(F32, "key<1 and key>=-1", x < 1.0f && x >= -1.0f);
  /* NaNs of any sign and payload: only != holds */
  const uint64_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffffffffu};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
    check_bits(GS_KEY_F32, "!= 5", nans[i], true, __LINE__);
    check_bits(GS_KEY_F32, "== 5", nans[i], false, __LINE__);
    check_bits(GS_KEY_F32, "< inf", nans[i], false, __LINE__);
    check_bits(GS_KEY_F32, "> -inf", nans[i], false, __LINE__);
    check_bits(GS_KEY_F32, "in [-inf, inf)", nans[i], false, __LINE__);
    check_bits(GS_KEY_F32, "isnan", nans[i], true, __LINE__);
    check_bits(GS_KEY_F32, "notnan", nans[i], false, __LINE__);
  }
}

static void test_u64(void) {
  EACH(U64, "== 18446744073709551615", x == UINT64_MAX);
  EACH(U64, "== 0xffffffffffffffff", x == UINT64_MAX);
  EACH(U64, "< 18446744073709551615", x < UINT64_MAX);
  EACH(U64, "> 4294967295", x > UINT32_MAX);
  EACH(U64, ">= 9223372036854775808", x >= 0x8000000000000000u);
  EACH(U64, "<= 5", x <= 5);
  EACH(U64, "!= 0", x != 0);
  EACH(U64, "in [0x100000000, 0x8000000000000000)", x >= 0x100000000u && x < 0x8000000000000000u);
  EACH(U64, "in [5, 5)", false);
  EACH(U64, "& 0xffffffff00000000 == 0", x <= UINT32_MAX);
  EACH(U64, "& 0xffffffff == 0xcafebabe", (x & 0xffffffffu) == 0xcafebabeu);
  EACH(U64, "& 0x8000000000000000 != 0", x >= 0x8000000000000000u);
  EACH(U64, "isnan", false);
  EACH(U64, "not (== 0 or == 18446744073709551615) and notnan", x != 0 && x != UINT64_MAX);
}

static void test_i64(void) {
  EACH(I64, "== -9223372036854775808", x == INT64_MIN);
  EACH(I64, "== -0x8000000000000000", x == INT64_MIN);
  EACH(I64, "== 9223372036854775807", x == INT64_MAX);
  EACH(I64, "> -9223372036854775808", x > INT64_MIN);
  EACH(I64, "< -1", x < -1);
  EACH(I64, ">= -2147483648", x >= INT32_MIN);
  EACH(I64, "> 2147483647", x > INT32_MAX);
  EACH(I64, "in [-1, 1)", x >= -1 && x < 1);
  EACH(I64, "in [1, -1)", false);
  EACH(I64, "& 0x8000000000000000 == 0x8000000000000000", x < 0);
  EACH(I64, "& 0xffffffffffffffff == 0xffffffffffffffff", x == -1);
  EACH(I64, "notnan and (< 0 or == 0x100000000)", x < 0 || x == (int64_t)1 << 32);
}

static void test_f64(void) {
  EACH(F64, "== 0", x == 0.0);
  EACH(F64, "== -0", x == 0.0);
  EACH(F64, "< 0", x < 0.0);
  EACH(F64, "<= 0", x <= 0.0);
  EACH(F64, "> -0", x > 0.0);
  EACH(F64, ">= 0", x >= 0.0);
  EACH(F64, "!= -0", x != 0.0);
  EACH(F64, "== 0.1", x == 0.1);
  EACH(F64, "< 0.1", x < 0.1);
  EACH(F64, "> -0.1", x > -0.1);
  EACH(F64, "< 1e300", x < 1e300);
  EACH(F64, "== 1.7976931348623157e308", x == DBL_MAX);
  EACH(F64, "== -1.7976931348623157e308", x == -DBL_MAX);
  EACH(F64, "== 4.9406564584124654e-324", x == 0x1p-1074);
  EACH(F64, "== 10", x == 10.0);
  EACH(F64, ">= 0x1p3", x >= 8.0);
  EACH(F64, "== inf", x == INFINITY);
  EACH(F64, "== -inf", x == -INFINITY);
  EACH(F64, "< inf", x < INFINITY);
  EACH(F64, "!= -inf", x != -INFINITY);
  EACH(F64, "in [-inf, inf)", x >= -INFINITY && x < INFINITY);
  EACH(F64, "in [-1, 1)", x >= -1.0 && x < 1.0);
  EACH(F64, "in [0, 0)", false);
  EACH(F64, "isnan", isnan(x));
  EACH(F64, "notnan", !isnan(x));
  EACH(F64, "not isnan and not == 0", !isnan(x) && x != 0.0);
  EACH(F64, "isnan or < -1 and > -1e300", isnan(x) || (x < -1.0 && x > -1e300));
  EACH(F64, "& 0x8000000000000000 != 0", signbit(x) != 0);
  EACH(F64, "& 0x7ff0000000000000 == 0", x == 0.0 || fabs(x) < DBL_MIN);
  const uint64_t nans[] = {0x7ff8000000000000u, 0xfff8000000000000u, 0x7ff0000000000001u, UINT64_MAX};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
    check_bits(GS_KEY_F64, "!= 0", nans[i], true, __LINE__);
    check_bits(GS_KEY_F64, "== 0", nans[i], false, __LINE__);
    check_bits(GS_KEY_F64, "<= inf", nans[i], false, __LINE__);
    check_bits(GS_KEY_F64, ">= -inf", nans[i], false, __LINE__);
    check_bits(GS_KEY_F64, "isnan", nans[i], true, __LINE__);
  }
}

/* The program itself, as the GPU gets it: postfix order and constants as ordered bits. */
static void test_encoding(void) {
  gs_predicate p, q;
  if (parse_ok("< 5 or not > 100 and < 200", GS_KEY_U32, &p, __LINE__)) {
    const uint32_t want[] = {GS_PRED_LT, GS_PRED_GT, GS_PRED_NOT, GS_PRED_LT, GS_PRED_AND, GS_PRED_OR};
    bool same = p.count == sizeof want / sizeof want[0] && p.key == GS_KEY_U32;
    for (uint32_t i = 0; same && i < p.count; i++) same = p.ops[i].code == want[i];
    same = same && p.ops[0].a_lo == 5 && p.ops[1].a_lo == 100 && p.ops[3].a_lo == 200;
    checks++;
    if (!same) {
      printf("FAIL line %d: '< 5 or not > 100 and < 200' is not LT GT NOT LT AND OR\n", __LINE__);
      failures++;
    }
  }
  /* -0 and 0 give the same program; i64 -1 is ordered 0x7fff...ffff in two words */
  if (parse_ok("== -0", GS_KEY_F64, &p, __LINE__) && parse_ok("== 0", GS_KEY_F64, &q, __LINE__)) {
    checks++;
    if (memcmp(&p, &q, sizeof p) != 0) {
      printf("FAIL line %d: f64 '== -0' and '== 0' differ\n", __LINE__);
      failures++;
    }
  }
  if (parse_ok("in [-1, 0x7fffffffffffffff)", GS_KEY_I64, &p, __LINE__)) {
    const gs_predicate_op *op = &p.ops[0];
    checks++;
    if (p.count != 1 || op->code != GS_PRED_RANGE || op->a_lo != 0xffffffffu || op->a_hi != 0x7fffffffu ||
        op->b_lo != 0xffffffffu || op->b_hi != 0xffffffffu) {
      printf("FAIL line %d: i64 range constants are not ordered bits in (lo, hi) words\n", __LINE__);
      failures++;
    }
  }
  if (parse_ok("& 0xfff0000000000000 != 0x8000000000000000", GS_KEY_F64, &p, __LINE__)) {
    const gs_predicate_op *op = &p.ops[0];
    checks++;
    if (p.count != 1 || op->code != GS_PRED_MASK_NE || op->a_hi != 0xfff00000u || op->a_lo != 0 ||
        op->b_hi != 0x80000000u || op->b_lo != 0) {
      printf("FAIL line %d: mask constants are not the raw bits\n", __LINE__);
      failures++;
    }
  }
}

/* "== 1 or == 2 or ..." of `tests` tests (2 x tests - 1 operations), or `depth` parentheses. */
static void repeated(char *buf, size_t size, unsigned tests, unsigned depth) {
  size_t len = 0;
  for (unsigned i = 0; i < depth; i++) len += (size_t)snprintf(buf + len, size - len, "(");
  for (unsigned i = 0; i < tests; i++) len += (size_t)snprintf(buf + len, size - len, "%s== %u", i ? " or " : "", i);
  for (unsigned i = 0; i < depth; i++) len += (size_t)snprintf(buf + len, size - len, ")");
}

static void test_limits(void) {
  char text[2048];
  gs_predicate p;
  repeated(text, sizeof text, GS_PREDICATE_MAX_OPS / 2, 0);
  char with_not[2100];
  snprintf(with_not, sizeof with_not, "not (%s)", text); /* exactly GS_PREDICATE_MAX_OPS operations */
  if (parse_ok(with_not, GS_KEY_U32, &p, __LINE__)) {
    checks++;
    if (p.count != GS_PREDICATE_MAX_OPS || gs_predicate_test(&p, 3) || !gs_predicate_test(&p, 1000)) {
      printf("FAIL line %d: a program of %d operations runs wrong\n", __LINE__, GS_PREDICATE_MAX_OPS);
      failures++;
    }
  }
  repeated(text, sizeof text, 1, GS_PREDICATE_MAX_OPS);
  if (parse_ok(text, GS_KEY_U32, &p, __LINE__)) check_key(&p, 0, true, text, __LINE__);
}

typedef struct {
  gs_key_type type;
  const char *text;
  const char *message; /* a part of the message: the offending token, most often where it is */
} malformed;

static void test_malformed(void) {
  static char too_many[2048], too_deep[2048];
  repeated(too_many, sizeof too_many, GS_PREDICATE_MAX_OPS / 2 + 1, 0);
  repeated(too_deep, sizeof too_deep, 1, GS_PREDICATE_MAX_OPS + 1);
  const malformed cases[] = {
      {GS_KEY_U32, ">= foo", "--where: unexpected 'foo' at 4 in '>= foo'"},
      {GS_KEY_U32, ">=", "--where: expected a number after '>=' at end of '>='"},
      {GS_KEY_U32, "", "--where: the expression is empty"},
      {GS_KEY_U32, " \t ", "empty"},
      {GS_KEY_U32, ">= 3.5", "--where: 3.5 is not an integer (the keys are u32)"},
      {GS_KEY_I32, "== 5000000000", "--where: 5000000000 is out of range for i32"},
      {GS_KEY_F64, "== nan", "--where: nan is no constant; use isnan"},
      {GS_KEY_F32, "!= -NaN", "-NaN is no constant"},
      {GS_KEY_F64, "== nan(1)", "nan is no constant"},
      {GS_KEY_U32, "== nan", "nan is no constant"},
      {GS_KEY_U32, ">= 1 2", "'2' at 6"},
      {GS_KEY_U32, "(>= 1", "expected ')' after '1' at end of '(>= 1'"},
      {GS_KEY_U32, "((>= 1) or < 2", "expected ')' after '2' at end"},
      {GS_KEY_U32, ">= 1)", "unexpected ')' at 5"},
      {GS_KEY_U32, "()", "unexpected ')' at 2"},
      {GS_KEY_U32, "foo", "unexpected 'foo' at 1"},
      {GS_KEY_U32, "= 5", "unexpected '=' at 1"},
      {GS_KEY_U32, "key = 5", "unexpected '=' at 5"},
      {GS_KEY_U32, "in [1,5]", "']' at 8"},
      {GS_KEY_U32, "in [1 5)", "'5' at 7"},
      {GS_KEY_U32, "in 1,5)", "'1' at 4"},
      {GS_KEY_U32, "in [1,", "expected a number after ','"},
      {GS_KEY_U32, "& 0xff = 1", "'=' at 8"},
      {GS_KEY_U32, "& 0xff", "expected '==' or '!=' after '0xff'"},
      {GS_KEY_F32, "& 0x100000000 == 0", "0x100000000 is out of range for the 32 stored bits of f32"},
      {GS_KEY_F64, "& -1 == 0", "-1 is out of range"},
      {GS_KEY_F64, "& 0xff == 1.5", "1.5 is not an integer"},
      {GS_KEY_U32, ">= -1", "-1 is out of range for u32"},
      {GS_KEY_U64, ">= -0", "-0 is out of range for u64"},
      {GS_KEY_U32, "== +5", "+5 is not written in decimal or 0x hex (the keys are u32), at 4"},
      {GS_KEY_I32, ">= 2147483648", "2147483648 is out of range for i32"},
      {GS_KEY_I32, ">= -2147483649", "-2147483649 is out of range for i32"},
      {GS_KEY_U32, "< 0x100000000", "0x100000000 is out of range for u32"},
      {GS_KEY_U64, "== 18446744073709551616", "18446744073709551616 is out of range for u64"},
      {GS_KEY_I64, "== 9223372036854775808", "9223372036854775808 is out of range for i64"},
      {GS_KEY_I64, "== -9223372036854775809", "-9223372036854775809 is out of range for i64"},
      {GS_KEY_F32, "< 1e39", "1e39 is out of range for f32"},
      {GS_KEY_F64, "< -1e400", "-1e400 is out of range for f64"},
      {GS_KEY_U32, "== 1e3", "1e3 is not written in decimal or 0x hex"},
      {GS_KEY_U64, "& 0x1p3 == 0", "0x1p3 is not written in decimal or 0x hex (masks are on the stored bits)"},
      {GS_KEY_I32, "== inf", "inf is not an integer (the keys are i32)"},
      {GS_KEY_U32, "== 0x", "'0x' at 4"},
      {GS_KEY_F64, "== 1.2.3", "'1.2.3' at 4"},
      {GS_KEY_U32, ">= 1 and", "expected a test after 'and' at end"},
      {GS_KEY_U32, ">= 1 or or < 2", "'or' at 9"},
      {GS_KEY_U32, ">= 1 AND < 2", "'AND' at 6"},
      {GS_KEY_U32, "not", "expected a test after 'not'"},
      {GS_KEY_U32, "key", "expected a test after 'key'"},
      {GS_KEY_U32, "key key < 1", "'key' at 5"},
      {GS_KEY_U32, "isnan 1", "'1' at 7"},
      {GS_KEY_U32, "not nan", "'nan' at 5"},
      {GS_KEY_U32, ">=10and <5", "'10and' at 3"},
      {GS_KEY_U32, ">= 1\nfoo", "'foo' at 6"},
      {GS_KEY_U32, "< 1 and == )", "')' at 12"},
      {GS_KEY_U32, too_many, "more than 64 tests and operators"},
      {GS_KEY_U32, too_deep, "parentheses nested more than 64 deep: '(' at 65"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const malformed *c = &cases[i];
    gs_predicate p;
    gs_clear_error();
    const int rc = gs_predicate_parse(c->text, c->type, &p);
    const char *message = gs_last_error();
    checks++;
    if (rc != GPUSORT_ERROR_USAGE || strncmp(message, "--where: ", 9) != 0 || !strstr(message, c->message) ||
        strchr(message, '\n')) {
      printf("FAIL: %s '%s': status %d, message \"%s\"; expected a usage error with \"%s\"\n",
             gs_key_info_of(c->type)->name, c->text, rc, message, c->message);
      failures++;
    }
  }
}

int main(void) {
  test_u32();
  test_i32();
  test_f32();
  test_u64();
  test_i64();
  test_f64();
  test_encoding();
  test_limits();
  test_malformed();
  printf("test_predicate: %d expressions, %d checks, %d failures\n", expressions, checks, failures);
  return failures ? 1 : 0;
}
