/* Onesweep LSD radix sort of device-resident keys (and values).
 *
 * Plan: one histogram pass reads every key once and counts all digit positions; then one
 * digit-binning pass per 8-bit digit ranks each tile with subgroup ballots, finds its output
 * offsets by decoupled look-back over earlier tiles, and scatters through shared memory
 * (shaders/radix_onesweep.comp).
 *
 * A gs_radix_sort holds the pipelines for one key type, direction and value width; it owns no
 * memory. Recording a sort names the arrays by role (gs_radix_sort_arrays): the keys (and
 * values) are read from `in` by the first pass, the last pass writes `out`, and passes
 * ping-pong through `tmp`. out may be in (an in-place sort); tmp may be in when out is not (the
 * pass count then decides which of in and tmp the caller gives as out, see
 * gs_radix_sort_passes). When the pass count would make the first pass write the array it
 * reads, the sort ends with a copy into place. A separate state block holds tickets,
 * histograms and look-back descriptors.
 *
 * Large sorts are segmented: each pass (and the histogram) runs as a dispatch per segment of
 * consecutive keys, whose look-back counts start from zero (they hold 30 bits) and whose
 * output positions are found from digit starts advanced between segments
 * (shaders/radix_next_segment.comp). This takes up to 2^32 keys, and lets the caller end a
 * submission between segments so that no submission holds more than a bounded amount of
 * work (see gs_radix_sort_run.flush).
 *
 * Two other algorithms sit behind the same recording, for devices where Onesweep's look-back
 * cannot be trusted to make progress (a workgroup spinning on one that never got scheduled)
 * and for small sorts:
 *  - reduce-then-scan: per pass an upsweep counts each tile's digits into a table, a scan
 *    (src/prim/scan.h, itself reduce-then-scan) turns the table into output positions, and
 *    the digit-binning kernel reads its positions from it; no workgroup waits on another;
 *  - bitonic (src/prim/bitonic_sort.h): compare-exchange networks over (ordered key, input
 *    index) pairs, several steps per dispatch in shared memory, for any n (padded to a power
 *    of two with the largest key); the index tie-break keeps it stable. Values follow by a
 *    gather through the sorted indices.
 * All three give byte-identical results. */
#ifndef GS_PRIM_RADIX_SORT_H
#define GS_PRIM_RADIX_SORT_H

#include "prim/device_config.h"
#include "prim/keys.h"
#include "prim/bitonic_sort.h"
#include "prim/memops.h"
#include "prim/scan.h"
#include "vk/commands.h"

typedef struct {
  gs_key_type key;
  bool descending;
  unsigned value_bytes; /* 0 (keys only), 4 or 8: a value moves with each key */
  gs_sort_algo algo; /* not GS_SORT_AUTO: gs_sort_algo_for decides */
} gs_radix_sort_config;

/* A digit-binning tile: invocations x keys each, and its shared memory. */
typedef struct {
  uint32_t workgroup_size, keys_per_thread, tile_keys, shared_bytes;
} gs_radix_sort_tile;

/* A small sort's tile (gs_device_config's sort_small_tiles) and its digit-binning kernels (as
 * gs_radix_sort's onesweep and onesweep_plain). */
typedef struct {
  gs_radix_sort_tile tile;
  gs_kernel onesweep, onesweep_plain;
} gs_radix_sort_small_tile;

typedef struct {
  gs_device *dev;
  const gs_memops *memops;
  gs_radix_sort_config config;
  const gs_key_info *info;
  uint32_t workgroup_size, keys_per_thread, tile_keys, shared_bytes;
  bool hold_keys, early_counts, split_maps; /* the layout's choices (gs_device_config) */
  uint32_t histogram_workgroup_size, histogram_max_groups;
  gs_kernel histogram, scan_histograms, prepare_indirect;
  /* reduce-then-scan: the upsweep and the scan of its tile table */
  gs_kernel upsweep;
  gs_scan spine;
  /* The digit-binning pass: `onesweep` maps keys of the configured kind and direction to
   * ordered keys (first pass) and back (last pass); `onesweep_plain` serves the passes in
   * between, whose keys are already ordered, without that code (it cost registers and thus
   * occupancy: f32 passes ran 33% slower on an H100). Unset when keys are unsigned ascending.
   * With split_maps, `onesweep_first` and `onesweep_last` serve the first and the last pass of
   * sorts of more than one pass, each with one map's code (the layout's tile, not small ones
   * or segments); `onesweep` is then left to one-pass sorts. */
  gs_kernel onesweep, onesweep_plain, onesweep_first, onesweep_last;
  /* Segmented sorts (gs_radix_sort_enable_segments): the same passes with GS_SPEC_SEGMENTED,
   * and the kernel that advances the digit starts between segments. */
  gs_kernel onesweep_segmented, onesweep_plain_segmented, next_segment;
  bool segments_enabled;
  uint32_t kpt_spec[GS_SPEC_COUNT]; /* the digit-binning pipelines' specialization constants */
  /* Onesweep's tiles for small sorts, smallest first, each smaller than the layout's tile;
   * unsegmented Onesweep sorts take one by their capacity (gs_radix_sort_tile_for). */
  gs_radix_sort_small_tile small[GS_SORT_SMALL_TILES];
  uint32_t small_count, small_min_tiles;
  gs_bitonic_sort bitonic; /* GS_SORT_BITONIC */
} gs_radix_sort;

typedef struct {
  gs_range in, out, tmp;
} gs_radix_sort_array;

typedef struct {
  gs_radix_sort_array keys;
  gs_radix_sort_array values; /* with value_bytes; `in` unused with index_values */
  gs_range state;             /* gs_radix_sort_state_bytes(max_n) */
  gs_range count;             /* an indirect sort's u32 count; size 0: a direct sort */
} gs_radix_sort_buffers;

/* The state block's head, before the look-back descriptors (or reduce-then-scan's tables): the
 * control block (256 bytes) and two halves of histograms, GS_RADIX_MAX_PASSES rows each. */
enum { GS_RADIX_SORT_STATE_HEAD_BYTES = 256 + 2 * GS_RADIX_MAX_PASSES * GS_RADIX * 4 };

/* What a state block holds between sorts, kept by the caller beside the block and zeroed for a
 * new block or one whose last sort did not run to its end. The block has two halves of
 * histograms: a sort counts into one, scans it into digit starts in place, and leaves the other
 * zeroed for the next. At rest (an Onesweep sort of `of` ran to its end) the next direct
 * Onesweep sort clears nothing first (a dispatch and a barrier less): its histogram kernel
 * zeroes the tickets, the first pass's descriptors and the other half's histograms as it counts,
 * and each pass zeroes the next pass's descriptors as before. Each recording that records a sort
 * updates it for the block as the sort will leave it, or zeroes it on an error (the other
 * algorithms leave it zeroed: untracked). Every sort on a tracked block must
 * pass its `rest` (a sort without one leaves the block untracked: zero `rest` after it), and a
 * `rest` lives no longer than its sort (`of` is compared by address). */
typedef struct {
  const gs_radix_sort *of;
  unsigned half; /* the histograms the next sort counts into */
  bool at_rest;
} gs_radix_sort_rest;

typedef struct {
  uint64_t n;                  /* direct sorts */
  uint64_t max_n;              /* what the state and arrays were sized for (>= n) */
  unsigned begin_bit, end_bit; /* sort on ordered-key bits [begin, end); 0,0 = all bits */
  bool index_values;           /* values become the keys' input indices */
  bool corrupt;                /* test: overwrite the last output key (and value) with the first */
  /* Segments of at most this many keys (rounded down to whole tiles, at most
   * gs_radix_sort_segment_limit); 0: one dispatch per pass, which takes up to
   * gs_radix_sort_max_keys(..., false) keys. Needs gs_radix_sort_enable_segments. */
  uint64_t segment_keys;
  /* Called, when set, after each segment's dispatches with the keys they covered: it may end
   * the command buffer, submit it and replace *cb with a new one in the recording state. */
  int (*flush)(void *ctx, VkCommandBuffer *cb, uint64_t keys);
  void *flush_ctx;
  gs_radix_sort_rest *rest; /* NULL: a state block whose contents the caller does not track */
} gs_radix_sort_run;

typedef struct {
  double total;                     /* first command to last, from timestamps */
  double histogram;                 /* clearing and the histogram pass */
  double pass[GS_RADIX_MAX_PASSES]; /* each digit-binning pass */
  unsigned passes;
} gs_radix_sort_times;

enum { GS_RADIX_SORT_TIMESTAMPS = 2 + GS_RADIX_MAX_PASSES };

/* The most keys of this type (with values of value_bytes, 0 for none) one sort takes: each
 * array must fit one buffer, and an unsegmented sort's look-back counts are 30 bits while a
 * segmented sort's positions are 32 bits. */
uint64_t gs_radix_sort_max_keys(const gs_device *dev, gs_key_type key, unsigned value_bytes, bool segmented);

/* The most keys of one segment (whole tiles whose counts fit the look-back's 30 bits). */
uint64_t gs_radix_sort_segment_limit(const gs_radix_sort *s);

/* Builds the segmented pipelines (once). */
int gs_radix_sort_enable_segments(gs_radix_sort *s);

int gs_radix_sort_create(gs_device *dev, const gs_memops *memops, const gs_device_config *config,
                         const gs_radix_sort_config *sort_config, gs_radix_sort *s);
void gs_radix_sort_destroy(gs_radix_sort *s);

/* The tile an unsegmented sort of up to max_n keys runs in: the largest of the small sorts'
 * tiles and the layout's own that leaves at least small_min_tiles tiles, or the smallest of
 * them (the layout's own for reduce-then-scan, bitonic and segmented sorts). */
gs_radix_sort_tile gs_radix_sort_tile_for(const gs_radix_sort *s, uint64_t max_n);

/* Bytes of the state block for sorts of up to max_n keys (16-byte aligned). */
VkDeviceSize gs_radix_sort_state_bytes(const gs_radix_sort *s, uint64_t max_n);

/* An upper bound of gs_radix_sort_state_bytes before any sorter exists (memory plans): the head,
 * then two rows of descriptors per tile of 256 keys, the smallest any preset's tile holds. */
static inline uint64_t gs_radix_sort_state_bound(uint64_t max_n) {
  return GS_RADIX_SORT_STATE_HEAD_BYTES + 2 * (max_n / 256 + 2) * 1024;
}

/* Where a state block for sorts of up to max_n keys keeps the control block, the two halves of
 * histograms and the two arrays of look-back descriptors (a Onesweep sort's; tests plant values
 * there and read them back). */
typedef struct {
  gs_range control, histograms[2], lookback[2];
} gs_radix_sort_state_parts;
gs_radix_sort_state_parts gs_radix_sort_state_parts_of(const gs_radix_sort *s, gs_range state, uint64_t max_n);

/* Digit-binning passes over bits [begin_bit, end_bit) (0, 0: all); a usage error for a range
 * outside the key. */
int gs_radix_sort_passes(const gs_radix_sort *s, unsigned begin_bit, unsigned end_bit, unsigned *passes);

/* Records the sort into cb, starting with a barrier that orders it after earlier compute
 * work. With `ts` (GS_RADIX_SORT_TIMESTAMPS slots, reset), writes the stage timestamps. */
int gs_radix_sort_record(const gs_radix_sort *s, VkCommandBuffer cb, const gs_radix_sort_run *run,
                         const gs_radix_sort_buffers *b, gs_timestamps *ts);

/* Reads the stage times of a finished recording made with timestamps. */
int gs_radix_sort_collect_times(const gs_radix_sort *s, gs_timestamps *ts, unsigned passes,
                                gs_radix_sort_times *times);

#endif
