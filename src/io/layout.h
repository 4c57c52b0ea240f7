/* What the records of an input file look like.
 *
 *   keys     the file is an array of keys (--keys TYPE)
 *   pairs    (key, value) records, packed with no padding (--values TYPE)
 *   records  fixed-size records of any size with the key at a byte offset
 *            (--record-size BYTES --key-offset BYTES)
 * Keys and values are stored in the machine's byte order (little-endian on x86 and Arm). */
#ifndef GS_IO_LAYOUT_H
#define GS_IO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "prim/keys.h"

typedef enum { GS_LAYOUT_KEYS, GS_LAYOUT_PAIRS, GS_LAYOUT_RECORDS } gs_layout_kind;

enum { GS_MAX_RECORD_BYTES = 1 << 20 };

typedef struct {
  gs_layout_kind kind;
  gs_key_type key;
  gs_key_type value;     /* pairs */
  unsigned record_bytes; /* every kind: the size of one record */
  unsigned key_offset;   /* every kind: where the key starts in a record */
  unsigned value_offset; /* pairs: where the value starts */
} gs_layout;

/* Options as given on the command line, before they are checked against each other. */
typedef struct {
  gs_key_type key;
  bool have_key;
  gs_key_type value;
  bool have_value;
  unsigned long record_bytes; /* 0: not given */
  unsigned long key_offset;
  bool have_key_offset;
} gs_layout_options;

/* Checks the combination and fills `layout`; usage errors name the options at fault. */
int gs_layout_from_options(const gs_layout_options *o, gs_layout *layout);

/* "u32 keys", "(u64 key, f32 value) pairs", "100-byte records with an i32 key at byte 8". */
void gs_layout_describe(const gs_layout *layout, char *buf, size_t size);

/* "a u32 key", "an (i64, u32) pair", "a 100-byte record", for size messages. */
void gs_layout_unit(const gs_layout *layout, char *buf, size_t size);

#endif
