#include "io/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* the per-record hash is the hot loop: inline libxxhash's XXH3 */
#include <xxhash.h>

#include "util/error.h"
#include "util/parallel.h"

typedef struct {
  const unsigned char *data;
  unsigned record_bytes;
  uint64_t sum[64], xor_all[64];
} hash_job;

static void hash_range(void *arg, size_t begin, size_t end, unsigned worker) {
  hash_job *job = arg;
  uint64_t sum = 0, x = 0;
  for (size_t i = begin; i < end; i++) {
    uint64_t h = XXH3_64bits(job->data + i * job->record_bytes, job->record_bytes);
    sum += h;
    x ^= h;
  }
  job->sum[worker] += sum;
  job->xor_all[worker] ^= x;
}

void gs_multiset_hash_add(gs_multiset_hash *h, const void *data, size_t bytes, unsigned record_bytes) {
  hash_job job = {.data = data, .record_bytes = record_bytes};
  const size_t n = bytes / record_bytes;
  gs_parallel_for(n, 1 << 16, hash_range, &job);
  for (int w = 0; w < 64; w++) {
    h->sum += job.sum[w];
    h->xor_all ^= job.xor_all[w];
  }
  h->count += n;
}

bool gs_multiset_hash_equal(const gs_multiset_hash *a, const gs_multiset_hash *b) {
  return a->sum == b->sum && a->xor_all == b->xor_all && a->count == b->count;
}

void gs_order_check_init(gs_order_check *c, gs_key_type key, bool descending, unsigned record_bytes,
                         unsigned key_offset, unsigned begin_bit, unsigned end_bit) {
  memset(c, 0, sizeof *c);
  c->key = gs_key_info_of(key);
  c->descending = descending;
  c->record_bytes = record_bytes;
  c->key_offset = key_offset;
  if (begin_bit == 0 && end_bit == 0) end_bit = c->key->bytes * 8;
  const unsigned width = end_bit - begin_bit;
  c->begin_bit = begin_bit;
  c->mask = width >= 64 ? UINT64_MAX : ((uint64_t)1 << width) - 1;
  c->sorted = true;
}

void gs_order_check_init_layout(gs_order_check *c, const gs_layout *l, bool descending, unsigned begin_bit,
                                unsigned end_bit) {
  if (!l->keyed) {
    gs_order_check_init(c, l->key, descending, l->record_bytes, l->key_offset, begin_bit, end_bit);
    return;
  }
  gs_order_check_init(c, GS_KEY_U64, descending, l->record_bytes, 0, 0, 0);
  c->keyed = true;
  c->spec = l->spec;
}

uint64_t gs_order_check_sort_key(const gs_order_check *c, const void *key) {
  uint64_t o = gs_key_ordered(c->key, key);
  if (c->descending) o = ~o;
  return (o >> c->begin_bit) & c->mask;
}

typedef struct {
  const gs_order_check *check;
  const unsigned char *data;
  uint64_t first_bad[64]; /* index within the chunk, per worker; UINT64_MAX if none */
} order_job;

static inline bool out_of_order(const gs_order_check *c, const unsigned char *prev, const unsigned char *next) {
  return gs_order_check_sort_key(c, next) < gs_order_check_sort_key(c, prev);
}

/* Keyed layouts: each record's normalized form once, against the one before it (memcmp order,
 * descending folded in). */
static void order_range_normalized(order_job *job, size_t begin, size_t end, unsigned worker) {
  const gs_order_check *c = job->check;
  const unsigned rb = c->record_bytes;
  unsigned char forms[2][GS_KEY_SPEC_MAX_BYTES];
  size_t i = begin == 0 ? 1 : begin;
  if (i >= end) return;
  gs_key_spec_normalize(&c->spec, c->descending, job->data + (i - 1) * rb, forms[(i - 1) % 2]);
  for (; i < end; i++) {
    gs_key_spec_normalize(&c->spec, c->descending, job->data + i * rb, forms[i % 2]);
    if (memcmp(forms[(i - 1) % 2], forms[i % 2], c->spec.bytes) > 0) {
      if (i < job->first_bad[worker]) job->first_bad[worker] = i;
      return;
    }
  }
}

static void order_range(void *arg, size_t begin, size_t end, unsigned worker) {
  order_job *job = arg;
  const gs_order_check *c = job->check;
  if (c->keyed) {
    order_range_normalized(job, begin, end, worker);
    return;
  }
  const unsigned rb = c->record_bytes;
  const unsigned char *base = job->data + c->key_offset;
  for (size_t i = begin == 0 ? 1 : begin; i < end; i++) {
    if (out_of_order(c, base + (i - 1) * rb, base + i * rb)) {
      if (i < job->first_bad[worker]) job->first_bad[worker] = i;
      return;
    }
  }
}

static void format_key(const gs_order_check *c, const unsigned char *key, char *buf, size_t size) {
  if (c->keyed)
    gs_key_spec_format(&c->spec, key, buf, size);
  else
    gs_key_format(c->key, key, buf, size);
}

static void describe(gs_order_check *c, const unsigned char *prev, const unsigned char *next) {
  char a[64], b[64];
  format_key(c, prev, a, sizeof a);
  format_key(c, next, b, sizeof b);
  snprintf(c->detail, sizeof c->detail, "key %s follows %s", b, a);
}

static bool last_out_of_order(const gs_order_check *c, const unsigned char *next) {
  if (!c->keyed) return out_of_order(c, c->last, next);
  unsigned char normalized[GS_KEY_SPEC_MAX_BYTES];
  gs_key_spec_normalize(&c->spec, c->descending, next, normalized);
  return memcmp(c->last_normalized, normalized, c->spec.bytes) > 0;
}

void gs_order_check_feed(gs_order_check *c, const void *data, size_t bytes) {
  const unsigned char *p = data;
  const size_t n = bytes / c->record_bytes;
  if (!c->sorted || n == 0) {
    c->records += n;
    return;
  }
  const unsigned char *first_key = p + c->key_offset;
  if (c->have_last && last_out_of_order(c, first_key)) {
    c->sorted = false;
    c->first_bad = c->records;
    if (c->keyed) { /* the last record is gone: its normalized form is what is left */
      char b[64];
      format_key(c, first_key, b, sizeof b);
      snprintf(c->detail, sizeof c->detail, "key %s follows a larger one", b);
    } else {
      describe(c, c->last, first_key);
    }
  } else {
    order_job job = {.check = c, .data = p};
    for (int w = 0; w < 64; w++) job.first_bad[w] = UINT64_MAX;
    gs_parallel_for(n, 1 << 16, order_range, &job);
    uint64_t bad = UINT64_MAX;
    for (int w = 0; w < 64; w++)
      if (job.first_bad[w] < bad) bad = job.first_bad[w];
    if (bad != UINT64_MAX) {
      c->sorted = false;
      c->first_bad = c->records + bad;
      describe(c, first_key + (bad - 1) * c->record_bytes, first_key + bad * c->record_bytes);
    }
  }
  if (c->keyed)
    gs_key_spec_normalize(&c->spec, c->descending, first_key + (n - 1) * c->record_bytes, c->last_normalized);
  else
    memcpy(c->last, first_key + (n - 1) * c->record_bytes, c->key->bytes);
  c->have_last = true;
  c->records += n;
}

int gs_argsort_check_init(gs_argsort_check *c, const void *records, uint64_t n, const gs_layout *layout,
                          bool descending, unsigned begin_bit, unsigned end_bit) {
  memset(c, 0, sizeof *c);
  gs_order_check_init_layout(&c->order, layout, descending, begin_bit, end_bit);
  c->records = records;
  c->n = n;
  c->ok = true;
  c->visited = calloc(n / 8 + 1, 1);
  return c->visited ? 0 : -1;
}

void gs_argsort_check_feed(gs_argsort_check *c, const void *indices, size_t count, unsigned index_bytes) {
  const unsigned char *p = indices;
  for (size_t i = 0; i < count && c->ok; i++, c->seen++) {
    const uint64_t index = gs_key_load_bits(index_bytes, p + i * index_bytes);
    if (index >= c->n) {
      c->ok = false;
      snprintf(c->detail, sizeof c->detail, "index %llu at position %llu is out of range", (unsigned long long)index,
               (unsigned long long)c->seen);
      break;
    }
    if (c->visited[index / 8] & (1u << (index % 8))) {
      c->ok = false;
      snprintf(c->detail, sizeof c->detail, "index %llu appears twice (again at position %llu)",
               (unsigned long long)index, (unsigned long long)c->seen);
      break;
    }
    c->visited[index / 8] |= (unsigned char)(1u << (index % 8));
    const unsigned char *record = c->records + index * c->order.record_bytes + c->order.key_offset;
    int order; /* of this key against the last one */
    if (c->order.keyed) {
      unsigned char normalized[GS_KEY_SPEC_MAX_BYTES];
      gs_key_spec_normalize(&c->order.spec, c->order.descending, record, normalized);
      order = memcmp(normalized, c->order.last_normalized, c->order.spec.bytes);
      memcpy(c->order.last_normalized, normalized, c->order.spec.bytes);
    } else {
      const uint64_t key = gs_order_check_sort_key(&c->order, record);
      order = key < c->last_key ? -1 : key > c->last_key;
      c->last_key = key;
    }
    if (c->have_last && (order < 0 || (order == 0 && index < c->last_index))) {
      c->ok = false;
      snprintf(c->detail, sizeof c->detail, "record %llu at position %llu %s record %llu before it",
               (unsigned long long)index, (unsigned long long)c->seen,
               order < 0 ? "has a key out of order after" : "breaks the input order of equal keys after",
               (unsigned long long)c->last_index);
      break;
    }
    c->have_last = true;
    c->last_index = index;
  }
}

bool gs_argsort_check_done(gs_argsort_check *c) {
  if (c->ok && c->seen != c->n) {
    c->ok = false;
    snprintf(c->detail, sizeof c->detail, "%llu indices for %llu records", (unsigned long long)c->seen,
             (unsigned long long)c->n);
  }
  return c->ok;
}

void gs_argsort_check_free(gs_argsort_check *c) {
  free(c->visited);
  c->visited = NULL;
}

int gs_verify_verdict(gs_argsort_check *argsort, const gs_order_check *order, const gs_multiset_hash *in,
                      const gs_multiset_hash *out) {
  if (argsort) {
    if (!gs_argsort_check_done(argsort))
      return gs_fail(GPUSORT_ERROR_VERIFY, "verification failed: %s", argsort->detail);
    return GPUSORT_OK;
  }
  if (!order->sorted)
    return gs_fail(GPUSORT_ERROR_VERIFY, "verification failed: the output is not sorted at record %llu (%s)",
                   (unsigned long long)order->first_bad, order->detail);
  if (!gs_multiset_hash_equal(in, out))
    return gs_fail(GPUSORT_ERROR_VERIFY,
                   "verification failed: the output is not a permutation of the input (checksums differ)");
  return GPUSORT_OK;
}
