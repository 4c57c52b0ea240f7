#include "prim/device_config.h"

#include <stdio.h>
#include <string.h>

#include "util/knobs.h"

enum { ANY = 0 };

/* Presets, first match wins. Tiles of 16 subgroups; sort tiles of 9 keys per invocation (5 for
 * 64-bit keys or values). On an H100, a 512 x 9 sort tile was as fast as any shape measured
 * (5 to 30 keys, 256 to 1024 invocations): its 64 registers let two workgroups share an SM,
 * where 15 keys took 99 registers and one; the scan ran at 69% of the copy bandwidth with
 * 512 x 8 rows, 65% with 256 x 4 and 55% with 256 x 16. The AMD and Intel rows carry the same
 * shape at 32 lanes, unmeasured; lavapipe runs subgroups of 8 only. */
typedef struct {
  const char *name;
  uint32_t vendor_id; /* ANY, or PCI vendor */
  uint32_t driver_id; /* ANY, or the driver (VkDriverId) */
  uint32_t subgroup_size, sort_workgroup, sort_keys, sort_keys_wide, scan_workgroup, scan_rows, spin;
  uint64_t submit_keys;
} preset;

/* submit_keys: lavapipe runs a sort pass at about 15 M keys/s on two cores (2^22 keys: a
 * quarter of a second); a discrete GPU of these vendors at billions, so a pass of 2^32 keys
 * takes milliseconds and needs no bound; a device unknown to the table might be a slow
 * integrated one. */
static const preset presets[] = {
    {"nvidia", 0x10DE, ANY, 32, 512, 9, 5, 512, 8, 256, 0},
    {"amd", 0x1002, ANY, 32, 512, 9, 5, 512, 8, 256, 0},
    {"intel", 0x8086, ANY, 32, 512, 9, 5, 512, 8, 256, 1u << 26},
    {"lavapipe", ANY, VK_DRIVER_ID_MESA_LLVMPIPE, 8, 128, 9, 5, 128, 8, 256, 1u << 22},
    {"generic", ANY, ANY, 32, 0, 9, 5, 0, 8, 256, 1u << 26}, /* 0: 16 subgroups of the size the device runs */
};

static uint32_t clamp_subgroup(const gs_device_info *info, uint32_t want) {
  if (want < info->min_subgroup_size) return info->min_subgroup_size;
  if (want > info->max_subgroup_size) return info->max_subgroup_size;
  return want;
}

/* 16 subgroups, 64 to 512 invocations, within the device's limit. (At least 64: llvmpipe in
 * Mesa 22.3 computed wrong results for workgroups of 2 to 6 subgroups of 8.) */
static uint32_t workgroup_for(const gs_device_info *info, uint32_t subgroup, uint32_t want) {
  uint32_t wg = want ? want : subgroup * 16;
  if (wg > 512) wg = 512;
  if (wg < 64) wg = 64;
  while (wg > info->max_workgroup_size && wg > subgroup) wg /= 2;
  return wg;
}

void gs_device_config_choose(const gs_device_info *info, gs_device_config *c) {
  const preset *p = &presets[sizeof presets / sizeof presets[0] - 1];
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    if ((presets[i].vendor_id == ANY || presets[i].vendor_id == info->vendor_id) &&
        (presets[i].driver_id == ANY || presets[i].driver_id == (uint32_t)info->driver_id)) {
      p = &presets[i];
      break;
    }
  }
  const gs_knobs *k = gs_knobs_get();
  memset(c, 0, sizeof *c);
  c->subgroup_size = clamp_subgroup(info, k->subgroup_size ? k->subgroup_size : p->subgroup_size);
  c->sort_workgroup_size = k->sort_workgroup ? k->sort_workgroup : workgroup_for(info, c->subgroup_size, p->sort_workgroup);
  c->sort_keys_per_thread = k->sort_keys_per_thread ? k->sort_keys_per_thread : p->sort_keys;
  c->sort_keys_per_thread_wide = k->sort_keys_per_thread ? k->sort_keys_per_thread : p->sort_keys_wide;
  c->scan_workgroup_size = k->scan_workgroup ? k->scan_workgroup : workgroup_for(info, c->subgroup_size, p->scan_workgroup);
  c->scan_rows = k->scan_rows ? k->scan_rows : p->scan_rows;
  c->lookback_spin = k->lookback_spin ? k->lookback_spin : p->spin;
  c->submit_keys = k->submit_keys ? k->submit_keys : p->submit_keys;
  const bool tuned = k->subgroup_size || k->sort_workgroup || k->sort_keys_per_thread || k->scan_workgroup ||
                     k->scan_rows || k->lookback_spin || k->submit_keys;
  snprintf(c->preset, sizeof c->preset, "%s%s", p->name, tuned ? " (tuned by GPUSORT_*)" : "");
}
