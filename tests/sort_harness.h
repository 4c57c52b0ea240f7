/* Shared by the GPU sort tests: a device, a sorter sized on demand, and a CPU reference. */
#ifndef GS_TESTS_SORT_HARNESS_H
#define GS_TESTS_SORT_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/datagen.h"
#include "prim/radix_sort.h"

typedef struct {
  gs_device dev;
  gs_radix_sort sorter;
  bool have_sorter;
  gs_radix_sort_config config;
  int failures, checks;
} harness;

int harness_open(harness *h);
void harness_close(harness *h);

/* The tile size the sorter uses for this key type on this device. */
uint32_t harness_tile_keys(harness *h, gs_key_type key);

/* Sorts `keys` (n keys of the sorter's type) on the GPU into `out`. */
int harness_gpu_sort(harness *h, gs_key_type key, bool descending, const void *keys, uint64_t n,
                     unsigned begin_bit, unsigned end_bit, void *out);

/* Stable CPU reference: sorts by the ordered bits in [begin_bit, end_bit). */
void reference_sort(gs_key_type key, bool descending, const void *keys, uint64_t n, unsigned begin_bit,
                    unsigned end_bit, void *out);

/* Sorts generated data on the GPU and on the CPU and compares byte for byte; counts a
 * failure (with a diagnostic on stderr) on any difference. Every byte of the output is
 * poisoned first, so an unwritten position cannot pass. */
void check_sort(harness *h, gs_key_type key, bool descending, gs_dist dist, uint64_t n, unsigned begin_bit,
                unsigned end_bit, const char *label);

#endif
