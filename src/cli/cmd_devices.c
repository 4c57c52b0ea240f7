/* gpusort devices: what the Vulkan loader offers, which device gpusort would choose, and (-v)
 * the configuration it would run with on each. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "report.h"

static void print_configuration(const gpusort_device_info *d) {
  printf("        preset %s: sort tiles of %u invocations x %u keys (%u x %u for 32-bit keys with 32-bit "
         "values, %u x %u with 64-bit values), of %u x %u for 64-bit keys (%u x %u with values; fewer where "
         "shared memory is short), scan tiles of %u invocations x %u rows (at most 8 with a widened "
         "accumulator), look-back family tiles of up to %u invocations (select's and partition's in up to %u "
         "sub-tiles), look-back spin %u\n",
         d->preset, d->sort_workgroup_size, d->sort_keys_per_invocation, d->sort_workgroup_size_narrow_pairs,
         d->sort_keys_per_invocation_narrow_pairs, d->sort_workgroup_size_pairs, d->sort_keys_per_invocation_pairs,
         d->sort_workgroup_size_wide, d->sort_keys_per_invocation_wide, d->sort_workgroup_size_wide_pairs,
         d->sort_keys_per_invocation_wide_pairs, d->scan_workgroup_size, d->scan_rows, d->compact_workgroup_size,
         d->compact_subtiles, d->lookback_spin_limit);
  if (d->sort_small_tile_count) {
    printf("        small sorts: tiles of");
    for (uint32_t i = 0; i < d->sort_small_tile_count && i < GPUSORT_SMALL_SORT_TILES; i++)
      printf("%s %u x %u", i ? "," : "", d->sort_small_workgroup_size[i], d->sort_small_keys_per_invocation[i]);
    printf(" keys, each taken by sorts of at least %u such tiles (Onesweep)\n", d->sort_small_min_tiles);
  }
  if (d->sort_float_fewer_keys) { /* the layouts, by their bits */
    static const char *const layouts[] = {"32-bit keys alone", "32-bit keys with 32-bit values",
                                          "32-bit keys with 64-bit values", "64-bit keys alone",
                                          "64-bit keys with values"};
    const size_t count = sizeof layouts / sizeof layouts[0];
    printf("        float keys: tiles of a key an invocation fewer for");
    unsigned left = 0;
    for (size_t i = 0; i < count; i++) left += (d->sort_float_fewer_keys >> i) & 1u;
    for (size_t i = 0; i < count; i++)
      if ((d->sort_float_fewer_keys >> i) & 1u)
        printf(" %s%s", layouts[i], --left == 0 ? "" : left == 1 ? " and" : ",");
    printf("\n");
  }
  if (d->compact_read_ahead_kib)
    printf("        select and partition: each tile reads the input %u KiB past its own into cache before its "
           "look-back\n", d->compact_read_ahead_kib);
  if (d->compact_early_walk) { /* the members that walk, as "a", "a and b" or "a, b and c" */
    static const struct { uint32_t bit; const char *name; } members[] = {
        {GPUSORT_EARLY_WALK_UNIQUE, "unique"}, {GPUSORT_EARLY_WALK_RLE, "rle"},
        {GPUSORT_EARLY_WALK_REDUCE_BY_KEY, "reduce-by-key"}};
    unsigned left = 0;
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) left += (d->compact_early_walk & members[i].bit) != 0;
    printf("        ");
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
      if (d->compact_early_walk & members[i].bit)
        printf("%s%s", members[i].name, --left == 0 ? "" : left == 1 ? " and " : ", ");
    printf(": one subgroup of each tile walks the look-back while the others load the tile's keys\n");
  }
  if (d->scan_early_walk)
    printf("        look-back scan: one subgroup of each tile walks the look-back while the others load the "
           "tile's elements\n");
  if (d->scan_read_ahead_kib)
    printf("        look-back scan: the walking subgroup reads the input %u KiB past its tile into cache as "
           "it walks\n", d->scan_read_ahead_kib);
  if (d->scan_small_rows)
    printf("        small scans: tiles of %u rows, taken by look-back scans of fewer elements than %u of their own "
           "tiles\n", d->scan_small_rows, d->scan_small_min_tiles);
}

/* --json: one object a line for each device, its preset's main tiles where it is usable. */
static void print_json(const gpusort_device_info *d) {
  cli_json j;
  cli_json_begin(&j, stdout);
  cli_json_count(&j, "index", d->index);
  cli_json_raw(&j, "default", d->is_default ? "true" : "false");
  cli_json_string(&j, "type", gpusort_device_type_name(d->type));
  cli_json_string(&j, "name", d->name);
  cli_json_string(&j, "driver", d->driver);
  cli_json_count(&j, "vendor_id", d->vendor_id);
  cli_json_count(&j, "device_id", d->device_id);
  cli_json_count(&j, "subgroup_size", d->subgroup_size);
  cli_json_count(&j, "memory_bytes", d->memory_bytes);
  cli_json_count(&j, "max_buffer_bytes", d->max_buffer_bytes);
  cli_json_raw(&j, "usable", d->usable ? "true" : "false");
  if (!d->usable) {
    cli_json_string(&j, "unusable_reason", d->unusable_reason);
  } else {
    cli_json_string(&j, "preset", d->preset);
    cli_json_count(&j, "sort_workgroup_size", d->sort_workgroup_size);
    cli_json_count(&j, "sort_keys_per_invocation", d->sort_keys_per_invocation);
    cli_json_count(&j, "sort_workgroup_size_wide", d->sort_workgroup_size_wide);
    cli_json_count(&j, "sort_keys_per_invocation_wide", d->sort_keys_per_invocation_wide);
    cli_json_count(&j, "scan_workgroup_size", d->scan_workgroup_size);
    cli_json_count(&j, "scan_rows", d->scan_rows);
    cli_json_count(&j, "compact_workgroup_size", d->compact_workgroup_size);
  }
  cli_json_end(&j);
}

int cli_devices(int argc, char **argv) {
  static const struct option longopts[] = {CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};
  cli_common common;
  bool done;
  cli_options_begin(&common, &done);
  int opt, rc;
  while ((opt = getopt_long(argc, argv, ":qvhV", longopts, NULL)) != -1) {
    if ((rc = cli_common_option(&common, opt, optarg)) != 0) {
      if (rc != 1) return rc;
      continue;
    }
    if ((rc = cli_other_option(opt, argv, longopts, &done)) || done) return rc;
  }
  if (optind != argc) return cli_fail(GPUSORT_ERROR_USAGE, "devices takes no arguments (see 'gpusort --help')");

  uint32_t count = 0;
  if ((rc = gpusort_list_devices(NULL, 0, &count))) return cli_library_error(rc);
  gpusort_device_info *infos = calloc(count ? count : 1, sizeof *infos);
  if (!infos) return cli_fail(GPUSORT_ERROR_OUT_OF_MEMORY, "out of host memory");
  infos[0].struct_size = sizeof *infos;
  if ((rc = gpusort_list_devices(infos, count, &count))) {
    free(infos);
    return cli_library_error(rc);
  }
  if (common.json) {
    for (uint32_t i = 0; i < count; i++) print_json(&infos[i]);
    free(infos);
    return GPUSORT_OK;
  }
  printf("%-7s %-10s %-8s %-11s %-11s %s\n", "index", "type", "subgroup", "memory", "max buffer", "name (driver)");
  for (uint32_t i = 0; i < count; i++) {
    const gpusort_device_info *d = &infos[i];
    char mem[32], range[32];
    cli_format_bytes(mem, sizeof mem, (double)d->memory_bytes);
    cli_format_bytes(range, sizeof range, (double)d->max_buffer_bytes);
    printf("%c%-6u %-10s %-8u %-11s %-11s %s (%s)\n", d->is_default ? '*' : ' ', d->index,
           gpusort_device_type_name(d->type), d->subgroup_size, mem, range, d->name, d->driver);
    if (!d->usable) printf("        not usable: %s\n", d->unusable_reason);
    if (d->usable && common.verbosity >= 2) print_configuration(d);
  }
  if (count == 0) printf("(no Vulkan devices)\n");
  free(infos);
  return GPUSORT_OK;
}
