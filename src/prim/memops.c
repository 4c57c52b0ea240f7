#include "prim/memops.h"

#include <string.h>

#include "util/error.h"

int gs_memops_create(gs_device *dev, gs_memops *m) {
  memset(m, 0, sizeof *m);
  const uint32_t workgroup = gs_workgroup_within(dev, 256);
  m->words_per_group = workgroup * 4 * 4; /* 4 vectors of 4 words each per invocation */
  const uint32_t spec[] = {workgroup, 0};
  int rc = gs_kernel_create(dev, &m->clear, "clear_words", sizeof(gs_words_push), spec, 2);
  if (!rc) rc = gs_kernel_create(dev, &m->copy, "copy_words", sizeof(gs_words_push), spec, 2);
  return rc;
}

void gs_memops_destroy(gs_device *dev, gs_memops *m) {
  gs_kernel_destroy(dev, &m->clear);
  gs_kernel_destroy(dev, &m->copy);
}

static int words_limit(uint64_t words) {
  return words > 0xFFFFFFFFull ? gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu words are more than one kernel moves",
                                         (unsigned long long)words)
                               : GPUSORT_OK;
}

/* Dispatches cover at most this many words each (a kernel counts words in 32 bits). */
enum { PIECE_WORDS = 1u << 30 };

int gs_record_clear(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, gs_range dst, uint64_t words) {
  int rc = GPUSORT_OK;
  for (uint64_t done = 0; done < words && !rc; done += PIECE_WORDS) {
    const uint64_t piece = words - done < PIECE_WORDS ? words - done : PIECE_WORDS;
    gs_words_push push = {.destination = dst.address + done * 4, .words = (uint32_t)piece};
    rc = gs_kernel_dispatch(dev, cb, &m->clear, &push, gs_groups_for(piece, m->words_per_group));
  }
  return rc;
}

int gs_record_copy(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, gs_range src, gs_range dst,
                   uint64_t words) {
  int rc = GPUSORT_OK;
  for (uint64_t done = 0; done < words && !rc; done += PIECE_WORDS) {
    const uint64_t piece = words - done < PIECE_WORDS ? words - done : PIECE_WORDS;
    gs_words_push push = {.source = src.address + done * 4, .destination = dst.address + done * 4,
                          .words = (uint32_t)piece};
    rc = gs_kernel_dispatch(dev, cb, &m->copy, &push, gs_groups_for(piece, m->words_per_group));
  }
  return rc;
}

int gs_record_counted(const gs_device *dev, VkCommandBuffer cb, const gs_memops *m, const gs_range *src, gs_range dst,
                      VkDeviceAddress count, uint32_t scale, uint64_t max_words) {
  if (words_limit(max_words)) return GPUSORT_ERROR_TOO_LARGE;
  gs_words_push push = {.source = src ? src->address : 0,
                        .destination = dst.address,
                        .count = count,
                        .words = scale,
                        .flags = GS_WORDS_FROM_MEMORY};
  return gs_kernel_dispatch(dev, cb, src ? &m->copy : &m->clear, &push, gs_groups_for(max_words, m->words_per_group));
}
