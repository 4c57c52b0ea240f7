/* Buffers and their memory: device-local working buffers, host-visible staging for uploads
 * (written by the CPU, read once by the GPU) and readback (written by the GPU, read by the CPU,
 * so host-cached where the device offers it). */
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
  VkDeviceSize size;
  void *mapped;  /* host pointer for UPLOAD and READBACK buffers */
  bool coherent; /* false: call gs_buffer_invalidate before reading */
} gs_buffer;

/* Creates a buffer of `size` bytes (at least 4) usable as storage, copy source and copy
 * destination. `what` names it in error messages ("sort keys"). */
int gs_buffer_create(gs_device *dev, gs_buffer *buf, VkDeviceSize size, gs_memory_kind kind, const char *what);

void gs_buffer_destroy(gs_device *dev, gs_buffer *buf);

/* Makes GPU writes to a READBACK buffer visible to the host (no-op when coherent). */
int gs_buffer_invalidate(gs_device *dev, gs_buffer *buf);

#endif
