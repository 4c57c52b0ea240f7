#include "job/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/trace.h"
#include "util/error.h"
#include "util/format.h"
#include "util/parallel.h"

void gs_context_init(gs_context *c, int device_index, double timeout_seconds, uint64_t budget) {
  memset(c, 0, sizeof *c);
  c->device_index = device_index;
  c->timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 60;
  c->budget_request = budget;
}

void gs_progress_begin(gs_context *c, uint64_t total) {
  c->progress_done = 0;
  c->progress_total = total;
  c->progress_last = 0;
}

void gs_progress_add(gs_context *c, uint64_t units) {
  if (!c->progress) return;
  c->progress_done += units;
  if (c->progress_done > c->progress_total) c->progress_total = c->progress_done;
  const double now = gs_now();
  if (now - c->progress_last < 0.05) return;
  c->progress_last = now;
  c->progress(c->progress_user, c->progress_done, c->progress_total);
}

void gs_progress_end(gs_context *c) {
  if (c->progress && c->progress_last > 0) c->progress(c->progress_user, c->progress_total, c->progress_total);
  c->progress_last = 0;
}

void gs_progress_count(void *ctx, uint64_t bytes) { gs_progress_add(ctx, bytes); }

size_t gs_context_staging_slot(const gs_context *c) {
  const uint64_t most = 32 << 20, share = c->budget / 16;
  return (size_t)(share < most ? (share > 4096 ? share : 4096) : most);
}

int gs_context_set_temp_dir(gs_context *c, const char *dir) {
  free(c->temp_dir);
  c->temp_dir = strdup(dir);
  return c->temp_dir ? 0 : -1;
}

typedef struct {
  gs_context *c;
  int status;
  char error[1024];
} open_task;

/* Select the device, let its configuration choose the subgroup size, create it. */
static void open_device(void *arg) {
  open_task *t = arg;
  gs_context *c = t->c;
  gs_trace("opening the device");
  t->status = gs_device_select(&c->dev, c->device_index);
  gs_trace("device selected");
  if (!t->status) {
    gs_device_config_choose(&c->dev.info, &c->config);
    t->status = gs_device_create(&c->dev, c->config.subgroup_size);
    gs_trace("device created");
  }
  if (!t->status) t->status = gs_memops_create(&c->dev, &c->memops);
  gs_trace("device opened");
  if (t->status) snprintf(t->error, sizeof t->error, "%s", gs_last_error()); /* errors are per thread */
}

int gs_context_device(gs_context *c, void (*meanwhile)(void *), void *arg) {
  if (c->opened) {
    if (meanwhile) meanwhile(arg);
    if (c->dev.wedged)
      return gs_fail(GPUSORT_ERROR_GPU_STALL, "the device stalled or was lost in an earlier job; close this context");
    return GPUSORT_OK;
  }
  const double start = gs_now();
  open_task opening = {c, GPUSORT_OK, ""};
  if (meanwhile)
    gs_run_both(open_device, &opening, meanwhile, arg);
  else
    open_device(&opening);
  if (opening.status) {
    gs_memops_destroy(&c->dev, &c->memops);
    gs_device_close(&c->dev);
    return gs_fail(opening.status, "%s", opening.error);
  }
  c->dev.timeout_ns = (uint64_t)(c->timeout_seconds * 1e9);
  /* by default three quarters of what is free now (all of the heap where the driver cannot say) */
  c->budget = c->budget_request ? c->budget_request : c->dev.info.budget_bytes / 4 * 3;
  c->opened = true;
  c->open_seconds = gs_now() - start;
  return GPUSORT_OK;
}

static void *release_leftovers(void *arg) {
  gs_output_leftovers_release(arg);
  return NULL;
}

static void join_releasing(gs_context *c) {
  if (c->releasing_started) pthread_join(c->releasing, NULL);
  c->releasing_started = false;
}

void gs_context_release_later(gs_context *c, gs_output_leftovers leftovers) {
  join_releasing(c);
  c->leftovers = leftovers;
  c->releasing_started = pthread_create(&c->releasing, NULL, release_leftovers, &c->leftovers) == 0;
  if (!c->releasing_started) gs_output_leftovers_release(&c->leftovers);
}

void gs_context_close(gs_context *c) {
  if (c->opened) {
    gs_trace("closing the device");
    for (unsigned i = 0; i < c->sorter_count; i++) gs_radix_sort_destroy(&c->sorters[i].sorter);
    for (unsigned i = 0; i < c->scan_count; i++) gs_scan_destroy(&c->scans[i].scan);
    for (unsigned i = 0; i < c->compact_count; i++) gs_compact_destroy(&c->compacts[i].compact);
    if (c->have_gather) gs_gather_destroy(&c->gather);
    gs_memops_destroy(&c->dev, &c->memops);
    gs_device_close(&c->dev);
    gs_trace("device closed");
  }
  join_releasing(c);
  free(c->temp_dir);
  memset(c, 0, sizeof *c);
}

static bool same_sorter(const gs_radix_sort_config *a, const gs_radix_sort_config *b) {
  return a->key == b->key && a->descending == b->descending && a->value_bytes == b->value_bytes && a->algo == b->algo;
}

static bool same_scan(const gs_scan_config *a, const gs_scan_config *b) {
  return a->input == b->input && a->acc == b->acc && a->op == b->op && a->inclusive == b->inclusive &&
         a->algo == b->algo && a->reduce_only == b->reduce_only;
}

int gs_context_sorter(gs_context *c, const gs_radix_sort_config *config, gs_radix_sort **sorter) {
  for (unsigned i = 0; i < c->sorter_count; i++) {
    if (same_sorter(&c->sorters[i].config, config)) {
      *sorter = &c->sorters[i].sorter;
      return GPUSORT_OK;
    }
  }
  unsigned slot = c->sorter_count < GS_CONTEXT_CACHED ? c->sorter_count : c->sorter_next;
  if (slot < c->sorter_count) gs_radix_sort_destroy(&c->sorters[slot].sorter); /* the oldest */
  int rc = gs_radix_sort_create(&c->dev, &c->memops, &c->config, config, &c->sorters[slot].sorter);
  if (rc) {
    gs_radix_sort_destroy(&c->sorters[slot].sorter);
    if (slot < c->sorter_count) c->sorters[slot] = c->sorters[--c->sorter_count]; /* keep the table dense */
    return rc;
  }
  c->sorters[slot].config = *config;
  if (slot == c->sorter_count) c->sorter_count++;
  c->sorter_next = (slot + 1) % GS_CONTEXT_CACHED;
  *sorter = &c->sorters[slot].sorter;
  return GPUSORT_OK;
}

int gs_context_scan(gs_context *c, const gs_scan_config *config, const gs_scan **scan) {
  for (unsigned i = 0; i < c->scan_count; i++) {
    if (same_scan(&c->scans[i].config, config)) {
      *scan = &c->scans[i].scan;
      return GPUSORT_OK;
    }
  }
  unsigned slot = c->scan_count < GS_CONTEXT_CACHED ? c->scan_count : c->scan_next;
  if (slot < c->scan_count) gs_scan_destroy(&c->scans[slot].scan);
  int rc = gs_scan_create(&c->dev, &c->memops, &c->config, config, &c->scans[slot].scan);
  if (rc) {
    gs_scan_destroy(&c->scans[slot].scan);
    if (slot < c->scan_count) c->scans[slot] = c->scans[--c->scan_count];
    return rc;
  }
  c->scans[slot].config = *config;
  if (slot == c->scan_count) c->scan_count++;
  c->scan_next = (slot + 1) % GS_CONTEXT_CACHED;
  *scan = &c->scans[slot].scan;
  return GPUSORT_OK;
}

static bool same_compact(const gs_compact_config *a, const gs_compact_config *b) {
  return a->mode == b->mode && a->key == b->key && a->value == b->value && a->acc == b->acc && a->op == b->op &&
         a->count_runs == b->count_runs;
}

int gs_context_compact(gs_context *c, const gs_compact_config *config, const gs_compact **compact) {
  for (unsigned i = 0; i < c->compact_count; i++) {
    if (same_compact(&c->compacts[i].config, config)) {
      *compact = &c->compacts[i].compact;
      return GPUSORT_OK;
    }
  }
  unsigned slot = c->compact_count < GS_CONTEXT_CACHED ? c->compact_count : c->compact_next;
  if (slot < c->compact_count) gs_compact_destroy(&c->compacts[slot].compact); /* the oldest */
  int rc = gs_compact_create(&c->dev, &c->memops, &c->config, config, &c->compacts[slot].compact);
  if (rc) {
    gs_compact_destroy(&c->compacts[slot].compact);
    if (slot < c->compact_count) c->compacts[slot] = c->compacts[--c->compact_count]; /* keep the table dense */
    return rc;
  }
  c->compacts[slot].config = *config;
  if (slot == c->compact_count) c->compact_count++;
  c->compact_next = (slot + 1) % GS_CONTEXT_CACHED;
  *compact = &c->compacts[slot].compact;
  return GPUSORT_OK;
}

int gs_context_gather(gs_context *c, const gs_gather **gather) {
  if (!c->have_gather) {
    int rc = gs_gather_create(&c->dev, &c->gather);
    if (rc) {
      gs_gather_destroy(&c->gather);
      return rc;
    }
    c->have_gather = true;
  }
  *gather = &c->gather;
  return GPUSORT_OK;
}

int gs_context_check_budget(const gs_context *c, uint64_t bytes, const char *what) {
  if (bytes <= c->budget) return GPUSORT_OK;
  char need[32], have[32];
  gs_format_bytes(need, sizeof need, bytes);
  gs_format_bytes(have, sizeof have, c->budget);
  return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s needs %s of device memory, more than the budget of %s", what, need,
                 have);
}

int gs_sort_pacing_init(gs_sort_pacing *p, gs_context *c, gs_radix_sort *sorter, gs_submitter *submitter,
                        uint64_t capacity) {
  const uint64_t limit = gs_radix_sort_segment_limit(sorter), wanted = c->config.submit_keys;
  *p = (gs_sort_pacing){.dev = &c->dev, .submitter = submitter, .flushing = wanted != 0};
  p->segment_keys = wanted && wanted < limit ? wanted : limit;
  /* whole tiles, as gs_radix_sort_record cuts segments: a capacity between the two needs them */
  if (p->segment_keys > sorter->tile_keys) p->segment_keys -= p->segment_keys % sorter->tile_keys;
  return capacity > p->segment_keys ? gs_radix_sort_enable_segments(sorter) : GPUSORT_OK;
}

int gs_sort_pacing_flush(void *pacing, VkCommandBuffer *cb, uint64_t keys) {
  gs_sort_pacing *p = pacing;
  p->since_flush += keys;
  if (p->since_flush < p->segment_keys) return GPUSORT_OK;
  p->since_flush = 0;
  int rc = gs_submitter_flush(p->dev, p->submitter);
  *cb = gs_submitter_cb(p->submitter);
  return rc;
}

uint64_t gs_context_pass_capacity(const gs_context *c, uint64_t max, uint64_t budget,
                                  uint64_t (*bytes_for)(const void *arg, uint64_t n), const void *arg) {
  uint64_t lo = 0, hi = max;
  const uint64_t submit = c->config.submit_keys ? 4 * c->config.submit_keys : 0;
  if (submit && submit < hi) hi = submit;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (bytes_for(arg, mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}
