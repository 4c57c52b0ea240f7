/* NumPy .npy files (format versions 1.0 to 3.0): the header that says what the array holds,
 * read from an input and written in front of an output.
 *
 * A header is the magic "\x93NUMPY", the version, the header's length, and a Python dict
 * literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded to a multiple of 64
 * bytes. `descr` is a type string ('<u4', '>f8', '|S10') or, for structured arrays, a list of
 * (name, type string) fields packed in order (padding appears as fields named ''). */
#ifndef GS_IO_NPY_H
#define GS_IO_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpusort.h"

enum { GS_NPY_MAX_FIELDS = 64, GS_NPY_NAME_BYTES = 64, GS_NPY_DESCR_BYTES = 4096 };

typedef struct {
  char name[GS_NPY_NAME_BYTES];
  char descr[16];    /* '<u4' */
  unsigned offset, bytes;
  gpusort_type type; /* NONE: not a type keys can have (a subarray, complex, object, ...) */
  uint32_t string_bytes; /* GPUSORT_BYTES: its length */
} gs_npy_field;

typedef struct {
  uint64_t header_bytes; /* where the data starts */
  uint64_t count;        /* elements: the product of the shape */
  unsigned itemsize;
  bool structured;
  gs_npy_field simple;   /* !structured: the one type (name "") */
  unsigned field_count;
  gs_npy_field fields[GS_NPY_MAX_FIELDS];
  char descr[GS_NPY_DESCR_BYTES]; /* as the file has it, for the output's header */
} gs_npy;

/* Whether `head` starts with the NumPy magic. */
bool gs_npy_is(const void *head, size_t bytes);

/* Parses the header at the start of `file` (file_bytes long). Usage errors (exit 2) name what
 * is wrong: an unsupported version or dtype, Fortran order with more than one dimension, a
 * header that does not match the file's size. `name` is the file, for messages. */
int gs_npy_parse(const unsigned char *file, uint64_t file_bytes, const char *name, gs_npy *npy);

/* Reads the header of the file at `path` if it is a regular file that starts with the
 * magic (*found); anything else is left to the caller (a stream's data can be checked for
 * the magic once read). A malformed header is an error. */
int gs_npy_probe(const char *path, gs_npy *npy, bool *found);

/* Writes a version 1.0 header (or 2.0 where it is long) for `count` elements of `descr` to
 * buf; returns its length, a multiple of 64, or 0 if it does not fit `size`. */
size_t gs_npy_header(const char *descr, uint64_t count, unsigned char *buf, size_t size);

/* The type string of a numeric type ("<u4", ">i2", "|u1"); NULL for none (bf16, bytes). */
const char *gs_npy_descr_of(gpusort_type type);

#endif
