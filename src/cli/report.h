/* The reports printed on stderr: formatting, and the parts every data command shares. */
#ifndef GS_CLI_REPORT_H
#define GS_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "gpusort.h"

/* "1.00 GiB", "512 B" */
void cli_format_bytes(char *buf, size_t size, double bytes);

/* "12.3 ms", "1.234 s" */
void cli_format_seconds(char *buf, size_t size, double seconds);

/* "33.6 Mkeys/s" */
void cli_format_rate(char *buf, size_t size, double items_per_second, const char *unit);

/* The line xxhsum -H3 --tag prints: "XXH3 (NAME) = 0123456789abcdef". */
void cli_print_checksum(const char *output, uint64_t hash);

/* One report row: "  label    time   detail". */
void cli_report_row(const char *label, double seconds, const char *detail);

/* "NAME (driver, subgroup N)" */
void cli_describe_device(const gpusort_device_info *info, char *buf, size_t size);

/* "device N: NAME (driver, subgroup N)" for the context's device. */
void cli_note_device(gpusort_context *ctx);

/* "u32 keys", "(u64 key, f32 value) pairs", "100-byte records with an i32 key at byte 8". */
void cli_describe_layout(const gpusort_layout *layout, char *buf, size_t size);

/* The setup, read and upload rows; the GPU row (`label`: sort, scan, reduce) with its rates. */
void cli_report_start(const gpusort_report *r);
void cli_report_gpu(const char *label, double seconds, uint64_t items, const char *unit, uint64_t bytes);

/* The progress of a long job on stderr (gpusort_context_params.progress): with
 * CLI_PROGRESS_AUTO only when stderr is a terminal, never with -q; it appears once a job has
 * run for a second and is redrawn at most six times a second (a new line each time when
 * stderr is not a terminal). Sets *fn to NULL when there is to be none. */
void cli_progress_setup(int mode, int verbosity, gpusort_progress_fn *fn, void **user);

/* The total row with the end-to-end rates. */
void cli_report_total(const gpusort_report *r, const char *unit);

/* --json: a JSON object written piece by piece (strings escaped). */
typedef struct {
  FILE *to;
  bool first;
} cli_json;

void cli_json_begin(cli_json *j, FILE *to);
void cli_json_string(cli_json *j, const char *key, const char *value);
void cli_json_number(cli_json *j, const char *key, double value);
void cli_json_count(cli_json *j, const char *key, uint64_t value);
void cli_json_raw(cli_json *j, const char *key, const char *json); /* a value already in JSON */
void cli_json_end(cli_json *j);

/* Where --json goes: stdout, unless the data goes there (`output` is "-"). */
FILE *cli_json_stream(const char *output);

/* The members every file job's report has: command, records, bytes, output_bytes, device,
 * stages (name: seconds, the stages that ran), total_seconds, passes, batches, verified,
 * xxh3 (16 hex digits) and output; the caller adds its own and ends the object. */
void cli_json_report(cli_json *j, const char *command, gpusort_context *ctx, const gpusort_report *r,
                     const char *output);

#endif
