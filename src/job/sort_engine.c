#include "job/sort_engine.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/knobs.h"
#include "util/parallel.h"

enum { SCRATCH_BYTES = 32 << 20, STAGING_SLOTS = 2, STAGING_CHUNK = 64 << 20 };

static gs_output_kind output_kind(const gs_sort_request *r) {
  return r->argsort                             ? GS_OUT_INDICES
         : r->layout.kind == GS_LAYOUT_PAIRS   ? GS_OUT_PAIRS
         : r->layout.kind == GS_LAYOUT_RECORDS ? GS_OUT_RECORDS
                                               : GS_OUT_KEYS;
}

/* The GPU sorts keys alone, keys with their values, or keys with their input indices. */
static unsigned gpu_value_bytes(const gs_sort_request *r) {
  switch (output_kind(r)) {
  case GS_OUT_PAIRS: return gs_key_info_of(r->layout.value)->bytes;
  case GS_OUT_RECORDS:
  case GS_OUT_INDICES: return 4;
  default: return 0;
  }
}

uint64_t gs_sort_engine_max_records(gs_context *ctx, const gs_sort_request *r) {
  return gs_radix_sort_max_keys(&ctx->dev, r->layout.key, gpu_value_bytes(r));
}

static uint64_t staging_bytes(uint64_t total) {
  return STAGING_SLOTS * (total < STAGING_CHUNK ? total : STAGING_CHUNK);
}

/* Device memory of the sort itself: keys and values twice, and the state block. */
static uint64_t sort_bytes(const gs_sort_engine *e) {
  const unsigned kb = gs_key_info_of(e->request->layout.key)->bytes;
  return 2 * e->n * (kb + e->gpu_value_bytes) + gs_radix_sort_state_bytes(e->sorter, e->n);
}

/* Where records are put in order. Measured on an H100 for 1 GiB of records: the GPU path
 * (records up, gather, records down) took 60-64 ms against 140-150 ms of host gathering for
 * 16-byte records, and 63 ms against 50 ms for 100-byte ones: host gathering costs per record,
 * the GPU path per byte. Records of up to 64 bytes (and a multiple of 4) that fit beside the
 * sort within the budget go to the GPU. GPUSORT_RECORD_GATHER=host or =gpu decides, for tests. */
static bool choose_gather(const gs_sort_engine *e) {
  const gs_gather_choice knob = gs_knobs_get()->record_gather;
  const unsigned R = e->request->layout.record_bytes;
  if (e->kind != GS_OUT_RECORDS || knob == GS_GATHER_HOST || R % 4 != 0 ||
      !gs_gather_fits(&e->ctx->dev, e->n, R))
    return false;
  const uint64_t bytes = sort_bytes(e) + 2 * e->n * R + staging_bytes(e->n * R);
  return (R <= 64 || knob == GS_GATHER_GPU) && bytes <= e->ctx->budget;
}

static int create_buffers(gs_sort_engine *e) {
  gs_device *dev = &e->ctx->dev;
  const unsigned kb = gs_key_info_of(e->request->layout.key)->bytes, vb = e->gpu_value_bytes;
  const unsigned R = e->request->layout.record_bytes;
  const uint64_t n = e->n ? e->n : 1;
  int rc;
  if ((rc = gs_buffer_create(dev, &e->keys, n * kb, GS_MEM_DEVICE, "the sort keys")) ||
      (rc = gs_buffer_create(dev, &e->alt, n * kb, GS_MEM_DEVICE, "the sort's second key buffer")) ||
      (rc = gs_buffer_create(dev, &e->state, gs_radix_sort_state_bytes(e->sorter, e->n), GS_MEM_DEVICE,
                             "the sort's histograms and look-back descriptors")))
    return rc;
  if (vb && ((rc = gs_buffer_create(dev, &e->values, n * vb, GS_MEM_DEVICE, "the sort values")) ||
             (rc = gs_buffer_create(dev, &e->values_alt, n * vb, GS_MEM_DEVICE, "the sort's second value buffer"))))
    return rc;
  if (e->gpu_gather && ((rc = gs_buffer_create(dev, &e->gathered_in, n * R, GS_MEM_DEVICE, "the records")) ||
                        (rc = gs_buffer_create(dev, &e->gathered_out, n * R, GS_MEM_DEVICE, "the gathered records"))))
    return rc;
  return GPUSORT_OK;
}

/* Uploads the key field of every record, the value field of pairs, and whole records for a
 * gather on the GPU. */
static int upload(gs_sort_engine *e) {
  const gs_layout *L = &e->request->layout;
  const unsigned kb = gs_key_info_of(L->key)->bytes, R = L->record_bytes;
  gs_field fields[3] = {{gs_buffer_range(&e->keys), L->key_offset, kb}};
  unsigned count = 1;
  if (e->kind == GS_OUT_PAIRS) fields[count++] = (gs_field){gs_buffer_range(&e->values), L->value_offset, e->gpu_value_bytes};
  if (e->gpu_gather) fields[count++] = (gs_field){gs_buffer_range(&e->gathered_in), 0, R};
  const size_t bytes = (size_t)e->n * (kb + (e->kind == GS_OUT_PAIRS ? e->gpu_value_bytes : 0) + (e->gpu_gather ? R : 0));
  gs_stager up = {0};
  gs_transfer_stats stats = {0};
  int rc = gs_stager_create(&e->ctx->dev, &up, GS_MEM_UPLOAD, bytes);
  if (!rc) rc = gs_upload_fields(&up, e->records, e->n, R, fields, count, &stats);
  gs_stager_destroy(&up); /* release the staging memory before the sort needs the GPU */
  e->times.read += stats.host_seconds;
  e->times.upload = stats.gpu_seconds;
  return rc;
}

/* Records the sort (and the gather), submits it and waits. The pass count decides which of
 * each pair of arrays the last pass writes, so that no copy is needed. */
static int sort_on_gpu(gs_sort_engine *e) {
  const gs_sort_request *r = e->request;
  gs_device *dev = &e->ctx->dev;
  const bool odd = e->passes % 2 == 1;
  const gs_range keys = gs_buffer_range(&e->keys), alt = gs_buffer_range(&e->alt);
  const gs_range values = gs_buffer_range(&e->values), values_alt = gs_buffer_range(&e->values_alt);
  gs_radix_sort_buffers b = {.keys = {keys, odd ? alt : keys, odd ? keys : alt},
                             .values = {values, odd ? values_alt : values, odd ? values : values_alt},
                             .state = gs_buffer_range(&e->state)};
  gs_radix_sort_run run = {.n = e->n,
                           .max_n = e->n,
                           .begin_bit = r->begin_bit,
                           .end_bit = r->end_bit,
                           .index_values = e->kind == GS_OUT_RECORDS || e->kind == GS_OUT_INDICES,
                           .corrupt = gs_knobs_get()->test_corrupt};
  e->sorted_keys = b.keys.out;
  e->sorted_values = b.values.out;
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  int rc;
  if ((rc = gs_submission_init(dev, &sub)) || (rc = gs_timestamps_create(dev, &ts, GS_RADIX_SORT_TIMESTAMPS + 2)) ||
      (rc = gs_submission_begin(dev, &sub)) || (rc = gs_radix_sort_record(e->sorter, sub.cb, &run, &b, &ts)))
    goto done;
  if (e->gpu_gather) {
    gs_timestamps_write(sub.cb, &ts, GS_RADIX_SORT_TIMESTAMPS);
    const gs_gather *g;
    if ((rc = gs_context_gather(e->ctx, &g)) ||
        (rc = gs_gather_record(g, sub.cb, e->sorted_values, gs_buffer_range(&e->gathered_in),
                               gs_buffer_range(&e->gathered_out), e->n, r->layout.record_bytes)))
      goto done;
    gs_timestamps_write(sub.cb, &ts, GS_RADIX_SORT_TIMESTAMPS + 1);
  }
  if ((rc = gs_submission_submit(dev, &sub, "the GPU sort")) || (rc = gs_submission_wait(dev, &sub, "the GPU sort")) ||
      (rc = gs_radix_sort_collect_times(e->sorter, &ts, e->passes, &e->times.gpu)))
    goto done;
  e->times.sort = e->times.gpu.total;
  if (e->gpu_gather) {
    uint64_t t[2];
    if ((rc = gs_timestamps_read(dev, &ts, GS_RADIX_SORT_TIMESTAMPS, 2, t))) goto done;
    e->times.gather = gs_timestamps_seconds(dev, t[0], t[1]);
  }
done:
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  return rc;
}

/* Verification of what the emits will produce: the input's multiset hash, or for argsort
 * a check that reads the input records by index. */
static int start_verification(gs_sort_engine *e) {
  const gs_sort_request *r = e->request;
  const gs_layout *L = &r->layout;
  const double t0 = gs_now();
  if (e->kind == GS_OUT_INDICES) {
    if (gs_argsort_check_init(&e->argsort, e->records, e->n, L->key, r->descending, L->record_bytes, L->key_offset,
                              r->begin_bit, r->end_bit) != 0)
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  } else {
    gs_multiset_hash_add(&e->input_hash, e->records, e->n * L->record_bytes, L->record_bytes);
  }
  e->times.verify += gs_now() - t0;
  return GPUSORT_OK;
}

int gs_sort_engine_run(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *r, const unsigned char *records,
                       uint64_t n) {
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->request = r;
  e->records = records;
  e->n = n;
  e->kind = output_kind(r);
  e->gpu_value_bytes = gpu_value_bytes(r);
  e->out_bytes = e->kind == GS_OUT_INDICES ? r->index_bytes : r->layout.record_bytes;
  const double start = gs_now();
  gs_radix_sort_config config = {.key = r->layout.key, .descending = r->descending, .value_bytes = e->gpu_value_bytes};
  int rc;
  if ((rc = gs_context_sorter(ctx, &config, &e->sorter)) ||
      (rc = gs_radix_sort_passes(e->sorter, r->begin_bit, r->end_bit, &e->passes)))
    return rc;
  e->gpu_gather = choose_gather(e);
  const uint64_t transfer_bytes = n * (r->layout.record_bytes + gs_key_info_of(r->layout.key)->bytes);
  if ((rc = gs_context_check_budget(ctx, sort_bytes(e) + staging_bytes(transfer_bytes), "the sort")) ||
      (rc = create_buffers(e)) || (rc = gs_stager_create(&ctx->dev, &e->down, GS_MEM_READBACK, transfer_bytes)))
    return rc;
  if (e->kind != GS_OUT_KEYS && !(e->scratch = malloc(SCRATCH_BYTES)))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  e->times.setup = gs_now() - start;
  if ((rc = upload(e))) return rc;
  if (r->verify && (rc = start_verification(e))) return rc;
  if (r->input_may_change && e->kind == GS_OUT_RECORDS && !e->gpu_gather) {
    /* host gathering reads the input by index while the output overwrites it: read a copy */
    if (!(e->records_copy = malloc(n * r->layout.record_bytes)))
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    gs_parallel_memcpy(e->records_copy, records, n * r->layout.record_bytes);
    e->records = e->records_copy;
  }
  return sort_on_gpu(e);
}

/* The bytes of `count` sorted output records, assembled from what the GPU returns. */
typedef struct {
  const gs_sort_engine *e;
  const void *const *fields; /* the downloaded chunk */
  size_t first;              /* of the piece within the chunk */
  int bad_index[64];         /* per worker: an index out of range was returned */
} assembly;

static void assemble_range(void *arg, size_t begin, size_t end, unsigned worker) {
  assembly *a = arg;
  const gs_sort_engine *e = a->e;
  const unsigned R = e->out_bytes;
  unsigned char *out = e->scratch;
  switch (e->kind) {
  case GS_OUT_PAIRS: {
    const unsigned kb = gs_key_info_of(e->request->layout.key)->bytes, vb = R - kb;
    const unsigned char *keys = (const unsigned char *)a->fields[0] + a->first * kb;
    const unsigned char *values = (const unsigned char *)a->fields[1] + a->first * vb;
    for (size_t i = begin; i < end; i++) {
      memcpy(out + i * R, keys + i * kb, kb);
      memcpy(out + i * R + kb, values + i * vb, vb);
    }
    break;
  }
  case GS_OUT_RECORDS: {
    const uint32_t *index = (const uint32_t *)a->fields[0] + a->first;
    for (size_t i = begin; i < end; i++) {
      if (index[i] >= e->n) { /* never trust the GPU with a read outside the input */
        a->bad_index[worker] = 1;
        return;
      }
      memcpy(out + i * R, e->records + (size_t)index[i] * R, R);
    }
    break;
  }
  case GS_OUT_INDICES: { /* u32 from the GPU, widened to u64 */
    const uint32_t *index = (const uint32_t *)a->fields[0] + a->first;
    for (size_t i = begin; i < end; i++) {
      uint64_t wide = index[i];
      memcpy(out + i * 8, &wide, 8);
    }
    break;
  }
  case GS_OUT_KEYS: break;
  }
}

typedef struct {
  gs_sort_engine *e;
  gs_bytes_sink sink;
  void *sink_ctx;
} emission;

static int hand_out(emission *m, const void *data, size_t count) {
  gs_sort_engine *e = m->e;
  const size_t bytes = count * e->out_bytes;
  if (e->checking) {
    const double t = gs_now();
    if (e->kind == GS_OUT_INDICES) {
      gs_argsort_check_feed(&e->argsort, data, count, e->out_bytes);
    } else {
      gs_order_check_feed(&e->order, data, bytes);
      gs_multiset_hash_add(&e->output_hash, data, bytes, e->out_bytes);
    }
    e->times.verify += gs_now() - t;
  }
  return m->sink ? m->sink(m->sink_ctx, data, bytes) : GPUSORT_OK;
}

static int sink_chunk(void *ctx, const void *const *fields, size_t count) {
  emission *m = ctx;
  gs_sort_engine *e = m->e;
  if (e->kind == GS_OUT_KEYS || e->gpu_gather || (e->kind == GS_OUT_INDICES && e->out_bytes == 4))
    return hand_out(m, fields[0], count);
  const size_t piece = SCRATCH_BYTES / e->out_bytes;
  for (size_t first = 0; first < count; first += piece) {
    const size_t n = count - first < piece ? count - first : piece;
    assembly a = {.e = e, .fields = fields, .first = first};
    const double t0 = gs_now();
    gs_parallel_for(n, 1 << 14, assemble_range, &a);
    e->times.assemble += gs_now() - t0;
    for (int w = 0; w < 64; w++)
      if (a.bad_index[w])
        return gs_fail(GPUSORT_ERROR_VERIFY, "the GPU returned a record index past the %llu records",
                       (unsigned long long)e->n);
    int rc = hand_out(m, e->scratch, n);
    if (rc) return rc;
  }
  return GPUSORT_OK;
}

int gs_sort_engine_emit(gs_sort_engine *e, bool verify, gs_bytes_sink sink, void *sink_ctx) {
  const gs_sort_request *r = e->request;
  const gs_layout *L = &r->layout;
  e->checking = verify;
  if (verify && e->kind != GS_OUT_INDICES) {
    gs_order_check_init(&e->order, L->key, r->descending, L->record_bytes, L->key_offset, r->begin_bit, r->end_bit);
    memset(&e->output_hash, 0, sizeof e->output_hash);
  }
  const unsigned kb = gs_key_info_of(L->key)->bytes;
  gs_field fields[2] = {{e->sorted_keys, 0, kb}};
  unsigned count = 1;
  if (e->kind == GS_OUT_PAIRS) fields[count++] = (gs_field){e->sorted_values, 0, e->gpu_value_bytes};
  if (e->kind == GS_OUT_RECORDS || e->kind == GS_OUT_INDICES) fields[0] = (gs_field){e->sorted_values, 0, 4};
  if (e->gpu_gather) fields[0] = (gs_field){gs_buffer_range(&e->gathered_out), 0, L->record_bytes};
  emission m = {e, sink, sink_ctx};
  gs_transfer_stats stats = {0};
  const double verify_before = e->times.verify;
  int rc = gs_download_fields(&e->down, fields, count, e->n, sink_chunk, &m, &stats);
  e->times.download += stats.gpu_seconds;
  /* host time of the download not spent verifying: assembling, writing, hashing */
  e->times.write += stats.host_seconds - (e->times.verify - verify_before);
  return rc;
}

int gs_sort_engine_verdict(gs_sort_engine *e) {
  if (e->kind == GS_OUT_INDICES) {
    if (!gs_argsort_check_done(&e->argsort))
      return gs_fail(GPUSORT_ERROR_VERIFY, "verification failed: %s", e->argsort.detail);
    return GPUSORT_OK;
  }
  if (!e->order.sorted)
    return gs_fail(GPUSORT_ERROR_VERIFY, "verification failed: the output is not sorted at record %llu (%s)",
                   (unsigned long long)e->order.first_bad, e->order.detail);
  if (!gs_multiset_hash_equal(&e->input_hash, &e->output_hash))
    return gs_fail(GPUSORT_ERROR_VERIFY,
                   "verification failed: the output is not a permutation of the input (checksums differ)");
  return GPUSORT_OK;
}

void gs_sort_engine_free(gs_sort_engine *e) {
  if (!e->ctx) return;
  gs_device *dev = &e->ctx->dev;
  gs_stager_destroy(&e->down);
  gs_buffer_destroy(dev, &e->keys);
  gs_buffer_destroy(dev, &e->alt);
  gs_buffer_destroy(dev, &e->values);
  gs_buffer_destroy(dev, &e->values_alt);
  gs_buffer_destroy(dev, &e->state);
  gs_buffer_destroy(dev, &e->gathered_in);
  gs_buffer_destroy(dev, &e->gathered_out);
  gs_argsort_check_free(&e->argsort);
  free(e->scratch);
  free(e->records_copy);
  memset(e, 0, sizeof *e);
}
