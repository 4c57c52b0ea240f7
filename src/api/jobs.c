/* The public API's second tier: jobs on arrays and files, and the benchmarks. Each entry
 * point checks its arguments, turns them into the internal forms and runs the job. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "io/datagen.h"
#include "io/npy.h"
#include "job/bench.h"
#include "job/jobs.h"
#include "job/scan_engine.h"
#include "prim/elements.h"
#include "prim/key_spec.h"
#include "util/error.h"

static int need(const void *p, const char *call, const char *what) {
  return p ? GPUSORT_OK : gs_fail(GPUSORT_ERROR_USAGE, "%s: %s is NULL", call, what);
}

/* A data pointer may be NULL only for no records. */
static int need_data(const void *p, uint64_t count, const char *call, const char *what) {
  return p || count == 0 ? GPUSORT_OK : gs_fail(GPUSORT_ERROR_USAGE, "%s: %s is NULL", call, what);
}

static int check_report(const gpusort_report *report, const char *call) {
  if (report && report->struct_size < sizeof(uint32_t))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: report->struct_size is %u; initialize it with GPUSORT_REPORT_INIT", call,
                   report->struct_size);
  return GPUSORT_OK;
}

static int give_report(gpusort_report *user, const gpusort_report *full, int rc) {
  if (rc == GPUSORT_OK && user) gs_api_copy_out(user, full, sizeof *full, "gpusort_report");
  return rc;
}

static int layout_in(const gpusort_layout *user, const char *call, gs_layout *layout) {
  gpusort_layout full;
  int rc = need(user, call, "layout");
  /* layouts of libgpusort 0.2 end at key_offset; no size between that and this one's exists */
  const size_t old_size = offsetof(gpusort_layout, key_bytes);
  if (!rc && user->struct_size != old_size && user->struct_size < sizeof full)
    rc = gs_fail(GPUSORT_ERROR_USAGE, "gpusort_layout: struct_size is %u; initialize it with its _INIT macro",
                 user->struct_size);
  if (!rc) rc = gs_api_copy_in(&full, sizeof full, user, old_size, "gpusort_layout");
  return rc ? rc : gs_layout_from_public(&full, layout);
}

/* A sort request from a layout and options; `allowed` says which flags the call takes. */
static int sort_request(const gpusort_layout *layout, const gpusort_sort_options *user, uint32_t allowed,
                        const char *call, gs_sort_request *r, uint32_t *flags) {
  gpusort_sort_options o = GPUSORT_SORT_OPTIONS_INIT;
  memset(r, 0, sizeof *r);
  int rc = layout_in(layout, call, &r->layout);
  /* (0.3's struct ended before algo) */
  if (!rc && user) rc = gs_api_copy_in(&o, sizeof o, user, offsetof(gpusort_sort_options, algo), "gpusort_sort_options");
  if (!rc) rc = gs_api_check_flags(o.flags, allowed, call);
  if (rc) return rc;
  if ((unsigned)o.algo > GPUSORT_SORT_BITONIC)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown sort algorithm %d", call, (int)o.algo);
  r->descending = o.flags & GPUSORT_DESCENDING;
  r->verify = o.flags & GPUSORT_VERIFY;
  r->begin_bit = o.begin_bit;
  r->end_bit = o.end_bit;
  r->algo = (gs_sort_algo)o.algo;
  *flags = o.flags;
  /* (a layout a .npy header gives is checked once the file job has read it) */
  if (r->layout.from_file || r->layout.named_fields) return GPUSORT_OK;
  if ((rc = gs_sort_request_check_bits(r))) {
    char why[512];
    snprintf(why, sizeof why, "%s", gs_last_error());
    return gs_fail(rc, "%s: %s", call, why);
  }
  return GPUSORT_OK;
}

static int index_bytes(gpusort_type type, const char *call, unsigned *bytes) {
  switch (type) {
  case GPUSORT_TYPE_NONE: *bytes = 0; return GPUSORT_OK; /* chosen by the count */
  case GPUSORT_U32: *bytes = 4; return GPUSORT_OK;
  case GPUSORT_U64: *bytes = 8; return GPUSORT_OK;
  default: return gs_fail(GPUSORT_ERROR_USAGE, "%s: indices are u32 or u64, not %s", call, gpusort_type_name(type));
  }
}

int gs_api_scan_config(const gpusort_scan_options *user, uint32_t allowed, bool reduce, const char *file,
                       const char *call, gs_scan_config *c, uint32_t *flags) {
  gpusort_scan_options o;
  int rc = need(user, call, "options");
  if (!rc) rc = gs_api_copy_in(&o, sizeof o, user, sizeof o, "gpusort_scan_options");
  if (!rc) rc = gs_api_check_flags(o.flags, allowed, call);
  if (rc) return rc;
  memset(c, 0, sizeof *c);
  if (o.type == GPUSORT_TYPE_NONE && file) { /* a .npy file's header says */
    gs_npy npy;
    bool is_npy;
    if (gs_npy_probe(file, &npy, &is_npy) == GPUSORT_OK && is_npy && !npy.structured) o.type = npy.simple.type;
    if (o.type == GPUSORT_TYPE_NONE)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s is not a .npy file of numbers: say what it holds (--keys TYPE)", file);
  }
  /* elements of another form than the GPU's six widen to one of them (prim/elements.h) */
  if (gs_element_gpu_type(o.type, &c->input) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the options name no valid element type (%d)%s", call, (int)o.type,
                   o.type == GPUSORT_BYTES ? ": byte strings have no sum, minimum or maximum" : "");
  const bool other_form = gs_key_type_to_public(c->input) != (int)o.type;
  if (o.acc == GPUSORT_TYPE_NONE) {
    c->acc = c->input;
    if (other_form) c->in_form = c->out_form = o.type; /* results in the elements' form */
  } else if (gs_key_type_from_public(o.acc, &c->acc) != 0) {
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the accumulator type (%d) is not one of u32, i32, f32, u64, i64, f64", call,
                   (int)o.acc);
  } else if (other_form) {
    const gs_field_type *in = gs_field_type_of(o.type);
    const gs_key_info *acc = gs_key_info_of(c->acc), *widened = gs_key_info_of(c->input);
    const bool float_in = in->kind == GS_PART_FLOAT, signed_in = in->kind == GS_PART_SIGNED;
    if (acc->bytes < in->bytes || (float_in && acc->kind != GS_KEY_KIND_FLOAT) ||
        (signed_in && acc->kind == GS_KEY_KIND_UNSIGNED) ||
        (acc->bytes == in->bytes && acc->kind != widened->kind))
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: a %s accumulator does not hold %s elements (give one as wide or wider, "
                     "a float for floats, a signed or float one for signed integers)", call, acc->name, in->name);
    if (acc->bytes == widened->bytes && acc->kind != widened->kind) {
      if (acc->kind == GS_KEY_KIND_FLOAT) /* (u16 to f32 would need a conversion on the GPU) */
        return gs_fail(GPUSORT_ERROR_USAGE, "%s: %s elements sum in an integer accumulator or f64, not f32", call,
                       in->name);
      c->input = c->acc; /* u8 or u16 as i32: the same bits as widened to u32 */
    }
    c->in_form = o.type;
    c->out_form = gs_element_form_like(c->acc, o.type); /* in the elements' byte order */
    if ((int)c->out_form == gs_key_type_to_public(c->acc)) c->out_form = GPUSORT_TYPE_NONE;
  }
  if ((unsigned)o.op > GPUSORT_MAX || (unsigned)o.algo > GPUSORT_SCAN_REDUCE_THEN_SCAN)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown operator (%d) or algorithm (%d)", call, (int)o.op, (int)o.algo);
  c->op = (gs_scan_op)o.op;
  c->inclusive = !(o.flags & GPUSORT_EXCLUSIVE);
  c->reduce_only = reduce;
  if ((rc = gs_scan_check_config(NULL, c))) return rc;
  /* Float sums depend on the association order: reduce-then-scan fixes it (their default);
   * the look-back scan is faster and may differ in the last bits from run to run. */
  const bool float_sum = c->op == GS_SCAN_SUM && gs_key_info_of(c->acc)->kind == GS_KEY_KIND_FLOAT;
  c->algo = o.algo == GPUSORT_SCAN_LOOKBACK            ? GS_SCAN_LOOKBACK
            : o.algo == GPUSORT_SCAN_REDUCE_THEN_SCAN ? GS_SCAN_REDUCE_THEN_SCAN
            : float_sum                               ? GS_SCAN_REDUCE_THEN_SCAN
                                                      : GS_SCAN_LOOKBACK;
  if ((o.flags & GPUSORT_DETERMINISTIC) && float_sum && c->algo == GS_SCAN_LOOKBACK && !reduce)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: deterministic float sums need the reduce-then-scan algorithm (the "
                                        "look-back scan's association order varies between runs)", call);
  *flags = o.flags;
  return GPUSORT_OK;
}

GS_API_SIZE(gpusort_compact_options, 32);

/* A compaction request from a layout and options; `allowed` says which flags the call takes.
 * The request is checked against its layout now unless a .npy header is to say what the
 * records are (the file job does it then). */
static int compact_request(const gpusort_layout *layout, const gpusort_compact_options *user, uint32_t allowed,
                           const char *call, gs_compact_request *r, uint32_t *flags) {
  gpusort_compact_options o;
  memset(r, 0, sizeof *r);
  int rc = need(user, call, "options");
  if (!rc) rc = gs_api_copy_in(&o, sizeof o, user, sizeof o, "gpusort_compact_options");
  if (!rc) rc = gs_api_check_flags(o.flags, allowed, call);
  if (!rc) rc = layout_in(layout, call, &r->layout);
  if (rc) return rc;
  switch (o.op) {
  case GPUSORT_SELECT: r->mode = GS_COMPACT_SELECT; break;
  case GPUSORT_PARTITION: r->mode = GS_COMPACT_PARTITION; break;
  case GPUSORT_UNIQUE: r->mode = GS_COMPACT_UNIQUE; break;
  case GPUSORT_RLE: r->mode = GS_COMPACT_UNIQUE, r->rle = true; break;
  case GPUSORT_REDUCE_BY_KEY: r->mode = GS_COMPACT_REDUCE_BY_KEY; break;
  default:
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown operation %d (select, partition, unique, rle or reduce-by-key)",
                   call, (int)o.op);
  }
  const char *name = gs_compact_request_name(r);
  const bool filters = o.op == GPUSORT_SELECT || o.op == GPUSORT_PARTITION;
  if (filters && (!o.where || !o.where[0]))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: %s needs a predicate on the key (`where`, such as \"< 10\")", call, name);
  if (!filters && o.where)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: `where` applies to select and partition, not %s", call, name);
  if (o.op == GPUSORT_RLE && o.count_type != GPUSORT_TYPE_NONE && o.count_type != GPUSORT_U32 &&
      o.count_type != GPUSORT_U64)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: rle counts are u32 or u64, not %s", call,
                   gpusort_type_name(o.count_type) ? gpusort_type_name(o.count_type) : "that type");
  if (o.op != GPUSORT_RLE && o.count_type != GPUSORT_TYPE_NONE)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: count_type applies to rle, not %s", call, name);
  if (o.op == GPUSORT_REDUCE_BY_KEY && (unsigned)o.reduce > GPUSORT_MAX)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown operator %d (GPUSORT_SUM, GPUSORT_MIN or GPUSORT_MAX)", call,
                   (int)o.reduce);
  if (o.op != GPUSORT_REDUCE_BY_KEY && (o.reduce != GPUSORT_SUM || o.acc != GPUSORT_TYPE_NONE))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: reduce and acc apply to reduce-by-key, not %s", call, name);
  r->count_bytes = o.count_type == GPUSORT_U64 ? 8 : 4;
  r->where = o.where;
  r->op = (gs_scan_op)o.reduce;
  r->acc_asked = o.acc;
  *flags = o.flags;
  return r->layout.from_file || r->layout.named_fields ? GPUSORT_OK : gs_compact_request_resolve(r, NULL);
}

size_t gpusort_compact_record_size(const gpusort_layout *layout, const gpusort_compact_options *options) {
  gs_compact_request r;
  uint32_t flags;
  if (compact_request(layout, options, GPUSORT_OVERWRITE | GPUSORT_SYNC, "gpusort_compact_record_size", &r, &flags) ||
      r.layout.from_file || r.layout.named_fields) /* (known once a .npy header is read) */
    return 0;
  return gs_compact_output_bytes(&r);
}

static gs_file_flags file_flags(uint32_t flags) {
  return (gs_file_flags){.overwrite = flags & GPUSORT_OVERWRITE, .sync = flags & GPUSORT_SYNC};
}

/* ---- Arrays ---- */

static bool overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  const unsigned char *x = a, *y = b;
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

int gpusort_sort(gpusort_context *ctx, const void *input, void *output, uint64_t count, const gpusort_layout *layout,
                 const gpusort_sort_options *options) {
  static const char call[] = "gpusort_sort";
  gs_sort_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need_data(input, count, call, "input")) ||
      (rc = need_data(output, count, call, "output")) ||
      (rc = sort_request(layout, options, GPUSORT_DESCENDING | GPUSORT_VERIFY, call, &r, &flags)))
    return rc;
  const size_t bytes = count * r.layout.record_bytes;
  if (input != output && overlap(input, bytes, output, bytes))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: output overlaps input (give the same pointer to sort in place)", call);
  return gs_array_sort(&ctx->job, input, output, count, &r);
}

int gpusort_argsort(gpusort_context *ctx, const void *input, uint64_t count, const gpusort_layout *layout,
                    gpusort_type index_type, void *indices, const gpusort_sort_options *options) {
  static const char call[] = "gpusort_argsort";
  gs_sort_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need_data(input, count, call, "input")) ||
      (rc = need_data(indices, count, call, "indices")) ||
      (rc = sort_request(layout, options, GPUSORT_DESCENDING | GPUSORT_VERIFY, call, &r, &flags)) ||
      (rc = index_bytes(index_type, call, &r.index_bytes)))
    return rc;
  r.argsort = true;
  if (r.index_bytes == 4 && count > UINT32_MAX)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: %llu records need u64 indices", call, (unsigned long long)count);
  const size_t index_size = r.index_bytes ? r.index_bytes : count < (1ull << 32) ? 4 : 8;
  if (overlap(input, count * r.layout.record_bytes, indices, count * index_size))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: indices overlap the input", call);
  return gs_array_sort(&ctx->job, input, indices, count, &r);
}

int gpusort_scan(gpusort_context *ctx, const void *input, void *output, uint64_t count,
                 const gpusort_scan_options *options) {
  static const char call[] = "gpusort_scan";
  gs_scan_config c;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need_data(input, count, call, "input")) ||
      (rc = need_data(output, count, call, "output")) ||
      (rc = gs_api_scan_config(options, GPUSORT_EXCLUSIVE | GPUSORT_DETERMINISTIC, false, NULL, call, &c, &flags)))
    return rc;
  const size_t in_bytes = count * gs_scan_element_bytes(&c), out_bytes = count * gs_scan_result_bytes(&c);
  if (input != output && overlap(input, in_bytes, output, out_bytes))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: output overlaps input (give the same pointer to scan in place)", call);
  return gs_array_scan(&ctx->job, input, output, count, &c);
}

int gpusort_reduce(gpusort_context *ctx, const void *input, uint64_t count, const gpusort_scan_options *options,
                   void *result) {
  static const char call[] = "gpusort_reduce";
  gs_scan_config c;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need_data(input, count, call, "input")) ||
      (rc = need(result, call, "result")) ||
      (rc = gs_api_scan_config(options, GPUSORT_DETERMINISTIC, true, NULL, call, &c, &flags)))
    return rc;
  return gs_array_scan(&ctx->job, input, result, count, &c);
}

int gpusort_compact(gpusort_context *ctx, const void *input, void *output, uint64_t count,
                    const gpusort_layout *layout, const gpusort_compact_options *options, uint64_t *result_count) {
  static const char call[] = "gpusort_compact";
  gs_compact_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need_data(input, count, call, "input")) ||
      (rc = need_data(output, count, call, "output")) || (rc = need(result_count, call, "result_count")) ||
      (rc = compact_request(layout, options, 0, call, &r, &flags)))
    return rc;
  if (r.layout.from_file || r.layout.named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: an array's layout needs its key type: a layout from a .npy header, or of "
                   "named fields, is for .npy files", call);
  if (overlap(input, count * r.layout.record_bytes, output, count * gs_compact_output_bytes(&r)))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: output overlaps input", call);
  return gs_array_compact(&ctx->job, input, output, count, &r, result_count);
}

/* ---- Files ---- */

static int file_sort(gpusort_context *ctx, const char *input, const char *output, const gpusort_layout *layout,
                     bool argsort, gpusort_type index_type, const gpusort_sort_options *options,
                     gpusort_report *report, const char *call) {
  gs_sort_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(input, call, "input")) ||
      (rc = need(output, call, "output")) || (rc = check_report(report, call)) ||
      (rc = sort_request(layout, options, GPUSORT_DESCENDING | GPUSORT_VERIFY | GPUSORT_OVERWRITE | GPUSORT_SYNC,
                         call, &r, &flags)) ||
      (argsort && (rc = index_bytes(index_type, call, &r.index_bytes))))
    return rc;
  r.argsort = argsort;
  gpusort_report full = GPUSORT_REPORT_INIT;
  return give_report(report, &full, gs_file_sort(&ctx->job, input, output, &r, file_flags(flags), &full));
}

int gpusort_sort_file(gpusort_context *ctx, const char *input, const char *output, const gpusort_layout *layout,
                      const gpusort_sort_options *options, gpusort_report *report) {
  return file_sort(ctx, input, output, layout, false, GPUSORT_TYPE_NONE, options, report, "gpusort_sort_file");
}

int gpusort_argsort_file(gpusort_context *ctx, const char *input, const char *output, const gpusort_layout *layout,
                         gpusort_type index_type, const gpusort_sort_options *options, gpusort_report *report) {
  return file_sort(ctx, input, output, layout, true, index_type, options, report, "gpusort_argsort_file");
}

int gpusort_sort_then_file(gpusort_context *ctx, const char *input, const char *output, const gpusort_layout *layout,
                           const gpusort_sort_options *options, const gpusort_compact_options *then,
                           uint64_t *result_count, gpusort_report *report) {
  static const char call[] = "gpusort_sort_then_file";
  gs_sort_request r;
  gpusort_compact_options o;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(input, call, "input")) ||
      (rc = need(output, call, "output")) || (rc = check_report(report, call)) || (rc = need(then, call, "then")) ||
      (rc = gs_api_copy_in(&o, sizeof o, then, sizeof o, "gpusort_compact_options")) ||
      (rc = sort_request(layout, options, GPUSORT_DESCENDING | GPUSORT_VERIFY | GPUSORT_OVERWRITE | GPUSORT_SYNC,
                         call, &r, &flags)))
    return rc;
  if (o.op != GPUSORT_UNIQUE && o.op != GPUSORT_RLE)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the step after a sort is GPUSORT_UNIQUE or GPUSORT_RLE, not %d", call,
                   (int)o.op);
  if (o.flags || o.where || o.reduce != GPUSORT_SUM || o.acc != GPUSORT_TYPE_NONE)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: then takes op and (rle) count_type only; file flags go in the sort's "
                   "options", call);
  if (o.count_type != GPUSORT_TYPE_NONE && (o.op != GPUSORT_RLE || (o.count_type != GPUSORT_U32 && o.count_type != GPUSORT_U64)))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: count_type is U32 or U64, for rle only", call);
  r.then = o.op == GPUSORT_RLE ? GS_THEN_RLE : GS_THEN_UNIQUE;
  r.count_bytes = o.count_type == GPUSORT_U64 ? 8 : 4;
  gpusort_report full = GPUSORT_REPORT_INIT;
  rc = gs_file_sort(&ctx->job, input, output, &r, file_flags(flags), &full);
  if (!rc && result_count) *result_count = r.written;
  return give_report(report, &full, rc);
}

int gpusort_scan_file(gpusort_context *ctx, const char *input, const char *output, const gpusort_scan_options *options,
                      gpusort_report *report) {
  static const char call[] = "gpusort_scan_file";
  gs_scan_config c;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(input, call, "input")) ||
      (rc = need(output, call, "output")) || (rc = check_report(report, call)) ||
      (rc = gs_api_scan_config(options, GPUSORT_EXCLUSIVE | GPUSORT_DETERMINISTIC | GPUSORT_OVERWRITE | GPUSORT_SYNC, false,
                               input, call, &c, &flags)))
    return rc;
  gpusort_report full = GPUSORT_REPORT_INIT;
  return give_report(report, &full, gs_file_scan(&ctx->job, input, output, &c, file_flags(flags), &full));
}

int gpusort_reduce_file(gpusort_context *ctx, const char *input, const gpusort_scan_options *options, void *result,
                        gpusort_report *report) {
  static const char call[] = "gpusort_reduce_file";
  gs_scan_config c;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(input, call, "input")) ||
      (rc = need(result, call, "result")) || (rc = check_report(report, call)) ||
      (rc = gs_api_scan_config(options, GPUSORT_DETERMINISTIC, true, input, call, &c, &flags)))
    return rc;
  gpusort_report full = GPUSORT_REPORT_INIT;
  return give_report(report, &full, gs_file_reduce(&ctx->job, input, &c, result, &full));
}

int gpusort_compact_file(gpusort_context *ctx, const char *input, const char *output, const gpusort_layout *layout,
                         const gpusort_compact_options *options, uint64_t *result_count, gpusort_report *report) {
  static const char call[] = "gpusort_compact_file";
  gs_compact_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(input, call, "input")) ||
      (rc = need(output, call, "output")) || (rc = check_report(report, call)) ||
      (rc = compact_request(layout, options, GPUSORT_OVERWRITE | GPUSORT_SYNC, call, &r, &flags)))
    return rc;
  gpusort_report full = GPUSORT_REPORT_INIT;
  uint64_t records = 0;
  rc = gs_file_compact(&ctx->job, input, output, &r, file_flags(flags), &records, &full);
  if (!rc && result_count) *result_count = records;
  return give_report(report, &full, rc);
}

int gpusort_check_file(gpusort_context *ctx, const char *input, const gpusort_layout *layout,
                       const gpusort_sort_options *options, gpusort_report *report) {
  static const char call[] = "gpusort_check_file";
  (void)ctx; /* host only */
  gs_sort_request r;
  uint32_t flags = 0;
  int rc;
  if ((rc = need(input, call, "input")) || (rc = check_report(report, call)) ||
      (rc = sort_request(layout, options, GPUSORT_DESCENDING, call, &r, &flags)))
    return rc;
  gpusort_report full = GPUSORT_REPORT_INIT;
  rc = gs_file_check(input, &r.layout, r.descending, r.begin_bit, r.end_bit, &full);
  give_report(report, &full, rc == GPUSORT_ERROR_NOT_SORTED ? GPUSORT_OK : rc); /* (an answer, not a failure) */
  return rc;
}

/* Generation options: the count, the parsed distribution, the seed and the flags. */
/* Test data has keys of a given form (not one a .npy header would give). */
static int generated_layout(const gs_layout *l, const char *call) {
  if (l->from_file || l->named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: test data needs a key type (it is not a .npy file)", call);
  return GPUSORT_OK;
}

/* A distribution by its name (NULL: uniform), or the usage error that lists the names. */
static int distribution_in(const char *name, gs_dist *dist) {
  if (gs_dist_parse(name ? name : "uniform", dist) == 0) return GPUSORT_OK;
  return gs_fail(GPUSORT_ERROR_USAGE, "unknown distribution '%s' (distributions: %s)", name, gs_dist_names());
}

static int generate_options(const gpusort_generate_options *user, uint32_t allowed, const char *call,
                            gpusort_generate_options *o, gs_dist *dist) {
  int rc = need(user, call, "options");
  if (!rc) rc = gs_api_copy_in(o, sizeof *o, user, sizeof *o, "gpusort_generate_options");
  if (!rc) rc = gs_api_check_flags(o->flags, allowed, call);
  return rc ? rc : distribution_in(o->distribution, dist);
}

int gpusort_generate(const gpusort_layout *layout, const gpusort_generate_options *options, uint64_t first,
                     uint64_t count_here, void *records) {
  static const char call[] = "gpusort_generate";
  gs_layout l;
  gpusort_generate_options o;
  gs_dist dist;
  int rc;
  if ((rc = layout_in(layout, call, &l)) || (rc = generated_layout(&l, call)) ||
      (rc = generate_options(options, 0, call, &o, &dist)) ||
      (rc = need_data(records, count_here, call, "records")))
    return rc;
  if (first > o.count || count_here > o.count - first)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: records %llu to %llu are outside the %llu of the data set", call,
                   (unsigned long long)first, (unsigned long long)(first + count_here), (unsigned long long)o.count);
  gs_generate_records(&l, dist, o.seed, o.count, first, count_here, records);
  return GPUSORT_OK;
}

int gpusort_generate_file(gpusort_context *ctx, const char *output, const gpusort_layout *layout,
                          const gpusort_generate_options *options, gpusort_report *report) {
  static const char call[] = "gpusort_generate_file";
  (void)ctx; /* host only */
  gs_layout l;
  gpusort_generate_options o;
  gs_dist dist;
  int rc;
  if ((rc = need(output, call, "output")) || (rc = check_report(report, call)) || (rc = layout_in(layout, call, &l)) ||
      (rc = generated_layout(&l, call)) ||
      (rc = generate_options(options, GPUSORT_OVERWRITE | GPUSORT_SYNC, call, &o, &dist)))
    return rc;
  gpusort_report full = GPUSORT_REPORT_INIT;
  return give_report(report, &full, gs_file_generate(output, &l, dist, o.seed, o.count, file_flags(o.flags), &full));
}

/* ---- Benchmarks ---- */

static int bench_reps(uint32_t reps, const char *call) {
  return reps >= 1 && reps <= 255 ? GPUSORT_OK
                                  : gs_fail(GPUSORT_ERROR_USAGE, "%s: %u repetitions: give 1 to 255", call, reps);
}

int gpusort_bench_sort(gpusort_context *ctx, const gpusort_layout *layout, uint64_t count, uint32_t reps,
                       gpusort_bench_result *result) {
  static const char call[] = "gpusort_bench_sort";
  gs_layout l;
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(result, call, "result")) ||
      (rc = layout_in(layout, call, &l)) || (rc = bench_reps(reps, call)))
    return rc;
  if (l.kind == GS_LAYOUT_RECORDS)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: benchmarks sort keys or pairs, not records", call);
  if (l.keyed || l.from_file || l.named_fields)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: benchmarks sort keys and values of the types u32, i32, f32, u64, i64 and "
                   "f64", call);
  if ((rc = gs_context_device(&ctx->job, NULL, NULL))) return rc;
  gpusort_bench_result full = GPUSORT_BENCH_RESULT_INIT;
  /* (in-fields a program built against an older header has not got keep their defaults) */
#define CALLER_HAS(field) (result->struct_size >= offsetof(gpusort_bench_result, field) + sizeof result->field)
  const gpusort_sort_algo algo = CALLER_HAS(algo) ? result->algo : GPUSORT_SORT_AUTO;
  const char *distribution = CALLER_HAS(distribution) ? result->distribution : NULL;
#undef CALLER_HAS
  if ((unsigned)algo > GPUSORT_SORT_BITONIC)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown sort algorithm %d", call, (int)algo);
  gs_dist dist;
  if ((rc = distribution_in(distribution, &dist))) return rc;
  full.distribution = distribution;
  rc = gs_bench_sort(&ctx->job, &l, count, reps, (gs_sort_algo)algo, dist, &full);
  if (rc == GPUSORT_OK || rc == GPUSORT_ERROR_VERIFY) gs_api_copy_out(result, &full, sizeof full, "gpusort_bench_result");
  return rc;
}

int gpusort_bench_scans(gpusort_context *ctx, uint64_t count, uint32_t reps, gpusort_bench_scan_result *result) {
  static const char call[] = "gpusort_bench_scans";
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(result, call, "result")) || (rc = bench_reps(reps, call)) ||
      (rc = gs_context_device(&ctx->job, NULL, NULL)))
    return rc;
  gpusort_bench_scan_result full = GPUSORT_BENCH_SCAN_RESULT_INIT;
  rc = gs_bench_scans(&ctx->job, count, reps, &full);
  if (rc == GPUSORT_OK || rc == GPUSORT_ERROR_VERIFY)
    gs_api_copy_out(result, &full, sizeof full, "gpusort_bench_scan_result");
  return rc;
}

int gpusort_bench_compact(gpusort_context *ctx, uint64_t count, uint32_t reps, gpusort_bench_scan_result *result) {
  static const char call[] = "gpusort_bench_compact";
  int rc;
  if ((rc = need(ctx, call, "the context")) || (rc = need(result, call, "result")) || (rc = bench_reps(reps, call)) ||
      (rc = gs_context_device(&ctx->job, NULL, NULL)))
    return rc;
  gpusort_bench_scan_result full = GPUSORT_BENCH_SCAN_RESULT_INIT;
  rc = gs_bench_compact(&ctx->job, count, reps, &full);
  if (rc == GPUSORT_OK || rc == GPUSORT_ERROR_VERIFY)
    gs_api_copy_out(result, &full, sizeof full, "gpusort_bench_scan_result");
  return rc;
}
