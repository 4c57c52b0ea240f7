/* Scratch files: temporary files that hold data out of core (a spilled stream, records
 * partitioned by key, the pieces of an out-of-core sort) and that no run can leave behind.
 *
 * A scratch file has no name: it is created with O_TMPFILE where the file system offers it,
 * else created and unlinked at once (registered meanwhile for gs_remove_temporary_files, so a
 * signal in between still removes it). Its space is freed when it is closed or when the
 * process ends, however it ends. */
#ifndef GS_IO_SCRATCH_H
#define GS_IO_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int fd;
  unsigned char *map; /* gs_scratch_reserve: the whole file, read-write */
  size_t bytes;       /* reserved (and mapped) */
  uint64_t appended;  /* gs_scratch_append: bytes written so far */
  char where[512];    /* "a temporary file in DIR", for messages */
} gs_scratch;

/* The directory scratch files go to: `temp_dir` if set, else the output's directory when the
 * output is a file (`output` may be NULL or "-"), else $TMPDIR, else /tmp. */
void gs_scratch_dir(const char *temp_dir, const char *output, char *dir, size_t size);

/* Creates an empty scratch file in `dir`. */
int gs_scratch_open(gs_scratch *s, const char *dir);

/* Allocates `bytes` for the file (failing now when the disk is full) and maps it read-write. */
int gs_scratch_reserve(gs_scratch *s, uint64_t bytes);

/* Writes data at the end of what was appended (for files whose size is not known ahead). */
int gs_scratch_append(gs_scratch *s, const void *data, size_t bytes);

void gs_scratch_close(gs_scratch *s);

#endif
