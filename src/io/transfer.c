#include "io/transfer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/knobs.h"
#include "util/parallel.h"

enum { DEFAULT_CHUNK = 64 << 20 };

static size_t slot_size(size_t total, size_t slot_bytes) {
  size_t chunk = gs_knobs_get()->chunk_bytes ? (size_t)gs_knobs_get()->chunk_bytes : DEFAULT_CHUNK;
  if (slot_bytes && slot_bytes < chunk) chunk = slot_bytes;
  chunk &= ~(size_t)15;
  if (chunk < 16) chunk = 16;
  if (chunk > total) chunk = (total + 15) & ~(size_t)15;
  if (chunk == 0) chunk = 16;
  return chunk;
}

size_t gs_stager_bytes(size_t total, size_t slot_bytes) { return 2 * slot_size(total, slot_bytes); }

int gs_stager_create(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total) {
  return gs_stager_create_sized(dev, st, kind, total, 0);
}

int gs_stager_create_sized(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total, size_t slot_bytes) {
  memset(st, 0, sizeof *st);
  st->dev = dev;
  st->kind = kind;
  const size_t chunk = slot_size(total, slot_bytes);
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

enum { MAX_FIELDS = 4 };

/* Field f of a chunk of `count` records sits in a slot at offset count * (bytes of fields
 * before f). */
static size_t slot_offset(const gs_field *fields, unsigned f, size_t count) {
  size_t off = 0;
  for (unsigned g = 0; g < f; g++) off += count * fields[g].bytes;
  return off;
}

static unsigned record_field_bytes(const gs_field *fields, unsigned nfields) {
  unsigned total = 0;
  for (unsigned f = 0; f < nfields; f++) total += fields[f].bytes;
  return total;
}

/* Records copies of a chunk's fields between a slot and the fields' device arrays
 * (up = slot to device), bracketed by the slot's timestamps, and submits them. */
static int submit_chunk(gs_stager *st, int i, const gs_field *fields, unsigned nfields, size_t first, size_t count,
                        bool up, const char *stage) {
  gs_submission *sub = &st->submission[i];
  int rc = gs_submission_begin(st->dev, sub);
  if (rc) return rc;
  if (!up) gs_cmd_barrier(sub->cb); /* after the kernels of earlier submissions that wrote the arrays */
  gs_timestamps_write(sub->cb, &st->timestamps, 2 * i);
  for (unsigned f = 0; f < nfields; f++) {
    /* transfers are whole words; the arrays' sizes are rounded up to words as well */
    const VkDeviceSize bytes = ((VkDeviceSize)count * fields[f].bytes + 3) & ~(VkDeviceSize)3;
    const VkDeviceSize slot = slot_offset(fields, f, count);
    const VkDeviceSize array = fields[f].array.offset + (VkDeviceSize)first * fields[f].bytes;
    VkBufferCopy region = {.srcOffset = up ? slot : array, .dstOffset = up ? array : slot, .size = bytes};
    if (up)
      vkCmdCopyBuffer(sub->cb, st->slot[i].buffer, fields[f].array.buffer, 1, &region);
    else
      vkCmdCopyBuffer(sub->cb, fields[f].array.buffer, st->slot[i].buffer, 1, &region);
  }
  if (!up) gs_cmd_barrier_to_host(sub->cb);
  gs_timestamps_write(sub->cb, &st->timestamps, 2 * i + 1);
  return gs_submission_submit(st->dev, sub, stage);
}

/* Waits for a slot's copy and adds its GPU time. */
static int finish_copy(gs_stager *st, int i, const char *stage, gs_transfer_stats *stats) {
  gs_submission *sub = &st->submission[i];
  if (!sub->pending) return GPUSORT_OK;
  int rc = gs_submission_wait(st->dev, sub, stage);
  if (rc) return rc;
  uint64_t t[2];
  if ((rc = gs_timestamps_read(st->dev, &st->timestamps, 2 * i, 2, t))) return rc;
  stats->gpu_seconds += gs_timestamps_seconds(st->dev, t[0], t[1]);
  vkResetQueryPool(st->dev->device, st->timestamps.pool, 2 * i, 2);
  return GPUSORT_OK;
}

typedef struct {
  const unsigned char *records;
  unsigned stride;
  gs_field field;
  unsigned char *out;
} gather_job;

/* Field values of records [begin, end) into consecutive elements. */
static void gather_field(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const gather_job *job = arg;
  const unsigned char *src = job->records + job->field.offset;
  const unsigned stride = job->stride, bytes = job->field.bytes;
  if (bytes == 4) {
    for (size_t r = begin; r < end; r++) memcpy(job->out + 4 * r, src + r * stride, 4);
  } else if (bytes == 8) {
    for (size_t r = begin; r < end; r++) memcpy(job->out + 8 * r, src + r * stride, 8);
  } else {
    for (size_t r = begin; r < end; r++) memcpy(job->out + (size_t)bytes * r, src + r * stride, bytes);
  }
}

void gs_gather_field(const void *records, size_t count, unsigned stride, unsigned offset, unsigned bytes, void *out) {
  gather_job job = {records, stride, {.offset = offset, .bytes = bytes}, out};
  gs_parallel_for(count, 1 << 16, gather_field, &job);
}

int gs_upload_fields(gs_stager *st, const void *records, size_t count, unsigned stride, const gs_field *fields,
                     unsigned nfields, gs_transfer_stats *stats) {
  const double start = gs_now();
  const unsigned char *base = records;
  const size_t per_chunk = st->chunk / record_field_bytes(fields, nfields);
  int rc = GPUSORT_OK;
  for (size_t first = 0, c = 0; first < count && rc == GPUSORT_OK; c++) {
    const int i = (int)(c % 2);
    const size_t n = count - first < per_chunk ? count - first : per_chunk;
    if ((rc = finish_copy(st, i, "the upload to the GPU", stats))) break;
    const double t = gs_now();
    unsigned char *slot = st->slot[i].mapped;
    for (unsigned f = 0; f < nfields; f++) {
      if (fields[f].offset == 0 && fields[f].bytes == stride) { /* the whole record: one copy */
        gs_parallel_memcpy(slot + slot_offset(fields, f, n), base + first * stride, n * stride);
      } else {
        gather_job job = {base + first * stride, stride, fields[f], slot + slot_offset(fields, f, n)};
        gs_parallel_for(n, 1 << 16, gather_field, &job);
      }
    }
    stats->host_seconds += gs_now() - t;
    if (st->progress) st->progress(st->progress_ctx, (uint64_t)n * stride);
    rc = submit_chunk(st, i, fields, nfields, first, n, true, "the upload to the GPU");
    first += n;
  }
  for (int i = 0; i < 2; i++) {
    int w = finish_copy(st, i, "the upload to the GPU", stats);
    if (rc == GPUSORT_OK) rc = w;
  }
  stats->wall_seconds += gs_now() - start;
  return rc;
}

typedef struct {
  int fd;
  uint64_t offset;
  unsigned char *slot;
  int error[64]; /* per worker: an errno, or -1 for a file that ended early */
} pread_job;

static void pread_range(void *arg, size_t begin, size_t end, unsigned worker) {
  pread_job *job = arg;
  size_t at = begin;
  while (at < end) {
    const ssize_t got = pread(job->fd, job->slot + at, end - at, (off_t)(job->offset + at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      job->error[worker] = got < 0 ? errno : -1;
      return;
    }
    at += (size_t)got;
  }
}

int gs_upload_file(gs_stager *st, gs_range dst, int fd, uint64_t offset, size_t bytes, const char *name,
                   gs_transfer_stats *stats) {
  const double start = gs_now();
  const size_t chunk = st->chunk;
  int rc = GPUSORT_OK;
  for (size_t first = 0, c = 0; first < bytes && rc == GPUSORT_OK; c++) {
    const int i = (int)(c % 2);
    const size_t n = bytes - first < chunk ? bytes - first : chunk;
    if ((rc = finish_copy(st, i, "the upload to the GPU", stats))) break;
    const double t = gs_now();
    pread_job job = {.fd = fd, .offset = offset + first, .slot = st->slot[i].mapped};
    gs_parallel_for(n, (size_t)1 << 20, pread_range, &job);
    for (int w = 0; w < 64 && rc == GPUSORT_OK; w++) {
      if (job.error[w] > 0) rc = gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", name, strerror(job.error[w]));
      if (job.error[w] < 0) rc = gs_fail(GPUSORT_ERROR_IO, "cannot read %s: it became shorter while being read", name);
    }
    stats->host_seconds += gs_now() - t;
    if (rc) break;
    if (st->progress) st->progress(st->progress_ctx, n);
    /* whole words: the slot's tail past the file's bytes is copied too, and ignored */
    const size_t words = (n + 3) & ~(size_t)3;
    gs_field field = {gs_subrange(dst, first, words), 0, 4};
    rc = submit_chunk(st, i, &field, 1, 0, words / 4, true, "the upload to the GPU");
    first += n;
  }
  for (int i = 0; i < 2; i++) {
    int w = finish_copy(st, i, "the upload to the GPU", stats);
    if (rc == GPUSORT_OK) rc = w;
  }
  stats->wall_seconds += gs_now() - start;
  return rc;
}

int gs_upload(gs_stager *st, gs_range dst, const void *src, size_t bytes, gs_transfer_stats *stats) {
  /* as one field of 4-byte records (buffers hold whole words); a 1..3 byte tail is padded */
  const size_t words = (bytes + 3) / 4;
  if (words * 4 == bytes) {
    gs_field field = {dst, 0, 4};
    return gs_upload_fields(st, src, words, 4, &field, 1, stats);
  }
  unsigned char *copy = calloc(words, 4);
  if (!copy) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  memcpy(copy, src, bytes);
  gs_field field = {dst, 0, 4};
  int rc = gs_upload_fields(st, copy, words, 4, &field, 1, stats);
  free(copy);
  return rc;
}

int gs_download_fields(gs_stager *st, const gs_field *fields, unsigned nfields, size_t count, gs_fields_sink sink,
                       void *ctx, gs_transfer_stats *stats) {
  if (nfields > MAX_FIELDS) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: too many fields");
  const double start = gs_now();
  const size_t per_chunk = st->chunk / record_field_bytes(fields, nfields);
  const size_t chunks = (count + per_chunk - 1) / per_chunk;
  int rc = GPUSORT_OK;
  /* Keep one chunk's copy in flight ahead of the chunk being drained. */
  for (size_t c = 0; c < chunks + 1 && rc == GPUSORT_OK; c++) {
    if (c < chunks) {
      const size_t first = c * per_chunk, n = count - first < per_chunk ? count - first : per_chunk;
      if ((rc = submit_chunk(st, (int)(c % 2), fields, nfields, first, n, false, "the download from the GPU"))) break;
    }
    if (c >= 1) {
      const size_t first = (c - 1) * per_chunk, n = count - first < per_chunk ? count - first : per_chunk;
      const int i = (int)((c - 1) % 2);
      if ((rc = finish_copy(st, i, "the download from the GPU", stats))) break;
      if ((rc = gs_buffer_invalidate(st->dev, &st->slot[i]))) break;
      const void *data[MAX_FIELDS];
      for (unsigned f = 0; f < nfields; f++) data[f] = (const unsigned char *)st->slot[i].mapped + slot_offset(fields, f, n);
      const double t = gs_now();
      rc = sink(ctx, data, n);
      stats->host_seconds += gs_now() - t;
      if (st->progress) st->progress(st->progress_ctx, (uint64_t)n * record_field_bytes(fields, nfields));
    }
  }
  for (int i = 0; i < 2; i++) {
    int w = finish_copy(st, i, "the download from the GPU", stats);
    if (rc == GPUSORT_OK) rc = w;
  }
  stats->wall_seconds += gs_now() - start;
  return rc;
}

typedef struct {
  gs_download_sink sink;
  void *ctx;
} bytes_sink;

static int forward_bytes(void *arg, const void *const *data, size_t count) {
  bytes_sink *b = arg;
  return b->sink(b->ctx, data[0], count * 4);
}

int gs_download(gs_stager *st, gs_range src, size_t bytes, gs_download_sink sink, void *ctx,
                gs_transfer_stats *stats) {
  gs_field field = {src, 0, 4};
  bytes_sink b = {sink, ctx};
  return gs_download_fields(st, &field, 1, bytes / 4, forward_bytes, &b, stats);
}

int gs_copy_imported(gs_device *dev, const gs_buffer *host, const gs_host_copy *copies, unsigned count, bool up,
                     gs_transfer_stats *stats) {
  const double start = gs_now();
  const char *stage = up ? "uploading" : "downloading";
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  int rc;
  if ((rc = gs_submission_init(dev, &sub)) || (rc = gs_timestamps_create(dev, &ts, 2)) ||
      (rc = gs_submission_begin(dev, &sub)))
    goto done;
  if (!up) gs_cmd_barrier(sub.cb); /* after the kernels of earlier submissions that wrote the ranges */
  gs_timestamps_write(sub.cb, &ts, 0);
  for (unsigned c = 0; c < count; c++) {
    const gs_range d = copies[c].device;
    VkBufferCopy region = {.srcOffset = up ? copies[c].host_offset : d.offset,
                           .dstOffset = up ? d.offset : copies[c].host_offset,
                           .size = d.size};
    if (up)
      vkCmdCopyBuffer(sub.cb, host->buffer, d.buffer, 1, &region);
    else
      vkCmdCopyBuffer(sub.cb, d.buffer, host->buffer, 1, &region);
  }
  if (up)
    gs_cmd_barrier(sub.cb);
  else
    gs_cmd_barrier_to_host(sub.cb);
  gs_timestamps_write(sub.cb, &ts, 1);
  uint64_t t[2];
  if ((rc = gs_submission_submit(dev, &sub, stage)) || (rc = gs_submission_wait(dev, &sub, stage)) ||
      (rc = gs_timestamps_read(dev, &ts, 0, 2, t)))
    goto done;
  stats->gpu_seconds += gs_timestamps_seconds(dev, t[0], t[1]);
done:
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  stats->wall_seconds += gs_now() - start;
  return rc;
}
