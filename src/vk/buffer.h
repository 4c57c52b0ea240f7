/* Buffers and their memory: device-local working buffers, host-visible staging for uploads
 * (written by the CPU, read once by the GPU) and readback (written by the GPU, read by the CPU,
 * so host-cached where the device offers it). Every buffer has a device address: kernels
 * reach memory through addresses in their push constants (shaders/kernel_interface.h). */
#ifndef GS_VK_BUFFER_H
#define GS_VK_BUFFER_H

#include "vk/device.h"

typedef enum {
  GS_MEM_DEVICE,   /* device-local; not mapped */
  GS_MEM_UPLOAD,   /* host-visible and coherent, mapped */
  GS_MEM_READBACK, /* host-visible, cached where possible, mapped */
} gs_memory_kind;

typedef struct {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceMemory *pieces; /* a sparse buffer's allocations (memory is then VK_NULL_HANDLE) */
  uint32_t piece_count;
  VkDeviceSize size;
  VkDeviceAddress address;
  void *mapped;  /* host pointer for UPLOAD and READBACK buffers */
  void *imported; /* the host memory of an imported buffer */
  bool coherent; /* false: call gs_buffer_invalidate before reading */
} gs_buffer;

/* A range of a buffer, gpusort's own or a caller's: what kernels and copies work on. */
typedef struct {
  VkBuffer buffer;
  VkDeviceSize offset, size;
  VkDeviceAddress address; /* of the range's first byte */
} gs_range;

/* Creates a buffer of `size` bytes (at least 16, rounded up to 16) usable as storage, copy
 * source and destination, by device address. `what` names it in error messages ("sort keys").
 * A device buffer larger than one allocation may hold is bound to several (sparse binding,
 * where the device has it): its device addresses are contiguous all the same. */
int gs_buffer_create(gs_device *dev, gs_buffer *buf, VkDeviceSize size, gs_memory_kind kind, const char *what);

/* Host memory the device reads and writes in place, as a buffer (copy source and destination
 * only): `host` and `size` must be multiples of the device's import alignment. Fails (and the
 * caller takes the staging path) where the device cannot import it. */
int gs_buffer_import_host(gs_device *dev, gs_buffer *buf, void *host, VkDeviceSize size, const char *what);

void gs_buffer_destroy(gs_device *dev, gs_buffer *buf);

/* Makes GPU writes to a READBACK buffer visible to the host (no-op when coherent). */
int gs_buffer_invalidate(gs_device *dev, gs_buffer *buf);

/* The whole buffer, or `size` bytes at `offset` of it (of a range). */
gs_range gs_buffer_range(const gs_buffer *buf);
gs_range gs_subrange(gs_range r, VkDeviceSize offset, VkDeviceSize size);

/* The device address of a caller's buffer plus offset. */
VkDeviceAddress gs_buffer_address(const gs_device *dev, VkBuffer buffer, VkDeviceSize offset);

#endif
