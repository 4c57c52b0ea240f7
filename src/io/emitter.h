/* Output bytes on their way out: written to the output file and hashed (XXH3-64, as
 * xxhsum -H3 prints it). A mapped output is hashed from its mapping on a thread of its own,
 * behind the writes, so that the one sequential pass of the hash does not hold up the
 * parallel copies (or the staging buffers they drain); any other output is hashed beside each
 * write, from the caller's bytes. */
#ifndef GS_IO_EMITTER_H
#define GS_IO_EMITTER_H

#include <pthread.h>
#include <xxhash.h>

#include "io/output.h"

typedef struct {
  gs_output *out; /* NULL: checksum only */
  XXH3_state_t *checksum;
  pthread_mutex_t lock; /* guards ready, done and cancel for the hashing thread */
  pthread_cond_t moved;
  pthread_t hasher;
  bool hashing;         /* the hashing thread runs */
  size_t ready, hashed; /* bytes of the mapping written, and hashed */
  bool done, cancel;
  double checksum_seconds, write_seconds; /* each side's own time (GPUSORT_TRACE) */
} gs_emitter;

int gs_emitter_init(gs_emitter *e, gs_output *out);
int gs_emit(gs_emitter *e, const void *data, size_t bytes);
/* Where the next `bytes` of a mapped output go: a caller may build them there and then pass
 * that pointer to gs_emit, which copies nothing. NULL where the output is not mapped. */
void *gs_emit_place(gs_emitter *e, size_t bytes);
/* The checksum of everything emitted; waits for the hashing thread, so a mapped output must
 * stay mapped until this returns. */
uint64_t gs_emitter_digest(gs_emitter *e);
/* Stops the hashing thread (before the output's mapping goes) and frees the state. */
void gs_emitter_free(gs_emitter *e);

#endif
