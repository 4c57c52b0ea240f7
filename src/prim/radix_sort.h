/* Onesweep LSD radix sort of device-resident keys.
 *
 * Plan: one histogram pass reads every key once and counts all digit positions; then one
 * digit-binning pass per 8-bit digit ranks each tile with subgroup ballots, finds its output
 * offsets by decoupled look-back over earlier tiles, and scatters through shared memory
 * (shaders/radix_onesweep.comp). Keys ping-pong between `keys` and `alt`; optional 32- or
 * 64-bit values follow them between `values` and `values_alt`.
 *
 * Typical use: create with a capacity, upload n keys into gs_radix_sort_input() (and values
 * into gs_radix_sort_values_input()), run, read the result from the buffers run() names. */
#ifndef GS_PRIM_RADIX_SORT_H
#define GS_PRIM_RADIX_SORT_H

#include "prim/keys.h"
#include "vk/commands.h"
#include "vk/kernel.h"

enum { GS_RADIX_MAX_PASSES = 8 };

/* Test hooks (never set in normal use). */
enum {
  GS_SORT_TEST_CORRUPT = 1u << 0, /* overwrite one output key after sorting */
};

typedef struct {
  gs_key_type key;
  bool descending;
  unsigned value_bytes; /* 0 (keys only), 4 or 8: a value moves with each key */
  uint64_t capacity;    /* most keys one run will sort */
} gs_radix_sort_config;

typedef struct {
  uint64_t n;
  unsigned begin_bit, end_bit; /* sort on ordered-key bits [begin, end); 0,0 = all bits */
  bool index_values;           /* values become the keys' input indices (4-byte values) */
  uint32_t test_flags;
} gs_radix_sort_run_options;

/* Where a run left its result. */
typedef struct {
  gs_buffer *keys;
  gs_buffer *values; /* NULL without values */
} gs_radix_sort_result;

typedef struct {
  double total;                               /* first command to last, from timestamps */
  double histogram;                           /* clearing and the histogram pass */
  double pass[GS_RADIX_MAX_PASSES];           /* each digit-binning pass */
  unsigned passes;
} gs_radix_sort_times;

typedef struct {
  gs_device *dev;
  gs_radix_sort_config config;
  const gs_key_info *info;
  uint32_t workgroup_size, keys_per_thread, tile_keys, shared_bytes;
  uint32_t histogram_workgroup_size;
  gs_kernel histogram, scan_histograms;
  /* The digit-binning pass: `onesweep` maps keys of the configured kind and direction to
   * ordered keys (first pass) and back (last pass); `onesweep_plain` serves the passes in
   * between, whose keys are already ordered, without that code (it cost registers and thus
   * occupancy: f32 passes ran 33% slower on an H100). Equal when keys are unsigned ascending. */
  gs_kernel onesweep, onesweep_plain;
  gs_buffer keys, alt, values, values_alt, histograms, lookback, control;
  VkDescriptorPool pool;
  VkDescriptorSet histogram_set, scan_set;
  VkDescriptorSet pass_set[2]; /* [0] reads keys and writes alt, [1] the reverse */
  gs_submission submission;
  gs_timestamps timestamps;
  gs_radix_sort_times times; /* of the last run */
} gs_radix_sort;

/* The most keys of this type (with values of value_bytes, 0 for none) one run can sort on
 * the device (storage-binding and look-back-counter limits). */
uint64_t gs_radix_sort_max_keys(const gs_device *dev, gs_key_type key, unsigned value_bytes);

int gs_radix_sort_create(gs_device *dev, gs_radix_sort *s, const gs_radix_sort_config *config);
void gs_radix_sort_destroy(gs_radix_sort *s);

/* The buffers to upload the keys and values into (capacity of each). */
gs_buffer *gs_radix_sort_input(gs_radix_sort *s);
gs_buffer *gs_radix_sort_values_input(gs_radix_sort *s);

/* Sorts the first n keys (and values) of the input buffers; *result names the buffers that
 * hold them sorted (the inputs or the alternates, depending on the number of passes). Waits
 * for the GPU (bounded) and fills s->times. */
int gs_radix_sort_run(gs_radix_sort *s, const gs_radix_sort_run_options *opt, gs_radix_sort_result *result);

/* The pieces of run(), for callers that put more work in the same submission (benchmarks):
 * reset the timestamps, record the sort into `cb` (it writes s->timestamps), submit and wait
 * yourself, then collect the stage times. */
void gs_radix_sort_reset_times(gs_radix_sort *s);
int gs_radix_sort_record(gs_radix_sort *s, VkCommandBuffer cb, const gs_radix_sort_run_options *opt,
                         gs_radix_sort_result *result);
int gs_radix_sort_collect_times(gs_radix_sort *s);

#endif
