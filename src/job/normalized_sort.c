#include "job/normalized_sort.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

enum { PAIR_BYTES = 12, MAX_WORKERS = 64 };

void gs_normalized_word_request(gs_sort_request *w) {
  memset(w, 0, sizeof *w);
  w->layout = (gs_layout){.kind = GS_LAYOUT_PAIRS, .key = GS_KEY_U64, .value = GS_KEY_U32, .record_bytes = PAIR_BYTES,
                          .value_offset = 8};
  w->values_only = true;
}

int gs_normalized_sort_init(gs_normalized_sort *s, gs_context *ctx, const gs_layout *layout, bool descending,
                            uint64_t capacity) {
  memset(s, 0, sizeof *s);
  s->ctx = ctx;
  s->spec = layout->spec;
  s->descending = descending;
  s->record_bytes = layout->record_bytes;
  s->words = (layout->spec.bytes + 7) / 8;
  s->capacity = capacity;
  gs_normalized_word_request(&s->word_request);
  const uint64_t n = capacity ? capacity : 1;
  if (!(s->columns = malloc(n * s->words * 8)) || !(s->pairs = malloc(n * PAIR_BYTES)) ||
      !(s->order = malloc(n * 4)))
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for the keys' normalized forms");
  return gs_sort_engine_init(&s->words_engine, ctx, &s->word_request, capacity);
}

typedef struct {
  const gs_normalized_sort *s;
  const unsigned char *records;
  uint64_t *columns;
  uint64_t reference[GS_KEY_SPEC_MAX_BYTES / 8]; /* record 0's words */
  uint64_t varying[MAX_WORKERS][GS_KEY_SPEC_MAX_BYTES / 8];
} normalize_job;

static void load_words(const gs_normalized_sort *s, const unsigned char *record, uint64_t *words) {
  unsigned char form[GS_KEY_SPEC_MAX_BYTES + 8] = {0};
  gs_key_spec_normalize(&s->spec, s->descending, record, form);
  for (unsigned w = 0; w < s->words; w++) {
    uint64_t v = 0;
    for (unsigned b = 0; b < 8; b++) v = v << 8 | form[8 * w + b];
    words[w] = v;
  }
}

static void normalize_range(void *arg, size_t begin, size_t end, unsigned worker) {
  normalize_job *j = arg;
  const gs_normalized_sort *s = j->s;
  uint64_t *varying = j->varying[worker];
  for (size_t i = begin; i < end; i++) {
    uint64_t words[GS_KEY_SPEC_MAX_BYTES / 8];
    load_words(s, j->records + i * s->record_bytes, words);
    for (unsigned w = 0; w < s->words; w++) {
      j->columns[w * s->capacity + i] = words[w];
      varying[w] |= words[w] ^ j->reference[w];
    }
  }
}

typedef struct {
  const uint64_t *column;
  const uint32_t *order; /* NULL: the first round, records in input order */
  unsigned char *pairs;
} pairs_job;

static void pairs_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  pairs_job *j = arg;
  for (size_t i = begin; i < end; i++) {
    const uint32_t index = j->order ? j->order[i] : (uint32_t)i;
    memcpy(j->pairs + i * PAIR_BYTES, &j->column[index], 8);
    memcpy(j->pairs + i * PAIR_BYTES + 8, &index, 4);
  }
}

static int take_order(void *ctx, const void *data, size_t bytes) {
  unsigned char **cursor = ctx;
  memcpy(*cursor, data, bytes);
  *cursor += bytes;
  return GPUSORT_OK;
}

int gs_normalized_sort_run(gs_normalized_sort *s, const unsigned char *records, uint64_t n) {
  if (n > s->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a batch beyond the sort's capacity");
  s->rounds = s->passes = 0;
  memset(&s->gpu, 0, sizeof s->gpu);
  if (n == 0) return GPUSORT_OK;
  double t0 = gs_now();
  normalize_job *job = calloc(1, sizeof *job);
  if (!job) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  *job = (normalize_job){.s = s, .records = records, .columns = s->columns};
  load_words(s, records, job->reference);
  gs_parallel_for(n, 1 << 14, normalize_range, job);
  uint64_t varying[GS_KEY_SPEC_MAX_BYTES / 8] = {0};
  for (int w = 0; w < MAX_WORKERS; w++)
    for (unsigned k = 0; k < s->words; k++) varying[k] |= job->varying[w][k];
  free(job);
  s->normalize_seconds += gs_now() - t0;
  bool ordered = false; /* s->order holds a round's result */
  int rc = GPUSORT_OK;
  for (unsigned w = s->words; w-- > 0 && !rc;) {
    if (!varying[w]) continue; /* the same in every record: the order stays */
    const unsigned begin_bit = (unsigned)__builtin_ctzll(varying[w]), end_bit = 64 - (unsigned)__builtin_clzll(varying[w]);
    t0 = gs_now();
    pairs_job pj = {s->columns + w * s->capacity, ordered ? s->order : NULL, s->pairs};
    gs_parallel_for(n, 1 << 15, pairs_range, &pj);
    s->normalize_seconds += gs_now() - t0;
    s->word_request.begin_bit = begin_bit;
    s->word_request.end_bit = end_bit;
    const gs_record_source source = {.data = s->pairs, .fd = -1};
    unsigned char *cursor = (unsigned char *)s->order;
    if ((rc = gs_sort_engine_replan(&s->words_engine)) || (rc = gs_sort_engine_sort(&s->words_engine, &source, n)) ||
        (rc = gs_sort_engine_emit(&s->words_engine, false, take_order, &cursor)))
      break;
    s->rounds++;
    const gs_radix_sort_times *t = &s->words_engine.times.gpu;
    for (unsigned p = 0; p < t->passes && s->gpu.passes < GS_RADIX_MAX_PASSES; p++) s->gpu.pass[s->gpu.passes++] = t->pass[p];
    s->gpu.total += t->total;
    s->gpu.histogram += t->histogram;
    s->passes += s->words_engine.passes;
    ordered = true;
  }
  if (!rc && !ordered) /* all keys equal: input order */
    for (uint64_t i = 0; i < n; i++) s->order[i] = (uint32_t)i;
  return rc;
}

void gs_normalized_sort_free(gs_normalized_sort *s) {
  gs_sort_engine_free(&s->words_engine);
  free(s->columns);
  free(s->pairs);
  free(s->order);
  memset(s, 0, sizeof *s);
}
