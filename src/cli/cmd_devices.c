/* gpusort devices: what the Vulkan loader offers, and which device gpusort would choose. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "util/error.h"
#include "vk/device.h"

int gs_cmd_devices(int argc, char **argv) {
  static const struct option longopts[] = {GS_COMMON_LONG_OPTIONS, {NULL, 0, NULL, 0}};
  gs_common_options common;
  bool done;
  gs_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = gs_common_option(&common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if ((rc = gs_other_option(opt, argv, &done)) || done) return rc;
  }
  if (optind != argc) return gs_fail(GS_ERR_USAGE, "devices takes no arguments (see 'gpusort --help')");

  gs_device_info *infos = NULL;
  uint32_t count = 0;
  if ((rc = gs_device_list(&infos, &count))) return rc;
  const int chosen = gs_device_default_index(infos, count);
  printf("%-7s %-10s %-8s %-11s %-11s %s\n", "index", "type", "subgroup", "memory", "max buffer", "name (driver)");
  for (uint32_t i = 0; i < count; i++) {
    const gs_device_info *d = &infos[i];
    char mem[32], range[32];
    gs_format_bytes(mem, sizeof mem, (double)d->device_local_bytes);
    gs_format_bytes(range, sizeof range, (double)d->max_storage_range);
    printf("%c%-6u %-10s %-8u %-11s %-11s %s (%s)\n", (int)i == chosen ? '*' : ' ', d->index,
           gs_device_type_name(d->type), d->subgroup_size, mem, range, d->name, d->driver);
    if (d->unusable[0]) printf("        not usable: %s\n", d->unusable);
  }
  if (count == 0) printf("(no Vulkan devices)\n");
  free(infos);
  return GS_OK;
}
