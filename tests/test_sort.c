/* GPU sort against the CPU reference, byte for byte, over sizes at every boundary and
 * every test distribution.
 *
 *   test_sort matrix    boundary sizes x distributions
 *   test_sort large     a few million keys
 *   test_sort fold      sizes needing more workgroups than GPUSORT_MAX_WORKGROUPS allows
 *                       per dispatch dimension (run with that variable set low)
 *   test_sort fallback  as matrix, for runs with GPUSORT_LOOKBACK_SPIN=1 (every wait
 *                       on an earlier tile falls back to recounting it)
 *   test_sort validation  a few sizes with GPUSORT_VALIDATION=1: fails on any message of
 *                       the Khronos validation layer */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort_harness.h"

static const char *const dist_specs[] = {"uniform", "equal",      "sorted",      "reversed",
                                         "few:5",   "lowbits:8", "highbits:8", "entropy:3"};
enum { DIST_COUNT = sizeof dist_specs / sizeof dist_specs[0] };

static void run_sizes(harness *h, const uint64_t *sizes, size_t nsizes, const char *const *dists, size_t ndists) {
  for (size_t s = 0; s < nsizes; s++) {
    for (size_t d = 0; d < ndists; d++) {
      gs_dist dist;
      if (gs_dist_parse(dists[d], &dist) != 0) {
        fprintf(stderr, "bad distribution %s\n", dists[d]);
        h->failures++;
        continue;
      }
      char label[64];
      snprintf(label, sizeof label, "u32 %s", dists[d]);
      check_sort(h, GS_KEY_U32, false, dist, sizes[s], 0, 0, label);
    }
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "matrix";
  harness h;
  if (harness_open(&h)) return 1;
  const uint64_t sg = h.dev.subgroup_size;
  const uint64_t tile = harness_tile_keys(&h, GS_KEY_U32);
  printf("device: %s, subgroup %llu, tile %llu keys, mode %s\n", h.dev.info.name, (unsigned long long)sg,
         (unsigned long long)tile, mode);
  if (tile == 0) return 1;

  if (strcmp(mode, "matrix") == 0 || strcmp(mode, "fallback") == 0) {
    const uint64_t sizes[] = {0,        1,    7,        8,        9,         sg - 1,        sg,
                              sg + 1,   tile - 1, tile,     tile + 1, 2 * tile, 3 * tile + 77, 17 * tile + 1};
    run_sizes(&h, sizes, sizeof sizes / sizeof sizes[0], dist_specs, DIST_COUNT);
  } else if (strcmp(mode, "large") == 0) {
    const uint64_t big[] = {3000017};
    run_sizes(&h, big, 1, dist_specs, 1);
    const uint64_t mid[] = {(1u << 20) + 3};
    const char *const some[] = {"equal", "few:5", "highbits:8", "reversed"};
    run_sizes(&h, mid, 1, some, 4);
  } else if (strcmp(mode, "fold") == 0) {
    /* every size below needs more workgroups than one dimension then allows */
    if (h.dev.max_groups_x >= 7) {
      fprintf(stderr, "fold mode needs GPUSORT_MAX_WORKGROUPS set below 7\n");
      return 1;
    }
    printf("dispatch limit per dimension: %u workgroups\n", h.dev.max_groups_x);
    const uint64_t sizes[] = {7 * tile + 3, 23 * tile, 23 * tile + 1, 100 * tile + 999};
    const char *const some[] = {"uniform", "few:5", "sorted"};
    run_sizes(&h, sizes, sizeof sizes / sizeof sizes[0], some, 3);
  } else if (strcmp(mode, "validation") == 0) {
    if (!h.dev.validating) {
      fprintf(stderr, "validation mode needs GPUSORT_VALIDATION=1 and the validation layer "
                      "(Debian package vulkan-validationlayers)\n");
      return 1;
    }
    const uint64_t sizes[] = {0, 1, tile + 1, 5 * tile + 3};
    const char *const some[] = {"uniform", "few:5"};
    run_sizes(&h, sizes, sizeof sizes / sizeof sizes[0], some, 2);
    const unsigned messages = gs_device_validation_messages();
    printf("validation messages: %u\n", messages);
    if (messages) h.failures++, h.checks++;
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  printf("%d passed, %d failed\n", h.checks - h.failures, h.failures);
  harness_close(&h);
  return h.failures ? 1 : 0;
}
