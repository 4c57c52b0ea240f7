#include "prim/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env.h"
#include "util/error.h"

enum { MODE_LOOKBACK, MODE_REDUCE, MODE_DOWNSWEEP };
enum { TILE_NO_PREFIX = 1 };

typedef struct {
  uint32_t n, tiles, flags;
} scan_push;

const char *gs_scan_op_name(gs_scan_op op) { return op == GS_SCAN_MIN ? "min" : op == GS_SCAN_MAX ? "max" : "sum"; }

int gs_scan_op_from_name(const char *name, gs_scan_op *op) {
  if (strcmp(name, "sum") == 0) *op = GS_SCAN_SUM;
  else if (strcmp(name, "min") == 0) *op = GS_SCAN_MIN;
  else if (strcmp(name, "max") == 0) *op = GS_SCAN_MAX;
  else return -1;
  return 0;
}

/* How values combine: 1 u32 and 2 u64 bits (integer sums, and every min/max on ordered
 * bits), 3 f32 and 4 f64 (float sums). */
static unsigned accumulator_rep(const gs_scan_config *c) {
  const gs_key_info *acc = gs_key_info_of(c->acc);
  const bool wide = acc->bytes == 8;
  if (c->op == GS_SCAN_SUM && acc->kind == GS_KEY_KIND_FLOAT) return wide ? 4 : 3;
  return wide ? 2 : 1;
}

int gs_scan_check_config(const gs_device *dev, const gs_scan_config *c) {
  const gs_key_info *in = gs_key_info_of(c->input), *acc = gs_key_info_of(c->acc);
  if (c->acc != c->input) {
    if (acc->bytes < in->bytes)
      return gs_fail(GS_ERR_USAGE, "--acc %s is narrower than the %s input", acc->name, in->name);
    if (in->kind == GS_KEY_KIND_FLOAT && acc->kind != GS_KEY_KIND_FLOAT)
      return gs_fail(GS_ERR_USAGE, "--acc %s: a float input needs a float accumulator (f64)", acc->name);
    if (acc->bytes == in->bytes && acc->kind != in->kind)
      return gs_fail(GS_ERR_USAGE, "--acc %s: an accumulator of the input's width must be its type (%s)", acc->name,
                     in->name);
  }
  if (!dev) return GS_OK;
  const bool wide = in->bytes == 8 || acc->bytes == 8;
  if (wide && (!dev->info.has_int64 || !dev->info.has_subgroup_extended))
    return gs_fail(GS_ERR_RUNTIME, "%s cannot scan 64-bit values (no shaderInt64 or 64-bit subgroup operations)",
                   dev->info.name);
  if (accumulator_rep(c) == 4 && !dev->info.has_float64)
    return gs_fail(GS_ERR_RUNTIME, "%s cannot add f64 values (no shaderFloat64)", dev->info.name);
  return GS_OK;
}

uint64_t gs_scan_max_elements(const gs_device *dev, const gs_scan_config *c) {
  const unsigned in = gs_key_info_of(c->input)->bytes, acc = gs_key_info_of(c->acc)->bytes;
  const unsigned widest = in > acc ? in : acc;
  /* the input is allocated in whole 16-byte vectors: the rounded size must fit one binding */
  uint64_t limit = (dev->info.max_data_binding & ~(uint64_t)15) / widest;
  if (dev->info.max_allocation && dev->info.max_allocation / widest < limit) limit = dev->info.max_allocation / widest;
  if (limit > 0xFFFFFFF0ull) limit = 0xFFFFFFF0ull; /* element indices are 32-bit in the kernels */
  return limit;
}

gs_buffer *gs_scan_input(gs_scan *s) { return &s->input; }
gs_buffer *gs_scan_output(gs_scan *s) { return &s->output; }

static int make_kernel(gs_scan *s, gs_kernel *k, int mode, bool spine, bool split, uint32_t inclusive) {
  const gs_scan_config *c = &s->config;
  const gs_key_info *in = gs_key_info_of(spine ? c->acc : c->input), *acc = gs_key_info_of(c->acc);
  char name[64];
  static const char *const modes[] = {"lookback", "reduce", "downsweep"};
  snprintf(name, sizeof name, "scan_%s_i%u_r%u%s", modes[mode], in->bytes * 8, accumulator_rep(c),
           split ? "_split" : "");
  const uint32_t spin = gs_env_u32("GPUSORT_LOOKBACK_SPIN", 256);
  const uint32_t spec[] = {s->workgroup_size, 0, 0, 0, s->rows, spin ? spin : 1, (uint32_t)c->op, (uint32_t)in->kind,
                           (uint32_t)acc->kind, inclusive};
  return gs_kernel_create(s->dev, k, name, 6, sizeof(scan_push), spec, 10);
}

int gs_scan_create(gs_device *dev, gs_scan *s, const gs_scan_config *config) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->config = *config;
  int rc = gs_scan_check_config(dev, config);
  if (rc) return rc;
  if (config->capacity > gs_scan_max_elements(dev, config))
    return gs_fail(GS_ERR_RUNTIME, "%llu elements exceed what %s can scan in one buffer",
                   (unsigned long long)config->capacity, dev->info.name);
  const gs_key_info *in = gs_key_info_of(config->input), *acc = gs_key_info_of(config->acc);
  /* Tile: 16 subgroups (64 to 512 invocations) of 8 rows of 16-byte vectors each. On an H100
   * (2^28 u32 sums) 512 x 8 ran at 69% of the copy bandwidth, 256 x 4 at 65%, 256 x 16 at
   * 55%. GPUSORT_SCAN_WORKGROUP and GPUSORT_SCAN_ROWS override, for tuning. */
  uint32_t wg = dev->subgroup_size * 16;
  wg = wg < 64 ? 64 : wg > 512 ? 512 : wg;
  s->workgroup_size = gs_env_u32("GPUSORT_SCAN_WORKGROUP", wg);
  s->rows = gs_env_u32("GPUSORT_SCAN_ROWS", 8);
  /* At least 64 invocations: llvmpipe (Mesa 22.3) computed wrong results for workgroups of
   * 2 to 6 subgroups of 8. */
  if (s->workgroup_size % dev->subgroup_size || s->workgroup_size > dev->info.max_workgroup_size ||
      s->workgroup_size < 64 || s->rows == 0 || s->rows > 16)
    return gs_fail(GS_ERR_USAGE, "scan tile of %u invocations x %u rows does not suit this device", s->workgroup_size,
                   s->rows);
  s->tile = s->workgroup_size * s->rows * (in->bytes == 8 ? 2 : 4);
  /* Packed descriptors need 64-bit atomics and fit 32-bit accumulators; GPUSORT_SCAN_SPLIT=1
   * forces the split layout (tests). */
  s->split_descriptors = acc->bytes == 8 || !dev->info.has_int64_atomics || gs_env_u32("GPUSORT_SCAN_SPLIT", 0);

  /* Levels of reduce-then-scan: the input, then tile values until one tile holds them (until
   * one value remains, for a reduction). */
  uint64_t count = config->capacity ? config->capacity : 1;
  const uint64_t top_count = config->reduce_only ? 1 : s->tile;
  s->level_count[0] = count;
  while ((count > top_count || (config->reduce_only && s->levels == 0)) && s->levels + 1 < GS_SCAN_MAX_LEVELS) {
    count = (count + s->tile - 1) / s->tile;
    s->level_count[++s->levels] = count;
  }

  const VkDeviceSize capacity = config->capacity ? config->capacity : 1;
  const uint64_t tiles = (capacity + s->tile - 1) / s->tile;
  if ((rc = gs_buffer_create(dev, &s->input, (capacity * in->bytes + 15) & ~(VkDeviceSize)15, GS_MEM_DEVICE,
                             "the scan input")) ||
      (rc = gs_buffer_create(dev, &s->output, capacity * acc->bytes, GS_MEM_DEVICE, "the scan output")) ||
      (rc = gs_buffer_create(dev, &s->control, 64, GS_MEM_DEVICE, "tile tickets")))
    return rc;
  if ((rc = gs_descriptor_pool_create(dev, 1 + 2 * (GS_SCAN_MAX_LEVELS + 1), &s->pool)) ||
      (rc = gs_submission_init(dev, &s->submission)) || (rc = gs_timestamps_create(dev, &s->timestamps, 2)))
    return rc;
  if (config->algo == GS_SCAN_LOOKBACK && !config->reduce_only) {
    const VkDeviceSize per_tile = s->split_descriptors ? 5 * 4 : 8;
    if ((rc = gs_buffer_create(dev, &s->descriptors, tiles * per_tile, GS_MEM_DEVICE, "look-back descriptors")) ||
        (rc = make_kernel(s, &s->lookback, MODE_LOOKBACK, false, s->split_descriptors, config->inclusive)))
      return rc;
    const gs_buffer *b[] = {&s->input, &s->input, &s->output, &s->control, &s->descriptors, &s->output};
    return gs_kernel_bind(dev, &s->lookback, s->pool, b, &s->lookback_set);
  }
  for (unsigned l = 1; l <= s->levels; l++)
    if ((rc = gs_buffer_create(dev, &s->spine[l], (s->level_count[l] * acc->bytes + 15) & ~(VkDeviceSize)15,
                               GS_MEM_DEVICE, "scan tile values")))
      return rc;
  if (config->reduce_only) {
    if ((rc = make_kernel(s, &s->reduce[0], MODE_REDUCE, false, false, 0)) ||
        (s->levels >= 2 && (rc = make_kernel(s, &s->reduce[1], MODE_REDUCE, true, false, 0))))
      return rc;
    for (unsigned l = 0; l < s->levels; l++) {
      gs_buffer *level_in = l == 0 ? &s->input : &s->spine[l];
      const gs_buffer *b[] = {level_in, level_in, &s->control, &s->control, &s->spine[l + 1], &s->control};
      if ((rc = gs_kernel_bind(dev, &s->reduce[l ? 1 : 0], s->pool, b, &s->reduce_set[l]))) return rc;
    }
    return GS_OK;
  }
  /* [0] reads the input (user's inclusive flag); [1] reads tile values and scans them
   * exclusively, in place. */
  if ((rc = make_kernel(s, &s->downsweep[0], MODE_DOWNSWEEP, false, false, config->inclusive)) ||
      (s->levels >= 1 && (rc = make_kernel(s, &s->reduce[0], MODE_REDUCE, false, false, 0))) ||
      (s->levels >= 1 && (rc = make_kernel(s, &s->downsweep[1], MODE_DOWNSWEEP, true, false, 0))) ||
      (s->levels >= 2 && (rc = make_kernel(s, &s->reduce[1], MODE_REDUCE, true, false, 0))))
    return rc;
  /* Level l reads the input or spine[l] (scanned in place); its tile values are spine[l + 1]. */
  for (unsigned l = 0; l <= s->levels; l++) {
    gs_buffer *level_in = l == 0 ? &s->input : &s->spine[l];
    gs_buffer *level_out = l == 0 ? &s->output : &s->spine[l];
    gs_buffer *values = l < s->levels ? &s->spine[l + 1] : &s->control;
    const gs_buffer *b[] = {level_in, level_in, level_out, &s->control, values, level_out};
    const int kernel = l == 0 ? 0 : 1;
    if (l < s->levels && (rc = gs_kernel_bind(dev, &s->reduce[kernel], s->pool, b, &s->reduce_set[l]))) return rc;
    if ((rc = gs_kernel_bind(dev, &s->downsweep[kernel], s->pool, b, &s->downsweep_set[l]))) return rc;
  }
  return GS_OK;
}

void gs_scan_destroy(gs_scan *s) {
  gs_device *dev = s->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use them: leave to exit */
  gs_submission_destroy(dev, &s->submission);
  gs_timestamps_destroy(dev, &s->timestamps);
  if (s->pool) vkDestroyDescriptorPool(dev->device, s->pool, NULL);
  gs_kernel_destroy(dev, &s->lookback);
  for (int i = 0; i < 2; i++) {
    gs_kernel_destroy(dev, &s->reduce[i]);
    gs_kernel_destroy(dev, &s->downsweep[i]);
  }
  gs_buffer_destroy(dev, &s->input);
  gs_buffer_destroy(dev, &s->output);
  gs_buffer_destroy(dev, &s->control);
  gs_buffer_destroy(dev, &s->descriptors);
  for (unsigned l = 0; l < GS_SCAN_MAX_LEVELS; l++) gs_buffer_destroy(dev, &s->spine[l]);
  memset(s, 0, sizeof *s);
}

static uint32_t tiles_of(const gs_scan *s, uint64_t count) { return (uint32_t)((count + s->tile - 1) / s->tile); }

gs_buffer *gs_scan_reduce_result(gs_scan *s, uint64_t n) {
  unsigned level = 1;
  for (uint64_t count = tiles_of(s, n); count > 1; count = tiles_of(s, count)) level++;
  return &s->spine[level];
}

int gs_scan_record(gs_scan *s, VkCommandBuffer cb, uint64_t n) {
  if (n > s->config.capacity) return gs_fail(GS_ERR_RUNTIME, "internal error: scan beyond its capacity");
  gs_timestamps_write(cb, &s->timestamps, 0);
  int rc = GS_OK;
  if (n == 0) {
    gs_timestamps_write(cb, &s->timestamps, 1);
    return GS_OK;
  }
  if (s->config.reduce_only) {
    /* Reduce level by level until one value remains. */
    uint64_t count = n;
    for (unsigned l = 0; count > 1 || l == 0; l++) {
      scan_push push = {(uint32_t)count, tiles_of(s, count), 0};
      if ((rc = gs_kernel_dispatch(s->dev, cb, &s->reduce[l ? 1 : 0], s->reduce_set[l], &push, push.tiles))) return rc;
      gs_cmd_barrier(cb);
      count = push.tiles;
    }
  } else if (s->config.algo == GS_SCAN_LOOKBACK) {
    vkCmdFillBuffer(cb, s->control.buffer, 0, VK_WHOLE_SIZE, 0);
    vkCmdFillBuffer(cb, s->descriptors.buffer, 0, VK_WHOLE_SIZE, 0);
    gs_cmd_barrier(cb);
    scan_push push = {(uint32_t)n, tiles_of(s, n), 0};
    rc = gs_kernel_dispatch(s->dev, cb, &s->lookback, s->lookback_set, &push, push.tiles);
    gs_cmd_barrier(cb);
  } else {
    /* Reduce level by level until one tile holds the tile values, scan that tile, then scan
     * each level down from the prefixes of the level above. */
    uint64_t count[GS_SCAN_MAX_LEVELS + 1] = {n};
    unsigned top = 0;
    while (count[top] > s->tile) {
      count[top + 1] = tiles_of(s, count[top]);
      scan_push push = {(uint32_t)count[top], (uint32_t)count[top + 1], 0};
      if ((rc = gs_kernel_dispatch(s->dev, cb, &s->reduce[top ? 1 : 0], s->reduce_set[top], &push, push.tiles)))
        return rc;
      gs_cmd_barrier(cb);
      top++;
    }
    for (unsigned l = top + 1; l-- > 0;) {
      scan_push push = {(uint32_t)count[l], tiles_of(s, count[l]), l == top ? TILE_NO_PREFIX : 0};
      if ((rc = gs_kernel_dispatch(s->dev, cb, &s->downsweep[l ? 1 : 0], s->downsweep_set[l], &push, push.tiles)))
        return rc;
      gs_cmd_barrier(cb);
    }
  }
  gs_timestamps_write(cb, &s->timestamps, 1);
  return rc;
}

int gs_scan_collect_time(gs_scan *s) {
  uint64_t t[2];
  int rc = gs_timestamps_read(s->dev, &s->timestamps, 0, 2, t);
  if (rc == GS_OK) s->seconds = gs_timestamps_seconds(s->dev, t[0], t[1]);
  return rc;
}

int gs_scan_run(gs_scan *s, uint64_t n) {
  gs_timestamps_reset(s->dev, &s->timestamps);
  int rc = gs_submission_begin(s->dev, &s->submission);
  if (!rc) rc = gs_scan_record(s, s->submission.cb, n);
  if (!rc) rc = gs_submission_submit(s->dev, &s->submission, "the GPU scan");
  if (!rc) rc = gs_submission_wait(s->dev, &s->submission, "the GPU scan");
  if (!rc) rc = gs_scan_collect_time(s);
  return rc;
}
