/* gpusort sort: file -> GPU Onesweep sort -> file, with per-stage report and checksum.
 *
 * Every layout sorts (key, value) arrays on the GPU:
 *   keys      keys alone;
 *   pairs     keys and values, split apart on upload and interleaved again on download;
 *   records   keys taken from the records on upload, sorted with their indices, and the
 *             whole records put in sorted order by a gather on the GPU or by host threads
 *             on the way out (see gather_on_gpu);
 *   --argsort keys sorted with their indices, and the indices written. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/pipeline.h"
#include "cli/report.h"
#include "io/input.h"
#include "io/layout.h"
#include "io/output.h"
#include "io/transfer.h"
#include "io/verify.h"
#include "prim/gather.h"
#include "prim/radix_sort.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/parallel.h"

enum { SCRATCH_BYTES = 32 << 20 };

typedef enum { OUT_KEYS, OUT_PAIRS, OUT_RECORDS, OUT_INDICES } output_kind;

typedef struct {
  gs_common_options common;
  gs_layout_options layout_options;
  gs_layout layout;
  const char *input, *output;
  bool force, sync, verify, descending, argsort, have_bits, have_index_type;
  unsigned begin_bit, end_bit; /* 0, 0: all bits */
  unsigned index_bytes;
  const char *bits_text;
  uint32_t test_flags; /* GPUSORT_TEST_CORRUPT, for the test suite */
} sort_options;

static bool env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* Returns GS_OK with *done set when --help/--version was handled. */
static int parse_sort_options(int argc, char **argv, sort_options *o, bool *done) {
  static const struct option longopts[] = {GS_LAYOUT_LONG_OPTIONS,
                                           {"output", required_argument, NULL, 'o'},
                                           {"force", no_argument, NULL, 'f'},
                                           {"sync", no_argument, NULL, OPT_SYNC},
                                           {"verify", no_argument, NULL, OPT_VERIFY},
                                           {"descending", no_argument, NULL, OPT_DESCENDING},
                                           {"bits", required_argument, NULL, OPT_BITS},
                                           {"argsort", no_argument, NULL, OPT_ARGSORT},
                                           {"index-type", required_argument, NULL, OPT_INDEX_TYPE},
                                           GS_COMMON_LONG_OPTIONS,
                                           {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  gs_options_begin(&o->common, done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":o:fqvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&o->common, opt, optarg)) != 0 ||
        (rc = gs_layout_option(&o->layout_options, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    switch (opt) {
    case 'o': o->output = optarg; break;
    case 'f': o->force = true; break;
    case OPT_SYNC: o->sync = true; break;
    case OPT_VERIFY: o->verify = true; break;
    case OPT_DESCENDING: o->descending = true; break;
    case OPT_BITS:
      o->bits_text = optarg;
      o->have_bits = true;
      break;
    case OPT_ARGSORT: o->argsort = true; break;
    case OPT_INDEX_TYPE:
      if (strcmp(optarg, "u32") != 0 && strcmp(optarg, "u64") != 0)
        return gs_fail(GS_ERR_USAGE, "--index-type takes u32 or u64, not '%s'", optarg);
      o->index_bytes = optarg[1] == '6' ? 8 : 4;
      o->have_index_type = true;
      break;
    default:
      if ((rc = gs_other_option(opt, argv, done)) || *done) return rc;
    }
  }
  int positional = argc - optind;
  if (positional < 1) return gs_fail(GS_ERR_USAGE, "missing INPUT (see 'gpusort --help')");
  if (positional > 2) return gs_fail(GS_ERR_USAGE, "too many arguments: '%s' (see 'gpusort --help')", argv[optind + 2]);
  o->input = argv[optind];
  if (positional == 2) {
    if (o->output) return gs_fail(GS_ERR_USAGE, "OUTPUT given twice: '%s' and -o '%s'", argv[optind + 1], o->output);
    o->output = argv[optind + 1];
  }
  if (!o->output) return gs_fail(GS_ERR_USAGE, "missing OUTPUT: name a file, or - for stdout");
  if ((rc = gs_layout_from_options(&o->layout_options, &o->layout))) return rc;
  if (o->have_index_type && !o->argsort) return gs_fail(GS_ERR_USAGE, "--index-type needs --argsort");
  if (o->bits_text &&
      (rc = gs_parse_bits(o->bits_text, gs_key_info_of(o->layout.key)->bytes * 8, &o->begin_bit, &o->end_bit)))
    return rc;
  if (env_flag("GPUSORT_TEST_CORRUPT")) o->test_flags |= GS_SORT_TEST_CORRUPT;
  return GS_OK;
}

/* The bytes written for `count` sorted records, assembled from what the GPU returns. */
typedef struct {
  output_kind kind;
  const gs_layout *layout;
  const unsigned char *input; /* records, for the gather */
  uint64_t records;           /* in the input: a gathered index must be below */
  int bad_index[64];          /* per worker: an index out of range was returned */
  unsigned out_bytes;         /* per output record */
  const void *const *fields;  /* the downloaded chunk */
  size_t first;               /* of the piece within the chunk */
  unsigned char *scratch;
} assembly;

static void assemble_range(void *arg, size_t begin, size_t end, unsigned worker) {
  assembly *a = arg;
  const unsigned R = a->out_bytes;
  unsigned char *out = a->scratch;
  switch (a->kind) {
  case OUT_PAIRS: {
    const unsigned kb = gs_key_info_of(a->layout->key)->bytes, vb = R - kb;
    const unsigned char *keys = (const unsigned char *)a->fields[0] + a->first * kb;
    const unsigned char *values = (const unsigned char *)a->fields[1] + a->first * vb;
    for (size_t i = begin; i < end; i++) {
      memcpy(out + i * R, keys + i * kb, kb);
      memcpy(out + i * R + kb, values + i * vb, vb);
    }
    break;
  }
  case OUT_RECORDS: {
    const uint32_t *index = (const uint32_t *)a->fields[0] + a->first;
    for (size_t i = begin; i < end; i++) {
      if (index[i] >= a->records) { /* never trust the GPU with a read outside the input */
        a->bad_index[worker] = 1;
        return;
      }
      memcpy(out + i * R, a->input + (size_t)index[i] * R, R);
    }
    break;
  }
  case OUT_INDICES: { /* u32 from the GPU, widened to u64 */
    const uint32_t *index = (const uint32_t *)a->fields[0] + a->first;
    for (size_t i = begin; i < end; i++) {
      uint64_t wide = index[i];
      memcpy(out + i * 8, &wide, 8);
    }
    break;
  }
  case OUT_KEYS: break;
  }
}

/* Where the sorted output goes: verification, the checksum, the output file. */
typedef struct {
  const sort_options *o;
  output_kind kind;
  unsigned out_bytes;
  const unsigned char *input;
  uint64_t records;
  gs_emitter *emitter;
  gs_order_check *order;    /* when verifying records */
  gs_multiset_hash *hash;
  gs_argsort_check *argsort; /* when verifying indices */
  unsigned char *scratch;
  bool gathered; /* records arrive in order, gathered on the GPU */
  double verify_seconds;
  double assemble_seconds; /* gathering records / joining pairs on the host */
} sort_sink;

static int emit(sort_sink *s, const void *data, size_t count) {
  const size_t bytes = count * s->out_bytes;
  if (s->order || s->argsort) {
    const double t = gs_now();
    if (s->argsort) {
      gs_argsort_check_feed(s->argsort, data, count, s->out_bytes);
    } else {
      gs_order_check_feed(s->order, data, bytes);
      gs_multiset_hash_add(s->hash, data, bytes, s->out_bytes);
    }
    s->verify_seconds += gs_now() - t;
  }
  return gs_emit(s->emitter, data, bytes);
}

static int sink_chunk(void *ctx, const void *const *fields, size_t count) {
  sort_sink *s = ctx;
  if (s->kind == OUT_KEYS || s->gathered || (s->kind == OUT_INDICES && s->out_bytes == 4))
    return emit(s, fields[0], count);
  const size_t piece = SCRATCH_BYTES / s->out_bytes;
  for (size_t first = 0; first < count; first += piece) {
    const size_t n = count - first < piece ? count - first : piece;
    assembly a = {.kind = s->kind, .layout = &s->o->layout, .input = s->input, .records = s->records,
                  .out_bytes = s->out_bytes, .fields = fields, .first = first,
                  .scratch = s->scratch};
    const double t0 = gs_now();
    gs_parallel_for(n, 1 << 14, assemble_range, &a);
    s->assemble_seconds += gs_now() - t0;
    for (int w = 0; w < 64; w++)
      if (a.bad_index[w])
        return gs_fail(GS_ERR_VERIFY, "the GPU returned a record index past the %llu records; no output written",
                       (unsigned long long)s->records);
    int rc = emit(s, s->scratch, n);
    if (rc) return rc;
  }
  return GS_OK;
}

typedef struct {
  double device, setup, read, upload, sort, gather, download, write, verify, total;
  double assemble; /* part of write: records gathered or pairs joined on the host */
} sort_times;

static void print_report(const sort_options *o, const gs_device *dev, const gs_radix_sort *sorter, uint64_t n,
                         double bytes, const sort_times *t) {
  char desc[512], size[32], a[32], b[32], line[200], layout[128];
  gs_device_describe(&dev->info, desc, sizeof desc);
  gs_note("device %u: %s", dev->info.index, desc);
  gs_format_bytes(size, sizeof size, bytes);
  gs_layout_describe(&o->layout, layout, sizeof layout);
  char order[96] = "";
  if (o->descending || o->have_bits || o->argsort)
    snprintf(order, sizeof order, " (%s%s%s%s)", o->descending ? "descending" : "ascending",
             o->bits_text ? ", bits " : "", o->bits_text ? o->bits_text : "",
             o->argsort ? (o->index_bytes == 8 ? ", u64 indices out" : ", u32 indices out") : "");
  gs_note("%llu %s, %s%s", (unsigned long long)n, layout, size, order);
  if (o->common.verbosity >= 2)
    gs_note("tile: %u invocations x %u keys = %u keys, %u bytes of shared memory; %u passes", sorter->workgroup_size,
            sorter->keys_per_thread, sorter->tile_keys, sorter->shared_bytes, sorter->times.passes);
  snprintf(line, sizeof line, "opening the device %.0f ms, pipelines and buffers %.0f ms", t->device * 1e3,
           (t->setup - t->device) * 1e3);
  gs_report_row("setup", t->setup, line);
  gs_report_row("read", t->read, "host: input into staging memory");
  gs_report_row("upload", t->upload, "GPU copy");
  gs_format_rate(a, sizeof a, t->sort > 0 ? (double)n / t->sort : 0, "keys");
  gs_format_rate(b, sizeof b, t->sort > 0 ? bytes / t->sort : 0, "B");
  snprintf(line, sizeof line, "GPU, %s, %s", a, b);
  gs_report_row("sort", t->sort, line);
  if (t->gather > 0) gs_report_row("gather", t->gather, "GPU: whole records in sorted order");
  if (o->common.verbosity >= 2) {
    char label[16];
    gs_report_row(" histogram", sorter->times.histogram, "GPU");
    for (unsigned p = 0; p < sorter->times.passes; p++) {
      snprintf(label, sizeof label, " pass %u", p);
      gs_report_row(label, sorter->times.pass[p], "GPU");
    }
  }
  gs_report_row("download", t->download, "GPU copy");
  gs_report_row("write", t->write, "host: output and checksum");
  if (o->common.verbosity >= 2 && t->assemble > 0)
    gs_report_row(" assemble", t->assemble,
                  o->layout.kind == GS_LAYOUT_RECORDS && !o->argsort ? "host: records gathered by index"
                                                                     : "host: output assembled");
  if (o->verify) gs_report_row("verify", t->verify, "host: order and permutation");
  gs_format_rate(a, sizeof a, t->total > 0 ? (double)n / t->total : 0, "keys");
  gs_format_rate(b, sizeof b, t->total > 0 ? bytes / t->total : 0, "B");
  snprintf(line, sizeof line, "end to end, %s, %s", a, b);
  gs_report_row("total", t->total, line);
}

int gs_cmd_sort(int argc, char **argv) {
  sort_options o;
  bool done;
  int rc = parse_sort_options(argc, argv, &o, &done);
  if (rc || done) return rc;
  const double start = gs_now();
  const gs_layout *L = &o.layout;
  const unsigned key_bytes = gs_key_info_of(L->key)->bytes, R = L->record_bytes;
  const output_kind kind = o.argsort                      ? OUT_INDICES
                           : L->kind == GS_LAYOUT_PAIRS   ? OUT_PAIRS
                           : L->kind == GS_LAYOUT_RECORDS ? OUT_RECORDS
                                                          : OUT_KEYS;
  /* The GPU sorts keys alone, keys with their values, or keys with their input indices. */
  const unsigned gpu_value_bytes =
      kind == OUT_PAIRS ? gs_key_info_of(L->value)->bytes : (kind == OUT_RECORDS || kind == OUT_INDICES) ? 4 : 0;
  char unit[64];
  gs_layout_unit(L, unit, sizeof unit);

  gs_input in;
  gs_output out = {.fd = -1};
  gs_device dev = {0};
  gs_radix_sort sorter = {0};
  gs_gather gather = {0};
  gs_stager up = {0}, down = {0};
  gs_emitter emitter = {0};
  unsigned char *scratch = NULL;
  gs_argsort_check argsort_check = {0};
  sort_times t = {0};
  uint64_t n = 0;

  if ((rc = gs_input_open(&in, o.input))) goto cleanup;
  if (!in.is_stream && (rc = gs_input_check_width(&in, R, unit))) goto cleanup;
  if ((rc = gs_output_preflight(o.output, o.force, &in))) goto cleanup;

  if ((rc = gs_open_device_for(&dev, o.common.device, o.common.timeout_s, &in))) goto cleanup;
  t.device = gs_now() - start;
  const uint64_t max_records = gs_radix_sort_max_keys(&dev, L->key, gpu_value_bytes);
  if (in.is_stream) {
    const double t0 = gs_now();
    char limit[384];
    snprintf(limit, sizeof limit, "the %llu records %s can sort in one buffer", (unsigned long long)max_records,
             dev.info.name);
    if ((rc = gs_input_read_stream(&in, max_records * R, limit))) goto cleanup;
    if ((rc = gs_input_check_width(&in, R, unit))) goto cleanup;
    t.read += gs_now() - t0;
  }
  n = in.bytes / R;
  if (n > max_records) {
    rc = gs_fail(GS_ERR_RUNTIME,
                 "%s holds %llu records; %s can sort at most %llu of them in one buffer (larger inputs are not "
                 "supported yet)",
                 in.name, (unsigned long long)n, dev.info.name, (unsigned long long)max_records);
    goto cleanup;
  }
  if (kind == OUT_INDICES && !o.have_index_type) o.index_bytes = n < (1ull << 32) ? 4 : 8;
  const unsigned out_bytes = kind == OUT_INDICES ? o.index_bytes : R;

  /* Where records are put in order. Measured on an H100 for 1 GiB of records: the GPU path
   * (records up, gather, records down) took 60-64 ms against 140-150 ms of host gathering
   * for 16-byte records, and 63 ms against 50 ms for 100-byte ones: host gathering costs per
   * record, the GPU path per byte. Records of up to 64 bytes (and a multiple of 4) that fit
   * beside the sort go to the GPU. GPUSORT_RECORD_GATHER=host or =gpu decides, for tests. */
  const char *gather_choice = getenv("GPUSORT_RECORD_GATHER");
  const bool forced_gpu = gather_choice && strcmp(gather_choice, "gpu") == 0;
  const bool forced_host = gather_choice && strcmp(gather_choice, "host") == 0;
  const uint64_t sort_bytes = (uint64_t)n * 2 * (key_bytes + gpu_value_bytes);
  const bool gpu_gather = kind == OUT_RECORDS && gs_gather_fits(&dev, n, R) && !forced_host &&
                          (R <= 64 || forced_gpu) &&
                          sort_bytes + 2 * (uint64_t)n * R <= dev.info.device_local_bytes / 4 * 3;
  gs_radix_sort_config config = {
      .key = L->key, .descending = o.descending, .value_bytes = gpu_value_bytes, .capacity = n};
  if ((rc = gs_radix_sort_create(&dev, &sorter, &config))) goto cleanup;
  if (gpu_gather && (rc = gs_gather_create(&dev, &gather, n, R))) goto cleanup;
  const size_t gpu_bytes = (size_t)n * (key_bytes + gpu_value_bytes + (gpu_gather ? 2 * R : 0));
  if ((rc = gs_stager_create(&dev, &up, GS_MEM_UPLOAD, gpu_bytes))) goto cleanup;
  if ((rc = gs_stager_create(&dev, &down, GS_MEM_READBACK, gpu_bytes))) goto cleanup;
  t.setup = gs_now() - start - t.read;

  /* Upload: the key field of every record, and the value field of pairs. */
  gs_field up_fields[2] = {{gs_radix_sort_input(&sorter), L->key_offset, key_bytes}};
  unsigned up_count = 1;
  if (kind == OUT_PAIRS) up_fields[up_count++] = (gs_field){gs_radix_sort_values_input(&sorter), L->value_offset, gpu_value_bytes};
  if (gpu_gather) up_fields[up_count++] = (gs_field){gs_gather_input(&gather), 0, R};
  gs_transfer_stats up_stats = {0}, down_stats = {0};
  if ((rc = gs_upload_fields(&up, in.data, n, R, up_fields, up_count, &up_stats))) goto cleanup;
  t.read += up_stats.host_seconds;
  t.upload = up_stats.gpu_seconds;
  gs_stager_destroy(&up); /* release the staging memory before the sort needs the GPU */

  gs_multiset_hash input_hash = {0}, output_hash = {0};
  gs_order_check order;
  if (o.verify) {
    const double t0 = gs_now();
    if (kind == OUT_INDICES) {
      if (gs_argsort_check_init(&argsort_check, in.data, n, L->key, o.descending, R, L->key_offset, o.begin_bit,
                                o.end_bit) != 0) {
        rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
        goto cleanup;
      }
    } else {
      gs_multiset_hash_add(&input_hash, in.data, in.bytes, R);
      gs_order_check_init(&order, L->key, o.descending, R, L->key_offset, o.begin_bit, o.end_bit);
    }
    t.verify += gs_now() - t0;
  }

  gs_radix_sort_run_options run = {.n = n,
                                   .begin_bit = o.begin_bit,
                                   .end_bit = o.end_bit,
                                   .index_values = kind == OUT_RECORDS || kind == OUT_INDICES,
                                   .test_flags = o.test_flags};
  gs_radix_sort_result sorted;
  if ((rc = gs_radix_sort_run(&sorter, &run, &sorted))) goto cleanup;
  t.sort = sorter.times.total;

  /* Download: keys (and values) of keys and pairs; the indices of records and argsort. */
  gs_field down_fields[2] = {{sorted.keys, 0, key_bytes}};
  unsigned down_count = 1;
  if (kind == OUT_PAIRS) down_fields[down_count++] = (gs_field){sorted.values, 0, gpu_value_bytes};
  if (kind == OUT_RECORDS || kind == OUT_INDICES) down_fields[0] = (gs_field){sorted.values, 0, 4};
  if (gpu_gather) {
    if ((rc = gs_gather_run(&gather, sorted.values, n))) goto cleanup;
    t.gather = gather.seconds;
    down_fields[0] = (gs_field){&gather.records_out, 0, R};
  }

  scratch = kind == OUT_KEYS ? NULL : malloc(SCRATCH_BYTES);
  if ((rc = gs_emitter_init(&emitter, NULL))) goto cleanup;
  if (kind != OUT_KEYS && !scratch) {
    rc = gs_fail(GS_ERR_RUNTIME, "out of host memory");
    goto cleanup;
  }
  sort_sink sink = {.o = &o, .kind = kind, .out_bytes = out_bytes, .input = in.data, .records = n,
                    .emitter = &emitter, .scratch = scratch, .gathered = gpu_gather};
  if (o.verify) {
    if (kind == OUT_INDICES)
      sink.argsort = &argsort_check;
    else
      sink.order = &order, sink.hash = &output_hash;
  }
  if ((rc = gs_output_open(&out, o.output))) goto cleanup;
  out.sync = o.sync;
  if (o.verify && out.direct) {
    /* Data written to a stream cannot be taken back: verify everything before writing. */
    if ((rc = gs_download_fields(&down, down_fields, down_count, n, sink_chunk, &sink, &down_stats))) goto cleanup;
    gs_emitter_free(&emitter);
    if ((rc = gs_emitter_init(&emitter, NULL))) goto cleanup;
    sink.order = NULL, sink.hash = NULL, sink.argsort = NULL;
    t.verify += sink.verify_seconds;
    sink.verify_seconds = 0;
    down_stats.host_seconds = 0;
    const bool passed = kind == OUT_INDICES ? gs_argsort_check_done(&argsort_check)
                                            : order.sorted && gs_multiset_hash_equal(&input_hash, &output_hash);
    if (!passed) goto verified;
  }
  emitter.out = &out;
  if ((rc = gs_download_fields(&down, down_fields, down_count, n, sink_chunk, &sink, &down_stats))) goto cleanup;
verified:
  t.download = down_stats.gpu_seconds;
  t.verify += sink.verify_seconds;
  t.write = down_stats.host_seconds - sink.verify_seconds;
  t.assemble = sink.assemble_seconds;
  if (o.verify) {
    if (kind == OUT_INDICES && !gs_argsort_check_done(&argsort_check)) {
      rc = gs_fail(GS_ERR_VERIFY, "verification failed: %s; no output written", argsort_check.detail);
      goto cleanup;
    }
    if (kind != OUT_INDICES && !order.sorted) {
      rc = gs_fail(GS_ERR_VERIFY, "verification failed: the output is not sorted at record %llu (%s); no output written",
                   (unsigned long long)order.first_bad, order.detail);
      goto cleanup;
    }
    if (kind != OUT_INDICES && !gs_multiset_hash_equal(&input_hash, &output_hash)) {
      rc = gs_fail(GS_ERR_VERIFY,
                   "verification failed: the output is not a permutation of the input (checksums differ); "
                   "no output written");
      goto cleanup;
    }
  }
  if ((rc = gs_output_commit(&out))) goto cleanup;
  t.total = gs_now() - start;
  if (o.common.verbosity >= 1) {
    print_report(&o, &dev, &sorter, n, (double)in.bytes, &t);
    if (o.verify)
      gs_note(kind == OUT_INDICES ? "verified: the indices are a stable sorted permutation of the input"
                                  : "verified: output sorted and a permutation of the input");
    gs_print_checksum(strcmp(o.output, "-") == 0 ? "-" : o.output, gs_emitter_digest(&emitter));
  }

cleanup:
  if (rc) gs_output_abort(&out);
  gs_emitter_free(&emitter);
  free(scratch);
  gs_argsort_check_free(&argsort_check);
  gs_stager_destroy(&up);
  gs_stager_destroy(&down);
  gs_gather_destroy(&gather);
  gs_radix_sort_destroy(&sorter);
  gs_device_close(&dev);
  gs_input_close(&in);
  return rc;
}
