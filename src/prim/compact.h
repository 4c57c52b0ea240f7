/* The look-back family on device-resident keys (shaders/compact.comp): select, partition,
 * unique and reduce-by-key, each one pass in which tiles take tickets, post what they keep,
 * look back for the count kept before them (decoupled look-back with the bounded fallback of
 * lib/lookback.glsl) and write their results in place. Run-length encoding is REDUCE_BY_KEY
 * with count_runs: the sum of a one for each key of a run, which its own kernel variant
 * (compact_rle_*) counts from the runs' head positions instead of summing.
 *
 * Outputs: kept keys (keys_out), their input positions (indices_out: for gathering whole
 * records, or a run's first position), reduce-by-key's combined values (values_out), and the
 * number kept, written by the last tile to the state block at GS_COMPACT_TOTAL_OFFSET.
 * PARTITION writes all n: the kept first in input order, then the others in reverse input
 * order (the caller reverses that tail as it copies it out).
 *
 * A gs_compact holds the pipeline for one configuration and owns no memory. */
#ifndef GS_PRIM_COMPACT_H
#define GS_PRIM_COMPACT_H

#include "prim/device_config.h"
#include "prim/keys.h"
#include "prim/memops.h"
#include "prim/predicate.h"
#include "prim/scan.h"
#include "vk/commands.h"

typedef struct {
  uint32_t mode;          /* GS_COMPACT_SELECT, _PARTITION, _UNIQUE, _REDUCE_BY_KEY */
  gs_key_type key;
  gs_key_type value, acc; /* reduce-by-key: the values' type and the accumulator's */
  gs_scan_op op;          /* reduce-by-key */
  bool count_runs;        /* reduce-by-key of ones instead of values: each run's length (run-length
                             encoding; value U32, acc U32 or U64, op SUM) */
} gs_compact_config;

typedef struct {
  gs_device *dev;
  const gs_memops *memops;
  gs_compact_config config;
  uint32_t workgroup_size, items, subtiles, tile; /* tile = workgroup_size x items x subtiles keys
                                                   * (one subgroup fewer with early_walk) */
  uint32_t read_ahead;                  /* select and partition: tiles ahead read into cache (0: none) */
  uint32_t early_walk;                  /* unique, rle, reduce-by-key: subgroup 0 walks the look-back
                                         * while the others load (1), and holds no keys */
  uint32_t subgroup_walk;               /* tiles that walk after loading: subgroup 0 walks for the count
                                         * (1), else the whole workgroup (compact.comp's walk_for_count) */
  bool split_descriptors;               /* reduce-by-key's value descriptors */
  gs_kernel kernel;
} gs_compact;

enum { GS_COMPACT_TOTAL_OFFSET = 4 }; /* bytes into the state block: the u32 number kept */

/* Usage errors for combinations that make no sense (as gs_scan_check_config for
 * reduce-by-key's value and accumulator); NO_DEVICE for what the device lacks. dev may be NULL. */
int gs_compact_check_config(const gs_device *dev, const gs_compact_config *config);

/* The most keys one pass takes (counts stay below 2^30; each array fits one buffer). */
uint64_t gs_compact_max_elements(const gs_device *dev, const gs_compact_config *config);

int gs_compact_create(gs_device *dev, const gs_memops *memops, const gs_device_config *device_config,
                      const gs_compact_config *config, gs_compact *c);
void gs_compact_destroy(gs_compact *c);

/* Bytes of the state block (control words and descriptors) for passes of up to max_n keys. */
VkDeviceSize gs_compact_state_bytes(const gs_compact *c, uint64_t max_n);

/* What a state block holds between passes, kept by the caller beside the block and zeroed for a
 * new block or one whose last pass did not run to its end: the half of its descriptors that the
 * next pass of `of` takes, and how many tiles' descriptors at the start of each half are zero.
 * A pass whose tiles those cover clears nothing first (a dispatch and a barrier less); its tiles
 * zero their descriptors in the other half as they go, and its last workgroup the ticket
 * counter. Each recording updates it for the block as the pass will leave it, or zeroes it on
 * an error. Every pass on a tracked block must pass its `rest` (a pass without one leaves the
 * block untracked: zero `rest` after it), and a `rest` lives no longer than its compaction
 * (`of` is compared by address). */
typedef struct {
  const gs_compact *of;
  unsigned half;
  uint64_t zeroed_tiles[2];
} gs_compact_rest;

/* Where in a state block half `half` keeps the descriptors of the first `tiles` tiles: the
 * counts, and (reduce-by-key; else size 0) the values, where `values` is not NULL. */
void gs_compact_descriptors(const gs_compact *c, gs_range state, unsigned half, uint64_t tiles, gs_range *counts,
                            gs_range *values);

typedef struct {
  gs_range keys_in;
  gs_range values_in;   /* reduce-by-key */
  gs_range keys_out;    /* size 0: not written */
  gs_range indices_out; /* u32; size 0: not written */
  unsigned carry_words; /* 0: indices_out receives kept keys' positions; 1 or 2 (not reduce-by-key):
                           the words of their values in values_in (a sort's values or indices) */
  gs_range values_out;  /* reduce-by-key */
  gs_range state;       /* gs_compact_state_bytes: cleared by the recording unless `rest` says
                           what it needs is zero */
  gs_compact_rest *rest; /* NULL: a block whose contents the caller does not track */
  gs_range program;     /* select, partition: the predicate's ops, on the device */
  uint32_t program_length;
  bool has_previous;    /* the keys continue a chunk whose last key was previous_bits */
  uint64_t previous_bits;
} gs_compact_run;

/* Records the pass over n keys, starting with a barrier after earlier compute and transfer
 * work; with `ts` (2 slots, reset) the timestamps around it. */
int gs_compact_record(const gs_compact *c, VkCommandBuffer cb, uint64_t n, const gs_compact_run *run,
                      gs_timestamps *ts);

#endif
