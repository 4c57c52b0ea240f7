/* Vulkan instance and device: a compute-only context with one queue.
 *
 * gpusort needs Vulkan 1.3 (subgroup size control, the Vulkan memory model, host query
 * reset) and subgroup ballot/arithmetic/shuffle in compute shaders. Every kernel is pinned
 * to one subgroup size per device (gs_device.subgroup_size) so shared-memory layouts that
 * depend on it are known when the pipeline is built. */
#ifndef GS_VK_DEVICE_H
#define GS_VK_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

typedef struct {
  uint32_t index; /* position in the loader's enumeration, as --device takes it */
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 4];
  VkPhysicalDeviceType type;
  uint32_t api_version;
  uint32_t subgroup_size; /* the size gpusort runs its kernels at */
  uint32_t min_subgroup_size, max_subgroup_size;
  uint64_t device_local_bytes;
  uint64_t max_storage_range; /* bytes one storage-buffer binding can address */
  uint64_t max_data_binding;  /* the same for arrays of keys and elements (lower in tests) */
  uint64_t max_allocation;
  uint32_t max_groups[2]; /* workgroups per dispatch in x and y */
  uint32_t max_shared_bytes;
  uint32_t max_workgroup_size;
  bool has_int64;       /* shaderInt64: needed by 64-bit keys */
  bool has_float64;     /* shaderFloat64: f64 sums */
  bool has_int64_atomics;     /* shaderBufferInt64Atomics: packed scan descriptors */
  bool has_subgroup_extended; /* shaderSubgroupExtendedTypes: 64-bit subgroup scans */
  bool has_executable_stats; /* VK_KHR_pipeline_executable_properties: compiler statistics */
  char unusable[200];   /* why gpusort cannot use the device; empty when it can */
} gs_device_info;

typedef struct {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool command_pool;
  VkPhysicalDeviceMemoryProperties memory;
  VkDebugUtilsMessengerEXT messenger;
  gs_device_info info;
  uint32_t subgroup_size;
  uint32_t max_groups_x, max_groups_y; /* x after the GPUSORT_MAX_WORKGROUPS test knob */
  double timestamp_ns;                 /* nanoseconds per timestamp tick */
  uint64_t timestamp_mask;
  uint64_t timeout_ns; /* bound on every wait for the GPU */
  bool wedged;         /* a wait timed out or the device was lost: do not wait on it again */
  bool validating;     /* the validation layer is on (GPUSORT_VALIDATION) */
  bool pipeline_stats; /* print compiler statistics of each pipeline (GPUSORT_PIPELINE_STATS) */
} gs_device;

/* Lists every physical device the loader reports, usable or not. *infos is malloc'd. */
int gs_device_list(gs_device_info **infos, uint32_t *count);

/* The device gs_device_open(-1) chooses: the first usable one of the best type,
 * discrete > integrated > virtual > CPU; -1 if none is usable. */
int gs_device_default_index(const gs_device_info *infos, uint32_t count);

/* Opens device `index`, or when index < 0 the best usable one:
 * discrete > integrated > virtual > CPU, first in enumeration order on ties. */
int gs_device_open(gs_device *dev, int index);

/* Releases everything; safe on a zeroed struct. Skips waiting on a wedged device. */
void gs_device_close(gs_device *dev);

/* True once any device's wait timed out or it was lost: the process should leave with
 * _exit() rather than run the driver's teardown, which may wait on the stalled GPU. */
bool gs_device_any_wedged(void);
void gs_device_mark_wedged(void);

/* Warnings and errors the validation layer reported so far (GPUSORT_VALIDATION=1). */
unsigned gs_device_validation_messages(void);

const char *gs_device_type_name(VkPhysicalDeviceType type);

/* A one-line description for reports: "NAME (driver, subgroup N)". */
void gs_device_describe(const gs_device_info *info, char *buf, size_t size);

/* Turns a failed VkResult into a recorded error naming `what`; returns GS_ERR_RUNTIME. */
int gs_vk_fail(gs_device *dev, VkResult result, const char *what);

const char *gs_vk_result_name(VkResult result);

#endif
