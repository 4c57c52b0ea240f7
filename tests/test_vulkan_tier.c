/* The Vulkan tier as an application uses it, through gpusort_vulkan.h alone: the test makes
 * its own instance (with the Khronos validation layer and synchronization validation) and
 * device, fills buffers with its own compute dispatch, records gpusort's sort into its own
 * command buffer followed by its own consumer dispatch, submits once and checks the result,
 * against a CPU reference. Then every payload, the indirect count, the scanner, and the error
 * paths. Any validation message fails the run. With VULKAN_TIER_LAYER=0 the instance has no
 * layer: the sanitizer run sets it, where the test took 211 s with the layer (its allocations
 * pass through AddressSanitizer's) against 130 without it; the plain and validation runs check
 * the layer's messages.
 *
 *   test_vulkan_tier SPIRV_DIR                  the checks
 *   test_vulkan_tier SPIRV_DIR bench N [REPS]   median GPU time of a recorded sort of N u32
 *                                               keys, from the application's own timestamps */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusort_vulkan.h"
#include "reference.h"

typedef struct {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  unsigned messages;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkFence fence;
  VkPhysicalDeviceMemoryProperties memory;
  VkPhysicalDeviceFeatures2 features;
  VkPhysicalDeviceVulkan12Features features12;
  VkPhysicalDeviceVulkan13Features features13;
  gpusort_vk_device gdev;
  float timestamp_period;
  /* the application's own kernels: fill and consume, three storage buffers each */
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipeline_layout;
  VkPipeline fill, consume;
  VkDescriptorPool descriptor_pool;
  int failures, checks;
} app;

typedef struct {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;
  VkBufferUsageFlags usage;
  void *mapped;
} app_buffer;

#define CHECK_VK(call)                                                                         \
  do {                                                                                         \
    VkResult r_ = (call);                                                                      \
    if (r_ != VK_SUCCESS) {                                                                    \
      fprintf(stderr, "FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_);     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static void expect(app *a, bool ok, const char *what) {
  a->checks++;
  if (!ok) {
    a->failures++;
    fprintf(stderr, "FAIL %s\n", what);
  }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    fprintf(stderr, "validation: %s\n", data->pMessage);
    ((app *)user)->messages++;
  }
  return VK_FALSE;
}

/* The checks run under the validation layer; the timing mode without it (it would be timed). */
static void create_instance(app *a, bool validate) {
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkApplicationInfo info = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "test_vulkan_tier",
                            .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pNext = validate ? &features : NULL,
                             .pApplicationInfo = &info, .enabledLayerCount = validate, .ppEnabledLayerNames = layers,
                             .enabledExtensionCount = validate, .ppEnabledExtensionNames = extensions};
  VkResult r = vkCreateInstance(&ci, NULL, &a->instance);
  if (r == VK_ERROR_LAYER_NOT_PRESENT) {
    fprintf(stderr, "FAIL: the Khronos validation layer is not installed (Debian: vulkan-validationlayers)\n");
    exit(1);
  }
  CHECK_VK(r);
  if (!validate) return;
  VkDebugUtilsMessengerCreateInfoEXT mi = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = a};
  PFN_vkCreateDebugUtilsMessengerEXT create =
      (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkCreateDebugUtilsMessengerEXT");
  CHECK_VK(create(a->instance, &mi, NULL, &a->messenger));
}

/* The first device gpusort can run on, with the features it asks for, and one compute queue. */
static void create_device(app *a) {
  uint32_t n = 8;
  VkPhysicalDevice pds[8];
  CHECK_VK(vkEnumeratePhysicalDevices(a->instance, &n, pds));
  for (uint32_t i = 0; i < n && !a->physical; i++) {
    a->features13 = (VkPhysicalDeviceVulkan13Features){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    a->features12 = (VkPhysicalDeviceVulkan12Features){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                       .pNext = &a->features13};
    a->features = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                              .pNext = &a->features12};
    if (gpusort_vk_enable_features(pds[i], &a->features, &a->features12, &a->features13) == GPUSORT_OK)
      a->physical = pds[i];
  }
  if (!a->physical) {
    fprintf(stderr, "FAIL: no device gpusort can run on: %s\n", gpusort_last_error());
    exit(1);
  }
  uint32_t families = 16;
  VkQueueFamilyProperties props[16];
  vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &families, props);
  for (a->family = 0; a->family < families && !(props[a->family].queueFlags & VK_QUEUE_COMPUTE_BIT); a->family++) {
  }
  const float priority = 1;
  VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = a->family,
                                .queueCount = 1, .pQueuePriorities = &priority};
  VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &a->features,
                           .queueCreateInfoCount = 1, .pQueueCreateInfos = &qi};
  CHECK_VK(vkCreateDevice(a->physical, &ci, NULL, &a->device));
  vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
  vkGetPhysicalDeviceMemoryProperties(a->physical, &a->memory);
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(a->physical, &p);
  a->timestamp_period = p.limits.timestampPeriod;
  VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = a->family};
  CHECK_VK(vkCreateCommandPool(a->device, &pi, NULL, &a->pool));
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = a->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  CHECK_VK(vkAllocateCommandBuffers(a->device, &ai, &a->cb));
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  CHECK_VK(vkCreateFence(a->device, &fi, NULL, &a->fence));
  const gpusort_vk_device gdev = GPUSORT_VK_DEVICE_INIT(a->physical, a->device);
  a->gdev = gdev;
  a->gdev.enabled_features = &a->features;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "FAIL: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(*size);
  if (fread(data, 1, *size, f) != *size) exit(1);
  fclose(f);
  return data;
}

static VkPipeline make_pipeline(app *a, const char *dir, const char *name) {
  char path[1024];
  size_t size;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *code = read_file(path, &size);
  VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size,
                                 .pCode = (const uint32_t *)code};
  VkShaderModule module;
  CHECK_VK(vkCreateShaderModule(a->device, &mi, NULL, &module));
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module, .pName = "main"},
      .layout = a->pipeline_layout};
  VkPipeline pipeline;
  CHECK_VK(vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &ci, NULL, &pipeline));
  vkDestroyShaderModule(a->device, module, NULL);
  free(code);
  return pipeline;
}

static void create_app_kernels(app *a, const char *dir) {
  VkDescriptorSetLayoutBinding b[3];
  for (uint32_t i = 0; i < 3; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = 3, .pBindings = b};
  CHECK_VK(vkCreateDescriptorSetLayout(a->device, &li, NULL, &a->set_layout));
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 12};
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                    .pSetLayouts = &a->set_layout, .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pr};
  CHECK_VK(vkCreatePipelineLayout(a->device, &pli, NULL, &a->pipeline_layout));
  a->fill = make_pipeline(a, dir, "app_fill.spv");
  a->consume = make_pipeline(a, dir, "app_consume.spv");
  VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 64};
  VkDescriptorPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                   .flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT, .maxSets = 16,
                                   .poolSizeCount = 1, .pPoolSizes = &size};
  CHECK_VK(vkCreateDescriptorPool(a->device, &pi, NULL, &a->descriptor_pool));
}

static VkDescriptorSet bind3(app *a, const app_buffer *x, const app_buffer *y, const app_buffer *z) {
  VkDescriptorSet set;
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = a->descriptor_pool, .descriptorSetCount = 1,
                                    .pSetLayouts = &a->set_layout};
  CHECK_VK(vkAllocateDescriptorSets(a->device, &ai, &set));
  const app_buffer *bufs[3] = {x, y, z};
  VkDescriptorBufferInfo info[3];
  VkWriteDescriptorSet w[3];
  for (int i = 0; i < 3; i++) {
    info[i] = (VkDescriptorBufferInfo){.buffer = bufs[i]->buffer, .range = VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = (uint32_t)i,
                                  .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info[i]};
  }
  vkUpdateDescriptorSets(a->device, 3, w, 0, NULL);
  return set;
}

/* Host-visible memory with device addresses: the application's buffers, readable directly;
 * device-local where the device maps its own memory (resizable BAR), as a GPU-resident
 * application's buffers would be. */
static app_buffer make_buffer(app *a, VkDeviceSize size, VkBufferUsageFlags usage) {
  app_buffer b = {.size = size < 16 ? 16 : size, .usage = usage};
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = b.size, .usage = usage};
  CHECK_VK(vkCreateBuffer(a->device, &bi, NULL, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(a->device, b.buffer, &req);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = a->memory.memoryTypeCount;
  for (uint32_t t = 0; t < a->memory.memoryTypeCount; t++) {
    const VkMemoryPropertyFlags f = a->memory.memoryTypes[t].propertyFlags;
    if (!(req.memoryTypeBits & (1u << t)) || (f & want) != want) continue;
    if (type == a->memory.memoryTypeCount || (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) type = t;
    if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) break;
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &flags,
                             .allocationSize = req.size, .memoryTypeIndex = type};
  CHECK_VK(vkAllocateMemory(a->device, &ai, NULL, &b.memory));
  CHECK_VK(vkBindBufferMemory(a->device, b.buffer, b.memory, 0));
  CHECK_VK(vkMapMemory(a->device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  memset(b.mapped, 0, b.size);
  return b;
}

static const VkBufferUsageFlags DATA = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

static app_buffer make_scratch(app *a, const gpusort_vk_requirements *r) {
  return make_buffer(a, r->scratch_size, r->scratch_usage);
}

static void free_buffer(app *a, app_buffer *b) {
  vkDestroyBuffer(a->device, b->buffer, NULL);
  vkFreeMemory(a->device, b->memory, NULL);
}

static gpusort_vk_buffer whole(const app_buffer *b) {
  return (gpusort_vk_buffer){.buffer = b->buffer, .offset = 0, .size = b->size, .usage = b->usage};
}

static void begin(app *a) {
  CHECK_VK(vkResetCommandBuffer(a->cb, 0));
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  CHECK_VK(vkBeginCommandBuffer(a->cb, &bi));
}

/* The barriers the application owes: from its stage to compute shaders, and back. */
static void barrier(app *a, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                    VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access,
                        .dstAccessMask = dst_access};
  vkCmdPipelineBarrier(a->cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void compute_to_compute(app *a) {
  barrier(a, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

/* Ends, submits once and waits (bounded). */
static void submit_and_wait(app *a) {
  barrier(a, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  CHECK_VK(vkEndCommandBuffer(a->cb));
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &a->cb};
  CHECK_VK(vkResetFences(a->device, 1, &a->fence));
  CHECK_VK(vkQueueSubmit(a->queue, 1, &si, a->fence));
  CHECK_VK(vkWaitForFences(a->device, 1, &a->fence, VK_TRUE, 120ull * 1000000000ull));
}

static void dispatch_app(app *a, VkPipeline pipeline, VkDescriptorSet set, const uint32_t push[3], uint32_t n) {
  vkCmdBindPipeline(a->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(a->cb, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipeline_layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(a->cb, a->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 12, push);
  vkCmdDispatch(a->cb, (n + 63) / 64 ? (n + 63) / 64 : 1, 1, 1);
}

/* The fill shader's keys, on the host. */
static uint32_t app_hash(uint32_t x, uint32_t seed) {
  x ^= seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* ---- The application's own producer and consumer around the sort ---- */

/* Fill (own dispatch) -> sort (recorded by gpusort) -> consume (own dispatch), one submission.
 * With `indirect`, the sort reads the count the fill wrote; the buffers hold max_n. */
static void sort_between_own_dispatches(app *a, bool indirect, uint32_t n, uint32_t max_n) {
  gpusort_vk_sorter_info info = GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U32);
  info.value_type = GPUSORT_U32;
  gpusort_vk_sorter *sorter = NULL;
  gpusort_vk_requirements req = GPUSORT_VK_REQUIREMENTS_INIT;
  int rc = gpusort_vk_sorter_create(&a->gdev, &info, &sorter);
  if (!rc) rc = gpusort_vk_sorter_requirements(sorter, max_n, &req);
  if (rc) {
    expect(a, false, gpusort_last_error());
    return;
  }
  app_buffer keys = make_buffer(a, (VkDeviceSize)max_n * 4, req.data_usage);
  app_buffer values = make_buffer(a, (VkDeviceSize)max_n * 4, req.data_usage);
  app_buffer count = make_buffer(a, 16, req.data_usage);
  app_buffer result = make_buffer(a, 16, req.data_usage);
  app_buffer scratch = make_scratch(a, &req);
  VkDescriptorSet fill_set = bind3(a, &keys, &values, &count), consume_set = bind3(a, &keys, &values, &result);
  const uint32_t seed = 0x1234 + n, mask = 0xFFFF;
  const uint32_t fill_push[3] = {n, seed, mask}, consume_push[3] = {n, 0, 0};
  gpusort_vk_sort_info sort = GPUSORT_VK_SORT_INFO_INIT;
  sort.count = indirect ? 0 : n;
  sort.max_count = max_n;
  if (indirect) sort.count_buffer = whole(&count);
  sort.keys = whole(&keys);
  sort.values = whole(&values);
  sort.scratch = whole(&scratch);

  begin(a);
  dispatch_app(a, a->fill, fill_set, fill_push, n);
  compute_to_compute(a); /* before: the application's writes, to gpusort's reads */
  rc = gpusort_vk_cmd_sort(sorter, a->cb, &sort);
  compute_to_compute(a); /* after: gpusort's writes, to the application's reads */
  dispatch_app(a, a->consume, consume_set, consume_push, n);
  submit_and_wait(a);

  char label[128];
  snprintf(label, sizeof label, "own dispatches around a %s sort of %u keys (capacity %u)",
           indirect ? "indirect" : "direct", n, max_n);
  expect(a, rc == GPUSORT_OK, label);
  const uint32_t *r = result.mapped, *k = keys.mapped, *v = values.mapped;
  expect(a, r[0] == 0 && r[1] == 0, "the consumer saw no key out of order and no equal keys out of input order");
  /* against the CPU: the stable order of the same keys */
  uint32_t *host = malloc((n ? n : 1) * 4);
  for (uint32_t i = 0; i < n; i++) host[i] = app_hash(i, seed) & mask;
  uint64_t *order = ref_sort_order(GPUSORT_U32, (const unsigned char *)host, 4, 0, n, false, 0, 0);
  bool same = true;
  for (uint32_t i = 0; i < n && same; i++) same = k[i] == host[order[i]] && v[i] == order[i];
  expect(a, same, label);
  free(host);
  free(order);
  vkFreeDescriptorSets(a->device, a->descriptor_pool, 1, &fill_set);
  vkFreeDescriptorSets(a->device, a->descriptor_pool, 1, &consume_set);
  free_buffer(a, &keys), free_buffer(a, &values), free_buffer(a, &count), free_buffer(a, &result);
  free_buffer(a, &scratch);
  gpusort_vk_sorter_destroy(sorter);
}

/* ---- Every payload, filled and read by the host through mapped memory ---- */

typedef struct {
  const char *name;
  gpusort_vk_sorter_info info;
  uint32_t begin, end;
} payload_case;

/* One sort of n records of a case, checked against the reference. */
static void sort_payload(app *a, const payload_case *c, uint64_t n) {
  const gpusort_vk_sorter_info *in = &c->info;
  const size_t kb = gpusort_type_size(in->key_type), vb = gpusort_type_size(in->value_type);
  const size_t ib = gpusort_type_size(in->index_type), R = in->record_bytes;
  gpusort_vk_sorter *sorter = NULL;
  gpusort_vk_requirements req = GPUSORT_VK_REQUIREMENTS_INIT;
  char label[160];
  snprintf(label, sizeof label, "%s, %llu records, algorithm %d", c->name, (unsigned long long)n, (int)in->algo);
  if (gpusort_vk_sorter_create(&a->gdev, in, &sorter) || gpusort_vk_sorter_requirements(sorter, n, &req)) {
    expect(a, false, gpusort_last_error());
    gpusort_vk_sorter_destroy(sorter);
    return;
  }
  const size_t stride = R ? R : kb;
  app_buffer keys = make_buffer(a, R ? 16 : (n * kb + 3) / 4 * 4, DATA), values = make_buffer(a, vb ? n * vb : 16, DATA);
  app_buffer indices = make_buffer(a, ib ? n * ib : 16, DATA);
  app_buffer records = make_buffer(a, R ? (n * R + 3) / 4 * 4 : 16, DATA), output = make_buffer(a, records.size, DATA);
  app_buffer scratch = make_scratch(a, &req);
  unsigned char *input = malloc(n * stride + 1);
  uint64_t seed = 99 + n;
  for (uint64_t i = 0; i < n * stride; i++) input[i] = (unsigned char)ref_random(&seed);
  ref_fill_keys(in->key_type, input + in->key_offset, stride, n, 7 + n);
  memcpy(R ? records.mapped : keys.mapped, input, n * stride);
  for (uint64_t i = 0; i < n && vb; i++) {
    const uint64_t value = i * 0x9E3779B97F4A7C15ull;
    memcpy((unsigned char *)values.mapped + i * vb, &value, vb);
  }
  gpusort_vk_sort_info sort = GPUSORT_VK_SORT_INFO_INIT;
  sort.count = n;
  sort.keys = whole(&keys), sort.values = whole(&values), sort.indices = whole(&indices);
  sort.records = whole(&records), sort.output = whole(&output), sort.scratch = whole(&scratch);
  sort.begin_bit = c->begin, sort.end_bit = c->end;
  begin(a);
  const int rc = gpusort_vk_cmd_sort(sorter, a->cb, &sort);
  submit_and_wait(a);
  uint64_t *order = ref_sort_order(in->key_type, input, stride, in->key_offset, n,
                                    in->flags & GPUSORT_DESCENDING, c->begin, c->end);
  bool same = rc == GPUSORT_OK;
  for (uint64_t i = 0; i < n && same; i++) {
    const uint64_t from = order[i];
    if (R) {
      same = memcmp((unsigned char *)output.mapped + i * R, input + from * R, R) == 0;
    } else if (ib) {
      uint64_t got = 0;
      memcpy(&got, (unsigned char *)indices.mapped + i * ib, ib);
      same = got == from && memcmp((unsigned char *)keys.mapped + i * kb, input + i * kb, kb) == 0;
    } else {
      const uint64_t value = from * 0x9E3779B97F4A7C15ull;
      same = memcmp((unsigned char *)keys.mapped + i * kb, input + from * kb, kb) == 0 &&
             (!vb || memcmp((unsigned char *)values.mapped + i * vb, &value, vb) == 0);
    }
    if (!same) fprintf(stderr, "  first difference at %llu\n", (unsigned long long)i);
  }
  expect(a, same, label);
  free(order);
  free(input);
  free_buffer(a, &keys), free_buffer(a, &values), free_buffer(a, &indices);
  free_buffer(a, &records), free_buffer(a, &output), free_buffer(a, &scratch);
  gpusort_vk_sorter_destroy(sorter);
}

static void every_payload(app *a) {
  const payload_case cases[] = {
      {"u32 keys", GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U32), 0, 0},
      {"f32 keys, descending", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F32, .flags = GPUSORT_DESCENDING}, 0, 0},
      {"u64 keys, bits 0:40 (five passes)", GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U64), 0, 40},
      {"i64 keys, u64 values", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_I64, .value_type = GPUSORT_U64}, 0, 0},
      {"f64 keys, u32 values, descending, bits 8:60",
       {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F64, .value_type = GPUSORT_U32, .flags = GPUSORT_DESCENDING}, 8, 60},
      {"i32 keys, u64 indices", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_I32, .index_type = GPUSORT_U64}, 0, 0},
      {"f32 keys, u32 indices, bits 0:24", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F32, .index_type = GPUSORT_U32}, 0, 24},
      {"13-byte records, u32 key at byte 5", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_U32, .record_bytes = 13, .key_offset = 5}, 0, 0},
      {"24-byte records, f64 key at byte 8, descending",
       {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F64, .record_bytes = 24, .key_offset = 8, .flags = GPUSORT_DESCENDING}, 0, 0},
      /* keys of other forms: sorted by their ordered bits, written back in their own form */
      {"u16 keys", GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U16), 0, 0},
      {"f16 keys, descending", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F16, .flags = GPUSORT_DESCENDING}, 0, 0},
      {"i8 keys, u32 values", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_I8, .value_type = GPUSORT_U32}, 0, 0},
      {"bf16 keys, u64 values, descending",
       {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_BF16, .value_type = GPUSORT_U64, .flags = GPUSORT_DESCENDING}, 0, 0},
      {"u16be keys, u32 indices", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_U16BE, .index_type = GPUSORT_U32}, 0, 0},
      {"i64be keys, descending", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_I64BE, .flags = GPUSORT_DESCENDING}, 0, 0},
      {"f32be keys, bits 0:20", GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_F32BE), 0, 20},
      {"13-byte records, i16be key at byte 5", {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_I16BE, .record_bytes = 13, .key_offset = 5}, 0, 0},
      {"11-byte records, f64be key at byte 3 (unaligned), descending",
       {.struct_size = sizeof(gpusort_vk_sorter_info), .key_type = GPUSORT_F64BE, .record_bytes = 11, .key_offset = 3, .flags = GPUSORT_DESCENDING}, 0, 0},
  };
  const uint64_t sizes[] = {0, 1, 1000, 20011};
  for (int algo = GPUSORT_SORT_AUTO; algo <= GPUSORT_SORT_BITONIC; algo++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      payload_case with_algo = cases[c];
      with_algo.info.algo = (gpusort_sort_algo)algo;
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) sort_payload(a, &with_algo, sizes[s]);
    }
}

/* ---- The scanner ---- */

static void scan_case(app *a, const char *name, const gpusort_scan_options *options, uint32_t flags, uint64_t n) {
  gpusort_vk_scanner_info info = GPUSORT_VK_SCANNER_INFO_INIT(options);
  info.flags = flags;
  gpusort_vk_scanner *scanner = NULL;
  gpusort_vk_requirements req = GPUSORT_VK_REQUIREMENTS_INIT;
  char label[128];
  snprintf(label, sizeof label, "scanner: %s of %llu elements", name, (unsigned long long)n);
  if (gpusort_vk_scanner_create(&a->gdev, &info, &scanner) || gpusort_vk_scanner_requirements(scanner, n, &req)) {
    expect(a, false, gpusort_last_error());
    gpusort_vk_scanner_destroy(scanner);
    return;
  }
  const size_t ib = gpusort_type_size(options->type);
  const size_t ab = options->acc ? gpusort_type_size(options->acc) : ib;
  const bool reduce = flags & GPUSORT_VK_REDUCE;
  app_buffer input = make_buffer(a, n * ib, DATA), output = make_buffer(a, (reduce ? 1 : n) * ab, DATA);
  app_buffer scratch = make_scratch(a, &req);
  uint64_t seed = 5 + n;
  for (uint64_t i = 0; i < n; i++) { /* small integers: every order of summation gives the same sum */
    const int64_t v = (int64_t)(ref_random(&seed) % 2001) - 1000;
    const float f = (float)v;
    const double d = (double)v;
    const uint32_t u = (uint32_t)(v + 1000);
    unsigned char *p = (unsigned char *)input.mapped + i * ib;
    if (options->type == GPUSORT_F32) memcpy(p, &f, 4);
    else if (options->type == GPUSORT_F64) memcpy(p, &d, 8);
    else if (options->type == GPUSORT_I32) memcpy(p, &v, 4);
    else memcpy(p, &u, 4);
  }
  gpusort_vk_scan_info scan = GPUSORT_VK_SCAN_INFO_INIT;
  scan.count = n, scan.input = whole(&input), scan.output = whole(&output), scan.scratch = whole(&scratch);
  begin(a);
  const int rc = gpusort_vk_cmd_scan(scanner, a->cb, &scan);
  submit_and_wait(a);
  /* reference, in double (exact for these values) */
  bool ok = rc == GPUSORT_OK;
  double running = options->op == GPUSORT_SUM ? 0 : options->op == GPUSORT_MIN ? INFINITY : -INFINITY;
  for (uint64_t i = 0; i <= n && ok; i++) {
    const bool last = i == n;
    double x = 0;
    if (!last) {
      const unsigned char *p = (const unsigned char *)input.mapped + i * ib;
      float f;
      int32_t s;
      uint32_t u;
      if (options->type == GPUSORT_F32) memcpy(&f, p, 4), x = f;
      else if (options->type == GPUSORT_F64) memcpy(&x, p, 8);
      else if (options->type == GPUSORT_I32) memcpy(&s, p, 4), x = s;
      else memcpy(&u, p, 4), x = u;
    }
    const double before = running;
    if (!last) running = options->op == GPUSORT_SUM ? running + x : options->op == GPUSORT_MIN ? fmin(running, x) : fmax(running, x);
    if (reduce && !last) continue;
    if (!reduce && last) break;
    const double want = reduce ? running : (options->flags & GPUSORT_EXCLUSIVE) ? before : running;
    const unsigned char *g = (const unsigned char *)output.mapped + (reduce ? 0 : i) * ab;
    const gpusort_type acc = options->acc ? options->acc : options->type;
    double got;
    if (acc == GPUSORT_U64) {
      uint64_t u;
      memcpy(&u, g, 8), got = (double)u;
    } else if (acc == GPUSORT_F64) {
      memcpy(&got, g, 8);
    } else if (acc == GPUSORT_I32) {
      int32_t s;
      memcpy(&s, g, 4), got = s;
    } else if (acc == GPUSORT_F32) {
      float f;
      memcpy(&f, g, 4), got = f;
    } else {
      uint32_t u;
      memcpy(&u, g, 4), got = u;
    }
    if (isinf(want) && n == 0) continue; /* the identity of min and max is the type's extreme */
    ok = got == want;
    if (!ok) fprintf(stderr, "  element %llu: want %g got %g\n", (unsigned long long)i, want, got);
  }
  expect(a, ok, label);
  free_buffer(a, &input), free_buffer(a, &output), free_buffer(a, &scratch);
  gpusort_vk_scanner_destroy(scanner);
}

static void the_scanner(app *a) {
  gpusort_scan_options sum = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  sum.acc = GPUSORT_U64, sum.flags = GPUSORT_EXCLUSIVE;
  gpusort_scan_options min = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_I32);
  min.op = GPUSORT_MIN;
  gpusort_scan_options fsum = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F32);
  fsum.acc = GPUSORT_F64;
  gpusort_scan_options max = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F64);
  max.op = GPUSORT_MAX, max.algo = GPUSORT_SCAN_LOOKBACK;
  const uint64_t sizes[] = {0, 1, 4097, 300001};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    scan_case(a, "exclusive u32 sums in u64", &sum, 0, sizes[s]);
    scan_case(a, "inclusive i32 minima", &min, 0, sizes[s]);
    scan_case(a, "f32 sums in f64 (reduce-then-scan)", &fsum, 0, sizes[s]);
    scan_case(a, "f64 maxima (look-back)", &max, 0, sizes[s]);
    gpusort_scan_options total = sum;
    total.flags = 0; /* reductions are neither inclusive nor exclusive */
    scan_case(a, "reduction: u32 sum in u64", &total, GPUSORT_VK_REDUCE, sizes[s]);
    scan_case(a, "reduction: f64 max", &max, GPUSORT_VK_REDUCE, sizes[s]);
  }
}

/* ---- Error paths: each returns its documented code with a message, and records nothing ---- */

static void expect_error(app *a, int rc, int want, const char *what) {
  char label[256];
  snprintf(label, sizeof label, "%s: want %s, got %s (%s)", what, gpusort_status_name(want), gpusort_status_name(rc),
           gpusort_last_error());
  expect(a, rc == want && gpusort_last_error()[0] != '\0', label);
}

static void error_paths(app *a) {
  gpusort_vk_sorter *sorter = NULL;
  gpusort_vk_sorter_info info = GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U32);
  expect_error(a, gpusort_vk_sorter_create(NULL, &info, &sorter), GPUSORT_ERROR_USAGE, "no device");
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, NULL, &sorter), GPUSORT_ERROR_USAGE, "no info");
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, &info, NULL), GPUSORT_ERROR_USAGE, "no sorter pointer");
  gpusort_vk_sorter_info zero = {0};
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, &zero, &sorter), GPUSORT_ERROR_USAGE, "uninitialized info");
  gpusort_vk_sorter_info two = info;
  two.value_type = GPUSORT_U32, two.index_type = GPUSORT_U32;
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, &two, &sorter), GPUSORT_ERROR_USAGE, "two payloads");
  gpusort_vk_sorter_info bad_flags = info;
  bad_flags.flags = GPUSORT_OVERWRITE;
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, &bad_flags, &sorter), GPUSORT_ERROR_USAGE, "a file flag");
  expect(a, sorter == NULL, "no sorter after failures");

  info.value_type = GPUSORT_U32;
  gpusort_vk_requirements req = GPUSORT_VK_REQUIREMENTS_INIT;
  if (gpusort_vk_sorter_create(&a->gdev, &info, &sorter) || gpusort_vk_sorter_requirements(sorter, 1000, &req)) {
    expect(a, false, gpusort_last_error());
    return;
  }
  app_buffer keys = make_buffer(a, 4000, DATA), values = make_buffer(a, 4000, DATA), scratch = make_scratch(a, &req);
  app_buffer no_address = make_buffer(a, 4000, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  gpusort_vk_sort_info good = GPUSORT_VK_SORT_INFO_INIT;
  good.count = 1000, good.keys = whole(&keys), good.values = whole(&values), good.scratch = whole(&scratch);
  begin(a);
  gpusort_vk_sort_info s = good;
  s.count = 1001;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "more keys than the buffers hold");
  s = good, s.max_count = 500;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_TOO_LARGE, "a count above max_count");
  s = good, s.max_count = 5000;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "a capacity beyond the scratch");
  s = good, s.keys = whole(&no_address);
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "keys without device addresses");
  s = good, s.keys.usage = DATA;
  s.keys.buffer = VK_NULL_HANDLE;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "no keys buffer");
  s = good, s.values.offset = 4, s.values.size -= 4;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "a misaligned offset");
  s = good, s.scratch.usage = DATA;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "scratch without indirect usage");
  s = good, s.scratch.size = VK_WHOLE_SIZE;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "a scratch of VK_WHOLE_SIZE");
  s = good, s.count_buffer = whole(&values);
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "an indirect sort without max_count");
  s = good, s.begin_bit = 0, s.end_bit = 33;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "bits beyond the key");
  s = good, s.struct_size = 0;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "an uninitialized sort info");
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, NULL), GPUSORT_ERROR_USAGE, "no sort info");
  expect_error(a, gpusort_vk_sorter_requirements(sorter, (uint64_t)1 << 40, &req), GPUSORT_ERROR_TOO_LARGE,
               "requirements beyond the sort's limit");
  s = good, s.reserved = 7;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "a reserved field set");
  s = good, s.keys.reserved = 7;
  expect_error(a, gpusort_vk_cmd_sort(sorter, a->cb, &s), GPUSORT_ERROR_USAGE, "a buffer's reserved field set");
  submit_and_wait(a); /* nothing was recorded: an empty submission */
  gpusort_vk_sorter_destroy(sorter);

  gpusort_vk_sorter_info records = GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U64);
  records.record_bytes = 10, records.key_offset = 4;
  expect_error(a, gpusort_vk_sorter_create(&a->gdev, &records, &sorter), GPUSORT_ERROR_USAGE,
               "a key that does not fit its record");
  gpusort_vk_scanner *scanner = NULL;
  gpusort_scan_options narrow = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U64);
  narrow.acc = GPUSORT_U32;
  gpusort_vk_scanner_info scan_info = GPUSORT_VK_SCANNER_INFO_INIT(&narrow);
  expect_error(a, gpusort_vk_scanner_create(&a->gdev, &scan_info, &scanner), GPUSORT_ERROR_USAGE,
               "a narrower accumulator");
  scan_info.scan = NULL;
  expect_error(a, gpusort_vk_scanner_create(&a->gdev, &scan_info, &scanner), GPUSORT_ERROR_USAGE, "no scan options");
  gpusort_scan_options wide = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_U32);
  wide.acc = GPUSORT_U64;
  scan_info.scan = &wide;
  if (gpusort_vk_scanner_create(&a->gdev, &scan_info, &scanner) == GPUSORT_OK &&
      gpusort_vk_scanner_requirements(scanner, 1000, &req) == GPUSORT_OK) {
    app_buffer data = make_buffer(a, 8000, DATA), scan_scratch = make_scratch(a, &req);
    gpusort_vk_scan_info in_place = GPUSORT_VK_SCAN_INFO_INIT;
    in_place.count = 1000, in_place.input = whole(&data), in_place.output = whole(&data);
    in_place.scratch = whole(&scan_scratch);
    begin(a);
    expect_error(a, gpusort_vk_cmd_scan(scanner, a->cb, &in_place), GPUSORT_ERROR_USAGE, "a scan in place");
    submit_and_wait(a);
    free_buffer(a, &data), free_buffer(a, &scan_scratch);
  } else {
    expect(a, false, gpusort_last_error());
  }
  gpusort_vk_scanner_destroy(scanner);
  free_buffer(a, &keys), free_buffer(a, &values), free_buffer(a, &scratch), free_buffer(a, &no_address);
}

/* ---- Timing: the application's own timestamps around a recorded sort ---- */

static int compare_double(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static void bench(app *a, uint32_t n, unsigned reps) {
  gpusort_vk_sorter_info info = GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U32);
  gpusort_vk_sorter *sorter = NULL;
  gpusort_vk_requirements req = GPUSORT_VK_REQUIREMENTS_INIT;
  if (gpusort_vk_sorter_create(&a->gdev, &info, &sorter) || gpusort_vk_sorter_requirements(sorter, n, &req)) {
    expect(a, false, gpusort_last_error());
    return;
  }
  app_buffer keys = make_buffer(a, (VkDeviceSize)n * 4, DATA), values = make_buffer(a, (VkDeviceSize)n * 4, DATA);
  app_buffer count = make_buffer(a, 16, DATA), result = make_buffer(a, 16, DATA), scratch = make_scratch(a, &req);
  VkDescriptorSet fill_set = bind3(a, &keys, &values, &count), check_set = bind3(a, &keys, &keys, &result);
  VkQueryPool pool;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2};
  CHECK_VK(vkCreateQueryPool(a->device, &qi, NULL, &pool));
  gpusort_vk_sort_info sort = GPUSORT_VK_SORT_INFO_INIT;
  sort.count = n, sort.keys = whole(&keys), sort.scratch = whole(&scratch);
  double *t = malloc((reps + 2) * sizeof *t);
  for (unsigned r = 0; r < reps + 2; r++) {
    const uint32_t push[3] = {n, 77, 0xFFFFFFFFu};
    begin(a);
    vkCmdResetQueryPool(a->cb, pool, 0, 2);
    dispatch_app(a, a->fill, fill_set, push, n);
    compute_to_compute(a);
    vkCmdWriteTimestamp(a->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool, 0);
    if (gpusort_vk_cmd_sort(sorter, a->cb, &sort)) expect(a, false, gpusort_last_error());
    vkCmdWriteTimestamp(a->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 1);
    submit_and_wait(a);
    uint64_t ticks[2];
    CHECK_VK(vkGetQueryPoolResults(a->device, pool, 0, 2, sizeof ticks, ticks, 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    t[r] = (double)(ticks[1] - ticks[0]) * a->timestamp_period * 1e-6;
  }
  qsort(t + 2, reps, sizeof *t, compare_double); /* two warm-up runs left out */
  printf("Vulkan tier: sort of %u u32 keys recorded in the application's command buffer: median %.3f ms of %u runs\n",
         n, t[2 + reps / 2], reps);
  /* the last run's output, checked by the application's consumer on the GPU (reading device
   * memory from the host would take minutes) */
  const uint32_t check_push[3] = {n, 0, 0};
  begin(a);
  dispatch_app(a, a->consume, check_set, check_push, n);
  submit_and_wait(a);
  expect(a, ((const uint32_t *)result.mapped)[0] == 0, "the timed sort's output is sorted");
  free(t);
  vkDestroyQueryPool(a->device, pool, NULL);
  vkFreeDescriptorSets(a->device, a->descriptor_pool, 1, &fill_set);
  vkFreeDescriptorSets(a->device, a->descriptor_pool, 1, &check_set);
  free_buffer(a, &keys), free_buffer(a, &values), free_buffer(a, &count), free_buffer(a, &result);
  free_buffer(a, &scratch);
  gpusort_vk_sorter_destroy(sorter);
}

static void destroy(app *a) {
  vkDestroyPipeline(a->device, a->fill, NULL);
  vkDestroyPipeline(a->device, a->consume, NULL);
  vkDestroyPipelineLayout(a->device, a->pipeline_layout, NULL);
  vkDestroyDescriptorSetLayout(a->device, a->set_layout, NULL);
  vkDestroyDescriptorPool(a->device, a->descriptor_pool, NULL);
  vkDestroyFence(a->device, a->fence, NULL);
  vkDestroyCommandPool(a->device, a->pool, NULL);
  vkDestroyDevice(a->device, NULL);
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
      (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(a->instance, "vkDestroyDebugUtilsMessengerEXT");
  if (a->messenger) destroy_messenger(a->instance, a->messenger, NULL);
  vkDestroyInstance(a->instance, NULL);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_vulkan_tier SPIRV_DIR [bench N [REPS]]\n");
    return 2;
  }
  app a = {0};
  const bool timing = argc > 3 && strcmp(argv[2], "bench") == 0;
  const char *layer = getenv("VULKAN_TIER_LAYER");
  create_instance(&a, !timing && !(layer && strcmp(layer, "0") == 0));
  create_device(&a);
  create_app_kernels(&a, argv[1]);
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(a.physical, &p);
  printf("device: %s\n", p.deviceName);
  if (timing) {
    bench(&a, (uint32_t)strtoul(argv[3], NULL, 0), argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 15);
  } else {
    const uint32_t sizes[] = {0, 1, 33, 1000, 70001};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      sort_between_own_dispatches(&a, false, sizes[i], sizes[i]);
      sort_between_own_dispatches(&a, true, sizes[i], sizes[i] + 5000);
    }
    every_payload(&a);
    the_scanner(&a);
    error_paths(&a);
  }
  CHECK_VK(vkDeviceWaitIdle(a.device));
  destroy(&a);
  a.checks++;
  if (a.messages) {
    a.failures++;
    fprintf(stderr, "FAIL: %u validation messages\n", a.messages);
  }
  printf("validation messages: %u\n%d passed, %d failed\n", a.messages, a.checks - a.failures, a.failures);
  return a.failures ? 1 : 0;
}
