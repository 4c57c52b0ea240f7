#include "prim/gather.h"

#include <string.h>

#include "prim/key_spec.h"
#include "util/error.h"

bool gs_gather_fits(const gs_device *dev, uint64_t n, unsigned record_bytes) {
  const uint64_t bytes = n * record_bytes; /* byte offsets are 32-bit in the kernels */
  return bytes <= dev->info.max_data_buffer && bytes <= 0xFFFFFFF0ull;
}

int gs_gather_create(gs_device *dev, gs_gather *g) {
  memset(g, 0, sizeof *g);
  g->dev = dev;
  g->workgroup = gs_workgroup_within(dev, 256);
  const uint32_t spec[] = {g->workgroup, 0};
  int rc = gs_kernel_create(dev, &g->gather, "gather_records", sizeof(gs_gather_push), spec, 2);
  if (!rc) rc = gs_kernel_create(dev, &g->extract[0], "extract_keys_k32", sizeof(gs_extract_push), spec, 2);
  if (!rc && dev->int64) rc = gs_kernel_create(dev, &g->extract[1], "extract_keys_k64", sizeof(gs_extract_push), spec, 2);
  return rc;
}

void gs_gather_destroy(gs_gather *g) {
  gs_device *dev = g->dev;
  if (!dev || !dev->device || dev->wedged) return;
  gs_kernel_destroy(dev, &g->gather);
  gs_kernel_destroy(dev, &g->extract[0]);
  gs_kernel_destroy(dev, &g->extract[1]);
  memset(g, 0, sizeof *g);
}

int gs_gather_record(const gs_gather *g, VkCommandBuffer cb, gs_range indices, gs_range records_in,
                     gs_range records_out, uint64_t n, unsigned record_bytes) {
  const uint64_t words = (n * record_bytes + 3) / 4;
  gs_gather_push push = {.indices = indices.address,
                         .records_in = records_in.address,
                         .records_out = records_out.address,
                         .n = (uint32_t)n,
                         .record_bytes = record_bytes,
                         .groups = gs_groups_for(words, g->workgroup)};
  return gs_kernel_dispatch(g->dev, cb, &g->gather, &push, push.groups);
}

int gs_extract_keys_record(const gs_gather *g, VkCommandBuffer cb, gs_range records, gs_range keys, uint64_t n,
                           unsigned record_bytes, unsigned key_offset, unsigned key_bytes) {
  gs_extract_push push = {.records = records.address,
                          .keys = keys.address,
                          .n = (uint32_t)n,
                          .record_bytes = record_bytes,
                          .key_offset = key_offset,
                          .groups = gs_groups_for(n, g->workgroup)};
  return gs_kernel_dispatch(g->dev, cb, &g->extract[key_bytes == 8 ? 1 : 0], &push, push.groups);
}

int gs_extract_form_record(const gs_gather *g, VkCommandBuffer cb, gs_range records, gs_range keys, uint64_t n,
                           unsigned record_bytes, unsigned key_offset, gpusort_type form, bool store) {
  const gs_field_type *f = gs_field_type_of(form);
  if (!f || f->kind == GS_PART_BYTES) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: no numeric form");
  const uint32_t kind = f->kind == GS_PART_SIGNED ? 1 : f->kind == GS_PART_FLOAT ? 2 : 0;
  gs_extract_push push = {.records = records.address,
                          .keys = keys.address,
                          .n = (uint32_t)n,
                          .record_bytes = record_bytes,
                          .key_offset = key_offset,
                          .groups = gs_groups_for(n, g->workgroup),
                          .form = f->bytes | (f->big_endian ? GS_FORM_BIG_ENDIAN : 0) | kind << GS_FORM_KIND_SHIFT,
                          .flags = store ? GS_EXTRACT_STORE : 0};
  if (f->bytes == 8 && !g->extract[1].pipeline)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot sort 64-bit keys (no shaderInt64)", g->dev->info.name);
  return gs_kernel_dispatch(g->dev, cb, &g->extract[f->bytes == 8 ? 1 : 0], &push, push.groups);
}
