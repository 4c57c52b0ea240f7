#include "prim/radix_sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env.h"
#include "util/error.h"

enum {
  RADIX = 256,
  /* Look-back descriptors hold 30-bit counts (shaders/lib/lookback.glsl). */
  MAX_LOOKBACK_COUNT = (1u << 30) - 1,
  HISTOGRAM_WORKGROUP = 256,
  HISTOGRAM_KEYS_PER_INVOCATION = 16, /* at least; more when the group count is capped */
  HISTOGRAM_MAX_GROUPS = 4096,        /* keeps each invocation's loop short on every n */
  /* Timestamp slots: start, after the histogram, after each pass. */
  TIMESTAMP_SLOTS = 2 + GS_RADIX_MAX_PASSES,
};

/* Push constants, laid out as in the shaders. */
typedef struct {
  uint32_t n, passes, first_shift, last_bits, groups;
} histogram_push;

typedef struct {
  uint32_t n, tiles, shift, bits, pass, flags;
} onesweep_push;

enum { PASS_FIRST = 1, PASS_LAST = 2, PASS_INDEX_VALUES = 4 };

/* item_bytes: the wider of key and value, staged one after the other in shared memory. */
static uint32_t shared_bytes_for(uint32_t workgroup, uint32_t subgroup, uint32_t keys_per_thread, unsigned item_bytes) {
  uint32_t subgroups = workgroup / subgroup;
  uint32_t counters = subgroups * RADIX;
  uint32_t staged = workgroup * keys_per_thread * (item_bytes / 4);
  uint32_t stage = counters > staged ? counters : staged;
  return 4 * (stage + 5 * RADIX + subgroups + 2);
}

/* Tile shape for the device: 16 subgroups (at most 512 invocations) of 9 keys each (fewer
 * where shared memory is short). On an H100, 512 x 9 was as fast as any shape measured
 * (5 to 30 keys, 256 to 1024 invocations): its 64 registers let two workgroups share an SM,
 * where 15 keys took 99 registers and one. GPUSORT_SORT_WORKGROUP and
 * GPUSORT_SORT_KEYS_PER_THREAD override, for tuning. */
static int choose_tile(gs_radix_sort *s) {
  const gs_device *dev = s->dev;
  uint32_t sg = dev->subgroup_size;
  uint32_t wg = sg * 16;
  if (wg > 512) wg = 512;
  if (wg < 64) wg = 64;
  wg = gs_env_u32("GPUSORT_SORT_WORKGROUP", wg);
  while (wg > dev->info.max_workgroup_size && wg > sg) wg /= 2;
  const unsigned item = s->config.value_bytes > s->info->bytes ? s->config.value_bytes : s->info->bytes;
  const bool wide = s->info->bytes == 8 || s->config.value_bytes == 8;
  uint32_t kpt = gs_env_u32("GPUSORT_SORT_KEYS_PER_THREAD", wide ? 5 : 9);
  /* At least 64 invocations: llvmpipe (Mesa 22.3) computed wrong results for workgroups of
   * 2 to 6 subgroups of 8. */
  if (wg % sg != 0 || wg > dev->info.max_workgroup_size || wg < 64 || kpt == 0 || kpt > 64)
    return gs_fail(GS_ERR_USAGE, "sort tile of %u invocations x %u keys does not suit this device", wg, kpt);
  while (kpt > 1 && shared_bytes_for(wg, sg, kpt, item) > dev->info.max_shared_bytes) kpt--;
  if (shared_bytes_for(wg, sg, kpt, item) > dev->info.max_shared_bytes)
    return gs_fail(GS_ERR_RUNTIME, "the sort's shared memory does not fit this device");
  s->workgroup_size = wg;
  s->keys_per_thread = kpt;
  s->tile_keys = wg * kpt;
  s->shared_bytes = shared_bytes_for(wg, sg, kpt, item);
  return GS_OK;
}

uint64_t gs_radix_sort_max_keys(const gs_device *dev, gs_key_type key, unsigned value_bytes) {
  const unsigned key_bytes = gs_key_info_of(key)->bytes;
  const unsigned bytes = value_bytes > key_bytes ? value_bytes : key_bytes;
  uint64_t limit = dev->info.max_data_binding / bytes;
  if (dev->info.max_allocation && dev->info.max_allocation / bytes < limit) limit = dev->info.max_allocation / bytes;
  if (limit > MAX_LOOKBACK_COUNT) limit = MAX_LOOKBACK_COUNT;
  return limit;
}

gs_buffer *gs_radix_sort_input(gs_radix_sort *s) { return &s->keys; }
gs_buffer *gs_radix_sort_values_input(gs_radix_sort *s) { return &s->values; }

static uint32_t tiles_for(const gs_radix_sort *s, uint64_t n) {
  return (uint32_t)((n + s->tile_keys - 1) / s->tile_keys);
}

int gs_radix_sort_create(gs_device *dev, gs_radix_sort *s, const gs_radix_sort_config *config) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->config = *config;
  s->info = gs_key_info_of(config->key);
  if (config->value_bytes != 0 && config->value_bytes != 4 && config->value_bytes != 8)
    return gs_fail(GS_ERR_RUNTIME, "internal error: values of %u bytes", config->value_bytes);
  if ((s->info->bytes == 8 || config->value_bytes == 8) && !dev->info.has_int64)
    return gs_fail(GS_ERR_RUNTIME, "%s cannot sort 64-bit keys or values (no shaderInt64)", dev->info.name);
  uint64_t max = gs_radix_sort_max_keys(dev, config->key, config->value_bytes);
  if (config->capacity > max)
    return gs_fail(GS_ERR_RUNTIME, "%llu %s keys exceed what %s can sort in one buffer (%llu keys)",
                   (unsigned long long)config->capacity, s->info->name, dev->info.name, (unsigned long long)max);
  int rc = choose_tile(s);
  if (rc) return rc;
  s->histogram_workgroup_size = HISTOGRAM_WORKGROUP < dev->subgroup_size ? dev->subgroup_size : HISTOGRAM_WORKGROUP;

  const bool wide = s->info->bytes == 8;
  const uint32_t kind = (uint32_t)s->info->kind, desc = config->descending ? 1 : 0;
  const uint32_t hist_spec[] = {s->histogram_workgroup_size, 0, kind, desc};
  /* Polls of an empty look-back descriptor before the tile recounts the one it waits on;
   * GPUSORT_LOOKBACK_SPIN overrides (1 makes the fallback run all the time, for tests). */
  const uint32_t spin = gs_env_u32("GPUSORT_LOOKBACK_SPIN", 256);
  const uint32_t pass_spec[] = {s->workgroup_size, 0, kind, desc, s->keys_per_thread, spin ? spin : 1};
  char pass_name[48];
  snprintf(pass_name, sizeof pass_name, "radix_onesweep_k%u", wide ? 64 : 32);
  if (config->value_bytes)
    snprintf(pass_name + strlen(pass_name), sizeof pass_name - strlen(pass_name), "_v%u", config->value_bytes * 8);
  const uint32_t pass_bindings = config->value_bytes ? 7 : 5;
  const uint32_t scan_spec[] = {HISTOGRAM_WORKGROUP, 0};
  if ((rc = gs_kernel_create(dev, &s->histogram, wide ? "radix_histogram_k64" : "radix_histogram_k32", 2,
                             sizeof(histogram_push), hist_spec, 4)))
    return rc;
  if ((rc = gs_kernel_create(dev, &s->scan_histograms, "radix_scan_histograms", 1, 0, scan_spec, 2))) return rc;
  if ((rc = gs_kernel_create(dev, &s->onesweep, pass_name, pass_bindings, sizeof(onesweep_push), pass_spec, 6)))
    return rc;
  if (kind != GS_KEY_KIND_UNSIGNED || desc) {
    const uint32_t plain_spec[] = {s->workgroup_size, 0, GS_KEY_KIND_UNSIGNED, 0, s->keys_per_thread, spin ? spin : 1};
    if ((rc = gs_kernel_create(dev, &s->onesweep_plain, pass_name, pass_bindings, sizeof(onesweep_push), plain_spec, 6)))
      return rc;
  }

  const VkDeviceSize key_bytes = (VkDeviceSize)(config->capacity ? config->capacity : 1) * s->info->bytes;
  const VkDeviceSize lookback_bytes = (VkDeviceSize)(tiles_for(s, config->capacity) + 1) * RADIX * 4;
  if ((rc = gs_buffer_create(dev, &s->keys, key_bytes, GS_MEM_DEVICE, "the sort keys")) ||
      (rc = gs_buffer_create(dev, &s->alt, key_bytes, GS_MEM_DEVICE, "the sort's second key buffer")) ||
      (rc = gs_buffer_create(dev, &s->histograms, GS_RADIX_MAX_PASSES * RADIX * 4, GS_MEM_DEVICE, "histograms")) ||
      (rc = gs_buffer_create(dev, &s->lookback, lookback_bytes, GS_MEM_DEVICE, "look-back descriptors")) ||
      (rc = gs_buffer_create(dev, &s->control, 64, GS_MEM_DEVICE, "tile tickets")))
    return rc;
  if (config->value_bytes) {
    const VkDeviceSize value_bytes = (VkDeviceSize)(config->capacity ? config->capacity : 1) * config->value_bytes;
    if ((rc = gs_buffer_create(dev, &s->values, value_bytes, GS_MEM_DEVICE, "the sort values")) ||
        (rc = gs_buffer_create(dev, &s->values_alt, value_bytes, GS_MEM_DEVICE, "the sort's second value buffer")))
      return rc;
  }
  if ((rc = gs_descriptor_pool_create(dev, 4, &s->pool))) return rc;
  const gs_buffer *hist[] = {&s->keys, &s->histograms};
  const gs_buffer *p0[] = {&s->keys, &s->alt, &s->histograms, &s->lookback, &s->control, &s->values, &s->values_alt};
  const gs_buffer *p1[] = {&s->alt, &s->keys, &s->histograms, &s->lookback, &s->control, &s->values_alt, &s->values};
  if ((rc = gs_kernel_bind(dev, &s->histogram, s->pool, hist, &s->histogram_set)) ||
      (rc = gs_kernel_bind(dev, &s->scan_histograms, s->pool, hist + 1, &s->scan_set)) ||
      (rc = gs_kernel_bind(dev, &s->onesweep, s->pool, p0, &s->pass_set[0])) ||
      (rc = gs_kernel_bind(dev, &s->onesweep, s->pool, p1, &s->pass_set[1])))
    return rc;
  if ((rc = gs_submission_init(dev, &s->submission))) return rc;
  return gs_timestamps_create(dev, &s->timestamps, TIMESTAMP_SLOTS);
}

void gs_radix_sort_destroy(gs_radix_sort *s) {
  gs_device *dev = s->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use them: leave to exit */
  gs_submission_destroy(dev, &s->submission);
  gs_timestamps_destroy(dev, &s->timestamps);
  if (s->pool) vkDestroyDescriptorPool(dev->device, s->pool, NULL);
  gs_kernel_destroy(dev, &s->histogram);
  gs_kernel_destroy(dev, &s->scan_histograms);
  gs_kernel_destroy(dev, &s->onesweep);
  gs_kernel_destroy(dev, &s->onesweep_plain);
  gs_buffer_destroy(dev, &s->keys);
  gs_buffer_destroy(dev, &s->alt);
  gs_buffer_destroy(dev, &s->values);
  gs_buffer_destroy(dev, &s->values_alt);
  gs_buffer_destroy(dev, &s->histograms);
  gs_buffer_destroy(dev, &s->lookback);
  gs_buffer_destroy(dev, &s->control);
  memset(s, 0, sizeof *s);
}

void gs_radix_sort_reset_times(gs_radix_sort *s) { gs_timestamps_reset(s->dev, &s->timestamps); }

static unsigned pass_count(const gs_radix_sort_run_options *opt) {
  return (opt->end_bit - opt->begin_bit + 7) / 8;
}

int gs_radix_sort_record(gs_radix_sort *s, VkCommandBuffer cb, const gs_radix_sort_run_options *run,
                         gs_radix_sort_result *result) {
  gs_radix_sort_run_options opt = *run;
  const unsigned key_bits = s->info->bytes * 8;
  if (opt.begin_bit == 0 && opt.end_bit == 0) opt.end_bit = key_bits;
  if (opt.end_bit > key_bits || opt.begin_bit >= opt.end_bit)
    return gs_fail(GS_ERR_USAGE, "bit range %u:%u is empty or does not fit %u-bit keys", opt.begin_bit, opt.end_bit,
                   key_bits);
  if (opt.index_values && s->config.value_bytes != 4)
    return gs_fail(GS_ERR_RUNTIME, "internal error: index values need 4-byte values");
  if (opt.n > s->config.capacity)
    return gs_fail(GS_ERR_RUNTIME, "internal error: %llu keys exceed the sort's capacity",
                   (unsigned long long)opt.n);
  const unsigned passes = pass_count(&opt);
  const uint32_t n = (uint32_t)opt.n, tiles = tiles_for(s, opt.n);
  s->times.passes = passes;
  result->keys = passes % 2 ? &s->alt : &s->keys;
  result->values = s->config.value_bytes ? (passes % 2 ? &s->values_alt : &s->values) : NULL;

  gs_timestamps_write(cb, &s->timestamps, 0);
  if (n == 0) {
    for (unsigned p = 1; p < 2 + passes; p++) gs_timestamps_write(cb, &s->timestamps, p);
    return GS_OK;
  }
  vkCmdFillBuffer(cb, s->histograms.buffer, 0, VK_WHOLE_SIZE, 0);
  vkCmdFillBuffer(cb, s->control.buffer, 0, VK_WHOLE_SIZE, 0);
  gs_cmd_barrier(cb);
  const unsigned last_bits = opt.end_bit - (opt.begin_bit + 8 * (passes - 1));
  uint64_t per_group = (uint64_t)s->histogram_workgroup_size * HISTOGRAM_KEYS_PER_INVOCATION;
  uint64_t groups = (opt.n + per_group - 1) / per_group;
  if (groups > HISTOGRAM_MAX_GROUPS) groups = HISTOGRAM_MAX_GROUPS;
  histogram_push hp = {n, passes, opt.begin_bit, last_bits, (uint32_t)groups};
  int rc = gs_kernel_dispatch(s->dev, cb, &s->histogram, s->histogram_set, &hp, (uint32_t)groups);
  if (rc) return rc;
  gs_cmd_barrier(cb);
  if ((rc = gs_kernel_dispatch(s->dev, cb, &s->scan_histograms, s->scan_set, NULL, passes))) return rc;
  gs_cmd_barrier(cb);
  gs_timestamps_write(cb, &s->timestamps, 1);

  for (unsigned p = 0; p < passes; p++) {
    const unsigned shift = opt.begin_bit + 8 * p;
    onesweep_push pp = {n, tiles, shift, p + 1 == passes ? last_bits : 8, p, 0};
    if (p == 0) pp.flags |= PASS_FIRST;
    if (p + 1 == passes) pp.flags |= PASS_LAST;
    if (p == 0 && opt.index_values) pp.flags |= PASS_INDEX_VALUES;
    vkCmdFillBuffer(cb, s->lookback.buffer, 0, (VkDeviceSize)tiles * RADIX * 4, 0);
    gs_cmd_barrier(cb);
    /* sets made for `onesweep` suit `onesweep_plain`: their layouts are defined alike */
    const gs_kernel *k = (pp.flags & (PASS_FIRST | PASS_LAST)) || !s->onesweep_plain.pipeline ? &s->onesweep
                                                                                              : &s->onesweep_plain;
    if ((rc = gs_kernel_dispatch(s->dev, cb, k, s->pass_set[p % 2], &pp, tiles))) return rc;
    gs_cmd_barrier(cb);
    gs_timestamps_write(cb, &s->timestamps, 2 + p);
  }
  if ((opt.test_flags & GS_SORT_TEST_CORRUPT) && n > 1) {
    /* Copy the first key over the last: the output is no longer a permutation of the input
     * (and usually no longer sorted) unless those keys were equal. */
    const VkDeviceSize kb = s->info->bytes, vb = s->config.value_bytes;
    VkBufferCopy region = {.srcOffset = 0, .dstOffset = (VkDeviceSize)(n - 1) * kb, .size = kb};
    vkCmdCopyBuffer(cb, result->keys->buffer, result->keys->buffer, 1, &region);
    if (vb) { /* and the first value over the last (argsort and records output the values) */
      VkBufferCopy values = {.srcOffset = 0, .dstOffset = (VkDeviceSize)(n - 1) * vb, .size = vb};
      vkCmdCopyBuffer(cb, result->values->buffer, result->values->buffer, 1, &values);
    }
    gs_cmd_barrier(cb);
  }
  return GS_OK;
}

int gs_radix_sort_collect_times(gs_radix_sort *s) {
  uint64_t t[TIMESTAMP_SLOTS];
  const unsigned used = 2 + s->times.passes;
  int rc = gs_timestamps_read(s->dev, &s->timestamps, 0, used, t);
  if (rc) return rc;
  s->times.histogram = gs_timestamps_seconds(s->dev, t[0], t[1]);
  for (unsigned p = 0; p < s->times.passes; p++) s->times.pass[p] = gs_timestamps_seconds(s->dev, t[1 + p], t[2 + p]);
  s->times.total = gs_timestamps_seconds(s->dev, t[0], t[used - 1]);
  return GS_OK;
}

int gs_radix_sort_run(gs_radix_sort *s, const gs_radix_sort_run_options *opt, gs_radix_sort_result *result) {
  gs_radix_sort_reset_times(s);
  int rc = gs_submission_begin(s->dev, &s->submission);
  if (!rc) rc = gs_radix_sort_record(s, s->submission.cb, opt, result);
  if (!rc) rc = gs_submission_submit(s->dev, &s->submission, "the GPU sort");
  if (!rc) rc = gs_submission_wait(s->dev, &s->submission, "the GPU sort");
  if (!rc) rc = gs_radix_sort_collect_times(s);
  return rc;
}
