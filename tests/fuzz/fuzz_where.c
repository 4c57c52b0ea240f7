/* libFuzzer target: --where expressions (src/prim/predicate.c). An input's first byte picks the
 * key type, the rest is the expression's text.
 *
 * An expression gs_predicate_parse refuses must say why in one line starting "--where: ". One
 * it accepts must be a program the kernel can run (shaders/compact.comp): at most
 * GS_PREDICATE_MAX_OPS known ops, each operator finding its operands on the stack, at most 32
 * values on it at any time (the kernel's stack is the bits of one word), and one value left at
 * the end; and testing keys with it must give the same answer twice. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim/predicate.h"
#include "util/error.h"

#define EXPECT(cond)                                                                    \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "fuzz_where: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

static void check_program(const gs_predicate *p) {
  EXPECT(p->count >= 1 && p->count <= GS_PREDICATE_MAX_OPS);
  unsigned depth = 0;
  for (uint32_t i = 0; i < p->count; i++) {
    const uint32_t code = p->ops[i].code;
    EXPECT(code >= GS_PRED_LT && code <= GS_PRED_NOT);
    if (code == GS_PRED_AND || code == GS_PRED_OR) {
      EXPECT(depth >= 2);
      depth--;
    } else if (code == GS_PRED_NOT) {
      EXPECT(depth >= 1);
    } else {
      depth++;
    }
    EXPECT(depth <= 32);
  }
  EXPECT(depth == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const gs_key_type type = (gs_key_type)(data[0] % GS_KEY_TYPE_COUNT);
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  gs_predicate p;
  if (gs_predicate_parse(text, type, &p) == GPUSORT_OK) {
    check_program(&p);
    static const uint64_t keys[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FF8000000000000ull,
                                    0x8000000000000000ull, UINT64_MAX, 0x3FF0000000000000ull, 0x7F800000};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      EXPECT(gs_predicate_test(&p, keys[k]) == gs_predicate_test(&p, keys[k]));
  } else {
    const char *message = gs_last_error();
    EXPECT(strncmp(message, "--where: ", 9) == 0);
    EXPECT(strchr(message, '\n') == NULL);
  }
  free(text);
  return 0;
}
