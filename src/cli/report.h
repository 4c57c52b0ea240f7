/* Formatting of the reports printed on stderr. */
#ifndef GS_CLI_REPORT_H
#define GS_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* "1.00 GiB", "512 B" */
void gs_format_bytes(char *buf, size_t size, double bytes);

/* "12.3 ms", "1.234 s" */
void gs_format_seconds(char *buf, size_t size, double seconds);

/* "33.6 Mkeys/s" */
void gs_format_rate(char *buf, size_t size, double items_per_second, const char *unit);

/* The line xxhsum -H3 --tag prints: "XXH3 (NAME) = 0123456789abcdef". */
void gs_print_checksum(const char *name, uint64_t hash);

/* One report row: "  label    time   detail". */
void gs_report_row(const char *label, double seconds, const char *detail);

#endif
