#include "vk/device.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/knobs.h"
#include "vk/pipeline_cache.h"

enum { DEFAULT_TIMEOUT_S = 60 };

void gs_device_mark_wedged(gs_device *dev) { dev->wedged = true; }

static const VkSubgroupFeatureFlags needed_subgroup_ops =
    VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
    VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;

const char *gs_vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
  default: return "VkResult error";
  }
}

int gs_vk_fail(gs_device *dev, VkResult r, const char *what) {
  if (r == VK_ERROR_DEVICE_LOST) {
    if (dev) gs_device_mark_wedged(dev);
    return gs_fail(GPUSORT_ERROR_GPU_STALL, "GPU device lost during %s", what);
  }
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of GPU memory during %s", what);
  if (r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory during %s", what);
  return gs_fail(GPUSORT_ERROR_RUNTIME, "Vulkan error %s (%d) during %s", gs_vk_result_name(r), (int)r, what);
}

const char *gs_device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
  default: return "other";
  }
}

static int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
  default: return 0;
  }
}

int gs_device_default_index(const gs_device_info *infos, uint32_t count) {
  int chosen = -1, chosen_rank = -1;
  for (uint32_t i = 0; i < count; i++) {
    if (infos[i].unusable[0] || type_rank(infos[i].type) <= chosen_rank) continue;
    chosen = (int)i, chosen_rank = type_rank(infos[i].type);
  }
  return chosen;
}

static bool has_device_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS) return false;
  VkExtensionProperties *ext = calloc(n ? n : 1, sizeof *ext);
  bool found = false;
  if (ext && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(ext[i].extensionName, name) == 0;
  free(ext);
  return found;
}

/* The queue family gpusort uses: compute with timestamps, preferring compute-only families
 * (GPUSORT_QUEUE=graphics prefers the universal family instead, for experiments), and among
 * those one that binds sparse memory. */
static int find_queue_family(VkPhysicalDevice pd, uint32_t *family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
  if (!q) return -1;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].timestampValidBits == 0) continue;
    const bool prefer_graphics = gs_knobs_get()->graphics_queue;
    int score = ((q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0) == prefer_graphics ? 4 : 2;
    if (q[i].queueFlags & VK_QUEUE_SPARSE_BINDING_BIT) score++;
    if (score > best_score) best = (int)i, best_score = score;
  }
  free(q);
  if (best < 0) return -1;
  *family = (uint32_t)best;
  return 0;
}

/* The optional features gpusort uses where present, and the first required thing the device
 * lacks (info->unusable). */
static void check_features(VkPhysicalDevice pd, const VkPhysicalDeviceVulkan11Properties *p11,
                           const VkPhysicalDeviceVulkan13Properties *p13, const VkPhysicalDeviceLimits *lim,
                           gs_device_info *info) {
  VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
  vkGetPhysicalDeviceFeatures2(pd, &feats);
  info->has_int64 = feats.features.shaderInt64;
  info->has_float64 = feats.features.shaderFloat64;
  info->has_int64_atomics = f12.shaderBufferInt64Atomics;
  info->has_subgroup_extended = f12.shaderSubgroupExtendedTypes;
  info->has_executable_stats = has_device_extension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (has_device_extension(pd, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &host};
    vkGetPhysicalDeviceProperties2(pd, &props);
    info->host_import_alignment = host.minImportedHostPointerAlignment;
  }

  uint32_t family;
  if (feats.features.sparseBinding && find_queue_family(pd, &family) == 0) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
    if (q) {
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
      info->has_sparse_binding = (q[family].queueFlags & VK_QUEUE_SPARSE_BINDING_BIT) != 0;
      free(q);
    }
  }
  const char *missing = NULL;
  if (!f13.subgroupSizeControl || !f13.computeFullSubgroups || !(p13->requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT))
    missing = "subgroup size control for compute shaders";
  else if (!f12.vulkanMemoryModel || !f12.vulkanMemoryModelDeviceScope)
    missing = "the Vulkan memory model at device scope";
  else if (!f12.bufferDeviceAddress || !f12.hostQueryReset || !f13.maintenance4)
    missing = "buffer device addresses, host query reset and maintenance4";
  else if (!(p11->subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
           (p11->subgroupSupportedOperations & needed_subgroup_ops) != needed_subgroup_ops)
    missing = "subgroup vote, ballot, arithmetic, shuffle and relative shuffle operations in compute shaders";
  else if (p13->maxSubgroupSize < 4 || p13->minSubgroupSize > 128)
    missing = "a subgroup size between 4 and 128 lanes";
  else if (lim->maxComputeSharedMemorySize < 16384 || lim->maxComputeWorkGroupInvocations < 128)
    missing = "16 KiB of shared memory and 128 invocations per workgroup";
  else if (lim->maxPushConstantsSize < 128)
    missing = "128 bytes of push constants";
  else if (find_queue_family(pd, &family) != 0)
    missing = "a compute queue with timestamps";
  if (missing) snprintf(info->unusable, sizeof info->unusable, "lacks %s", missing);
}

void gs_device_probe(VkPhysicalDevice pd, uint32_t index, gs_device_info *info) {
  memset(info, 0, sizeof *info);
  info->index = index;

  VkPhysicalDeviceVulkan13Properties p13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(pd, &base);
  bool v13 = VK_API_VERSION_MAJOR(base.apiVersion) > 1 || VK_API_VERSION_MINOR(base.apiVersion) >= 3;
  if (v13) {
    props.pNext = &p11;
    p11.pNext = &p12;
    p12.pNext = &p13;
    vkGetPhysicalDeviceProperties2(pd, &props);
  } else {
    props.properties = base;
  }
  const VkPhysicalDeviceLimits *lim = &props.properties.limits;
  snprintf(info->name, sizeof info->name, "%s", props.properties.deviceName);
  info->type = props.properties.deviceType;
  info->vendor_id = props.properties.vendorID;
  info->device_id = props.properties.deviceID;
  info->api_version = props.properties.apiVersion;
  info->max_storage_range = lim->maxStorageBufferRange;
  info->max_groups[0] = lim->maxComputeWorkGroupCount[0];
  info->max_groups[1] = lim->maxComputeWorkGroupCount[1];
  info->max_shared_bytes = lim->maxComputeSharedMemorySize;
  const uint32_t shared_knob = gs_knobs_get()->max_shared_bytes; /* tests reach smaller tiles */
  if (shared_knob && shared_knob < info->max_shared_bytes) info->max_shared_bytes = shared_knob;
  info->max_workgroup_size = lim->maxComputeWorkGroupInvocations;
  info->max_push_bytes = lim->maxPushConstantsSize;

  /* Device-local memory, and how much of it is free now where the driver says
   * (VK_EXT_memory_budget: other programs' use is subtracted). */
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  const bool have_budget = v13 && has_device_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (have_budget) mem2.pNext = &budget;
  if (v13)
    vkGetPhysicalDeviceMemoryProperties2(pd, &mem2);
  else
    vkGetPhysicalDeviceMemoryProperties(pd, &mem2.memoryProperties);
  const VkPhysicalDeviceMemoryProperties *mem = &mem2.memoryProperties;
  for (uint32_t h = 0; h < mem->memoryHeapCount; h++) {
    if (!(mem->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    info->device_local_bytes += mem->memoryHeaps[h].size;
    const uint64_t free_now = have_budget && budget.heapBudget[h] ? budget.heapBudget[h] - budget.heapUsage[h]
                                                                   : mem->memoryHeaps[h].size;
    info->budget_bytes += free_now < mem->memoryHeaps[h].size ? free_now : mem->memoryHeaps[h].size;
  }

  if (!v13) {
    snprintf(info->driver, sizeof info->driver, "driver %u", props.properties.driverVersion);
    snprintf(info->unusable, sizeof info->unusable, "needs Vulkan 1.3, device offers %u.%u",
             VK_API_VERSION_MAJOR(base.apiVersion), VK_API_VERSION_MINOR(base.apiVersion));
    return;
  }
  snprintf(info->driver, sizeof info->driver, "%s %s", p12.driverName, p12.driverInfo);
  info->driver_id = p12.driverID;
  info->max_allocation = p11.maxMemoryAllocationSize;
  info->min_subgroup_size = p13.minSubgroupSize;
  info->max_subgroup_size = p13.maxSubgroupSize;
  info->max_workgroup_subgroups = p13.maxComputeWorkgroupSubgroups;
  /* Kernels address buffers by device address, so one data array is bounded by what one
   * buffer and one allocation hold; GPUSORT_MAX_BINDING_BYTES lowers that so tests reach the
   * size limits on small inputs. */
  check_features(pd, &p11, &p13, lim, info);
  /* With sparse binding, one buffer spans several allocations: up to the device's memory. */
  uint64_t one_buffer = info->max_allocation;
  if (info->has_sparse_binding && lim->sparseAddressSpaceSize > one_buffer) {
    one_buffer = lim->sparseAddressSpaceSize < info->device_local_bytes ? lim->sparseAddressSpaceSize
                                                                        : info->device_local_bytes;
    if (one_buffer < info->max_allocation) one_buffer = info->max_allocation;
  }
  info->max_data_buffer = p13.maxBufferSize < one_buffer ? p13.maxBufferSize : one_buffer;
  const uint64_t knob = gs_knobs_get()->max_buffer_bytes;
  if (knob && knob < info->max_data_buffer) info->max_data_buffer = knob;
}

/* Messages of the validation layer in this process, over every device it opened. */
static atomic_uint process_validation_messages;
static pthread_once_t exit_check_once = PTHREAD_ONCE_INIT;

/* Under GPUSORT_VALIDATION, a process whose devices got any message fails, however it was
 * going to exit: the command line, test programs and programs that load the library (the
 * Python module) alike, so that CI cannot miss a message printed by a passing run. */
static void fail_exit_after_validation_messages(void) {
  const unsigned messages = atomic_load(&process_validation_messages);
  if (!messages) return;
  fprintf(stderr, "gpusort: vulkan validation: %u message%s (GPUSORT_VALIDATION); exit status %d\n", messages,
          messages == 1 ? "" : "s", GS_VALIDATION_EXIT_STATUS);
  fflush(NULL);
  _exit(GS_VALIDATION_EXIT_STATUS); /* exit() may not be called from an atexit handler */
}

static void register_exit_check(void) { atexit(fail_exit_after_validation_messages); }

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                            VkDebugUtilsMessageTypeFlagsEXT types,
                                                            const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                            void *user) {
  (void)types;
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    /* a development aid, enabled by GPUSORT_VALIDATION: the library's one print */
    fprintf(stderr, "gpusort: vulkan validation: %s\n", data->pMessage);
    ((gs_device *)user)->validation_messages++;
    atomic_fetch_add(&process_validation_messages, 1);
  }
  return VK_FALSE;
}

/* GPUSORT_VALIDATION=1 turns on the Khronos validation layer, when installed, for development
 * and CI: any message makes the process exit with GS_VALIDATION_EXIT_STATUS. */
static int create_instance(gs_device *dev) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "gpusort",
                           .applicationVersion = 1,
                           .pEngineName = "gpusort",
                           .apiVersion = VK_API_VERSION_1_3};
  const char *layers[1], *exts[1];
  uint32_t nlayers = 0, nexts = 0;
  if (gs_knobs_get()->validation) {
    layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
    exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  }
  /* With validation on, also check synchronization (barriers between dispatches and copies). */
  const VkValidationFeatureEnableEXT checks[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = checks};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = nlayers ? &features : NULL,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = nlayers,
                             .ppEnabledLayerNames = layers,
                             .enabledExtensionCount = nexts,
                             .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateInstance(&ci, NULL, &dev->instance);
  if (r == VK_ERROR_LAYER_NOT_PRESENT || r == VK_ERROR_EXTENSION_NOT_PRESENT) {
    fprintf(stderr, "gpusort: GPUSORT_VALIDATION is set but the validation layer is not installed\n");
    ci.enabledLayerCount = ci.enabledExtensionCount = 0;
    ci.pNext = NULL;
    nexts = 0;
    r = vkCreateInstance(&ci, NULL, &dev->instance);
  }
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "no Vulkan 1.3 driver found (on a machine without a GPU, install "
                                   "mesa-vulkan-drivers for the CPU driver lavapipe)");
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "creating the Vulkan instance");
  if (nexts) {
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(dev->instance, "vkCreateDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message,
        .pUserData = dev};
    if (create && create(dev->instance, &mi, NULL, &dev->messenger) == VK_SUCCESS) {
      dev->validating = true;
      pthread_once(&exit_check_once, register_exit_check);
    }
  }
  return GPUSORT_OK;
}

static int enumerate(gs_device *dev, VkPhysicalDevice **pds, uint32_t *count) {
  VkResult r = vkEnumeratePhysicalDevices(dev->instance, count, NULL);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "listing Vulkan devices");
  *pds = calloc(*count ? *count : 1, sizeof **pds);
  if (!*pds) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  r = vkEnumeratePhysicalDevices(dev->instance, count, *pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(*pds);
    return gs_vk_fail(dev, r, "listing Vulkan devices");
  }
  return GPUSORT_OK;
}

int gs_device_list(gs_device_info **infos, uint32_t *count) {
  gs_device dev = {.owned = true};
  VkPhysicalDevice *pds = NULL;
  int rc = create_instance(&dev);
  if (rc == GPUSORT_OK) rc = enumerate(&dev, &pds, count);
  if (rc == GPUSORT_OK) {
    *infos = calloc(*count ? *count : 1, sizeof **infos);
    if (!*infos) rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t i = 0; rc == GPUSORT_OK && i < *count; i++) gs_device_probe(pds[i], i, &(*infos)[i]);
  }
  free(pds);
  gs_device_close(&dev);
  return rc;
}

static int create_logical_device(gs_device *dev) {
  if (find_queue_family(dev->physical, &dev->queue_family) != 0)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s has no compute queue with timestamps", dev->info.name);
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = dev->queue_family,
                                .queueCount = 1,
                                .pQueuePriorities = &priority};
  VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                          .subgroupSizeControl = VK_TRUE,
                                          .computeFullSubgroups = VK_TRUE,
                                          .maintenance4 = VK_TRUE};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .pNext = &f13,
                                          .vulkanMemoryModel = VK_TRUE,
                                          .vulkanMemoryModelDeviceScope = VK_TRUE,
                                          .bufferDeviceAddress = VK_TRUE,
                                          .hostQueryReset = VK_TRUE,
                                          .shaderBufferInt64Atomics = dev->info.has_int64_atomics,
                                          .shaderSubgroupExtendedTypes = dev->info.has_subgroup_extended};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
  feats.features.shaderInt64 = dev->info.has_int64 ? VK_TRUE : VK_FALSE;
  feats.features.shaderFloat64 = dev->info.has_float64 ? VK_TRUE : VK_FALSE;
  feats.features.sparseBinding = dev->info.has_sparse_binding ? VK_TRUE : VK_FALSE;
  /* Compiler statistics of each pipeline (registers, spills), printed with GPUSORT_PIPELINE_STATS=1. */
  const char *extensions[2];
  uint32_t nextensions = 0;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fexec = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pipelineExecutableInfo = VK_TRUE};
  dev->pipeline_stats = dev->info.has_executable_stats && gs_knobs_get()->pipeline_stats;
  if (dev->pipeline_stats) {
    f13.pNext = &fexec;
    extensions[nextensions++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  }
  /* Host memory imported as buffers: keys and orders cross the bus without a staging copy. */
  const bool host_import = dev->info.host_import_alignment && !gs_knobs_get()->no_host_import;
  if (host_import) extensions[nextensions++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           .pNext = &feats,
                           .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &qi,
                           .enabledExtensionCount = nextensions,
                           .ppEnabledExtensionNames = extensions};
  VkResult r = vkCreateDevice(dev->physical, &ci, NULL, &dev->device);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "creating the Vulkan device");
  if (host_import)
    dev->host_pointer_properties = (PFN_vkGetMemoryHostPointerPropertiesEXT)vkGetDeviceProcAddr(
        dev->device, "vkGetMemoryHostPointerPropertiesEXT");
  dev->host_import = dev->host_pointer_properties != NULL;
  dev->int64 = dev->info.has_int64;
  dev->float64 = dev->info.has_float64;
  dev->int64_atomics = dev->info.has_int64_atomics;
  dev->subgroup_extended = dev->info.has_subgroup_extended;
  dev->sparse_binding = dev->info.has_sparse_binding;
  vkGetDeviceQueue(dev->device, dev->queue_family, 0, &dev->queue);
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = dev->queue_family};
  r = vkCreateCommandPool(dev->device, &pi, NULL, &dev->command_pool);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, "creating a command pool");
  gs_pipeline_cache_open(dev);
  return GPUSORT_OK;
}

/* What every device handle needs, owned or borrowed: limits, memory types, timestamp period. */
static void set_common(gs_device *dev, uint32_t subgroup_size) {
  dev->subgroup_size = subgroup_size;
  dev->info.max_workgroup_size = gs_workgroup_limit(&dev->info, subgroup_size); /* every kernel pins it */
  /* GPUSORT_MAX_WORKGROUPS lowers the x-dimension dispatch limit so tests reach the
   * folded (x * y) dispatch path on small inputs. */
  const uint32_t knob = gs_knobs_get()->max_workgroups;
  dev->max_groups_x = knob && knob < dev->info.max_groups[0] ? knob : dev->info.max_groups[0];
  dev->max_groups_y = dev->info.max_groups[1];
  vkGetPhysicalDeviceMemoryProperties(dev->physical, &dev->memory);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(dev->physical, &props);
  dev->timestamp_ns = props.limits.timestampPeriod;
  if (!dev->timeout_ns) dev->timeout_ns = (uint64_t)DEFAULT_TIMEOUT_S * 1000000000ull;
}

int gs_device_select(gs_device *dev, int index) {
  memset(dev, 0, sizeof *dev);
  pthread_mutex_init(&dev->queue_lock, NULL);
  dev->owned = true;
  int rc = create_instance(dev);
  if (rc) return rc;
  VkPhysicalDevice *pds = NULL;
  uint32_t count = 0;
  if ((rc = enumerate(dev, &pds, &count))) return rc;
  if (count == 0) {
    free(pds);
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "no Vulkan device found (on a machine without a GPU, install "
                                            "mesa-vulkan-drivers for the CPU driver lavapipe)");
  }
  gs_device_info *infos = calloc(count, sizeof *infos);
  if (!infos) {
    free(pds);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  for (uint32_t i = 0; i < count; i++) gs_device_probe(pds[i], i, &infos[i]);
  int chosen = index;
  if (index >= 0 && (uint32_t)index >= count)
    rc = gs_fail(GPUSORT_ERROR_NO_SUCH_DEVICE, "there are %u Vulkan devices (0 to %u)", count, count - 1);
  else if (index >= 0 && infos[index].unusable[0])
    rc = gs_fail(GPUSORT_ERROR_NO_DEVICE, "device %d (%s) %s", index, infos[index].name, infos[index].unusable);
  else if (index < 0 && (chosen = gs_device_default_index(infos, count)) < 0)
    rc = gs_fail(GPUSORT_ERROR_NO_DEVICE, "no usable Vulkan device: %s %s%s", infos[0].name, infos[0].unusable,
                 count > 1 ? " (the others likewise; see 'gpusort devices')" : "");
  if (rc == GPUSORT_OK) {
    dev->physical = pds[chosen];
    dev->info = infos[chosen];
  }
  free(infos);
  free(pds);
  return rc;
}

int gs_device_create(gs_device *dev, uint32_t subgroup_size) {
  set_common(dev, subgroup_size);
  int rc = create_logical_device(dev);
  if (rc) return rc;
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &nq, NULL);
  VkQueueFamilyProperties *q = calloc(nq, sizeof *q);
  if (!q) return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &nq, q);
  uint32_t bits = q[dev->queue_family].timestampValidBits;
  dev->timestamp_mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  free(q);
  return GPUSORT_OK;
}

int gs_device_borrow(gs_device *dev, VkPhysicalDevice physical, VkDevice device,
                     const VkPhysicalDeviceVulkan12Features *features12, bool int64, bool float64,
                     VkPipelineCache cache, const VkAllocationCallbacks *allocator, uint32_t subgroup_size) {
  memset(dev, 0, sizeof *dev);
  pthread_mutex_init(&dev->queue_lock, NULL);
  dev->physical = physical;
  dev->device = device;
  dev->pipeline_cache = cache;
  dev->allocator = allocator;
  gs_device_probe(physical, 0, &dev->info);
  set_common(dev, subgroup_size);
  dev->int64 = int64;
  dev->float64 = float64;
  dev->int64_atomics = features12 && features12->shaderBufferInt64Atomics;
  dev->subgroup_extended = features12 && features12->shaderSubgroupExtendedTypes;
  return GPUSORT_OK;
}

void gs_device_close(gs_device *dev) {
  if (dev->owned && dev->device && !dev->wedged) {
    vkDeviceWaitIdle(dev->device);
    gs_pipeline_cache_close(dev);
    if (dev->command_pool) vkDestroyCommandPool(dev->device, dev->command_pool, NULL);
    vkDestroyDevice(dev->device, NULL);
  }
  if (dev->owned && dev->instance && !dev->wedged) {
    if (dev->messenger) {
      PFN_vkDestroyDebugUtilsMessengerEXT destroy =
          (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(dev->instance, "vkDestroyDebugUtilsMessengerEXT");
      if (destroy) destroy(dev->instance, dev->messenger, NULL);
    }
    vkDestroyInstance(dev->instance, NULL);
  }
  pthread_mutex_destroy(&dev->queue_lock);
  memset(dev, 0, sizeof *dev);
}
