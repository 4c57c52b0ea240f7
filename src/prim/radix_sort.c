#include "prim/radix_sort.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

enum {
  /* The histogram's tiles: 256 invocations x 16 keys, taken in turn by at most the device
   * configuration's histogram_groups workgroups; other shapes and workgroup counts sorted no
   * faster (doc/tuning.md, "Sort: histogram tile and workgroup count") */
  HISTOGRAM_WORKGROUP = 256,
  HISTOGRAM_TILE_ROWS = 16,
  STATE_CONTROL_BYTES = 256,          /* gs_sort_control, padded */
  STATE_HISTOGRAM_BYTES = GS_RADIX_MAX_PASSES * GS_RADIX * 4,
  STATE_HEAD_BYTES = GS_RADIX_SORT_STATE_HEAD_BYTES,
};
_Static_assert(STATE_HEAD_BYTES == STATE_CONTROL_BYTES + 2 * STATE_HISTOGRAM_BYTES, "the state block's head");

/* Shared memory of a digit-binning pass (radix_onesweep.comp). held_key_bytes: the bytes of each
 * key held beside the counters while the keys are ranked (0: none held); staged_bytes: those of
 * each staged item (keys, then values, staged in turn in the same words). */
static uint32_t shared_bytes_for(uint32_t workgroup, uint32_t subgroup, uint32_t keys_per_thread,
                                 unsigned held_key_bytes, unsigned staged_bytes) {
  uint32_t subgroups = workgroup / subgroup, tile = workgroup * keys_per_thread;
  uint32_t held = subgroups * GS_RADIX + tile * (held_key_bytes / 4);
  uint32_t staged = tile * (staged_bytes / 4);
  uint32_t stage = held > staged ? held : staged;
  return 4 * (stage + 5 * GS_RADIX + subgroups + 2);
}

/* A tile of wg x kpt for the sorter's layout and choices, with fewer keys per invocation where
 * shared memory is short. */
static int fit_tile(const gs_radix_sort *s, uint32_t wg, uint32_t kpt, gs_radix_sort_tile *t) {
  const gs_device *dev = s->dev;
  const uint32_t sg = dev->subgroup_size;
  const unsigned key = s->info->bytes, value = s->config.value_bytes;
  const unsigned held_key = s->hold_keys ? key : 0;
  const unsigned item = GS_SORT_STAGES_HALVES(key, value, s->hold_keys) ? 4 : value > key ? value : key;
  if (wg % sg != 0 || wg > dev->info.max_workgroup_size || wg < 64 || kpt == 0 || kpt > 64)
    return gs_fail(GPUSORT_ERROR_USAGE, "sort tile of %u invocations x %u keys does not suit this device", wg, kpt);
  /* llvmpipe (Mesa 22.3) loses the invocations that run one iteration more than others of the
   * digit-binning kernel's loops `for (d = lid; d < RADIX; d += WORKGROUP_SIZE)`, which happens
   * where the workgroup does not divide RADIX: at 10, 12, 20 or 24 subgroups the output came
   * back unsorted, or the process crashed. Loops with one trip count for every invocation sort
   * right there, but cost NVIDIA registers and time, so the kernel keeps its loops and
   * lavapipe, which runs 16 subgroups, refuses these shapes
   * (doc/tuning.md, "Sort: digit loops that lavapipe miscounts"). */
  const uint32_t subgroups = wg / sg;
  if (dev->info.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE && (subgroups & (subgroups - 1)) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "sort tile of %u invocations: lavapipe sorts only in workgroups of a power of "
                   "two subgroups", wg);
  while (kpt > 1 && shared_bytes_for(wg, sg, kpt, held_key, item) > dev->info.max_shared_bytes) kpt--;
  if (shared_bytes_for(wg, sg, kpt, held_key, item) > dev->info.max_shared_bytes)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "the sort's shared memory does not fit this device");
  *t = (gs_radix_sort_tile){wg, kpt, wg * kpt, shared_bytes_for(wg, sg, kpt, held_key, item)};
  return GPUSORT_OK;
}

/* The layout's tile and choices from the device's configuration, and for Onesweep the small
 * sorts' tiles smaller than it (in increasing size). */
static int choose_tile(gs_radix_sort *s, const gs_device_config *config) {
  const gs_sort_layout layout = gs_sort_layout_of(s->info->bytes, s->config.value_bytes);
  s->hold_keys = (config->sort_hold_keys & GS_SORT_LAYOUT_BIT(layout)) != 0;
  s->early_counts = (config->sort_early_counts & GS_SORT_LAYOUT_BIT(layout)) != 0;
  s->split_maps = (config->sort_split_maps & GS_SORT_LAYOUT_BIT(layout)) != 0;
  /* Float keys' map (in the first pass and out of the last) needs registers that some tiles leave
   * no room for (src/prim/device_config.c). */
  const uint32_t keys_per_thread = config->sort_tiles[layout].keys_per_thread;
  const bool fewer = s->info->kind == GS_KEY_KIND_FLOAT && keys_per_thread > 1 &&
                     (config->sort_float_fewer_keys & GS_SORT_LAYOUT_BIT(layout));
  gs_radix_sort_tile t;
  int rc = fit_tile(s, config->sort_tiles[layout].workgroup_size, keys_per_thread - (fewer ? 1 : 0), &t);
  if (rc) return rc;
  s->workgroup_size = t.workgroup_size;
  s->keys_per_thread = t.keys_per_thread;
  s->tile_keys = t.tile_keys;
  s->shared_bytes = t.shared_bytes;
  s->small_min_tiles = config->sort_small_min_tiles ? config->sort_small_min_tiles : 1;
  if (s->config.algo != GS_SORT_ONESWEEP) return GPUSORT_OK;
  for (uint32_t i = 0; i < config->sort_small_tile_count && i < GS_SORT_SMALL_TILES; i++) {
    if ((rc = fit_tile(s, config->sort_small_tiles[i].workgroup_size, config->sort_small_tiles[i].keys_per_thread, &t)))
      return rc;
    const uint32_t below = s->small_count ? s->small[s->small_count - 1].tile.tile_keys : 0;
    if (t.tile_keys > below && t.tile_keys < s->tile_keys) s->small[s->small_count++].tile = t;
  }
  return GPUSORT_OK;
}

/* The small sort's tile an unsegmented Onesweep sort of up to max_n keys takes, or NULL for
 * the layout's own (gs_radix_sort_tile_for). */
static const gs_radix_sort_small_tile *small_tile_for(const gs_radix_sort *s, uint64_t max_n) {
  if (s->small_count == 0 || (uint64_t)s->tile_keys * s->small_min_tiles <= max_n) return NULL;
  uint32_t i = s->small_count - 1;
  while (i > 0 && (uint64_t)s->small[i].tile.tile_keys * s->small_min_tiles > max_n) i--;
  return &s->small[i];
}

gs_radix_sort_tile gs_radix_sort_tile_for(const gs_radix_sort *s, uint64_t max_n) {
  const gs_radix_sort_small_tile *small = small_tile_for(s, max_n);
  if (small) return small->tile;
  return (gs_radix_sort_tile){s->workgroup_size, s->keys_per_thread, s->tile_keys, s->shared_bytes};
}

uint64_t gs_radix_sort_max_keys(const gs_device *dev, gs_key_type key, unsigned value_bytes, bool segmented) {
  const unsigned key_bytes = gs_key_info_of(key)->bytes;
  const unsigned bytes = value_bytes > key_bytes ? value_bytes : key_bytes;
  uint64_t limit = dev->info.max_data_buffer / bytes;
  /* unsegmented: look-back counts include the digit start; segmented: positions are u32 */
  const uint64_t counted = segmented ? 1ull << 32 : GS_LOOKBACK_COUNT_MASK;
  return limit < counted ? limit : counted;
}

uint64_t gs_radix_sort_segment_limit(const gs_radix_sort *s) {
  return (uint64_t)(GS_LOOKBACK_COUNT_MASK / s->tile_keys) * s->tile_keys;
}

static uint32_t tiles_for(const gs_radix_sort *s, uint64_t n) { return gs_groups_for(n, s->tile_keys); }

/* The digit-binning kernel's name for the sorter's key and value widths. */
static void pass_kernel_name(const gs_radix_sort *s, char *name, size_t size) {
  snprintf(name, size, "radix_onesweep_k%u", s->info->bytes * 8);
  if (s->config.value_bytes) snprintf(name + strlen(name), size - strlen(name), "_v%u", s->config.value_bytes * 8);
}

int gs_radix_sort_create(gs_device *dev, const gs_memops *memops, const gs_device_config *config,
                         const gs_radix_sort_config *sort_config, gs_radix_sort *s) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  s->memops = memops;
  s->config = *sort_config;
  s->info = gs_key_info_of(sort_config->key);
  if (sort_config->value_bytes != 0 && sort_config->value_bytes != 4 && sort_config->value_bytes != 8)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: values of %u bytes", sort_config->value_bytes);
  if ((s->info->bytes == 8 || sort_config->value_bytes == 8) && !dev->int64)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot sort 64-bit keys or values (no shaderInt64)", dev->info.name);
  int rc = choose_tile(s, config); /* (bitonic too: segment limits pace its submissions) */
  if (rc) return rc;
  if (sort_config->algo == GS_SORT_BITONIC)
    return gs_bitonic_sort_create(dev, memops, sort_config->key, sort_config->descending, sort_config->value_bytes,
                                  &s->bitonic);
  if (sort_config->algo != GS_SORT_ONESWEEP && sort_config->algo != GS_SORT_REDUCE_THEN_SCAN)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: sort algorithm %d", (int)sort_config->algo);
  const bool rts = sort_config->algo == GS_SORT_REDUCE_THEN_SCAN;
  const uint32_t hist_wg =
      gs_workgroup_within(dev, HISTOGRAM_WORKGROUP < dev->subgroup_size ? dev->subgroup_size : HISTOGRAM_WORKGROUP);
  s->histogram_workgroup_size = hist_wg;
  s->histogram_max_groups = config->histogram_groups;

  const bool wide = s->info->bytes == 8;
  const uint32_t kind = (uint32_t)s->info->kind, desc = sort_config->descending ? 1 : 0;
  const uint32_t spin = config->lookback_spin ? config->lookback_spin : 1;
  const uint32_t hist_spec[] = {hist_wg, 0, kind, desc, HISTOGRAM_TILE_ROWS};
  uint32_t pass_spec[GS_SPEC_COUNT] = {s->workgroup_size, 0, kind, desc, s->keys_per_thread, spin};
  pass_spec[GS_SPEC_REDUCE_THEN_SCAN] = rts;
  pass_spec[GS_SPEC_HOLD_KEYS] = s->hold_keys;
  pass_spec[GS_SPEC_EARLY_COUNTS] = s->early_counts;
  memcpy(s->kpt_spec, pass_spec, sizeof pass_spec);
  const uint32_t one_group[] = {64, 0};
  char pass_name[48];
  pass_kernel_name(s, pass_name, sizeof pass_name);
  const uint32_t scan_spec[] = {hist_wg, 0};
  if ((rc = gs_kernel_create(dev, &s->histogram, wide ? "radix_histogram_k64" : "radix_histogram_k32",
                             sizeof(gs_histogram_push), hist_spec, 5)) ||
      (rc = gs_kernel_create(dev, &s->scan_histograms, "radix_scan_histograms", sizeof(gs_scan_histograms_push),
                             scan_spec, 2)) ||
      (rc = gs_kernel_create(dev, &s->prepare_indirect, "radix_prepare_indirect", sizeof(gs_prepare_indirect_push),
                             one_group, 2)) ||
      (rc = gs_kernel_create(dev, &s->onesweep, pass_name, sizeof(gs_onesweep_push), pass_spec, GS_SPEC_COUNT)))
    return rc;
  if (kind != GS_KEY_KIND_UNSIGNED || desc) {
    uint32_t plain_spec[GS_SPEC_COUNT];
    memcpy(plain_spec, pass_spec, sizeof plain_spec);
    plain_spec[GS_SPEC_KEY_KIND] = GS_KEY_KIND_UNSIGNED;
    plain_spec[GS_SPEC_KEY_DESCENDING] = 0;
    if ((rc = gs_kernel_create(dev, &s->onesweep_plain, pass_name, sizeof(gs_onesweep_push), plain_spec,
                               GS_SPEC_COUNT)))
      return rc;
    if (s->split_maps) {
      uint32_t role_spec[GS_SPEC_COUNT];
      memcpy(role_spec, pass_spec, sizeof role_spec);
      role_spec[GS_SPEC_PASS_MAPS] = GS_SORT_MAPS_IN;
      if ((rc = gs_kernel_create(dev, &s->onesweep_first, pass_name, sizeof(gs_onesweep_push), role_spec,
                                 GS_SPEC_COUNT)))
        return rc;
      role_spec[GS_SPEC_PASS_MAPS] = GS_SORT_MAPS_OUT;
      if ((rc = gs_kernel_create(dev, &s->onesweep_last, pass_name, sizeof(gs_onesweep_push), role_spec,
                                 GS_SPEC_COUNT)))
        return rc;
    }
  }
  for (uint32_t i = 0; i < s->small_count; i++) {
    gs_radix_sort_small_tile *t = &s->small[i];
    uint32_t spec[GS_SPEC_COUNT];
    memcpy(spec, pass_spec, sizeof spec);
    spec[GS_SPEC_WORKGROUP_SIZE] = t->tile.workgroup_size;
    spec[GS_SPEC_TILE_ROWS] = t->tile.keys_per_thread;
    if ((rc = gs_kernel_create(dev, &t->onesweep, pass_name, sizeof(gs_onesweep_push), spec, GS_SPEC_COUNT)))
      return rc;
    if (!s->onesweep_plain.pipeline) continue;
    spec[GS_SPEC_KEY_KIND] = GS_KEY_KIND_UNSIGNED;
    spec[GS_SPEC_KEY_DESCENDING] = 0;
    if ((rc = gs_kernel_create(dev, &t->onesweep_plain, pass_name, sizeof(gs_onesweep_push), spec, GS_SPEC_COUNT)))
      return rc;
  }
  if (rts) {
    const gs_scan_config spine = {.input = GS_KEY_U32, .acc = GS_KEY_U32, .op = GS_SCAN_SUM,
                                  .algo = GS_SCAN_REDUCE_THEN_SCAN};
    if ((rc = gs_kernel_create(dev, &s->upsweep, wide ? "radix_upsweep_k64" : "radix_upsweep_k32",
                               sizeof(gs_onesweep_push), pass_spec, 5)) ||
        (rc = gs_scan_create(dev, memops, config, &spine, &s->spine)))
      return rc;
  }
  return GPUSORT_OK;
}

int gs_radix_sort_enable_segments(gs_radix_sort *s) {
  if (s->segments_enabled || s->config.algo == GS_SORT_BITONIC) return GPUSORT_OK; /* (bitonic: unsegmented) */
  char name[48];
  pass_kernel_name(s, name, sizeof name);
  uint32_t spec[GS_SPEC_COUNT];
  memcpy(spec, s->kpt_spec, sizeof spec);
  spec[GS_SPEC_SEGMENTED] = 1;
  const uint32_t one_group[] = {s->histogram_workgroup_size, 0};
  int rc;
  if ((rc = gs_kernel_create(s->dev, &s->next_segment, "radix_next_segment", sizeof(gs_next_segment_push), one_group,
                             2)) ||
      (rc = gs_kernel_create(s->dev, &s->onesweep_segmented, name, sizeof(gs_onesweep_push), spec, GS_SPEC_COUNT)))
    return rc;
  if (s->onesweep_plain.pipeline) {
    spec[GS_SPEC_KEY_KIND] = GS_KEY_KIND_UNSIGNED;
    spec[GS_SPEC_KEY_DESCENDING] = 0;
    if ((rc = gs_kernel_create(s->dev, &s->onesweep_plain_segmented, name, sizeof(gs_onesweep_push), spec,
                               GS_SPEC_COUNT)))
      return rc;
  }
  s->segments_enabled = true;
  return GPUSORT_OK;
}

void gs_radix_sort_destroy(gs_radix_sort *s) {
  gs_device *dev = s->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use them: leave to exit */
  gs_kernel_destroy(dev, &s->histogram);
  gs_kernel_destroy(dev, &s->scan_histograms);
  gs_kernel_destroy(dev, &s->prepare_indirect);
  gs_kernel_destroy(dev, &s->onesweep);
  gs_kernel_destroy(dev, &s->onesweep_plain);
  gs_kernel_destroy(dev, &s->onesweep_first);
  gs_kernel_destroy(dev, &s->onesweep_last);
  gs_kernel_destroy(dev, &s->onesweep_segmented);
  gs_kernel_destroy(dev, &s->onesweep_plain_segmented);
  gs_kernel_destroy(dev, &s->next_segment);
  gs_kernel_destroy(dev, &s->upsweep);
  for (uint32_t i = 0; i < s->small_count; i++) {
    gs_kernel_destroy(dev, &s->small[i].onesweep);
    gs_kernel_destroy(dev, &s->small[i].onesweep_plain);
  }
  gs_scan_destroy(&s->spine);
  gs_bitonic_sort_destroy(&s->bitonic);
  memset(s, 0, sizeof *s);
}

/* The most tiles of a sort of up to max_n keys in any tile it may take (a smaller tile serves
 * fewer keys, but may have more tiles than the layout's at max_n). */
static uint64_t most_tiles(const gs_radix_sort *s, uint64_t max_n) {
  uint64_t most = tiles_for(s, max_n);
  for (uint32_t i = 0; i < s->small_count; i++) {
    /* small tile i serves sorts below the next tile's threshold */
    const uint64_t next = i + 1 < s->small_count ? s->small[i + 1].tile.tile_keys : s->tile_keys;
    const uint64_t below = next * s->small_min_tiles - 1, n = max_n < below ? max_n : below;
    const uint64_t tiles = gs_groups_for(n, s->small[i].tile.tile_keys);
    if (tiles > most) most = tiles;
  }
  return most;
}

/* Look-back descriptors of one pass: a row of GS_RADIX per tile. */
static VkDeviceSize lookback_bytes(const gs_radix_sort *s, uint64_t max_n) {
  return ((VkDeviceSize)most_tiles(s, max_n) + 1) * GS_RADIX * 4;
}

/* Reduce-then-scan: a tile table (GS_RADIX rows of a word per tile), 16-byte aligned. */
static VkDeviceSize table_bytes(const gs_radix_sort *s, uint64_t max_n) {
  return ((VkDeviceSize)tiles_for(s, max_n) * GS_RADIX * 4 + 15) / 16 * 16;
}

/* The state block: the control block (tickets, indirect counts and dispatches), two halves of
 * digit histograms (sorts count into them in turn: gs_radix_sort_rest), then two arrays of
 * look-back descriptors: passes use them in turn, and each pass zeroes the other for the next.
 * Reduce-then-scan has the tile table and its scan (and the scan's own state) where the
 * descriptors were. */
VkDeviceSize gs_radix_sort_state_bytes(const gs_radix_sort *s, uint64_t max_n) {
  if (s->config.algo == GS_SORT_BITONIC) return gs_bitonic_sort_state_bytes(&s->bitonic, max_n);
  if (s->config.algo == GS_SORT_REDUCE_THEN_SCAN)
    return STATE_HEAD_BYTES + 2 * table_bytes(s, max_n) +
           gs_scan_state_bytes(&s->spine, (uint64_t)tiles_for(s, max_n) * GS_RADIX);
  return STATE_HEAD_BYTES + 2 * lookback_bytes(s, max_n);
}

gs_radix_sort_state_parts gs_radix_sort_state_parts_of(const gs_radix_sort *s, gs_range state, uint64_t max_n) {
  const VkDeviceSize lookback = lookback_bytes(s, max_n), after_histograms = STATE_HEAD_BYTES;
  gs_radix_sort_state_parts parts = {.control = gs_subrange(state, 0, STATE_CONTROL_BYTES)};
  for (unsigned i = 0; i < 2; i++) {
    parts.histograms[i] = gs_subrange(state, STATE_CONTROL_BYTES + i * STATE_HISTOGRAM_BYTES, STATE_HISTOGRAM_BYTES);
    parts.lookback[i] = gs_subrange(state, after_histograms + i * lookback, lookback);
  }
  return parts;
}

int gs_radix_sort_passes(const gs_radix_sort *s, unsigned begin_bit, unsigned end_bit, unsigned *passes) {
  const unsigned key_bits = s->info->bytes * 8;
  if (begin_bit == 0 && end_bit == 0) end_bit = key_bits;
  if (end_bit > key_bits || begin_bit >= end_bit)
    return gs_fail(GPUSORT_ERROR_USAGE, "bit range %u:%u is empty or does not fit %u-bit keys", begin_bit, end_bit,
                   key_bits);
  *passes = (end_bit - begin_bit + 7) / 8;
  return GPUSORT_OK;
}

static bool same(gs_range a, gs_range b) { return a.address == b.address; }

/* Where each pass of an array writes. Pass p reads what pass p - 1 wrote (pass 0 reads `in`);
 * the last pass writes `out` and earlier ones alternate between tmp and out backwards. If that
 * makes pass 0 write `in` (in place with an odd pass count), the roles of out and tmp swap
 * and *copy_back says the result must be copied from tmp to out at the end. */
static void plan_writes(const gs_radix_sort_array *a, unsigned passes, gs_range *writes, bool *copy_back) {
  const bool swap = same((passes - 1) % 2 == 0 ? a->out : a->tmp, a->in);
  const gs_range last = swap ? a->tmp : a->out, other = swap ? a->out : a->tmp;
  for (unsigned p = 0; p < passes; p++) writes[p] = (passes - 1 - p) % 2 == 0 ? last : other;
  *copy_back = swap;
}

typedef struct {
  const gs_radix_sort *s;
  VkCommandBuffer cb;
  const gs_radix_sort_run *run;
  const gs_radix_sort_buffers *b;
  gs_range control, histograms, other_histograms, lookback[2];
  bool kept; /* on kept state: nothing cleared first (gs_radix_sort_rest) */
  gs_range table, scanned, spine_state; /* reduce-then-scan */
  bool indirect;
  const gs_radix_sort_small_tile *small; /* the small sort's tile it takes; NULL: the layout's */
  uint32_t tile_keys;                    /* keys of the tile it takes */
  uint64_t max_tiles;
  uint64_t segment_keys; /* 0: unsegmented */
} recording;

static gs_range control_field(const recording *r, size_t offset, size_t size) {
  return gs_subrange(r->control, offset, size);
}

/* Ends a segment's commands: the caller may submit them and go on in a new command buffer. */
static int segment_done(recording *r, uint64_t keys) {
  return r->run->flush ? r->run->flush(r->run->flush_ctx, &r->cb, keys) : GPUSORT_OK;
}

/* Segment k of a segmented sort: its first key and its key count. */
static uint64_t segment_first(const recording *r, uint64_t k) { return k * r->segment_keys; }
static uint64_t segment_count(const recording *r, uint64_t k) {
  const uint64_t first = segment_first(r, k), left = r->run->n - first;
  return left < r->segment_keys ? left : r->segment_keys;
}
static uint64_t segments_of(const recording *r) {
  return r->segment_keys ? (r->run->n + r->segment_keys - 1) / r->segment_keys : 1;
}

/* The tiles of the sort's first pass, whose descriptors start zeroed. */
static uint64_t first_pass_tiles(const recording *r) {
  return r->indirect ? r->max_tiles : gs_groups_for(r->run->n, r->tile_keys);
}

/* Zeroed tickets, both halves of histograms and the first pass's descriptors (they lie one after
 * the other: one clear), unless the state is kept; for an indirect sort, the count and dispatch
 * sizes. */
static int record_start(const recording *r) {
  const gs_radix_sort *s = r->s;
  /* reduce-then-scan uses neither histograms nor descriptors: every table entry is written */
  const uint64_t words = s->config.algo == GS_SORT_REDUCE_THEN_SCAN
                             ? STATE_CONTROL_BYTES / 4
                             : STATE_HEAD_BYTES / 4 + first_pass_tiles(r) * GS_RADIX;
  int rc = r->kept ? GPUSORT_OK : gs_record_clear(s->dev, r->cb, s->memops, r->control, words);
  if (rc || !r->indirect) return rc;
  gs_prepare_indirect_push pp = {.count = r->b->count.address,
                                 .control = r->control.address,
                                 .max_n = (uint32_t)r->run->max_n,
                                 .tile_keys = r->tile_keys,
                                 .histogram_keys_per_group = s->histogram_workgroup_size * HISTOGRAM_TILE_ROWS,
                                 .histogram_max_groups = s->histogram_max_groups,
                                 .max_groups_x = s->dev->max_groups_x};
  return gs_kernel_dispatch(s->dev, r->cb, &s->prepare_indirect, &pp, 1);
}

/* Every digit position's histogram, one dispatch per segment, then their scans. */
static int record_histograms(recording *r, unsigned passes, unsigned last_bits) {
  const gs_radix_sort *s = r->s;
  const unsigned kb = s->info->bytes;
  const uint64_t per_group = (uint64_t)s->histogram_workgroup_size * HISTOGRAM_TILE_ROWS;
  int rc = GPUSORT_OK;
  for (uint64_t k = 0; k < segments_of(r) && !rc; k++) {
    const uint64_t count = r->segment_keys ? segment_count(r, k) : r->run->n;
    uint64_t groups = gs_groups_for(count, per_group);
    if (groups > s->histogram_max_groups) groups = s->histogram_max_groups;
    gs_histogram_push hp = {.keys = r->b->keys.in.address + segment_first(r, k) * kb,
                            .histograms = r->histograms.address,
                            .control = r->control.address,
                            .n = (uint32_t)count,
                            .passes = passes,
                            .first_shift = r->run->begin_bit,
                            .last_bits = last_bits,
                            .groups = (uint32_t)groups,
                            .flags = r->indirect ? GS_SORT_INDIRECT : 0};
    if (r->kept && k == 0) { /* (the first segment's dispatch zeroes the whole sort's) */
      hp.flags |= GS_SORT_ZERO_STATE;
      hp.other_histograms = r->other_histograms.address;
      hp.lookback = r->lookback[0].address;
      hp.lookback_words = (uint32_t)(first_pass_tiles(r) * GS_RADIX);
    }
    if (r->indirect) {
      gs_kernel_dispatch_indirect(r->cb, &s->histogram, &hp,
                                  control_field(r, offsetof(gs_sort_control, histogram_dispatch), 12));
      continue;
    }
    if (!(rc = gs_kernel_dispatch(s->dev, r->cb, &s->histogram, &hp, (uint32_t)groups)) && r->segment_keys)
      rc = segment_done(r, count);
  }
  gs_scan_histograms_push sp = {
      .histograms = r->histograms.address, .control = r->control.address, .passes = passes};
  if (!rc) rc = gs_kernel_dispatch(s->dev, r->cb, &s->scan_histograms, &sp, passes);
  return rc;
}

/* The digit-binning kernel of a pass: `plain` ones for passes that neither map nor unmap keys
 * (same interface), segmented ones for segmented sorts, a small sort's tile's for small sorts,
 * and with split_maps the first or the last pass's own. The plain ones pay where registers do
 * not show it: the map's code slows the middle passes at the same register count
 * (doc/tuning.md, "Sort: plain passes without the key map"). */
static const gs_kernel *pass_kernel(const recording *r, uint32_t flags) {
  const gs_radix_sort *s = r->s;
  const uint32_t maps = flags & (GS_SORT_FIRST_PASS | GS_SORT_LAST_PASS);
  const bool plain = !maps && s->onesweep_plain.pipeline;
  if (r->segment_keys) return plain ? &s->onesweep_plain_segmented : &s->onesweep_segmented;
  if (r->small) return plain ? &r->small->onesweep_plain : &r->small->onesweep;
  if (maps == GS_SORT_FIRST_PASS && s->onesweep_first.pipeline) return &s->onesweep_first;
  if (maps == GS_SORT_LAST_PASS && s->onesweep_last.pipeline) return &s->onesweep_last;
  return plain ? &s->onesweep_plain : &s->onesweep;
}

/* One pass: a dispatch, or one per segment with the digit starts advanced in between. `pp`
 * holds the whole arrays and the pass's look-back arrays; segments get their slices. */
static int record_pass(recording *r, const gs_onesweep_push *pass) {
  const gs_radix_sort *s = r->s;
  const gs_kernel *k = pass_kernel(r, pass->flags);
  if (r->indirect) {
    gs_kernel_dispatch_indirect(r->cb, k, pass, control_field(r, offsetof(gs_sort_control, onesweep_dispatch), 12));
    return GPUSORT_OK;
  }
  if (!r->segment_keys) return gs_kernel_dispatch(s->dev, r->cb, k, pass, gs_groups_for(r->run->n, r->tile_keys));
  const unsigned kb = s->info->bytes, vb = s->config.value_bytes;
  const uint64_t segments = segments_of(r), row = GS_RADIX * 4;
  int rc = GPUSORT_OK;
  for (uint64_t g = 0; g < segments && !rc; g++) {
    const uint64_t first = segment_first(r, g), count = segment_count(r, g);
    const uint64_t tile0 = first / s->tile_keys, tiles = tiles_for(s, count);
    gs_onesweep_push pp = *pass;
    pp.keys_in += first * kb;
    if (vb) pp.values_in += first * vb;
    pp.lookback += tile0 * row;
    pp.lookback_next += tile0 * row;
    pp.n = (uint32_t)count;
    pp.tiles = (uint32_t)tiles;
    pp.index_base = (uint32_t)first;
    if ((rc = gs_kernel_dispatch(s->dev, r->cb, k, &pp, (uint32_t)tiles))) break;
    if (g + 1 < segments) {
      gs_next_segment_push np = {.digit_starts = r->histograms.address + pass->pass * row,
                                 .last_tile = pass->lookback + (tile0 + tiles - 1) * row,
                                 .control = r->control.address,
                                 .pass = pass->pass};
      if ((rc = gs_kernel_dispatch(s->dev, r->cb, &s->next_segment, &np, 1))) break;
    }
    rc = segment_done(r, count);
  }
  return rc;
}

/* One reduce-then-scan pass: the upsweep over every tile (per segment), the scan of the tile
 * table, then the digit-binning kernel reading its positions from the scanned table. An
 * indirect sort runs the upsweep and the scan over its capacity's tiles (those past the count
 * count nothing). */
static int record_rts_pass(recording *r, const gs_onesweep_push *pass) {
  const gs_radix_sort *s = r->s;
  const unsigned kb = s->info->bytes, vb = s->config.value_bytes;
  const uint64_t stride = r->indirect ? r->max_tiles : tiles_for(s, r->run->n);
  gs_onesweep_push pp = *pass;
  pp.lookback = r->table.address;
  pp.digit_starts = r->scanned.address;
  pp.lookback_next = 0;
  pp.flags &= ~GS_SORT_CLEAR_NEXT;
  pp.tile_stride = (uint32_t)stride;
  int rc = GPUSORT_OK;
  if (r->indirect) {
    pp.tiles = (uint32_t)stride;
    rc = gs_kernel_dispatch(s->dev, r->cb, &s->upsweep, &pp, (uint32_t)stride);
  }
  for (uint64_t g = 0; g < segments_of(r) && !rc && !r->indirect; g++) {
    const uint64_t first = segment_first(r, g), count = r->segment_keys ? segment_count(r, g) : r->run->n;
    gs_onesweep_push up = pp;
    up.keys_in += first * kb;
    up.lookback += first / s->tile_keys * 4;
    up.n = (uint32_t)count;
    up.tiles = tiles_for(s, count);
    if (!(rc = gs_kernel_dispatch(s->dev, r->cb, &s->upsweep, &up, up.tiles)) && r->segment_keys)
      rc = segment_done(r, count);
  }
  if (!rc)
    rc = gs_scan_record(&s->spine, r->cb, stride * GS_RADIX, r->max_tiles * GS_RADIX, r->table, r->scanned,
                        r->spine_state, false, NULL, NULL);
  const gs_kernel *k = pass_kernel(r, pass->flags);
  if (!rc && r->indirect)
    gs_kernel_dispatch_indirect(r->cb, k, &pp, control_field(r, offsetof(gs_sort_control, onesweep_dispatch), 12));
  for (uint64_t g = 0; g < segments_of(r) && !rc && !r->indirect; g++) {
    const uint64_t first = segment_first(r, g), count = r->segment_keys ? segment_count(r, g) : r->run->n;
    gs_onesweep_push down = pp;
    down.keys_in += first * kb;
    if (vb) down.values_in += first * vb;
    down.digit_starts += first / s->tile_keys * 4;
    down.n = (uint32_t)count;
    down.tiles = tiles_for(s, count);
    down.index_base = (uint32_t)first;
    if (!(rc = gs_kernel_dispatch(s->dev, r->cb, k, &down, down.tiles)) && r->segment_keys)
      rc = segment_done(r, count);
  }
  return rc;
}

/* Copies n elements of `bytes` each from src to dst (n read by the GPU for indirect sorts). */
static int record_copy(const recording *r, gs_range src, gs_range dst, unsigned bytes) {
  const gs_radix_sort *s = r->s;
  if (r->indirect)
    return gs_record_counted(s->dev, r->cb, s->memops, &src, dst, r->control.address + offsetof(gs_sort_control, n),
                             bytes / 4, r->run->max_n * bytes / 4);
  return gs_record_copy(s->dev, r->cb, s->memops, src, dst, r->run->n * bytes / 4);
}

/* Test hook: copy the first output key over the last, so the output is no longer a
 * permutation of the input (and usually not sorted) unless those keys were equal. */
static int record_corruption(const recording *r) {
  const gs_radix_sort *s = r->s;
  const unsigned kb = s->info->bytes, vb = s->config.value_bytes;
  const uint64_t n = r->run->n;
  if (n < 2 || r->indirect) return GPUSORT_OK;
  int rc = gs_record_copy(s->dev, r->cb, s->memops, r->b->keys.out, gs_subrange(r->b->keys.out, (n - 1) * kb, kb),
                          kb / 4);
  if (!rc && vb)
    rc = gs_record_copy(s->dev, r->cb, s->memops, r->b->values.out, gs_subrange(r->b->values.out, (n - 1) * vb, vb),
                        vb / 4);
  return rc;
}

/* Segment size for a run: 0 (unsegmented) unless asked for and needed; whole tiles. */
static int plan_segments(const gs_radix_sort *s, const gs_radix_sort_run *run, bool indirect, uint64_t *segment_keys) {
  *segment_keys = 0;
  const uint64_t limit = gs_radix_sort_segment_limit(s);
  uint64_t want = run->segment_keys;
  if (indirect || want == 0) {
    if (run->max_n > limit && !indirect)
      return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu keys need a segmented sort", (unsigned long long)run->n);
    if (indirect && run->max_n > limit)
      return gs_fail(GPUSORT_ERROR_TOO_LARGE, "an indirect sort takes at most %llu keys", (unsigned long long)limit);
    return GPUSORT_OK;
  }
  if (want > limit) want = limit;
  want -= want % s->tile_keys;
  if (want == 0) want = s->tile_keys;
  if (run->n <= want && run->n <= limit) return GPUSORT_OK; /* one segment: the plain passes */
  if (run->n > (1ull << 32)) return gs_fail(GPUSORT_ERROR_TOO_LARGE, "a sort takes at most 2^32 keys");
  if (!s->segments_enabled) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: segmented pipelines not built");
  *segment_keys = want;
  return GPUSORT_OK;
}

/* GS_SORT_BITONIC: the same arrays and run through src/prim/bitonic_sort.h. Its time shows as
 * the first pass's. */
static int record_bitonic(recording *r, unsigned passes, gs_timestamps *ts) {
  const gs_radix_sort_run *run = r->run;
  const gs_radix_sort_buffers *b = r->b;
  const gs_bitonic_run br = {.n = run->n,
                             .max_n = run->max_n,
                             .count = b->count,
                             .begin_bit = run->begin_bit,
                             .end_bit = run->end_bit,
                             .index_values = run->index_values,
                             .keys_in = b->keys.in,
                             .keys_out = b->keys.out,
                             .values_in = b->values.in,
                             .values_out = b->values.out,
                             .values_tmp = b->values.tmp,
                             .state = b->state,
                             .flush = run->flush,
                             .flush_ctx = run->flush_ctx};
  if (ts) gs_timestamps_write(r->cb, ts, 1);
  int rc = gs_bitonic_sort_record(&r->s->bitonic, &r->cb, &br);
  if (!rc && run->corrupt) rc = record_corruption(r);
  if (ts)
    for (unsigned p = 2; p < 2 + passes; p++) gs_timestamps_write(r->cb, ts, p);
  return rc;
}

/* The digit-binning passes and what follows them: a copy into place, the corruption hook. */
static int record_passes(recording *r, const gs_radix_sort_buffers *b, unsigned passes, unsigned last_bits,
                         gs_timestamps *ts) {
  const gs_radix_sort *s = r->s;
  const gs_radix_sort_run *run = r->run;
  const bool values = s->config.value_bytes != 0, rts = s->config.algo == GS_SORT_REDUCE_THEN_SCAN;
  const unsigned begin_bit = run->begin_bit;
  int rc;
  if (ts) gs_timestamps_write(r->cb, ts, 1);

  gs_range key_writes[GS_RADIX_MAX_PASSES], value_writes[GS_RADIX_MAX_PASSES];
  bool keys_back, values_back = false;
  plan_writes(&b->keys, passes, key_writes, &keys_back);
  if (values) {
    gs_radix_sort_array v = b->values;
    if (run->index_values) v.in = (gs_range){0}; /* never read: any array may be written first */
    plan_writes(&v, passes, value_writes, &values_back);
  }
  for (unsigned p = 0; p < passes; p++) {
    gs_onesweep_push pp = {.keys_in = p == 0 ? b->keys.in.address : key_writes[p - 1].address,
                           .keys_out = key_writes[p].address,
                           .values_in = !values ? 0 : p == 0 ? b->values.in.address : value_writes[p - 1].address,
                           .values_out = values ? value_writes[p].address : 0,
                           .digit_starts = r->histograms.address,
                           .lookback = r->lookback[p % 2].address,
                           .lookback_next = r->lookback[(p + 1) % 2].address,
                           .control = r->control.address,
                           .n = (uint32_t)run->n,
                           .tiles = gs_groups_for(run->n, r->tile_keys),
                           .shift = begin_bit + 8 * p,
                           .bits = p + 1 == passes ? last_bits : 8,
                           .pass = p,
                           .flags = r->indirect ? GS_SORT_INDIRECT : 0};
    if (p == 0) pp.flags |= GS_SORT_FIRST_PASS;
    if (p + 1 == passes) pp.flags |= GS_SORT_LAST_PASS;
    else pp.flags |= GS_SORT_CLEAR_NEXT;
    if (p == 0 && run->index_values) pp.flags |= GS_SORT_INDEX_VALUES;
    if ((rc = rts ? record_rts_pass(r, &pp) : record_pass(r, &pp))) return rc;
    if (ts && p + 1 < passes) gs_timestamps_write(r->cb, ts, 2 + p);
  }
  if (keys_back && (rc = record_copy(r, b->keys.tmp, b->keys.out, s->info->bytes))) return rc;
  if (values_back && (rc = record_copy(r, b->values.tmp, b->values.out, s->config.value_bytes))) return rc;
  if (run->corrupt && (rc = record_corruption(r))) return rc;
  if (ts) gs_timestamps_write(r->cb, ts, 1 + passes);
  return GPUSORT_OK;
}

int gs_radix_sort_record(const gs_radix_sort *s, VkCommandBuffer cb, const gs_radix_sort_run *run,
                         const gs_radix_sort_buffers *b, gs_timestamps *ts) {
  unsigned passes = 0;
  int rc = gs_radix_sort_passes(s, run->begin_bit, run->end_bit, &passes);
  if (rc) return rc;
  const unsigned begin_bit = run->begin_bit, end_bit = run->end_bit ? run->end_bit : s->info->bytes * 8;
  const bool values = s->config.value_bytes != 0;
  if (run->index_values && !values)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: index values without values");
  const bool indirect = b->count.size != 0;
  if (!indirect && run->n > run->max_n)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: %llu keys exceed the sort's capacity",
                   (unsigned long long)run->n);
  recording r = {.s = s, .cb = cb, .run = run, .b = b, .indirect = indirect, .tile_keys = s->tile_keys};
  gs_radix_sort_rest *rest = run->rest;
  if (rest && rest->of != s) *rest = (gs_radix_sort_rest){.of = s};
  if (s->config.algo == GS_SORT_BITONIC) {
    if (rest) *rest = (gs_radix_sort_rest){0}; /* (its own state layout) */
    gs_cmd_barrier(r.cb); /* after earlier work on the same arrays */
    if (ts) gs_timestamps_write(r.cb, ts, 0);
    return record_bitonic(&r, passes, ts);
  }
  if ((rc = plan_segments(s, run, indirect, &r.segment_keys))) return rc;
  if (!r.segment_keys && (r.small = small_tile_for(s, run->max_n))) r.tile_keys = r.small->tile.tile_keys;
  r.max_tiles = gs_groups_for(run->max_n, r.tile_keys);
  const bool rts = s->config.algo == GS_SORT_REDUCE_THEN_SCAN;
  /* A direct Onesweep sort on state at rest clears nothing; any other sort clears both halves of
   * histograms and counts into the first. */
  r.kept = rest && rest->at_rest && !rts && !indirect;
  /* (the histogram kernel counts the descriptors it zeroes in 32 bits, with room for its stride) */
  if (r.kept && first_pass_tiles(&r) * GS_RADIX >= 1ull << 31) r.kept = false;
  const unsigned half = r.kept ? rest->half : 0;
  const gs_radix_sort_state_parts parts = gs_radix_sort_state_parts_of(s, b->state, run->max_n);
  r.control = parts.control;
  r.histograms = parts.histograms[half];
  r.other_histograms = parts.histograms[1 - half];
  r.lookback[0] = parts.lookback[0];
  r.lookback[1] = parts.lookback[1];
  if (rts) {
    const VkDeviceSize table = table_bytes(s, run->max_n), after_histograms = STATE_HEAD_BYTES;
    r.lookback[0] = r.table = gs_subrange(b->state, after_histograms, table);
    r.scanned = gs_subrange(b->state, after_histograms + table, table);
    r.spine_state = gs_subrange(b->state, after_histograms + 2 * table, b->state.size - after_histograms - 2 * table);
  }

  gs_cmd_barrier(r.cb); /* after earlier work on the same arrays and state */
  if (ts) gs_timestamps_write(r.cb, ts, 0);
  if (!indirect && run->n == 0) { /* (the state stays as it was) */
    if (ts)
      for (unsigned p = 1; p < 2 + passes; p++) gs_timestamps_write(r.cb, ts, p);
    return GPUSORT_OK;
  }
  const unsigned last_bits = end_bit - (begin_bit + 8 * (passes - 1));
  /* What the sort leaves: the histograms it counted into hold digit starts, the other half is
   * zero (cleared, or zeroed by its histogram kernel); a reduce-then-scan sort leaves no account. */
  if (rest) *rest = rts ? (gs_radix_sort_rest){0} : (gs_radix_sort_rest){.of = s, .half = 1 - half, .at_rest = true};
  rc = record_start(&r);
  if (!rc && !rts) rc = record_histograms(&r, passes, last_bits);
  rc = rc ? rc : record_passes(&r, b, passes, last_bits, ts);
  if (rc && rest) *rest = (gs_radix_sort_rest){0};
  return rc;
}

int gs_radix_sort_collect_times(const gs_radix_sort *s, gs_timestamps *ts, unsigned passes,
                                gs_radix_sort_times *times) {
  uint64_t t[GS_RADIX_SORT_TIMESTAMPS];
  const unsigned used = 2 + passes;
  int rc = gs_timestamps_read(s->dev, ts, 0, used, t);
  if (rc) return rc;
  times->passes = passes;
  times->histogram = gs_timestamps_seconds(s->dev, t[0], t[1]);
  for (unsigned p = 0; p < passes; p++) times->pass[p] = gs_timestamps_seconds(s->dev, t[1 + p], t[2 + p]);
  times->total = gs_timestamps_seconds(s->dev, t[0], t[used - 1]);
  return GPUSORT_OK;
}
