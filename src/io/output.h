/* Output files that never exist half-written.
 *
 * A named OUTPUT is written to a temporary file in its directory and renamed over OUTPUT only
 * when complete; on failure the temporary file is removed, and a program's signal handlers
 * remove those of outputs in progress with gs_remove_temporary_files(). "-" writes to
 * stdout, as do /dev/stdout, /dev/fd/N and /proc/self/fd/N to their descriptor (in its offset
 * and mode: a shell's `>>` appends); existing non-regular files (/dev/null, FIFOs) are written
 * in place; a symbolic link to a regular file is followed: the temporary file lies beside the
 * link's target and replaces it, and the link stays. */
#ifndef GS_IO_OUTPUT_H
#define GS_IO_OUTPUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "io/input.h"

typedef struct {
  const char *path; /* as given ("-" is stdout), or the target of a symbolic link (resolved) */
  char *resolved;   /* a symbolic link's target, while the output is open */
  const char *name; /* for messages */
  char *temp_path;  /* while a temporary file exists */
  int temp_slot;    /* its entry in the table gs_remove_temporary_files() reads; -1 if none */
  int fd;
  bool direct; /* stdout or a non-regular file: written in place */
  bool sync;   /* commit flushes the file and its directory to stable storage */
  unsigned long long written; /* bytes so far */
  unsigned char *map;         /* the reserved file, mapped for writing (gs_output_reserve) */
  size_t map_bytes;
  int map_slot;               /* the mapping's entry for gs_mapping_fault (io/input.h) */
  pthread_t populating;       /* gs_output_populate's thread, while it runs */
  bool populate_started;
  bool holds_replaced; /* the file the commit renamed over is held open in replaced_fd */
  int replaced_fd;     /* (see gs_output_take_replaced) */
} gs_output;

/* Checks made before any work: refuses an OUTPUT that is INPUT (same file, also through
 * links), an existing regular OUTPUT unless `force`, a directory, a symbolic link to nothing,
 * and binary data to a terminal unless `force`. `input` may be NULL. */
int gs_output_preflight(const char *path, bool force, const gs_input *input);

int gs_output_open(gs_output *out, const char *path);
/* Declares the output's final size before it is written. The file's blocks are allocated
 * at once (fallocate: a full disk fails here, before any work, and ext4 has no delayed
 * allocation to flush when the finished file replaces an existing one), and the file is
 * mapped, so that writes are copies into the page cache by several threads (about 12 GB/s on
 * 16 threads, against 3.5 GB/s for write() into one file, which the inode lock serializes).
 * Where the file system cannot allocate ahead, writes go through pwrite() instead. */
int gs_output_reserve(gs_output *out, unsigned long long bytes);

/* The reserved output's bytes, for writing records anywhere in it (NULL if not mapped), once
 * gs_output_populate is done with them. */
unsigned char *gs_output_map(gs_output *out);

/* Starts faulting in the reserved mapping's pages on other threads, while the caller does
 * other work (opening the device, reading, sorting): copies into it then find their pages in
 * place and run at memory speed, where page faults held an H100 host's 16 threads to 10 GB/s
 * (2 GB/s when each write covers 64 MiB). Writes wait for it to end. */
void gs_output_populate(gs_output *out);

/* Appends data. Large writes are split over several threads: copies into the mapping, or
 * pwrite at disjoint offsets. */
int gs_output_write(gs_output *out, const void *data, size_t bytes);

/* Completes the file: closes it and renames the temporary file over OUTPUT. With `sync`, the
 * data is flushed (fsync) before the rename and the directory entry after it, so OUTPUT
 * survives a power loss; without, that is left to the operating system, as cp leaves it. The
 * mapping stays (for the checksum still reading it) until gs_output_release. On failure the
 * caller calls gs_output_abort. */
int gs_output_commit(gs_output *out);

/* What a committed output leaves to let go of: its mapping, and the file the rename replaced,
 * held open so that its blocks are freed when it closes rather than inside rename() (ext4 took
 * 0.3 s a GiB on the GPU machine). Each takes a fraction of a second a GiB to release, which
 * may happen on another thread while other work goes on. */
typedef struct {
  unsigned char *map;
  size_t map_bytes;
  int replaced_fd; /* -1: none */
} gs_output_leftovers;

/* After a commit: hands the mapping and the replaced file over; the output holds neither. */
gs_output_leftovers gs_output_detach(gs_output *out);
void gs_output_leftovers_release(gs_output_leftovers *l);

/* After a commit: releases the leftovers here and now. */
void gs_output_release(gs_output *out);

/* Abandons the output: the temporary file is removed, OUTPUT is left as it was. */
void gs_output_abort(gs_output *out);

/* Removes the temporary files of every output in progress. Async-signal-safe. */
void gs_remove_temporary_files(void);

/* Creates the file `template` names (its last six characters XXXXXX replaced, as mkstemp
 * does), registered for gs_remove_temporary_files until gs_unlink_guarded_temp removes it.
 * Returns the descriptor, or -1 with errno set. */
int gs_create_guarded_temp(char *template);
void gs_unlink_guarded_temp(const char *path);

#endif
