/* Large host arrays in whole pages, aligned so that a device can import them
 * (VK_EXT_external_memory_host) and read or write them in place: no staging copy. */
#ifndef GS_UTIL_PAGES_H
#define GS_UTIL_PAGES_H

#include <stddef.h>

typedef struct {
  void *data;   /* aligned to GS_PAGES_ALIGNMENT; NULL when not allocated */
  size_t bytes; /* usable: what was asked, rounded up to GS_PAGES_ALIGNMENT */
  void *map;    /* the mapping behind it, and its length */
  size_t map_bytes;
} gs_pages;

/* 2 MiB: a multiple of every import alignment seen (4 KiB to 64 KiB), and a huge page, which
 * makes both faulting the array in and pinning it for the device cheaper. */
#define GS_PAGES_ALIGNMENT ((size_t)2 << 20)

/* Anonymous, zero-filled memory of at least `bytes` (at least one page); 0 or -1. */
int gs_pages_alloc(gs_pages *p, size_t bytes);
void gs_pages_free(gs_pages *p);

#endif
