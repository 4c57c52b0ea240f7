#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/format.h"
#include "util/clock.h"
#include "util/parallel.h"
#include "util/trace.h"

/* Temporary files of outputs in progress, for gs_remove_temporary_files(), which signal handlers
 * call: a fixed table whose slots a handler can read at any moment (a slot's path is complete
 * before its flag is set). */
enum { TEMP_SLOTS = 64 };
static struct {
  char path[PATH_MAX + 64];
  volatile sig_atomic_t used;
} temp_files[TEMP_SLOTS];
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

void gs_remove_temporary_files(void) {
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (temp_files[i].used) unlink(temp_files[i].path);
}

static int guard_temp(const char *path) {
  pthread_mutex_lock(&temp_lock);
  int slot = -1;
  for (int i = 0; i < TEMP_SLOTS && slot < 0; i++)
    if (!temp_files[i].used) slot = i;
  if (slot >= 0) {
    snprintf(temp_files[slot].path, sizeof temp_files[slot].path, "%s", path);
    temp_files[slot].used = 1;
  }
  pthread_mutex_unlock(&temp_lock);
  return slot; /* -1: more outputs at once than the table holds; that one goes unguarded */
}

static void unguard_temp(int slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&temp_lock);
  temp_files[slot].used = 0;
  pthread_mutex_unlock(&temp_lock);
}

/* Six random letters or digits for a temporary name (`attempt` varies them where getrandom
 * cannot). */
static void random_suffix(char *out, int attempt) {
  static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char r[6];
  if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    const uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ull + (uint64_t)getpid() * 1442695040888963407ull +
                       (uint64_t)attempt;
    memcpy(r, &x, sizeof r);
  }
  for (int i = 0; i < 6; i++) out[i] = letters[r[i] % (sizeof letters - 1)];
}

int gs_create_guarded_temp(char *template) {
  const size_t len = strlen(template);
  if (len < 6) {
    errno = EINVAL;
    return -1;
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    random_suffix(template + len - 6, attempt);
    const int slot = guard_temp(template);
    const int fd = open(template, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    const int err = errno;
    unguard_temp(slot);
    if (err != EEXIST) {
      errno = err;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
}

void gs_unlink_guarded_temp(const char *path) {
  unlink(path);
  pthread_mutex_lock(&temp_lock);
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (temp_files[i].used && strcmp(temp_files[i].path, path) == 0) temp_files[i].used = 0;
  pthread_mutex_unlock(&temp_lock);
}

/* The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names ("-": 1);
 * -1 for any other path. Such an output is written through the descriptor itself: opened
 * again by name it would start at offset 0 (over what a `>>` appends to), and a regular file
 * behind it would be replaced by a rename rather than written. */
static int standard_descriptor(const char *path) {
  if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0) return STDOUT_FILENO;
  if (strcmp(path, "/dev/stderr") == 0) return STDERR_FILENO;
  const char *digits = strncmp(path, "/dev/fd/", 8) == 0         ? path + 8
                       : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                                  : NULL;
  if (!digits || *digits < '0' || *digits > '9') return -1;
  char *end;
  const long fd = strtol(digits, &end, 10);
  return *end == '\0' && fd <= INT_MAX ? (int)fd : -1;
}

int gs_output_preflight(const char *path, bool force, const gs_input *input) {
  const int standard = standard_descriptor(path);
  struct stat st;
  if (standard >= 0) {
    const char *name = strcmp(path, "-") == 0 ? "stdout" : path;
    if (input && input->is_regular && fstat(standard, &st) == 0 && st.st_dev == input->st.st_dev &&
        st.st_ino == input->st.st_ino) /* (`gpusort in.bin - >> in.bin`) */
      return gs_fail(GPUSORT_ERROR_OUTPUT_IS_INPUT, "%s is the input file %s: refusing to write to the input", name,
                     input->name);
    if (isatty(standard) && !force)
      return gs_fail(GPUSORT_ERROR_OUTPUT_IS_TERMINAL, "%s is a terminal: refusing to write binary data there", name);
    return GPUSORT_OK;
  }
  if (stat(path, &st) != 0) {
    if (errno != ENOENT) return gs_fail(GPUSORT_ERROR_IO, "cannot stat %s: %s", path, strerror(errno));
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
      return gs_fail(GPUSORT_ERROR_USAGE, "%s is a symbolic link to a file that does not exist", path);
    return GPUSORT_OK;
  }
  if (input && input->is_regular && st.st_dev == input->st.st_dev && st.st_ino == input->st.st_ino)
    return gs_fail(GPUSORT_ERROR_OUTPUT_IS_INPUT, "%s is the input file %s: refusing to overwrite the input", path, input->name);
  if (S_ISDIR(st.st_mode)) return gs_fail(GPUSORT_ERROR_USAGE, "%s is a directory", path);
  if (S_ISREG(st.st_mode) && !force) return gs_fail(GPUSORT_ERROR_OUTPUT_EXISTS, "%s already exists", path);
  return GPUSORT_OK;
}

/* Creates ".BASE.gpusort-XXXXXX" beside the output, registered for removal before it exists,
 * so that no moment passes in which a signal would leave it behind. Returns 0 or an errno. */
static int create_temp(gs_output *out, int dir_len, const char *base) {
  const size_t size = strlen(out->path) + 32;
  for (int attempt = 0; attempt < 100; attempt++) {
    char suffix[7];
    random_suffix(suffix, attempt);
    suffix[6] = '\0';
    snprintf(out->temp_path, size, "%.*s.%s.gpusort-%s", dir_len, out->path, base, suffix);
    out->temp_slot = guard_temp(out->temp_path);
    /* 0666 less the umask: the permissions a new file gets; read too, which a shared
     * writable mapping of it needs */
    out->fd = open(out->temp_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (out->fd >= 0) return 0;
    const int err = errno;
    unguard_temp(out->temp_slot);
    out->temp_slot = -1;
    if (err != EEXIST) return err;
  }
  return EEXIST;
}

int gs_output_open(gs_output *out, const char *path) {
  memset(out, 0, sizeof *out);
  out->fd = -1;
  out->temp_slot = -1;
  out->map_slot = -1;
  out->path = path;
  out->name = path;
  const int standard = standard_descriptor(path);
  if (standard == STDOUT_FILENO) {
    out->name = strcmp(path, "-") == 0 ? "stdout" : path;
    out->fd = STDOUT_FILENO;
    out->direct = true;
    return GPUSORT_OK;
  }
  if (standard >= 0) { /* (a descriptor of its own, which the commit closes) */
    out->fd = fcntl(standard, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (out->fd < 0) return gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s", path, strerror(errno));
    out->direct = true;
    return GPUSORT_OK;
  }
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    /* the link's target is replaced, and the link stays */
    if (!(out->resolved = realpath(path, NULL)))
      return gs_fail(GPUSORT_ERROR_IO, "cannot follow the link %s: %s", path, strerror(errno));
    path = out->path = out->resolved;
  }
  int rc = GPUSORT_OK;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    out->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (out->fd < 0) return gs_fail(GPUSORT_ERROR_IO, "cannot open %s: %s", path, strerror(errno));
    out->direct = true;
  } else if (!(out->temp_path = malloc(strlen(path) + 32))) {
    rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  } else {
    const char *slash = strrchr(path, '/');
    const int err = create_temp(out, slash ? (int)(slash - path + 1) : 0, slash ? slash + 1 : path);
    if (out->fd < 0) {
      free(out->temp_path);
      out->temp_path = NULL;
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot create a file beside %s: %s", path, strerror(err));
    }
  }
  if (rc != GPUSORT_OK) {
    free(out->resolved);
    out->resolved = NULL;
  }
  return rc;
}

/* write() or pwrite() until done; returns 0 or an errno value. */
static int write_all(int fd, const unsigned char *p, size_t bytes, off_t offset, bool positioned) {
  while (bytes > 0) {
    ssize_t put = positioned ? pwrite(fd, p, bytes, offset) : write(fd, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return errno;
    if (put == 0) return EIO;
    p += put, offset += put;
    bytes -= (size_t)put;
  }
  return 0;
}

typedef struct {
  int fd;
  const unsigned char *data;
  off_t base;
  int error[64];
} pwrite_job;

static void pwrite_range(void *arg, size_t begin, size_t end, unsigned worker) {
  pwrite_job *job = arg;
  int e = write_all(job->fd, job->data + begin, end - begin, job->base + (off_t)begin, true);
  if (e && !job->error[worker]) job->error[worker] = e;
}

int gs_output_reserve(gs_output *out, unsigned long long bytes) {
  if (out->direct || out->fd < 0 || bytes == 0 || out->map) return GPUSORT_OK;
  int e = posix_fallocate(out->fd, 0, (off_t)bytes);
  if (e == ENOSPC || e == EFBIG || e == EDQUOT) {
    char pretty[32];
    gs_format_bytes(pretty, sizeof pretty, bytes);
    return gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s (it needs %s)", out->name, strerror(e), pretty);
  }
  if (e) { /* no allocation ahead on this file system: pwrite() it is */
    gs_trace("output written with pwrite(): posix_fallocate: %s", strerror(e));
    return GPUSORT_OK;
  }
  void *map = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, 0);
  if (map == MAP_FAILED) {
    gs_trace("output written with pwrite(): mmap: %s", strerror(errno));
    return GPUSORT_OK;
  }
  out->map = map;
  out->map_bytes = (size_t)bytes;
  /* its blocks are allocated, so a fault writing it means the storage failed (or another
   * process truncated the file) */
  char message[PATH_MAX + 128];
  snprintf(message, sizeof message, "cannot write %s: its storage failed while it was being written", out->name);
  out->map_slot = gs_guard_mapping(map, out->map_bytes, message);
  return GPUSORT_OK;
}


/* A write fault on each page that changes nothing (an atomic add of 0). Not
 * madvise(MADV_POPULATE_WRITE): that holds the process's mmap lock through each call, and the
 * Vulkan driver, mapping memory while the device opens beside this, waited for it (the open
 * took 100 ms longer on the GPU machine); single faults, under a kernel's per-VMA locks, hold
 * it up far less (20 to 30 ms). */
static void populate_range(void *arg, size_t begin, size_t end, unsigned worker) {
  (void)worker;
  unsigned char *map = arg;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (size_t p = begin & ~(page - 1); p < end; p += page) __atomic_fetch_add(map + p, 0, __ATOMIC_RELAXED);
}

/* Four threads: on the GPU machine (ext4), 16 threads faulting one file's pages took 120 to
 * 145 ms a GiB and 4 threads 86, the rest being contention in the file system and the page
 * cache; each thread takes one long range. */
enum { POPULATE_THREADS = 4 };

static void *populate_all(void *arg) {
  gs_output *out = arg;
  const double t0 = gs_now();
  const size_t grain = out->map_bytes / POPULATE_THREADS + 1;
  gs_parallel_for(out->map_bytes, grain < ((size_t)16 << 20) ? (size_t)16 << 20 : grain, populate_range, out->map);
  gs_trace("output's %zu MiB faulted in (%.1f ms)", out->map_bytes >> 20, (gs_now() - t0) * 1e3);
  return NULL;
}

void gs_output_populate(gs_output *out) {
  if (!out->map || out->populate_started) return;
  out->populate_started = pthread_create(&out->populating, NULL, populate_all, out) == 0;
}

static void wait_populate(gs_output *out) {
  if (!out->populate_started) return;
  const double t0 = gs_now();
  pthread_join(out->populating, NULL);
  gs_trace("waited %.1f ms for the output's pages", (gs_now() - t0) * 1e3);
  out->populate_started = false;
}

unsigned char *gs_output_map(gs_output *out) {
  wait_populate(out);
  return out->map;
}

int gs_output_write(gs_output *out, const void *data, size_t bytes) {
  int e = 0;
  wait_populate(out);
  if (out->map && out->written + bytes <= out->map_bytes) {
    if ((const unsigned char *)data != out->map + out->written) /* already in place */
      gs_parallel_memcpy(out->map + out->written, data, bytes);
  } else if (out->direct) {
    e = write_all(out->fd, data, bytes, 0, false); /* a stream: in order */
  } else if (bytes < ((size_t)8 << 20)) {
    e = write_all(out->fd, data, bytes, (off_t)out->written, true);
  } else {
    pwrite_job job = {.fd = out->fd, .data = data, .base = (off_t)out->written};
    gs_parallel_for(bytes, (size_t)4 << 20, pwrite_range, &job);
    for (int w = 0; w < 64 && !e; w++) e = job.error[w];
  }
  if (e) return gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s", out->name, strerror(e));
  out->written += bytes;
  return GPUSORT_OK;
}

/* Flushes the directory entry of a renamed file (best effort: some file systems refuse). */
static void sync_directory_of(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

/* Opens the file a rename is about to replace, so that its blocks are released when the
 * descriptor closes (gs_output_take_replaced), not inside rename(): freeing a written GiB took
 * ext4 0.3 s on the GPU machine. -1 where there is none. */
static int hold_replaced(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

int gs_output_commit(gs_output *out) {
  int rc = GPUSORT_OK;
  /* a reservation larger than what was written (never by design): drop the tail */
  if (out->map && out->written < out->map_bytes) {
    wait_populate(out);
    if (ftruncate(out->fd, (off_t)out->written) != 0)
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s", out->name, strerror(errno));
  }
  if (rc != GPUSORT_OK) {
  } else if (out->fd == STDOUT_FILENO) {
    /* nothing buffered in stdio: writes went straight to the descriptor */
  } else if (out->fd >= 0) {
    /* fsync also writes the pages dirtied through the mapping */
    if (out->sync && fsync(out->fd) != 0 && errno != EINVAL)
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot flush %s to storage: %s", out->name, strerror(errno));
    const double t0 = gs_now();
    if (close(out->fd) != 0 && rc == GPUSORT_OK)
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s", out->name, strerror(errno));
    gs_trace("output closed (%.1f ms)", (gs_now() - t0) * 1e3);
    out->fd = -1;
  }
  if (rc == GPUSORT_OK && out->temp_path) {
    const int replaced = hold_replaced(out->path);
    gs_trace("renaming the output");
    if (rename(out->temp_path, out->path) != 0) {
      rc = gs_fail(GPUSORT_ERROR_IO, "cannot rename the finished output to %s: %s", out->path, strerror(errno));
      if (replaced >= 0) close(replaced);
    } else {
      out->replaced_fd = replaced;
      out->holds_replaced = replaced >= 0;
      if (out->sync) sync_directory_of(out->path);
    }
  }
  if (rc != GPUSORT_OK) return rc; /* the caller aborts */
  if (out->temp_path) gs_trace("output renamed");
  free(out->temp_path);
  out->temp_path = NULL;
  unguard_temp(out->temp_slot);
  out->temp_slot = -1;
  free(out->resolved);
  out->resolved = NULL;
  return GPUSORT_OK;
}

gs_output_leftovers gs_output_detach(gs_output *out) {
  wait_populate(out);
  if (out->map) gs_unguard_mapping(out->map_slot); /* (never reserved: map_slot may be 0) */
  out->map_slot = -1;
  gs_output_leftovers l = {out->map, out->map_bytes, out->holds_replaced ? out->replaced_fd : -1};
  out->map = NULL;
  out->map_bytes = 0;
  out->holds_replaced = false;
  return l;
}

void gs_output_leftovers_release(gs_output_leftovers *l) {
  const double t0 = gs_now();
  if (l->map) munmap(l->map, l->map_bytes);
  if (l->map) gs_trace("output unmapped (%.1f ms)", (gs_now() - t0) * 1e3);
  if (l->replaced_fd >= 0) {
    close(l->replaced_fd);
    gs_trace("replaced file released (%.1f ms)", (gs_now() - t0) * 1e3);
  }
  *l = (gs_output_leftovers){NULL, 0, -1};
}

void gs_output_release(gs_output *out) {
  gs_output_leftovers l = gs_output_detach(out);
  gs_output_leftovers_release(&l);
}

void gs_output_abort(gs_output *out) {
  gs_output_release(out);
  if (out->fd > STDERR_FILENO) close(out->fd);
  out->fd = -1;
  if (out->temp_path) {
    unlink(out->temp_path);
    free(out->temp_path);
    out->temp_path = NULL;
    unguard_temp(out->temp_slot);
  }
  free(out->resolved);
  out->resolved = NULL;
}
