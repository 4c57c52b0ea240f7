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

#include "prim/keys.h"

typedef struct {
  uint64_t sum, xor_all, count;
} gs_multiset_hash;

/* Adds every `record_bytes` record of data[0, bytes) to h. */
void gs_multiset_hash_add(gs_multiset_hash *h, const void *data, size_t bytes, unsigned record_bytes);

bool gs_multiset_hash_equal(const gs_multiset_hash *a, const gs_multiset_hash *b);

typedef struct {
  const gs_key_info *key;
  bool descending;
  unsigned record_bytes, key_offset;
  uint64_t records;      /* seen so far */
  bool have_last;
  unsigned char last[64]; /* the last record's key */
  bool sorted;
  uint64_t first_bad;    /* index of the first record out of order */
  char detail[160];      /* the two keys, for the message */
} gs_order_check;

void gs_order_check_init(gs_order_check *c, gs_key_type key, bool descending, unsigned record_bytes,
                         unsigned key_offset);

/* Feeds the next whole records. Stops looking after the first disorder. */
void gs_order_check_feed(gs_order_check *c, const void *data, size_t bytes);

#endif
