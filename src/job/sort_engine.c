#include "job/sort_engine.h"

#include "job/normalized_sort.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/knobs.h"
#include "util/parallel.h"
#include "util/trace.h"

enum { SCRATCH_BYTES = 32 << 20 };

static gs_output_kind output_kind(const gs_sort_request *r) {
  if (r->argsort) return GS_OUT_INDICES;
  if (r->layout.keyed) return GS_OUT_RECORDS; /* put in order on the host, by index */
  switch (r->layout.kind) {
  case GS_LAYOUT_PAIRS: return r->values_only ? GS_OUT_VALUES : GS_OUT_PAIRS;
  case GS_LAYOUT_RECORDS: return GS_OUT_RECORDS;
  default: return GS_OUT_KEYS;
  }
}

/* The GPU sorts keys alone, keys with their values, or keys with their input indices. */
static unsigned gpu_value_bytes(const gs_sort_request *r) {
  switch (output_kind(r)) {
  case GS_OUT_PAIRS:
  case GS_OUT_VALUES: return gs_key_info_of(r->layout.value)->bytes;
  case GS_OUT_RECORDS:
  case GS_OUT_INDICES: return 4;
  default: return 0;
  }
}

static unsigned output_bytes(const gs_sort_request *r) {
  if (r->then == GS_THEN_RLE) return gs_key_info_of(r->layout.key)->bytes + r->count_bytes;
  switch (output_kind(r)) {
  case GS_OUT_INDICES: return r->index_bytes ? r->index_bytes : 8;
  case GS_OUT_VALUES: return gs_key_info_of(r->layout.value)->bytes;
  default: return r->layout.record_bytes;
  }
}

unsigned gs_sort_engine_output_bytes(const gs_sort_request *r) { return output_bytes(r); }

int gs_sort_request_check_bits(gs_sort_request *r) {
  if (!r->begin_bit && !r->end_bit) return GPUSORT_OK;
  const gs_layout *L = &r->layout;
  const unsigned bits = L->keyed ? L->spec.bytes * 8 : gs_key_info_of(L->key)->bytes * 8;
  if (!(r->begin_bit < r->end_bit && r->end_bit <= bits)) {
    if (L->keyed)
      return gs_fail(GPUSORT_ERROR_USAGE, "bit range %u:%u is empty or does not fit the %u bits of %s keys' normalized form",
                     r->begin_bit, r->end_bit, bits, L->key_name);
    return gs_fail(GPUSORT_ERROR_USAGE, "bit range %u:%u is empty or does not fit %u-bit keys", r->begin_bit,
                   r->end_bit, bits);
  }
  if (L->keyed) gs_key_spec_set_bits(&r->layout.spec, r->begin_bit, r->end_bit); /* the forms are cut to it */
  return GPUSORT_OK;
}

int gs_sort_then_check(const gs_sort_request *r) {
  if (r->then == GS_THEN_NONE) return GPUSORT_OK;
  const char *name = r->then == GS_THEN_RLE ? "rle" : "unique";
  if (r->layout.keyed)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s after a sort takes keys of the types u32, i32, f32, u64, i64 and f64, not %s",
                   name, r->layout.key_name);
  if (r->begin_bit || r->end_bit)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s after a sort compares whole keys: it does not go with a bit range", name);
  if (r->verify)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s after a sort cannot be verified (verification checks a permutation of the "
                   "input): verify the sort, then run the step on its output", name);
  if (r->argsort) return gs_fail(GPUSORT_ERROR_USAGE, "%s after a sort does not go with argsort", name);
  if (r->then == GS_THEN_RLE && (r->layout.kind != GS_LAYOUT_KEYS || r->values_only))
    return gs_fail(GPUSORT_ERROR_USAGE, "rle after a sort writes (key, count) records: it takes keys alone");
  if (r->then == GS_THEN_RLE && r->count_bytes != 4 && r->count_bytes != 8)
    return gs_fail(GPUSORT_ERROR_USAGE, "rle counts are u32 or u64");
  return GPUSORT_OK;
}

/* The step after the sort, as the look-back family runs it. */
static gs_compact_config then_config(const gs_sort_request *r) {
  if (r->then == GS_THEN_RLE)
    return (gs_compact_config){.mode = GS_COMPACT_REDUCE_BY_KEY, .key = r->layout.key, .value = GS_KEY_U32,
                               .acc = r->count_bytes == 8 ? GS_KEY_U64 : GS_KEY_U32, .op = GS_SCAN_SUM,
                               .count_runs = true};
  return (gs_compact_config){.mode = GS_COMPACT_UNIQUE, .key = r->layout.key};
}

uint64_t gs_sort_engine_max_records(gs_context *ctx, const gs_sort_request *r) {
  if (r->layout.keyed) return gs_normalized_sort_max_records(ctx, r->algo);
  uint64_t radix = gs_radix_sort_max_keys(&ctx->dev, r->layout.key, gpu_value_bytes(r), true);
  if (r->then != GS_THEN_NONE) {
    const gs_compact_config then = then_config(r);
    const uint64_t step = gs_compact_max_elements(&ctx->dev, &then);
    if (step < radix) radix = step;
  }
  return r->algo == GS_SORT_BITONIC && gs_bitonic_sort_max_keys() < radix ? gs_bitonic_sort_max_keys() : radix;
}

/* The sorter for a request of up to n records. */
static gs_radix_sort_config sorter_config(const gs_context *ctx, const gs_sort_request *r, uint64_t n) {
  return (gs_radix_sort_config){.key = r->layout.key,
                                .descending = r->descending,
                                .value_bytes = gpu_value_bytes(r),
                                .algo = gs_sort_algo_for(&ctx->config, r->algo, n)};
}

/* Device memory of the sort itself: keys and values twice, and the state block. The state
 * block's look-back rows are estimated from a tile of 256 keys at the least (the largest
 * count of rows any preset's tile gives). */
static uint64_t sort_bytes(const gs_sort_request *r, uint64_t n, const gs_radix_sort *sorter) {
  const unsigned kb = gs_key_info_of(r->layout.key)->bytes, vb = gpu_value_bytes(r);
  const uint64_t state = sorter ? gs_radix_sort_state_bytes(sorter, n) : gs_radix_sort_state_bound(n);
  return 2 * n * (kb + vb) + state;
}

static uint64_t transfer_up_bytes(const gs_sort_request *r, uint64_t n, bool gpu_gather) {
  const unsigned kb = gs_key_info_of(r->layout.key)->bytes;
  const gs_output_kind kind = output_kind(r);
  if (gpu_gather || r->layout.record_bytes == kb) return n * r->layout.record_bytes;
  return n * (kb + (kind == GS_OUT_PAIRS || kind == GS_OUT_VALUES ? gpu_value_bytes(r) : 0));
}

static uint64_t transfer_down_bytes(const gs_sort_request *r, uint64_t n, bool gpu_gather) {
  const unsigned kb = gs_key_info_of(r->layout.key)->bytes;
  if (gpu_gather) return n * r->layout.record_bytes;
  if (r->then == GS_THEN_RLE) return n * output_bytes(r);
  return n * (output_kind(r) == GS_OUT_PAIRS ? kb + gpu_value_bytes(r) : output_kind(r) == GS_OUT_KEYS ? kb : gpu_value_bytes(r));
}

static uint64_t engine_bytes(const gs_context *ctx, const gs_sort_request *r, uint64_t n, bool gpu_gather,
                             const gs_radix_sort *sorter) {
  const size_t slot = gs_context_staging_slot(ctx);
  const uint64_t up = transfer_up_bytes(r, n, gpu_gather), down = transfer_down_bytes(r, n, gpu_gather);
  uint64_t bytes = sort_bytes(r, n, sorter) + gs_stager_bytes(up > down ? up : down, slot);
  if (gpu_gather) bytes += 2 * n * r->layout.record_bytes;
  if (r->then != GS_THEN_NONE) /* the step's state: two halves of 24 bytes a tile of 64 keys or more */
    bytes += 1024 + 2 * (n / 64 + 2) * 24;
  if (r->then == GS_THEN_RLE) bytes += n * r->count_bytes;
  return bytes;
}

/* Where records are put in order. Measured on an H100 for 1 GiB of records: the GPU path
 * (records up, gather, records down) took 60-64 ms against 140-150 ms of host gathering for
 * 16-byte records, and 63 ms against 50 ms for 100-byte ones: host gathering costs per record,
 * the GPU path per byte. Records of up to 64 bytes (and a multiple of 4) that fit beside the
 * sort within the budget go to the GPU. GPUSORT_RECORD_GATHER=host or =gpu decides, for tests. */
static bool choose_gather(const gs_context *ctx, const gs_sort_request *r, uint64_t capacity,
                          const gs_radix_sort *sorter) {
  const gs_gather_choice knob = gs_knobs_get()->record_gather;
  const unsigned R = r->layout.record_bytes;
  if (output_kind(r) != GS_OUT_RECORDS || r->then != GS_THEN_NONE || knob == GS_GATHER_HOST || R % 4 != 0 ||
      !gs_gather_fits(&ctx->dev, capacity, R))
    return false;
  return (R <= 64 || knob == GS_GATHER_GPU) && engine_bytes(ctx, r, capacity, true, sorter) <= ctx->budget;
}

/* The sorter a request runs with (its tile sizes the state block); NULL if it cannot be built. */
static gs_radix_sort *sorter_of(gs_context *ctx, const gs_sort_request *r, uint64_t n) {
  const gs_radix_sort_config config = sorter_config(ctx, r, n);
  gs_radix_sort *sorter;
  return gs_context_sorter(ctx, &config, &sorter) == GPUSORT_OK ? sorter : NULL;
}

uint64_t gs_sort_engine_bytes(gs_context *ctx, const gs_sort_request *r, uint64_t capacity) {
  if (r->layout.keyed) return gs_normalized_sort_bytes(ctx, &r->layout, r->algo, capacity);
  const gs_radix_sort *sorter = sorter_of(ctx, r, capacity);
  return engine_bytes(ctx, r, capacity, choose_gather(ctx, r, capacity, sorter), sorter);
}

uint64_t gs_sort_engine_capacity(gs_context *ctx, const gs_sort_request *r, uint64_t budget) {
  /* (keyed: its own; capacities past any bitonic crossover) */
  const gs_radix_sort *sorter = r->layout.keyed ? NULL : sorter_of(ctx, r, UINT64_MAX);
  uint64_t lo = 0, hi = gs_sort_engine_max_records(ctx, r);
  while (lo < hi) { /* the largest capacity whose memory fits */
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if ((r->layout.keyed ? gs_normalized_sort_bytes(ctx, &r->layout, r->algo, mid) : engine_bytes(ctx, r, mid, false, sorter)) <=
        budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* What the upload fills: keys (or the records they are extracted from), pair values, and the
 * staging slots. */
static int create_upload_buffers(gs_sort_engine *e) {
  gs_device *dev = &e->ctx->dev;
  const unsigned kb = e->key_bytes, vb = e->gpu_value_bytes;
  const unsigned R = e->request->layout.record_bytes;
  const uint64_t n = e->capacity ? e->capacity : 1;
  const size_t slot = gs_context_staging_slot(e->ctx);
  const bool uploaded_values = e->kind == GS_OUT_PAIRS || e->kind == GS_OUT_VALUES;
  int rc;
  if ((rc = gs_buffer_create(dev, &e->keys, n * kb, GS_MEM_DEVICE, "the sort keys")) ||
      (uploaded_values && (rc = gs_buffer_create(dev, &e->values, n * vb, GS_MEM_DEVICE, "the sort values"))) ||
      (e->gpu_gather && (rc = gs_buffer_create(dev, &e->gathered_in, n * R, GS_MEM_DEVICE, "the records"))))
    return rc;
  const uint64_t up = transfer_up_bytes(e->request, n, e->gpu_gather), down = transfer_down_bytes(e->request, n, e->gpu_gather);
  if ((rc = gs_stager_create_sized(dev, &e->staging, GS_MEM_READBACK, up > down ? up : down, slot))) return rc;
  e->staging.progress = gs_progress_count;
  e->staging.progress_ctx = e->ctx;
  return GPUSORT_OK;
}

/* What only the sort uses: the second arrays, generated values and the state block. Made on
 * another thread while the upload runs (device memory takes about 30 ms per GiB to allocate on
 * an H100: half a second for the second array of 16 GiB of keys). */
static void *create_work_buffers(void *arg) {
  gs_sort_engine *e = arg;
  gs_device *dev = &e->ctx->dev;
  const unsigned kb = e->key_bytes, vb = e->gpu_value_bytes;
  const unsigned R = e->request->layout.record_bytes;
  const uint64_t n = e->capacity ? e->capacity : 1;
  const bool uploaded_values = e->kind == GS_OUT_PAIRS || e->kind == GS_OUT_VALUES;
  int rc;
  if ((rc = gs_buffer_create(dev, &e->alt, n * kb, GS_MEM_DEVICE, "the sort's second key buffer")) ||
      (rc = gs_buffer_create(dev, &e->state, gs_radix_sort_state_bytes(e->sorter, n), GS_MEM_DEVICE,
                             "the sort's histograms and look-back descriptors")) ||
      (vb && !uploaded_values && (rc = gs_buffer_create(dev, &e->values, n * vb, GS_MEM_DEVICE, "the sort values"))) ||
      (vb && (rc = gs_buffer_create(dev, &e->values_alt, n * vb, GS_MEM_DEVICE, "the sort's second value buffer"))) ||
      (e->gpu_gather && (rc = gs_buffer_create(dev, &e->gathered_out, n * R, GS_MEM_DEVICE, "the gathered records"))) ||
      (e->then && (rc = gs_buffer_create(dev, &e->then_state, gs_compact_state_bytes(e->then, n), GS_MEM_DEVICE,
                                         "the look-back descriptors after the sort"))) ||
      (e->request->then == GS_THEN_RLE &&
       (rc = gs_buffer_create(dev, &e->counts, n * e->request->count_bytes, GS_MEM_DEVICE, "the run lengths"))))
    snprintf(e->allocation_error, sizeof e->allocation_error, "%s", gs_last_error()); /* errors are per thread */
  e->allocation_status = rc;
  return NULL;
}

static void join_allocation(gs_sort_engine *e) {
  if (!e->allocating) return;
  pthread_join(e->allocation_thread, NULL);
  e->allocating = false;
}

/* Waits for create_work_buffers; its failure becomes this thread's. */
static int finish_allocation(gs_sort_engine *e) {
  join_allocation(e);
  return e->allocation_status ? gs_fail(e->allocation_status, "%s", e->allocation_error) : GPUSORT_OK;
}

static int create_buffers(gs_sort_engine *e) {
  int rc = create_upload_buffers(e);
  if (rc) return rc;
  e->allocating = pthread_create(&e->allocation_thread, NULL, create_work_buffers, e) == 0;
  if (!e->allocating) create_work_buffers(e); /* no thread to be had: here, now */
  return GPUSORT_OK;
}

int gs_sort_engine_init(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *r, uint64_t capacity) {
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->request = r;
  e->kind = output_kind(r);
  e->key_bytes = gs_key_info_of(r->layout.key)->bytes;
  e->gpu_value_bytes = gpu_value_bytes(r);
  e->out_bytes = output_bytes(r);
  e->emit_kind = r->then == GS_THEN_RLE ? GS_OUT_PAIRS : e->kind;
  e->capacity = capacity;
  const double start = gs_now();
  int rc;
  if (r->layout.keyed) { /* (a bit range is in the key spec: gs_sort_request_check_bits) */
    if (!(e->normalized = calloc(1, sizeof *e->normalized)) || !(e->scratch = malloc(SCRATCH_BYTES)))
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    rc = gs_normalized_sort_init(e->normalized, ctx, &r->layout, r->descending, r->algo, capacity, r->forms);
    e->times.setup += gs_now() - start;
    return rc;
  }
  const gs_radix_sort_config config = sorter_config(ctx, r, capacity);
  const gs_compact_config then = then_config(r);
  gs_radix_sort *sorter;
  if ((rc = gs_sort_then_check(r)) || (r->then && (rc = gs_context_compact(ctx, &then, &e->then))) ||
      (rc = gs_context_sorter(ctx, &config, &sorter)) ||
      (rc = gs_radix_sort_passes(sorter, r->begin_bit, r->end_bit, &e->passes)))
    return rc;
  e->sorter = sorter;
  if ((rc = gs_sort_pacing_init(&e->pacing, ctx, sorter, &e->submitter, capacity))) return rc;
  if (capacity > e->pacing.segment_keys && capacity > (1ull << 32))
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "a sort takes at most 2^32 records");
  e->gpu_gather = choose_gather(ctx, r, capacity, sorter);
  gs_trace("sort engine: pipelines ready");
  if ((rc = gs_context_check_budget(ctx, engine_bytes(ctx, r, capacity, e->gpu_gather, sorter), "the sort")) ||
      (rc = create_buffers(e)) || (rc = gs_submitter_init(&ctx->dev, &e->submitter, "the GPU sort")))
    return rc;
  gs_trace("sort engine: input and staging buffers ready");
  if (e->emit_kind != GS_OUT_KEYS && !(e->scratch = malloc(SCRATCH_BYTES)))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  e->times.setup += gs_now() - start;
  return GPUSORT_OK;
}

/* Uploads the batch: the key field of every record and the value field of pairs, or whole
 * records (keys alone, and records gathered on the GPU, whose keys the GPU extracts). */
static int upload(gs_sort_engine *e) {
  const gs_layout *L = &e->request->layout;
  const unsigned kb = e->key_bytes, R = L->record_bytes;
  gs_transfer_stats stats = {0};
  int rc;
  if (e->gpu_gather || R == kb) {
    const gs_range dst = gs_buffer_range(e->gpu_gather ? &e->gathered_in : &e->keys);
    if (e->source.fd >= 0)
      rc = gs_upload_file(&e->staging, dst, e->source.fd, e->source.offset, e->n * R, e->source.name, &stats);
    else
      rc = gs_upload(&e->staging, dst, e->records, e->n * R, &stats);
  } else {
    gs_field fields[2] = {{gs_buffer_range(&e->keys), L->key_offset, kb}};
    unsigned count = 1;
    if (e->kind == GS_OUT_PAIRS || e->kind == GS_OUT_VALUES)
      fields[count++] = (gs_field){gs_buffer_range(&e->values), L->value_offset, e->gpu_value_bytes};
    rc = gs_upload_fields(&e->staging, e->records, e->n, R, fields, count, &stats);
  }
  e->times.read += stats.host_seconds;
  e->times.upload += stats.gpu_seconds;
  return rc;
}

static gs_range other_of(const gs_buffer *a, const gs_buffer *b, gs_range used) {
  return gs_buffer_range(used.buffer == a->buffer ? b : a);
}

/* Records the step after the sort: the sorted arrays in, the other array of each pair out (the
 * first keys of runs and the values or record indices they carry, or rle's keys and counts). */
static int record_then(gs_sort_engine *e, VkCommandBuffer cb, gs_timestamps *ts) {
  const gs_range keys_out = other_of(&e->keys, &e->alt, e->sorted_keys);
  const bool carries = e->kind != GS_OUT_KEYS;
  const gs_range carried = carries ? other_of(&e->values, &e->values_alt, e->sorted_values) : (gs_range){0};
  const gs_compact_run run = {.keys_in = e->sorted_keys,
                              .values_in = carries ? e->sorted_values : (gs_range){0},
                              .keys_out = e->kind == GS_OUT_KEYS || e->kind == GS_OUT_PAIRS ? keys_out : (gs_range){0},
                              .indices_out = carries ? carried : (gs_range){0},
                              .carry_words = carries ? e->gpu_value_bytes / 4 : 0,
                              .values_out = e->request->then == GS_THEN_RLE ? gs_buffer_range(&e->counts) : (gs_range){0},
                              .state = gs_buffer_range(&e->then_state),
                              .rest = &e->then_rest};
  int rc = gs_compact_record(e->then, cb, e->n, &run, ts);
  e->sorted_keys = keys_out;
  if (carries) e->sorted_values = carried;
  if (e->request->then == GS_THEN_RLE) e->sorted_values = gs_buffer_range(&e->counts);
  return rc;
}

static int take_u32(void *ctx, const void *data, size_t bytes) {
  if (bytes >= 4) memcpy(ctx, data, 4);
  return GPUSORT_OK;
}

/* The number of records the step kept, from its state block. */
static int read_then_count(gs_sort_engine *e) {
  uint32_t kept = 0;
  gs_transfer_stats stats = {0};
  const int rc = gs_download(&e->staging, gs_subrange(gs_buffer_range(&e->then_state), GS_COMPACT_TOTAL_OFFSET, 4),
                             4, take_u32, &kept, &stats);
  if (rc) return rc;
  if (kept > e->n || (e->n && !kept))
    return gs_fail(GPUSORT_ERROR_VERIFY, "the GPU kept %u of %llu sorted records", kept, (unsigned long long)e->n);
  e->emitted = kept;
  return GPUSORT_OK;
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
                           .max_n = e->capacity,
                           .begin_bit = r->begin_bit,
                           .end_bit = r->end_bit,
                           .index_values = e->kind == GS_OUT_RECORDS || e->kind == GS_OUT_INDICES,
                           .corrupt = gs_knobs_get()->test_corrupt,
                           .segment_keys = e->pacing.segment_keys,
                           .flush = e->pacing.flushing ? gs_sort_pacing_flush : NULL,
                           .flush_ctx = &e->pacing,
                           .rest = &e->rest};
  e->sorted_keys = b.keys.out;
  e->sorted_values = b.values.out;
  e->pacing.since_flush = 0;
  gs_timestamps ts = {0};
  int rc;
  if ((rc = gs_timestamps_create(dev, &ts, GS_RADIX_SORT_TIMESTAMPS + 2)) ||
      (rc = gs_submitter_begin(dev, &e->submitter)))
    goto done;
  if (e->gpu_gather) { /* the keys of the uploaded records */
    const gs_gather *g;
    if ((rc = gs_context_gather(e->ctx, &g)) ||
        (rc = gs_extract_keys_record(g, gs_submitter_cb(&e->submitter), gs_buffer_range(&e->gathered_in), keys, e->n,
                                     r->layout.record_bytes, r->layout.key_offset, e->key_bytes)))
      goto done;
  }
  if ((rc = gs_radix_sort_record(e->sorter, gs_submitter_cb(&e->submitter), &run, &b, &ts))) goto done;
  if (e->then) {
    VkCommandBuffer cb = gs_submitter_cb(&e->submitter);
    gs_timestamps_write(cb, &ts, GS_RADIX_SORT_TIMESTAMPS);
    if ((rc = record_then(e, cb, NULL))) goto done;
    gs_timestamps_write(cb, &ts, GS_RADIX_SORT_TIMESTAMPS + 1);
  }
  if (e->gpu_gather) {
    VkCommandBuffer cb = gs_submitter_cb(&e->submitter);
    gs_timestamps_write(cb, &ts, GS_RADIX_SORT_TIMESTAMPS);
    const gs_gather *g;
    if ((rc = gs_context_gather(e->ctx, &g)) ||
        (rc = gs_gather_record(g, cb, e->sorted_values, gs_buffer_range(&e->gathered_in),
                               gs_buffer_range(&e->gathered_out), e->n, r->layout.record_bytes)))
      goto done;
    gs_timestamps_write(cb, &ts, GS_RADIX_SORT_TIMESTAMPS + 1);
  }
  if ((rc = gs_submitter_finish(dev, &e->submitter)) ||
      (rc = gs_radix_sort_collect_times(e->sorter, &ts, e->passes, &e->times.gpu)))
    goto done;
  e->times.sort += e->times.gpu.total;
  if (e->gpu_gather || e->then) {
    uint64_t t[2];
    if ((rc = gs_timestamps_read(dev, &ts, GS_RADIX_SORT_TIMESTAMPS, 2, t))) goto done;
    *(e->then ? &e->times.then : &e->times.gather) += gs_timestamps_seconds(dev, t[0], t[1]);
  }
  e->emitted = e->n;
  if (e->then) rc = read_then_count(e);
done:
  if (rc) { /* (the sort or the step may not have run to its end) */
    e->rest = (gs_radix_sort_rest){0};
    e->then_rest = (gs_compact_rest){0};
  }
  gs_timestamps_destroy(dev, &ts);
  return rc;
}

/* Verification of what the emits will produce: the input's multiset hash, or for argsort
 * a check that reads the input records by index. */
static int start_verification(gs_sort_engine *e) {
  const gs_sort_request *r = e->request;
  const gs_layout *L = &r->layout;
  const double t0 = gs_now();
  gs_argsort_check_free(&e->argsort);
  memset(&e->input_hash, 0, sizeof e->input_hash);
  if (e->kind == GS_OUT_INDICES) {
    if (gs_argsort_check_init(&e->argsort, e->records, e->n, L, r->descending, r->begin_bit, r->end_bit) != 0)
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  } else {
    gs_multiset_hash_add(&e->input_hash, e->records, e->n * L->record_bytes, L->record_bytes);
  }
  e->times.verify += gs_now() - t0;
  return GPUSORT_OK;
}

/* Keyed layouts: the records' order from their normalized forms, on the host's side of the
 * engine (the records stay in host memory and are put in order there). */
static int sort_normalized(gs_sort_engine *e) {
  gs_normalized_sort *s = e->normalized;
  int rc = gs_normalized_sort_run(s, e->records, e->n, e->request->forms);
  /* (its setup is timed with the engine's) */
  e->times.read += s->normalize_seconds + s->upload_host_seconds;
  e->times.upload += s->upload_seconds;
  e->times.sort += s->sort_seconds;
  e->times.download += s->download_seconds + s->download_host_seconds;
  e->times.gpu = s->gpu;
  e->passes = s->passes;
  s->setup_seconds = s->normalize_seconds = s->upload_host_seconds = s->upload_seconds = s->sort_seconds = 0;
  s->download_seconds = s->download_host_seconds = 0;
  return rc;
}

int gs_sort_engine_sort(gs_sort_engine *e, const gs_record_source *source, uint64_t n) {
  const gs_sort_request *r = e->request;
  if (n > e->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a batch beyond the sort's capacity");
  e->source = *source;
  e->records = source->data;
  e->n = e->emitted = n;
  free(e->records_copy);
  e->records_copy = NULL;
  int rc;
  if (!e->normalized) { /* (keyed layouts upload their normalized forms as they sort) */
    gs_trace("uploading %llu records", (unsigned long long)n);
    const int uploaded = upload(e);
    const double upload_end = gs_now();
    gs_trace("uploaded");
    if ((rc = finish_allocation(e)) || (rc = uploaded)) return rc;
    gs_trace("work buffers allocated");
    e->times.setup += gs_now() - upload_end; /* the allocation outlasting the upload */
  }
  if (r->verify && e->kind != GS_OUT_VALUES && (rc = start_verification(e))) return rc;
  if (r->input_may_change && e->kind == GS_OUT_RECORDS && !e->gpu_gather) {
    /* host gathering reads the input by index while the output overwrites it: read a copy */
    if (!(e->records_copy = malloc(n * r->layout.record_bytes)))
      return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    gs_parallel_memcpy(e->records_copy, e->records, n * r->layout.record_bytes);
    e->records = e->records_copy;
  }
  rc = e->normalized ? sort_normalized(e) : sort_on_gpu(e);
  gs_trace("sorted");
  return rc;
}

int gs_sort_engine_run(gs_sort_engine *e, gs_context *ctx, const gs_sort_request *r, const unsigned char *records,
                       uint64_t n) {
  int rc = gs_sort_engine_init(e, ctx, r, n);
  gs_record_source source = {.data = records, .fd = -1};
  return rc ? rc : gs_sort_engine_sort(e, &source, n);
}

/* The bytes of `count` sorted output records, assembled from what the GPU returns. */
typedef struct {
  const gs_sort_engine *e;
  const void *const *fields; /* the downloaded chunk */
  size_t first;              /* of the piece within the chunk */
  unsigned char *out;        /* where the piece's output records go */
  int bad_index[64];         /* per worker: an index out of range was returned */
} assembly;

static void assemble_range(void *arg, size_t begin, size_t end, unsigned worker) {
  assembly *a = arg;
  const gs_sort_engine *e = a->e;
  const unsigned R = e->out_bytes;
  unsigned char *out = a->out;
  switch (e->emit_kind) {
  case GS_OUT_PAIRS: {
    const unsigned kb = e->key_bytes, vb = R - kb;
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
  case GS_OUT_KEYS:
  case GS_OUT_VALUES: break;
  }
}

typedef struct {
  gs_sort_engine *e;
  gs_bytes_sink sink;
  gs_bytes_place place;
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
  if (e->emit_kind == GS_OUT_KEYS || e->emit_kind == GS_OUT_VALUES || e->gpu_gather ||
      (e->emit_kind == GS_OUT_INDICES && e->out_bytes == 4))
    return hand_out(m, fields[0], count);
  const size_t piece = SCRATCH_BYTES / e->out_bytes;
  for (size_t first = 0; first < count; first += piece) {
    const size_t n = count - first < piece ? count - first : piece;
    unsigned char *out = m->sink && m->place ? m->place(m->sink_ctx, n * e->out_bytes) : NULL;
    assembly a = {.e = e, .fields = fields, .first = first, .out = out ? out : e->scratch};
    const double t0 = gs_now();
    gs_parallel_for(n, 1 << 14, assemble_range, &a);
    e->times.assemble += gs_now() - t0;
    for (int w = 0; w < 64; w++)
      if (a.bad_index[w])
        return gs_fail(GPUSORT_ERROR_VERIFY, "the GPU returned a record index past the %llu records",
                       (unsigned long long)e->n);
    int rc = hand_out(m, a.out, n);
    if (rc) return rc;
  }
  return GPUSORT_OK;
}

int gs_sort_engine_emit(gs_sort_engine *e, bool verify, gs_bytes_sink sink, void *sink_ctx) {
  return gs_sort_engine_emit_placed(e, verify, sink, NULL, sink_ctx);
}

int gs_sort_engine_emit_placed(gs_sort_engine *e, bool verify, gs_bytes_sink sink, gs_bytes_place place,
                               void *sink_ctx) {
  const gs_sort_request *r = e->request;
  const gs_layout *L = &r->layout;
  e->checking = verify && e->kind != GS_OUT_VALUES;
  if (e->checking && e->kind != GS_OUT_INDICES) {
    gs_order_check_init_layout(&e->order, L, r->descending, r->begin_bit, r->end_bit);
    memset(&e->output_hash, 0, sizeof e->output_hash);
  }
  gs_field fields[2] = {{e->sorted_keys, 0, e->key_bytes}};
  unsigned count = 1;
  if (e->kind == GS_OUT_PAIRS) fields[count++] = (gs_field){e->sorted_values, 0, e->gpu_value_bytes};
  if (r->then == GS_THEN_RLE) fields[count++] = (gs_field){e->sorted_values, 0, r->count_bytes};
  if (e->kind == GS_OUT_RECORDS || e->kind == GS_OUT_INDICES) fields[0] = (gs_field){e->sorted_values, 0, 4};
  if (e->kind == GS_OUT_VALUES) fields[0] = (gs_field){e->sorted_values, 0, e->gpu_value_bytes};
  if (e->gpu_gather) fields[0] = (gs_field){gs_buffer_range(&e->gathered_out), 0, L->record_bytes};
  emission m = {e, sink, place, sink_ctx};
  if (e->normalized) { /* the order is in host memory */
    const double t0 = gs_now(), assemble_before = e->times.assemble, verify_before = e->times.verify;
    const size_t chunk = SCRATCH_BYTES / 4;
    int rc = GPUSORT_OK;
    for (uint64_t first = 0; first < e->n && !rc; first += chunk) {
      const void *fields[1] = {e->normalized->order_host + first};
      rc = sink_chunk(&m, fields, e->n - first < chunk ? e->n - first : chunk);
    }
    e->times.write += gs_now() - t0 - (e->times.verify - verify_before) - (e->times.assemble - assemble_before);
    return rc;
  }
  gs_transfer_stats stats = {0};
  const double verify_before = e->times.verify, assemble_before = e->times.assemble;
  gs_trace("downloading");
  int rc = gs_download_fields(&e->staging, fields, count, e->emitted, sink_chunk, &m, &stats);
  gs_trace("downloaded");
  e->times.download += stats.gpu_seconds;
  /* host time of the download not spent verifying or assembling: writing and hashing */
  e->times.write += stats.host_seconds - (e->times.verify - verify_before) - (e->times.assemble - assemble_before);
  return rc;
}

int gs_sort_engine_verdict(gs_sort_engine *e) {
  if (e->kind == GS_OUT_VALUES) return GPUSORT_OK;
  return gs_verify_verdict(e->kind == GS_OUT_INDICES ? &e->argsort : NULL, &e->order, &e->input_hash,
                           &e->output_hash);
}

void gs_sort_engine_free(gs_sort_engine *e) {
  if (!e->ctx) return;
  gs_device *dev = &e->ctx->dev;
  if (e->normalized) {
    gs_normalized_sort_free(e->normalized);
    free(e->normalized);
  }
  join_allocation(e);
  gs_submitter_destroy(dev, &e->submitter);
  gs_stager_destroy(&e->staging);
  gs_buffer_destroy(dev, &e->keys);
  gs_buffer_destroy(dev, &e->alt);
  gs_buffer_destroy(dev, &e->values);
  gs_buffer_destroy(dev, &e->values_alt);
  gs_buffer_destroy(dev, &e->state);
  gs_buffer_destroy(dev, &e->gathered_in);
  gs_buffer_destroy(dev, &e->gathered_out);
  gs_buffer_destroy(dev, &e->then_state);
  gs_buffer_destroy(dev, &e->counts);
  gs_argsort_check_free(&e->argsort);
  free(e->scratch);
  free(e->records_copy);
  memset(e, 0, sizeof *e);
}
