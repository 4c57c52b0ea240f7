/* libFuzzer target: .npy headers (src/io/npy.c). An input is a whole file's bytes, placed to
 * end where an inaccessible page begins, as a mapped file ends where its mapping does: a read
 * past the end faults even inside libc (strtoull), where AddressSanitizer does not look.
 *
 * A header gs_npy_parse accepts must describe the file (the data after it is count elements
 * of itemsize bytes, every field inside an element), resolve to a layout as a sort would
 * (the whole file's layout, or its first fields named as keys), and survive the round trip a
 * sort's output takes: the header gs_npy_header writes for the same dtype and count parses
 * back to the same dtype, count and fields. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/layout.h"
#include "io/npy.h"

#define EXPECT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz_npy: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Resolves the header as `gpusort FILE` (layout from the file) and as `--key FIELD ...` with
 * up to the first three fields named; either may refuse, neither may crash. */
static void resolve_layouts(const gs_npy *npy) {
  const gpusort_layout from_file = GPUSORT_LAYOUT_NPY;
  gs_layout l;
  if (gs_layout_from_public(&from_file, &l) == GPUSORT_OK) (void)gs_layout_resolve_npy(&l, npy, "fuzz.npy");
  if (!npy->structured || npy->field_count == 0) return;
  const unsigned named = npy->field_count < 3 ? npy->field_count : 3;
  gpusort_key_part parts[3] = {{0}};
  const char *names[3];
  for (unsigned i = 0; i < named; i++) {
    names[i] = npy->fields[i].name;
    parts[i].flags = i == 1 ? GPUSORT_KEY_DESCENDING : 0;
  }
  const gpusort_layout by_fields = GPUSORT_LAYOUT_NPY_FIELDS(named, parts, names);
  if (gs_layout_from_public(&by_fields, &l) == GPUSORT_OK) (void)gs_layout_resolve_npy(&l, npy, "fuzz.npy");
}

static void round_trip(const gs_npy *npy, const uint8_t *data, size_t size) {
  const size_t data_bytes = size - (size_t)npy->header_bytes;
  unsigned char header[GS_NPY_DESCR_BYTES + 256];
  const size_t header_bytes = gs_npy_header(npy->descr, npy->count, header, sizeof header);
  EXPECT(header_bytes > 0 && header_bytes % 64 == 0);
  unsigned char *file = malloc(header_bytes + data_bytes);
  EXPECT(file);
  memcpy(file, header, header_bytes);
  if (data_bytes) memcpy(file + header_bytes, data + npy->header_bytes, data_bytes);
  gs_npy *again = malloc(sizeof *again);
  EXPECT(again);
  EXPECT(gs_npy_parse(file, header_bytes + data_bytes, "written.npy", again) == GPUSORT_OK);
  EXPECT(again->header_bytes == header_bytes);
  EXPECT(again->count == npy->count && again->itemsize == npy->itemsize);
  EXPECT(again->structured == npy->structured && again->field_count == npy->field_count);
  EXPECT(strcmp(again->descr, npy->descr) == 0);
  for (unsigned i = 0; i < npy->field_count; i++) {
    EXPECT(strcmp(again->fields[i].name, npy->fields[i].name) == 0);
    EXPECT(again->fields[i].offset == npy->fields[i].offset && again->fields[i].bytes == npy->fields[i].bytes);
    EXPECT(again->fields[i].type == npy->fields[i].type);
  }
  free(again);
  free(file);
}

/* A copy of data[0..size) that ends at the start of an inaccessible page. */
static uint8_t *copy_before_guard_page(const uint8_t *data, size_t size, void **mapping, size_t *mapped) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (size + page - 1) / page;
  *mapped = (pages + 1) * page;
  *mapping = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT(*mapping != MAP_FAILED);
  uint8_t *guard = (uint8_t *)*mapping + pages * page;
  EXPECT(mprotect(guard, page, PROT_NONE) == 0);
  if (size) memcpy(guard - size, data, size);
  return guard - size;
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size) {
  void *mapping;
  size_t mapped;
  const uint8_t *data = copy_before_guard_page(input, size, &mapping, &mapped);
  gs_npy *npy = malloc(sizeof *npy); /* on the heap: AddressSanitizer bounds it exactly */
  EXPECT(npy);
  if (gs_npy_parse(data, size, "fuzz.npy", npy) == GPUSORT_OK) {
    EXPECT(npy->header_bytes <= size && npy->itemsize > 0);
    EXPECT(npy->count * npy->itemsize == size - npy->header_bytes);
    for (unsigned i = 0; i < npy->field_count; i++)
      EXPECT(npy->fields[i].offset + npy->fields[i].bytes <= npy->itemsize);
    resolve_layouts(npy);
    round_trip(npy, data, size);
  }
  free(npy);
  munmap(mapping, mapped);
  return 0;
}
