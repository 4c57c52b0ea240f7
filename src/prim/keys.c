#include "prim/keys.h"

#include <inttypes.h>
#include <stdio.h>

static const gs_key_info key_infos[GS_KEY_TYPE_COUNT] = {
    [GS_KEY_U32] = {"u32", 4, GS_KEY_KIND_UNSIGNED}, [GS_KEY_I32] = {"i32", 4, GS_KEY_KIND_SIGNED},
    [GS_KEY_F32] = {"f32", 4, GS_KEY_KIND_FLOAT},    [GS_KEY_U64] = {"u64", 8, GS_KEY_KIND_UNSIGNED},
    [GS_KEY_I64] = {"i64", 8, GS_KEY_KIND_SIGNED},   [GS_KEY_F64] = {"f64", 8, GS_KEY_KIND_FLOAT},
};

const gs_key_info *gs_key_info_of(gs_key_type type) { return &key_infos[type]; }

int gs_key_type_from_name(const char *name, gs_key_type *out) {
  for (int t = 0; t < GS_KEY_TYPE_COUNT; t++) {
    if (strcmp(name, key_infos[t].name) == 0) {
      *out = (gs_key_type)t;
      return 0;
    }
  }
  return -1;
}

const char *gs_key_type_names(void) { return "u32, i32, f32, u64, i64, f64"; }

void gs_key_format(const gs_key_info *info, const void *p, char *buf, size_t size) {
  uint64_t bits = gs_key_load_bits(info->bytes, p);
  switch (info->kind) {
  case GS_KEY_KIND_UNSIGNED: snprintf(buf, size, "%" PRIu64, bits); break;
  case GS_KEY_KIND_SIGNED:
    snprintf(buf, size, "%" PRId64, info->bytes == 8 ? (int64_t)bits : (int64_t)(int32_t)bits);
    break;
  case GS_KEY_KIND_FLOAT:
    if (info->bytes == 8) {
      double d;
      memcpy(&d, &bits, 8);
      snprintf(buf, size, "%.17g (0x%016" PRIx64 ")", d, bits);
    } else {
      float f;
      uint32_t b = (uint32_t)bits;
      memcpy(&f, &b, 4);
      snprintf(buf, size, "%.9g (0x%08" PRIx32 ")", (double)f, b);
    }
    break;
  }
}
