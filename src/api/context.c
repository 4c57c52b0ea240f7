/* The public API's first tier: versions, errors, types, devices and contexts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "io/output.h"
#include "prim/elements.h"
#include "prim/key_spec.h"
#include "prim/keys.h"
#include "util/error.h"

GS_API_SIZE(gpusort_layout, 48);
GS_API_SIZE(gpusort_key_part, 16);
GS_API_SIZE(gpusort_context_params, 56);
GS_API_SIZE(gpusort_device_info, 1272); /* 1176 until 0.7.8 (the narrow pairs' sort tile), 1184
                                           until 0.7.9 (the 64-bit values' workgroup; 0.7.10's
                                           64-bit pairs' workgroup took its padding), 1192 until
                                           0.7.10 (the look-back family's tiles), 1200 until
                                           0.7.22 (small sorts' and scans' tiles), 1248 until
                                           0.7.29 (the family's read-ahead), 1256 until
                                           0.7.32 (unique's early walk; 0.7.36's scan early
                                           walk took its padding), 1264 until 0.7.36 (the
                                           scan's read-ahead) */
GS_API_SIZE(gpusort_sort_options, 20);
GS_API_SIZE(gpusort_scan_options, 24);
GS_API_SIZE(gpusort_report, 352); /* 344 until 0.6: element_type and result_type added */
GS_API_SIZE(gpusort_generate_options, 32);
GS_API_SIZE(gpusort_bench_result, 128); /* 120 until 0.7.16 (histogram_seconds added) */
GS_API_SIZE(gpusort_bench_scan_result, 536);

unsigned gpusort_version_number(void) { return GPUSORT_VERSION_NUMBER; }
const char *gpusort_version_string(void) { return GPUSORT_VERSION_STRING; }

int gpusort_status_class(int status) {
  if (status >= 10 && status < 20) return GPUSORT_ERROR_RUNTIME;
  if (status >= 20 && status < 30) return GPUSORT_ERROR_USAGE;
  if (status >= 30 && status < 40) return GPUSORT_ERROR_VERIFY;
  return status >= 0 && status <= 3 ? status : GPUSORT_ERROR_RUNTIME;
}

const char *gpusort_status_name(int status) {
  switch (status) {
  case GPUSORT_OK: return "GPUSORT_OK";
  case GPUSORT_ERROR_RUNTIME: return "GPUSORT_ERROR_RUNTIME";
  case GPUSORT_ERROR_USAGE: return "GPUSORT_ERROR_USAGE";
  case GPUSORT_ERROR_VERIFY: return "GPUSORT_ERROR_VERIFY";
  case GPUSORT_ERROR_NO_DEVICE: return "GPUSORT_ERROR_NO_DEVICE";
  case GPUSORT_ERROR_OUT_OF_MEMORY: return "GPUSORT_ERROR_OUT_OF_MEMORY";
  case GPUSORT_ERROR_IO: return "GPUSORT_ERROR_IO";
  case GPUSORT_ERROR_TOO_LARGE: return "GPUSORT_ERROR_TOO_LARGE";
  case GPUSORT_ERROR_GPU_STALL: return "GPUSORT_ERROR_GPU_STALL";
  case GPUSORT_ERROR_BAD_INPUT: return "GPUSORT_ERROR_BAD_INPUT";
  case GPUSORT_ERROR_OUTPUT_EXISTS: return "GPUSORT_ERROR_OUTPUT_EXISTS";
  case GPUSORT_ERROR_OUTPUT_IS_INPUT: return "GPUSORT_ERROR_OUTPUT_IS_INPUT";
  case GPUSORT_ERROR_OUTPUT_IS_TERMINAL: return "GPUSORT_ERROR_OUTPUT_IS_TERMINAL";
  case GPUSORT_ERROR_NO_SUCH_DEVICE: return "GPUSORT_ERROR_NO_SUCH_DEVICE";
  case GPUSORT_ERROR_NOT_SORTED: return "GPUSORT_ERROR_NOT_SORTED";
  default: return "unknown status";
  }
}

const char *gpusort_last_error(void) { return gs_last_error(); }

const char *gpusort_type_name(gpusort_type type) {
  const gs_field_type *t = gs_field_type_of(type);
  return t ? t->name : NULL;
}

int gpusort_type_from_name(const char *name, gpusort_type *type) {
  if (!name || !type) return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_type_from_name: NULL argument");
  if (gs_field_type_from_name(name, type) != 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "unknown type '%s' (types: %s)", name, gs_field_type_names());
  return GPUSORT_OK;
}

size_t gpusort_type_size(gpusort_type type) {
  const gs_field_type *t = gs_field_type_of(type);
  return t ? t->bytes : 0;
}

int gpusort_format_value(gpusort_type type, const void *value, char *buf, size_t size) {
  const gs_field_type *t = gs_field_type_of(type);
  if (buf && size) buf[0] = 0;
  if (!t || t->kind == GS_PART_BYTES || !value || !buf) return -1;
  const uint64_t bits = gs_field_bits(value, t->bytes, t->big_endian), sign = (uint64_t)1 << (8 * t->bytes - 1);
  if (t->kind == GS_PART_UNSIGNED) return snprintf(buf, size, "%" PRIu64, bits);
  if (t->kind == GS_PART_SIGNED) return snprintf(buf, size, "%" PRId64, (int64_t)((bits ^ sign) - sign));
  double v;
  if (t->bytes == 8) {
    memcpy(&v, &bits, 8);
  } else if (t->bytes == 4) {
    const uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, 4);
    v = f;
  } else {
    v = type == GPUSORT_BF16 ? gs_bf16_to_f32((uint16_t)bits) : gs_f16_to_f32((uint16_t)bits);
  }
  char text[40];
  for (int digits = 1; digits <= 17; digits++) { /* the fewest that read back */
    snprintf(text, sizeof text, "%.*g", digits, v);
    const double back = strtod(text, NULL);
    if (t->bytes == 8 ? back == v || v != v
        : t->bytes == 4 ? (float)back == (float)v || v != v
        : (type == GPUSORT_BF16 ? gs_f32_to_bf16((float)back) : gs_f32_to_f16((float)back)) == (uint16_t)bits)
      break;
  }
  return snprintf(buf, size, "%s", text);
}

const char *gpusort_stage_name(gpusort_stage stage) {
  static const char *const names[GPUSORT_STAGE_COUNT] = {
      "open", "setup", "read", "upload", "sort", "scan", "reduce", "gather", "download", "write", "assemble",
      "verify", "check", "generate", "spill", "buckets", "partition", "compact"};
  return (unsigned)stage < GPUSORT_STAGE_COUNT ? names[stage] : NULL;
}

const char *gpusort_device_type_name(gpusort_device_type type) {
  switch (type) {
  case GPUSORT_DEVICE_DISCRETE: return "discrete";
  case GPUSORT_DEVICE_INTEGRATED: return "integrated";
  case GPUSORT_DEVICE_VIRTUAL: return "virtual";
  case GPUSORT_DEVICE_CPU: return "cpu";
  default: return "other";
  }
}

void gpusort_remove_temporary_files(void) { gs_remove_temporary_files(); }

const char *gpusort_fault_message(const void *address) { return gs_mapping_fault(address); }

int gs_api_copy_in(void *full, size_t size, const void *user, size_t oldest, const char *what) {
  memset(full, 0, size);
  const uint32_t user_size = *(const uint32_t *)user;
  if (user_size < oldest || user_size > size + 4096) /* not a size this struct ever has */
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: struct_size is %u; initialize it with its _INIT macro", what, user_size);
  memcpy(full, user, user_size < size ? user_size : size);
  for (size_t i = size; i < user_size; i++)
    if (((const unsigned char *)user)[i])
      return gs_fail(GPUSORT_ERROR_USAGE, "%s sets fields that this version of libgpusort (%s) does not know", what,
                     GPUSORT_VERSION_STRING);
  *(uint32_t *)full = (uint32_t)size;
  return GPUSORT_OK;
}

int gs_api_copy_out(void *user, const void *full, size_t size, const char *what) {
  const uint32_t user_size = *(const uint32_t *)user;
  if (user_size < sizeof(uint32_t))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: struct_size is %u; initialize it with its _INIT macro", what, user_size);
  memcpy((unsigned char *)user + sizeof(uint32_t), (const unsigned char *)full + sizeof(uint32_t),
         (user_size < size ? user_size : size) - sizeof(uint32_t));
  return GPUSORT_OK;
}

int gs_api_check_reserved(uint32_t reserved, const char *what) {
  return reserved ? gs_fail(GPUSORT_ERROR_USAGE, "%s: the reserved field is not zero", what) : GPUSORT_OK;
}

int gs_api_check_flags(uint32_t flags, uint32_t allowed, const char *call) {
  if (flags & ~allowed)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: flags 0x%x do not apply to it", call, flags & ~allowed);
  return GPUSORT_OK;
}

/* ---- Devices ---- */

static gpusort_device_type public_type(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return GPUSORT_DEVICE_DISCRETE;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return GPUSORT_DEVICE_INTEGRATED;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return GPUSORT_DEVICE_VIRTUAL;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return GPUSORT_DEVICE_CPU;
  default: return GPUSORT_DEVICE_OTHER;
  }
}

static void describe(const gs_device_info *d, bool is_default, gpusort_device_info *out) {
  gs_device_config config;
  gs_device_config_choose(d, &config);
  memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  out->index = d->index;
  out->type = public_type(d->type);
  out->usable = d->unusable[0] == '\0';
  out->is_default = is_default;
  out->vendor_id = d->vendor_id;
  out->device_id = d->device_id;
  out->api_version = d->api_version;
  out->subgroup_size = config.subgroup_size;
  out->memory_bytes = d->device_local_bytes;
  out->max_buffer_bytes = d->max_data_buffer;
  snprintf(out->name, sizeof out->name, "%s", d->name);
  snprintf(out->driver, sizeof out->driver, "%.511s", d->driver);
  snprintf(out->unusable_reason, sizeof out->unusable_reason, "%s", d->unusable);
  snprintf(out->preset, sizeof out->preset, "%s", config.preset);
  const gs_sort_tile *tiles = config.sort_tiles;
  out->sort_workgroup_size = tiles[GS_SORT_KEYS32].workgroup_size;
  out->sort_keys_per_invocation = tiles[GS_SORT_KEYS32].keys_per_thread;
  out->sort_workgroup_size_narrow_pairs = tiles[GS_SORT_PAIRS32_32].workgroup_size;
  out->sort_keys_per_invocation_narrow_pairs = tiles[GS_SORT_PAIRS32_32].keys_per_thread;
  out->sort_workgroup_size_pairs = tiles[GS_SORT_PAIRS32_64].workgroup_size;
  out->sort_keys_per_invocation_pairs = tiles[GS_SORT_PAIRS32_64].keys_per_thread;
  out->sort_workgroup_size_wide = tiles[GS_SORT_KEYS64].workgroup_size;
  out->sort_keys_per_invocation_wide = tiles[GS_SORT_KEYS64].keys_per_thread;
  out->sort_workgroup_size_wide_pairs = tiles[GS_SORT_PAIRS64].workgroup_size;
  out->sort_keys_per_invocation_wide_pairs = tiles[GS_SORT_PAIRS64].keys_per_thread;
  out->scan_workgroup_size = config.scan_workgroup_size;
  out->scan_rows = config.scan_rows;
  out->lookback_spin_limit = config.lookback_spin;
  out->compact_workgroup_size = config.compact_workgroup_size;
  out->compact_subtiles = config.compact_subtiles;
  out->compact_read_ahead_kib = config.compact_read_ahead_kib;
  out->compact_early_walk = config.compact_early_walk;
  out->scan_early_walk = config.scan_early_walk;
  out->scan_read_ahead_kib = config.scan_read_ahead_kib;
  /* (the layouts' bits are in the public order) */
  _Static_assert(GS_SORT_KEYS32 == 0 && GS_SORT_PAIRS32_32 == 1 && GS_SORT_PAIRS32_64 == 2 && GS_SORT_KEYS64 == 3 &&
                     GS_SORT_PAIRS64 == 4 && GS_SORT_LAYOUTS == 5,
                 "gpusort_device_info.sort_float_fewer_keys");
  out->sort_float_fewer_keys = config.sort_float_fewer_keys;
  _Static_assert(GS_SORT_SMALL_TILES == GPUSORT_SMALL_SORT_TILES, "small sorts' tiles: one bound");
  out->sort_small_tile_count = config.sort_small_tile_count;
  for (uint32_t i = 0; i < config.sort_small_tile_count; i++) {
    out->sort_small_workgroup_size[i] = config.sort_small_tiles[i].workgroup_size;
    out->sort_small_keys_per_invocation[i] = config.sort_small_tiles[i].keys_per_thread;
  }
  out->sort_small_min_tiles = config.sort_small_min_tiles;
  out->scan_small_rows = config.scan_small_rows;
  out->scan_small_min_tiles = config.scan_small_min_tiles;
}

int gpusort_list_devices(gpusort_device_info *infos, uint32_t capacity, uint32_t *count) {
  if (!count || (capacity && !infos)) return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_list_devices: NULL argument");
  const uint32_t stride = capacity ? infos[0].struct_size : 0;
  if (capacity && stride < sizeof(uint32_t))
    return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_list_devices: infos[0].struct_size is %u; initialize it with "
                                        "GPUSORT_DEVICE_INFO_INIT", stride);
  gs_device_info *found = NULL;
  uint32_t n = 0;
  int rc = gs_device_list(&found, &n);
  if (rc) return rc;
  const int chosen = gs_device_default_index(found, n);
  for (uint32_t i = 0; i < n && i < capacity; i++) {
    gpusort_device_info full;
    describe(&found[i], (int)i == chosen, &full);
    gpusort_device_info *slot = (gpusort_device_info *)((unsigned char *)infos + (size_t)i * stride);
    slot->struct_size = stride;
    gs_api_copy_out(slot, &full, sizeof full, "gpusort_device_info");
  }
  *count = n;
  free(found);
  return GPUSORT_OK;
}

/* ---- Contexts ---- */

int gpusort_open(gpusort_context **ctx, const gpusort_context_params *params) {
  if (!ctx) return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_open: NULL context pointer");
  *ctx = NULL;
  gpusort_context_params p = GPUSORT_CONTEXT_PARAMS_INIT;
  int rc;
  if (params && (rc = gs_api_copy_in(&p, sizeof p, params, sizeof p, "gpusort_context_params"))) return rc;
  if ((rc = gs_api_check_flags(p.flags, GPUSORT_OPEN_DEFERRED, "gpusort_open")) ||
      (rc = gs_api_check_reserved(p.reserved, "gpusort_context_params")))
    return rc;
  if (p.device < -1) return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_open: device %d is not an index", (int)p.device);
  if (!(p.timeout_seconds >= 0) || p.timeout_seconds > 1e6)
    return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_open: a timeout of %g s is not a positive number of seconds",
                   p.timeout_seconds);
  gpusort_context *c = calloc(1, sizeof *c);
  if (!c) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  gs_context_init(&c->job, p.device, p.timeout_seconds, p.memory_budget);
  if (p.temp_dir && gs_context_set_temp_dir(&c->job, p.temp_dir) != 0) {
    free(c);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  c->job.progress = p.progress;
  c->job.progress_user = p.progress_user;
  if (!(p.flags & GPUSORT_OPEN_DEFERRED) && (rc = gs_context_device(&c->job, NULL, NULL))) {
    gs_context_close(&c->job);
    free(c);
    return rc;
  }
  *ctx = c;
  return GPUSORT_OK;
}

void gpusort_close(gpusort_context *ctx) {
  if (!ctx) return;
  gs_context_close(&ctx->job);
  free(ctx);
}

int gpusort_context_device(gpusort_context *ctx, gpusort_device_info *info) {
  if (!ctx || !info) return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_context_device: NULL argument");
  int rc = gs_context_device(&ctx->job, NULL, NULL);
  if (rc) return rc;
  gpusort_device_info full;
  describe(&ctx->job.dev.info, false, &full);
  /* what this context runs with (a GPUSORT_* knob or the preset) */
  full.subgroup_size = ctx->job.dev.subgroup_size;
  full.index = ctx->job.dev.info.index;
  return gs_api_copy_out(info, &full, sizeof full, "gpusort_device_info");
}
