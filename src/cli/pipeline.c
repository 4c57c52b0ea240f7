#include "cli/pipeline.h"

#include <stdio.h>

#include "util/error.h"
#include "util/parallel.h"

typedef struct {
  gs_device *dev;
  int index;
  int status;
  char error[1024];
} open_task;

static void open_device(void *arg) {
  open_task *t = arg;
  t->status = gs_device_open(t->dev, t->index);
  if (t->status) snprintf(t->error, sizeof t->error, "%s", gs_last_error()); /* errors are per thread */
}

static void prefault_input(void *arg) { gs_input_prefault(arg); }

int gs_open_device_for(gs_device *dev, int index, double timeout_s, gs_input *input) {
  open_task opening = {dev, index, GS_OK, ""};
  gs_run_both(open_device, &opening, prefault_input, input);
  if (opening.status) return gs_fail(opening.status, "%s", opening.error);
  dev->timeout_ns = (uint64_t)(timeout_s * 1e9);
  return GS_OK;
}

int gs_emitter_init(gs_emitter *e, gs_output *out) {
  e->out = out;
  e->checksum = XXH3_createState();
  if (!e->checksum || XXH3_64bits_reset(e->checksum) != XXH_OK) return gs_fail(GS_ERR_RUNTIME, "out of host memory");
  return GS_OK;
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
  t->status = t->e->out ? gs_output_write(t->e->out, t->data, t->bytes) : GS_OK;
}

int gs_emit(gs_emitter *e, const void *data, size_t bytes) {
  /* The checksum runs beside the (parallel) write of the same bytes. */
  emit_task task = {e, data, bytes, GS_OK};
  gs_run_both(checksum_piece, &task, write_piece, &task);
  return task.status;
}

uint64_t gs_emitter_digest(gs_emitter *e) { return XXH3_64bits_digest(e->checksum); }

void gs_emitter_free(gs_emitter *e) {
  XXH3_freeState(e->checksum);
  e->checksum = NULL;
}
