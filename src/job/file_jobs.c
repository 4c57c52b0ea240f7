/* Jobs from a file to a file: sort, scan, reduce. Each opens its input (mapped, or a stream
 * read to its end), checks the output before any work, opens the device while the input is
 * brought into memory, runs its engine, writes the output through a temporary file and
 * renames it, and reports what each stage took. */
#include <stdio.h>
#include <string.h>

#include "io/emitter.h"
#include "io/input.h"
#include "io/output.h"
#include "job/jobs.h"
#include "util/clock.h"
#include "util/error.h"

/* What a job's input must be, and how the job names its limit. */
typedef struct {
  const char *path, *output; /* output: NULL for jobs without one */
  bool overwrite;
  unsigned width;            /* bytes of a record */
  const char *unit;          /* "a u32 key", for size messages */
  const char *verb, *noun;   /* "sort", "records" */
  uint64_t max_records;      /* filled once the device is open */
} input_spec;

static void prefault(void *input) { gs_input_prefault(input); }

/* Opens the input, checks its size and the output, opens the device while the input is
 * brought into memory, and reads a stream (up to what the device takes). `max_records`
 * computes the limit on the open device. */
static int open_input(gs_context *c, input_spec *spec, uint64_t (*max_records)(gs_context *, const void *),
                      const void *arg, gs_input *in, uint64_t *n, gpusort_report *report) {
  const double start = gs_now();
  int rc;
  if ((rc = gs_input_open(in, spec->path))) return rc;
  if (!in->is_stream && (rc = gs_input_check_width(in, spec->width, spec->unit))) return rc;
  if (spec->output && (rc = gs_output_preflight(spec->output, spec->overwrite, in))) return rc;
  if ((rc = gs_context_device(c, prefault, in))) return rc;
  report->stage_seconds[GPUSORT_STAGE_OPEN] = gs_now() - start;
  spec->max_records = max_records(c, arg);
  if (in->is_stream) {
    const double t0 = gs_now();
    char limit[384];
    snprintf(limit, sizeof limit, "the %llu %s %s can %s in one buffer", (unsigned long long)spec->max_records,
             spec->noun, c->dev.info.name, spec->verb);
    if ((rc = gs_input_read_stream(in, spec->max_records * spec->width, limit)) ||
        (rc = gs_input_check_width(in, spec->width, spec->unit)))
      return rc;
    report->stage_seconds[GPUSORT_STAGE_READ] += gs_now() - t0;
  }
  *n = in->bytes / spec->width;
  if (*n > spec->max_records)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s holds %llu %s; %s can %s at most %llu of them in one buffer",
                   in->name, (unsigned long long)*n, spec->noun, c->dev.info.name, spec->verb,
                   (unsigned long long)spec->max_records);
  report->records = *n;
  report->input_bytes = in->bytes;
  return GPUSORT_OK;
}

static int emit_bytes(void *emitter, const void *data, size_t bytes) { return gs_emit(emitter, data, bytes); }

static uint64_t sort_limit(gs_context *c, const void *request) { return gs_sort_engine_max_records(c, request); }

static void report_sort(const gs_sort_engine *e, gpusort_report *report) {
  double *s = report->stage_seconds;
  const gs_sort_times *t = &e->times;
  s[GPUSORT_STAGE_SETUP] = t->setup;
  s[GPUSORT_STAGE_READ] += t->read;
  s[GPUSORT_STAGE_UPLOAD] = t->upload;
  s[GPUSORT_STAGE_SORT] = t->sort;
  s[GPUSORT_STAGE_GATHER] = t->gather;
  s[GPUSORT_STAGE_DOWNLOAD] = t->download;
  s[GPUSORT_STAGE_WRITE] = t->write;
  s[GPUSORT_STAGE_ASSEMBLE] = t->assemble;
  s[GPUSORT_STAGE_VERIFY] = t->verify;
  report->passes = t->gpu.passes;
  report->histogram_seconds = t->gpu.histogram;
  for (unsigned p = 0; p < t->gpu.passes && p < 8; p++) report->pass_seconds[p] = t->gpu.pass[p];
  report->tile_invocations = e->sorter->workgroup_size;
  report->tile_items_per_invocation = e->sorter->keys_per_thread;
  report->tile_items = e->sorter->tile_keys;
  report->tile_shared_bytes = e->sorter->shared_bytes;
}

/* A failed verification writes nothing: say so. */
static int no_output_written(int rc) {
  if (gpusort_status_class(rc) != GPUSORT_ERROR_VERIFY) return rc;
  char message[1024];
  snprintf(message, sizeof message, "%s", gs_last_error());
  return gs_fail(rc, "%s; no output written", message);
}

/* Downloads the sorted records into the output, verifying them first when asked: on the way
 * out for a file (which is renamed only if they pass), beforehand for a stream (whose bytes
 * cannot be taken back). */
static int write_sorted(gs_sort_engine *e, gs_output *out, gs_emitter *emitter, bool verify) {
  int rc;
  if (verify && out->direct) {
    if ((rc = gs_sort_engine_emit(e, true, NULL, NULL)) || (rc = gs_sort_engine_verdict(e)))
      return no_output_written(rc);
    e->times.write = e->times.assemble = 0; /* the pass that writes is timed alone */
    return gs_sort_engine_emit(e, false, emit_bytes, emitter);
  }
  if ((rc = gs_sort_engine_emit(e, verify, emit_bytes, emitter))) return no_output_written(rc);
  return verify ? no_output_written(gs_sort_engine_verdict(e)) : GPUSORT_OK;
}

int gs_file_sort(gs_context *c, const char *input, const char *output, gs_sort_request *r, gs_file_flags flags,
                 gpusort_report *report) {
  const double start = gs_now();
  char unit[64];
  gs_layout_unit(&r->layout, unit, sizeof unit);
  input_spec spec = {input, output, flags.overwrite, r->layout.record_bytes, unit, "sort", "records", 0};
  gs_input in;
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_sort_engine e = {0};
  uint64_t n = 0;
  int rc = open_input(c, &spec, sort_limit, r, &in, &n, report);
  if (!rc && r->argsort && !r->index_bytes) r->index_bytes = n < (1ull << 32) ? 4 : 8;
  if (!rc) rc = gs_sort_engine_run(&e, c, r, in.data, n);
  if (!rc && !(rc = gs_output_open(&out, output)) && !(rc = gs_emitter_init(&emitter, &out))) {
    out.sync = flags.sync;
    rc = write_sorted(&e, &out, &emitter, r->verify);
  }
  if (!rc) rc = gs_output_commit(&out);
  if (!rc) {
    report_sort(&e, report);
    report->output_bytes = n * e.out_bytes;
    report->xxh3 = gs_emitter_digest(&emitter);
    report->verified = r->verify;
    report->total_seconds = gs_now() - start;
  } else {
    gs_output_abort(&out);
  }
  gs_emitter_free(&emitter);
  gs_sort_engine_free(&e);
  gs_input_close(&in);
  return rc;
}

static uint64_t scan_limit(gs_context *c, const void *config) { return gs_scan_engine_max_elements(c, config); }

static void report_scan(const gs_scan_engine *e, gpusort_stage gpu_stage, gpusort_report *report) {
  double *s = report->stage_seconds;
  s[GPUSORT_STAGE_SETUP] = e->setup;
  s[GPUSORT_STAGE_READ] += e->read;
  s[GPUSORT_STAGE_UPLOAD] = e->upload;
  s[gpu_stage] = e->gpu;
  s[GPUSORT_STAGE_DOWNLOAD] = e->download;
  s[GPUSORT_STAGE_WRITE] = e->write;
  report->tile_invocations = e->scan->workgroup_size;
  report->tile_items_per_invocation = e->scan->tile / e->scan->workgroup_size;
  report->tile_items = e->scan->tile;
}

/* Opens the input of a scan or reduction and runs the engine on it. */
static int scan_input(gs_context *c, const char *input, const char *output, bool overwrite,
                      const gs_scan_config *config, gs_input *in, gs_scan_engine *e, gpusort_report *report) {
  const gs_key_info *info = gs_key_info_of(config->input);
  char unit[32];
  snprintf(unit, sizeof unit, "%s %s element", info->name[0] == 'i' ? "an" : "a", info->name);
  input_spec spec = {input, output, overwrite, info->bytes, unit, "scan", "elements", 0};
  uint64_t n = 0;
  int rc = open_input(c, &spec, scan_limit, config, in, &n, report);
  if (!rc && config->reduce_only && n == 0 && config->op != GS_SCAN_SUM)
    rc = gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the %s of no elements is undefined", in->name,
                 gs_scan_op_name(config->op));
  return rc ? rc : gs_scan_engine_run(e, c, config, in->data, n);
}

int gs_file_scan(gs_context *c, const char *input, const char *output, const gs_scan_config *config,
                 gs_file_flags flags, gpusort_report *report) {
  const double start = gs_now();
  gs_input in = {.fd = -1};
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_scan_engine e = {0};
  int rc = scan_input(c, input, output, flags.overwrite, config, &in, &e, report);
  if (!rc && !(rc = gs_output_open(&out, output)) && !(rc = gs_emitter_init(&emitter, &out))) {
    out.sync = flags.sync;
    rc = gs_scan_engine_emit(&e, emit_bytes, &emitter);
  }
  if (!rc) rc = gs_output_commit(&out);
  if (!rc) {
    report_scan(&e, GPUSORT_STAGE_SCAN, report);
    report->output_bytes = e.n * gs_key_info_of(config->acc)->bytes;
    report->xxh3 = gs_emitter_digest(&emitter);
    report->total_seconds = gs_now() - start;
  } else {
    gs_output_abort(&out);
  }
  gs_emitter_free(&emitter);
  gs_scan_engine_free(&e);
  gs_input_close(&in);
  return rc;
}

typedef struct {
  unsigned char *result;
  unsigned bytes;
} value_sink;

static int take_value(void *ctx, const void *data, size_t bytes) {
  value_sink *v = ctx;
  if (bytes >= v->bytes) memcpy(v->result, data, v->bytes);
  return GPUSORT_OK;
}

int gs_file_reduce(gs_context *c, const char *input, const gs_scan_config *config, void *result,
                   gpusort_report *report) {
  const double start = gs_now();
  gs_input in = {.fd = -1};
  gs_scan_engine e = {0};
  value_sink value = {result, gs_key_info_of(config->acc)->bytes};
  int rc = scan_input(c, input, NULL, false, config, &in, &e, report);
  if (!rc) rc = gs_scan_engine_emit(&e, take_value, &value);
  if (!rc) {
    report_scan(&e, GPUSORT_STAGE_REDUCE, report);
    report->stage_seconds[GPUSORT_STAGE_WRITE] = 0; /* nothing is written */
    report->total_seconds = gs_now() - start;
  }
  gs_scan_engine_free(&e);
  gs_input_close(&in);
  return rc;
}
