/* libFuzzer target: input files as the library reads them, host only (gpusort_check_file:
 * the file mapped, its size checked against the layout, a .npy header parsed and resolved,
 * every record's key read and compared), with a layout that is fuzzed too.
 *
 * An input is a 32-byte description of the layout and options (read by `take`, bytes past
 * the end reading as 0) followed by the file's bytes, which go to an in-memory file
 * (memfd) read through its /proc/self/fd path. Any status but a crash is fine; for arrays
 * of unsigned keys of the machine's byte order the verdict is also checked against a direct
 * comparison of neighbours. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpusort.h"

enum { DESCRIPTION_BYTES = 32, MAX_PARTS = 17 /* one more than allowed */ };

typedef struct {
  const uint8_t *p;
  size_t left;
} reader;

static unsigned take(reader *r) {
  if (!r->left) return 0;
  r->left--;
  return *r->p++;
}

static unsigned take16(reader *r) { return take(r) | take(r) << 8; }

/* A type: mostly valid ones, sometimes any value at all. */
static gpusort_type take_type(reader *r) {
  const unsigned t = take(r);
  return (gpusort_type)(t < 240 ? t % (GPUSORT_BYTES + 1) : t);
}

/* Whether keys of an unsigned type `bytes` wide are in order, comparing neighbours. */
static int unsigned_keys_sorted(const uint8_t *data, size_t size, size_t bytes, int descending) {
  uint64_t previous = 0;
  for (size_t i = 0; i + bytes <= size; i += bytes) {
    uint64_t v = 0;
    memcpy(&v, data + i, bytes); /* little-endian machine: the low bytes */
    if (i && (descending ? v > previous : v < previous)) return 0;
    previous = v;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size < DESCRIPTION_BYTES ? size : DESCRIPTION_BYTES};
  const size_t header = r.left;
  const unsigned shape = take(&r) % 6;
  gpusort_layout layout = GPUSORT_LAYOUT_KEYS(take_type(&r));
  const gpusort_type value = take_type(&r);
  const unsigned record_bytes = take16(&r), key_offset = take(&r), key_bytes = take(&r);
  const unsigned flags = take(&r), lo = take(&r), hi = take(&r), part_count = take(&r) % (MAX_PARTS + 1);
  gpusort_key_part parts[MAX_PARTS];
  const char *field_names[MAX_PARTS];
  static const char *const names[] = {"a", "b", "key", "f0", "", "x"};
  for (unsigned i = 0; i < MAX_PARTS; i++) {
    /* the rest of the description gives the parts; later parts repeat earlier bytes */
    const unsigned b = header ? data[(12 + i * 3) % header] : 0;
    parts[i] = (gpusort_key_part){(uint32_t)(b % 32), (gpusort_type)(b % (GPUSORT_BYTES + 1)), (b >> 5) ? b % 9 : 0,
                                  (b & 0x80) ? GPUSORT_KEY_DESCENDING : 0};
    field_names[i] = names[b % (sizeof names / sizeof names[0])];
  }
  switch (shape) {
  case 0: break; /* keys */
  case 1: layout.value = value; break;
  case 2:
    layout.record_bytes = record_bytes;
    layout.key_offset = key_offset;
    layout.key_bytes = key_bytes % 130;
    break;
  case 3: {
    const gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE(record_bytes % 300, part_count, parts);
    layout = composite;
    break;
  }
  case 4: {
    const gpusort_layout npy = GPUSORT_LAYOUT_NPY;
    layout = npy;
    break;
  }
  default: {
    const gpusort_layout fields = GPUSORT_LAYOUT_NPY_FIELDS(part_count, parts, field_names);
    layout = fields;
  }
  }
  gpusort_sort_options options = GPUSORT_SORT_OPTIONS_INIT;
  if (flags & 1) options.flags |= GPUSORT_DESCENDING;
  if (flags & 2) options.begin_bit = lo % 72, options.end_bit = hi % 72;
  if (flags & 4) options.flags |= 1u << (flags >> 3); /* a flag that may not apply */

  const uint8_t *file = data + header;
  const size_t file_bytes = size - header;
  const int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd < 0) abort();
  for (size_t done = 0; done < file_bytes;) {
    const ssize_t put = write(fd, file + done, file_bytes - done);
    if (put <= 0) abort();
    done += (size_t)put;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  gpusort_report report = GPUSORT_REPORT_INIT;
  const int status = gpusort_check_file(NULL, path, &layout, &options, &report);
  close(fd);
  if (gpusort_status_class(status) == GPUSORT_ERROR_RUNTIME && status != GPUSORT_ERROR_OUT_OF_MEMORY) {
    fprintf(stderr, "fuzz_files: a runtime failure on an in-memory file: %s\n", gpusort_last_error());
    abort();
  }

  /* The verdict on plain unsigned keys, all bits, with no stray flags. */
  const size_t widths[] = {[GPUSORT_U32] = 4, [GPUSORT_U64] = 8, [GPUSORT_U8] = 1, [GPUSORT_U16] = 2};
  const int plain = shape == 0 && !(flags & 6) && (unsigned)layout.key < sizeof widths / sizeof widths[0] &&
                    widths[layout.key] && !(file_bytes >= 6 && memcmp(file, "\x93NUMPY", 6) == 0);
  if (plain && file_bytes % widths[layout.key] == 0) {
    const int sorted = unsigned_keys_sorted(file, file_bytes, widths[layout.key], flags & 1);
    if (status != (sorted ? GPUSORT_OK : GPUSORT_ERROR_NOT_SORTED)) {
      fprintf(stderr, "fuzz_files: %zu-byte keys, %zu bytes: status %d, but they are %s: %s\n", widths[layout.key],
              file_bytes, status, sorted ? "sorted" : "not sorted", gpusort_last_error());
      abort();
    }
    if (status == GPUSORT_OK && report.records != file_bytes / widths[layout.key]) abort();
  }
  return 0;
}
