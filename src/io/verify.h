/* Host-side proof that a sort is right, computed apart from the GPU:
 *  - order: every key is >= the one before it (<= for descending), in the key's own order;
 *  - permutation: an order-independent checksum of the records (sum and xor of each record's
 *    XXH3-64) is the same for input and output, so nothing was lost, duplicated or changed.
 * Both run over the data in chunks, in parallel, in the order the chunks arrive. */
#ifndef GS_IO_VERIFY_H
#define GS_IO_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/layout.h"
#include "prim/key_spec.h"
#include "prim/keys.h"

typedef struct {
  uint64_t sum, xor_all, count;
} gs_multiset_hash;

/* Adds every `record_bytes` record of data[0, bytes) to h. */
void gs_multiset_hash_add(gs_multiset_hash *h, const void *data, size_t bytes, unsigned record_bytes);

bool gs_multiset_hash_equal(const gs_multiset_hash *a, const gs_multiset_hash *b);

typedef struct {
  const gs_key_info *key;
  bool keyed;            /* compare normalized forms of `spec` (key_offset 0, no bit range) */
  gs_key_spec spec;
  unsigned char last_normalized[GS_KEY_SPEC_MAX_BYTES];
  bool descending;
  unsigned record_bytes, key_offset;
  unsigned begin_bit;    /* compare ordered-key bits [begin_bit, begin_bit + width) */
  uint64_t mask;         /* ((1 << width) - 1) */
  uint64_t records;      /* seen so far */
  bool have_last;
  unsigned char last[64]; /* the last record's key */
  bool sorted;
  uint64_t first_bad;    /* index of the first record out of order */
  char detail[160];      /* the two keys, for the message */
} gs_order_check;

/* Order of records by their key (at key_offset in record_bytes-byte records), ascending or
 * descending, on ordered-key bits [begin_bit, end_bit) (0, 0: all bits). */
void gs_order_check_init(gs_order_check *c, gs_key_type key, bool descending, unsigned record_bytes,
                         unsigned key_offset, unsigned begin_bit, unsigned end_bit);

/* The order of a layout: its key (keyed layouts: by their normalized form, without a bit
 * range) in the given direction and bit range. */
void gs_order_check_init_layout(gs_order_check *c, const gs_layout *layout, bool descending, unsigned begin_bit,
                                unsigned end_bit);

/* The value records are ordered by: a key's ordered bits in the check's direction and range. */
uint64_t gs_order_check_sort_key(const gs_order_check *c, const void *key);

/* Feeds the next whole records. Stops looking after the first disorder. */
void gs_order_check_feed(gs_order_check *c, const void *data, size_t bytes);

/* An argsort's output: indices into the input's records that form a permutation of [0, n),
 * list the records in key order, and keep equal keys in input order (stable). */
typedef struct {
  gs_order_check order; /* the key comparison */
  const unsigned char *records;
  uint64_t n, seen;
  unsigned char *visited; /* n bits */
  bool have_last;
  uint64_t last_index, last_key;
  bool ok;
  char detail[200];
} gs_argsort_check;

int gs_argsort_check_init(gs_argsort_check *c, const void *records, uint64_t n, const gs_layout *layout,
                          bool descending, unsigned begin_bit, unsigned end_bit);
void gs_argsort_check_feed(gs_argsort_check *c, const void *indices, size_t count, unsigned index_bytes);
/* True if the indices fed so far are the whole, stably ordered permutation. */
bool gs_argsort_check_done(gs_argsort_check *c);
void gs_argsort_check_free(gs_argsort_check *c);

/* What a sort's checks found: GPUSORT_OK, or GPUSORT_ERROR_VERIFY saying what is wrong. For
 * an argsort (`argsort` not NULL) its check decides; otherwise the order and whether the
 * output's records are the input's (`in`, `out`). */
int gs_verify_verdict(gs_argsort_check *argsort, const gs_order_check *order, const gs_multiset_hash *in,
                      const gs_multiset_hash *out);

#endif
