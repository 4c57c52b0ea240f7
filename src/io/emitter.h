/* Output bytes on their way out: written to the output file and hashed (XXH3-64, as
 * xxhsum -H3 prints it), the two side by side. */
#ifndef GS_IO_EMITTER_H
#define GS_IO_EMITTER_H

#include <xxhash.h>

#include "io/output.h"

typedef struct {
  gs_output *out; /* NULL: checksum only */
  XXH3_state_t *checksum;
} gs_emitter;

int gs_emitter_init(gs_emitter *e, gs_output *out);
int gs_emit(gs_emitter *e, const void *data, size_t bytes);
uint64_t gs_emitter_digest(gs_emitter *e);
void gs_emitter_free(gs_emitter *e);

#endif
