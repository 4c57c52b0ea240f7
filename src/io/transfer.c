#include "io/transfer.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

enum { DEFAULT_CHUNK = 64 << 20 };

int gs_stager_create(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total) {
  memset(st, 0, sizeof *st);
  st->dev = dev;
  st->kind = kind;
  size_t chunk = DEFAULT_CHUNK;
  const char *env = getenv("GPUSORT_CHUNK_BYTES");
  if (env && *env) chunk = (size_t)strtoull(env, NULL, 10);
  chunk &= ~(size_t)15;
  if (chunk < 16) chunk = 16;
  if (chunk > total) chunk = (total + 15) & ~(size_t)15;
  if (chunk == 0) chunk = 16;
  st->chunk = chunk;
  const char *what = kind == GS_MEM_UPLOAD ? "the upload staging area" : "the readback staging area";
  int rc;
  for (int i = 0; i < 2; i++) {
    if ((rc = gs_buffer_create(dev, &st->slot[i], chunk, kind, what))) return rc;
    if ((rc = gs_submission_init(dev, &st->submission[i]))) return rc;
  }
  return gs_timestamps_create(dev, &st->timestamps, 4);
}

void gs_stager_destroy(gs_stager *st) {
  if (!st->dev) return;
  for (int i = 0; i < 2; i++) {
    gs_submission_destroy(st->dev, &st->submission[i]);
    gs_buffer_destroy(st->dev, &st->slot[i]);
  }
  gs_timestamps_destroy(st->dev, &st->timestamps);
  memset(st, 0, sizeof *st);
}

/* Records a copy between a slot and a device buffer, bracketed by the slot's timestamps. */
static int submit_copy(gs_stager *st, int i, VkBuffer from, VkDeviceSize from_offset, VkBuffer to,
                       VkDeviceSize to_offset, VkDeviceSize bytes, const char *stage) {
  gs_submission *sub = &st->submission[i];
  int rc = gs_submission_begin(st->dev, sub);
  if (rc) return rc;
  gs_timestamps_write(sub->cb, &st->timestamps, 2 * i);
  VkBufferCopy region = {.srcOffset = from_offset, .dstOffset = to_offset, .size = bytes};
  vkCmdCopyBuffer(sub->cb, from, to, 1, &region);
  if (st->kind == GS_MEM_READBACK) gs_cmd_barrier_to_host(sub->cb);
  gs_timestamps_write(sub->cb, &st->timestamps, 2 * i + 1);
  return gs_submission_submit(st->dev, sub, stage);
}

/* Waits for a slot's copy and adds its GPU time. */
static int finish_copy(gs_stager *st, int i, const char *stage, gs_transfer_stats *stats) {
  gs_submission *sub = &st->submission[i];
  if (!sub->pending) return GS_OK;
  int rc = gs_submission_wait(st->dev, sub, stage);
  if (rc) return rc;
  uint64_t t[2];
  if ((rc = gs_timestamps_read(st->dev, &st->timestamps, 2 * i, 2, t))) return rc;
  stats->gpu_seconds += gs_timestamps_seconds(st->dev, t[0], t[1]);
  vkResetQueryPool(st->dev->device, st->timestamps.pool, 2 * i, 2);
  return GS_OK;
}

int gs_upload(gs_stager *st, gs_buffer *dst, VkDeviceSize dst_offset, const void *src, size_t bytes,
              gs_transfer_stats *stats) {
  const double start = gs_now();
  const unsigned char *from = src;
  int rc = GS_OK;
  for (size_t done = 0, c = 0; done < bytes && rc == GS_OK; c++) {
    const int i = (int)(c % 2);
    const size_t len = bytes - done < st->chunk ? bytes - done : st->chunk;
    if ((rc = finish_copy(st, i, "the upload to the GPU", stats))) break;
    const double t = gs_now();
    gs_parallel_memcpy(st->slot[i].mapped, from + done, len);
    stats->host_seconds += gs_now() - t;
    /* copies are a multiple of 4 bytes; a 1..3 byte tail (never for key data) is padded */
    rc = submit_copy(st, i, st->slot[i].buffer, 0, dst->buffer, dst_offset + done, (len + 3) & ~(size_t)3,
                     "the upload to the GPU");
    done += len;
  }
  for (int i = 0; i < 2; i++) {
    int w = finish_copy(st, i, "the upload to the GPU", stats);
    if (rc == GS_OK) rc = w;
  }
  stats->wall_seconds += gs_now() - start;
  return rc;
}

int gs_download(gs_stager *st, const gs_buffer *src, VkDeviceSize src_offset, size_t bytes, gs_download_sink sink,
                void *ctx, gs_transfer_stats *stats) {
  const double start = gs_now();
  const size_t chunks = (bytes + st->chunk - 1) / st->chunk;
  int rc = GS_OK;
  /* Keep one copy in flight ahead of the chunk being drained. */
  for (size_t c = 0; c < chunks + 1 && rc == GS_OK; c++) {
    if (c < chunks) {
      const size_t off = c * st->chunk, len = bytes - off < st->chunk ? bytes - off : st->chunk;
      rc = submit_copy(st, (int)(c % 2), src->buffer, src_offset + off, st->slot[c % 2].buffer, 0,
                       (len + 3) & ~(size_t)3, "the download from the GPU");
      if (rc) break;
    }
    if (c >= 1) {
      const size_t d = c - 1, off = d * st->chunk, len = bytes - off < st->chunk ? bytes - off : st->chunk;
      const int i = (int)(d % 2);
      if ((rc = finish_copy(st, i, "the download from the GPU", stats))) break;
      if ((rc = gs_buffer_invalidate(st->dev, &st->slot[i]))) break;
      const double t = gs_now();
      rc = sink(ctx, st->slot[i].mapped, len);
      stats->host_seconds += gs_now() - t;
    }
  }
  for (int i = 0; i < 2; i++) {
    int w = finish_copy(st, i, "the download from the GPU", stats);
    if (rc == GS_OK) rc = w;
  }
  stats->wall_seconds += gs_now() - start;
  return rc;
}
