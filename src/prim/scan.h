/* Prefix scans (sum, min, max; inclusive or exclusive) and reductions of device-resident arrays.
 *
 * Two plans over one tile kernel (shaders/scan_tiles.comp):
 *  - look-back: one pass; each tile finds the combination of all earlier tiles through
 *    decoupled look-back, reading 2n elements' worth of memory in all;
 *  - reduce-then-scan: tile aggregates, a scan of those (recursively), then each tile scanned
 *    from its prefix. No workgroup waits for another, and the association order is fixed, so
 *    float sums are bit-identical from run to run.
 * A reduction reduces tile by tile, level by level, to one value, in a fixed order.
 * Integer sums wrap modulo 2^width; min and max follow the ordered-key map (src/prim/keys.h),
 * i.e. numeric order for integers and IEEE 754 totalOrder for floats. The accumulator (and
 * output) type may be wider than the input (u32 input, u64 running totals).
 *
 * A gs_scan holds the pipelines for one configuration and owns no memory: a recording names
 * the input, the output and a state block (tickets and descriptors, or the tile values of
 * each level). */
#ifndef GS_PRIM_SCAN_H
#define GS_PRIM_SCAN_H

#include "gpusort.h"
#include "prim/device_config.h"
#include "prim/keys.h"
#include "prim/memops.h"
#include "vk/commands.h"

typedef enum { GS_SCAN_SUM, GS_SCAN_MIN, GS_SCAN_MAX } gs_scan_op;
typedef enum { GS_SCAN_LOOKBACK, GS_SCAN_REDUCE_THEN_SCAN } gs_scan_algo;

enum { GS_SCAN_MAX_LEVELS = 8 };

typedef struct {
  gs_key_type input;
  gs_key_type acc; /* accumulator and output type: input's, or a wider one */
  gs_scan_op op;
  bool inclusive;
  gs_scan_algo algo;
  bool reduce_only; /* only the combination of all elements, written to the output's first element */
  /* The host's side (job/scan_engine.c): the elements' form and the results', where they are
   * not `input` and `acc` themselves (narrow, half, big-endian: prim/elements.h), converted
   * on the way up and down. GPUSORT_TYPE_NONE: input and acc as they are. */
  gpusort_type in_form, out_form;
} gs_scan_config;

typedef struct {
  gs_device *dev;
  const gs_memops *memops;
  gs_scan_config config;
  uint32_t workgroup_size, rows, tile; /* tile: input elements per workgroup (tile values above
                                        * level 0 take 16-byte vectors of the accumulator) */
  bool early_walk; /* look-back: subgroup 0 of each tile walks while the others load (tile: the rest's) */
  uint32_t read_ahead_kib; /* early walk: how far past its tile the walker reads the input (0: none) */
  bool split_descriptors;
  gs_kernel lookback, reduce[2], downsweep[2]; /* [0] reads the input, [1] the tile values */
  /* Small look-back scans (gs_device_config's scan_small_rows): tiles of fewer rows, taken by
   * scans of capacity below small_min_tiles of the tiles above (gs_scan_tile_for); 0: none. */
  uint32_t small_rows, small_tile, small_min_tiles;
  gs_kernel small_lookback;
} gs_scan;

/* Usage error for combinations that make no sense (a float input with an integer
 * accumulator, a narrower accumulator); NO_DEVICE for what the device lacks (dev may be NULL). */
int gs_scan_check_config(const gs_device *dev, const gs_scan_config *config);

/* How the kernels combine values (their ACC_REP): 1 u32 and 2 u64 bits (integer sums, and every
 * min/max on ordered bits), 3 f32 and 4 f64 (float sums). */
unsigned gs_scan_accumulator_rep(const gs_scan_config *config);

/* Whether look-back descriptors of values of acc's type take the split layout
 * (lib/scan_lookback.glsl: any width, no 64-bit atomics) rather than the packed one (a 32-bit
 * value and its status in one 64-bit word): for 64-bit accumulators, on devices without 64-bit
 * atomics, and under GPUSORT_SCAN_SPLIT=1 (tests). The scan and rle/reduce-by-key share it. */
bool gs_scan_descriptors_split(const gs_device *dev, gs_key_type acc);

/* Bytes of one tile's look-back descriptor in either layout. */
static inline VkDeviceSize gs_scan_descriptor_bytes(bool split) { return split ? 5 * 4 : 8; }

/* The invocations of a tile that hold elements: all but the walking subgroup's with an early walk. */
static inline uint32_t gs_scan_holding_invocations(const gs_scan *s) {
  return s->workgroup_size - (s->early_walk ? s->dev->subgroup_size : 0);
}

/* The most elements one scan takes on the device (each array must fit one buffer). */
uint64_t gs_scan_max_elements(const gs_device *dev, const gs_scan_config *config);

int gs_scan_create(gs_device *dev, const gs_memops *memops, const gs_device_config *device_config,
                   const gs_scan_config *config, gs_scan *s);
void gs_scan_destroy(gs_scan *s);

/* A look-back state block: GS_SCAN_CONTROL_BYTES of control words (scan_tiles.comp's
 * ScanControl), then the descriptors. */
enum { GS_SCAN_CONTROL_BYTES = 256 };

/* The look-back descriptors a state for scans of up to max_n elements holds. */
uint64_t gs_scan_lookback_slots(const gs_scan *s, uint64_t max_n);

/* Bytes of the state block for scans of up to max_n elements (16-byte aligned). */
VkDeviceSize gs_scan_state_bytes(const gs_scan *s, uint64_t max_n);

/* A chunk of a longer scan: `in` holds one accumulator value, the combination of everything
 * before the chunk (0: none, the first chunk); `out` receives that combined with the chunk. */
typedef struct {
  VkDeviceAddress in, out;
} gs_scan_carry;

/* The input elements of a tile of a scan of capacity max_n (its level 0): a small scan's, or the
 * scan's own. */
uint32_t gs_scan_tile_for(const gs_scan *s, uint64_t max_n);

/* Whether s leaves its state ready for its next scan of the same capacity, so that only the
 * state's first use needs clearing: look-back scans with packed descriptors, which stamp each
 * descriptor with the dispatch's epoch (scan_tiles.comp). The clear (a dispatch and a barrier)
 * cost 4 to 5 us a scan (doc/tuning.md, "Scan: keeping look-back state between scans"). */
bool gs_scan_keeps_state(const gs_scan *s);

/* Records the scan (or reduction) of the first n input elements into output, starting with a
 * barrier that orders it after earlier compute work; with `ts` (2 slots, reset) the
 * timestamps around it. max_n: what the state block was sized for. kept_state: the state holds
 * what s's previous scan of n > 0 and the same max_n left there (and nothing else has written
 * it since; a scan of n == 0 neither clears nor writes it), so where gs_scan_keeps_state it
 * is not cleared again. carry: NULL for a whole scan (reductions take none). */
int gs_scan_record(const gs_scan *s, VkCommandBuffer cb, uint64_t n, uint64_t max_n, gs_range input,
                   gs_range output, gs_range state, bool kept_state, const gs_scan_carry *carry, gs_timestamps *ts);

const char *gs_scan_op_name(gs_scan_op op);

#endif
