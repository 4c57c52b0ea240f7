#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

void cli_format_bytes(char *buf, size_t size, double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
  if (u == 0)
    snprintf(buf, size, "%.0f B", bytes);
  else
    snprintf(buf, size, "%.2f %s", bytes, units[u]);
}

void cli_format_seconds(char *buf, size_t size, double s) {
  if (s < 1e-3)
    snprintf(buf, size, "%.1f us", s * 1e6);
  else if (s < 1)
    snprintf(buf, size, "%.2f ms", s * 1e3);
  else
    snprintf(buf, size, "%.3f s", s);
}

void cli_format_rate(char *buf, size_t size, double rate, const char *unit) {
  const char *prefix[] = {"", "k", "M", "G", "T"};
  int p = 0;
  while (rate >= 1000 && p < 4) rate /= 1000, p++;
  snprintf(buf, size, "%.2f %s%s/s", rate, prefix[p], unit);
}

void cli_print_checksum(const char *output, uint64_t hash) {
  fprintf(stderr, "XXH3 (%s) = %016" PRIx64 "\n", output, hash);
}

void cli_report_row(const char *label, double seconds, const char *detail) {
  char t[32];
  cli_format_seconds(t, sizeof t, seconds);
  fprintf(stderr, "  %-10s %10s  %s\n", label, t, detail ? detail : "");
}

void cli_describe_device(const gpusort_device_info *info, char *buf, size_t size) {
  snprintf(buf, size, "%s (%s, subgroup %u)", info->name, info->driver, info->subgroup_size);
}

void cli_note_device(gpusort_context *ctx) {
  gpusort_device_info info = GPUSORT_DEVICE_INFO_INIT;
  char desc[1024];
  if (gpusort_context_device(ctx, &info) != GPUSORT_OK) return;
  cli_describe_device(&info, desc, sizeof desc);
  cli_note("device %u: %s", info.index, desc);
}

static const char *article(const char *type) { return type[0] == 'i' ? "an" : "a"; }

void cli_describe_layout(const gpusort_layout *l, char *buf, size_t size) {
  char key[32];
  if (l->key == GPUSORT_BYTES)
    snprintf(key, sizeof key, "bytes:%u", l->key_bytes);
  else
    snprintf(key, sizeof key, "%s", l->key ? gpusort_type_name(l->key) : "");
  if (l->part_fields) { /* fields of a .npy file's structured dtype */
    size_t used = (size_t)snprintf(buf, size, "records with a key of %u fields (", l->part_count);
    for (uint32_t i = 0; i < l->part_count && used < size; i++)
      used += (size_t)snprintf(buf + used, size - used, "%s%s%s", i ? ", " : "", l->part_fields[i],
                               l->parts[i].flags & GPUSORT_KEY_DESCENDING ? ":desc" : "");
    if (used < size) snprintf(buf + used, size - used, ")");
  } else if (l->key == GPUSORT_TYPE_NONE && !l->part_count) {
    snprintf(buf, size, "elements of a .npy file");
  } else if (l->part_count) {
    size_t used = (size_t)snprintf(buf, size, "%u-byte records with a key of %u parts (", l->record_bytes, l->part_count);
    for (uint32_t i = 0; i < l->part_count && used < size; i++) {
      const gpusort_key_part *p = &l->parts[i];
      char type[32];
      if (p->type == GPUSORT_BYTES)
        snprintf(type, sizeof type, "bytes:%u", p->bytes);
      else
        snprintf(type, sizeof type, "%s", gpusort_type_name(p->type));
      used += (size_t)snprintf(buf + used, size - used, "%s%u:%s%s", i ? ", " : "", p->offset, type,
                               p->flags & GPUSORT_KEY_DESCENDING ? ":desc" : "");
    }
    if (used < size) snprintf(buf + used, size - used, ")");
  } else if (l->value != GPUSORT_TYPE_NONE) {
    snprintf(buf, size, "(%s key, %s value) pairs", key, gpusort_type_name(l->value));
  } else if (l->record_bytes) {
    snprintf(buf, size, "%u-byte records with %s %s key at byte %u", l->record_bytes, article(key), key, l->key_offset);
  } else {
    snprintf(buf, size, "%s keys", key);
  }
}

void cli_report_start(const gpusort_report *r) {
  const double open = r->stage_seconds[GPUSORT_STAGE_OPEN], setup = r->stage_seconds[GPUSORT_STAGE_SETUP];
  char line[200];
  snprintf(line, sizeof line, "opening the device %.0f ms, pipelines and buffers %.0f ms", open * 1e3, setup * 1e3);
  cli_report_row("setup", open + setup, line);
  if (r->stage_seconds[GPUSORT_STAGE_SPILL] > 0)
    cli_report_row("spill", r->stage_seconds[GPUSORT_STAGE_SPILL], "host: a stream past the budget to a scratch file");
  if (r->stage_seconds[GPUSORT_STAGE_BUCKETS] > 0 || r->stage_seconds[GPUSORT_STAGE_PARTITION] > 0) {
    cli_report_row("buckets", r->stage_seconds[GPUSORT_STAGE_BUCKETS], "host: records counted by their key's top bits");
    cli_report_row("partition", r->stage_seconds[GPUSORT_STAGE_PARTITION],
                   "GPU and host: records moved to their buckets' places");
    snprintf(line, sizeof line, "%u in-core sorts of bins of buckets follow", r->batches);
    cli_report_row("bins", 0, line);
  }
  cli_report_row("read", r->stage_seconds[GPUSORT_STAGE_READ], "host: input into staging memory");
  cli_report_row("upload", r->stage_seconds[GPUSORT_STAGE_UPLOAD], "GPU copy");
}

void cli_report_gpu(const char *label, double seconds, uint64_t items, const char *unit, uint64_t bytes) {
  char a[32], b[32], line[200];
  cli_format_rate(a, sizeof a, seconds > 0 ? (double)items / seconds : 0, unit);
  cli_format_rate(b, sizeof b, seconds > 0 ? (double)bytes / seconds : 0, "B");
  snprintf(line, sizeof line, "GPU, %s, %s", a, b);
  cli_report_row(label, seconds, line);
}

void cli_report_total(const gpusort_report *r, const char *unit) {
  char a[32], b[32], line[200];
  const double t = r->total_seconds;
  cli_format_rate(a, sizeof a, t > 0 ? (double)r->records / t : 0, unit);
  cli_format_rate(b, sizeof b, t > 0 ? (double)r->input_bytes / t : 0, "B");
  snprintf(line, sizeof line, "end to end, %s, %s", a, b);
  cli_report_row("total", t, line);
}

void cli_json_begin(cli_json *j, FILE *to) {
  j->to = to;
  j->first = true;
  fputc('{', to);
}

static void key(cli_json *j, const char *name) {
  fprintf(j->to, "%s\"%s\": ", j->first ? "" : ", ", name);
  j->first = false;
}

static void quoted(FILE *to, const char *s) {
  fputc('"', to);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(to, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(to, "\\u%04x", *p);
    else
      fputc(*p, to);
  }
  fputc('"', to);
}

void cli_json_string(cli_json *j, const char *name, const char *value) {
  key(j, name);
  quoted(j->to, value);
}

void cli_json_number(cli_json *j, const char *name, double value) {
  key(j, name);
  fprintf(j->to, "%.9g", value);
}

void cli_json_count(cli_json *j, const char *name, uint64_t value) {
  key(j, name);
  fprintf(j->to, "%" PRIu64, value);
}

void cli_json_raw(cli_json *j, const char *name, const char *json) {
  key(j, name);
  fputs(json, j->to);
}

void cli_json_end(cli_json *j) {
  fputs("}\n", j->to);
  fflush(j->to);
}

FILE *cli_json_stream(const char *output) { return output && strcmp(output, "-") == 0 ? stderr : stdout; }

void cli_json_report(cli_json *j, const char *command, gpusort_context *ctx, const gpusort_report *r,
                     const char *output) {
  cli_json_string(j, "command", command);
  cli_json_count(j, "records", r->records);
  cli_json_count(j, "bytes", r->input_bytes);
  cli_json_count(j, "output_bytes", r->output_bytes);
  gpusort_device_info info = GPUSORT_DEVICE_INFO_INIT;
  if (ctx && gpusort_context_device(ctx, &info) == GPUSORT_OK) {
    cli_json_string(j, "device", info.name);
    cli_json_string(j, "driver", info.driver);
  }
  key(j, "stages");
  fputc('{', j->to);
  bool first = true;
  for (int s = 0; s < GPUSORT_STAGE_COUNT; s++) {
    if (!(r->stage_seconds[s] > 0)) continue;
    fprintf(j->to, "%s\"%s\": %.9g", first ? "" : ", ", gpusort_stage_name((gpusort_stage)s), r->stage_seconds[s]);
    first = false;
  }
  fputc('}', j->to);
  cli_json_number(j, "total_seconds", r->total_seconds);
  if (r->passes) cli_json_count(j, "passes", r->passes);
  if (r->batches) cli_json_count(j, "batches", r->batches);
  cli_json_raw(j, "verified", r->verified ? "true" : "false");
  char hex[17];
  snprintf(hex, sizeof hex, "%016" PRIx64, r->xxh3);
  if (output) {
    cli_json_string(j, "xxh3", hex);
    cli_json_string(j, "output", output);
  }
}
