/* Jobs from a file to a file: sort, scan, reduce. Each opens its input (mapped, or a stream
 * read to its end), checks the output before any work, opens the device while the input is
 * brought into memory, runs its engine, writes the output through a temporary file and
 * renames it, and reports what each stage took. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/emitter.h"
#include "io/input.h"
#include "io/npy.h"
#include "io/output.h"
#include "io/scratch.h"
#include "job/out_of_core.h"
#include "job/jobs.h"
#include "job/normalized_sort.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/trace.h"

/* What a job's input must be, and how the job reads it. */
typedef struct {
  const char *path, *output; /* output: NULL for jobs without one */
  bool overwrite;
  unsigned width;            /* bytes of a record */
  const char *unit;          /* "a u32 key", for size messages */
  bool prefault;             /* the job reads the input through its mapping */
  /* keyed sorts: the normalized forms of the records, computed while the device opens */
  gs_normalized_forms *forms;
  const gs_sort_request *request;
  const gs_npy *npy;         /* a .npy input's header (skipped in a file, read already from a
                                stream), or NULL */
} input_spec;


/* What runs while the device opens: the input's pages faulted in, or (keyed sorts) its keys'
 * normalized forms computed, which reads every page too. */
typedef struct {
  const input_spec *spec;
  gs_input *in;
  bool normalize;
} meanwhile_task;

/* Not for more records than a keyed sort ever takes in core (that job will be refused), nor
 * for forms larger than a quarter of the host's memory. */
static bool forms_fit(const input_spec *spec, const gs_input *in) {
  const uint64_t n = in->bytes / spec->width;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  return n <= 0xFFFFFFFFull / 8 && (memory == 0 || gs_normalized_forms_bytes(&spec->request->layout, n) <= memory / 4);
}

static void meanwhile(void *arg) {
  meanwhile_task *t = arg;
  const input_spec *spec = t->spec;
  if (t->normalize) {
    const uint64_t n = t->in->bytes / spec->width;
    if (gs_normalized_forms_compute(spec->forms, &spec->request->layout, spec->request->descending, t->in->data, n))
      gs_normalized_forms_free(spec->forms); /* the sort computes them itself, or says why not */
    else
      gs_trace("normalized forms of %llu records computed", (unsigned long long)n);
  } else {
    gs_input_prefault(t->in);
  }
}

/* Where scratch files go: the context's directory, else near the output. */
static void scratch_dir_for(const gs_context *c, const char *output, char *dir, size_t size) {
  gs_scratch_dir(c->temp_dir, output, dir, size);
}

/* What a job does as soon as it knows its record count, before it waits for the device: its
 * output opened, reserved and mapped, the mapping's pages faulted in meanwhile. */
typedef struct {
  gs_output *out;
  gs_emitter *emitter;
  const char *path;
  unsigned out_bytes;        /* per record */
  bool sync;
  gs_sort_request *argsort;  /* an argsort whose index width follows the count */
  const unsigned char *header; /* a .npy output: written first */
  size_t header_bytes;
} early_output;

/* An output opened, and its emitter set up, but nothing reserved: written as its bytes come. */
static int open_unreserved(gs_output *out, gs_emitter *emitter, const char *path, bool sync) {
  int rc;
  if ((rc = gs_output_open(out, path)) || (rc = gs_emitter_init(emitter, out))) return rc;
  out->sync = sync;
  return GPUSORT_OK;
}

static int open_output(const early_output *o, uint64_t n) {
  int rc;
  if (!o->out) return GPUSORT_OK;
  if ((rc = open_unreserved(o->out, o->emitter, o->path, o->sync))) return rc;
  unsigned out_bytes = o->out_bytes;
  if (o->argsort) { /* u32 indices below 2^32 records, unless asked otherwise */
    if (!o->argsort->index_bytes) o->argsort->index_bytes = n < (1ull << 32) ? 4 : 8;
    out_bytes = o->argsort->index_bytes;
  }
  if ((rc = gs_output_reserve(o->out, n * out_bytes + o->header_bytes)) ||
      (o->header_bytes && (rc = gs_emit(o->emitter, o->header, o->header_bytes))))
    return rc;
  gs_trace("output reserved");
  return GPUSORT_OK;
}

/* Opens the input, checks its size and the output, opens the device while the input is
 * brought into memory, and reads a stream: into memory up to `memory_records` (computed on the
 * open device by `memory_limit`), spilled to a scratch file past that. The output (if any) is
 * opened once the record count is known: before the device for a regular file. */
static int open_input(gs_context *c, const input_spec *spec, uint64_t (*memory_limit)(gs_context *, const void *),
                      const void *arg, const early_output *output, gs_input *in, uint64_t *n,
                      gpusort_report *report) {
  const double start = gs_now();
  int rc;
  gs_trace("job started");
  if ((rc = gs_input_open(in, spec->path))) return rc;
  if (spec->npy && !in->is_stream) gs_input_skip(in, spec->npy->header_bytes);
  /* the output first: an output that is the input is refused whatever the input holds */
  if (spec->output && (rc = gs_output_preflight(spec->output, spec->overwrite, in))) return rc;
  if (!in->is_stream && (rc = gs_input_check_width(in, spec->width, spec->unit))) return rc;
  if (!in->is_stream && output && (rc = open_output(output, in->bytes / spec->width))) return rc;
  /* the output's pages faulted in while the device opens (output.c says how, so as not to
   * hold the open up) */
  if (output && output->out) gs_output_populate(output->out);
  meanwhile_task task = {spec, in, spec->forms && !in->is_stream && in->data && forms_fit(spec, in)};
  if ((rc = gs_context_device(c, task.normalize || spec->prefault ? meanwhile : NULL, &task))) return rc;
  report->stage_seconds[GPUSORT_STAGE_OPEN] = gs_now() - start;
  if (in->is_stream) {
    const double t0 = gs_now();
    char dir[4096];
    scratch_dir_for(c, spec->output, dir, sizeof dir);
    const uint64_t records = memory_limit(c, arg);
    if ((rc = gs_input_read_stream(in, records * spec->width, dir))) return rc;
    if (spec->npy && in->bytes != spec->npy->count * spec->npy->itemsize) /* (its header was read ahead) */
      return gs_fail(GPUSORT_ERROR_BAD_INPUT,
                     "%s: the .npy header says %llu elements of %u bytes, but the stream holds %llu bytes of data",
                     in->name, (unsigned long long)spec->npy->count, spec->npy->itemsize,
                     (unsigned long long)in->bytes);
    if (!spec->npy && gs_npy_is(in->data, in->bytes))
      return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s holds a .npy file: give it as a file or on standard input (.npy "
                     "headers are not read from other streams)", in->name);
    if ((rc = gs_input_check_width(in, spec->width, spec->unit))) return rc;
    report->stage_seconds[GPUSORT_STAGE_READ] += gs_now() - t0 - in->spill_seconds;
    report->stage_seconds[GPUSORT_STAGE_SPILL] += in->spill_seconds;
    if (output && (rc = open_output(output, in->bytes / spec->width))) return rc;
    if (output && output->out) gs_output_populate(output->out);
  }
  *n = in->bytes / spec->width;
  report->records = *n;
  report->input_bytes = in->bytes;
  return GPUSORT_OK;
}

static int emit_bytes(void *emitter, const void *data, size_t bytes) { return gs_emit(emitter, data, bytes); }
static void *emit_place(void *emitter, size_t bytes) { return gs_emit_place(emitter, bytes); }

/* Records one in-core sort takes within the budget. */
static uint64_t in_core_capacity(gs_context *c, const void *request) {
  const uint64_t device = gs_sort_engine_max_records(c, request), budget = gs_sort_engine_capacity(c, request, c->budget);
  return device < budget ? device : budget;
}

static void report_sort(const gs_sort_engine *e, gpusort_report *report) {
  double *s = report->stage_seconds;
  const gs_sort_times *t = &e->times;
  s[GPUSORT_STAGE_SETUP] += t->setup;
  s[GPUSORT_STAGE_READ] += t->read;
  s[GPUSORT_STAGE_UPLOAD] += t->upload;
  s[GPUSORT_STAGE_SORT] += t->sort;
  s[GPUSORT_STAGE_GATHER] += t->gather;
  s[GPUSORT_STAGE_COMPACT] += t->then;
  s[GPUSORT_STAGE_DOWNLOAD] += t->download;
  s[GPUSORT_STAGE_WRITE] += t->write;
  s[GPUSORT_STAGE_ASSEMBLE] += t->assemble;
  s[GPUSORT_STAGE_VERIFY] += t->verify;
  report->passes = e->passes; /* (keyed layouts: all their rounds) */
  report->histogram_seconds = t->gpu.histogram;
  for (unsigned p = 0; p < t->gpu.passes && p < 8; p++) report->pass_seconds[p] = t->gpu.pass[p];
}

/* capacity: what the sorts were sized for (the whole input, or an out-of-core batch) */
static void report_tile(gs_context *c, const gs_sort_request *r, uint64_t capacity, gpusort_report *report) {
  /* (keyed layouts: the sort of their normalized words, ascending, with u32 indices) */
  gs_radix_sort_config config = {.key = r->layout.keyed ? GS_KEY_U64 : r->layout.key,
                                 .descending = r->descending && !r->layout.keyed,
                                 .value_bytes = r->argsort || r->layout.keyed || r->layout.kind == GS_LAYOUT_RECORDS ? 4
                                                : r->layout.kind == GS_LAYOUT_PAIRS ? gs_key_info_of(r->layout.value)->bytes
                                                                                    : 0,
                                 .algo = gs_sort_algo_for(&c->config, r->algo, capacity)};
  report->algo = (gpusort_sort_algo)config.algo;
  gs_radix_sort *s;
  if (gs_context_sorter(c, &config, &s) != GPUSORT_OK) return;
  const gs_radix_sort_tile tile = gs_radix_sort_tile_for(s, capacity);
  report->tile_invocations = tile.workgroup_size;
  report->tile_items_per_invocation = tile.keys_per_thread;
  report->tile_items = tile.tile_keys;
  report->tile_shared_bytes = tile.shared_bytes;
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
    const gs_sort_times before = e->times;
    if ((rc = gs_sort_engine_emit(e, true, NULL, NULL)) || (rc = gs_sort_engine_verdict(e)))
      return no_output_written(rc);
    e->times.write = before.write, e->times.assemble = before.assemble; /* the pass that writes is timed alone */
    return gs_sort_engine_emit_placed(e, false, emit_bytes, emit_place, emitter);
  }
  if ((rc = gs_sort_engine_emit_placed(e, verify, emit_bytes, emit_place, emitter))) return no_output_written(rc);
  return verify ? no_output_written(gs_sort_engine_verdict(e)) : GPUSORT_OK;
}

/* An output opened at its exact size once its record count is known (a compaction's after the
 * GPU has run, but for a partition; a sort's with a step after it), with a .npy header of that
 * count. */
typedef struct {
  early_output early;
  const char *descr; /* a .npy output's dtype; NULL for none */
  unsigned char header[GS_NPY_DESCR_BYTES + 256];
} late_output;

static int late_header(late_output *o, uint64_t records) {
  o->early.header = o->header;
  o->early.header_bytes = 0;
  if (o->descr && !(o->early.header_bytes = gs_npy_header(o->descr, records, o->header, sizeof o->header)))
    return gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the output's .npy dtype is too long to write", o->early.path);
  return GPUSORT_OK;
}

static int open_late_output(void *arg, uint64_t records) {
  late_output *o = arg;
  int rc = late_header(o, records);
  if (!rc) rc = open_output(&o->early, records);
  if (!rc) gs_output_populate(o->early.out);
  return rc;
}

/* The whole input in one sort; the caller frees the engine `e`. `late`: an output opened once
 * the GPU has run (a step after the sort decides its size), or NULL. */
static int sort_in_core(gs_context *c, const gs_input *in, uint64_t n, gs_sort_request *r, gs_output *out,
                        gs_emitter *emitter, gs_sort_engine *e, late_output *late, gpusort_report *report) {
  const gs_record_source source = {.data = in->data, .fd = in->data_fd, .offset = in->data_offset, .name = in->name};
  int rc = gs_sort_engine_init(e, c, r, n);
  if (!rc) rc = gs_sort_engine_sort(e, &source, n);
  if (!rc && late) rc = open_late_output(late, e->emitted);
  if (!rc) rc = write_sorted(e, out, emitter, r->verify);
  if (!rc) r->written = e->emitted;
  if (e->ctx) report_sort(e, report);
  if (!rc) report->verified = r->verify;
  report->batches = 1;
  return rc;
}

/* A finished output: renamed into place, its checksum awaited (the hashing thread reads the
 * mapping), then its mapping and the file it replaced let go of on another thread. */
typedef struct {
  gs_context *c;
  gs_output *out;
  gs_emitter *emitter;
  int status;
  char error[1024];
  uint64_t digest;
} finish_task;

static void finish_output(void *arg) {
  finish_task *t = arg;
  if ((t->status = gs_output_commit(t->out))) {
    snprintf(t->error, sizeof t->error, "%s", gs_last_error()); /* errors are per thread */
    return;
  }
  t->digest = gs_emitter_digest(t->emitter);
  gs_context_release_later(t->c, gs_output_detach(t->out));
}

/* After a failure: the hashing stopped before the mapping goes. */
static void abandon_output(gs_output *out, gs_emitter *emitter) {
  gs_emitter_free(emitter);
  gs_output_abort(out);
}

static void free_engine(void *arg) { gs_sort_engine_free(arg); }

/* The forms computed ahead, unless a stalled device may still be reading them in place (it
 * imported their pages): those are left to the process's exit. */
static void release_forms(const gs_context *c, gs_normalized_forms *forms) {
  if (c->dev.wedged) return;
  gs_normalized_forms_free(forms);
}

/* Out of core, within the budget; where the GPU's memory turns out to be short of what the
 * budget promised (before anything is written), again with half as much, for as long as that
 * makes the sorts smaller. *capacity: the records its sorts were sized for. */
static int sort_out_of_core(gs_context *c, const gs_input *in, uint64_t n, gs_sort_request *r, const char *output,
                            gs_output *out, gs_emitter *emitter, gpusort_report *report, uint64_t budget,
                            uint64_t *capacity) {
  char dir[4096];
  scratch_dir_for(c, output, dir, sizeof dir);
  int rc = GPUSORT_OK;
  uint64_t tried = UINT64_MAX; /* the capacity of the last attempt */
  for (int attempt = 0; attempt < 40; attempt++, budget /= 2) {
    const uint64_t fits = gs_out_of_core_capacity(c, r, budget);
    if (attempt > 0 && (fits == 0 || fits >= tried)) break; /* no smaller sort left to try */
    tried = fits;
    const gs_out_of_core_job job = {.ctx = c,
                                    .request = r,
                                    .input = in,
                                    .n = n,
                                    .capacity = fits,
                                    .scratch_dir = dir,
                                    .out = out,
                                    .emitter = emitter,
                                    .report = report};
    rc = gs_out_of_core_sort(&job);
    *capacity = job.capacity;
    if (rc != GPUSORT_ERROR_OUT_OF_MEMORY || out->written) break; /* nothing written yet: try smaller */
  }
  if (!rc) report->verified = r->verify;
  return no_output_written(rc);
}

/* The output header of a .npy input's sort: its own dtype, or the indices' (int64, as
 * numpy.argsort gives them, unless u32 indices were asked for). */
static size_t sort_npy_header(const gs_npy *npy, gs_sort_request *r, unsigned char *buf, size_t size) {
  if (r->argsort && !r->index_bytes) r->index_bytes = 8;
  const char *descr = !r->argsort ? npy->descr : r->index_bytes == 4 ? "<u4" : "<i8";
  return gs_npy_header(descr, npy->count, buf, size);
}

/* The dtype of a .npy output of a sort with a step after it: the input's (unique), or packed
 * (key, count) fields (rle), as the compaction commands write them. */
static void then_npy_descr(const gs_sort_request *r, const char *input_descr, char *buf, size_t size) {
  const gs_compact_request step = {.mode = GS_COMPACT_UNIQUE, .rle = r->then == GS_THEN_RLE,
                                   .count_bytes = r->count_bytes, .layout = r->layout};
  gs_compact_npy_descr(&step, input_descr, buf, size);
}

int gs_file_sort(gs_context *c, const char *input, const char *output, gs_sort_request *r, gs_file_flags flags,
                 gpusort_report *report) {
  const double start = gs_now();
  gs_npy npy;
  bool is_npy;
  unsigned char header[GS_NPY_DESCR_BYTES + 256];
  size_t header_bytes = 0;
  int rc = gs_layout_for_input(&r->layout, input, &npy, &is_npy);
  if (!rc) rc = gs_sort_request_check_bits(r);
  if (!rc) rc = gs_sort_then_check(r);
  if (!rc && is_npy && !(header_bytes = sort_npy_header(&npy, r, header, sizeof header)))
    rc = gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: its .npy dtype is too long to write again", input);
  if (rc) return rc;
  char unit[64];
  gs_layout_unit(&r->layout, unit, sizeof unit);
  /* pairs and large records are read through the mapping; keys and small records from the file */
  const unsigned R = r->layout.record_bytes;
  const bool mapped_reads = r->layout.keyed || r->layout.kind == GS_LAYOUT_PAIRS ||
                            (r->layout.kind == GS_LAYOUT_RECORDS && (R % 4 || R > 64));
  gs_normalized_forms forms = {0};
  const input_spec spec = {input,  output, flags.overwrite, R, unit, mapped_reads, r->layout.keyed ? &forms : NULL, r,
                           is_npy ? &npy : NULL};
  gs_input in;
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_sort_engine engine = {0};
  uint64_t n = 0;
  const early_output early = {&out, &emitter, output, R, flags.sync, r->argsort ? r : NULL, header, header_bytes};
  /* a step after the sort: the output is opened once the GPU has counted what it keeps */
  char then_descr[GS_NPY_DESCR_BYTES] = "";
  if (is_npy && r->then) then_npy_descr(r, npy.descr, then_descr, sizeof then_descr);
  late_output late = {.early = {&out, &emitter, output, gs_sort_engine_output_bytes(r), flags.sync, NULL, NULL, 0},
                      .descr = is_npy ? then_descr : NULL};
  rc = open_input(c, &spec, in_core_capacity, r, r->then ? NULL : &early, &in, &n, report);
  const unsigned out_bytes = r->argsort ? r->index_bytes : R;
  uint64_t capacity = 0, sorted_capacity = n; /* (what the sorts were sized for: n, or a batch's) */
  const double planning = gs_now();
  if (!rc) capacity = in_core_capacity(c, r); /* builds the sort's pipelines */
  report->stage_seconds[GPUSORT_STAGE_SETUP] += gs_now() - planning;
  if (!rc) {
    gs_progress_begin(c, n <= capacity ? in.bytes + n * out_bytes : 3 * in.bytes + n * out_bytes);
    if (n > capacity && r->then) {
      rc = gs_fail(GPUSORT_ERROR_TOO_LARGE,
                   "%s: %llu records; a sort with %s after it runs in core only, and %llu records fit the memory "
                   "budget",
                   in.name, (unsigned long long)n, r->then == GS_THEN_RLE ? "rle" : "unique",
                   (unsigned long long)capacity);
    } else if (n > capacity && r->layout.keyed && r->argsort) {
      rc = gs_fail(GPUSORT_ERROR_TOO_LARGE,
                   "%s: %llu records with %s keys; their argsort runs in core only, and %llu records fit the memory "
                   "budget",
                   in.name, (unsigned long long)n, r->layout.key_name, (unsigned long long)capacity);
    } else if (n <= capacity) {
      r->forms = forms.columns ? &forms : NULL;
      rc = sort_in_core(c, &in, n, r, &out, &emitter, &engine, r->then ? &late : NULL, report);
      r->forms = NULL;
      /* the device holds less than it said: out of core after all, in half the memory that failed */
      if (rc == GPUSORT_ERROR_OUT_OF_MEMORY && out.written == 0 && !(r->layout.keyed && r->argsort) && !r->then) {
        const uint64_t failed = gs_sort_engine_bytes(c, r, n), budget = failed < c->budget ? failed : c->budget;
        gs_sort_engine_free(&engine);
        release_forms(c, &forms);
        rc = sort_out_of_core(c, &in, n, r, output, &out, &emitter, report, budget / 2, &sorted_capacity);
      }
    } else {
      release_forms(c, &forms); /* (keyed: bins normalize their own records) */
      rc = sort_out_of_core(c, &in, n, r, output, &out, &emitter, report, c->budget, &sorted_capacity);
    }
    gs_progress_end(c);
  }
  /* the output's checksum, renaming and unmapping beside the GPU memory's release: each takes
   * tens of milliseconds a GiB */
  finish_task finish = {c, &out, &emitter, GPUSORT_OK, "", 0};
  if (!rc) gs_run_both(finish_output, &finish, free_engine, &engine);
  gs_sort_engine_free(&engine);
  if (!rc && finish.status) rc = gs_fail(finish.status, "%s", finish.error);
  if (!rc) {
    report_tile(c, r, sorted_capacity, report);
    report->output_bytes = r->then ? late.early.header_bytes + r->written * late.early.out_bytes
                                   : n * out_bytes + header_bytes;
    report->xxh3 = finish.digest;
    report->total_seconds = gs_now() - start;
  } else {
    abandon_output(&out, &emitter);
  }
  gs_emitter_free(&emitter);
  release_forms(c, &forms);
  gs_input_close(&in);
  return rc;
}

/* Elements one scan chunk takes in memory within the budget: a stream larger is spilled. */
static uint64_t scan_capacity(gs_context *c, const void *config) {
  return gs_scan_engine_capacity(c, config, c->budget);
}

static void report_scan(const gs_scan_engine *e, gpusort_stage gpu_stage, gpusort_report *report) {
  const gs_scan_config *c = &e->config;
  report->element_type = c->in_form ? c->in_form : (gpusort_type)gs_key_type_to_public(c->input);
  report->result_type = c->out_form ? c->out_form : (gpusort_type)gs_key_type_to_public(c->acc);
  double *s = report->stage_seconds;
  s[GPUSORT_STAGE_SETUP] += e->setup;
  s[GPUSORT_STAGE_READ] += e->read;
  s[GPUSORT_STAGE_UPLOAD] += e->upload;
  s[gpu_stage] += e->gpu;
  s[GPUSORT_STAGE_DOWNLOAD] += e->download;
  s[GPUSORT_STAGE_WRITE] += e->write;
  if (e->scan) {
    const uint32_t tile = gs_scan_tile_for(e->scan, e->capacity);
    report->tile_invocations = e->scan->workgroup_size;
    report->tile_items_per_invocation = tile / gs_scan_holding_invocations(e->scan);
    report->tile_items = tile;
  }
}

/* Opens the input of a scan or reduction and runs the engine over it, chunk by chunk. */
static int scan_input(gs_context *c, const char *input, const char *output, bool overwrite, bool sync,
                      const gs_scan_config *config, gs_input *in, gs_scan_engine *e, gs_bytes_sink sink,
                      void *sink_ctx, gs_output *out, gs_emitter *emitter, gpusort_report *report) {
  /* the elements' form (narrow, half, big-endian ones are converted: scan_engine.h) */
  const gpusort_type in_form = config->in_form ? config->in_form : (gpusort_type)gs_key_type_to_public(config->input);
  const gpusort_type out_form = config->out_form ? config->out_form : (gpusort_type)gs_key_type_to_public(config->acc);
  const char *name = gpusort_type_name(in_form);
  const unsigned width = gs_scan_element_bytes(config), out_width = gs_scan_result_bytes(config);
  char unit[32];
  snprintf(unit, sizeof unit, "%s %s element", name[0] == 'i' ? "an" : "a", name);
  /* a .npy input: of the scan's type; a .npy output of the results' */
  gs_npy npy;
  bool is_npy;
  unsigned char header[256];
  size_t header_bytes = 0;
  int rc = gs_npy_probe(input, &npy, &is_npy);
  if (!rc && is_npy && (npy.structured || npy.simple.type != in_form))
    rc = gs_fail(GPUSORT_ERROR_USAGE, "%s: its .npy elements are '%s', not %s", input,
                 npy.structured ? "structured" : npy.simple.descr, name);
  if (!rc && is_npy && output)
    header_bytes = gs_npy_header(gs_npy_descr_of(out_form), npy.count, header, sizeof header);
  report->output_bytes = header_bytes; /* the data's are added at the end */
  if (rc) return rc;
  const input_spec spec = {input, output, overwrite, width, unit, false, NULL, NULL, is_npy ? &npy : NULL};
  const early_output early = {out, emitter, output, out_width, sync, NULL, header, header_bytes};
  uint64_t n = 0;
  rc = open_input(c, &spec, scan_capacity, config, out ? &early : NULL, in, &n, report);
  if (!rc && config->reduce_only && n == 0 && config->op != GS_SCAN_SUM)
    rc = gs_fail(GPUSORT_ERROR_BAD_INPUT, "%s: the %s of no elements is undefined", in->name,
                 gs_scan_op_name(config->op));
  if (rc) return rc;
  const gs_record_source source = {.data = in->data, .fd = in->data_fd, .offset = in->data_offset, .name = in->name};
  gs_progress_begin(c, in->bytes + (config->reduce_only ? 0 : n * out_width));
  rc = gs_scan_engine_all(e, c, config, &source, n, sink, sink_ctx);
  gs_progress_end(c);
  report->batches = (uint32_t)(e->chunks > UINT32_MAX ? UINT32_MAX : e->chunks);
  return rc;
}

int gs_file_scan(gs_context *c, const char *input, const char *output, const gs_scan_config *config,
                 gs_file_flags flags, gpusort_report *report) {
  const double start = gs_now();
  gs_input in = {.fd = -1};
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_scan_engine e = {0};
  int rc = scan_input(c, input, output, flags.overwrite, flags.sync, config, &in, &e, emit_bytes, &emitter, &out,
                      &emitter, report);
  finish_task finish = {c, &out, &emitter, GPUSORT_OK, "", 0};
  if (!rc) finish_output(&finish);
  if (!rc) rc = finish.status;
  if (!rc) {
    report_scan(&e, GPUSORT_STAGE_SCAN, report);
    report->output_bytes += report->records * gs_scan_result_bytes(config);
    report->xxh3 = finish.digest;
    report->total_seconds = gs_now() - start;
  } else {
    abandon_output(&out, &emitter);
  }
  gs_emitter_free(&emitter);
  gs_scan_engine_free(&e);
  gs_input_close(&in);
  return rc;
}

int gs_file_reduce(gs_context *c, const char *input, const gs_scan_config *config, void *result,
                   gpusort_report *report) {
  const double start = gs_now();
  gs_input in = {.fd = -1};
  gs_scan_engine e = {0};
  int rc = scan_input(c, input, NULL, false, false, config, &in, &e, NULL, NULL, NULL, NULL, report);
  if (!rc) {
    gs_scan_engine_value(&e, result);
    report_scan(&e, GPUSORT_STAGE_REDUCE, report);
    report->stage_seconds[GPUSORT_STAGE_WRITE] = 0; /* nothing is written */
    report->total_seconds = gs_now() - start;
  }
  gs_scan_engine_free(&e);
  gs_input_close(&in);
  return rc;
}

/* ---- The look-back family ---- */

/* Records one compaction chunk takes within the budget: a stream larger is spilled. */
static uint64_t compact_capacity(gs_context *c, const void *request) {
  return gs_compact_engine_capacity(c, request, c->budget);
}

static void report_compact(const gs_compact_engine *e, gpusort_report *report) {
  double *s = report->stage_seconds;
  s[GPUSORT_STAGE_SETUP] += e->setup;
  s[GPUSORT_STAGE_READ] += e->read;
  s[GPUSORT_STAGE_UPLOAD] += e->upload;
  s[GPUSORT_STAGE_COMPACT] += e->gpu;
  s[GPUSORT_STAGE_DOWNLOAD] += e->download;
  s[GPUSORT_STAGE_WRITE] += e->write;
  s[GPUSORT_STAGE_ASSEMBLE] += e->assemble;
  if (e->compact) {
    report->tile_invocations = e->compact->workgroup_size;
    report->tile_items_per_invocation = e->compact->items * e->compact->subtiles; /* (over its sub-tiles) */
    report->tile_items = e->compact->tile;
  }
  report->batches = (uint32_t)(e->chunks > UINT32_MAX ? UINT32_MAX : e->chunks);
}

static int spool_bytes(void *scratch, const void *data, size_t bytes) { return gs_scratch_append(scratch, data, bytes); }

/* The spooled records into the output (after its header): read from the scratch file
 * straight into the output's mapping where it has one. */
static int copy_spool(const gs_scratch *spool, gs_emitter *emitter) {
  const size_t piece = (size_t)8 << 20;
  unsigned char *buffer = NULL;
  int rc = GPUSORT_OK;
  for (uint64_t at = 0; at < spool->appended && !rc;) {
    const size_t bytes = spool->appended - at < piece ? (size_t)(spool->appended - at) : piece;
    unsigned char *into = gs_emit_place(emitter, bytes);
    if (!into && !buffer && !(buffer = malloc(piece))) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!into) into = buffer;
    for (size_t got = 0; got < bytes && !rc;) {
      const ssize_t r = pread(spool->fd, into + got, bytes - got, (off_t)(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        rc = gs_fail(GPUSORT_ERROR_IO, "cannot read %s: %s", spool->where, r < 0 ? strerror(errno) : "it ended early");
      else
        got += (size_t)r;
    }
    if (!rc) rc = gs_emit(emitter, into, bytes);
    at += bytes;
  }
  free(buffer);
  return rc;
}

int gs_file_compact(gs_context *c, const char *input, const char *output, const gs_compact_request *request,
                    gs_file_flags flags, uint64_t *result_count, gpusort_report *report) {
  const double start = gs_now();
  gs_compact_request r = *request;
  gs_npy npy;
  bool is_npy;
  int rc = gs_layout_for_input(&r.layout, input, &npy, &is_npy);
  if (!rc) rc = gs_compact_request_resolve(&r, is_npy ? &npy : NULL);
  if (rc) return rc;
  const bool partition = r.mode == GS_COMPACT_PARTITION;
  const unsigned R = r.layout.record_bytes, O = gs_compact_output_bytes(&r);
  char descr[GS_NPY_DESCR_BYTES];
  if (is_npy) gs_compact_npy_descr(&r, npy.descr, descr, sizeof descr);
  gs_input in = {.fd = -1};
  gs_output out = {.fd = -1};
  gs_emitter emitter = {0};
  gs_scratch spool = {.fd = -1};
  gs_compact_engine e = {0};
  unsigned char *region_copy = NULL;
  late_output late = {.early = {&out, &emitter, output, O, flags.sync, NULL, NULL, 0}, .descr = is_npy ? descr : NULL};
  /* a partition writes all of its input: its output is opened as the input is */
  if (partition && (rc = late_header(&late, is_npy ? npy.count : 0))) return rc;
  char unit[64];
  gs_layout_unit(&r.layout, unit, sizeof unit);
  /* (the output records are built from the input's mapping) */
  const input_spec spec = {input, output, flags.overwrite, R, unit, true, NULL, NULL, is_npy ? &npy : NULL};
  uint64_t n = 0, capacity = 0;
  rc = open_input(c, &spec, compact_capacity, &r, partition ? &late.early : NULL, &in, &n, report);
  const double planning = gs_now();
  if (!rc && !(capacity = compact_capacity(c, &r)))
    rc = gs_fail(GPUSORT_ERROR_TOO_LARGE, "the memory budget holds no compaction at all");
  report->stage_seconds[GPUSORT_STAGE_SETUP] += gs_now() - planning;
  /* Where the records go: a partition's anywhere in its output (mapped, or a copy of it);
   * the others' in order: into the output opened at its exact size once the one chunk has
   * run; with several chunks, into an output written as they come, or first into a scratch
   * file when a .npy header must give their count. */
  const bool one_chunk = n <= capacity, spooling = !partition && !one_chunk && is_npy;
  gs_compact_output o = {.sink = emit_bytes, .place = emit_place, .ctx = &emitter, .total = n};
  if (!rc && partition && n && !(o.region = gs_emit_place(&emitter, n * R)) && !(o.region = region_copy = malloc(n * R)))
    rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory for a partition of %llu records", (unsigned long long)n);
  if (!rc && !partition && one_chunk) o.size_known = open_late_output, o.size_ctx = &late;
  if (!rc && !partition && !one_chunk && !spooling) rc = open_unreserved(&out, &emitter, output, flags.sync);
  if (!rc && spooling) {
    char dir[4096];
    scratch_dir_for(c, output, dir, sizeof dir);
    rc = gs_scratch_open(&spool, dir);
    o = (gs_compact_output){.sink = spool_bytes, .ctx = &spool};
  }
  if (!rc) {
    gs_progress_begin(c, in.bytes + n * 4);
    const gs_record_source source = {.data = in.data, .fd = in.data_fd, .offset = in.data_offset, .name = in.name};
    rc = gs_compact_engine_all(&e, c, &r, &source, n, &o);
    const double t0 = gs_now();
    if (!rc && partition && n) rc = gs_emit(&emitter, o.region, n * R);
    if (!rc && spooling && !(rc = open_late_output(&late, e.written))) rc = copy_spool(&spool, &emitter);
    report->stage_seconds[GPUSORT_STAGE_WRITE] += gs_now() - t0;
    gs_progress_end(c);
  }
  finish_task finish = {c, &out, &emitter, GPUSORT_OK, "", 0};
  if (!rc) finish_output(&finish);
  if (!rc) rc = finish.status;
  if (!rc) {
    report_compact(&e, report);
    report->output_bytes = late.early.header_bytes + e.written * O;
    report->xxh3 = finish.digest;
    report->total_seconds = gs_now() - start;
    *result_count = gs_compact_engine_result(&e);
  } else {
    abandon_output(&out, &emitter);
  }
  gs_emitter_free(&emitter);
  gs_compact_engine_free(&e);
  gs_scratch_close(&spool);
  free(region_copy);
  gs_input_close(&in);
  return rc;
}
