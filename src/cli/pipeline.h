/* Steps the data commands (sort, scan) share around their GPU work. */
#ifndef GS_CLI_PIPELINE_H
#define GS_CLI_PIPELINE_H

#include <xxhash.h>

#include "io/input.h"
#include "io/output.h"
#include "vk/device.h"

/* Opens the device while the mapped input is brought into memory (opening takes hundreds of
 * milliseconds with some drivers); sets the device's wait bound to timeout_s. */
int gs_open_device_for(gs_device *dev, int index, double timeout_s, gs_input *input);

/* Writes output bytes and keeps their XXH3 checksum, the two side by side. */
typedef struct {
  gs_output *out; /* NULL: checksum only */
  XXH3_state_t *checksum;
} gs_emitter;

int gs_emitter_init(gs_emitter *e, gs_output *out);
int gs_emit(gs_emitter *e, const void *data, size_t bytes);
uint64_t gs_emitter_digest(gs_emitter *e);
void gs_emitter_free(gs_emitter *e);

#endif
