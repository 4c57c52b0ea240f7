/* Shared by the GPU sort tests: a context (device and cached pipelines), the sort recorded on
 * buffers in several arrangements, and a CPU reference. */
#ifndef GS_TESTS_SORT_HARNESS_H
#define GS_TESTS_SORT_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/datagen.h"
#include "job/context.h"

/* How the sort's arrays are arranged (gs_radix_sort_array), and how it learns n. */
typedef enum {
  PLACE_IN_PLACE, /* out = in; an odd pass count ends with a copy into place */
  PLACE_SEPARATE, /* out apart from in and tmp */
  PLACE_INDIRECT, /* in place, n read from a GPU buffer, arrays sized for more */
  PLACE_COUNT
} placement;

/* What one GPU sort does. */
typedef struct {
  gs_key_type key;
  bool descending;
  unsigned value_bytes;        /* 0, 4 or 8 */
  bool index_values;           /* values are the input indices (value_bytes 4): argsort */
  unsigned begin_bit, end_bit; /* 0, 0: all bits */
} sort_case;

typedef struct {
  gs_context ctx;
  gs_sort_algo algo; /* every sort's algorithm (harness_open: Onesweep) */
  placement place;
  uint64_t segment_keys; /* non-zero: direct sorts run in segments of this many keys, each
                            segment in its own submission */
  unsigned flushes;      /* submissions ended between segments so far */
  gs_submitter submitter;
  unsigned copy_passes;    /* the last Onesweep sort's copy passes (bit p: pass p), and those of */
  unsigned skipped_passes; /* them it skipped, as its tickets' marks show (radix_scan_histograms) */
  uint32_t first_pass_tickets; /* and the tickets its first pass's workgroups took (its tiles) */
  uint64_t max_n;              /* the capacity the last sort was recorded for */
  uint64_t indirect_slack;     /* keys an indirect sort's arrays hold past n (0: 2 tiles + 5) */
  bool sampled;                /* one direction per key type and payload (test_sort's `sampled`) */
  /* Kept state (test_sort's `kept`): every sort on one state block, whose account (`rest`) goes
   * from sort to sort as a program's does. Before a sort that finds the block at rest, the
   * harness plants nonzero words where that sort must zero them itself: the tickets, the
   * first pass's descriptors and the histograms it leaves for the next sort; after it, it checks
   * that those histograms read zero. */
  bool kept;
  uint64_t kept_capacity; /* direct sorts' max_n where it is at least n (0: n) */
  gs_buffer kept_state;
  gs_radix_sort_rest rest;
  unsigned kept_sorts; /* sorts that found the block at rest */
  int failures, checks;
} harness;

int harness_open(harness *h);
void harness_close(harness *h);

/* The sorter for a case's key type, direction and value size (cached by the context). */
int harness_sorter(harness *h, const sort_case *c, gs_radix_sort **s);
/* The keys of the case's sorter's own tile on this device (the one sorts of many keys take;
 * small sorts may take smaller ones). */
uint32_t harness_tile_keys(harness *h, const sort_case *c);

/* The most workgroups the sorter's histogram pass runs in (0: no sorter). */
uint32_t harness_histogram_groups(harness *h);

/* Sorts n keys (and values, unless index_values) on the GPU into out_keys / out_values. */
int harness_gpu_sort(harness *h, const sort_case *c, const void *keys, const void *values, uint64_t n,
                     void *out_keys, void *out_values);

/* Stable CPU reference: the permutation that sorts the keys by the case's key bits, and the
 * passes of that LSD sort in which every key has the same digit (bit p: pass p). Returns the
 * number of passes. */
unsigned reference_permutation(const sort_case *c, const void *keys, uint64_t n, uint64_t *perm, unsigned *copy_passes);

/* Generates data for the case, sorts it on the GPU and on the CPU, and compares keys and
 * values byte for byte; counts a failure (with a diagnostic on stderr) on any difference.
 * Outputs are poisoned first, so an unwritten position cannot pass. */
void check_case(harness *h, const sort_case *c, gs_dist dist, uint64_t n, const char *label);

/* Keys only, ascending, all bits: the common case. */
void check_sort(harness *h, gs_key_type key, gs_dist dist, uint64_t n, const char *label);

#endif
