/* The state every job runs in: a device (opened on demand), its configuration, the memory
 * budget, and pipelines kept for later jobs (building them is most of a small job's setup).
 * The public gpusort_context is this struct. */
#ifndef GS_JOB_CONTEXT_H
#define GS_JOB_CONTEXT_H

#include <pthread.h>

#include "gpusort.h"
#include "io/output.h"
#include "prim/compact.h"
#include "prim/device_config.h"
#include "prim/gather.h"
#include "prim/memops.h"
#include "prim/radix_sort.h"
#include "prim/scan.h"

enum { GS_CONTEXT_CACHED = 8 }; /* sorters, scans and compactions kept, each */

typedef struct gs_context {
  int device_index;       /* -1: the default device */
  double timeout_seconds;
  uint64_t budget_request; /* 0: a share of the device's memory */
  bool opened;
  gs_device dev;
  gs_device_config config;
  uint64_t budget;        /* bytes of device and staging memory a job may use, once opened */
  char *temp_dir;         /* scratch files' directory; NULL: chosen per job (src/io/scratch.h) */
  gpusort_progress_fn progress;
  void *progress_user;
  uint64_t progress_done, progress_total;
  double progress_last;   /* when the callback last ran */
  double open_seconds;    /* how long the last opening took (0 once reported) */
  gs_memops memops;
  gs_gather gather;
  bool have_gather;
  struct {
    gs_radix_sort_config config;
    gs_radix_sort sorter;
  } sorters[GS_CONTEXT_CACHED];
  unsigned sorter_count, sorter_next;
  struct {
    gs_scan_config config;
    gs_scan scan;
  } scans[GS_CONTEXT_CACHED];
  unsigned scan_count, scan_next;
  struct {
    gs_compact_config config;
    gs_compact compact;
  } compacts[GS_CONTEXT_CACHED];
  unsigned compact_count, compact_next;
  pthread_t releasing;    /* lets go of a finished output's leftovers (gs_context_release_later) */
  bool releasing_started;
  gs_output_leftovers leftovers;
} gs_context;

void gs_context_init(gs_context *c, int device_index, double timeout_seconds, uint64_t budget);

/* Progress of the running file job, passed on to gpusort_context_params.progress at most
 * every 50 ms: begin with the estimated units of work (bytes moved), add as work is done. */
void gs_progress_begin(gs_context *c, uint64_t total);
void gs_progress_add(gs_context *c, uint64_t units);
void gs_progress_end(gs_context *c);

/* For a gs_stager's progress hook: adds bytes to the context's progress (ctx: the context). */
void gs_progress_count(void *ctx, uint64_t bytes);

/* The size of each staging slot the engines use: 32 MiB, at most a sixteenth of the budget.
 * Allocating pinned memory is slow (about 20 ms per 64 MiB on an H100's host), and a pair of
 * 32 MiB slots keeps the bus busy. */
size_t gs_context_staging_slot(const gs_context *c);

/* Keeps a copy of the directory for scratch files; -1 when out of memory. */
int gs_context_set_temp_dir(gs_context *c, const char *dir);

/* Opens the device unless it is open. `meanwhile` (may be NULL) runs on the calling thread
 * while the device opens on another (opening takes hundreds of milliseconds with some
 * drivers); it runs either way. Fails with GPU_STALL on a device that stalled earlier. */
int gs_context_device(gs_context *c, void (*meanwhile)(void *), void *arg);

void gs_context_close(gs_context *c);

/* Releases a finished output's leftovers (its mapping, the file it replaced) on another
 * thread, joined by the next call or by gs_context_close, so that the caller's remaining work
 * (freeing GPU memory, closing the device) goes on meanwhile. */
void gs_context_release_later(gs_context *c, gs_output_leftovers leftovers);

/* Pipelines for a configuration, built once and kept (the oldest of GS_CONTEXT_CACHED goes). */
int gs_context_sorter(gs_context *c, const gs_radix_sort_config *config, gs_radix_sort **sorter);
int gs_context_scan(gs_context *c, const gs_scan_config *config, const gs_scan **scan);
int gs_context_compact(gs_context *c, const gs_compact_config *config, const gs_compact **compact);
int gs_context_gather(gs_context *c, const gs_gather **gather);

/* How a sort's GPU work is split into submissions: segments of at most the device preset's
 * submit_keys (and no more than one pass counts), and a submission ended once it holds that
 * many keys, so that none holds more than a fraction of a second of work. */
typedef struct {
  gs_device *dev;
  gs_submitter *submitter;
  uint64_t segment_keys; /* for gs_radix_sort_run.segment_keys */
  uint64_t since_flush;
  bool flushing;         /* a preset asks for it: gs_sort_pacing_flush is the run's flush */
} gs_sort_pacing;

/* Plans the pacing of sorts of up to `capacity` keys by `sorter` (segments enabled on it when
 * needed), submitted through `submitter`. */
int gs_sort_pacing_init(gs_sort_pacing *p, gs_context *c, gs_radix_sort *sorter, gs_submitter *submitter,
                        uint64_t capacity);

/* gs_radix_sort_run.flush: ends the submission once it holds segment_keys keys. */
int gs_sort_pacing_flush(void *pacing, VkCommandBuffer *cb, uint64_t keys);

/* The most elements, up to `max`, of one pass that reads each element once (a scan's or a
 * compaction's chunk) whose memory, bytes_for(arg, n), fits `budget`; a submission of such a
 * pass takes up to four times the keys of a sort pass's (which reads them several times). */
uint64_t gs_context_pass_capacity(const gs_context *c, uint64_t max, uint64_t budget,
                                  uint64_t (*bytes_for)(const void *arg, uint64_t n), const void *arg);

/* GPUSORT_ERROR_TOO_LARGE naming `what` when `bytes` of device memory exceed the budget. */
int gs_context_check_budget(const gs_context *c, uint64_t bytes, const char *what);

#endif
