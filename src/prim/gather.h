/* Whole records in the order of a sort's indices, on the GPU: the device-side alternative
 * to gathering records with host threads (src/cli/cmd_sort.c chooses). */
#ifndef GS_PRIM_GATHER_H
#define GS_PRIM_GATHER_H

#include "vk/commands.h"
#include "vk/kernel.h"

typedef struct {
  gs_device *dev;
  uint64_t capacity;
  unsigned record_bytes;
  gs_kernel kernel;
  gs_buffer records_in, records_out;
  VkDescriptorPool pool;
  VkDescriptorSet set;
  const gs_buffer *bound_indices;
  gs_submission submission;
  gs_timestamps timestamps;
  double seconds; /* GPU time of the last run */
} gs_gather;

/* Whether records of this size can be gathered on the device: a multiple of 4 bytes, and
 * all of them in one binding. */
bool gs_gather_fits(const gs_device *dev, uint64_t n, unsigned record_bytes);

int gs_gather_create(gs_device *dev, gs_gather *g, uint64_t capacity, unsigned record_bytes);
void gs_gather_destroy(gs_gather *g);

/* The buffer to upload the records into; records_out holds them gathered after a run. */
gs_buffer *gs_gather_input(gs_gather *g);

/* records_out[i] = records_in[indices[i]] for i < n; waits (bounded). */
int gs_gather_run(gs_gather *g, const gs_buffer *indices, uint64_t n);

#endif
