#include "io/emitter.h"

#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
/* libxxhash's runtime choice of its SSE2, AVX2 or AVX-512 code: the output's checksum is the one
 * single-threaded pass over every output byte (8 to 10 GB/s with AVX2 on an H100's host) */
#include <xxh_x86dispatch.h>
#endif

#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/trace.h"

int gs_emitter_init(gs_emitter *e, gs_output *out) {
  memset(e, 0, sizeof *e);
  e->out = out;
  if (pthread_mutex_init(&e->lock, NULL) != 0) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (pthread_cond_init(&e->moved, NULL) != 0) {
    pthread_mutex_destroy(&e->lock);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  e->checksum = XXH3_createState();
  if (!e->checksum || XXH3_64bits_reset(e->checksum) != XXH_OK) {
    gs_emitter_free(e);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  return GPUSORT_OK;
}

static void hash(gs_emitter *e, const void *data, size_t bytes) {
  const double t0 = gs_now();
  XXH3_64bits_update(e->checksum, data, bytes);
  e->checksum_seconds += gs_now() - t0;
}

/* The hashing thread: follows the writes through the mapping, in order. */
static void *hash_mapping(void *arg) {
  gs_emitter *e = arg;
  const unsigned char *map = e->out->map;
  const size_t step = (size_t)4 << 20; /* hashed while the next step is being written */
  pthread_mutex_lock(&e->lock);
  for (;;) {
    while (e->hashed == e->ready && !e->done && !e->cancel) pthread_cond_wait(&e->moved, &e->lock);
    if (e->cancel || e->hashed == e->ready) break;
    const size_t ready = e->ready;
    pthread_mutex_unlock(&e->lock);
    while (e->hashed < ready) {
      const size_t bytes = ready - e->hashed < step ? ready - e->hashed : step;
      hash(e, map + e->hashed, bytes);
      e->hashed += bytes;
    }
    pthread_mutex_lock(&e->lock);
  }
  pthread_mutex_unlock(&e->lock);
  return NULL;
}

/* Lets the hashing thread run to `done` (or stop at once, with `cancel`) and joins it. */
static void stop_hashing(gs_emitter *e, bool cancel) {
  if (!e->hashing) return;
  pthread_mutex_lock(&e->lock);
  e->done = true;
  e->cancel = cancel;
  pthread_cond_signal(&e->moved);
  pthread_mutex_unlock(&e->lock);
  pthread_join(e->hasher, NULL);
  e->hashing = false;
}

typedef struct {
  gs_emitter *e;
  const void *data;
  size_t bytes;
  int status;
} emit_task;

static void checksum_piece(void *arg) {
  emit_task *t = arg;
  hash(t->e, t->data, t->bytes);
}

static void write_piece(void *arg) {
  emit_task *t = arg;
  const double t0 = gs_now();
  t->status = t->e->out ? gs_output_write(t->e->out, t->data, t->bytes) : GPUSORT_OK;
  t->e->write_seconds += gs_now() - t0;
}

int gs_emit(gs_emitter *e, const void *data, size_t bytes) {
  emit_task task = {e, data, bytes, GPUSORT_OK};
  gs_output *out = e->out;
  /* the first write into a mapped output starts the thread that hashes it (once its pages are in) */
  if (out && !e->hashing && !e->done && out->written == 0 && gs_output_map(out) && bytes <= out->map_bytes)
    e->hashing = pthread_create(&e->hasher, NULL, hash_mapping, e) == 0;
  if (e->hashing && out->written + bytes <= out->map_bytes) {
    write_piece(&task);
    if (task.status) return task.status;
    pthread_mutex_lock(&e->lock);
    e->ready = out->written;
    pthread_cond_signal(&e->moved);
    pthread_mutex_unlock(&e->lock);
    return GPUSORT_OK;
  }
  stop_hashing(e, false); /* past the mapping (never by design): the rest beside its writes */
  gs_run_both(checksum_piece, &task, write_piece, &task);
  return task.status;
}

void *gs_emit_place(gs_emitter *e, size_t bytes) {
  gs_output *out = e->out;
  if (!out || !gs_output_map(out) || out->written + bytes > out->map_bytes) return NULL;
  return out->map + out->written;
}

uint64_t gs_emitter_digest(gs_emitter *e) {
  stop_hashing(e, false);
  gs_trace("output hashed in %.1f ms, written in %.1f ms", e->checksum_seconds * 1e3, e->write_seconds * 1e3);
  return XXH3_64bits_digest(e->checksum);
}

void gs_emitter_free(gs_emitter *e) {
  if (!e->checksum && !e->out) return; /* never initialized */
  stop_hashing(e, true);
  XXH3_freeState(e->checksum);
  e->checksum = NULL;
  pthread_cond_destroy(&e->moved);
  pthread_mutex_destroy(&e->lock);
  e->out = NULL;
}
