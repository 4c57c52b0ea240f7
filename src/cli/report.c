#include "cli/report.h"

#include <inttypes.h>
#include <stdio.h>

void gs_format_bytes(char *buf, size_t size, double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
  if (u == 0)
    snprintf(buf, size, "%.0f B", bytes);
  else
    snprintf(buf, size, "%.2f %s", bytes, units[u]);
}

void gs_format_seconds(char *buf, size_t size, double s) {
  if (s < 1e-3)
    snprintf(buf, size, "%.1f us", s * 1e6);
  else if (s < 1)
    snprintf(buf, size, "%.2f ms", s * 1e3);
  else
    snprintf(buf, size, "%.3f s", s);
}

void gs_format_rate(char *buf, size_t size, double rate, const char *unit) {
  const char *prefix[] = {"", "k", "M", "G", "T"};
  int p = 0;
  while (rate >= 1000 && p < 4) rate /= 1000, p++;
  snprintf(buf, size, "%.2f %s%s/s", rate, prefix[p], unit);
}

void gs_print_checksum(const char *name, uint64_t hash) {
  fprintf(stderr, "XXH3 (%s) = %016" PRIx64 "\n", name, hash);
}

void gs_report_row(const char *label, double seconds, const char *detail) {
  char t[32];
  gs_format_seconds(t, sizeof t, seconds);
  fprintf(stderr, "  %-10s %10s  %s\n", label, t, detail ? detail : "");
}
