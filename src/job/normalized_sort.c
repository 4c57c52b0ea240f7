#include "job/normalized_sort.h"

#include <stdlib.h>
#include <string.h>

#include "prim/gather.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/knobs.h"
#include "util/parallel.h"
#include "util/trace.h"

enum { MAX_WORKERS = 64, MAX_WORDS = GS_NORMALIZED_MAX_WORDS };

static unsigned words_of(const gs_layout *layout) { return (layout->spec.bytes + 7) / 8; }

uint64_t gs_normalized_sort_max_records(gs_context *ctx, gs_sort_algo algo) {
  uint64_t sort = gs_radix_sort_max_keys(&ctx->dev, GS_KEY_U64, 4, true);
  if (algo == GS_SORT_BITONIC && gs_bitonic_sort_max_keys() < sort) sort = gs_bitonic_sort_max_keys();
  /* rounds after the first gather 64-bit words by index: byte offsets below 2^32, in one buffer */
  uint64_t gather = 0xFFFFFFFFull / 8;
  while (gather && !gs_gather_fits(&ctx->dev, gather, 8)) gather /= 2;
  return sort < gather ? sort : gather;
}

/* Device: the columns, a gathered column and the sort's second keys, two index arrays, the
 * state block; staging for the columns; host: the columns and the order. */
uint64_t gs_normalized_sort_bytes(gs_context *ctx, const gs_layout *layout, gs_sort_algo algo, uint64_t capacity) {
  const uint64_t n = capacity ? capacity : 1, columns = n * 8 * words_of(layout);
  /* bitonic: a key and an index per element, padded to a power of two */
  const uint64_t state = algo == GS_SORT_BITONIC ? 8192 + 2 * n * 12 : gs_radix_sort_state_bound(n);
  return columns + 2 * n * 8 + 2 * n * 4 + state + gs_stager_bytes(columns, gs_context_staging_slot(ctx));
}

static int create_staging(gs_normalized_sort *s) {
  if (s->staging.dev) return GPUSORT_OK;
  int rc = gs_stager_create_sized(&s->ctx->dev, &s->staging, GS_MEM_READBACK, s->capacity * 8 * s->words,
                                  gs_context_staging_slot(s->ctx));
  s->staging.progress = gs_progress_count;
  s->staging.progress_ctx = s->ctx;
  return rc;
}

static int import_forms(gs_device *dev, const gs_normalized_forms *forms, gs_buffer *imported) {
  return gs_buffer_import_host(dev, imported, forms->pages.data, forms->pages.bytes, "the keys' normalized forms");
}

/* Host memory imported on another thread while the device buffers are made (pinning 170 MB
 * of pages took about 25 ms on the GPU machine): the order's array, and the forms computed
 * ahead. A failure leaves the buffer empty, and the transfer goes through staging. */
static void import_ahead(void *arg) {
  gs_normalized_sort *s = arg;
  gs_device *dev = &s->ctx->dev;
  gs_buffer_import_host(dev, &s->order_import, s->order_pages.data, s->order_pages.bytes, "the records' order");
  if (s->ahead) import_forms(dev, s->ahead, &s->forms_import);
}

typedef struct {
  gs_normalized_sort *s;
  uint64_t bytes; /* the budget's share */
  int status;
} buffers_task;

static void create_buffers(void *arg) {
  buffers_task *t = arg;
  gs_normalized_sort *s = t->s;
  gs_device *dev = &s->ctx->dev;
  const uint64_t n = s->capacity ? s->capacity : 1;
  int rc;
  if ((rc = gs_context_check_budget(s->ctx, t->bytes, "the sort")) ||
      (rc = gs_buffer_create(dev, &s->columns, n * 8 * s->words, GS_MEM_DEVICE, "the keys' normalized forms")) ||
      (rc = gs_buffer_create(dev, &s->gathered, n * 8, GS_MEM_DEVICE, "a word of the keys in order")) ||
      (rc = gs_buffer_create(dev, &s->keys_tmp, n * 8, GS_MEM_DEVICE, "the sort's second key buffer")) ||
      (rc = gs_buffer_create(dev, &s->order[0], n * 4, GS_MEM_DEVICE, "the records' order")) ||
      (rc = gs_buffer_create(dev, &s->order[1], n * 4, GS_MEM_DEVICE, "the records' order")) ||
      (rc = gs_buffer_create(dev, &s->state, gs_radix_sort_state_bytes(s->sorter, n), GS_MEM_DEVICE,
                             "the sort's histograms and look-back descriptors")) ||
      (rc = gs_submitter_init(dev, &s->submitter, "the GPU sort")))
    t->status = rc;
}

int gs_normalized_sort_init(gs_normalized_sort *s, gs_context *ctx, const gs_layout *layout, bool descending,
                            gs_sort_algo algo, uint64_t capacity, const gs_normalized_forms *ahead) {
  memset(s, 0, sizeof *s);
  s->ctx = ctx;
  s->spec = layout->spec;
  s->descending = descending;
  s->record_bytes = layout->record_bytes;
  s->words = words_of(layout);
  s->capacity = capacity;
  const double start = gs_now();
  gs_device *dev = &ctx->dev;
  const uint64_t n = capacity ? capacity : 1;
  const gs_radix_sort_config config = {.key = GS_KEY_U64, .value_bytes = 4,
                                       .algo = gs_sort_algo_for(&ctx->config, algo, capacity)};
  int rc;
  if (capacity > gs_normalized_sort_max_records(ctx, algo))
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%llu records are more than one sort of %s keys takes on %s",
                   (unsigned long long)capacity, layout->key_name, dev->info.name);
  if ((rc = gs_context_sorter(ctx, &config, &s->sorter)) ||
      (rc = gs_sort_pacing_init(&s->pacing, ctx, s->sorter, &s->submitter, capacity)))
    return rc;
  if (gs_pages_alloc(&s->order_pages, n * 4)) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  s->order_host = s->order_pages.data;
  buffers_task buffers = {s, gs_normalized_sort_bytes(ctx, layout, algo, capacity), GPUSORT_OK};
  if (dev->host_import) {
    s->ahead = ahead && ahead->columns && ahead->n <= capacity ? ahead : NULL;
    gs_run_both(import_ahead, s, create_buffers, &buffers);
  } else {
    create_buffers(&buffers);
  }
  if ((rc = buffers.status)) return rc;
  /* where the device imports host memory, the order comes back without staging (and the forms
   * go up likewise, run by run); elsewhere, through staging */
  if (!s->order_import.buffer && (rc = create_staging(s))) return rc;
  s->setup_seconds += gs_now() - start;
  gs_trace("normalized sort: pipelines and buffers ready");
  return GPUSORT_OK;
}

typedef struct {
  const gs_key_spec *spec;
  bool descending;
  unsigned record_bytes;
  gs_normalized_forms *f;
  const unsigned char *records;
  uint64_t reference[MAX_WORDS]; /* record 0's words */
  uint64_t varying[MAX_WORKERS][MAX_WORDS];
} normalize_job;

static void load_words(const normalize_job *j, const unsigned char *record, uint64_t *words) {
  unsigned char form[GS_KEY_SPEC_MAX_BYTES + 8];
  gs_key_spec_normalize(j->spec, j->descending, record, form);
  memset(form + j->spec->bytes, 0, 8 * j->f->words - j->spec->bytes);
  for (unsigned w = 0; w < j->f->words; w++) {
    uint64_t v;
    memcpy(&v, form + 8 * w, 8);
    words[w] = __builtin_bswap64(v); /* most significant byte first */
  }
}

static void normalize_range(void *arg, size_t begin, size_t end, unsigned worker) {
  normalize_job *j = arg;
  gs_normalized_forms *f = j->f;
  uint64_t *varying = j->varying[worker];
  for (size_t i = begin; i < end; i++) {
    uint64_t words[MAX_WORDS];
    load_words(j, j->records + i * j->record_bytes, words);
    for (unsigned w = 0; w < f->words; w++) {
      f->columns[w * f->n + i] = words[w];
      varying[w] |= words[w] ^ j->reference[w];
    }
  }
}

uint64_t gs_normalized_forms_bytes(const gs_layout *layout, uint64_t n) { return (n ? n : 1) * 8 * words_of(layout); }

int gs_normalized_forms_compute(gs_normalized_forms *f, const gs_layout *layout, bool descending,
                                const unsigned char *records, uint64_t n) {
  const double start = gs_now();
  memset(f, 0, sizeof *f);
  f->n = n;
  f->words = words_of(layout);
  normalize_job *job = calloc(1, sizeof *job);
  if (!job || gs_pages_alloc(&f->pages, gs_normalized_forms_bytes(layout, n))) {
    free(job);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for the keys' normalized forms");
  }
  f->columns = f->pages.data;
  *job = (normalize_job){.spec = &layout->spec, .descending = descending, .record_bytes = layout->record_bytes, .f = f,
                         .records = records};
  if (n) load_words(job, records, job->reference);
  gs_parallel_for(n, 1 << 14, normalize_range, job);
  for (unsigned w = 0; w < f->words; w++)
    for (int k = 0; k < MAX_WORKERS; k++) f->varying[w] |= job->varying[k][w];
  free(job);
  f->seconds = gs_now() - start;
  return GPUSORT_OK;
}

void gs_normalized_forms_free(gs_normalized_forms *f) {
  gs_pages_free(&f->pages);
  memset(f, 0, sizeof *f);
}

static int take_order(void *ctx, const void *const *data, size_t count) {
  uint32_t **cursor = ctx;
  memcpy(*cursor, data[0], count * 4);
  *cursor += count;
  return GPUSORT_OK;
}

/* The rounds, recorded into one submission (split where it grows past submit_keys): each
 * sorts one word's column, with the records' indices, in place. */
static int sort_rounds(gs_normalized_sort *s, uint64_t n, const uint64_t *varying, gs_timestamps *ts, int *current) {
  gs_device *dev = &s->ctx->dev;
  const gs_gather *gather;
  int rc;
  if ((rc = gs_context_gather(s->ctx, &gather)) || (rc = gs_submitter_begin(dev, &s->submitter))) return rc;
  s->pacing.since_flush = 0;
  *current = -1; /* which order array holds the order so far; none yet: input order */
  for (unsigned w = s->words; w-- > 0;) {
    if (!varying[w]) continue; /* the same in every record: the order stays */
    gs_radix_sort_run run = {.n = n,
                             .max_n = s->capacity,
                             .begin_bit = (unsigned)__builtin_ctzll(varying[w]),
                             .end_bit = 64 - (unsigned)__builtin_clzll(varying[w]),
                             .index_values = *current < 0,
                             .corrupt = gs_knobs_get()->test_corrupt,
                             .segment_keys = s->pacing.segment_keys,
                             .flush = s->pacing.flushing ? gs_sort_pacing_flush : NULL,
                             .flush_ctx = &s->pacing,
                             .rest = &s->rest};
    unsigned passes;
    if ((rc = gs_radix_sort_passes(s->sorter, run.begin_bit, run.end_bit, &passes))) return rc;
    gs_range keys = gs_subrange(gs_buffer_range(&s->columns), (VkDeviceSize)w * s->capacity * 8, n * 8);
    VkCommandBuffer cb = gs_submitter_cb(&s->submitter);
    if (*current >= 0) { /* this word of the records in the order so far */
      gs_cmd_barrier(cb);
      if ((rc = gs_gather_record(gather, cb, gs_buffer_range(&s->order[*current]), keys, gs_buffer_range(&s->gathered),
                                 n, 8)))
        return rc;
      keys = gs_buffer_range(&s->gathered);
    }
    /* {in, out, tmp} as the sort engine gives them: an even pass count ends in `in` again
     * (its passes alternate with the other array), an odd one in the other array */
    const bool odd = passes % 2 == 1;
    const int in = *current < 0 ? 0 : *current, other = 1 - in;
    const gs_range tmp = gs_buffer_range(&s->keys_tmp);
    const gs_range order_in = gs_buffer_range(&s->order[in]), order_other = gs_buffer_range(&s->order[other]);
    gs_radix_sort_buffers b = {.keys = {keys, odd ? tmp : keys, odd ? keys : tmp},
                               .values = {order_in, odd ? order_other : order_in, odd ? order_in : order_other},
                               .state = gs_buffer_range(&s->state)};
    if ((rc = gs_radix_sort_record(s->sorter, gs_submitter_cb(&s->submitter), &run, &b, &ts[s->rounds]))) return rc;
    *current = odd ? other : in;
    s->round_passes[s->rounds++] = passes;
    s->passes += passes;
  }
  return gs_submitter_finish(dev, &s->submitter);
}

int gs_normalized_sort_run(gs_normalized_sort *s, const unsigned char *records, uint64_t n,
                           const gs_normalized_forms *forms) {
  if (n > s->capacity) return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a batch beyond the sort's capacity");
  s->rounds = s->passes = 0;
  memset(&s->gpu, 0, sizeof s->gpu);
  if (n == 0) return GPUSORT_OK;
  gs_device *dev = &s->ctx->dev;
  /* 1. the normalized forms, on the host (unless computed ahead) */
  int rc = GPUSORT_OK;
  if (!forms || forms->n != n || !forms->columns) {
    gs_normalized_forms_free(&s->forms);
    gs_layout layout = {.record_bytes = s->record_bytes, .spec = s->spec};
    if ((rc = gs_normalized_forms_compute(&s->forms, &layout, s->descending, records, n))) return rc;
    forms = &s->forms;
  }
  s->normalize_seconds += forms->seconds;
  const uint64_t *varying = forms->varying;
  unsigned rounds = 0;
  for (unsigned w = 0; w < s->words; w++) rounds += varying[w] != 0;
  if (rounds == 0) { /* all keys equal: input order */
    for (uint64_t i = 0; i < n; i++) s->order_host[i] = (uint32_t)i;
    return GPUSORT_OK;
  }
  /* 2. the varying columns to the GPU: read by the device in place where it imports them */
  gs_transfer_stats up = {0};
  gs_buffer imported = {0};
  if (forms == s->ahead && s->forms_import.buffer) { /* imported already */
    imported = s->forms_import;
    memset(&s->forms_import, 0, sizeof s->forms_import);
  }
  const bool direct = imported.buffer || import_forms(dev, forms, &imported) == GPUSORT_OK;
  if (direct) {
    gs_host_copy copies[MAX_WORDS];
    unsigned count = 0;
    for (unsigned w = 0; w < s->words; w++)
      if (varying[w])
        copies[count++] = (gs_host_copy){(VkDeviceSize)w * n * 8, gs_subrange(gs_buffer_range(&s->columns),
                                                                              (VkDeviceSize)w * s->capacity * 8, n * 8)};
    rc = gs_copy_imported(dev, &imported, copies, count, true, &up);
    gs_buffer_destroy(dev, &imported);
    up.host_seconds = up.wall_seconds - up.gpu_seconds; /* importing (pinning) the pages */
  } else if (!(rc = create_staging(s))) {
    for (unsigned w = 0; w < s->words && !rc; w++) {
      if (!varying[w]) continue;
      const gs_range dst = gs_subrange(gs_buffer_range(&s->columns), (VkDeviceSize)w * s->capacity * 8, n * 8);
      rc = gs_upload(&s->staging, dst, forms->columns + w * n, n * 8, &up);
    }
  }
  gs_trace("normalized forms uploaded (%s)", direct ? "read in place" : "through staging");
  s->upload_seconds += up.gpu_seconds;
  s->upload_host_seconds += up.host_seconds;
  if (rc) return rc;
  /* 3. the rounds, on the GPU */
  gs_timestamps ts[MAX_WORDS];
  memset(ts, 0, sizeof ts);
  for (unsigned r = 0; r < rounds && !rc; r++) rc = gs_timestamps_create(dev, &ts[r], GS_RADIX_SORT_TIMESTAMPS);
  int current = -1;
  if (!rc && (rc = sort_rounds(s, n, varying, ts, &current)))
    s->rest = (gs_radix_sort_rest){0}; /* (a round may not have run to its end) */
  for (unsigned r = 0; r < s->rounds && !rc; r++) {
    gs_radix_sort_times t;
    if ((rc = gs_radix_sort_collect_times(s->sorter, &ts[r], s->round_passes[r], &t))) break;
    for (unsigned p = 0; p < t.passes && s->gpu.passes < GS_RADIX_MAX_PASSES; p++) s->gpu.pass[s->gpu.passes++] = t.pass[p];
    s->gpu.total += t.total;
    s->gpu.histogram += t.histogram;
  }
  for (unsigned r = 0; r < rounds; r++) gs_timestamps_destroy(dev, &ts[r]);
  if (rc) return rc;
  s->sort_seconds += s->gpu.total;
  gs_trace("normalized forms sorted in %u rounds", s->rounds);
  /* 4. the order back */
  gs_transfer_stats down = {0};
  const gs_range order = gs_subrange(gs_buffer_range(&s->order[current]), 0, n * 4);
  if (s->order_import.buffer) {
    rc = gs_copy_imported(dev, &s->order_import, &(gs_host_copy){0, order}, 1, false, &down);
    down.host_seconds = 0;
  } else {
    uint32_t *cursor = s->order_host;
    const gs_field field = {order, 0, 4};
    rc = gs_download_fields(&s->staging, &field, 1, n, take_order, &cursor, &down);
  }
  gs_trace("order downloaded (%s)", s->order_import.buffer ? "written in place" : "through staging");
  s->download_seconds += down.gpu_seconds;
  s->download_host_seconds += down.host_seconds;
  return rc;
}

void gs_normalized_sort_free(gs_normalized_sort *s) {
  if (!s->ctx) return;
  gs_device *dev = &s->ctx->dev;
  gs_submitter_destroy(dev, &s->submitter);
  gs_stager_destroy(&s->staging);
  gs_buffer_destroy(dev, &s->columns);
  gs_buffer_destroy(dev, &s->gathered);
  gs_buffer_destroy(dev, &s->keys_tmp);
  gs_buffer_destroy(dev, &s->order[0]);
  gs_buffer_destroy(dev, &s->order[1]);
  gs_buffer_destroy(dev, &s->state);
  gs_buffer_destroy(dev, &s->order_import); /* before the memory it imports */
  gs_buffer_destroy(dev, &s->forms_import);
  if (dev->wedged) { /* the GPU may still access the imported pages: leave them to exit */
    memset(&s->forms.pages, 0, sizeof s->forms.pages);
    memset(&s->order_pages, 0, sizeof s->order_pages);
  }
  gs_normalized_forms_free(&s->forms);
  gs_pages_free(&s->order_pages);
  memset(s, 0, sizeof *s);
}
