#include "prim/predicate.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim/elements.h"
#include "prim/key_spec.h"
#include "util/error.h"

/* Characters that end a word even without a space: the symbols' characters, and ']' (no
 * symbol, but a range closed like [a, b] gets a message of its own). */
static const char separators[] = "<>=!&()[],]";

/* Parentheses add no operations, so only this bounds the parser's recursion. */
enum { MAX_NESTING = GS_PREDICATE_MAX_OPS };

typedef struct {
  size_t start, len; /* len 0: the end of the text */
} token;

typedef struct {
  const char *text;
  const gs_key_info *info; /* the type the keys are compared in */
  const gs_field_type *form; /* the keys' own (narrow, half, big-endian), whose range and
                                precision constants take; NULL: info's */
  gpusort_type form_type;
  gs_predicate *out;
  token tok;  /* the token being looked at */
  token prev; /* the one before it, for "expected ... after" */
  unsigned nesting;
} parser;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static bool is_separator(char c) { return c != '\0' && strchr(separators, c) != NULL; }

static void advance(parser *p) {
  size_t at = p->tok.start + p->tok.len;
  while (is_space(p->text[at])) at++;
  p->prev = p->tok;
  p->tok.start = at;
  const char c = p->text[at];
  if (c == '\0')
    p->tok.len = 0;
  else if (strchr("<>=!", c) && p->text[at + 1] == '=')
    p->tok.len = 2;
  else if (is_separator(c))
    p->tok.len = 1;
  else {
    size_t end = at;
    while (p->text[end] && !is_space(p->text[end]) && !is_separator(p->text[end])) end++;
    p->tok.len = end - at;
  }
}

/* Constants are words: a symbol or the end is not one. */
static bool at_word(const parser *p) { return p->tok.len && !is_separator(p->text[p->tok.start]); }

static bool at(const parser *p, const char *symbol) {
  return p->tok.len == strlen(symbol) && memcmp(p->text + p->tok.start, symbol, p->tok.len) == 0;
}

/* Fails with "--where: <message> at <position> in '<text>'" (or "at end of '<text>'"), on one
 * line even if the text spans several. */
GS_PRINTF(3, 4) static int fail_at(const parser *p, const token *t, const char *fmt, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  if (len < 0) len = 0;
  if (len < (int)sizeof message) {
    if (t->len)
      snprintf(message + len, sizeof message - (size_t)len, " at %zu in '%s'", t->start + 1, p->text);
    else
      snprintf(message + len, sizeof message - (size_t)len, " at end of '%s'", p->text);
  }
  for (char *c = message; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
  return gs_fail(GPUSORT_ERROR_USAGE, "--where: %s", message);
}

/* The current token is not what the grammar needs here: `what` is named at the end of the
 * text, the token itself elsewhere. */
static int fail_expected(const parser *p, const char *what) {
  if (!p->tok.len)
    return fail_at(p, &p->tok, "expected %s after '%.*s'", what, (int)p->prev.len, p->text + p->prev.start);
  return fail_at(p, &p->tok, "unexpected '%.*s'", (int)p->tok.len, p->text + p->tok.start);
}

static int expect(parser *p, const char *symbol, const char *what) {
  if (!at(p, symbol)) return fail_expected(p, what);
  advance(p);
  return GPUSORT_OK;
}

static int emit(parser *p, const token *t, uint32_t code, uint64_t a, uint64_t b) {
  if (p->out->count == GS_PREDICATE_MAX_OPS)
    return fail_at(p, t, "more than %d tests and operators, reached by '%.*s'", GS_PREDICATE_MAX_OPS, (int)t->len,
                   p->text + t->start);
  p->out->ops[p->out->count++] = (gs_predicate_op){.code = code,
                                                   .a_lo = (uint32_t)a,
                                                   .a_hi = (uint32_t)(a >> 32),
                                                   .b_lo = (uint32_t)b,
                                                   .b_hi = (uint32_t)(b >> 32)};
  return GPUSORT_OK;
}

static uint64_t width_mask(unsigned bytes) { return bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (bytes * 8)) - 1; }

/* Float -0.0 as +0.0, so that comparisons treat the two as equal, as IEEE does. */
static uint64_t canonical_bits(const gs_key_info *info, uint64_t bits) {
  const uint64_t sign = (uint64_t)1 << (info->bytes * 8 - 1);
  return info->kind == GS_KEY_KIND_FLOAT && bits == sign ? 0 : bits;
}

static bool is_nan_bits(const gs_key_info *info, uint64_t bits) {
  if (info->kind != GS_KEY_KIND_FLOAT) return false;
  if (info->bytes == 8) return (bits & ~((uint64_t)1 << 63)) > 0x7ff0000000000000u;
  return (bits & 0x7fffffffu) > 0x7f800000u;
}

/* Reads [-]digits or [-]0x hexdigits, the whole token; false for anything else. *overflow
 * when the magnitude passes 64 bits. */
static bool read_integer(const char *s, size_t len, bool *negative, uint64_t *magnitude, bool *overflow) {
  *negative = len && s[0] == '-';
  size_t i = *negative ? 1 : 0;
  unsigned base = 10;
  if (len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  if (i == len) return false;
  *magnitude = 0;
  *overflow = false;
  for (; i < len; i++) {
    const char c = s[i];
    unsigned digit;
    if (c >= '0' && c <= '9')
      digit = (unsigned)(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      digit = (unsigned)(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F')
      digit = (unsigned)(c - 'A' + 10);
    else
      return false;
    if (*magnitude > (UINT64_MAX - digit) / base) *overflow = true;
    *magnitude = *magnitude * base + digit;
  }
  return true;
}

/* Why a token that is no integer was refused: a number of another kind (a fraction, inf, a
 * NaN, an integer in another notation), or no number at all. `kind` says what was wanted. */
static int fail_not_integer(const parser *p, const char *kind) {
  const token *t = &p->tok;
  const char *s = p->text + t->start;
  char *end;
  const double d = strtod(s, &end);
  /* only "nan(...)" reads on past the token's end, into a '(' */
  if (end < s + t->len) return fail_expected(p, "a number");
  if (isnan(d)) return fail_at(p, t, "%.*s is no constant; use isnan,", (int)t->len, s);
  if (isfinite(d) && d == trunc(d)) /* "+5", "1e3" */
    return fail_at(p, t, "%.*s is not written in decimal or 0x hex (%s),", (int)t->len, s, kind);
  return fail_at(p, t, "%.*s is not an integer (%s),", (int)t->len, s, kind);
}

/* The current token as the stored bits of a key, for comparisons and ranges. */
static int read_key_constant(parser *p, uint64_t *bits) {
  const gs_key_info *info = p->info;
  const token *t = &p->tok;
  const char *s = p->text + t->start;
  if (!at_word(p)) return fail_expected(p, "a number");
  const char *name = p->form ? p->form->name : info->name;
  if (info->kind == GS_KEY_KIND_FLOAT) {
    char *end;
    errno = 0;
    const double d = strtod(s, &end);
    if (end < s + t->len) return fail_expected(p, "a number");
    if (isnan(d)) return fail_at(p, t, "%.*s is no constant; use isnan,", (int)t->len, s);
    if (p->form && p->form->bytes == 2) { /* a half: the constant rounded to it, as keys are */
      const bool bfloat = p->form_type == GPUSORT_BF16;
      const uint16_t h = bfloat ? gs_f64_to_bf16(d) : gs_f64_to_f16(d);
      const float v = bfloat ? gs_bf16_to_f32(h) : gs_f16_to_f32(h);
      if (isinf(v) && !isinf(d)) return fail_at(p, t, "%.*s is out of range for %s,", (int)t->len, s, name);
      uint32_t b;
      memcpy(&b, &v, 4);
      *bits = b;
      advance(p);
      return GPUSORT_OK;
    }
    /* a finite literal too large for the type would become inf, and change the test */
    const bool too_large = (errno == ERANGE && isinf(d)) || (info->bytes == 4 && isinf((float)d) && !isinf(d));
    if (too_large)
      return fail_at(p, t, "%.*s is out of range for %s,", (int)t->len, s, info->name);
    if (info->bytes == 8) {
      memcpy(bits, &d, 8);
    } else {
      const float f = (float)d;
      uint32_t b;
      memcpy(&b, &f, 4);
      *bits = b;
    }
    advance(p);
    return GPUSORT_OK;
  }
  bool negative, overflow;
  uint64_t magnitude;
  if (!read_integer(s, t->len, &negative, &magnitude, &overflow)) {
    char kind[32];
    snprintf(kind, sizeof kind, "the keys are %s", info->name);
    return fail_not_integer(p, kind);
  }
  const unsigned bytes = p->form ? p->form->bytes : info->bytes, width = bytes * 8; /* (the keys' own range) */
  if (negative && info->kind == GS_KEY_KIND_UNSIGNED)
    return fail_at(p, t, "%.*s is out of range for %s (unsigned keys take no '-'),", (int)t->len, s, name);
  const uint64_t limit = info->kind == GS_KEY_KIND_SIGNED ? ((uint64_t)1 << (width - 1)) - (negative ? 0 : 1)
                                                           : width_mask(bytes);
  if (overflow || magnitude > limit)
    return fail_at(p, t, "%.*s is out of range for %s,", (int)t->len, s, name);
  *bits = (negative ? 0 - magnitude : magnitude) & width_mask(info->bytes);
  advance(p);
  return GPUSORT_OK;
}

/* The current token as raw stored bits, for the mask tests: any key type, integers only. */
static int read_raw_constant(parser *p, uint64_t *bits) {
  const gs_key_info *info = p->info;
  const token *t = &p->tok;
  const char *s = p->text + t->start;
  if (!at_word(p)) return fail_expected(p, "a number");
  bool negative, overflow;
  uint64_t magnitude;
  if (p->form && p->form->kind == GS_PART_FLOAT && p->form->bytes == 2) /* (compared as f32, not its bits) */
    return fail_at(p, t, "mask tests take keys of other types than %s:", p->form->name);
  if (!read_integer(s, t->len, &negative, &magnitude, &overflow))
    return fail_not_integer(p, "masks are on the stored bits");
  const unsigned bytes = p->form ? p->form->bytes : info->bytes;
  if (negative || overflow || magnitude > width_mask(bytes))
    return fail_at(p, t, "%.*s is out of range for the %u stored bits of %s keys,", (int)t->len, s, bytes * 8,
                   p->form ? p->form->name : info->name);
  *bits = magnitude;
  advance(p);
  return GPUSORT_OK;
}

static uint64_t ordered_canonical(const gs_key_info *info, uint64_t bits) {
  return gs_ordered_from_bits(info->kind, info->bytes, canonical_bits(info, bits));
}

static int parse_or(parser *p);

/* test := CMP CONST | "in" "[" CONST "," CONST ")" | "isnan" | "notnan" | "&" CONST ("=="|"!=") CONST */
static int parse_test(parser *p) {
  static const struct {
    const char *symbol;
    uint32_t code;
  } comparisons[] = {{"<", GS_PRED_LT},  {"<=", GS_PRED_LE}, {">", GS_PRED_GT},
                     {">=", GS_PRED_GE}, {"==", GS_PRED_EQ}, {"!=", GS_PRED_NE}};
  const token t = p->tok;
  int rc;
  uint64_t a, b;
  for (size_t i = 0; i < sizeof comparisons / sizeof comparisons[0]; i++) {
    if (!at(p, comparisons[i].symbol)) continue;
    advance(p);
    if ((rc = read_key_constant(p, &a))) return rc;
    return emit(p, &t, comparisons[i].code, ordered_canonical(p->info, a), 0);
  }
  if (at(p, "isnan") || at(p, "notnan")) {
    const uint32_t code = at(p, "isnan") ? GS_PRED_ISNAN : GS_PRED_NOTNAN;
    advance(p);
    return emit(p, &t, code, 0, 0);
  }
  if (at(p, "in")) {
    advance(p);
    if ((rc = expect(p, "[", "'['")) || (rc = read_key_constant(p, &a)) || (rc = expect(p, ",", "','")) ||
        (rc = read_key_constant(p, &b)))
      return rc;
    if (at(p, "]")) return fail_at(p, &p->tok, "ranges are half-open, 'in [a, b)': unexpected ']'");
    if ((rc = expect(p, ")", "')'"))) return rc;
    return emit(p, &t, GS_PRED_RANGE, ordered_canonical(p->info, a), ordered_canonical(p->info, b));
  }
  if (at(p, "&")) {
    advance(p);
    if ((rc = read_raw_constant(p, &a))) return rc;
    const bool equal = at(p, "==");
    if (!equal && !at(p, "!=")) return fail_expected(p, "'==' or '!='");
    advance(p);
    if ((rc = read_raw_constant(p, &b))) return rc;
    return emit(p, &t, equal ? GS_PRED_MASK_EQ : GS_PRED_MASK_NE, a, b);
  }
  return fail_expected(p, "a test");
}

/* unary := "not" unary | "(" expr ")" | ["key"] test */
static int parse_unary(parser *p) {
  const token t = p->tok;
  int rc;
  if (at(p, "not")) {
    advance(p);
    return (rc = parse_unary(p)) ? rc : emit(p, &t, GS_PRED_NOT, 0, 0);
  }
  if (at(p, "(")) {
    if (p->nesting == MAX_NESTING) return fail_at(p, &t, "parentheses nested more than %d deep: '('", MAX_NESTING);
    p->nesting++;
    advance(p);
    if ((rc = parse_or(p)) || (rc = expect(p, ")", "')'"))) return rc;
    p->nesting--;
    return GPUSORT_OK;
  }
  if (at(p, "key")) advance(p);
  return parse_test(p);
}

/* and := unary { "and" unary } */
static int parse_and(parser *p) {
  int rc = parse_unary(p);
  while (!rc && at(p, "and")) {
    const token t = p->tok;
    advance(p);
    if (!(rc = parse_unary(p))) rc = emit(p, &t, GS_PRED_AND, 0, 0);
  }
  return rc;
}

/* expr := and { "or" and } */
static int parse_or(parser *p) {
  int rc = parse_and(p);
  while (!rc && at(p, "or")) {
    const token t = p->tok;
    advance(p);
    if (!(rc = parse_and(p))) rc = emit(p, &t, GS_PRED_OR, 0, 0);
  }
  return rc;
}

int gs_predicate_parse(const char *text, gs_key_type type, gs_predicate *out) {
  return gs_predicate_parse_form(text, type, GPUSORT_TYPE_NONE, out);
}

int gs_predicate_parse_form(const char *text, gs_key_type type, gpusort_type form, gs_predicate *out) {
  memset(out, 0, sizeof *out);
  out->key = type;
  parser p = {.text = text, .info = gs_key_info_of(type), .form = form ? gs_field_type_of(form) : NULL,
              .form_type = form, .out = out};
  advance(&p);
  if (!p.tok.len) return gs_fail(GPUSORT_ERROR_USAGE, "--where: the expression is empty");
  int rc = parse_or(&p);
  if (rc) return rc;
  if (p.tok.len) return fail_expected(&p, "the end");
  return GPUSORT_OK;
}

bool gs_predicate_test(const gs_predicate *p, uint64_t bits) {
  const gs_key_info *info = gs_key_info_of(p->key);
  bits &= width_mask(info->bytes);
  const bool nan = is_nan_bits(info, bits);
  const uint64_t key = ordered_canonical(info, bits);
  bool stack[GS_PREDICATE_MAX_OPS];
  unsigned depth = 0;
  for (uint32_t i = 0; i < p->count; i++) {
    const gs_predicate_op *op = &p->ops[i];
    const uint64_t a = (uint64_t)op->a_hi << 32 | op->a_lo, b = (uint64_t)op->b_hi << 32 | op->b_lo;
    bool v;
    switch (op->code) {
    case GS_PRED_LT: v = !nan && key < a; break;
    case GS_PRED_LE: v = !nan && key <= a; break;
    case GS_PRED_GT: v = !nan && key > a; break;
    case GS_PRED_GE: v = !nan && key >= a; break;
    case GS_PRED_EQ: v = !nan && key == a; break;
    case GS_PRED_NE: v = nan || key != a; break;
    case GS_PRED_RANGE: v = !nan && a <= key && key < b; break;
    case GS_PRED_ISNAN: v = nan; break;
    case GS_PRED_NOTNAN: v = !nan; break;
    case GS_PRED_MASK_EQ: v = (bits & a) == b; break;
    case GS_PRED_MASK_NE: v = (bits & a) != b; break;
    case GS_PRED_AND: v = stack[depth - 2] && stack[depth - 1]; depth -= 2; break;
    case GS_PRED_OR: v = stack[depth - 2] || stack[depth - 1]; depth -= 2; break;
    case GS_PRED_NOT: v = !stack[--depth]; break;
    default: return false; /* not a program of gs_predicate_parse */
    }
    stack[depth++] = v;
  }
  return depth > 0 && stack[depth - 1];
}
