/* libgpusort's Vulkan tier: sorts and scans recorded into your command buffer, on your
 * VkDevice and your buffers. Nothing is allocated, submitted or waited for on your behalf:
 * a sorter holds pipelines only, you provide a scratch buffer, and recording is pure
 * command recording (thread-safe on one sorter, given distinct command buffers).
 *
 * The device. Vulkan 1.3 with these features enabled: subgroupSizeControl,
 * computeFullSubgroups, maintenance4 (1.3); vulkanMemoryModel, vulkanMemoryModelDeviceScope,
 * bufferDeviceAddress (1.2); and for 64-bit keys, values, indices or accumulators shaderInt64
 * (and shaderSubgroupExtendedTypes for 64-bit scans, shaderFloat64 for f64 sums).
 * gpusort_vk_enable_features() sets them in your feature structs. The device must offer
 * subgroup ballot, vote, arithmetic, shuffle and relative shuffle operations in compute shaders.
 *
 * Buffers. Kernels reach memory through buffer device addresses: every buffer you pass
 * (keys, values, indices, records, counts, scratch) needs
 * VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT, memory
 * allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, and an offset that is a multiple of 16
 * (4 for the count buffer) (gpusort_vk_requirements says so in data). Vulkan has no query for a buffer's usage, so
 * gpusort_vk_buffer carries the flags the buffer was created with, and a buffer without the
 * needed ones, too small or misaligned is refused (GPUSORT_ERROR_USAGE) before anything is
 * recorded.
 *
 * Synchronization. A recorded sort or scan is compute work only. It starts with a barrier
 * from earlier compute-shader writes to its own reads and writes (so sorts recorded one after
 * another may share a scratch buffer). You owe two barriers:
 *   before: from the stage and access that wrote the input (keys, values, records, count) to
 *           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT |
 *           VK_ACCESS_SHADER_WRITE_BIT (unless they were written by compute shaders, which the
 *           leading barrier covers);
 *   after:  from VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT to the stage
 *           and access that consumes the output.
 * The scratch buffer must not be used by anything else until the recorded work has finished.
 *
 * Counts: up to 2^30 - 1 keys per sort (look-back counts are 30 bits) and 2^31 - 16 elements
 * per scan. */
#ifndef GPUSORT_VULKAN_H
#define GPUSORT_VULKAN_H

#include <vulkan/vulkan.h>

#include "gpusort.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets in the caller's feature structs (to be chained into VkDeviceCreateInfo) the features
 * gpusort needs, and those of its optional ones (shaderInt64, shaderFloat64,
 * shaderBufferInt64Atomics, shaderSubgroupExtendedTypes) that the device has. Fields already
 * set stay set. GPUSORT_ERROR_NO_DEVICE, with the reason, if the device cannot run gpusort. */
GPUSORT_API int gpusort_vk_enable_features(VkPhysicalDevice physical_device, VkPhysicalDeviceFeatures2 *features,
                                           VkPhysicalDeviceVulkan12Features *features12,
                                           VkPhysicalDeviceVulkan13Features *features13);

/* Where the device is: the physical device, the device made from it with the features above,
 * and optionally a pipeline cache, allocation callbacks, and the feature chain the device was
 * created with (a VkPhysicalDeviceFeatures2 with a VkPhysicalDeviceVulkan12Features in its
 * pNext chain; NULL: only the required features are assumed, so 64-bit types are refused). */
typedef struct gpusort_vk_device {
  uint32_t struct_size;
  uint32_t reserved;
  VkPhysicalDevice physical_device;
  VkDevice device;
  VkPipelineCache pipeline_cache;
  const VkAllocationCallbacks *allocator;
  const VkPhysicalDeviceFeatures2 *enabled_features;
} gpusort_vk_device;

#define GPUSORT_VK_DEVICE_INIT(physical_device, device) \
  {sizeof(gpusort_vk_device), 0, (physical_device), (device), VK_NULL_HANDLE, NULL, NULL}

/* A range of a caller's buffer. size: bytes from offset that gpusort may use (VK_WHOLE_SIZE
 * is not accepted: say how large it is). usage: the flags the buffer was created with. A plain
 * value, like VkDescriptorBufferInfo: its layout is fixed. */
typedef struct gpusort_vk_buffer {
  VkBuffer buffer;
  VkDeviceSize offset;
  VkDeviceSize size;
  VkBufferUsageFlags usage;
  uint32_t reserved;
} gpusort_vk_buffer;

/* What the caller allocates for a sort or scan of up to max_count records. */
typedef struct gpusort_vk_requirements {
  uint32_t struct_size;
  VkMemoryAllocateFlags memory_allocate_flags; /* for the memory of all of them */
  VkDeviceSize scratch_size;
  VkDeviceSize scratch_alignment;        /* of the scratch range's offset */
  VkBufferUsageFlags scratch_usage;
  VkBufferUsageFlags data_usage;         /* keys, values, indices, records, counts */
  VkDeviceSize data_alignment;           /* of their offsets (the count buffer's: 4) */
} gpusort_vk_requirements;

#define GPUSORT_VK_REQUIREMENTS_INIT GPUSORT_OUTPUT_INIT_(gpusort_vk_requirements)

/* ---- Sorter ------------------------------------------------------------------------------ */

typedef struct gpusort_vk_sorter gpusort_vk_sorter;

/* What a sorter sorts. The payload is one of:
 *   none      key_type only: keys sorted in place;
 *   values    value_type set: keys and values, in two buffers, sorted in place together;
 *   indices   index_type GPUSORT_U32 or GPUSORT_U64: the keys' input positions in sorted order
 *             written to an index buffer; the keys are not modified (argsort);
 *   records   record_bytes set: records of that many bytes with the key at key_offset (any
 *             alignment), written whole in sorted order to an output buffer.
 * key_type: any numeric type; one of the narrow, half and big-endian ones (since 0.7) is sorted
 * by its ordered bits, extracted into scratch memory and written back in its own form (its key
 * buffer is read and written as whole 32-bit words; no indirect count). Values are of the six
 * GPU types.
 * flags: GPUSORT_DESCENDING. algo: GPUSORT_SORT_AUTO (Onesweep, or reduce-then-scan on a
 * device without forward progress or on lavapipe; never bitonic, since the count is not known here) or the
 * algorithm to use. Every sort is stable. */
typedef struct gpusort_vk_sorter_info {
  uint32_t struct_size;
  gpusort_type key_type;
  gpusort_type value_type;
  gpusort_type index_type;
  uint32_t record_bytes;
  uint32_t key_offset;
  uint32_t flags;
  gpusort_sort_algo algo; /* (0.3: reserved, zero) */
} gpusort_vk_sorter_info;

#define GPUSORT_VK_SORTER_INFO_INIT(key_type) \
  {sizeof(gpusort_vk_sorter_info), (key_type), GPUSORT_TYPE_NONE, GPUSORT_TYPE_NONE, 0, 0, 0, GPUSORT_SORT_AUTO}

/* Builds the sorter's pipelines on the device (tens to hundreds of milliseconds; a pipeline
 * cache makes later ones fast). Errors: USAGE, NO_DEVICE (the device lacks something),
 * OUT_OF_MEMORY, RUNTIME. On failure *sorter is NULL. */
GPUSORT_API int gpusort_vk_sorter_create(const gpusort_vk_device *device, const gpusort_vk_sorter_info *info,
                                         gpusort_vk_sorter **sorter);

/* Destroys the pipelines; the caller makes sure no recorded sort is pending. NULL is ignored. */
GPUSORT_API void gpusort_vk_sorter_destroy(gpusort_vk_sorter *sorter);

/* The scratch buffer and usage flags a sort of up to max_count keys needs. */
GPUSORT_API int gpusort_vk_sorter_requirements(const gpusort_vk_sorter *sorter, uint64_t max_count,
                                               gpusort_vk_requirements *requirements);

/* One sort. The count is `count`, or with a count_buffer (buffer not VK_NULL_HANDLE) the u32
 * at its offset when the GPU gets there: an indirect sort, of keys, values or indices, whose
 * counts above max_count are clamped to it. scratch must hold what
 * gpusort_vk_sorter_requirements(max_count) says (max_count 0: count). The buffers each
 * payload uses, each large enough for max_count records:
 *   none     keys: sorted in place;
 *   values   keys and values: sorted in place together;
 *   indices  keys: read, not modified; indices: written;
 *   records  records: read; output: written (not overlapping the records). Their sizes are
 *            rounded up to a multiple of 4 bytes (kernels move whole 32-bit words). */
typedef struct gpusort_vk_sort_info {
  uint32_t struct_size;
  uint32_t begin_bit, end_bit; /* as in gpusort_sort_options; 0, 0: all bits */
  uint32_t reserved;
  uint64_t count;
  uint64_t max_count;
  gpusort_vk_buffer count_buffer;
  gpusort_vk_buffer keys;    /* none, values, indices */
  gpusort_vk_buffer values;  /* values */
  gpusort_vk_buffer indices; /* indices */
  gpusort_vk_buffer records; /* records */
  gpusort_vk_buffer output;  /* records */
  gpusort_vk_buffer scratch;
} gpusort_vk_sort_info;

#define GPUSORT_VK_SORT_INFO_INIT GPUSORT_OUTPUT_INIT_(gpusort_vk_sort_info)

/* Records the sort into command_buffer, which must be recording, with a queue family that
 * supports compute. Errors (nothing recorded): USAGE for a missing or unsuitable buffer (a
 * scratch buffer smaller than the requirements for max_count among them), a bit range outside
 * the key; TOO_LARGE for a count above max_count or beyond what one sort takes. */
GPUSORT_API int gpusort_vk_cmd_sort(const gpusort_vk_sorter *sorter, VkCommandBuffer command_buffer,
                                    const gpusort_vk_sort_info *info);

/* ---- Scanner ----------------------------------------------------------------------------- */

typedef struct gpusort_vk_scanner gpusort_vk_scanner;

#define GPUSORT_VK_REDUCE (1u << 16) /* scanner flag: record reductions instead of scans */

/* scan: type, acc, op, algo and GPUSORT_EXCLUSIVE / GPUSORT_DETERMINISTIC as for gpusort_scan
 * (required); flags: GPUSORT_VK_REDUCE. */
typedef struct gpusort_vk_scanner_info {
  uint32_t struct_size;
  uint32_t flags;
  const gpusort_scan_options *scan;
} gpusort_vk_scanner_info;

#define GPUSORT_VK_SCANNER_INFO_INIT(scan_options) {sizeof(gpusort_vk_scanner_info), 0, (scan_options)}

GPUSORT_API int gpusort_vk_scanner_create(const gpusort_vk_device *device, const gpusort_vk_scanner_info *info,
                                          gpusort_vk_scanner **scanner);
GPUSORT_API void gpusort_vk_scanner_destroy(gpusort_vk_scanner *scanner);
GPUSORT_API int gpusort_vk_scanner_requirements(const gpusort_vk_scanner *scanner, uint64_t max_count,
                                                gpusort_vk_requirements *requirements);

/* input: count elements; output: count accumulator-typed results, or with GPUSORT_VK_REDUCE
 * one (the combination of all, the identity of the operator for count 0), not overlapping
 * the input. */
typedef struct gpusort_vk_scan_info {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t count;
  gpusort_vk_buffer input;
  gpusort_vk_buffer output;
  gpusort_vk_buffer scratch;
} gpusort_vk_scan_info;

#define GPUSORT_VK_SCAN_INFO_INIT GPUSORT_OUTPUT_INIT_(gpusort_vk_scan_info)

GPUSORT_API int gpusort_vk_cmd_scan(const gpusort_vk_scanner *scanner, VkCommandBuffer command_buffer,
                                    const gpusort_vk_scan_info *info);

#ifdef __cplusplus
}
#endif

#endif
