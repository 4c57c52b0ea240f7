#include "io/emitter.h"

#include <stdio.h>
#if defined(__x86_64__) || defined(__i386__)
/* libxxhash's runtime choice of its SSE2, AVX2 or AVX-512 code: the output's checksum is the one
 * single-threaded pass over every output byte (about 7 GB/s with SSE2 on an H100's host) */
#include <xxh_x86dispatch.h>
#endif

#include "util/error.h"
#include "util/parallel.h"

int gs_emitter_init(gs_emitter *e, gs_output *out) {
  e->out = out;
  e->checksum = XXH3_createState();
  if (!e->checksum || XXH3_64bits_reset(e->checksum) != XXH_OK) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  return GPUSORT_OK;
}

typedef struct {
  gs_emitter *e;
  const void *data;
  size_t bytes;
  int status;
} emit_task;

static void checksum_piece(void *arg) {
  emit_task *t = arg;
  XXH3_64bits_update(t->e->checksum, t->data, t->bytes);
}

static void write_piece(void *arg) {
  emit_task *t = arg;
  t->status = t->e->out ? gs_output_write(t->e->out, t->data, t->bytes) : GPUSORT_OK;
}

int gs_emit(gs_emitter *e, const void *data, size_t bytes) {
  /* The checksum runs beside the (parallel) write of the same bytes. */
  emit_task task = {e, data, bytes, GPUSORT_OK};
  gs_run_both(checksum_piece, &task, write_piece, &task);
  return task.status;
}

uint64_t gs_emitter_digest(gs_emitter *e) { return XXH3_64bits_digest(e->checksum); }

void gs_emitter_free(gs_emitter *e) {
  XXH3_freeState(e->checksum);
  e->checksum = NULL;
}
