#include "prim/gather.h"

#include <string.h>

#include "util/error.h"

typedef struct {
  uint32_t n, words, groups;
} gather_push;

enum { WORKGROUP = 256 };

bool gs_gather_fits(const gs_device *dev, uint64_t n, unsigned record_bytes) {
  return record_bytes % 4 == 0 && n * record_bytes <= dev->info.max_data_binding &&
         n * record_bytes / 4 <= 0xFFFFFFFFull;
}

int gs_gather_create(gs_device *dev, gs_gather *g, uint64_t capacity, unsigned record_bytes) {
  memset(g, 0, sizeof *g);
  g->dev = dev;
  g->capacity = capacity;
  g->record_bytes = record_bytes;
  const uint32_t spec[] = {WORKGROUP, 0};
  const VkDeviceSize bytes = (capacity ? capacity : 1) * record_bytes;
  int rc;
  if ((rc = gs_kernel_create(dev, &g->kernel, "gather_records", 3, sizeof(gather_push), spec, 2)) ||
      (rc = gs_buffer_create(dev, &g->records_in, bytes, GS_MEM_DEVICE, "the records")) ||
      (rc = gs_buffer_create(dev, &g->records_out, bytes, GS_MEM_DEVICE, "the gathered records")) ||
      (rc = gs_descriptor_pool_create(dev, 1, &g->pool)) || (rc = gs_submission_init(dev, &g->submission)))
    return rc;
  return gs_timestamps_create(dev, &g->timestamps, 2);
}

void gs_gather_destroy(gs_gather *g) {
  gs_device *dev = g->dev;
  if (!dev || !dev->device || dev->wedged) return;
  gs_submission_destroy(dev, &g->submission);
  gs_timestamps_destroy(dev, &g->timestamps);
  if (g->pool) vkDestroyDescriptorPool(dev->device, g->pool, NULL);
  gs_kernel_destroy(dev, &g->kernel);
  gs_buffer_destroy(dev, &g->records_in);
  gs_buffer_destroy(dev, &g->records_out);
  memset(g, 0, sizeof *g);
}

gs_buffer *gs_gather_input(gs_gather *g) { return &g->records_in; }

int gs_gather_run(gs_gather *g, const gs_buffer *indices, uint64_t n) {
  int rc;
  if (g->bound_indices != indices) { /* one set, made for the index buffer of the first run */
    const gs_buffer *b[] = {indices, &g->records_in, &g->records_out};
    if ((rc = gs_kernel_bind(g->dev, &g->kernel, g->pool, b, &g->set))) return rc;
    g->bound_indices = indices;
  }
  const uint64_t words = n * (g->record_bytes / 4);
  gather_push push = {(uint32_t)n, g->record_bytes / 4, (uint32_t)((words + WORKGROUP - 1) / WORKGROUP)};
  gs_timestamps_reset(g->dev, &g->timestamps);
  if ((rc = gs_submission_begin(g->dev, &g->submission))) return rc;
  gs_timestamps_write(g->submission.cb, &g->timestamps, 0);
  if (n && (rc = gs_kernel_dispatch(g->dev, g->submission.cb, &g->kernel, g->set, &push, push.groups))) return rc;
  gs_cmd_barrier(g->submission.cb);
  gs_timestamps_write(g->submission.cb, &g->timestamps, 1);
  if ((rc = gs_submission_submit(g->dev, &g->submission, "the record gather")) ||
      (rc = gs_submission_wait(g->dev, &g->submission, "the record gather")))
    return rc;
  uint64_t t[2];
  if ((rc = gs_timestamps_read(g->dev, &g->timestamps, 0, 2, t))) return rc;
  g->seconds = gs_timestamps_seconds(g->dev, t[0], t[1]);
  return GS_OK;
}
