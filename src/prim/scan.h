/* Prefix scans (sum, min, max; inclusive or exclusive) of device-resident arrays.
 *
 * Two plans over one tile kernel (shaders/scan_tiles.comp):
 *  - look-back: one pass; each tile finds the combination of all earlier tiles through
 *    decoupled look-back, reading 2n elements' worth of memory in all;
 *  - reduce-then-scan: tile aggregates, a scan of those (recursively), then each tile scanned
 *    from its prefix. No workgroup waits for another, and the association order is fixed, so
 *    float sums are bit-identical from run to run.
 * Integer sums wrap modulo 2^width; min and max follow the ordered-key map (src/prim/keys.h),
 * i.e. numeric order for integers and IEEE 754 totalOrder for floats. The accumulator (and
 * output) type may be wider than the input (u32 input, u64 running totals). */
#ifndef GS_PRIM_SCAN_H
#define GS_PRIM_SCAN_H

#include "prim/keys.h"
#include "vk/commands.h"
#include "vk/kernel.h"

typedef enum { GS_SCAN_SUM, GS_SCAN_MIN, GS_SCAN_MAX } gs_scan_op;
typedef enum { GS_SCAN_LOOKBACK, GS_SCAN_REDUCE_THEN_SCAN } gs_scan_algo;

enum { GS_SCAN_MAX_LEVELS = 8 };

typedef struct {
  gs_key_type input;
  gs_key_type acc; /* accumulator and output type: input's, or a wider one */
  gs_scan_op op;
  bool inclusive;
  gs_scan_algo algo;
  bool reduce_only; /* only the combination of all elements (gs_scan_reduce_result) */
  uint64_t capacity;
} gs_scan_config;

typedef struct {
  gs_device *dev;
  gs_scan_config config;
  uint32_t workgroup_size, rows, tile; /* tile: elements per workgroup */
  bool split_descriptors;
  gs_kernel lookback, reduce[2], downsweep[2]; /* [0] reads the input, [1] the spine */
  gs_buffer input, output, control, descriptors;
  gs_buffer spine[GS_SCAN_MAX_LEVELS]; /* spine[l]: tile values of level l - 1 */
  uint64_t level_count[GS_SCAN_MAX_LEVELS + 1];
  unsigned levels;
  VkDescriptorPool pool;
  VkDescriptorSet lookback_set, reduce_set[GS_SCAN_MAX_LEVELS], downsweep_set[GS_SCAN_MAX_LEVELS];
  gs_submission submission;
  gs_timestamps timestamps;
  double seconds; /* GPU time of the last run */
} gs_scan;

/* Usage error for combinations that make no sense (a float input with an integer
 * accumulator, a narrower accumulator); runtime error for what the device lacks. */
int gs_scan_check_config(const gs_device *dev, const gs_scan_config *config);

/* The most elements one run takes on the device. */
uint64_t gs_scan_max_elements(const gs_device *dev, const gs_scan_config *config);

int gs_scan_create(gs_device *dev, gs_scan *s, const gs_scan_config *config);
void gs_scan_destroy(gs_scan *s);

/* Upload n elements into the input; the output holds n accumulator-typed results. */
gs_buffer *gs_scan_input(gs_scan *s);
gs_buffer *gs_scan_output(gs_scan *s);

/* With reduce_only: the buffer whose first element is the combination of the n elements of
 * the last run (reduced tile by tile, level by level, in a fixed order). */
gs_buffer *gs_scan_reduce_result(gs_scan *s, uint64_t n);

/* Records the scan of the first n input elements (timestamps into s->timestamps). */
int gs_scan_record(gs_scan *s, VkCommandBuffer cb, uint64_t n);
int gs_scan_collect_time(gs_scan *s);

/* Record, submit, wait (bounded), and read the GPU time into s->seconds. */
int gs_scan_run(gs_scan *s, uint64_t n);

const char *gs_scan_op_name(gs_scan_op op);
int gs_scan_op_from_name(const char *name, gs_scan_op *op);

#endif
