/* The public API's Vulkan tier (include/gpusort_vulkan.h): the sort and scan plans on a
 * caller's device, recorded into the caller's command buffers on the caller's buffers. */
#include "gpusort_vulkan.h"

#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "io/layout.h"
#include "prim/gather.h"
#include "prim/radix_sort.h"
#include "prim/scan.h"
#include "prim/key_spec.h"
#include "util/error.h"

GS_API_SIZE(gpusort_vk_device, 48);
GS_API_SIZE(gpusort_vk_buffer, 32);
GS_API_SIZE(gpusort_vk_requirements, 40);
GS_API_SIZE(gpusort_vk_sorter_info, 32);
GS_API_SIZE(gpusort_vk_sort_info, 256);
GS_API_SIZE(gpusort_vk_scanner_info, 16);
GS_API_SIZE(gpusort_vk_scan_info, 112);

enum { DATA_ALIGNMENT = 16, REGION_ALIGNMENT = 256 };

static const VkBufferUsageFlags DATA_USAGE =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
static const VkBufferUsageFlags SCRATCH_USAGE = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                                VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                                                VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;

int gpusort_vk_enable_features(VkPhysicalDevice physical_device, VkPhysicalDeviceFeatures2 *features,
                               VkPhysicalDeviceVulkan12Features *f12, VkPhysicalDeviceVulkan13Features *f13) {
  if (!physical_device || !features || !f12 || !f13)
    return gs_fail(GPUSORT_ERROR_USAGE, "gpusort_vk_enable_features: NULL argument");
  gs_device_info info;
  gs_device_probe(physical_device, 0, &info);
  if (info.unusable[0]) return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s %s", info.name, info.unusable);
  f13->subgroupSizeControl = f13->computeFullSubgroups = f13->maintenance4 = VK_TRUE;
  f12->vulkanMemoryModel = f12->vulkanMemoryModelDeviceScope = f12->bufferDeviceAddress = VK_TRUE;
  if (info.has_int64_atomics) f12->shaderBufferInt64Atomics = VK_TRUE;
  if (info.has_subgroup_extended) f12->shaderSubgroupExtendedTypes = VK_TRUE;
  if (info.has_int64) features->features.shaderInt64 = VK_TRUE;
  if (info.has_float64) features->features.shaderFloat64 = VK_TRUE;
  return GPUSORT_OK;
}

/* Wraps the caller's device, with the subgroup size its configuration chooses. */
static int borrow(const gpusort_vk_device *user, gs_device *dev, gs_device_config *config, const char *call) {
  gpusort_vk_device d;
  int rc = user ? gs_api_copy_in(&d, sizeof d, user, sizeof d, "gpusort_vk_device")
                : gs_fail(GPUSORT_ERROR_USAGE, "%s: device is NULL", call);
  if (rc || (rc = gs_api_check_reserved(d.reserved, "gpusort_vk_device"))) return rc;
  if (!d.physical_device || !d.device)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the physical device or the device is VK_NULL_HANDLE", call);
  const VkPhysicalDeviceVulkan12Features *f12 = NULL;
  bool int64 = false, float64 = false;
  if (d.enabled_features) {
    int64 = d.enabled_features->features.shaderInt64;
    float64 = d.enabled_features->features.shaderFloat64;
    for (const VkBaseInStructure *s = d.enabled_features->pNext; s; s = s->pNext)
      if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
        f12 = (const VkPhysicalDeviceVulkan12Features *)s;
  }
  gs_device_info info;
  gs_device_probe(d.physical_device, 0, &info);
  if (info.unusable[0]) return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s %s", info.name, info.unusable);
  gs_device_config_choose(&info, config);
  return gs_device_borrow(dev, d.physical_device, d.device, f12, int64, float64, d.pipeline_cache, d.allocator,
                          config->subgroup_size);
}

/* A caller's buffer range checked for what gpusort does with it: usage, alignment, size. */
static int check_buffer(const gpusort_vk_buffer *b, VkBufferUsageFlags usage, VkDeviceSize alignment,
                        VkDeviceSize bytes, const char *call, const char *what) {
  if (!b->buffer) return gs_fail(GPUSORT_ERROR_USAGE, "%s: the %s buffer is VK_NULL_HANDLE", call, what);
  if (b->reserved) return gs_fail(GPUSORT_ERROR_USAGE, "%s: the %s buffer's reserved field is not zero", call, what);
  if ((b->usage & usage) != usage)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the %s buffer lacks usage flags 0x%x (it has 0x%x)", call, what,
                   (unsigned)(usage & ~b->usage), (unsigned)b->usage);
  if (b->offset % alignment)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the %s buffer's offset %llu is not a multiple of %llu", call, what,
                   (unsigned long long)b->offset, (unsigned long long)alignment);
  if (b->size == VK_WHOLE_SIZE || b->size < bytes)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the %s buffer holds %llu bytes; it needs %llu", call, what,
                   (unsigned long long)(b->size == VK_WHOLE_SIZE ? 0 : b->size), (unsigned long long)bytes);
  return GPUSORT_OK;
}

static bool overlaps(const gpusort_vk_buffer *a, VkDeviceSize a_bytes, const gpusort_vk_buffer *b,
                     VkDeviceSize b_bytes) {
  return a->buffer == b->buffer && a_bytes && b_bytes && a->offset < b->offset + b_bytes &&
         b->offset < a->offset + a_bytes;
}

static gs_range range_of(const gs_device *dev, const gpusort_vk_buffer *b) {
  return (gs_range){.buffer = b->buffer, .offset = b->offset, .size = b->size,
                    .address = gs_buffer_address(dev, b->buffer, b->offset)};
}

static VkDeviceSize aligned(VkDeviceSize bytes) { return (bytes + REGION_ALIGNMENT - 1) & ~(VkDeviceSize)(REGION_ALIGNMENT - 1); }

static void fill_requirements(VkDeviceSize scratch, gpusort_vk_requirements *r) {
  r->scratch_size = scratch;
  r->scratch_alignment = DATA_ALIGNMENT;
  r->scratch_usage = SCRATCH_USAGE;
  r->data_usage = DATA_USAGE;
  r->data_alignment = DATA_ALIGNMENT;
  r->memory_allocate_flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
}

/* ---- Sorter ---- */

typedef enum { PAYLOAD_NONE, PAYLOAD_VALUES, PAYLOAD_INDICES, PAYLOAD_RECORDS } payload;

struct gpusort_vk_sorter {
  gs_device dev;
  gs_device_config config;
  gs_memops memops;
  gs_radix_sort sorter;
  gs_gather gather;
  payload kind;
  gs_layout records;   /* PAYLOAD_RECORDS */
  unsigned key_bytes, value_bytes; /* key_bytes: of the sorted keys (a form's ordered bits) */
  gpusort_type form;   /* a narrow, half or big-endian key, sorted by its ordered bits in u32
                          (u64) keys extracted into scratch; NONE: a GPU type */
  unsigned form_bytes;
  gs_key_type sort_key;
};

/* The payload and the width of what the sort carries with each key. */
static int sorter_payload(const gpusort_vk_sorter_info *in, gpusort_vk_sorter *s, const char *call) {
  gs_key_type key, value;
  if (gs_key_type_from_public(in->key_type, &key) != 0) {
    const gs_field_type *f = gs_field_type_of(in->key_type);
    if (!f || f->kind == GS_PART_BYTES)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: the key type (%d) is not one the Vulkan tier sorts (the numeric types u8 "
                     "... f64, u16be ... f64be)", call, (int)in->key_type);
    s->form = in->key_type;
    s->form_bytes = f->bytes;
    key = f->bytes == 8 ? GS_KEY_U64 : GS_KEY_U32; /* its ordered bits */
  }
  s->sort_key = key;
  s->key_bytes = gs_key_info_of(key)->bytes;
  const int payloads = (in->value_type != GPUSORT_TYPE_NONE) + (in->index_type != GPUSORT_TYPE_NONE) +
                       (in->record_bytes != 0);
  if (payloads > 1) return gs_fail(GPUSORT_ERROR_USAGE, "%s: give values, indices or records, not more than one", call);
  if (in->key_offset && !in->record_bytes) return gs_fail(GPUSORT_ERROR_USAGE, "%s: a key offset needs records", call);
  if (in->value_type != GPUSORT_TYPE_NONE) {
    if (gs_key_type_from_public(in->value_type, &value) != 0)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: the value type (%d) is not one of u32, i32, f32, u64, i64, f64", call,
                     (int)in->value_type);
    s->kind = PAYLOAD_VALUES;
    s->value_bytes = gs_key_info_of(value)->bytes;
  } else if (in->index_type != GPUSORT_TYPE_NONE) {
    if (in->index_type != GPUSORT_U32 && in->index_type != GPUSORT_U64)
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: indices are u32 or u64", call);
    s->kind = PAYLOAD_INDICES;
    s->value_bytes = in->index_type == GPUSORT_U64 ? 8 : 4;
  } else if (in->record_bytes) {
    gpusort_layout layout = GPUSORT_LAYOUT_RECORDS(in->key_type, in->record_bytes, in->key_offset);
    int rc = gs_layout_from_public(&layout, &s->records);
    if (rc) return rc;
    s->kind = PAYLOAD_RECORDS;
    s->value_bytes = 4;
  }
  return GPUSORT_OK;
}

int gpusort_vk_sorter_create(const gpusort_vk_device *device, const gpusort_vk_sorter_info *info,
                             gpusort_vk_sorter **sorter) {
  static const char call[] = "gpusort_vk_sorter_create";
  if (!sorter) return gs_fail(GPUSORT_ERROR_USAGE, "%s: sorter is NULL", call);
  *sorter = NULL;
  gpusort_vk_sorter_info in;
  int rc = info ? gs_api_copy_in(&in, sizeof in, info, sizeof in, "gpusort_vk_sorter_info")
                : gs_fail(GPUSORT_ERROR_USAGE, "%s: info is NULL", call);
  if (rc || (rc = gs_api_check_flags(in.flags, GPUSORT_DESCENDING, call))) return rc;
  if ((unsigned)in.algo > GPUSORT_SORT_BITONIC)
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: unknown sort algorithm %d", call, (int)in.algo);
  gpusort_vk_sorter *s = calloc(1, sizeof *s);
  if (!s) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (!(rc = sorter_payload(&in, s, call)) && !(rc = borrow(device, &s->dev, &s->config, call)) &&
      !(rc = gs_memops_create(&s->dev, &s->memops))) {
    gs_radix_sort_config config = {.key = s->sort_key, .descending = in.flags & GPUSORT_DESCENDING,
                                   .value_bytes = s->value_bytes,
                                   .algo = gs_sort_algo_for(&s->config, (gs_sort_algo)in.algo, UINT64_MAX)};
    rc = gs_radix_sort_create(&s->dev, &s->memops, &s->config, &config, &s->sorter);
    if (!rc && (s->kind == PAYLOAD_RECORDS || s->form)) rc = gs_gather_create(&s->dev, &s->gather);
  }
  if (rc) {
    gpusort_vk_sorter_destroy(s);
    return rc;
  }
  *sorter = s;
  return GPUSORT_OK;
}

void gpusort_vk_sorter_destroy(gpusort_vk_sorter *s) {
  if (!s) return;
  gs_radix_sort_destroy(&s->sorter);
  gs_gather_destroy(&s->gather);
  gs_memops_destroy(&s->dev, &s->memops);
  free(s);
}

/* Scratch memory: the state block, then two key arrays and two value arrays of max_n each,
 * as far as the payload needs them. */
typedef struct {
  VkDeviceSize state, keys[2], values[2], total;
} sorter_scratch;

static void sorter_layout(const gpusort_vk_sorter *s, uint64_t max_n, sorter_scratch *l) {
  const uint64_t n = max_n ? max_n : 1;
  const VkDeviceSize keys = aligned(n * s->key_bytes), values = aligned(n * s->value_bytes);
  const bool two_key_arrays = s->kind == PAYLOAD_INDICES || s->kind == PAYLOAD_RECORDS || s->form;
  const unsigned value_arrays = s->kind == PAYLOAD_NONE ? 0 : s->kind == PAYLOAD_RECORDS ? 2 : 1;
  l->state = 0;
  l->keys[0] = aligned(gs_radix_sort_state_bytes(&s->sorter, n));
  l->keys[1] = l->keys[0] + keys;
  l->values[0] = l->keys[1] + (two_key_arrays ? keys : 0);
  l->values[1] = l->values[0] + values;
  l->total = l->values[0] + value_arrays * values;
}

int gpusort_vk_sorter_requirements(const gpusort_vk_sorter *s, uint64_t max_count, gpusort_vk_requirements *r) {
  static const char call[] = "gpusort_vk_sorter_requirements";
  if (!s || !r) return gs_fail(GPUSORT_ERROR_USAGE, "%s: NULL argument", call);
  const uint64_t limit = gs_radix_sort_max_keys(&s->dev, s->sorter.config.key, s->value_bytes, false);
  if (max_count > limit ||
      (s->kind == PAYLOAD_RECORDS && !gs_gather_fits(&s->dev, max_count, s->records.record_bytes)))
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s: %llu keys are more than one sort takes", call,
                   (unsigned long long)max_count);
  sorter_scratch l;
  sorter_layout(s, max_count, &l);
  gpusort_vk_requirements full = GPUSORT_VK_REQUIREMENTS_INIT;
  fill_requirements(l.total, &full);
  return gs_api_copy_out(r, &full, sizeof full, "gpusort_vk_requirements");
}

/* Checks the info's buffers for the payload and makes the sort's arrays of them. */
static int sort_buffers(const gpusort_vk_sorter *s, const gpusort_vk_sort_info *in, uint64_t max_n, bool indirect,
                        gs_radix_sort_buffers *b, unsigned passes, const char *call) {
  const gs_device *dev = &s->dev;
  /* (a form's keys are read, and written back, as whole words) */
  const VkDeviceSize keys = s->form ? (max_n * s->form_bytes + 3) & ~(VkDeviceSize)3 : max_n * s->key_bytes;
  const VkDeviceSize values = max_n * s->value_bytes;
  sorter_scratch l;
  sorter_layout(s, max_n, &l);
  int rc = check_buffer(&in->scratch, SCRATCH_USAGE, DATA_ALIGNMENT, l.total, call, "scratch");
  if (!rc && indirect) rc = check_buffer(&in->count_buffer, DATA_USAGE, 4, 4, call, "count");
  if (rc) return rc;
  const gs_range scratch = range_of(dev, &in->scratch);
  const gs_range k0 = gs_subrange(scratch, l.keys[0], keys), k1 = gs_subrange(scratch, l.keys[1], keys);
  const gs_range v0 = gs_subrange(scratch, l.values[0], values), v1 = gs_subrange(scratch, l.values[1], values);
  const bool odd = passes % 2;
  b->state = gs_subrange(scratch, l.state, l.keys[0]);
  b->count = indirect ? range_of(dev, &in->count_buffer) : (gs_range){0};
  switch (s->kind) {
  case PAYLOAD_NONE:
  case PAYLOAD_VALUES: /* in place */
    if ((rc = check_buffer(&in->keys, DATA_USAGE, DATA_ALIGNMENT, keys, call, "keys")) ||
        (s->kind == PAYLOAD_VALUES && (rc = check_buffer(&in->values, DATA_USAGE, DATA_ALIGNMENT, values, call, "values"))))
      return rc;
    /* a form's ordered keys are extracted into k0 and sorted there (then written back) */
    b->keys = s->form ? (gs_radix_sort_array){k0, k0, k1}
                      : (gs_radix_sort_array){range_of(dev, &in->keys), range_of(dev, &in->keys), k0};
    if (s->kind == PAYLOAD_VALUES) b->values = (gs_radix_sort_array){range_of(dev, &in->values), range_of(dev, &in->values), v0};
    return GPUSORT_OK;
  case PAYLOAD_INDICES:
    if ((rc = check_buffer(&in->keys, DATA_USAGE, DATA_ALIGNMENT, keys, call, "keys")) ||
        (rc = check_buffer(&in->indices, DATA_USAGE, DATA_ALIGNMENT, values, call, "indices")))
      return rc;
    b->keys = s->form ? (gs_radix_sort_array){k0, odd ? k1 : k0, odd ? k0 : k1} /* (extracted into k0) */
                      : (gs_radix_sort_array){range_of(dev, &in->keys), k0, k1}; /* the keys stay as they are */
    b->values = (gs_radix_sort_array){{0}, range_of(dev, &in->indices), v0};
    return GPUSORT_OK;
  case PAYLOAD_RECORDS: {
    const VkDeviceSize bytes = (max_n * s->records.record_bytes + 3) & ~(VkDeviceSize)3;
    if ((rc = check_buffer(&in->records, DATA_USAGE, DATA_ALIGNMENT, bytes, call, "records")) ||
        (rc = check_buffer(&in->output, DATA_USAGE, DATA_ALIGNMENT, bytes, call, "output")))
      return rc;
    if (overlaps(&in->records, bytes, &in->output, bytes))
      return gs_fail(GPUSORT_ERROR_USAGE, "%s: the output overlaps the records", call);
    /* keys extracted into k0; the last pass writes where no copy is needed */
    b->keys = (gs_radix_sort_array){k0, odd ? k1 : k0, odd ? k0 : k1};
    b->values = (gs_radix_sort_array){{0}, odd ? v1 : v0, odd ? v0 : v1};
    return GPUSORT_OK;
  }
  }
  return GPUSORT_OK;
}

int gpusort_vk_cmd_sort(const gpusort_vk_sorter *s, VkCommandBuffer cb, const gpusort_vk_sort_info *info) {
  static const char call[] = "gpusort_vk_cmd_sort";
  gpusort_vk_sort_info in;
  if (!s || !cb || !info) return gs_fail(GPUSORT_ERROR_USAGE, "%s: NULL argument", call);
  int rc = gs_api_copy_in(&in, sizeof in, info, sizeof in, "gpusort_vk_sort_info");
  if (rc || (rc = gs_api_check_reserved(in.reserved, "gpusort_vk_sort_info"))) return rc;
  const bool indirect = in.count_buffer.buffer != VK_NULL_HANDLE;
  if (indirect && (!in.max_count || s->kind == PAYLOAD_RECORDS || s->form))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: an indirect sort needs max_count, and sorts keys, values or indices of the "
                   "six GPU types", call);
  /* a form's keys: the bits of its ordered form, no more, unless a range is asked for */
  if (s->form && in.begin_bit == 0 && in.end_bit == 0) in.end_bit = 8 * s->form_bytes;
  const uint64_t max_n = in.max_count ? in.max_count : in.count;
  if (!indirect && in.count > max_n)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s: %llu keys are more than max_count (%llu)", call,
                   (unsigned long long)in.count, (unsigned long long)max_n);
  const uint64_t limit = gs_radix_sort_max_keys(&s->dev, s->sorter.config.key, s->value_bytes, false);
  if (max_n > limit || (s->kind == PAYLOAD_RECORDS && !gs_gather_fits(&s->dev, max_n, s->records.record_bytes)))
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s: %llu keys are more than one sort takes", call,
                   (unsigned long long)max_n);
  unsigned passes;
  if ((rc = gs_radix_sort_passes(&s->sorter, in.begin_bit, in.end_bit, &passes))) return rc;
  gs_radix_sort_buffers b = {0};
  if ((rc = sort_buffers(s, &in, max_n, indirect, &b, passes, call))) return rc;
  gs_radix_sort_run run = {.n = in.count,
                           .max_n = max_n,
                           .begin_bit = in.begin_bit,
                           .end_bit = in.end_bit,
                           .index_values = s->kind == PAYLOAD_INDICES || s->kind == PAYLOAD_RECORDS};
  if (s->kind != PAYLOAD_RECORDS && !s->form) return gs_radix_sort_record(&s->sorter, cb, &run, &b, NULL);
  if (in.count == 0) return GPUSORT_OK;
  if (s->kind != PAYLOAD_RECORDS) { /* a form's keys: their ordered bits sorted, and written back */
    const gs_range keys = range_of(&s->dev, &in.keys);
    gs_cmd_barrier(cb);
    if ((rc = gs_extract_form_record(&s->gather, cb, keys, b.keys.in, in.count, s->form_bytes, 0, s->form, false)) ||
        (rc = gs_radix_sort_record(&s->sorter, cb, &run, &b, NULL)) || s->kind == PAYLOAD_INDICES)
      return rc;
    gs_cmd_barrier(cb);
    return gs_extract_form_record(&s->gather, cb, keys, b.keys.out, in.count, s->form_bytes, 0, s->form, true);
  }
  const gs_range records = range_of(&s->dev, &in.records), output = range_of(&s->dev, &in.output);
  gs_cmd_barrier(cb);
  if ((rc = s->form ? gs_extract_form_record(&s->gather, cb, records, b.keys.in, in.count, s->records.record_bytes,
                                             s->records.key_offset, s->form, false)
                    : gs_extract_keys_record(&s->gather, cb, records, b.keys.in, in.count, s->records.record_bytes,
                                             s->records.key_offset, s->key_bytes)) ||
      (rc = gs_radix_sort_record(&s->sorter, cb, &run, &b, NULL)))
    return rc;
  return gs_gather_record(&s->gather, cb, b.values.out, records, output, in.count, s->records.record_bytes);
}

/* ---- Scanner ---- */

struct gpusort_vk_scanner {
  gs_device dev;
  gs_device_config config;
  gs_memops memops;
  gs_scan scan;
};

int gpusort_vk_scanner_create(const gpusort_vk_device *device, const gpusort_vk_scanner_info *info,
                              gpusort_vk_scanner **scanner) {
  static const char call[] = "gpusort_vk_scanner_create";
  if (!scanner) return gs_fail(GPUSORT_ERROR_USAGE, "%s: scanner is NULL", call);
  *scanner = NULL;
  gpusort_vk_scanner_info in;
  int rc = info ? gs_api_copy_in(&in, sizeof in, info, sizeof in, "gpusort_vk_scanner_info")
                : gs_fail(GPUSORT_ERROR_USAGE, "%s: info is NULL", call);
  if (rc || (rc = gs_api_check_flags(in.flags, GPUSORT_VK_REDUCE, call))) return rc;
  const bool reduce = in.flags & GPUSORT_VK_REDUCE;
  gs_scan_config config;
  uint32_t flags = 0;
  if ((rc = gs_api_scan_config(in.scan, reduce ? GPUSORT_DETERMINISTIC : GPUSORT_EXCLUSIVE | GPUSORT_DETERMINISTIC,
                               reduce, NULL, call, &config, &flags)))
    return rc;
  if (config.in_form || config.out_form) /* (converted on the host, which device buffers skip) */
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the Vulkan tier scans u32, i32, f32, u64, i64 and f64 elements, not %s",
                   call, gpusort_type_name(config.in_form ? config.in_form : config.out_form));
  gpusort_vk_scanner *s = calloc(1, sizeof *s);
  if (!s) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  if (!(rc = borrow(device, &s->dev, &s->config, call)) && !(rc = gs_memops_create(&s->dev, &s->memops)))
    rc = gs_scan_create(&s->dev, &s->memops, &s->config, &config, &s->scan);
  if (rc) {
    gpusort_vk_scanner_destroy(s);
    return rc;
  }
  *scanner = s;
  return GPUSORT_OK;
}

void gpusort_vk_scanner_destroy(gpusort_vk_scanner *s) {
  if (!s) return;
  gs_scan_destroy(&s->scan);
  gs_memops_destroy(&s->dev, &s->memops);
  free(s);
}

int gpusort_vk_scanner_requirements(const gpusort_vk_scanner *s, uint64_t max_count, gpusort_vk_requirements *r) {
  static const char call[] = "gpusort_vk_scanner_requirements";
  if (!s || !r) return gs_fail(GPUSORT_ERROR_USAGE, "%s: NULL argument", call);
  const uint64_t limit = gs_scan_max_elements(&s->dev, &s->scan.config);
  if (max_count > limit)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s: %llu elements are more than one scan takes (%llu)", call,
                   (unsigned long long)max_count, (unsigned long long)limit);
  gpusort_vk_requirements full = GPUSORT_VK_REQUIREMENTS_INIT;
  fill_requirements(gs_scan_state_bytes(&s->scan, max_count), &full);
  return gs_api_copy_out(r, &full, sizeof full, "gpusort_vk_requirements");
}

int gpusort_vk_cmd_scan(const gpusort_vk_scanner *s, VkCommandBuffer cb, const gpusort_vk_scan_info *info) {
  static const char call[] = "gpusort_vk_cmd_scan";
  gpusort_vk_scan_info in;
  if (!s || !cb || !info) return gs_fail(GPUSORT_ERROR_USAGE, "%s: NULL argument", call);
  int rc = gs_api_copy_in(&in, sizeof in, info, sizeof in, "gpusort_vk_scan_info");
  if (rc || (rc = gs_api_check_reserved(in.reserved, "gpusort_vk_scan_info"))) return rc;
  const gs_scan_config *c = &s->scan.config;
  const uint64_t limit = gs_scan_max_elements(&s->dev, c);
  if (in.count > limit)
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s: %llu elements are more than one scan takes (%llu)", call,
                   (unsigned long long)in.count, (unsigned long long)limit);
  const VkDeviceSize in_bytes = in.count * gs_key_info_of(c->input)->bytes;
  const VkDeviceSize out_bytes = (c->reduce_only ? 1 : in.count) * gs_key_info_of(c->acc)->bytes;
  const VkDeviceSize state = gs_scan_state_bytes(&s->scan, in.count);
  if ((rc = check_buffer(&in.input, DATA_USAGE, DATA_ALIGNMENT, in_bytes, call, "input")) ||
      (rc = check_buffer(&in.output, DATA_USAGE, DATA_ALIGNMENT, out_bytes, call, "output")) ||
      (rc = check_buffer(&in.scratch, SCRATCH_USAGE, DATA_ALIGNMENT, state, call, "scratch")))
    return rc;
  /* tiles read their input after others have written results (and a waiting tile may re-read
   * an earlier tile's input), so the two must not share memory */
  if (overlaps(&in.input, in_bytes, &in.output, out_bytes))
    return gs_fail(GPUSORT_ERROR_USAGE, "%s: the output overlaps the input", call);
  return gs_scan_record(&s->scan, cb, in.count, in.count, range_of(&s->dev, &in.input), range_of(&s->dev, &in.output),
                        range_of(&s->dev, &in.scratch), false, NULL, NULL);
}
