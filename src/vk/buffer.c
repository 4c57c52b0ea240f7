#include "vk/buffer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/format.h"
#include "util/knobs.h"

/* The allowed memory type with all `required` flags that has most `preferred` and fewest
 * `avoided` flags; -1 if none. */
static int pick_memory_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t allowed, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags avoided) {
  int best = -1, best_score = -1000;
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (f & required) != required) continue;
    int score = 2 * __builtin_popcount(f & preferred) - __builtin_popcount(f & avoided);
    if (score > best_score) best = (int)i, best_score = score;
  }
  return best;
}

static const VkBufferUsageFlags DATA_USAGE = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                            VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                                            VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;

static int allocation_failed(gs_device *dev, VkResult r, const char *pretty, const char *what) {
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of %s memory allocating %s for %s",
                   r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "GPU" : "host", pretty, what);
  return gs_vk_fail(dev, r, what);
}

/* vkAllocateMemory, but for GPUSORT_TEST_FAIL_ALLOC_BYTES=N: an allocation larger than N bytes
 * fails as a device out of memory would, so that tests reach the paths that recover from it. */
static VkResult allocate_memory(gs_device *dev, const VkMemoryAllocateInfo *ai, VkDeviceMemory *memory) {
  const uint64_t limit = gs_knobs_get()->test_fail_alloc_bytes;
  if (limit && ai->allocationSize > limit) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  return vkAllocateMemory(dev->device, ai, NULL, memory);
}

/* A device buffer bound to several allocations of at most max_allocation bytes each. */
static int create_sparse(gs_device *dev, gs_buffer *buf, VkDeviceSize size, const char *what, const char *pretty) {
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .flags = VK_BUFFER_CREATE_SPARSE_BINDING_BIT,
                           .size = size,
                           .usage = DATA_USAGE,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(dev->device, &bi, NULL, &buf->buffer);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, what);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev->device, buf->buffer, &req);
  const int type = pick_memory_type(&dev->memory, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  const VkDeviceSize piece = dev->info.max_allocation / req.alignment * req.alignment;
  if (type < 0 || piece == 0) return gs_fail(GPUSORT_ERROR_RUNTIME, "no suitable memory type for %s", what);
  const uint32_t count = (uint32_t)((req.size + piece - 1) / piece);
  buf->pieces = calloc(count, sizeof *buf->pieces);
  VkSparseMemoryBind *binds = calloc(count, sizeof *binds);
  if (!buf->pieces || !binds) {
    free(binds);
    return gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  for (uint32_t i = 0; i < count; i++) {
    const VkDeviceSize offset = (VkDeviceSize)i * piece, bytes = req.size - offset < piece ? req.size - offset : piece;
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = &flags,
                               .allocationSize = bytes,
                               .memoryTypeIndex = (uint32_t)type};
    r = allocate_memory(dev, &ai, &buf->pieces[i]);
    if (r != VK_SUCCESS) {
      free(binds);
      return allocation_failed(dev, r, pretty, what);
    }
    buf->piece_count = i + 1;
    binds[i] = (VkSparseMemoryBind){.resourceOffset = offset, .size = bytes, .memory = buf->pieces[i]};
  }
  VkSparseBufferMemoryBindInfo bind = {.buffer = buf->buffer, .bindCount = count, .pBinds = binds};
  VkBindSparseInfo info = {.sType = VK_STRUCTURE_TYPE_BIND_SPARSE_INFO, .bufferBindCount = 1, .pBufferBinds = &bind};
  VkFence fence;
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(dev->device, &fi, NULL, &fence);
  if (r == VK_SUCCESS) {
    pthread_mutex_lock(&dev->queue_lock);
    r = vkQueueBindSparse(dev->queue, 1, &info, fence);
    pthread_mutex_unlock(&dev->queue_lock);
    if (r == VK_SUCCESS) r = vkWaitForFences(dev->device, 1, &fence, VK_TRUE, dev->timeout_ns);
    if (r == VK_TIMEOUT) gs_device_mark_wedged(dev);
    if (r != VK_TIMEOUT) vkDestroyFence(dev->device, fence, NULL);
  }
  free(binds);
  if (r == VK_TIMEOUT)
    return gs_fail(GPUSORT_ERROR_GPU_STALL, "GPU stall: binding memory to %s did not finish within %g s", what,
                   (double)dev->timeout_ns * 1e-9);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, what);
  buf->size = size;
  buf->coherent = true;
  buf->address = gs_buffer_address(dev, buf->buffer, 0);
  return GPUSORT_OK;
}

int gs_buffer_create(gs_device *dev, gs_buffer *buf, VkDeviceSize size, gs_memory_kind kind, const char *what) {
  memset(buf, 0, sizeof *buf);
  if (size < 16) size = 16;
  size = (size + 15) & ~(VkDeviceSize)15; /* kernels move whole 16-byte vectors */
  char pretty[32];
  gs_format_bytes(pretty, sizeof pretty, size);
  if (dev->info.max_allocation && size > dev->info.max_allocation) {
    if (kind == GS_MEM_DEVICE && dev->sparse_binding && size <= dev->info.max_data_buffer) {
      int rc = create_sparse(dev, buf, size, what, pretty);
      if (rc) gs_buffer_destroy(dev, buf);
      if (rc && rc != GPUSORT_ERROR_OUT_OF_MEMORY && rc != GPUSORT_ERROR_GPU_STALL) {
        /* Whatever the driver objected to, such buffers are not to be had: from now on arrays
         * stay within one allocation, and callers that can work in smaller pieces do. */
        char message[1024];
        snprintf(message, sizeof message, "%s", gs_last_error());
        dev->sparse_binding = false;
        if (dev->info.max_data_buffer > dev->info.max_allocation) dev->info.max_data_buffer = dev->info.max_allocation;
        rc = gs_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "%s (binding %s to several allocations)", message, pretty);
      }
      return rc;
    }
    return gs_fail(GPUSORT_ERROR_TOO_LARGE, "%s needs %s, more than the device allows in one allocation", what,
                   pretty);
  }

  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = size,
                           .usage = DATA_USAGE,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(dev->device, &bi, NULL, &buf->buffer);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, what);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev->device, buf->buffer, &req);

  const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                              HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  int type = -1;
  switch (kind) {
  case GS_MEM_DEVICE:
    type = pick_memory_type(&dev->memory, req.memoryTypeBits, DL, 0, HV);
    if (type < 0) type = pick_memory_type(&dev->memory, req.memoryTypeBits, 0, 0, HV);
    break;
  case GS_MEM_UPLOAD: type = pick_memory_type(&dev->memory, req.memoryTypeBits, HV | HC, 0, DL); break;
  case GS_MEM_READBACK: type = pick_memory_type(&dev->memory, req.memoryTypeBits, HV, CA | HC, DL); break;
  }
  if (type < 0) {
    vkDestroyBuffer(dev->device, buf->buffer, NULL);
    buf->buffer = VK_NULL_HANDLE;
    return gs_fail(GPUSORT_ERROR_RUNTIME, "no suitable memory type for %s", what);
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .pNext = &flags,
                             .allocationSize = req.size,
                             .memoryTypeIndex = (uint32_t)type};
  r = allocate_memory(dev, &ai, &buf->memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(dev->device, buf->buffer, NULL);
    buf->buffer = VK_NULL_HANDLE;
    return allocation_failed(dev, r, pretty, what);
  }
  buf->size = size;
  r = vkBindBufferMemory(dev->device, buf->buffer, buf->memory, 0);
  if (r == VK_SUCCESS && kind != GS_MEM_DEVICE)
    r = vkMapMemory(dev->device, buf->memory, 0, VK_WHOLE_SIZE, 0, &buf->mapped);
  if (r != VK_SUCCESS) {
    gs_buffer_destroy(dev, buf);
    return gs_vk_fail(dev, r, what);
  }
  buf->coherent = (dev->memory.memoryTypes[type].propertyFlags & HC) != 0;
  buf->address = gs_buffer_address(dev, buf->buffer, 0);
  return GPUSORT_OK;
}

int gs_buffer_import_host(gs_device *dev, gs_buffer *buf, void *host, VkDeviceSize size, const char *what) {
  memset(buf, 0, sizeof *buf);
  const VkDeviceSize align = dev->info.host_import_alignment;
  if (!dev->host_import || !align || (uintptr_t)host % align || size == 0 || size % align)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "%s cannot be imported by %s", what, dev->info.name);
  const VkExternalMemoryHandleTypeFlagBits handle = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult r = dev->host_pointer_properties(dev->device, handle, host, &hp);
  if (r != VK_SUCCESS) return gs_vk_fail(dev, r, what);
  VkExternalMemoryBufferCreateInfo external = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                               .handleTypes = handle};
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .pNext = &external,
                           .size = size,
                           .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  if ((r = vkCreateBuffer(dev->device, &bi, NULL, &buf->buffer)) != VK_SUCCESS) return gs_vk_fail(dev, r, what);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev->device, buf->buffer, &req);
  /* coherent: the host reads the device's writes through its own pointer, never a mapping */
  const VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const int type = pick_memory_type(&dev->memory, req.memoryTypeBits & hp.memoryTypeBits, HV | HC,
                                    VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
  if (type < 0 || req.size > size) {
    gs_buffer_destroy(dev, buf);
    return gs_fail(GPUSORT_ERROR_RUNTIME, "no memory type of %s imports %s", dev->info.name, what);
  }
  VkImportMemoryHostPointerInfoEXT import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                             .handleType = handle,
                                             .pHostPointer = host};
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .pNext = &import,
                             .allocationSize = size,
                             .memoryTypeIndex = (uint32_t)type};
  r = allocate_memory(dev, &ai, &buf->memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(dev->device, buf->buffer, buf->memory, 0);
  if (r != VK_SUCCESS) {
    gs_buffer_destroy(dev, buf);
    return gs_vk_fail(dev, r, what);
  }
  buf->size = size;
  buf->coherent = true;
  buf->imported = host;
  return GPUSORT_OK;
}

VkDeviceAddress gs_buffer_address(const gs_device *dev, VkBuffer buffer, VkDeviceSize offset) {
  VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = buffer};
  return vkGetBufferDeviceAddress(dev->device, &ai) + offset;
}

gs_range gs_buffer_range(const gs_buffer *buf) {
  return (gs_range){.buffer = buf->buffer, .offset = 0, .size = buf->size, .address = buf->address};
}

gs_range gs_subrange(gs_range r, VkDeviceSize offset, VkDeviceSize size) {
  return (gs_range){.buffer = r.buffer, .offset = r.offset + offset, .size = size, .address = r.address + offset};
}

void gs_buffer_destroy(gs_device *dev, gs_buffer *buf) {
  if (!dev->device || dev->wedged) return; /* the GPU may still access it: leave it to exit */
  if (buf->buffer) vkDestroyBuffer(dev->device, buf->buffer, NULL);
  if (buf->memory) vkFreeMemory(dev->device, buf->memory, NULL); /* unmaps (or un-imports) implicitly */
  for (uint32_t i = 0; i < buf->piece_count; i++) vkFreeMemory(dev->device, buf->pieces[i], NULL);
  free(buf->pieces);
  memset(buf, 0, sizeof *buf);
}

int gs_buffer_invalidate(gs_device *dev, gs_buffer *buf) {
  if (buf->coherent) return GPUSORT_OK;
  VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = buf->memory,
                               .offset = 0,
                               .size = VK_WHOLE_SIZE};
  VkResult r = vkInvalidateMappedMemoryRanges(dev->device, 1, &range);
  return r == VK_SUCCESS ? GPUSORT_OK : gs_vk_fail(dev, r, "reading back from the GPU");
}
