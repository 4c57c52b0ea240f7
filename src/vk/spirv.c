#include "vk/spirv.h"

#include <string.h>

const gs_spirv *gs_spirv_find(const char *name) {
  for (size_t i = 0; i < gs_spirv_count; i++)
    if (strcmp(gs_spirv_table[i].name, name) == 0) return &gs_spirv_table[i];
  return NULL;
}
