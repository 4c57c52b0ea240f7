#include "prim/scan_reference.h"

#include <string.h>

#include "util/error.h"

enum { STEP_HILLIS_STEELE, STEP_SHIFT, STEP_UP, STEP_DOWN, STEP_CLEAR, STEP_ADD };

const char *gs_refscan_name(gs_refscan_algo algo) {
  static const char *const names[] = {"Hillis-Steele (global)", "Blelloch (global)", "Blelloch (shared, blocked)",
                                      "subgroup blocked"};
  return names[algo];
}

static uint32_t block_of(const gs_scan_reference *r, int kind) {
  return kind == 0 ? 2 * r->workgroup_size : r->workgroup_size;
}

static uint32_t groups_for(const gs_scan_reference *r, uint64_t items) {
  return (uint32_t)((items + r->workgroup_size - 1) / r->workgroup_size);
}

int gs_scan_reference_create(gs_device *dev, const gs_memops *memops, gs_scan_reference *r, uint64_t capacity) {
  memset(r, 0, sizeof *r);
  r->dev = dev;
  r->memops = memops;
  r->capacity = capacity ? capacity : 1;
  r->workgroup_size = gs_workgroup_within(dev, 256);
  r->padded = 1;
  while (r->padded < r->capacity) r->padded <<= 1;
  int rc;
  const uint32_t spec_global[] = {r->workgroup_size, 0};
  const uint32_t spec_blocked[2][5] = {{r->workgroup_size, 0, 0, 0, 0}, {r->workgroup_size, 0, 0, 0, 1}};
  if ((rc = gs_kernel_create(dev, &r->global, "reference_scan_global", sizeof(gs_reference_global_push), spec_global,
                             2)) ||
      (rc = gs_kernel_create(dev, &r->blocked[0], "reference_scan_blocked", sizeof(gs_reference_blocked_push),
                             spec_blocked[0], 5)) ||
      (rc = gs_kernel_create(dev, &r->blocked[1], "reference_scan_blocked", sizeof(gs_reference_blocked_push),
                             spec_blocked[1], 5)))
    return rc;
  if ((rc = gs_buffer_create(dev, &r->input, r->capacity * 4, GS_MEM_DEVICE, "the reference scan input")) ||
      (rc = gs_buffer_create(dev, &r->output, r->capacity * 4, GS_MEM_DEVICE, "the reference scan output")) ||
      (rc = gs_buffer_create(dev, &r->work, r->padded * 4, GS_MEM_DEVICE, "the reference scan work area")))
    return rc;
  /* Blocked: level l scans its input in blocks and writes block sums to sums[l + 1]. */
  for (int kind = 0; kind < 2; kind++) {
    uint64_t count = r->capacity;
    for (int l = 0; l < GS_REFSCAN_MAX_LEVELS - 1; l++) {
      const uint64_t blocks = (count + block_of(r, kind) - 1) / block_of(r, kind);
      if ((rc = gs_buffer_create(dev, &r->sums[kind][l + 1], blocks * 4, GS_MEM_DEVICE, "reference block sums")))
        return rc;
      if (blocks <= 1) break;
      count = blocks;
    }
  }
  return GPUSORT_OK;
}

void gs_scan_reference_destroy(gs_scan_reference *r) {
  gs_device *dev = r->dev;
  if (!dev || !dev->device || dev->wedged) return;
  gs_kernel_destroy(dev, &r->global);
  gs_kernel_destroy(dev, &r->blocked[0]);
  gs_kernel_destroy(dev, &r->blocked[1]);
  gs_buffer_destroy(dev, &r->input);
  gs_buffer_destroy(dev, &r->output);
  gs_buffer_destroy(dev, &r->work);
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < GS_REFSCAN_MAX_LEVELS; l++) gs_buffer_destroy(dev, &r->sums[k][l]);
  memset(r, 0, sizeof *r);
}

/* One step over global memory on arrays a, b and c. */
static int step(gs_scan_reference *r, VkCommandBuffer cb, const gs_buffer *a, const gs_buffer *b, const gs_buffer *c,
                uint32_t mode, uint64_t count, uint32_t offset, uint32_t last) {
  gs_reference_global_push push = {.a = a->address, .b = b->address, .c = c->address,
                                   .count = (uint32_t)count, .offset = offset, .mode = mode, .last = last};
  return gs_kernel_dispatch(r->dev, cb, &r->global, &push, mode == STEP_CLEAR ? 1 : groups_for(r, count));
}

static int copy(gs_scan_reference *r, VkCommandBuffer cb, const gs_buffer *from, const gs_buffer *to, uint64_t n) {
  return gs_record_copy(r->dev, cb, r->memops, gs_buffer_range(from), gs_buffer_range(to), n);
}

static int hillis_steele(gs_scan_reference *r, VkCommandBuffer cb, uint64_t n, bool inclusive) {
  /* Ping-pong: input -> output, then output <-> work; `in_output` says where the result is. */
  int rc;
  bool in_output = true;
  if (n > 1)
    rc = step(r, cb, &r->input, &r->output, &r->input, STEP_HILLIS_STEELE, n, 1, 0);
  else
    rc = copy(r, cb, &r->input, &r->output, n);
  for (uint64_t offset = 2; offset < n && !rc; offset <<= 1) {
    rc = step(r, cb, in_output ? &r->output : &r->work, in_output ? &r->work : &r->output, &r->input,
              STEP_HILLIS_STEELE, n, (uint32_t)offset, 0);
    in_output = !in_output;
  }
  if (!rc && !inclusive) {
    rc = step(r, cb, in_output ? &r->output : &r->work, in_output ? &r->work : &r->output, &r->input, STEP_SHIFT, n,
              0, 0);
    in_output = !in_output;
  }
  if (!rc && !in_output) rc = copy(r, cb, &r->work, &r->output, n);
  return rc;
}

static int blelloch_global(gs_scan_reference *r, VkCommandBuffer cb, uint64_t n, bool inclusive) {
  uint64_t padded = 1;
  while (padded < n) padded <<= 1;
  const gs_buffer *w = &r->work;
  int rc = gs_record_clear(r->dev, cb, r->memops, gs_buffer_range(w), padded);
  if (!rc) rc = copy(r, cb, &r->input, w, n);
  for (uint64_t offset = 1; offset < padded && !rc; offset <<= 1)
    rc = step(r, cb, w, w, w, STEP_UP, padded / (2 * offset), (uint32_t)offset, 0);
  if (!rc) rc = step(r, cb, w, w, w, STEP_CLEAR, 1, 0, (uint32_t)(padded - 1));
  for (uint64_t offset = padded / 2; offset >= 1 && !rc; offset >>= 1)
    rc = step(r, cb, w, w, w, STEP_DOWN, padded / (2 * offset), (uint32_t)offset, 0);
  if (rc) return rc;
  if (inclusive) return step(r, cb, w, &r->output, &r->input, STEP_ADD, n, 0, 0);
  return copy(r, cb, w, &r->output, n);
}

/* Level l of a blocked scan reads the input (level 0) or the block sums of the level below,
 * and writes the output or those sums in place. */
static VkDeviceAddress level_in(const gs_scan_reference *r, int kind, int l) {
  return l == 0 ? r->input.address : r->sums[kind][l].address;
}

static VkDeviceAddress level_out(const gs_scan_reference *r, int kind, int l) {
  return l == 0 ? r->output.address : r->sums[kind][l].address;
}

static int blocked(gs_scan_reference *r, VkCommandBuffer cb, int kind, uint64_t n, bool inclusive) {
  uint64_t count[GS_REFSCAN_MAX_LEVELS];
  int top = 0, rc = GPUSORT_OK;
  count[0] = n;
  for (;;) { /* block scans upward */
    const uint64_t blocks = (count[top] + block_of(r, kind) - 1) / block_of(r, kind);
    gs_reference_blocked_push push = {.data_in = level_in(r, kind, top), .data_out = level_out(r, kind, top),
                                      .sums = r->sums[kind][top + 1].address, .n = (uint32_t)count[top]};
    if ((rc = gs_kernel_dispatch(r->dev, cb, &r->blocked[kind], &push, (uint32_t)blocks))) return rc;
    if (blocks <= 1) break;
    count[++top] = blocks;
  }
  for (int l = top; l >= 0; l--) { /* offsets downward; the top block's offset is 0 */
    if (l == top && !(l == 0 && inclusive)) continue;
    const uint64_t blocks = (count[l] + block_of(r, kind) - 1) / block_of(r, kind);
    gs_reference_blocked_push push = {.data_in = level_in(r, kind, l), .data_out = level_out(r, kind, l),
                                      .sums = r->sums[kind][l + 1].address, .n = (uint32_t)count[l], .mode = 1,
                                      .inclusive = l == 0 && inclusive, .no_offsets = l == top};
    if ((rc = gs_kernel_dispatch(r->dev, cb, &r->blocked[kind], &push, (uint32_t)blocks))) return rc;
  }
  return GPUSORT_OK;
}

int gs_scan_reference_record(gs_scan_reference *r, VkCommandBuffer cb, gs_refscan_algo algo, uint64_t n,
                             bool inclusive) {
  if (n > r->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: reference scan beyond its capacity");
  if (n == 0) return GPUSORT_OK;
  switch (algo) {
  case GS_REFSCAN_HILLIS_STEELE: return hillis_steele(r, cb, n, inclusive);
  case GS_REFSCAN_BLELLOCH_GLOBAL: return blelloch_global(r, cb, n, inclusive);
  case GS_REFSCAN_BLELLOCH_SHARED: return blocked(r, cb, 0, n, inclusive);
  default: return blocked(r, cb, 1, n, inclusive);
  }
}
