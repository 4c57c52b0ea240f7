/* The order of records whose key is not one of the GPU's six types (narrow, half and
 * big-endian types, byte strings, composite keys): an LSD radix sort of the key's normalized
 * form (prim/key_spec.h), 64 bits at a time.
 *
 * The host writes each record's normalized form as words of 64 bits, most significant first,
 * and notes which bits of each word vary at all. Then, from the last word to the first, the
 * GPU sorts (word, index) pairs on the word's varying bits only (a word that never varies is
 * skipped), where the indices are the order the previous round left: the sort is stable, so
 * after the first word the indices are the records in key order. A 10-byte key whose bytes
 * all vary takes 10 passes of 8 bits; the 6 bytes of padding of its last word none.
 *
 * Use: gs_normalized_sort_init, then gs_normalized_sort_run per batch, _free. */
#ifndef GS_JOB_NORMALIZED_SORT_H
#define GS_JOB_NORMALIZED_SORT_H

#include "job/sort_engine.h"

typedef struct gs_normalized_sort {
  gs_context *ctx;
  gs_key_spec spec;
  bool descending;
  unsigned record_bytes;
  unsigned words;           /* of the normalized form */
  uint64_t capacity;
  gs_sort_request word_request; /* (u64 word, u32 index) pairs, the indices handed out */
  gs_sort_engine words_engine;
  uint64_t *columns;        /* words x capacity: word w of record i at [w * capacity + i] */
  unsigned char *pairs;     /* capacity x 12 bytes: one round's input */
  uint32_t *order;          /* capacity: the records' indices in key order, after a run */
  unsigned rounds, passes;  /* of the last run */
  gs_radix_sort_times gpu;  /* of the last run, its rounds together */
  double normalize_seconds; /* host: normalized forms and each round's pairs */
} gs_normalized_sort;

/* The request the GPU runs for each word (its memory and capacity are the sort's). */
void gs_normalized_word_request(gs_sort_request *words);

int gs_normalized_sort_init(gs_normalized_sort *s, gs_context *ctx, const gs_layout *layout, bool descending,
                            uint64_t capacity);

/* Orders the n records (n <= capacity): s->order lists their indices in key order, stably. */
int gs_normalized_sort_run(gs_normalized_sort *s, const unsigned char *records, uint64_t n);

void gs_normalized_sort_free(gs_normalized_sort *s);

#endif
