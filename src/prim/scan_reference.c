#include "prim/scan_reference.h"

#include <string.h>

#include "util/error.h"

typedef struct {
  uint32_t count, offset, mode, last;
} global_push;
enum { STEP_HILLIS_STEELE, STEP_SHIFT, STEP_UP, STEP_DOWN, STEP_CLEAR, STEP_ADD };

typedef struct {
  uint32_t n, mode, inclusive, no_offsets;
} blocked_push;

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

int gs_scan_reference_create(gs_device *dev, gs_scan_reference *r, uint64_t capacity) {
  memset(r, 0, sizeof *r);
  r->dev = dev;
  r->capacity = capacity ? capacity : 1;
  r->workgroup_size = 256;
  r->padded = 1;
  while (r->padded < r->capacity) r->padded <<= 1;
  int rc;
  const uint32_t spec_global[] = {r->workgroup_size, 0};
  const uint32_t spec_blocked[2][5] = {{r->workgroup_size, 0, 0, 0, 0}, {r->workgroup_size, 0, 0, 0, 1}};
  if ((rc = gs_kernel_create(dev, &r->global, "reference_scan_global", 3, sizeof(global_push), spec_global, 2)) ||
      (rc = gs_kernel_create(dev, &r->blocked[0], "reference_scan_blocked", 3, sizeof(blocked_push), spec_blocked[0], 5)) ||
      (rc = gs_kernel_create(dev, &r->blocked[1], "reference_scan_blocked", 3, sizeof(blocked_push), spec_blocked[1], 5)))
    return rc;
  if ((rc = gs_buffer_create(dev, &r->input, r->capacity * 4, GS_MEM_DEVICE, "the reference scan input")) ||
      (rc = gs_buffer_create(dev, &r->output, r->capacity * 4, GS_MEM_DEVICE, "the reference scan output")) ||
      (rc = gs_buffer_create(dev, &r->work, r->padded * 4, GS_MEM_DEVICE, "the reference scan work area")))
    return rc;
  if ((rc = gs_descriptor_pool_create(dev, 5 + 2 * GS_REFSCAN_MAX_LEVELS, &r->pool))) return rc;
  const gs_buffer *in_out[] = {&r->input, &r->output, &r->input}, *out_work[] = {&r->output, &r->work, &r->input},
                  *work_out[] = {&r->work, &r->output, &r->input}, *plus[] = {&r->work, &r->output, &r->input},
                  *only[] = {&r->work, &r->work, &r->work};
  if ((rc = gs_kernel_bind(dev, &r->global, r->pool, in_out, &r->in_out)) ||
      (rc = gs_kernel_bind(dev, &r->global, r->pool, out_work, &r->out_work)) ||
      (rc = gs_kernel_bind(dev, &r->global, r->pool, work_out, &r->work_out)) ||
      (rc = gs_kernel_bind(dev, &r->global, r->pool, plus, &r->work_plus_input)) ||
      (rc = gs_kernel_bind(dev, &r->global, r->pool, only, &r->work_only)))
    return rc;
  /* Blocked: level l scans in_l into out_l in blocks and writes block sums to sums[l + 1]. */
  for (int kind = 0; kind < 2; kind++) {
    uint64_t count = r->capacity;
    for (int l = 0; l < GS_REFSCAN_MAX_LEVELS - 1; l++) {
      const uint64_t blocks = (count + block_of(r, kind) - 1) / block_of(r, kind);
      if ((rc = gs_buffer_create(dev, &r->sums[kind][l + 1], blocks * 4, GS_MEM_DEVICE, "reference block sums")))
        return rc;
      gs_buffer *in = l == 0 ? &r->input : &r->sums[kind][l], *out = l == 0 ? &r->output : &r->sums[kind][l];
      const gs_buffer *b[] = {in, out, &r->sums[kind][l + 1]};
      if ((rc = gs_kernel_bind(dev, &r->blocked[kind], r->pool, b, &r->level[kind][l]))) return rc;
      if (blocks <= 1) break;
      count = blocks;
    }
  }
  return GS_OK;
}

void gs_scan_reference_destroy(gs_scan_reference *r) {
  gs_device *dev = r->dev;
  if (!dev || !dev->device || dev->wedged) return;
  if (r->pool) vkDestroyDescriptorPool(dev->device, r->pool, NULL);
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

static int step(gs_scan_reference *r, VkCommandBuffer cb, VkDescriptorSet set, uint32_t mode, uint64_t count,
                uint32_t offset, uint32_t last) {
  global_push push = {(uint32_t)count, offset, mode, last};
  int rc = gs_kernel_dispatch(r->dev, cb, &r->global, set, &push, mode == STEP_CLEAR ? 1 : groups_for(r, count));
  gs_cmd_barrier(cb);
  return rc;
}

static void copy(VkCommandBuffer cb, gs_buffer *from, gs_buffer *to, uint64_t n) {
  VkBufferCopy region = {.size = n * 4};
  vkCmdCopyBuffer(cb, from->buffer, to->buffer, 1, &region);
  gs_cmd_barrier(cb);
}

static int hillis_steele(gs_scan_reference *r, VkCommandBuffer cb, uint64_t n, bool inclusive) {
  /* Ping-pong: input -> output, then output <-> work; `in_output` says where the result is. */
  int rc = GS_OK;
  bool in_output = true;
  if (n > 1)
    rc = step(r, cb, r->in_out, STEP_HILLIS_STEELE, n, 1, 0);
  else
    copy(cb, &r->input, &r->output, n);
  for (uint64_t offset = 2; offset < n && !rc; offset <<= 1) {
    rc = step(r, cb, in_output ? r->out_work : r->work_out, STEP_HILLIS_STEELE, n, (uint32_t)offset, 0);
    in_output = !in_output;
  }
  if (!rc && !inclusive) {
    rc = step(r, cb, in_output ? r->out_work : r->work_out, STEP_SHIFT, n, 0, 0);
    in_output = !in_output;
  }
  if (!in_output) copy(cb, &r->work, &r->output, n);
  return rc;
}

static int blelloch_global(gs_scan_reference *r, VkCommandBuffer cb, uint64_t n, bool inclusive) {
  uint64_t padded = 1;
  while (padded < n) padded <<= 1;
  copy(cb, &r->input, &r->work, n);
  if (padded > n) vkCmdFillBuffer(cb, r->work.buffer, n * 4, (padded - n) * 4, 0);
  gs_cmd_barrier(cb);
  int rc = GS_OK;
  for (uint64_t offset = 1; offset < padded && !rc; offset <<= 1)
    rc = step(r, cb, r->work_only, STEP_UP, padded / (2 * offset), (uint32_t)offset, 0);
  if (!rc) rc = step(r, cb, r->work_only, STEP_CLEAR, 1, 0, (uint32_t)(padded - 1));
  for (uint64_t offset = padded / 2; offset >= 1 && !rc; offset >>= 1)
    rc = step(r, cb, r->work_only, STEP_DOWN, padded / (2 * offset), (uint32_t)offset, 0);
  if (rc) return rc;
  if (inclusive) return step(r, cb, r->work_plus_input, STEP_ADD, n, 0, 0);
  copy(cb, &r->work, &r->output, n);
  return GS_OK;
}

static int blocked(gs_scan_reference *r, VkCommandBuffer cb, int kind, uint64_t n, bool inclusive) {
  uint64_t count[GS_REFSCAN_MAX_LEVELS];
  int top = 0, rc = GS_OK;
  count[0] = n;
  for (;;) { /* block scans upward */
    const uint64_t blocks = (count[top] + block_of(r, kind) - 1) / block_of(r, kind);
    blocked_push push = {(uint32_t)count[top], 0, 0, 0};
    if ((rc = gs_kernel_dispatch(r->dev, cb, &r->blocked[kind], r->level[kind][top], &push, (uint32_t)blocks)))
      return rc;
    gs_cmd_barrier(cb);
    if (blocks <= 1) break;
    count[++top] = blocks;
  }
  for (int l = top; l >= 0; l--) { /* offsets downward; the top block's offset is 0 */
    if (l == top && !(l == 0 && inclusive)) continue;
    const uint64_t blocks = (count[l] + block_of(r, kind) - 1) / block_of(r, kind);
    blocked_push push = {(uint32_t)count[l], 1, l == 0 && inclusive, l == top};
    if ((rc = gs_kernel_dispatch(r->dev, cb, &r->blocked[kind], r->level[kind][l], &push, (uint32_t)blocks)))
      return rc;
    gs_cmd_barrier(cb);
  }
  return GS_OK;
}

int gs_scan_reference_record(gs_scan_reference *r, VkCommandBuffer cb, gs_refscan_algo algo, uint64_t n,
                             bool inclusive) {
  if (n > r->capacity) return gs_fail(GS_ERR_RUNTIME, "internal error: reference scan beyond its capacity");
  if (n == 0) return GS_OK;
  switch (algo) {
  case GS_REFSCAN_HILLIS_STEELE: return hillis_steele(r, cb, n, inclusive);
  case GS_REFSCAN_BLELLOCH_GLOBAL: return blelloch_global(r, cb, n, inclusive);
  case GS_REFSCAN_BLELLOCH_SHARED: return blocked(r, cb, 0, n, inclusive);
  default: return blocked(r, cb, 1, n, inclusive);
  }
}
