#include "util/pages.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

int gs_pages_alloc(gs_pages *p, size_t bytes) {
  memset(p, 0, sizeof *p);
  const size_t A = GS_PAGES_ALIGNMENT;
  if (bytes == 0) bytes = 1;
  if (bytes > SIZE_MAX - 2 * A) return -1;
  const size_t usable = (bytes + A - 1) / A * A, map_bytes = usable + A; /* room to align the start */
  void *map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return -1;
  const uintptr_t start = ((uintptr_t)map + A - 1) / A * A;
#ifdef MADV_HUGEPAGE
  madvise((void *)start, usable, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
  *p = (gs_pages){.data = (void *)start, .bytes = usable, .map = map, .map_bytes = map_bytes};
  return 0;
}

void gs_pages_free(gs_pages *p) {
  if (p->map) munmap(p->map, p->map_bytes);
  memset(p, 0, sizeof *p);
}
