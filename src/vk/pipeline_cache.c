#include "vk/pipeline_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "util/knobs.h"

enum { HEADER_BYTES = 32, MAX_CACHE_BYTES = 256 << 20 };
static const char MAGIC[16] = "gpusort-pcache1";

/* The file's path for this device and driver; false if there is no home for it. */
static bool cache_path(const gs_device *dev, char *dir, size_t dir_size, char *path, size_t size) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(dir, dir_size, "%s/gpusort", xdg);
  else if (home && *home)
    snprintf(dir, dir_size, "%s/.cache/gpusort", home);
  else
    return false;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(dev->physical, &props);
  char uuid[2 * VK_UUID_SIZE + 1];
  for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", props.pipelineCacheUUID[i]);
  snprintf(path, size, "%s/pipelines-%04x-%04x-%s.bin", dir, props.vendorID, props.deviceID, uuid);
  return true;
}

/* The driver's data from the file, if the file is whole and was made for this device. */
static void *read_valid(const gs_device *dev, const char *path, size_t *bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char header[HEADER_BYTES];
  void *data = NULL;
  uint64_t length = 0, hash = 0;
  if (fread(header, 1, HEADER_BYTES, f) == HEADER_BYTES && memcmp(header, MAGIC, 16) == 0) {
    memcpy(&length, header + 16, 8);
    memcpy(&hash, header + 24, 8);
    if (length >= 32 && length <= MAX_CACHE_BYTES && (data = malloc(length)) &&
        (fread(data, 1, length, f) != length || XXH3_64bits(data, length) != hash)) {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  if (!data) return NULL;
  /* the driver's own header: this vendor, device and pipelineCacheUUID */
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(dev->physical, &props);
  uint32_t vendor, device;
  memcpy(&vendor, (unsigned char *)data + 8, 4);
  memcpy(&device, (unsigned char *)data + 12, 4);
  if (vendor != props.vendorID || device != props.deviceID ||
      memcmp((unsigned char *)data + 16, props.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
    free(data);
    return NULL;
  }
  *bytes = (size_t)length;
  return data;
}

void gs_pipeline_cache_open(gs_device *dev) {
  if (!dev->owned || gs_knobs_get()->no_pipeline_cache) return;
  char dir[PATH_MAX], path[PATH_MAX + 128];
  size_t bytes = 0;
  void *data = cache_path(dev, dir, sizeof dir, path, sizeof path) ? read_valid(dev, path, &bytes) : NULL;
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = bytes,
                                  .pInitialData = data};
  if (vkCreatePipelineCache(dev->device, &ci, NULL, &dev->pipeline_cache) != VK_SUCCESS)
    dev->pipeline_cache = VK_NULL_HANDLE;
  dev->pipeline_cache_loaded = bytes;
  free(data);
}

/* Writes header and data to a temporary file beside `path` and renames it over `path`. */
static void write_atomically(const char *dir, const char *path, const void *data, size_t bytes) {
  mkdir(dir, 0755); /* its parent (~/.cache) is made too when missing */
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", dir);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = '\0';
    mkdir(parent, 0755);
    mkdir(dir, 0755);
  }
  char temp[PATH_MAX + 160];
  snprintf(temp, sizeof temp, "%s.%d.tmp", path, (int)getpid());
  const int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  unsigned char header[HEADER_BYTES];
  const uint64_t length = bytes, hash = XXH3_64bits(data, bytes);
  memcpy(header, MAGIC, 16);
  memcpy(header + 16, &length, 8);
  memcpy(header + 24, &hash, 8);
  const bool ok = write(fd, header, HEADER_BYTES) == HEADER_BYTES && write(fd, data, bytes) == (ssize_t)bytes;
  if (close(fd) == 0 && ok && rename(temp, path) == 0) return;
  unlink(temp);
}

void gs_pipeline_cache_close(gs_device *dev) {
  if (!dev->owned || !dev->pipeline_cache) return;
  size_t bytes = 0;
  if (!dev->wedged && vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &bytes, NULL) == VK_SUCCESS &&
      bytes > dev->pipeline_cache_loaded && bytes <= MAX_CACHE_BYTES) {
    void *data = malloc(bytes);
    char dir[PATH_MAX], path[PATH_MAX + 128];
    if (data && vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &bytes, data) == VK_SUCCESS &&
        cache_path(dev, dir, sizeof dir, path, sizeof path))
      write_atomically(dir, path, data, bytes);
    free(data);
  }
  if (!dev->wedged) vkDestroyPipelineCache(dev->device, dev->pipeline_cache, NULL);
  dev->pipeline_cache = VK_NULL_HANDLE;
}
