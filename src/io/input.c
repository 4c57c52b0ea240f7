#include "io/input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

/* Registered mappings, for gs_mapping_fault(), which signal handlers call: a fixed table whose
 * slots a handler can read at any moment (a slot's range and message are complete before its
 * flag is set, and its flag is cleared before they change). */
enum { MAPPING_SLOTS = 64 };
static struct {
  const unsigned char *begin, *end;
  char message[PATH_MAX + 128];
  int used; /* read and written atomically */
} mappings[MAPPING_SLOTS];
static pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;

int gs_guard_mapping(const void *begin, size_t bytes, const char *message) {
  pthread_mutex_lock(&mappings_lock);
  int slot = -1;
  for (int i = 0; i < MAPPING_SLOTS && slot < 0; i++)
    if (!__atomic_load_n(&mappings[i].used, __ATOMIC_RELAXED)) slot = i;
  if (slot >= 0) {
    mappings[slot].begin = begin;
    mappings[slot].end = (const unsigned char *)begin + bytes;
    snprintf(mappings[slot].message, sizeof mappings[slot].message, "%s", message);
    __atomic_store_n(&mappings[slot].used, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&mappings_lock);
  return slot;
}

void gs_unguard_mapping(int slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&mappings_lock);
  __atomic_store_n(&mappings[slot].used, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&mappings_lock);
}

const char *gs_mapping_fault(const void *address) {
  const unsigned char *a = address;
  for (int i = 0; i < MAPPING_SLOTS; i++)
    if (__atomic_load_n(&mappings[i].used, __ATOMIC_ACQUIRE) && a >= mappings[i].begin && a < mappings[i].end)
      return mappings[i].message;
  return NULL;
}

static struct {
  pthread_mutex_t lock;
  unsigned char *data;
  size_t bytes, at;    /* buffered, and taken of those */
  unsigned generation; /* read ahead and handed out in full so far: a new look each time */
} ahead = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

int gs_stdin_peek(size_t bytes, const unsigned char **data, size_t *got) {
  pthread_mutex_lock(&ahead.lock);
  int rc = GPUSORT_OK;
  if (ahead.bytes - ahead.at < bytes) {
    unsigned char *grown = realloc(ahead.data, ahead.at + bytes);
    if (!grown) rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory reading stdin");
    else ahead.data = grown;
    while (!rc && ahead.bytes - ahead.at < bytes) {
      const ssize_t n = read(STDIN_FILENO, ahead.data + ahead.bytes, ahead.at + bytes - ahead.bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) rc = gs_fail(GPUSORT_ERROR_IO, "cannot read stdin: %s", strerror(errno));
      if (n <= 0) break;
      ahead.bytes += (size_t)n;
    }
  }
  *data = ahead.data ? ahead.data + ahead.at : NULL;
  *got = ahead.bytes - ahead.at;
  pthread_mutex_unlock(&ahead.lock);
  return rc;
}

void gs_stdin_take(size_t bytes) {
  pthread_mutex_lock(&ahead.lock);
  ahead.at += bytes < ahead.bytes - ahead.at ? bytes : ahead.bytes - ahead.at;
  pthread_mutex_unlock(&ahead.lock);
}

ssize_t gs_input_read(gs_input *in, void *buf, size_t bytes) {
  if (in->fd == STDIN_FILENO) { /* first what was read ahead */
    pthread_mutex_lock(&ahead.lock);
    size_t n = ahead.bytes - ahead.at;
    if (n > bytes) n = bytes;
    if (n) memcpy(buf, ahead.data + ahead.at, n);
    ahead.at += n;
    if (ahead.data && ahead.at == ahead.bytes) { /* all handed out: the stream reads on */
      free(ahead.data);
      ahead.data = NULL;
      ahead.bytes = ahead.at = 0;
      ahead.generation++;
    }
    pthread_mutex_unlock(&ahead.lock);
    if (n) return (ssize_t)n;
  }
  for (;;) {
    const ssize_t got = read(in->fd, buf, bytes);
    if (got >= 0 || errno != EINTR) return got;
  }
}

unsigned gs_stdin_generation(void) {
  pthread_mutex_lock(&ahead.lock);
  const unsigned g = ahead.generation;
  pthread_mutex_unlock(&ahead.lock);
  return g;
}

int gs_input_open(gs_input *in, const char *path) {
  memset(in, 0, sizeof *in);
  in->fd = -1;
  in->data_fd = -1;
  in->mapping_slot = -1;
  in->spill.fd = -1;
  in->path = path;
  in->name = strcmp(path, "-") == 0 ? "stdin" : path;
  if (strcmp(path, "-") == 0) {
    in->fd = STDIN_FILENO;
  } else {
    in->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0) return gs_fail(GPUSORT_ERROR_IO, "cannot open %s: %s", path, strerror(errno));
  }
  if (fstat(in->fd, &in->st) != 0) return gs_fail(GPUSORT_ERROR_IO, "cannot stat %s: %s", in->name, strerror(errno));
  if (S_ISDIR(in->st.st_mode)) return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s is a directory", in->name);
  in->is_regular = S_ISREG(in->st.st_mode);
  if (!in->is_regular) {
    in->is_stream = true;
    return GPUSORT_OK;
  }
  in->bytes = (size_t)in->st.st_size;
  if (in->bytes == 0) return GPUSORT_OK;
  in->mapping = mmap(NULL, in->bytes, PROT_READ, MAP_PRIVATE, in->fd, 0);
  if (in->mapping == MAP_FAILED) {
    in->mapping = NULL;
    return gs_fail(GPUSORT_ERROR_IO, "cannot map %s: %s", in->name, strerror(errno));
  }
  in->mapping_bytes = in->bytes;
  /* read through the mapping, an input another process truncates faults: say which, and why */
  char message[PATH_MAX + 128];
  snprintf(message, sizeof message, "cannot read %s: it became shorter while being read, or its storage failed",
           in->name);
  in->mapping_slot = gs_guard_mapping(in->mapping, in->bytes, message);
  madvise(in->mapping, in->bytes, MADV_SEQUENTIAL);
  madvise(in->mapping, in->bytes, MADV_WILLNEED);
  in->data = in->mapping;
  in->data_fd = in->fd;
  return GPUSORT_OK;
}

/* Past memory_bytes: what was read so far and the rest of the stream go to a scratch file,
 * which becomes the input's data. */
static int spill_stream(gs_input *in, unsigned char *buf, size_t len, size_t cap, const char *spill_dir) {
  const double start = gs_now();
  int rc = gs_scratch_open(&in->spill, spill_dir);
  if (!rc) rc = gs_scratch_append(&in->spill, buf, len);
  bool reading = false;
  while (!rc) {
    ssize_t got = gs_input_read(in, buf, cap);
    if (got < 0) {
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", in->name, strerror(errno));
      reading = true;
      break;
    }
    if (got == 0) break;
    rc = gs_scratch_append(&in->spill, buf, (size_t)got);
  }
  free(buf);
  if (rc && !reading) { /* say why a temporary file was written at all */
    char message[1024];
    snprintf(message, sizeof message, "%s", gs_last_error());
    return gs_fail(rc, "%s is larger than the memory budget and could not be spilled to disk: %s", in->name,
                   message);
  }
  if (rc) return rc;
  in->bytes = (size_t)in->spill.appended;
  in->data_fd = in->spill.fd;
  if (in->bytes) {
    in->mapping = mmap(NULL, in->bytes, PROT_READ, MAP_SHARED, in->spill.fd, 0);
    if (in->mapping == MAP_FAILED) {
      in->mapping = NULL;
      return gs_fail(GPUSORT_ERROR_IO, "cannot map %s: %s", in->spill.where, strerror(errno));
    }
    in->data = in->mapping;
    in->mapping_bytes = in->bytes;
  }
  in->spill_seconds = gs_now() - start;
  return GPUSORT_OK;
}

int gs_input_read_stream(gs_input *in, uint64_t memory_bytes, const char *spill_dir) {
  if (!in->is_stream || in->data || in->spill.fd >= 0) return GPUSORT_OK;
#ifdef F_SETPIPE_SZ
  fcntl(in->fd, F_SETPIPE_SZ, 1 << 20); /* fewer, larger reads from pipes; best effort */
#endif
  size_t cap = 1 << 20, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory reading %s", in->name);
  for (;;) {
    if (len == cap) {
      if (len >= memory_bytes) return spill_stream(in, buf, len, cap, spill_dir);
      size_t grown = cap * 2 < memory_bytes ? cap * 2 : (size_t)memory_bytes;
      if (grown <= cap) grown = cap + 1;
      unsigned char *p = realloc(buf, grown);
      if (!p) return spill_stream(in, buf, len, cap, spill_dir); /* memory is short: to disk */
      buf = p, cap = grown;
    }
    ssize_t got = gs_input_read(in, buf + len, cap - len);
    if (got < 0) {
      free(buf);
      return gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", in->name, strerror(errno));
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  in->heap = buf;
  in->data = buf;
  in->bytes = len;
  return GPUSORT_OK;
}

typedef struct {
  const volatile unsigned char *data;
} touch_job;

static void touch_pages(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  touch_job *job = arg;
  unsigned sum = 0;
  for (size_t i = begin; i < end; i += 4096) sum += job->data[i];
  (void)sum;
}

void gs_input_prefault(gs_input *in) {
  /* Runs before the device's limit is known: never for more than any device can take in
   * one buffer (a binding addresses at most 4 GiB - 1), so a huge input is refused quickly. */
  if (!in->mapping || in->bytes > 0xFFFFFFFFull) return;
#ifdef MADV_POPULATE_READ
  if (madvise(in->mapping, in->bytes, MADV_POPULATE_READ) == 0) return;
#endif
  touch_job job = {in->data};
  gs_parallel_for(in->bytes, (size_t)16 << 20, touch_pages, &job);
}

int gs_input_check_width(const gs_input *in, unsigned width, const char *what) {
  if (in->bytes % width == 0) return GPUSORT_OK;
  return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: size %zu bytes is not a multiple of %u, the size of %s", in->name, in->bytes,
                 width, what);
}

void gs_input_skip(gs_input *in, uint64_t bytes) {
  if (bytes > in->bytes) bytes = in->bytes;
  in->data += bytes;
  in->bytes -= (size_t)bytes;
  in->data_offset += bytes;
}

void gs_input_close(gs_input *in) {
  if (in->mapping) gs_unguard_mapping(in->mapping_slot); /* (never opened: mapping_slot may be 0) */
  if (in->mapping) munmap(in->mapping, in->mapping_bytes);
  free(in->heap);
  if (in->fd > STDERR_FILENO) close(in->fd);
  if (in->spill.fd >= 0) gs_scratch_close(&in->spill);
  memset(in, 0, sizeof *in);
  in->fd = -1;
  in->data_fd = -1;
  in->mapping_slot = -1;
  in->spill.fd = -1;
}
