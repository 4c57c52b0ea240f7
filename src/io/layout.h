/* What the records of an input file look like.
 *
 *   keys     the file is an array of keys (--keys TYPE)
 *   pairs    (key, value) records, packed with no padding (--values TYPE)
 *   records  fixed-size records of any size with the key at a byte offset
 *            (--record-size BYTES --key-offset BYTES), or by a composite key (--key)
 * Keys and values are stored in the machine's byte order (little-endian on x86 and Arm)
 * unless their type says big-endian. */
#ifndef GS_IO_LAYOUT_H
#define GS_IO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "gpusort.h"
#include "io/npy.h"
#include "prim/key_spec.h"
#include "prim/keys.h"

typedef enum { GS_LAYOUT_KEYS, GS_LAYOUT_PAIRS, GS_LAYOUT_RECORDS } gs_layout_kind;

enum { GS_MAX_RECORD_BYTES = 1 << 20 };

/* `keyed`: the key or value is of another form than the six GPU types, or the key is
 * composite; the layout is then sorted by `spec` (prim/key_spec.h), and `key` is GS_KEY_U64,
 * the type of the normalized form's words. */
typedef struct {
  gs_layout_kind kind;
  gs_key_type key;
  gs_key_type value;     /* pairs (when not keyed) */
  unsigned record_bytes; /* every kind: the size of one record */
  unsigned key_offset;   /* every kind: where the key starts in a record */
  unsigned value_offset; /* pairs: where the value starts */
  bool keyed;
  gs_key_spec spec;      /* every layout: the key's parts */
  /* Not known until a .npy input's header is read (gs_layout_resolve_npy): the whole layout
   * (from_file), or the offsets and types of parts named by field (named_fields). */
  bool from_file, named_fields;
  char field_names[GS_KEY_SPEC_MAX_PARTS][64];
  bool field_descending[GS_KEY_SPEC_MAX_PARTS];
  char key_name[32];     /* "u16be", "bytes:10", "composite" */
  char value_name[16];
} gs_layout;

/* Checks a layout of the public API (its struct_size already dealt with) and fills the
 * internal form; usage errors say what is wrong with it. */
int gs_layout_from_public(const gpusort_layout *public_layout, gs_layout *layout);

/* The layout of a .npy input from its header: a layout from the file, parts named by field,
 * or one given in full, which must agree with the header. Usage errors say why not. */
int gs_layout_resolve_npy(gs_layout *layout, const gs_npy *npy, const char *name);

/* The layout of the input at `path`: resolved with its .npy header (then *is_npy, and *npy
 * holds the header) or, for any other input, refused if it waits for one. */
int gs_layout_for_input(gs_layout *layout, const char *path, gs_npy *npy, bool *is_npy);

/* "a u32 key", "an (i64, u32) pair", "a 100-byte record", for size messages. */
void gs_layout_unit(const gs_layout *layout, char *buf, size_t size);

#endif
