/* Input files: regular files are memory-mapped (read-only; the input is never modified);
 * stdin and other streams (pipes, FIFOs) are read in chunks into host memory. */
#ifndef GS_IO_INPUT_H
#define GS_IO_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "io/scratch.h"

typedef struct {
  const char *path;    /* as given; "-" is stdin */
  const char *name;    /* for messages: the path, or "stdin" */
  const unsigned char *data;
  size_t bytes;
  bool is_stream;      /* read from a pipe/stdin rather than mapped */
  bool is_regular;     /* a regular file: `st` identifies it */
  struct stat st;
  void *mapping;       /* what to munmap */
  void *heap;          /* what to free */
  int fd;
  int data_fd;         /* a file holding `data` for pread (the input, or its spill); -1 if none */
  uint64_t data_offset; /* where `data` starts in data_fd (after a .npy header) */
  size_t mapping_bytes;
  int mapping_slot;    /* the mapping's entry for gs_mapping_fault; -1 if none */
  gs_scratch spill;    /* a stream too large for memory, written out */
  double spill_seconds;
} gs_input;

/* Opens INPUT. Regular files are mapped at once; streams are left open for gs_input_read_stream
 * so the caller can bound their size first. Missing or unreadable files are runtime errors. */
int gs_input_open(gs_input *in, const char *path);

/* Reads a stream to its end: into host memory while it stays within memory_bytes; past that,
 * all of it goes to a scratch file in spill_dir (src/io/scratch.h), which is then mapped like
 * a regular input. No-op for mapped files. */
int gs_input_read_stream(gs_input *in, uint64_t memory_bytes, const char *spill_dir);

/* Standard input read ahead, for a look at a stream's first bytes (a .npy header) before a job
 * reads it: at least `bytes` of what stdin holds from the point not yet taken (fewer at its
 * end) are buffered and shown in *data, *got. gs_stdin_take drops the first `bytes` of them;
 * gs_input_read_stream hands out the rest before it reads on. (One per process, as stdin.) */
int gs_stdin_peek(size_t bytes, const unsigned char **data, size_t *got);
void gs_stdin_take(size_t bytes);
/* How many times the read-ahead has been handed out in full (what was peeked at is gone). */
unsigned gs_stdin_generation(void);

/* read(2) of a stream, stdin's read-ahead bytes first; retried on EINTR. */
ssize_t gs_input_read(gs_input *in, void *buf, size_t bytes);

/* Brings a mapped input into memory ahead of use (page faults now rather than during the
 * copy to the GPU). No-op for streams. */
void gs_input_prefault(gs_input *in);

/* Skips the first `bytes` of a mapped input (a .npy header): data, bytes and data_offset
 * then describe what follows. */
void gs_input_skip(gs_input *in, uint64_t bytes);

/* Usage error unless the size is a whole number of `width`-byte records. */
int gs_input_check_width(const gs_input *in, unsigned width, const char *what);

void gs_input_close(gs_input *in);

/* File mappings whose faults a SIGBUS handler can explain: a file truncated by another process
 * while mapped, or storage that failed, faults (SIGBUS) where its pages are touched. A mapping
 * of `bytes` at `begin` is registered with the one-line message for a fault in it; returns its
 * slot for gs_unguard_mapping, or -1 where the table is full (that mapping goes unexplained). */
int gs_guard_mapping(const void *begin, size_t bytes, const char *message);
void gs_unguard_mapping(int slot);
/* The message of the registered mapping that holds `address`, or NULL. Async-signal-safe. */
const char *gs_mapping_fault(const void *address);

#endif
