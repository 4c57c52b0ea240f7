/* SPIR-V kernels embedded in the executable at build time (tools/embed_spirv.py). */
#ifndef GS_VK_SPIRV_H
#define GS_VK_SPIRV_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *name; /* file stem, e.g. "radix_onesweep_k32" */
  const uint32_t *words;
  size_t bytes;
} gs_spirv;

extern const gs_spirv gs_spirv_table[];
extern const size_t gs_spirv_count;

/* The embedded kernel of that name, or NULL. */
const gs_spirv *gs_spirv_find(const char *name);

#endif
