/* Moving bytes between host memory and device buffers through a bounded staging area.
 *
 * Two staging slots of at most `chunk` bytes alternate: while the GPU copies one slot, the
 * host fills (upload) or drains (download) the other, so host work on chunk i+1 overlaps the
 * bus transfer of chunk i. Host copies into staging use several threads. */
#ifndef GS_IO_TRANSFER_H
#define GS_IO_TRANSFER_H

#include "vk/buffer.h"
#include "vk/commands.h"

typedef struct {
  double gpu_seconds;  /* copy commands on the GPU, from timestamps */
  double host_seconds; /* host time filling or draining staging slots */
  double wall_seconds; /* the whole transfer */
} gs_transfer_stats;

typedef struct {
  gs_device *dev;
  gs_memory_kind kind;
  size_t chunk;
  gs_buffer slot[2];
  gs_submission submission[2];
  gs_timestamps timestamps; /* two per slot */
  void (*progress)(void *ctx, uint64_t bytes); /* optional: called as each slot is filled or drained */
  void *progress_ctx;
} gs_stager;

/* Staging for uploads (GS_MEM_UPLOAD) or downloads (GS_MEM_READBACK) of up to `total` bytes at
 * a time; slots are min(total, 64 MiB) (GPUSORT_CHUNK_BYTES overrides, for tests). */
int gs_stager_create(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total);
/* The same with slots of at most slot_bytes (0: the default). */
int gs_stager_create_sized(gs_device *dev, gs_stager *st, gs_memory_kind kind, size_t total, size_t slot_bytes);

/* Host memory the two slots of staging for `total` bytes take (slot_bytes as above). */
size_t gs_stager_bytes(size_t total, size_t slot_bytes);
void gs_stager_destroy(gs_stager *st);

/* One field of fixed-size host records and the device array that holds it: `bytes` bytes at
 * `offset` in each record on the host, element i at i * bytes in `array`. */
typedef struct {
  gs_range array;
  unsigned offset, bytes;
} gs_field;

/* The `bytes` at `offset` of each of `count` records of `stride` bytes, into consecutive
 * elements at out (several threads). */
void gs_gather_field(const void *records, size_t count, unsigned stride, unsigned offset, unsigned bytes, void *out);

/* Uploads fields of `count` records of `stride` bytes: each field's values are gathered into
 * staging on the host (a plain parallel memcpy when the field is the whole record) and copied
 * to its device array. */
int gs_upload_fields(gs_stager *st, const void *records, size_t count, unsigned stride, const gs_field *fields,
                     unsigned nfields, gs_transfer_stats *stats);

/* Copies `bytes` of an open file, from `offset` on, to the start of dst: the file is read
 * straight into the staging slots by several threads (pread), without mapping it. `name`
 * names the file in errors. */
int gs_upload_file(gs_stager *st, gs_range dst, int fd, uint64_t offset, size_t bytes, const char *name,
                   gs_transfer_stats *stats);

/* Copies `bytes` from host memory to the start of dst. */
int gs_upload(gs_stager *st, gs_range dst, const void *src, size_t bytes, gs_transfer_stats *stats);

/* Receives `count` consecutive elements of each downloaded field, field f at data[f];
 * returns a status (non-zero stops the download). */
typedef int (*gs_fields_sink)(void *ctx, const void *const *data, size_t count);

/* Downloads elements [0, count) of each field's device array, chunk by chunk, in order. */
int gs_download_fields(gs_stager *st, const gs_field *fields, unsigned nfields, size_t count, gs_fields_sink sink,
                       void *ctx, gs_transfer_stats *stats);

/* Receives downloaded bytes in order. */
typedef int (*gs_download_sink)(void *ctx, const void *data, size_t bytes);

/* Copies the first `bytes` (a multiple of 4) of src to the host, chunk by chunk, into `sink`. */
int gs_download(gs_stager *st, gs_range src, size_t bytes, gs_download_sink sink, void *ctx,
                gs_transfer_stats *stats);

/* One copy between host memory imported as a buffer (gs_buffer_import_host) and device memory:
 * `bytes` at host_offset in it, and the start of `device`. */
typedef struct {
  VkDeviceSize host_offset;
  gs_range device;
} gs_host_copy;

/* Copies between imported host memory and device ranges in one submission, to the device (up)
 * or to the host: the bus moves the bytes, the host copies none. */
int gs_copy_imported(gs_device *dev, const gs_buffer *host, const gs_host_copy *copies, unsigned count, bool up,
                     gs_transfer_stats *stats);

#endif
