#include "io/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/output.h"
#include "util/error.h"
#include "util/format.h"

void gs_scratch_dir(const char *temp_dir, const char *output, char *dir, size_t size) {
  if (temp_dir && *temp_dir) {
    snprintf(dir, size, "%s", temp_dir);
    return;
  }
  if (output && strcmp(output, "-") != 0) {
    const char *slash = strrchr(output, '/');
    if (!slash)
      snprintf(dir, size, ".");
    else
      snprintf(dir, size, "%.*s", slash == output ? 1 : (int)(slash - output), output);
    return;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, size, "%s", tmp && *tmp ? tmp : "/tmp");
}

int gs_scratch_open(gs_scratch *s, const char *dir) {
  memset(s, 0, sizeof *s);
  snprintf(s->where, sizeof s->where, "a temporary file in %s", dir);
  s->fd = -1;
#ifdef O_TMPFILE
  s->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (s->fd < 0) { /* no O_TMPFILE here: a named file, unlinked at once */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/.gpusort-scratch-XXXXXX", dir);
    s->fd = gs_create_guarded_temp(path);
    if (s->fd >= 0) gs_unlink_guarded_temp(path);
  }
  if (s->fd < 0) return gs_fail(GPUSORT_ERROR_IO, "cannot create %s: %s", s->where, strerror(errno));
  return GPUSORT_OK;
}

int gs_scratch_reserve(gs_scratch *s, uint64_t bytes) {
  if (bytes == 0) return GPUSORT_OK;
  const int e = posix_fallocate(s->fd, 0, (off_t)bytes);
  if (e) {
    char pretty[32];
    gs_format_bytes(pretty, sizeof pretty, bytes);
    if (e == EOPNOTSUPP || e == EINVAL)
      return gs_fail(GPUSORT_ERROR_IO, "cannot allocate %s for %s: the file system cannot allocate ahead (choose "
                                       "another directory for temporary files)", pretty, s->where);
    return gs_fail(GPUSORT_ERROR_IO, "cannot allocate %s for %s: %s", pretty, s->where, strerror(e));
  }
  void *map = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
  if (map == MAP_FAILED) return gs_fail(GPUSORT_ERROR_IO, "cannot map %s: %s", s->where, strerror(errno));
  s->map = map;
  s->bytes = (size_t)bytes;
  return GPUSORT_OK;
}

int gs_scratch_append(gs_scratch *s, const void *data, size_t bytes) {
  const unsigned char *p = data;
  while (bytes > 0) {
    const ssize_t put = write(s->fd, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return gs_fail(GPUSORT_ERROR_IO, "cannot write %s: %s", s->where, strerror(put < 0 ? errno : EIO));
    p += put;
    bytes -= (size_t)put;
    s->appended += (uint64_t)put;
  }
  return GPUSORT_OK;
}

void gs_scratch_close(gs_scratch *s) {
  if (s->map) munmap(s->map, s->bytes);
  if (s->fd >= 0) close(s->fd);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}
