#include "reference.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint64_t ref_ordered(gpusort_type type, const void *p) {
  const size_t bytes = gpusort_type_size(type);
  const bool big_endian = type >= GPUSORT_U16BE && type <= GPUSORT_F64BE;
  const unsigned char *b = p;
  uint64_t bits = 0;
  for (size_t k = 0; k < bytes; k++) bits |= (uint64_t)b[big_endian ? bytes - 1 - k : k] << (8 * k);
  const uint64_t sign = (uint64_t)1 << (bytes * 8 - 1), all = bytes == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * bytes)) - 1;
  switch (type) {
  case GPUSORT_I8:
  case GPUSORT_I16:
  case GPUSORT_I16BE:
  case GPUSORT_I32:
  case GPUSORT_I32BE:
  case GPUSORT_I64BE:
  case GPUSORT_I64: return bits ^ sign;
  case GPUSORT_F16:
  case GPUSORT_BF16:
  case GPUSORT_F32:
  case GPUSORT_F32BE:
  case GPUSORT_F64BE:
  case GPUSORT_F64: return (bits & sign) ? (~bits & all) : (bits | sign);
  default: return bits;
  }
}

typedef struct {
  uint64_t key, index;
} item;

static int compare_items(const void *x, const void *y) {
  const item *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index; /* stable */
}

uint64_t *ref_sort_order(gpusort_type type, const unsigned char *records, size_t stride, size_t key_offset, uint64_t n,
                         bool descending, unsigned begin, unsigned end) {
  item *items = malloc((n ? n : 1) * sizeof *items);
  uint64_t *order = malloc((n ? n : 1) * sizeof *order);
  const unsigned bits = (unsigned)gpusort_type_size(type) * 8;
  if (!begin && !end) end = bits;
  const uint64_t mask = end - begin >= 64 ? UINT64_MAX : (((uint64_t)1 << (end - begin)) - 1);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t o = ref_ordered(type, records + i * stride + key_offset);
    if (descending) o = ~o;
    items[i] = (item){(o >> begin) & mask, i};
  }
  qsort(items, n, sizeof *items, compare_items);
  for (uint64_t i = 0; i < n; i++) order[i] = items[i].index;
  free(items);
  return order;
}

uint64_t ref_random(uint64_t *state) {
  *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
  return *state;
}

void ref_fill_keys(gpusort_type type, unsigned char *out, size_t stride, uint64_t n, uint64_t seed) {
  const size_t bytes = gpusort_type_size(type);
  seed |= 1;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = ref_random(&seed);
    uint64_t bits = r % 4 == 0 ? r : (r >> 40) % 97 * 0x0101010101010101ull;
    if (type == GPUSORT_F32 && r % 11 == 0) {
      const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u, 0xFFC00000u};
      bits = specials[(r >> 8) % 6];
    }
    if (type == GPUSORT_F64 && r % 11 == 0) {
      const uint64_t specials[] = {0, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF8000000000001ull};
      bits = specials[(r >> 8) % 4];
    }
    memcpy(out + i * stride, &bits, bytes);
  }
}
