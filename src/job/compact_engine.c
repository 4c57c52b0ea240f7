#include "job/compact_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/scan_engine.h"
#include "prim/elements.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/knobs.h"
#include "util/parallel.h"

enum { MIN_SCRATCH_BYTES = 4 << 20 };

/* ---- Requests ---- */

const char *gs_compact_request_name(const gs_compact_request *r) {
  switch (r->mode) {
  case GS_COMPACT_SELECT: return "select";
  case GS_COMPACT_PARTITION: return "partition";
  case GS_COMPACT_UNIQUE: return r->rle ? "rle" : "unique";
  default: return "reduce-by-key";
  }
}

static bool filters(const gs_compact_request *r) {
  return r->mode == GS_COMPACT_SELECT || r->mode == GS_COMPACT_PARTITION;
}

/* A single-field dtype of one of the six GPU types. */
static bool gpu_field(const gs_npy_field *f, gs_key_type *type) {
  return gs_key_type_from_public(f->type, type) == 0;
}

/* A structured .npy dtype of two fields, the key at the start and the value right after it,
 * packed: the pairs reduce-by-key takes. */
static int npy_pairs(gs_layout *l, const gs_npy *npy) {
  const gs_npy_field *key = &npy->fields[0], *value = &npy->fields[1];
  gs_key_type value_type;
  if (npy->field_count != 2 || key->offset != l->key_offset || key->offset != 0 || value->offset != key->bytes ||
      npy->itemsize != key->bytes + value->bytes || !gpu_field(value, &value_type))
    return gs_fail(GPUSORT_ERROR_USAGE, "reduce-by-key of a .npy file takes a structured dtype of two packed fields, the "
                   "key and then the value, of the types u32, i32, f32, u64, i64 and f64, not '%s'", npy->descr);
  l->kind = GS_LAYOUT_PAIRS;
  l->value = value_type;
  l->value_offset = key->bytes;
  snprintf(l->value_name, sizeof l->value_name, "%s", gs_key_info_of(value_type)->name);
  return GPUSORT_OK;
}

int gs_compact_request_resolve(gs_compact_request *r, const gs_npy *npy) {
  gs_layout *l = &r->layout;
  const char *name = gs_compact_request_name(r);
  if (l->from_file || l->named_fields)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a compaction's layout is not resolved");
  /* Keys are compared by their bits and tested by the predicate: only the key's type matters
   * (a composite key of one part is that part; the order's direction plays no role). */
  gs_key_type key;
  if (l->spec.count != 1 || gs_element_gpu_type(l->spec.parts[0].type, &key) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s works on numeric keys (u8 ... f64, u16be ... f64be), not %s", name,
                   l->key_name);
  const gpusort_type form = l->spec.parts[0].type;
  r->key_form = (int)form == gs_key_type_to_public(key) ? GPUSORT_TYPE_NONE : form; /* widened as it goes up */
  l->key = key;
  l->key_offset = l->spec.parts[0].offset;
  snprintf(l->key_name, sizeof l->key_name, "%s", gpusort_type_name(form));
  /* a pair's value of another type only moves with its key */
  gpusort_type value;
  if (l->kind == GS_LAYOUT_PAIRS && r->mode == GS_COMPACT_REDUCE_BY_KEY &&
      (gs_field_type_from_name(l->value_name, &value) != 0 || gs_key_type_from_public(value, &l->value) != 0))
    return gs_fail(GPUSORT_ERROR_USAGE, "reduce-by-key combines values of the six GPU types (u32, i32, f32, u64, i64, "
                   "f64), not %s", l->value_name);
  l->keyed = false;
  int rc;
  if (r->mode == GS_COMPACT_REDUCE_BY_KEY) {
    if (l->kind != GS_LAYOUT_PAIRS && npy && npy->structured && (rc = npy_pairs(l, npy))) return rc;
    if (l->kind != GS_LAYOUT_PAIRS)
      return gs_fail(GPUSORT_ERROR_USAGE, "reduce-by-key takes (key, value) pairs, not %s records",
                     l->kind == GS_LAYOUT_KEYS ? "key-only" : "whole");
    r->acc = l->value;
    if (r->acc_asked != GPUSORT_TYPE_NONE && gs_key_type_from_public(r->acc_asked, &r->acc) != 0)
      return gs_fail(GPUSORT_ERROR_USAGE, "reduce-by-key: the accumulator type (%d) is not one of u32, i32, f32, u64, "
                     "i64, f64", (int)r->acc_asked);
    const gs_scan_config as_scan = {.input = l->value, .acc = r->acc, .op = r->op};
    if ((rc = gs_scan_check_config(NULL, &as_scan))) return rc;
  }
  if (filters(r)) {
    if (!r->where) return gs_fail(GPUSORT_ERROR_USAGE, "%s needs a predicate on the key", name);
    if ((rc = gs_predicate_parse_form(r->where, key, r->key_form, &r->predicate))) return rc;
  }
  return GPUSORT_OK;
}

/* Bytes of the key as the records hold it. */
static unsigned record_key_bytes(const gs_compact_request *r) {
  return r->key_form ? gs_field_type_of(r->key_form)->bytes : gs_key_info_of(r->layout.key)->bytes;
}

unsigned gs_compact_output_bytes(const gs_compact_request *r) {
  const unsigned key = record_key_bytes(r);
  if (r->rle) return key + r->count_bytes;
  if (r->mode == GS_COMPACT_REDUCE_BY_KEY) return key + gs_key_info_of(r->acc)->bytes;
  return r->layout.record_bytes;
}

void gs_compact_npy_descr(const gs_compact_request *r, const char *input_descr, char *buf, size_t size) {
  const char *key = gs_npy_descr_of(r->key_form ? r->key_form : (gpusort_type)gs_key_type_to_public(r->layout.key));
  if (r->rle)
    snprintf(buf, size, "[('key', '%s'), ('count', '%s')]", key, r->count_bytes == 8 ? "<u8" : "<u4");
  else if (r->mode == GS_COMPACT_REDUCE_BY_KEY)
    snprintf(buf, size, "[('key', '%s'), ('value', '%s')]", key,
             gs_npy_descr_of((gpusort_type)gs_key_type_to_public(r->acc)));
  else
    snprintf(buf, size, "%s", input_descr);
}

/* ---- Sizes ---- */

static gs_compact_config config_of(const gs_compact_request *r) {
  const bool by_key = r->mode == GS_COMPACT_REDUCE_BY_KEY;
  /* the value fields of other modes mean nothing: one pipeline for each key type */
  return (gs_compact_config){.mode = r->mode,
                             .key = r->layout.key,
                             .value = by_key ? r->layout.value : r->layout.key,
                             .acc = by_key ? r->acc : r->layout.key,
                             .op = by_key ? r->op : GS_SCAN_SUM};
}

static const gs_compact *compact_of(gs_context *ctx, const gs_compact_request *r) {
  const gs_compact_config config = config_of(r);
  const gs_compact *c;
  return gs_context_compact(ctx, &config, &c) == GPUSORT_OK ? c : NULL;
}

/* Bytes going up (keys, and values) and down (positions, and combined values) per record. */
static unsigned up_bytes(const gs_compact_request *r) {
  return gs_key_info_of(r->layout.key)->bytes +
         (r->mode == GS_COMPACT_REDUCE_BY_KEY ? gs_key_info_of(r->layout.value)->bytes : 0);
}

static unsigned down_bytes(const gs_compact_request *r) {
  return 4 + (r->mode == GS_COMPACT_REDUCE_BY_KEY ? gs_key_info_of(r->acc)->bytes : 0);
}

static VkDeviceSize program_bytes(void) { return GS_PREDICATE_MAX_OPS * sizeof(gs_predicate_op); }

/* Device and staging memory for chunks of n: the arrays up and down, the state block (estimated
 * from tiles of 256 keys, fewer than any preset's, when no pipeline is at hand), the
 * predicate, and staging both ways. */
static uint64_t engine_bytes(const gs_context *ctx, const gs_compact_request *r, uint64_t n, const gs_compact *c) {
  const uint64_t up = n * up_bytes(r), down = n * down_bytes(r);
  const uint64_t state = c ? gs_compact_state_bytes(c, n) : 256 + 2 * (n / 256 + 3) * 32;
  return up + down + state + program_bytes() + gs_stager_bytes(up > down ? up : down, gs_context_staging_slot(ctx));
}

/* The most records one chunk takes on the context's device (the budget aside). */
static uint64_t max_records(gs_context *ctx, const gs_compact_request *r) {
  const gs_compact_config config = config_of(r);
  return gs_compact_max_elements(&ctx->dev, &config);
}

typedef struct {
  const gs_context *ctx;
  const gs_compact_request *request;
  const gs_compact *compact;
} capacity_probe;

static uint64_t probe_bytes(const void *arg, uint64_t n) {
  const capacity_probe *p = arg;
  return engine_bytes(p->ctx, p->request, n, p->compact);
}

uint64_t gs_compact_engine_capacity(gs_context *ctx, const gs_compact_request *r, uint64_t budget) {
  const capacity_probe probe = {ctx, r, compact_of(ctx, r)};
  return gs_context_pass_capacity(ctx, max_records(ctx, r), budget, probe_bytes, &probe);
}

/* ---- The engine ---- */

/* Pipeline, buffers, staging and the predicate on the device, for chunks of up to `capacity`. */
static int engine_init(gs_compact_engine *e, gs_context *ctx, const gs_compact_request *r, uint64_t capacity,
                       const gs_compact_output *out) {
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->request = r;
  e->out = *out;
  e->capacity = capacity ? capacity : 1;
  e->key_bytes = record_key_bytes(r);
  e->gpu_key_bytes = gs_key_info_of(r->layout.key)->bytes;
  const bool by_key = r->mode == GS_COMPACT_REDUCE_BY_KEY;
  e->value_bytes = by_key ? gs_key_info_of(r->layout.value)->bytes : 0;
  e->acc_bytes = by_key ? gs_key_info_of(r->acc)->bytes : 0;
  e->out_bytes = gs_compact_output_bytes(r);
  gs_device *dev = &ctx->dev;
  const uint64_t n = e->capacity, up = n * up_bytes(r), down = n * down_bytes(r);
  const double start = gs_now();
  const gs_compact_config config = config_of(r);
  int rc;
  if ((rc = gs_context_compact(ctx, &config, &e->compact)) ||
      (rc = gs_context_check_budget(ctx, engine_bytes(ctx, r, n, e->compact), "the compaction")) ||
      (rc = gs_buffer_create(dev, &e->keys, n * e->gpu_key_bytes, GS_MEM_DEVICE, "the compaction's keys")) ||
      (by_key && (rc = gs_buffer_create(dev, &e->values, n * e->value_bytes, GS_MEM_DEVICE, "the compaction's values"))) ||
      (rc = gs_buffer_create(dev, &e->indices, n * 4, GS_MEM_DEVICE, "the positions kept")) ||
      (by_key && (rc = gs_buffer_create(dev, &e->results, n * e->acc_bytes, GS_MEM_DEVICE, "the values by key"))) ||
      (rc = gs_buffer_create(dev, &e->state, gs_compact_state_bytes(e->compact, n), GS_MEM_DEVICE,
                             "the compaction's look-back descriptors")) ||
      (rc = gs_buffer_create(dev, &e->program, program_bytes(), GS_MEM_DEVICE, "the predicate")) ||
      (rc = gs_stager_create_sized(dev, &e->staging, GS_MEM_READBACK, up > down ? up : down,
                                   gs_context_staging_slot(ctx))))
    return rc;
  e->staging.progress = gs_progress_count;
  e->staging.progress_ctx = ctx;
  e->scratch_bytes = r->layout.record_bytes > MIN_SCRATCH_BYTES ? r->layout.record_bytes : MIN_SCRATCH_BYTES;
  if (!(e->scratch = malloc(e->scratch_bytes)) ||
      (r->key_form && (!(e->form_keys = malloc(n * e->key_bytes)) || !(e->wide_keys = malloc(n * e->gpu_key_bytes)))))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (filters(r)) { /* the predicate stays on the device for every chunk */
    gs_transfer_stats stats = {0};
    const size_t bytes = r->predicate.count * sizeof(gs_predicate_op);
    if (bytes && (rc = gs_upload(&e->staging, gs_buffer_range(&e->program), r->predicate.ops, bytes, &stats))) return rc;
  }
  e->setup += gs_now() - start;
  return GPUSORT_OK;
}

/* A record's key as its bytes hold it (1 to 8 of them), for comparing runs across chunks. */
static uint64_t key_bits_at(const gs_compact_engine *e, const unsigned char *record) {
  uint64_t bits = 0;
  memcpy(&bits, record + e->request->layout.key_offset, e->key_bytes);
  return bits;
}

static int take_u32(void *ctx, const void *data, size_t bytes) {
  if (bytes >= 4) memcpy(ctx, data, 4);
  return GPUSORT_OK;
}

static int upload_chunk(gs_compact_engine *e, const gs_record_source *source, uint64_t n) {
  const gs_layout *L = &e->request->layout;
  gs_transfer_stats stats = {0};
  int rc;
  if (e->request->key_form) { /* keys of another form: gathered and widened on the host */
    const double t0 = gs_now();
    gs_gather_field(source->data, n, L->record_bytes, L->key_offset, e->key_bytes, e->form_keys);
    gs_elements_widen(e->request->key_form, e->form_keys, e->wide_keys, n);
    e->read += gs_now() - t0;
    rc = gs_upload(&e->staging, gs_buffer_range(&e->keys), e->wide_keys, n * e->gpu_key_bytes, &stats);
    if (!rc && e->request->mode == GS_COMPACT_REDUCE_BY_KEY) {
      const gs_field values = {gs_buffer_range(&e->values), L->value_offset, e->value_bytes};
      rc = gs_upload_fields(&e->staging, source->data, n, L->record_bytes, &values, 1, &stats);
    }
  } else if (L->kind == GS_LAYOUT_KEYS && source->fd >= 0) { /* read straight from the file */
    rc = gs_upload_file(&e->staging, gs_buffer_range(&e->keys), source->fd, source->offset, n * e->key_bytes,
                        source->name, &stats);
  } else {
    gs_field fields[2] = {{gs_buffer_range(&e->keys), L->key_offset, e->key_bytes}};
    unsigned count = 1;
    if (e->request->mode == GS_COMPACT_REDUCE_BY_KEY)
      fields[count++] = (gs_field){gs_buffer_range(&e->values), L->value_offset, e->value_bytes};
    rc = gs_upload_fields(&e->staging, source->data, n, L->record_bytes, fields, count, &stats);
  }
  e->read += stats.host_seconds;
  e->upload += stats.gpu_seconds;
  return rc;
}

/* Records the pass, submits it and waits; then reads back the number kept. */
static int compact_on_gpu(gs_compact_engine *e, uint64_t n) {
  const gs_compact_request *r = e->request;
  gs_device *dev = &e->ctx->dev;
  const bool by_key = r->mode == GS_COMPACT_REDUCE_BY_KEY;
  const gs_range none = {0};
  const gs_compact_run run = {.keys_in = gs_buffer_range(&e->keys),
                              .values_in = by_key ? gs_buffer_range(&e->values) : none,
                              .keys_out = none, /* the keys are read from the records on the host */
                              .indices_out = gs_buffer_range(&e->indices),
                              .values_out = by_key ? gs_buffer_range(&e->results) : none,
                              .state = gs_buffer_range(&e->state),
                              .rest = &e->rest,
                              .program = filters(r) ? gs_buffer_range(&e->program) : none,
                              .program_length = filters(r) ? r->predicate.count : 0};
  gs_submission sub = {0};
  gs_timestamps ts = {0};
  uint64_t t[2];
  int rc;
  if (!(rc = gs_submission_init(dev, &sub)) && !(rc = gs_timestamps_create(dev, &ts, 2)) &&
      !(rc = gs_submission_begin(dev, &sub)) && !(rc = gs_compact_record(e->compact, sub.cb, n, &run, &ts)) &&
      !(rc = gs_submission_submit(dev, &sub, "the GPU compaction")) &&
      !(rc = gs_submission_wait(dev, &sub, "the GPU compaction")) && !(rc = gs_timestamps_read(dev, &ts, 0, 2, t)))
    e->gpu += gs_timestamps_seconds(dev, t[0], t[1]);
  gs_timestamps_destroy(dev, &ts);
  gs_submission_destroy(dev, &sub);
  if (rc) e->rest = (gs_compact_rest){0}; /* (the pass may not have run to its end) */
  if (rc) return rc;
  uint32_t kept = UINT32_MAX;
  gs_transfer_stats stats = {0};
  rc = gs_download(&e->staging, gs_subrange(gs_buffer_range(&e->state), GS_COMPACT_TOTAL_OFFSET, 4), 4, take_u32,
                   &kept, &stats);
  e->download += stats.gpu_seconds;
  if (rc) return rc;
  if (kept > n)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: the GPU kept %u of %llu records", kept, (unsigned long long)n);
  e->kept = kept;
  return GPUSORT_OK;
}

/* The GPU pass over the next n (<= capacity) records: uploaded, compacted, e->kept read back. */
static int engine_pass(gs_compact_engine *e, const gs_record_source *source, uint64_t n) {
  const gs_compact_request *r = e->request;
  if (n > e->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a chunk beyond the compaction's capacity");
  if (r->mode == GS_COMPACT_PARTITION && e->consumed + n > e->out.total)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a partition past its output");
  e->records = source->data;
  e->n = n;
  e->first = e->consumed;
  e->kept = 0;
  e->continues = false;
  if (n == 0) return GPUSORT_OK;
  /* runs that cross from the previous chunk into this one */
  e->continues = !filters(r) && e->chunks > 0 && key_bits_at(e, e->records) == e->last_key_bits;
  int rc;
  if ((rc = upload_chunk(e, source, n)) || (rc = compact_on_gpu(e, n))) return rc;
  e->last_key_bits = key_bits_at(e, e->records + (n - 1) * r->layout.record_bytes);
  e->consumed += n;
  e->chunks++;
  return GPUSORT_OK;
}

/* Output records the emit of the last pass writes: exact for a job of one chunk (its last
 * run, held back, is written by engine_finish). */
static uint64_t pass_records(const gs_compact_engine *e) {
  if (e->request->mode == GS_COMPACT_PARTITION) return e->n;
  return e->kept - (e->continues ? 1 : 0);
}

/* ---- Output records ---- */

/* Whole records by position, from the chunk's records to consecutive places. */
typedef struct {
  const unsigned char *records;
  unsigned record_bytes;
  const uint32_t *positions;
  unsigned char *out;
} record_gather;

static void gather_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const record_gather *g = arg;
  const size_t R = g->record_bytes;
  if (R == 4) /* keys alone: copies of a known size, inlined */
    for (size_t i = begin; i < end; i++) memcpy(g->out + i * 4, g->records + (size_t)g->positions[i] * 4, 4);
  else if (R == 8)
    for (size_t i = begin; i < end; i++) memcpy(g->out + i * 8, g->records + (size_t)g->positions[i] * 8, 8);
  else
    for (size_t i = begin; i < end; i++) memcpy(g->out + i * R, g->records + g->positions[i] * R, R);
}

static void gather_records(gs_compact_engine *e, const uint32_t *positions, size_t count, unsigned char *out) {
  const double t0 = gs_now();
  record_gather g = {e->records, e->request->layout.record_bytes, positions, out};
  gs_parallel_for(count, 1 << 14, gather_range, &g);
  e->assemble += gs_now() - t0;
}

/* Where the sink would have `bytes` built, else the scratch buffer (bytes fit it). */
static unsigned char *output_place(gs_compact_engine *e, size_t bytes) {
  unsigned char *place = e->out.place ? e->out.place(e->out.ctx, bytes) : NULL;
  return place ? place : e->scratch;
}

/* Select, unique: the records at `positions`, in order, to the sink. */
static int emit_records(gs_compact_engine *e, const uint32_t *positions, size_t count) {
  const size_t R = e->request->layout.record_bytes, batch = e->scratch_bytes / R;
  unsigned char *whole = e->out.place && count ? e->out.place(e->out.ctx, count * R) : NULL;
  if (whole) { /* built in place at once */
    gather_records(e, positions, count, whole);
    return e->out.sink(e->out.ctx, whole, count * R);
  }
  int rc = GPUSORT_OK;
  for (size_t at = 0; at < count && !rc; at += batch) {
    const size_t here = count - at < batch ? count - at : batch;
    unsigned char *out = output_place(e, here * R);
    gather_records(e, positions + at, here, out);
    rc = e->out.sink(e->out.ctx, out, here * R);
  }
  return rc;
}

/* Partition: results [at, at + count) of the chunk's n, the first `kept` of them kept (their
 * records go after the kept of earlier chunks), the others rejected in reverse input order
 * (they go, as they are, before the rejected of earlier chunks, which fill the output from its
 * end: engine_finish reverses them all). */
static void place_partition(gs_compact_engine *e, const uint32_t *positions, size_t at, size_t count) {
  const size_t R = e->request->layout.record_bytes, kept = e->kept;
  const uint64_t rejected_start = e->out.total - e->rejected_total - (e->n - kept);
  if (at < kept) {
    const size_t here = kept - at < count ? kept - at : count;
    gather_records(e, positions, here, e->out.region + (e->kept_total + at) * R);
    positions += here, at += here, count -= here;
  }
  if (count) gather_records(e, positions, count, e->out.region + (rejected_start + (at - kept)) * R);
}

/* The held run, finished: its key and count (rle) or value written at `out`. `end` is the
 * position of the next run's first record (or of the input's end). */
static int write_held_run(const gs_compact_engine *e, uint64_t end, unsigned char *out) {
  const gs_compact_run_state *h = &e->held;
  memcpy(out, &h->key_bits, e->key_bytes); /* (the bytes key_bits_at read) */
  if (!e->request->rle) {
    memcpy(out + e->key_bytes, h->value, e->acc_bytes);
    return GPUSORT_OK;
  }
  const uint64_t count = end - h->first; /* (runs through several chunks may pass 2^32) */
  const uint64_t test_max = gs_knobs_get()->test_u32_count_max;
  if (e->request->count_bytes == 4 && count > (test_max ? test_max : UINT32_MAX))
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "a run of %llu equal keys (from record %llu) does not fit a u32 count: "
                   "ask for u64 counts (--count-type u64)", (unsigned long long)count, (unsigned long long)h->first);
  gs_key_store_bits(e->request->count_bytes, out + e->key_bytes, count);
  return GPUSORT_OK;
}

/* Runs that start and end within the chunk: run i's record from its first position, and the
 * next run's (rle: the distance, below 2^30) or its value. */
typedef struct {
  const gs_compact_engine *e;
  const uint32_t *positions;   /* [count + 1]: the runs' first positions, and the next one's */
  const unsigned char *values; /* reduce-by-key: [count] */
  unsigned char *out;
} run_records;

static void run_records_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const run_records *w = arg;
  const gs_compact_engine *e = w->e;
  const size_t O = e->out_bytes, R = e->request->layout.record_bytes, key_offset = e->request->layout.key_offset;
  const unsigned kb = e->key_bytes, cb = e->request->count_bytes, ab = e->acc_bytes;
  for (size_t i = begin; i < end; i++) {
    unsigned char *out = w->out + i * O;
    memcpy(out, e->records + (size_t)w->positions[i] * R + key_offset, kb);
    if (w->values)
      memcpy(out + kb, w->values + i * ab, ab);
    else
      gs_key_store_bits(cb, out + kb, w->positions[i + 1] - w->positions[i]);
  }
}

/* Rle, reduce-by-key: run heads [at, at + count) of the chunk (their first positions, and
 * their values). The run held from before ends at the first head (unless the chunk continues
 * it) and is written; each head but the last starts a run that ends at the next one; the last
 * is held back for the next piece or chunk to end. */
static int emit_runs(gs_compact_engine *e, const uint32_t *positions, const unsigned char *values, size_t at,
                     size_t count) {
  const double t0 = gs_now();
  const size_t O = e->out_bytes, R = e->request->layout.record_bytes, ab = e->acc_bytes;
  size_t first = 0;
  int rc = GPUSORT_OK;
  if (at == 0 && e->continues && count) { /* the held run goes on */
    if (values) gs_scan_combine_on_host(e->request->op, e->request->acc, e->held.value, values);
    first = 1;
  }
  if (first < count && e->held.valid) {
    unsigned char *out = output_place(e, O);
    if ((rc = write_held_run(e, e->first + positions[first], out)) || (rc = e->out.sink(e->out.ctx, out, O))) return rc;
    e->written++;
  }
  const size_t complete = count > first ? count - 1 - first : 0, batch = e->scratch_bytes / O;
  for (size_t done = 0; done < complete && !rc; done += batch) {
    const size_t here = complete - done < batch ? complete - done : batch;
    const size_t i = first + done;
    run_records w = {e, positions + i, values ? values + i * ab : NULL, output_place(e, here * O)};
    gs_parallel_for(here, 1 << 14, run_records_range, &w);
    rc = e->out.sink(e->out.ctx, w.out, here * O);
    e->written += here;
  }
  if (!rc && first < count) { /* the last run: held */
    const size_t last = count - 1;
    e->held.valid = true;
    e->held.key_bits = key_bits_at(e, e->records + (size_t)positions[last] * R);
    e->held.first = e->first + positions[last];
    if (values) memcpy(e->held.value, values + last * ab, ab);
  }
  e->assemble += gs_now() - t0;
  return rc;
}

typedef struct {
  gs_compact_engine *e;
  size_t at; /* results handed over so far */
} results_sink;

static int take_results(void *arg, const void *const *data, size_t count) {
  results_sink *s = arg;
  gs_compact_engine *e = s->e;
  const gs_compact_request *r = e->request;
  const uint32_t *positions = data[0];
  const size_t at = s->at;
  s->at += count;
  /* positions the GPU returns are read from host memory: never past the chunk */
  for (size_t i = 0; i < count; i++)
    if (positions[i] >= e->n)
      return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: the GPU returned position %u of a chunk of %llu records",
                     positions[i], (unsigned long long)e->n);
  if (at == 0 && count && !filters(r) && positions[0] != 0)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: the GPU's first run starts at %u, not 0", positions[0]);
  switch (r->mode) {
  case GS_COMPACT_PARTITION: place_partition(e, positions, at, count); return GPUSORT_OK;
  case GS_COMPACT_SELECT: e->written += count; return emit_records(e, positions, count);
  case GS_COMPACT_UNIQUE:
    if (!r->rle) {
      const size_t skip = at == 0 && e->continues && count ? 1 : 0; /* the previous chunk's run goes on */
      e->written += count - skip;
      return emit_records(e, positions + skip, count - skip);
    }
    return emit_runs(e, positions, NULL, at, count);
  default: return emit_runs(e, positions, data[1], at, count);
  }
}

/* Downloads the last pass's results and writes its output records. */
static int engine_emit(gs_compact_engine *e) {
  const gs_compact_request *r = e->request;
  if (e->n == 0) return GPUSORT_OK;
  const bool partition = r->mode == GS_COMPACT_PARTITION;
  gs_field fields[2] = {{gs_buffer_range(&e->indices), 0, 4}};
  unsigned count = 1;
  if (r->mode == GS_COMPACT_REDUCE_BY_KEY) fields[count++] = (gs_field){gs_buffer_range(&e->results), 0, e->acc_bytes};
  results_sink sink = {e, 0};
  gs_transfer_stats stats = {0};
  const double assembled = e->assemble;
  int rc = gs_download_fields(&e->staging, fields, count, partition ? e->n : e->kept, take_results, &sink, &stats);
  e->download += stats.gpu_seconds;
  e->write += stats.host_seconds - (e->assemble - assembled);
  if (!rc && partition) {
    e->kept_total += e->kept;
    e->rejected_total += e->n - e->kept;
    e->written += e->n;
  }
  return rc;
}

/* Swaps records [begin, end) of the first half of the range with their mirror images. */
typedef struct {
  unsigned char *records;
  size_t count, record_bytes;
} mirror_job;

static void mirror_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const mirror_job *m = arg;
  const size_t R = m->record_bytes;
  unsigned char tmp[256];
  for (size_t i = begin; i < end; i++) {
    unsigned char *a = m->records + i * R, *b = m->records + (m->count - 1 - i) * R;
    for (size_t at = 0; at < R; at += sizeof tmp) {
      const size_t piece = R - at < sizeof tmp ? R - at : sizeof tmp;
      memcpy(tmp, a + at, piece);
      memcpy(a + at, b + at, piece);
      memcpy(b + at, tmp, piece);
    }
  }
}

static int engine_finish(gs_compact_engine *e) {
  const gs_compact_request *r = e->request;
  const double t0 = gs_now();
  int rc = GPUSORT_OK;
  if (r->mode == GS_COMPACT_PARTITION && e->rejected_total > 1) {
    const size_t R = r->layout.record_bytes;
    mirror_job m = {e->out.region + e->kept_total * R, e->rejected_total, R};
    gs_parallel_for(m.count / 2, 1 << 14, mirror_range, &m);
  } else if (e->held.valid) {
    unsigned char *out = output_place(e, e->out_bytes);
    if (!(rc = write_held_run(e, e->consumed, out)) && !(rc = e->out.sink(e->out.ctx, out, e->out_bytes))) e->written++;
    e->held.valid = false;
  }
  e->assemble += gs_now() - t0;
  return rc;
}

uint64_t gs_compact_engine_result(const gs_compact_engine *e) {
  return e->request->mode == GS_COMPACT_PARTITION ? e->kept_total : e->written;
}

int gs_compact_engine_all(gs_compact_engine *e, gs_context *ctx, const gs_compact_request *r,
                          const gs_record_source *source, uint64_t n, const gs_compact_output *out) {
  memset(e, 0, sizeof *e);
  const uint64_t capacity = gs_compact_engine_capacity(ctx, r, ctx->budget);
  if (capacity == 0) return gs_fail(GPUSORT_ERROR_TOO_LARGE, "the memory budget holds no compaction at all");
  int rc = engine_init(e, ctx, r, n < capacity ? n : capacity, out);
  const unsigned R = r->layout.record_bytes;
  for (uint64_t first = 0; !rc && first < n; first += e->capacity) {
    const uint64_t count = n - first < e->capacity ? n - first : e->capacity;
    const gs_record_source part = {.data = source->data + first * R,
                                   .fd = source->fd,
                                   .offset = source->offset + first * R,
                                   .name = source->name};
    rc = engine_pass(e, &part, count);
    if (!rc && count == n && out->size_known) rc = out->size_known(out->size_ctx, pass_records(e));
    if (!rc) rc = engine_emit(e);
  }
  if (!rc && n == 0 && out->size_known) rc = out->size_known(out->size_ctx, 0);
  return rc ? rc : engine_finish(e);
}

void gs_compact_engine_free(gs_compact_engine *e) {
  if (!e->ctx) return;
  gs_device *dev = &e->ctx->dev;
  gs_stager_destroy(&e->staging);
  gs_buffer_destroy(dev, &e->keys);
  gs_buffer_destroy(dev, &e->values);
  gs_buffer_destroy(dev, &e->indices);
  gs_buffer_destroy(dev, &e->results);
  gs_buffer_destroy(dev, &e->state);
  gs_buffer_destroy(dev, &e->program);
  free(e->scratch);
  free(e->form_keys);
  free(e->wide_keys);
  memset(e, 0, sizeof *e);
}
