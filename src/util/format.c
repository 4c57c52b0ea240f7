#include "util/format.h"

#include <stdio.h>

void gs_format_bytes(char *buf, size_t size, uint64_t bytes) {
  if (bytes < 10240) snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
  else if (bytes < (1u << 20)) snprintf(buf, size, "%.1f KiB", (double)bytes / 1024);
  else if (bytes < (1u << 30)) snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
  else snprintf(buf, size, "%.2f GiB", (double)bytes / (1u << 30));
}
