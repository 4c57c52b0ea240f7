#include "job/out_of_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/scratch.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

enum { MIN_BUCKET_BITS = 8, MAX_BUCKET_BITS = 16, MAX_WORKERS = 64 };

/* Records of a file: a mapping for the host and, where there is one, the file for pread. */
typedef struct {
  const unsigned char *data;
  int fd;          /* -1: memory only */
  uint64_t offset; /* of data[0] in the file */
  uint64_t count;  /* records */
} region;

static region subregion(region r, uint64_t first, uint64_t count, unsigned bytes) {
  return (region){r.data + first * bytes, r.fd, r.fd >= 0 ? r.offset + first * bytes : 0, count};
}

/* How records are laid out: the input's, or the work records' (the same but for argsort,
 * whose work records are (key, input index) pairs). */
typedef struct {
  gs_layout layout;
  unsigned bytes, key_offset;
} format;

typedef enum { ENGINE_NONE, ENGINE_PARTITION, ENGINE_BIN } engine_role;

typedef struct {
  const gs_out_of_core_job *job;
  const gs_sort_request *r;
  format input, work;
  bool argsort;
  unsigned index_bytes; /* argsort */
  unsigned lo, top;     /* the request's window of ordered-key bits [lo, top) */
  uint64_t capacity;
  /* One engine at a time, within the budget; its times go to the totals below on a change. */
  engine_role role;
  bool role_from_input;
  unsigned role_begin, role_end;
  gs_sort_request engine_request;
  gs_sort_engine engine;
  gs_sort_times partition_times, bin_times;
  double histogram_seconds, partition_seconds, verify_seconds;
  uint64_t bins;
  /* The work file of the first partition: the output's mapping, or a scratch file. */
  gs_scratch work_scratch;
  unsigned char *work_map;
  int work_fd;
  bool work_is_output;
  /* The result on its way out: checked when verifying; with a stream output, checked whole in
   * a scratch file before any of it is written. */
  bool verify;
  gs_order_check order;
  gs_multiset_hash in_hash, out_hash;
  gs_argsort_check argsort_check;
  gs_scratch result;
  uint64_t result_bytes;
} ooc;

/* ---- Engines ---- */

static void add_times(gs_sort_times *total, const gs_sort_times *t) {
  total->setup += t->setup, total->read += t->read, total->upload += t->upload, total->sort += t->sort;
  total->gather += t->gather, total->download += t->download, total->write += t->write;
  total->assemble += t->assemble, total->verify += t->verify;
  total->gpu = t->gpu;
}

static void drop_engine(ooc *o) {
  if (o->role == ENGINE_NONE) return;
  add_times(o->role == ENGINE_BIN ? &o->bin_times : &o->partition_times, &o->engine.times);
  gs_sort_engine_free(&o->engine);
  o->role = ENGINE_NONE;
}

/* The request a role sorts: partitions sort on the bucket bits [begin, end) alone, records of
 * the input or of the work file; bins sort work records on [lo, end). */
static int use_engine(ooc *o, engine_role role, bool from_input, unsigned begin, unsigned end, bool in_place) {
  if (o->role == role && o->role_from_input == from_input && o->role_begin == begin && o->role_end == end) {
    o->engine_request.input_may_change = in_place;
    return GPUSORT_OK;
  }
  drop_engine(o);
  gs_sort_request *q = &o->engine_request;
  memset(q, 0, sizeof *q);
  q->layout = from_input ? o->input.layout : o->work.layout;
  q->descending = o->r->descending;
  q->algo = o->r->algo;
  q->begin_bit = q->layout.keyed ? 0 : begin; /* keyed layouts sort whole keys (a bin's bits above */
  q->end_bit = q->layout.keyed ? 0 : end;     /* `end` are equal throughout it anyway) */
  q->input_may_change = in_place;
  if (role == ENGINE_PARTITION && from_input && o->argsort) {
    q->argsort = true; /* the chunk's indices, grouped by bucket */
    q->index_bytes = 4;
  }
  if (role == ENGINE_BIN && o->argsort) q->values_only = true; /* the input indices, in key order */
  const int rc = gs_sort_engine_init(&o->engine, o->job->ctx, q, o->capacity);
  if (rc) {
    gs_sort_engine_free(&o->engine);
    return rc;
  }
  o->role = role;
  o->role_from_input = from_input;
  o->role_begin = begin;
  o->role_end = end;
  return GPUSORT_OK;
}

static gs_record_source source_of(const ooc *o, region r) {
  return (gs_record_source){.data = r.data, .fd = r.fd, .offset = r.offset, .name = o->job->input->name};
}

/* ---- The result ---- */

/* Every byte of the result passes here, in order. */
static int emit_result(void *ctx, const void *data, size_t bytes) {
  ooc *o = ctx;
  gs_progress_add(o->job->ctx, bytes);
  if (o->verify) {
    const double start = gs_now();
    if (o->argsort) {
      gs_argsort_check_feed(&o->argsort_check, data, bytes / o->index_bytes, o->index_bytes);
    } else {
      gs_order_check_feed(&o->order, data, bytes);
      gs_multiset_hash_add(&o->out_hash, data, bytes, o->input.bytes);
    }
    o->verify_seconds += gs_now() - start;
  }
  if (o->result.map) {
    gs_parallel_memcpy(o->result.map + o->result_bytes, data, bytes);
    o->result_bytes += bytes;
    return GPUSORT_OK;
  }
  return gs_emit(o->job->emitter, data, bytes);
}

typedef struct {
  const unsigned char *work;
  unsigned stride, key_bytes, index_bytes;
  uint64_t first; /* input index of the region's first record (records of the input) */
  unsigned char *out;
} indices_job;

static void indices_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const indices_job *j = arg;
  for (size_t i = begin; i < end; i++) {
    if (j->work)
      memcpy(j->out + (i - begin) * j->index_bytes, j->work + i * j->stride + j->key_bytes, j->index_bytes);
    else
      gs_key_store_bits(j->index_bytes, j->out + (i - begin) * j->index_bytes, j->first + i);
  }
}

/* A region whose records all share the window's bits is in order already (the sort is
 * stable): its records, or for argsort their input indices, go out as they are. */
static int emit_unchanged(ooc *o, region src, bool from_input) {
  enum { PIECE = 1 << 20 };
  if (!o->argsort) {
    const unsigned W = o->work.bytes;
    for (uint64_t i = 0; i < src.count; i += PIECE) {
      const uint64_t k = src.count - i < PIECE ? src.count - i : PIECE;
      int rc = emit_result(o, src.data + i * W, k * W);
      if (rc) return rc;
    }
    return GPUSORT_OK;
  }
  unsigned char *buf = malloc((size_t)PIECE * o->index_bytes);
  if (!buf) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  int rc = GPUSORT_OK;
  for (uint64_t i = 0; i < src.count && !rc; i += PIECE) {
    const uint64_t k = src.count - i < PIECE ? src.count - i : PIECE;
    indices_job j = {.work = from_input ? NULL : src.data + i * o->work.bytes,
                     .stride = o->work.bytes,
                     .key_bytes = o->work.layout.value_offset,
                     .index_bytes = o->index_bytes,
                     .first = (uint64_t)(src.data - o->job->input->data) / o->input.bytes + i,
                     .out = buf};
    gs_parallel_for(k, 1 << 16, indices_range, &j);
    rc = emit_result(o, buf, k * o->index_bytes);
  }
  free(buf);
  return rc;
}

/* ---- Buckets ---- */

/* Which bucket a record falls in: bits [end - bits, end) of its ordered key, or for keyed
 * layouts of its normalized form (bit spec.bytes * 8 - 1 is the top bit of its first byte:
 * the form compares as a big-endian number). Buckets come in output order either way. */
typedef struct {
  gs_order_check numeric;  /* the six GPU types */
  const gs_key_spec *spec; /* keyed layouts; NULL otherwise */
  bool descending;
  unsigned first_byte, last_byte, shift; /* keyed: the bytes holding the bits, and where they end */
  uint32_t mask;
} bucket_window;

static void window_init(bucket_window *w, const ooc *o, const format *f, unsigned end, unsigned bits) {
  memset(w, 0, sizeof *w);
  w->descending = o->r->descending;
  if (!f->layout.keyed) {
    gs_order_check_init(&w->numeric, f->layout.key, w->descending, f->bytes, f->key_offset, end - bits, end);
    return;
  }
  w->spec = &f->layout.spec;
  const unsigned from = w->spec->bytes * 8 - end, to = from + bits; /* bit positions from the first byte's top bit */
  w->first_byte = from / 8;
  w->last_byte = (to - 1) / 8; /* at most 3 bytes: bits <= 16 */
  w->shift = (w->last_byte + 1) * 8 - to;
  w->mask = bits >= 32 ? UINT32_MAX : ((uint32_t)1 << bits) - 1;
}

static uint64_t window_bucket(const bucket_window *w, const unsigned char *record) {
  if (!w->spec) return gs_order_check_sort_key(&w->numeric, record + w->numeric.key_offset);
  unsigned char form[GS_KEY_SPEC_MAX_BYTES];
  gs_key_spec_normalize(w->spec, w->descending, record, form);
  uint32_t v = 0;
  for (unsigned b = w->first_byte; b <= w->last_byte; b++) v = v << 8 | form[b];
  return (v >> w->shift) & w->mask;
}

/* ---- Histogram ---- */

typedef struct {
  region src;
  unsigned stride;
  bucket_window window;
  uint64_t *counts;      /* per worker, `buckets` each */
  unsigned buckets;
  bool hash;
  gs_multiset_hash hashes[MAX_WORKERS];
  int error[MAX_WORKERS]; /* errno of a failed read */
} histogram_job;

static void count_records(histogram_job *j, const unsigned char *records, size_t count, unsigned worker) {
  uint64_t *counts = j->counts + (size_t)worker * j->buckets;
  for (size_t i = 0; i < count; i++) counts[window_bucket(&j->window, records + i * j->stride)]++;
  if (j->hash) gs_multiset_hash_add(&j->hashes[worker], records, count * j->stride, j->stride);
}

/* Records [begin, end): read from the file in blocks where there is one (no page faults on a
 * mapping nothing else touched: about twice as fast), else from memory. */
static void histogram_range(void *arg, size_t begin, size_t end, unsigned worker) {
  histogram_job *j = arg;
  if (j->src.fd < 0) {
    count_records(j, j->src.data + begin * j->stride, end - begin, worker);
    return;
  }
  const size_t per_block = ((size_t)1 << 20) / j->stride + 1;
  unsigned char *block = malloc(per_block * j->stride);
  if (!block) {
    count_records(j, j->src.data + begin * j->stride, end - begin, worker);
    return;
  }
  for (size_t at = begin; at < end;) {
    const size_t count = end - at < per_block ? end - at : per_block, bytes = count * j->stride;
    size_t got = 0;
    while (got < bytes) {
      const ssize_t r = pread(j->src.fd, block + got, bytes - got, (off_t)(j->src.offset + at * j->stride + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        j->error[worker] = r < 0 ? errno : EIO;
        free(block);
        return;
      }
      got += (size_t)r;
    }
    count_records(j, block, count, worker);
    at += count;
  }
  free(block);
}

/* Bucket counts of a region on window bits [end - bits, end). At the top, with verification,
 * also the input's multiset hash. */
static int histogram(ooc *o, region src, const format *f, unsigned end, unsigned bits, bool hash_input,
                     uint64_t *counts) {
  const double start = gs_now();
  const unsigned buckets = 1u << bits, workers = gs_parallel_threads();
  histogram_job *j = calloc(1, sizeof *j);
  uint64_t *per_worker = calloc((size_t)workers * buckets, sizeof *per_worker);
  if (!j || !per_worker) {
    free(j);
    free(per_worker);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  j->src = src;
  j->stride = f->bytes;
  window_init(&j->window, o, f, end, bits);
  j->counts = per_worker;
  j->buckets = buckets;
  j->hash = hash_input;
  gs_parallel_for(src.count, 1 << 16, histogram_range, j);
  int rc = GPUSORT_OK;
  for (unsigned w = 0; w < MAX_WORKERS && !rc; w++)
    if (j->error[w]) rc = gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", o->job->input->name, strerror(j->error[w]));
  memset(counts, 0, buckets * sizeof *counts);
  for (unsigned w = 0; w < workers; w++)
    for (unsigned b = 0; b < buckets; b++) counts[b] += per_worker[(size_t)w * buckets + b];
  if (hash_input)
    for (unsigned w = 0; w < MAX_WORKERS; w++) {
      o->in_hash.sum += j->hashes[w].sum;
      o->in_hash.xor_all ^= j->hashes[w].xor_all;
      o->in_hash.count += j->hashes[w].count;
    }
  free(per_worker);
  free(j);
  o->histogram_seconds += gs_now() - start;
  return rc;
}

/* ---- Partition ---- */

typedef struct {
  const unsigned char *from;
  unsigned char *to;
  size_t bytes;
} run_copy;

/* A batch's records (or argsort indices) arrive grouped by bucket; each bucket's run goes to
 * that bucket's next free place in the target. */
typedef struct {
  ooc *o;
  unsigned char *target; /* work records */
  uint64_t *fill;        /* next free record of each bucket */
  bucket_window window;
  unsigned W;
  /* argsort from the input: the batch's records, to make (key, index) work records */
  bool indices;
  const unsigned char *batch;
  uint64_t batch_first; /* input index of batch[0] */
  run_copy *runs;
} scatter;

static uint64_t bucket_at(const scatter *s, const unsigned char *data, size_t i) {
  if (!s->indices) return window_bucket(&s->window, data + i * s->W);
  uint32_t index;
  memcpy(&index, data + i * 4, 4);
  return window_bucket(&s->window, s->batch + (size_t)index * s->o->input.bytes);
}

static void copy_runs(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const run_copy *runs = arg;
  for (size_t i = begin; i < end; i++) memcpy(runs[i].to, runs[i].from, runs[i].bytes);
}

typedef struct {
  const scatter *s;
  const uint32_t *indices;
  const run_copy *runs; /* from: first index position; to: destination; bytes: count */
} pair_job;

static void write_pairs(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  const pair_job *j = arg;
  const scatter *s = j->s;
  const ooc *o = s->o;
  const unsigned kb = o->work.layout.value_offset, ib = o->index_bytes;
  for (size_t r = begin; r < end; r++) {
    const uint32_t *index = (const uint32_t *)j->runs[r].from;
    unsigned char *to = j->runs[r].to;
    for (size_t k = 0; k < j->runs[r].bytes; k++, to += s->W) {
      memcpy(to, s->batch + (size_t)index[k] * o->input.bytes + o->input.key_offset, kb);
      gs_key_store_bits(ib, to + kb, s->batch_first + index[k]);
    }
  }
}

static int scatter_piece(void *ctx, const void *data, size_t bytes) {
  scatter *s = ctx;
  const unsigned char *p = data;
  const size_t stride = s->indices ? 4 : s->W, count = bytes / stride;
  size_t runs = 0;
  for (size_t i = 0; i < count;) {
    const uint64_t b = bucket_at(s, p, i);
    size_t lo = i + 1, hi = count; /* the first record past bucket b: buckets only grow */
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (bucket_at(s, p, mid) > b)
        hi = mid;
      else
        lo = mid + 1;
    }
    s->runs[runs++] = (run_copy){p + i * stride, s->target + s->fill[b] * s->W, s->indices ? lo - i : (lo - i) * s->W};
    s->fill[b] += lo - i;
    i = lo;
  }
  if (s->indices) {
    pair_job j = {s, (const uint32_t *)data, s->runs};
    gs_parallel_for(runs, 4, write_pairs, &j);
  } else {
    gs_parallel_for(runs, 16, copy_runs, s->runs);
  }
  return GPUSORT_OK;
}

/* Keyed layouts, whose keys the GPU sorts only whole: host threads move the records, each
 * thread a run of them (counted first, so that each bucket keeps the input order). */
typedef struct {
  region src;
  unsigned stride;
  bucket_window window;
  unsigned buckets;
  uint64_t runs, per_run;
  uint64_t *place; /* runs x buckets: counts, then where each run's next record of a bucket goes */
  unsigned char *target;
} host_partition;

/* The records past run r's last: the run is [r * per_run, this). */
static uint64_t run_end(const host_partition *h, uint64_t r) {
  return (r + 1) * h->per_run < h->src.count ? (r + 1) * h->per_run : h->src.count;
}

static void host_count(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  host_partition *h = arg;
  for (size_t r = begin; r < end; r++) {
    uint64_t *counts = h->place + r * h->buckets;
    for (uint64_t i = r * h->per_run; i < run_end(h, r); i++)
      counts[window_bucket(&h->window, h->src.data + i * h->stride)]++;
  }
}

static void host_move(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  host_partition *h = arg;
  for (size_t r = begin; r < end; r++) {
    uint64_t *place = h->place + r * h->buckets;
    for (uint64_t i = r * h->per_run; i < run_end(h, r); i++) {
      const unsigned char *record = h->src.data + i * h->stride;
      memcpy(h->target + place[window_bucket(&h->window, record)]++ * h->stride, record, h->stride);
    }
  }
}

static int partition_on_host(ooc *o, region src, unsigned end, unsigned bits, unsigned char *target) {
  host_partition h = {.src = src, .stride = o->work.bytes, .buckets = 1u << bits, .target = target};
  window_init(&h.window, o, &o->work, end, bits);
  h.runs = gs_parallel_threads() * 4u;
  h.per_run = src.count / h.runs + 1;
  if (!(h.place = calloc(h.runs * h.buckets, sizeof *h.place)))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  gs_parallel_for(h.runs, 1, host_count, &h);
  uint64_t at = 0; /* the counts to places: bucket by bucket, run by run */
  for (unsigned b = 0; b < h.buckets; b++)
    for (uint64_t r = 0; r < h.runs; r++) {
      const uint64_t count = h.place[r * h.buckets + b];
      h.place[r * h.buckets + b] = at;
      at += count;
    }
  gs_parallel_for(h.runs, 1, host_move, &h);
  free(h.place);
  gs_progress_add(o->job->ctx, src.count * h.stride);
  return GPUSORT_OK;
}

/* Moves the region's records (as work records) into `target`, grouped by bucket of bits
 * [end - bits, end) in bucket order, keeping their order within a bucket. */
static int partition(ooc *o, region src, bool from_input, unsigned end, unsigned bits, const uint64_t *counts,
                     unsigned char *target) {
  const double start = gs_now();
  if (o->input.layout.keyed) { /* (no argsort: work records are the input's) */
    const int rc = partition_on_host(o, src, end, bits, target);
    o->partition_seconds += gs_now() - start;
    return rc;
  }
  const unsigned buckets = 1u << bits;
  const format *f = from_input ? &o->input : &o->work;
  scatter s = {.o = o, .target = target, .W = o->work.bytes, .indices = from_input && o->argsort};
  s.fill = malloc(buckets * sizeof *s.fill);
  s.runs = malloc(((size_t)buckets + 1) * sizeof *s.runs);
  int rc = s.fill && s.runs ? GPUSORT_OK : gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  uint64_t at = 0;
  for (unsigned b = 0; b < buckets && !rc; b++) s.fill[b] = at, at += counts[b];
  window_init(&s.window, o, f, end, bits);
  if (!rc) rc = use_engine(o, ENGINE_PARTITION, from_input, end - bits, end, false);
  for (uint64_t first = 0; first < src.count && !rc; first += o->capacity) {
    const uint64_t count = src.count - first < o->capacity ? src.count - first : o->capacity;
    const region batch = subregion(src, first, count, f->bytes);
    s.batch = batch.data;
    s.batch_first = (uint64_t)(batch.data - o->job->input->data) / o->input.bytes;
    const gs_record_source source = source_of(o, batch);
    if (!(rc = gs_sort_engine_sort(&o->engine, &source, count)))
      rc = gs_sort_engine_emit(&o->engine, false, scatter_piece, &s);
  }
  free(s.fill);
  free(s.runs);
  o->partition_seconds += gs_now() - start;
  return rc;
}

/* ---- Sorting regions ---- */

static int sort_bin(ooc *o, region src, unsigned end, bool in_place) {
  int rc = use_engine(o, ENGINE_BIN, false, o->lo, end, in_place);
  const gs_record_source source = source_of(o, src);
  if (!rc) rc = gs_sort_engine_sort(&o->engine, &source, src.count);
  if (!rc) rc = gs_sort_engine_emit(&o->engine, false, emit_result, o);
  o->bins++;
  return rc;
}

/* Bucket bits for m records: enough that a bucket of evenly spread keys holds a quarter of a
 * sort's capacity, within the window's width. */
static unsigned bucket_bits(const ooc *o, uint64_t m, unsigned width) {
  unsigned bits = MIN_BUCKET_BITS;
  while (bits < MAX_BUCKET_BITS && (m >> bits) > o->capacity / 4) bits++;
  return bits < width ? bits : width;
}

static int sort_region(ooc *o, region src, bool from_input, unsigned end, bool src_is_output);

/* Sorts the bins of a partitioned region in order: each a group of buckets that fits one
 * sort, or one bucket too large for that, split again on the next bits. */
static int sort_bins(ooc *o, region target, const uint64_t *counts, unsigned buckets, unsigned end, unsigned bits,
                     bool target_is_output) {
  const unsigned W = o->work.bytes;
  uint64_t start = 0, size = 0;
  int rc = GPUSORT_OK;
  for (unsigned b = 0; b <= buckets && !rc; b++) {
    const uint64_t c = b < buckets ? counts[b] : 0;
    if (b == buckets || c > o->capacity || size + c > o->capacity) { /* close the bin so far */
      if (size) rc = sort_bin(o, subregion(target, start, size, W), end, target_is_output);
      start += size;
      size = 0;
    }
    if (rc || b == buckets) break;
    if (c > o->capacity) {
      rc = sort_region(o, subregion(target, start, c, W), false, end - bits, target_is_output);
      start += c;
    } else {
      size += c;
    }
  }
  return rc;
}

/* Sorts a region on window bits [lo, end) (higher bits are equal throughout it) and emits it.
 * Records of the input go to the work file; deeper regions to a scratch file of their own. */
static int sort_region(ooc *o, region src, bool from_input, unsigned end, bool src_is_output) {
  if (!from_input && src.count <= o->capacity) return sort_bin(o, src, end, src_is_output);
  if (end <= o->lo) return emit_unchanged(o, src, from_input);
  const format *f = from_input ? &o->input : &o->work;
  const unsigned bits = bucket_bits(o, src.count, end - o->lo), buckets = 1u << bits;
  uint64_t *counts = malloc(buckets * sizeof *counts);
  if (!counts) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  int rc = histogram(o, src, f, end, bits, from_input && o->verify && !o->argsort && o->in_hash.count == 0, counts);
  unsigned used = 0;
  for (unsigned b = 0; b < buckets; b++) used += counts[b] != 0;
  if (!rc && used <= 1) { /* one bucket: these bits are equal throughout, go on below them */
    free(counts);
    return sort_region(o, src, from_input, end - bits, src_is_output);
  }
  gs_scratch own = {.fd = -1};
  region target = {0};
  bool target_is_output = false;
  if (!rc && from_input) {
    target = (region){o->work_is_output ? gs_output_map(o->job->out) : o->work_map, o->work_fd, 0, src.count};
    target_is_output = o->work_is_output;
  } else if (!rc) {
    char dir[4096];
    gs_scratch_dir(o->job->scratch_dir, NULL, dir, sizeof dir);
    if (!(rc = gs_scratch_open(&own, dir)) && !(rc = gs_scratch_reserve(&own, src.count * o->work.bytes)))
      target = (region){own.map, own.fd, 0, src.count};
  }
  if (!rc) rc = partition(o, src, from_input, end, bits, counts, (unsigned char *)target.data);
  if (!rc) rc = sort_bins(o, target, counts, buckets, end, bits, target_is_output);
  if (own.fd >= 0) gs_scratch_close(&own);
  free(counts);
  return rc;
}

/* ---- The job ---- */

static void describe(ooc *o, const gs_sort_request *r) {
  o->r = r;
  o->argsort = r->argsort;
  o->index_bytes = r->index_bytes ? r->index_bytes : 8;
  o->input.layout = r->layout;
  o->input.bytes = r->layout.record_bytes;
  o->input.key_offset = r->layout.key_offset;
  o->work = o->input;
  if (o->argsort) { /* (key, input index) */
    const unsigned kb = gs_key_info_of(r->layout.key)->bytes;
    o->work.layout = (gs_layout){.kind = GS_LAYOUT_PAIRS,
                                 .key = r->layout.key,
                                 .value = o->index_bytes == 4 ? GS_KEY_U32 : GS_KEY_U64,
                                 .record_bytes = kb + o->index_bytes,
                                 .key_offset = 0,
                                 .value_offset = kb};
    o->work.bytes = kb + o->index_bytes;
    o->work.key_offset = 0;
  }
  /* keyed layouts: the bits of the normalized form */
  const unsigned key_bits = r->layout.keyed ? r->layout.spec.bytes * 8 : gs_key_info_of(r->layout.key)->bytes * 8;
  o->lo = r->begin_bit;
  o->top = r->begin_bit == 0 && r->end_bit == 0 ? key_bits : r->end_bit;
}

uint64_t gs_out_of_core_capacity(gs_context *ctx, const gs_sort_request *r, uint64_t budget) {
  ooc o;
  memset(&o, 0, sizeof o);
  describe(&o, r);
  gs_sort_request partition = *r, bin = *r;
  partition.index_bytes = 4;
  bin.layout = o.work.layout;
  bin.argsort = false;
  bin.values_only = o.argsort;
  const uint64_t b = gs_sort_engine_capacity(ctx, &bin, budget);
  if (r->layout.keyed) return b; /* (partitioned on the host) */
  const uint64_t a = gs_sort_engine_capacity(ctx, &partition, budget);
  return a < b ? a : b;
}

static void report_times(const ooc *o, gpusort_report *report) {
  double *s = report->stage_seconds;
  const gs_sort_times *b = &o->bin_times, *p = &o->partition_times;
  s[GPUSORT_STAGE_SETUP] += b->setup + p->setup;
  s[GPUSORT_STAGE_BUCKETS] += o->histogram_seconds;
  s[GPUSORT_STAGE_PARTITION] += o->partition_seconds;
  s[GPUSORT_STAGE_READ] += b->read;
  s[GPUSORT_STAGE_UPLOAD] += b->upload;
  s[GPUSORT_STAGE_SORT] += b->sort;
  s[GPUSORT_STAGE_GATHER] += b->gather;
  s[GPUSORT_STAGE_DOWNLOAD] += b->download;
  s[GPUSORT_STAGE_WRITE] += b->write;
  s[GPUSORT_STAGE_ASSEMBLE] += b->assemble;
  s[GPUSORT_STAGE_VERIFY] += o->verify_seconds;
  report->passes = b->gpu.passes;
  report->histogram_seconds = b->gpu.histogram;
  for (unsigned i = 0; i < b->gpu.passes && i < 8; i++) report->pass_seconds[i] = b->gpu.pass[i];
  report->batches = (uint32_t)(o->bins > UINT32_MAX ? UINT32_MAX : o->bins);
}

/* With a stream output and verification: the checked result, written out only now. */
static int write_result(ooc *o) {
  enum { PIECE = 64 << 20 };
  for (uint64_t at = 0; at < o->result_bytes; at += PIECE) {
    const uint64_t k = o->result_bytes - at < PIECE ? o->result_bytes - at : PIECE;
    int rc = gs_emit(o->job->emitter, o->result.map + at, k);
    if (rc) return rc;
  }
  return GPUSORT_OK;
}

static int verdict(ooc *o) {
  return gs_verify_verdict(o->argsort ? &o->argsort_check : NULL, &o->order, &o->in_hash, &o->out_hash);
}

int gs_out_of_core_sort(const gs_out_of_core_job *job) {
  ooc *o = calloc(1, sizeof *o);
  if (!o) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  describe(o, job->request);
  o->job = job;
  o->capacity = job->capacity;
  o->verify = job->request->verify;
  o->work_scratch.fd = -1;
  o->result.fd = -1;
  const gs_sort_request *r = job->request;
  char dir[4096];
  gs_scratch_dir(job->scratch_dir, NULL, dir, sizeof dir);
  int rc = GPUSORT_OK;
  if (o->capacity == 0) rc = gs_fail(GPUSORT_ERROR_TOO_LARGE, "the memory budget holds no sort at all");
  /* The work file: the output itself when it is mapped and holds the records as they are. */
  if (!rc && !o->argsort && job->out->map && job->out->map_bytes == job->n * o->work.bytes) {
    o->work_map = job->out->map; /* written once its pages are faulted in (sort_region) */
    o->work_fd = job->out->fd;
    o->work_is_output = true;
  } else if (!rc && !(rc = gs_scratch_open(&o->work_scratch, dir)) &&
             !(rc = gs_scratch_reserve(&o->work_scratch, job->n * o->work.bytes))) {
    o->work_map = o->work_scratch.map;
    o->work_fd = o->work_scratch.fd;
  }
  if (!rc && o->verify) {
    if (o->argsort) {
      if (gs_argsort_check_init(&o->argsort_check, job->input->data, job->n, &r->layout, r->descending, r->begin_bit,
                                r->end_bit) != 0)
        rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    } else {
      gs_order_check_init_layout(&o->order, &r->layout, r->descending, r->begin_bit, r->end_bit);
    }
    if (!rc && job->out->direct) {
      const unsigned out_bytes = o->argsort ? o->index_bytes : o->input.bytes;
      if (!(rc = gs_scratch_open(&o->result, dir))) rc = gs_scratch_reserve(&o->result, job->n * out_bytes);
    }
  }
  const region input = {job->input->data, job->input->data_fd, job->input->data_offset, job->n};
  if (!rc) rc = sort_region(o, input, true, o->top, false);
  drop_engine(o);
  if (!rc && o->verify) {
    if (!o->argsort && o->in_hash.count == 0) /* every level went below the bits: hash now */
      gs_multiset_hash_add(&o->in_hash, job->input->data, job->n * o->input.bytes, o->input.bytes);
    rc = verdict(o);
  }
  if (!rc && o->result.map) rc = write_result(o);
  report_times(o, job->report);
  gs_argsort_check_free(&o->argsort_check);
  if (o->work_scratch.fd >= 0) gs_scratch_close(&o->work_scratch);
  if (o->result.fd >= 0) gs_scratch_close(&o->result);
  free(o);
  return rc;
}
