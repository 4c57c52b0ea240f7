/* Vulkan devices: what each offers, and a compute context on one of them.
 *
 * gpusort needs Vulkan 1.3 (subgroup size control, the Vulkan memory model, buffer device
 * addresses) and subgroup ballot/arithmetic/shuffle in compute shaders. Every kernel is pinned
 * to one subgroup size per device (gs_device.subgroup_size, chosen by the device's
 * configuration in src/prim/device_config.c) so shared-memory layouts that depend on it are
 * known when the pipeline is built.
 *
 * A gs_device is either owned (gpusort made the instance, device, queue and command pool:
 * gs_device_select then gs_device_create) or borrowed (a caller's VkDevice, for recording
 * into the caller's command buffers: gs_device_borrow). */
#ifndef GS_VK_DEVICE_H
#define GS_VK_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

/* The exit status of a process in which the validation layer (GPUSORT_VALIDATION) reported
 * anything, whatever status it was exiting with: none of the command line's 0 to 3. */
enum { GS_VALIDATION_EXIT_STATUS = 4 };

typedef struct {
  uint32_t index; /* position in the loader's enumeration */
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 4];
  VkPhysicalDeviceType type;
  uint32_t vendor_id, device_id;
  VkDriverId driver_id;
  uint32_t api_version;
  uint32_t min_subgroup_size, max_subgroup_size;
  uint64_t device_local_bytes;
  uint64_t max_storage_range; /* bytes one storage-buffer binding can address */
  uint64_t max_data_buffer;   /* the most bytes gpusort puts in one data array: one allocation, or
                                 with sparse binding one buffer (a test knob lowers it) */
  uint64_t max_allocation;
  uint64_t budget_bytes;      /* device-local memory free for gpusort now (VK_EXT_memory_budget),
                                 or the heap's size where the driver cannot say */
  uint32_t max_groups[2]; /* workgroups per dispatch in x and y */
  uint32_t max_shared_bytes;
  uint32_t max_workgroup_size;  /* invocations; on an open device also within
                                   max_workgroup_subgroups of its pinned subgroup size */
  uint32_t max_workgroup_subgroups; /* subgroups of one workgroup (lavapipe: 32); 0: unknown */
  uint32_t max_push_bytes;
  bool has_int64;             /* shaderInt64: 64-bit keys, values and sums */
  bool has_float64;           /* shaderFloat64: f64 sums */
  bool has_int64_atomics;     /* shaderBufferInt64Atomics: packed scan descriptors */
  bool has_subgroup_extended; /* shaderSubgroupExtendedTypes: 64-bit subgroup scans */
  bool has_executable_stats;  /* VK_KHR_pipeline_executable_properties: compiler statistics */
  uint64_t host_import_alignment; /* VK_EXT_external_memory_host: host memory the GPU reads and
                                     writes in place, at this alignment; 0 without it */
  bool has_sparse_binding;    /* sparseBinding on the compute queue: buffers larger than one
                                 allocation, bound to several */
  char unusable[200];         /* why gpusort cannot use the device; empty when it can */
} gs_device_info;

typedef struct {
  VkInstance instance; /* owned devices only */
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;       /* owned devices only */
  uint32_t queue_family;
  VkCommandPool command_pool;
  VkPhysicalDeviceMemoryProperties memory;
  VkDebugUtilsMessengerEXT messenger;
  const VkAllocationCallbacks *allocator; /* the caller's, for a borrowed device */
  VkPipelineCache pipeline_cache;         /* the caller's, for a borrowed device; else gpusort's
                                             (src/vk/pipeline_cache.h) */
  size_t pipeline_cache_loaded;           /* bytes read from disk into it */
  gs_device_info info;
  uint32_t subgroup_size;
  uint32_t max_groups_x, max_groups_y; /* x after the GPUSORT_MAX_WORKGROUPS test knob */
  /* Optional features enabled on the device (a borrowed device: what its creator says). */
  bool int64, float64, int64_atomics, subgroup_extended, sparse_binding;
  bool host_import; /* VK_EXT_external_memory_host enabled (not GPUSORT_HOST_IMPORT=0) */
  PFN_vkGetMemoryHostPointerPropertiesEXT host_pointer_properties;
  double timestamp_ns; /* nanoseconds per timestamp tick */
  uint64_t timestamp_mask;
  uint64_t timeout_ns; /* bound on every wait for the GPU */
  bool owned;
  bool wedged;         /* a wait timed out or the device was lost: do not wait on it again */
  bool validating;     /* the validation layer is on (GPUSORT_VALIDATION) */
  unsigned validation_messages; /* warnings and errors it reported on this device (any message
                                   also makes the process exit with GS_VALIDATION_EXIT_STATUS) */
  bool pipeline_stats; /* print compiler statistics of each pipeline (GPUSORT_PIPELINE_STATS) */
  pthread_mutex_t queue_lock; /* the queue is used from more than one thread (a job allocates
                                 sparse buffers on one while it uploads on another) */
} gs_device;

/* Lists every physical device the loader reports, usable or not. *infos is malloc'd. */
int gs_device_list(gs_device_info **infos, uint32_t *count);

/* The device gs_device_select(-1) chooses: the first usable one of the best type,
 * discrete > integrated > virtual > CPU; -1 if none is usable. */
int gs_device_default_index(const gs_device_info *infos, uint32_t count);

/* Creates the instance and picks device `index`, or when index < 0 the default; fills
 * dev->info. GPUSORT_ERROR_NO_SUCH_DEVICE for an index past the last device. */
int gs_device_select(gs_device *dev, int index);

/* Creates the logical device with one compute queue, its kernels pinned to subgroup_size. */
int gs_device_create(gs_device *dev, uint32_t subgroup_size);

/* Wraps a caller's device (nothing is created). features12: the Vulkan 1.2 features the
 * device was created with, or NULL. */
int gs_device_borrow(gs_device *dev, VkPhysicalDevice physical, VkDevice device,
                     const VkPhysicalDeviceVulkan12Features *features12, bool int64, bool float64,
                     VkPipelineCache cache, const VkAllocationCallbacks *allocator, uint32_t subgroup_size);

/* Reads a physical device's properties and decides whether gpusort can run on it. */
void gs_device_probe(VkPhysicalDevice physical, uint32_t index, gs_device_info *info);

/* The most invocations a workgroup of a pipeline pinned to `subgroup` lanes may have: a
 * pinned subgroup size allows at most maxComputeWorkgroupSubgroups of them (lavapipe: 32 of
 * 8 lanes, 256 invocations). */
static inline uint32_t gs_workgroup_limit(const gs_device_info *info, uint32_t subgroup) {
  const uint64_t most = (uint64_t)info->max_workgroup_subgroups * subgroup;
  return most && most < info->max_workgroup_size ? (uint32_t)most : info->max_workgroup_size;
}

/* Releases what gpusort created; safe on a zeroed struct. Skips waiting on a wedged device. */
void gs_device_close(gs_device *dev);

/* Marks the device unusable after a stall or loss: nothing waits on it again. */
void gs_device_mark_wedged(gs_device *dev);

const char *gs_device_type_name(VkPhysicalDeviceType type);

/* Turns a failed VkResult into a recorded error naming `what`, with the status that fits:
 * GPU_STALL for a lost device (marking it wedged), OUT_OF_MEMORY, or RUNTIME. */
int gs_vk_fail(gs_device *dev, VkResult result, const char *what);

const char *gs_vk_result_name(VkResult result);

#endif
