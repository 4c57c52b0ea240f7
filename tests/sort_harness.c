#include "sort_harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/transfer.h"
#include "util/error.h"

int harness_open(harness *h) {
  memset(h, 0, sizeof *h);
  int rc = gs_device_open(&h->dev, -1);
  if (rc) fprintf(stderr, "cannot open a device: %s\n", gs_last_error());
  return rc;
}

void harness_close(harness *h) {
  if (h->have_sorter) gs_radix_sort_destroy(&h->sorter);
  gs_device_close(&h->dev);
}

/* Reuses the sorter while the configuration matches and the capacity suffices. */
static int ensure_sorter(harness *h, gs_key_type key, bool descending, uint64_t n) {
  if (h->have_sorter && h->config.key == key && h->config.descending == descending && h->config.capacity >= n)
    return GS_OK;
  if (h->have_sorter) gs_radix_sort_destroy(&h->sorter);
  h->have_sorter = false;
  h->config = (gs_radix_sort_config){.key = key, .descending = descending, .capacity = n < 4096 ? 4096 : n};
  int rc = gs_radix_sort_create(&h->dev, &h->sorter, &h->config);
  if (rc == GS_OK) h->have_sorter = true;
  return rc;
}

typedef struct {
  unsigned char *out;
} copy_sink;

static int sink_copy(void *ctx, const void *data, size_t bytes) {
  copy_sink *c = ctx;
  memcpy(c->out, data, bytes);
  c->out += bytes;
  return GS_OK;
}

uint32_t harness_tile_keys(harness *h, gs_key_type key) {
  return ensure_sorter(h, key, false, 1) == GS_OK ? h->sorter.tile_keys : 0;
}

int harness_gpu_sort(harness *h, gs_key_type key, bool descending, const void *keys, uint64_t n,
                     unsigned begin_bit, unsigned end_bit, void *out) {
  const size_t bytes = n * gs_key_info_of(key)->bytes;
  int rc = ensure_sorter(h, key, descending, n);
  if (rc) return rc;
  gs_stager up = {0}, down = {0};
  gs_transfer_stats stats = {0};
  gs_buffer *result = NULL;
  gs_radix_sort_run_options run = {.n = n, .begin_bit = begin_bit, .end_bit = end_bit};
  copy_sink sink = {out};
  if (!(rc = gs_stager_create(&h->dev, &up, GS_MEM_UPLOAD, bytes)) &&
      !(rc = gs_stager_create(&h->dev, &down, GS_MEM_READBACK, bytes)) &&
      !(rc = gs_upload(&up, gs_radix_sort_input(&h->sorter), 0, keys, bytes, &stats)) &&
      !(rc = gs_radix_sort_run(&h->sorter, &run, &result)))
    rc = gs_download(&down, result, 0, bytes, sink_copy, &sink, &stats);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  return rc;
}

/* LSD reference with 8-bit digits on the ordered bits: obviously stable. */
void reference_sort(gs_key_type key, bool descending, const void *keys, uint64_t n, unsigned begin_bit,
                    unsigned end_bit, void *out) {
  const gs_key_info *info = gs_key_info_of(key);
  const unsigned bytes = info->bytes;
  if (begin_bit == 0 && end_bit == 0) end_bit = bytes * 8;
  uint64_t *ordered = malloc((n ? n : 1) * sizeof *ordered), *tmp = malloc((n ? n : 1) * sizeof *tmp);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t o = gs_key_ordered(info, (const unsigned char *)keys + i * bytes);
    ordered[i] = descending ? ~o & (bytes == 8 ? UINT64_MAX : UINT32_MAX) : o;
  }
  for (unsigned shift = begin_bit; shift < end_bit; shift += 8) {
    const unsigned width = end_bit - shift < 8 ? end_bit - shift : 8;
    const uint64_t mask = (1u << width) - 1;
    uint64_t count[257] = {0};
    for (uint64_t i = 0; i < n; i++) count[((ordered[i] >> shift) & mask) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (uint64_t i = 0; i < n; i++) tmp[count[(ordered[i] >> shift) & mask]++] = ordered[i];
    uint64_t *swap = ordered;
    ordered = tmp, tmp = swap;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t o = descending ? ~ordered[i] & (bytes == 8 ? UINT64_MAX : UINT32_MAX) : ordered[i];
    gs_key_store_bits(bytes, (unsigned char *)out + i * bytes, gs_bits_from_ordered(info->kind, bytes, o));
  }
  free(ordered);
  free(tmp);
}

void check_sort(harness *h, gs_key_type key, bool descending, gs_dist dist, uint64_t n, unsigned begin_bit,
                unsigned end_bit, const char *label) {
  const unsigned bytes = gs_key_info_of(key)->bytes;
  const size_t size = (n ? n : 1) * bytes;
  unsigned char *keys = malloc(size), *want = malloc(size), *got = malloc(size);
  gs_generate(key, dist, 12345 + n, n, 0, n, keys);
  memset(got, 0xA5, size); /* poison: every byte must be written */
  reference_sort(key, descending, keys, n, begin_bit, end_bit, want);
  h->checks++;
  int rc = harness_gpu_sort(h, key, descending, keys, n, begin_bit, end_bit, got);
  if (rc) {
    h->failures++;
    fprintf(stderr, "FAIL %s: n=%" PRIu64 ": %s\n", label, n, gs_last_error());
  } else if (memcmp(want, got, n * bytes) != 0) {
    h->failures++;
    uint64_t first = 0, wrong = 0;
    for (uint64_t i = n; i-- > 0;)
      if (memcmp(want + i * bytes, got + i * bytes, bytes) != 0) first = i, wrong++;
    char a[64], b[64];
    gs_key_format(gs_key_info_of(key), want + first * bytes, a, sizeof a);
    gs_key_format(gs_key_info_of(key), got + first * bytes, b, sizeof b);
    fprintf(stderr, "FAIL %s: n=%" PRIu64 ": %" PRIu64 " keys differ, first at %" PRIu64 ": want %s got %s\n", label, n,
            wrong, first, a, b);
  }
  free(keys);
  free(want);
  free(got);
}
