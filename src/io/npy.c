#include "io/npy.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/input.h"
#include "prim/key_spec.h"
#include "util/error.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

bool gs_npy_is(const void *head, size_t bytes) { return bytes >= 6 && memcmp(head, magic, 6) == 0; }

/* A cursor over the header's dict literal. */
typedef struct {
  const char *p, *end;
  const char *name; /* the file */
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
}

static bool accept(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

static int malformed(const cursor *c, const char *what) {
  return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: a malformed .npy header (%s)", c->name, what);
}

/* A quoted string literal (no escapes: NumPy's field names and type strings have none). */
static int string_literal(cursor *c, char *out, size_t size) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return malformed(c, "a string was expected");
  const char quote = *c->p++;
  const char *start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\') return malformed(c, "escapes in a string");
    /* the dtype's text is kept as a C string for the output's header */
    if (*c->p == '\0') return malformed(c, "a NUL byte in a string");
    c->p++;
  }
  if (c->p >= c->end) return malformed(c, "an unterminated string");
  const size_t len = (size_t)(c->p - start);
  c->p++;
  if (len >= size) return malformed(c, "a string too long");
  memcpy(out, start, len);
  out[len] = '\0';
  return GPUSORT_OK;
}

/* What a type string is to gpusort: its size, and the key type it can be (NONE if none). */
static int field_type(const cursor *c, const char *descr, gs_npy_field *f) {
  const char order = descr[0];
  /* (an empty string has no order: strchr would find its NUL) */
  if (!order || !strchr("<>|=", order) || !descr[1]) return malformed(c, "a type string without its byte order");
  const char kind = descr[1];
  char *end;
  const unsigned long size = strtoul(descr + 2, &end, 10);
  if (*end || size == 0 || size > (1u << 20)) {
    if (kind == 'O') return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: object arrays (dtype 'O') hold pointers, not data", c->name);
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the .npy dtype '%s' is not supported", c->name, descr);
  }
  snprintf(f->descr, sizeof f->descr, "%s", descr);
  f->bytes = (unsigned)size;
  f->type = GPUSORT_TYPE_NONE;
  f->string_bytes = 0;
  const bool big = order == '>';
  switch (kind) {
  case 'b': /* False < True */
  case 'u': f->type = gs_field_type_find(GS_PART_UNSIGNED, f->bytes, big); break;
  case 'i': f->type = gs_field_type_find(GS_PART_SIGNED, f->bytes, big); break;
  case 'f': f->type = gs_field_type_find(GS_PART_FLOAT, f->bytes, big); break; /* '<f2' is f16 */
  case 'S':
  case 'V': /* byte strings: memcmp order (NumPy's for 'S', whose padding is NUL bytes) */
    if (size <= 128) f->type = GPUSORT_BYTES, f->string_bytes = (uint32_t)size;
    break;
  case 'O': return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: object arrays (dtype 'O') hold pointers, not data", c->name);
  default: break; /* complex, unicode, dates: part of a record, never a key */
  }
  return GPUSORT_OK;
}

/* A shape tuple "(d0, d1, ...)": its number of elements and of dimensions. */
static int parse_shape(cursor *c, uint64_t *elements, unsigned *dims) {
  *elements = 1, *dims = 0;
  if (!accept(c, '(')) return malformed(c, "a shape was expected");
  while (!accept(c, ')')) {
    skip_space(c);
    /* digits read up to the header's end only (strtoull would read on, past the file's end
     * where the header ends it) */
    const char *digits = c->p;
    uint64_t d = 0;
    for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
      if (d > (UINT64_MAX - (uint64_t)(*c->p - '0')) / 10) return malformed(c, "a shape too large");
      d = d * 10 + (uint64_t)(*c->p - '0');
    }
    if (c->p == digits) return malformed(c, "a dimension was expected");
    if (d && *elements > UINT64_MAX / d) return malformed(c, "a shape too large");
    *elements *= d;
    ++*dims;
    accept(c, ',');
  }
  return GPUSORT_OK;
}

/* The descr value: a type string, or a list of fields (its text kept for the output). */
static int parse_descr(cursor *c, gs_npy *npy) {
  skip_space(c);
  const char *start = c->p;
  int rc;
  if (c->p < c->end && *c->p != '[') {
    char descr[32];
    if ((rc = string_literal(c, descr, sizeof descr)) || (rc = field_type(c, descr, &npy->simple))) return rc;
    npy->itemsize = npy->simple.bytes;
  } else {
    c->p++;
    npy->structured = true;
    unsigned offset = 0;
    while (!accept(c, ']')) {
      if (npy->field_count == GS_NPY_MAX_FIELDS)
        return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: more than %d fields in the .npy dtype", c->name, GS_NPY_MAX_FIELDS);
      gs_npy_field *f = &npy->fields[npy->field_count];
      char descr[32];
      if (!accept(c, '(')) return malformed(c, "a field was expected");
      skip_space(c);
      if (c->p < c->end && *c->p == '(')
        return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: fields with titles are not supported", c->name);
      if ((rc = string_literal(c, f->name, sizeof f->name))) return rc;
      if (!accept(c, ',')) return malformed(c, "a field's type was expected");
      skip_space(c);
      if (c->p < c->end && *c->p == '[')
        return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: nested structured fields are not supported", c->name);
      if ((rc = string_literal(c, descr, sizeof descr)) || (rc = field_type(c, descr, f))) return rc;
      if (accept(c, ',')) { /* a subarray: (name, type, shape); part of the record, not a key */
        uint64_t elements;
        unsigned dims;
        if ((rc = parse_shape(c, &elements, &dims))) return rc;
        if (elements > (1u << 20) || (uint64_t)f->bytes * elements > (1u << 20)) return malformed(c, "a field too large");
        f->bytes = (unsigned)(f->bytes * elements);
        f->type = GPUSORT_TYPE_NONE;
      }
      if (!accept(c, ')')) return malformed(c, "a field's closing parenthesis was expected");
      f->offset = offset;
      offset += f->bytes;
      npy->field_count++;
      accept(c, ',');
    }
    npy->itemsize = offset;
  }
  const size_t len = (size_t)(c->p - start);
  if (len >= sizeof npy->descr) return malformed(c, "a dtype too long");
  memcpy(npy->descr, start, len);
  npy->descr[len] = '\0';
  return GPUSORT_OK;
}

/* The header of a file of file_bytes (UINT64_MAX: a stream, whose size is not known yet). */
static int parse_header(const unsigned char *file, uint64_t file_bytes, const char *name, gs_npy *npy) {
  memset(npy, 0, sizeof *npy);
  if (file_bytes < 10 || !gs_npy_is(file, file_bytes))
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: not a .npy file", name);
  const unsigned major = file[6];
  uint64_t header_len, prefix;
  if (major == 1) {
    header_len = file[8] | (uint64_t)file[9] << 8;
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (file_bytes < 12) return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: a truncated .npy header", name);
    header_len = file[8] | (uint64_t)file[9] << 8 | (uint64_t)file[10] << 16 | (uint64_t)file[11] << 24;
    prefix = 12;
  } else {
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: .npy format version %u.%u is not supported (1.0 to 3.0 are)", name,
                   major, file[7]);
  }
  if (prefix + header_len > file_bytes)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the .npy header runs past the end of the file", name);
  npy->header_bytes = prefix + header_len;
  cursor c = {(const char *)file + prefix, (const char *)file + prefix + header_len, name};
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  unsigned dims = 0;
  uint64_t count = 1;
  int rc;
  if (!accept(&c, '{')) return malformed(&c, "the dict was expected");
  while (!accept(&c, '}')) {
    char key[32];
    if ((rc = string_literal(&c, key, sizeof key))) return rc;
    if (!accept(&c, ':')) return malformed(&c, "':' was expected");
    skip_space(&c);
    /* (a key given twice is refused: a second descr would add its fields to the first's) */
    if (strcmp(key, "descr") == 0) {
      if (have_descr) return malformed(&c, "descr given twice");
      if ((rc = parse_descr(&c, npy))) return rc;
      have_descr = true;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (have_order) return malformed(&c, "fortran_order given twice");
      if ((size_t)(c.end - c.p) >= 4 && strncmp(c.p, "True", 4) == 0) fortran = true, c.p += 4;
      else if ((size_t)(c.end - c.p) >= 5 && strncmp(c.p, "False", 5) == 0) c.p += 5;
      else return malformed(&c, "fortran_order is True or False");
      have_order = true;
    } else if (strcmp(key, "shape") == 0) {
      if (have_shape) return malformed(&c, "shape given twice");
      if ((rc = parse_shape(&c, &count, &dims))) return rc;
      have_shape = true;
    } else {
      return malformed(&c, "an unknown key");
    }
    accept(&c, ',');
  }
  if (!have_descr || !have_order || !have_shape) return malformed(&c, "descr, fortran_order and shape are needed");
  if (fortran && dims > 1)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: a Fortran-ordered array of %u dimensions; sort a C-ordered copy "
                   "(numpy.ascontiguousarray)", name, dims);
  if (!npy->structured && npy->simple.type == GPUSORT_TYPE_NONE)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the .npy dtype '%s' is not a type gpusort sorts", name,
                   npy->simple.descr);
  if (npy->itemsize == 0) return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: a .npy dtype of no bytes", name);
  npy->count = count;
  if (count > UINT64_MAX / npy->itemsize)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the .npy header says %llu elements of %u bytes, more than any file "
                   "holds", name, (unsigned long long)count, npy->itemsize);
  if (file_bytes == UINT64_MAX) return GPUSORT_OK;
  const uint64_t data = file_bytes - npy->header_bytes;
  if (count > data / npy->itemsize || count * npy->itemsize != data)
    return gs_fail(GPUSORT_ERROR_BAD_INPUT,
                   "%s: the .npy header says %llu elements of %u bytes, but the file holds %llu bytes of data", name,
                   (unsigned long long)count, npy->itemsize, (unsigned long long)data);
  return GPUSORT_OK;
}

int gs_npy_parse(const unsigned char *file, uint64_t file_bytes, const char *name, gs_npy *npy) {
  return parse_header(file, file_bytes < UINT64_MAX ? file_bytes : UINT64_MAX - 1, name, npy);
}

size_t gs_npy_header(const char *descr, uint64_t count, unsigned char *buf, size_t size) {
  char dict[GS_NPY_DESCR_BYTES + 128];
  const bool literal = descr[0] == '[' || descr[0] == '\'' || descr[0] == '"'; /* as a header had it */
  int len = snprintf(dict, sizeof dict, "{'descr': %s%s%s, 'fortran_order': False, 'shape': (%llu,), }",
                     literal ? "" : "'", descr, literal ? "" : "'", (unsigned long long)count);
  if (len < 0 || (size_t)len >= sizeof dict) return 0;
  const bool v2 = len + 12 + 64 > 65535;
  const size_t prefix = v2 ? 12 : 10, total = (prefix + (size_t)len + 1 + 63) / 64 * 64;
  if (total > size) return 0;
  memcpy(buf, magic, 6);
  buf[6] = v2 ? 2 : 1;
  buf[7] = 0;
  const size_t header_len = total - prefix;
  for (size_t b = 0; b < prefix - 8; b++) buf[8 + b] = (unsigned char)(header_len >> (8 * b));
  memcpy(buf + prefix, dict, (size_t)len);
  memset(buf + prefix + len, ' ', total - prefix - (size_t)len - 1);
  buf[total - 1] = '\n';
  return total;
}

const char *gs_npy_descr_of(gpusort_type type) {
  /* indexed by gpusort_type; bfloat16 has no NumPy type */
  static const char *const descr[] = {
      [GPUSORT_U32] = "<u4",   [GPUSORT_I32] = "<i4",   [GPUSORT_F32] = "<f4",   [GPUSORT_U64] = "<u8",
      [GPUSORT_I64] = "<i8",   [GPUSORT_F64] = "<f8",   [GPUSORT_U8] = "|u1",    [GPUSORT_I8] = "|i1",
      [GPUSORT_U16] = "<u2",   [GPUSORT_I16] = "<i2",   [GPUSORT_F16] = "<f2",   [GPUSORT_U16BE] = ">u2",
      [GPUSORT_I16BE] = ">i2", [GPUSORT_U32BE] = ">u4", [GPUSORT_I32BE] = ">i4", [GPUSORT_F32BE] = ">f4",
      [GPUSORT_U64BE] = ">u8", [GPUSORT_I64BE] = ">i8", [GPUSORT_F64BE] = ">f8",
  };
  return (unsigned)type < sizeof descr / sizeof descr[0] ? descr[type] : NULL;
}

/* A .npy file on standard input, when it is a pipe: its header read ahead and taken from the
 * stream (gs_stdin_peek), which then holds the data alone. Remembered for the job's later
 * looks until the stream is read (a new read-ahead generation). */
static int probe_stdin_stream(gs_npy *npy, bool *found) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static int state; /* 0: not looked at; 1: no .npy; 2: `seen` */
  static unsigned generation;
  static gs_npy seen;
  pthread_mutex_lock(&lock);
  if (generation != gs_stdin_generation()) state = 0, generation = gs_stdin_generation();
  int rc = GPUSORT_OK;
  if (!state) {
    state = 1;
    const unsigned char *head;
    size_t got;
    rc = gs_stdin_peek(12, &head, &got);
    if (!rc && got >= 10 && gs_npy_is(head, got)) {
      const uint64_t header = head[6] == 1 ? 10 + (head[8] | (uint64_t)head[9] << 8)
                                           : 12 + (head[8] | (uint64_t)head[9] << 8 | (uint64_t)head[10] << 16 |
                                                   (uint64_t)head[11] << 24);
      if (header > (1u << 24))
        rc = gs_fail(GPUSORT_ERROR_BAD_INPUT, "stdin: a .npy header of %llu bytes", (unsigned long long)header);
      if (!rc) rc = gs_stdin_peek((size_t)header, &head, &got);
      if (!rc) rc = parse_header(head, got < header ? got : UINT64_MAX, "stdin", &seen);
      if (!rc) gs_stdin_take((size_t)header), state = 2;
    }
  }
  *found = state == 2;
  if (*found) *npy = seen;
  pthread_mutex_unlock(&lock);
  return rc;
}

int gs_npy_probe(const char *path, gs_npy *npy, bool *found) {
  *found = false;
  const bool is_stdin = strcmp(path, "-") == 0;
  struct stat in;
  if (is_stdin && (fstat(STDIN_FILENO, &in) != 0 || !S_ISREG(in.st_mode))) return probe_stdin_stream(npy, found);
  const int fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC); /* (a file on stdin: as a file) */
  struct stat st;
  unsigned char head[6];
  if (fd < 0) return GPUSORT_OK; /* open_input says why */
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, head, 6, 0) != 6 || !gs_npy_is(head, 6)) {
    close(fd);
    return GPUSORT_OK;
  }
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return gs_fail(GPUSORT_ERROR_IO, "cannot map %s: %s", path, strerror(errno));
  const int rc = gs_npy_parse(map, (uint64_t)st.st_size, is_stdin ? "stdin" : path, npy);
  munmap(map, (size_t)st.st_size);
  *found = rc == GPUSORT_OK;
  return rc;
}
