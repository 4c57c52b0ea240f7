#include "vk/commands.h"

#include <string.h>

#include "util/error.h"

int gs_submission_init(gs_device *dev, gs_submission *s) {
  memset(s, 0, sizeof *s);
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = dev->command_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(dev->device, &ai, &s->cb);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "allocating a command buffer");
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(dev->device, &fi, NULL, &s->fence);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "creating a fence");
  return GPUSORT_OK;
}

void gs_submission_destroy(gs_device *dev, gs_submission *s) {
  if (!dev->device || dev->wedged) return; /* never free what the GPU may still be using */
  if (s->pending) vkWaitForFences(dev->device, 1, &s->fence, VK_TRUE, dev->timeout_ns);
  if (s->fence) vkDestroyFence(dev->device, s->fence, NULL);
  if (s->cb) vkFreeCommandBuffers(dev->device, dev->command_pool, 1, &s->cb);
  memset(s, 0, sizeof *s);
}

int gs_submission_begin(gs_device *dev, gs_submission *s) {
  VkResult r = vkResetCommandBuffer(s->cb, 0);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "resetting a command buffer");
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  r = vkBeginCommandBuffer(s->cb, &bi);
  return r == VK_SUCCESS ? GPUSORT_OK : gs_vk_fail(dev, r, "recording commands");
}

int gs_submission_submit(gs_device *dev, gs_submission *s, const char *stage) {
  VkResult r = vkEndCommandBuffer(s->cb);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, stage);
  r = vkResetFences(dev->device, 1, &s->fence);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, stage);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &s->cb};
  pthread_mutex_lock(&dev->queue_lock);
  r = vkQueueSubmit(dev->queue, 1, &si, s->fence);
  pthread_mutex_unlock(&dev->queue_lock);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, stage);
  s->pending = true;
  return GPUSORT_OK;
}

int gs_submission_wait(gs_device *dev, gs_submission *s, const char *stage) {
  if (!s->pending) return GPUSORT_OK;
  if (dev->wedged) /* an earlier wait gave up: do not wait again on the way out */
    return gs_fail(GPUSORT_ERROR_GPU_STALL, "GPU stall: %s cannot finish on a stalled device", stage);
  VkResult r = vkWaitForFences(dev->device, 1, &s->fence, VK_TRUE, dev->timeout_ns);
  if (r == VK_TIMEOUT) {
    gs_device_mark_wedged(dev);
    return gs_fail(GPUSORT_ERROR_GPU_STALL, "GPU stall: %s did not finish within %g s", stage,
                   (double)dev->timeout_ns * 1e-9);
  }
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, stage);
  s->pending = false;
  return GPUSORT_OK;
}

int gs_submitter_init(gs_device *dev, gs_submitter *s, const char *stage) {
  memset(s, 0, sizeof *s);
  s->stage = stage;
  int rc = gs_submission_init(dev, &s->ring[0]);
  return rc ? rc : gs_submission_init(dev, &s->ring[1]);
}

void gs_submitter_destroy(gs_device *dev, gs_submitter *s) {
  gs_submission_destroy(dev, &s->ring[0]);
  gs_submission_destroy(dev, &s->ring[1]);
}

int gs_submitter_begin(gs_device *dev, gs_submitter *s) { return gs_submission_begin(dev, &s->ring[s->current]); }

int gs_submitter_flush(gs_device *dev, gs_submitter *s) {
  gs_cmd_barrier(s->ring[s->current].cb);
  int rc = gs_submission_submit(dev, &s->ring[s->current], s->stage);
  if (rc) return rc;
  s->current ^= 1;
  if ((rc = gs_submission_wait(dev, &s->ring[s->current], s->stage))) return rc;
  rc = gs_submission_begin(dev, &s->ring[s->current]);
  if (!rc) gs_cmd_barrier(s->ring[s->current].cb);
  return rc;
}

int gs_submitter_finish(gs_device *dev, gs_submitter *s) {
  int rc = gs_submission_submit(dev, &s->ring[s->current], s->stage);
  int other = gs_submission_wait(dev, &s->ring[s->current ^ 1], s->stage);
  if (!rc) rc = gs_submission_wait(dev, &s->ring[s->current], s->stage);
  return rc ? rc : other;
}

static void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                           VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

void gs_cmd_barrier(VkCommandBuffer cb) {
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  memory_barrier(cb, stages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 stages | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
}

void gs_cmd_barrier_to_host(VkCommandBuffer cb) {
  memory_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_HOST_READ_BIT);
}

int gs_timestamps_create(gs_device *dev, gs_timestamps *ts, uint32_t count) {
  memset(ts, 0, sizeof *ts);
  VkQueryPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = count};
  VkResult r = vkCreateQueryPool(dev->device, &ci, NULL, &ts->pool);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "creating timestamp queries");
  ts->count = count;
  gs_timestamps_reset(dev, ts);
  return GPUSORT_OK;
}

void gs_timestamps_destroy(gs_device *dev, gs_timestamps *ts) {
  if (dev->device && !dev->wedged && ts->pool) vkDestroyQueryPool(dev->device, ts->pool, NULL);
  memset(ts, 0, sizeof *ts);
}

void gs_timestamps_reset(gs_device *dev, gs_timestamps *ts) { vkResetQueryPool(dev->device, ts->pool, 0, ts->count); }

void gs_timestamps_write(VkCommandBuffer cb, gs_timestamps *ts, uint32_t slot) {
  /* bottom of pipe: written when every earlier command has completed */
  vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ts->pool, slot);
}

int gs_timestamps_read(gs_device *dev, gs_timestamps *ts, uint32_t first, uint32_t count, uint64_t *ticks) {
  VkResult r = vkGetQueryPoolResults(dev->device, ts->pool, first, count, sizeof(uint64_t) * count, ticks,
                                     sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r == VK_NOT_READY) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: timestamps read before they were written");
  return r == VK_SUCCESS ? GPUSORT_OK : gs_vk_fail(dev, r, "reading timestamps");
}

double gs_timestamps_seconds(const gs_device *dev, uint64_t begin, uint64_t end) {
  uint64_t ticks = (end - begin) & dev->timestamp_mask;
  return (double)ticks * dev->timestamp_ns * 1e-9;
}
