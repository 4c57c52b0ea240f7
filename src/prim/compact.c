#include "prim/compact.h"

#include <stdio.h>
#include <string.h>

#include "util/error.h"

enum {
  CONTROL_BYTES = 256,      /* ticket counter, the total kept */
  MAX_ELEMENTS = 0x3FFFFF00 /* counts in a descriptor's 30 bits */
};

static bool reduces(const gs_compact_config *c) { return c->mode == GS_COMPACT_REDUCE_BY_KEY; }
/* Whether the device's configuration has this member's tiles walk early (where they can). */
static bool walks_early(const gs_device_config *device_config, const gs_compact_config *c) {
  const uint32_t member = c->mode == GS_COMPACT_UNIQUE ? GPUSORT_EARLY_WALK_UNIQUE
                          : !reduces(c)                ? 0
                          : c->count_runs              ? GPUSORT_EARLY_WALK_RLE
                                                       : GPUSORT_EARLY_WALK_REDUCE_BY_KEY;
  return (device_config->compact_early_walk & member) != 0;
}

/* Shared memory of a tile: select and partition stage its records in output order
 * (compact.comp's s_staged), and every mode keeps a few words per subgroup and the walk's
 * (a generous bound for those). */
static uint64_t shared_bytes_for(const gs_compact_config *c, uint32_t workgroup, uint32_t subgroup, uint32_t items,
                                 uint32_t subtiles, unsigned key_bytes) {
  return (GS_COMPACT_STAGES(c->mode) ? (uint64_t)workgroup * items * subtiles * key_bytes : 0) +
         workgroup / subgroup * 32 + 256;
}

static gs_scan_config value_scan(const gs_compact_config *c) {
  return (gs_scan_config){.input = c->value, .acc = c->acc, .op = c->op};
}

int gs_compact_check_config(const gs_device *dev, const gs_compact_config *c) {
  if (c->mode > GS_COMPACT_REDUCE_BY_KEY || (unsigned)c->key >= GS_KEY_TYPE_COUNT)
    return gs_fail(GPUSORT_ERROR_USAGE, "internal error: an unknown compaction");
  if (c->count_runs && (!reduces(c) || c->value != GS_KEY_U32 || c->op != GS_SCAN_SUM ||
                        (c->acc != GS_KEY_U32 && c->acc != GS_KEY_U64)))
    return gs_fail(GPUSORT_ERROR_USAGE, "internal error: run lengths are u32 sums into u32 or u64");
  if (reduces(c)) {
    const gs_scan_config scan = value_scan(c);
    int rc = gs_scan_check_config(dev, &scan);
    if (rc) return rc;
  }
  if (dev && gs_key_info_of(c->key)->bytes == 8 && !dev->int64)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "%s cannot compare 64-bit keys (no shaderInt64)", dev->info.name);
  return GPUSORT_OK;
}

uint64_t gs_compact_max_elements(const gs_device *dev, const gs_compact_config *c) {
  unsigned widest = gs_key_info_of(c->key)->bytes;
  if (reduces(c)) {
    const unsigned value = gs_key_info_of(c->value)->bytes, acc = gs_key_info_of(c->acc)->bytes;
    widest = value > widest ? value : widest;
    widest = acc > widest ? acc : widest;
  }
  const uint64_t limit = (dev->info.max_data_buffer & ~(uint64_t)15) / widest;
  return limit < MAX_ELEMENTS ? limit : MAX_ELEMENTS;
}

int gs_compact_create(gs_device *dev, const gs_memops *memops, const gs_device_config *device_config,
                      const gs_compact_config *config, gs_compact *c) {
  memset(c, 0, sizeof *c);
  c->dev = dev;
  c->memops = memops;
  c->config = *config;
  int rc = gs_compact_check_config(dev, config);
  if (rc) return rc;
  const unsigned key_bytes = gs_key_info_of(config->key)->bytes;
  /* The family's workgroup (1024 on NVIDIA, else the scan's: device_config.c) and the scan's
   * rows of 16-byte loads (16 u32 or 8 u64 keys in 4), within each mode's bounds on
   * invocations, rows and loads a tile (workgroup x rows), set by what its tile keeps in
   * registers across the look-back. On an H100, 2^28 u32 keys, `bench --compact`:
   *  - select and partition stage their tiles in shared memory, at most 256 x 4 rows a sub-tile:
   *    select took 1.53 ms at 256 x 4 rows, 1.74 at 256 x 2, 1.59 at 128 x 4 and 1.86 at 128 x
   *    2 (in one sub-tile; CUB: 0.70); 8 rows, or 384 or 512 invocations, made it at most 5%
   *    faster. Partition in tiles of one sub-tile takes up to 384: 1.63 ms against 1.98 at 256
   *    (same run), but in two sub-tiles of 256 x 16 keys (the NVIDIA preset's) 1.40 ms (another
   *    run, against 1.62 at 384 x 16 in one). On an H200 their 2 sub-tiles of 256 x 16 keys
   *    took 70 and 76 registers (room for three workgroups an SM in its 65536 registers), and
   *    of 256 x 12 keys 60 and 64 (room for four): select 0.955 ms against 0.972, partition
   *    1.181 against 1.221 (same run). Since rows' counts are ranked packed (compact.comp's
   *    rank_rows), 256 x 12 is the slower: select 0.907 ms against 0.887, partition 1.31
   *    against 1.14 (same runs). Select in 4 sub-tiles of 256 x 8 keys took 0.813 ms against
   *    0.676 in 2 of 256 x 16 (48 registers against 78; H200, 0.7.39, same run). Staged as 16-bit
   *    positions in the tile, with the keys read again as they are written (half the shared memory,
   *    room for more sub-tiles), a trial build lost at every count (H100, 0.7.45, 2^26 / 2^28, two
   *    rounds, same run): select 0.226 and 0.223 / 0.830 and 0.827 ms in 2 sub-tiles, 0.259 and
   *    0.258 / 0.946 and 0.951 in 3, 0.285 and 0.286 / 1.044 and 1.043 in 4, 1.197 at 2^28 in 6,
   *    against 0.195 / 0.729 and 0.727 staged as keys in 2; partition 0.312 and 0.310 / 1.173 and
   *    1.172 in 2, at 2^28 1.468 and 1.470 in 3, 1.675 and 1.684 in 4, against 0.250 / 0.951 and
   *    0.953 (CUB: select 0.186 / 0.700, partition 0.254 / 0.974);
   *  - unique keeps only its flags: 512 x 8 rows took 0.847 ms, 512 x 4 0.862, 384 x 4 0.883,
   *    256 x 4 0.896, 256 x 8 0.956, 128 x 8 1.027 (same run); another run, 2^24 / 2^26 / 2^28:
   *    512 x 4 0.068 / 0.224 / 0.857, 512 x 8 0.071 / 0.228 / 0.854, 512 x 6 0.072 / 0.231 /
   *    0.878. On an H200 (0.7.29, two rounds, 2^26 / 2^28) the whole workgroup of 1024 took
   *    0.171 and 0.174 / 0.643 and 0.643 ms at 8 rows (32 flags, a tile of 32768 keys), against
   *    0.175 and 0.174 / 0.669 and 0.660 at 1024 x 4, 0.180 / 0.679 and 0.674 at 512 x 8, and
   *    0.181 and 0.179 / 0.684 and 0.687 at 512 x 4 (1024 x 6: 0.236 / 0.905). A look-back
   *    scan's wait shrinks as its tiles grow (the scan's own, same device: 8192 elements a tile
   *    0.818 ms at 2^28, 16384 0.758, 24576 0.689); unique's tiles are bounded by its 32 flag
   *    bits, so it takes 8 rows in as many invocations as the device's family allows, but for
   *    its early walk (below), with which 512 x 8 is the faster;
   *  - rle of u32 keys keeps them, 64 registers at 512 x 4 rows: 1.15 ms, against 1.35 at 512
   *    x 2, 1.47 at 512 x 8 (122 registers), 1.40 at 256 x 8 (same run); before, 1.31 against
   *    1.47 at 256 x 4 (on an H200 1.28 against 1.39). Larger workgroups, unlike unique's, were
   *    slower (H200, 0.7.29, a build with the caps lifted, 2^28, two rounds): 1024 x 4 0.972 and
   *    0.975 ms, 768 x 4 1.092, 1024 x 3 1.138, 1024 x 2 1.359, against 0.939 and 0.941 at 512 x 4.
   *    Since 0.7.40 a lane's 4 loads lie side by side, in one row (compact.comp's CHUNK_LOADS):
   *    0.775 and 0.777 ms against 0.814 and 0.818 in four rows (H200, 2^28, same run). Since
   *    0.7.41 it reads its heads' keys again and takes 31 registers: 0.498 ms at 512 x 4
   *    (H200); 1024 x 4 and 512 x 8 were no faster (H100, 2^28, same run: 0.557 and 0.558 ms
   *    against 0.559, 48 registers);
   *  - reduce-by-key of u32 keys and sums: 512 x 2 rows took 1.64 ms (32 registers), 256 x 4
   *    1.72 (48), 512 x 4 1.86 (59), 256 x 8 2.65 (128; same run). On an H200, since a row's
   *    keys and values are read before its runs are written, 512 x 3 took 1.325 to 1.328 ms (40
   *    registers), 512 x 2 1.360 to 1.361 (32) and 512 x 4 1.602 to 1.603 (62; same runs), so
   *    1536 loads a tile; since a row's values are read in one 16-byte load (0.7.27), in 384 x 4
   *    (H200, same run, 2^24 / 2^26 / 2^28): 0.092 / 0.310 / 1.183 ms at 40 registers, against
   *    0.097 / 0.341 / 1.304 at 512 x 3 (40), 256 x 4 0.098 / 0.334 / 1.279 (48) and 512 x 2
   *    0.094 / 0.331 / 1.278 (32). In the rle run above: 1024 x 4 1.605 and 1.607 ms, 1024 x 3
   *    1.736, 1024 x 2 1.422 and 1.427, 768 x 4 1.217, against 1.183 and 1.185 at 384 x 4.
   *    With the early walk (below), 512 x 4 (H200, 0.7.35 with rows ranked unpacked, 2^24 /
   *    2^26 / 2^28, two rounds, same run, 32 registers either way): 0.087 / 0.290 and 0.292 /
   *    1.103 and 1.105 ms, against 0.087 / 0.298 / 1.130 and 1.124 at 384 x 4 (CUB 0.068 /
   *    0.222 / 0.836); its values held in registers from before the keys' flags to the writes,
   *    1.234 and 1.233 (57 registers; 1.176 at 384 x 4, 50). So with the walk it takes 512
   *    invocations, as rle. Since 0.7.39 its values are loaded with the keys and held only until
   *    their segmented scans: 1.029 ms at 2^28 against 1.068 and 1.067 (40 registers against
   *    32; CUB 0.844; H200, same run). In a later run 512 x 3 took 1.051 ms (32 registers) and
   *    384 x 4 1.081 (56), against 1.024 at 512 x 4 (0.7.39). Since 0.7.43 it holds its values
   *    through the look-back, in blocks of four loads (compact.comp's CHUNK_LOADS), and on
   *    NVIDIA no longer walks early: 384 x 4 without the walk took 0.924 and 0.922 ms at 2^28
   *    (40 registers), against 1.006 and 1.008 at 512 x 4 with it (H100, same run, two rounds;
   *    0.7.42 1.013 and 1.020; CUB 0.932);
   * 64-bit keys, values or counts in rle and reduce-by-key are unmeasured and keep 256
   * invocations x 4 rows (a bound of 1024 loads). lavapipe (128 invocations, 2^20 u32 keys): 8
   * rows took 6.6 to 7.0 ms against 8.1 to 8.6 at 4 for unique, 7.0 to 7.7 against 8.6 to 8.7
   * for rle, 12.4 to 13.4 against 15.4 for reduce-by-key (two runs each); so the modes' bounds
   * are on loads, not rows. */
  const bool narrow = key_bytes == 4 && (!reduces(config) || (gs_key_info_of(config->value)->bytes == 4 &&
                                                                gs_key_info_of(config->acc)->bytes == 4));
  uint32_t subtiles = GS_COMPACT_STAGES(config->mode) && device_config->compact_subtiles ? device_config->compact_subtiles : 1;
  if (subtiles > 64) subtiles = 64; /* (a knob's; shared memory allows far fewer on any device) */
  uint32_t most = 256, most_rows = 4, most_loads = 4096;
  if (config->mode == GS_COMPACT_PARTITION && subtiles == 1) most = 384;
  if (config->mode == GS_COMPACT_UNIQUE) /* (with an early walk: measured below) */
    most = walks_early(device_config, config) ? 512 : 1024, most_rows = 8, most_loads = 8192;
  /* (rows whose packed counts take two words or more total each word by a shuffle:
   * compact.comp's rank_rows) Other devices than NVIDIA take the same bounds, unmeasured
   * there (reduce-by-key's 384, from 512 before 0.7.27, too, and unique's 8 rows in AMD's and
   * Intel's 512 invocations, 4 before 0.7.29). */
  if (reduces(config)) {
    const bool wider = config->count_runs || walks_early(device_config, config); /* (measured above) */
    most = !narrow ? 256 : wider ? 512 : 384, most_rows = 8, most_loads = !narrow ? 1024 : wider ? 2048 : 1536;
  }
  if (most > dev->info.max_workgroup_size) most = dev->info.max_workgroup_size;
  const uint32_t base = device_config->compact_workgroup_size;
  c->workgroup_size = base < most ? base : most;
  if (c->workgroup_size && most_rows > most_loads / c->workgroup_size) most_rows = most_loads / c->workgroup_size;
  uint32_t rows = device_config->scan_rows < most_rows ? device_config->scan_rows : most_rows;
  if (rows == 0) rows = 1;
  const uint32_t vec = key_bytes == 8 ? 2 : 4; /* keys of one 16-byte load */
  /* fewer sub-tiles, then fewer rows, where shared memory is short (a device with the 16 KiB
   * Vulkan promises) */
  while (subtiles > 1 && shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, rows * vec, subtiles,
                                          key_bytes) > dev->info.max_shared_bytes)
    subtiles--;
  while (rows > 1 && shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, rows * vec, 1, key_bytes) >
                         dev->info.max_shared_bytes)
    rows--;
  c->items = rows * vec;
  c->subtiles = subtiles;
  if (c->workgroup_size % dev->subgroup_size || c->workgroup_size > dev->info.max_workgroup_size ||
      c->workgroup_size < 64 || c->items == 0)
    return gs_fail(GPUSORT_ERROR_USAGE, "compaction tile of %u invocations x %u keys does not suit this device",
                   c->workgroup_size, c->items);
  const uint32_t shared =
      (uint32_t)shared_bytes_for(config, c->workgroup_size, dev->subgroup_size, c->items, c->subtiles, key_bytes);
  if (shared > dev->info.max_shared_bytes)
    return gs_fail(GPUSORT_ERROR_NO_DEVICE, "a compaction tile needs %u bytes of shared memory; %s offers %u", shared,
                   dev->info.name, dev->info.max_shared_bytes);
  /* The early walk of unique, rle and reduce-by-key (compact.comp's unique_tile_early_walk and
   * runs_tile_early_walk): subgroup 0 holds no keys and walks the look-back from the start while
   * the others load theirs, so the tile is a subgroup short. Its count travels in 16 bits of a
   * shared word. Unique, H200 (driver 580, `bench --compact`, ms at 2^24 / 2^26 / 2^28 u32 keys
   * with n/16 runs), in 1024 x 8 rows, two rounds, same run: 0.055 / 0.172 to 0.173 / 0.625 to
   * 0.629 against 0.055 / 0.173 / 0.640 to 0.642 without (CUB 0.046 / 0.139 / 0.506). In 512 x 8
   * rows it gains far more (shapes set through GPUSORT_SCAN_WORKGROUP). One run (2^26 / 2^28):
   * 0.144 / 0.516 in 512 x 8, 0.172 and 0.174 / 0.627 and 0.628 in 1024 x 8, CUB 0.136 / 0.499.
   * Another (2^24 / 2^26 / 2^28): 512 x 8 0.048 / 0.143 / 0.515, 256 x 8 0.049 / 0.155 / 0.569,
   * 768 x 8 0.049 / 0.141 / 0.506, 1024 x 8 0.055 / 0.174 / 0.628, and 512 x 8 without the early walk
   * 0.055 / 0.180 / 0.674. So with it unique takes at most 512 invocations: 512 x 8 passed
   * `test_compact small`, `matrix u32`, and `small u32` with every wait recounted, on the H200;
   * 768 x 8 was not tested there (in a later run, 0.049 / 0.141 / 0.508 against 0.048 / 0.142 / 0.509
   * and 0.514 at 512 x 8: within 1%, not taken). lavapipe (two cores, `bench --compact --reps 3`,
   * two rounds, ms with and without): 2^16 1.338 and 1.314 against 1.358 and 1.365, 2^20 18.5 and
   * 18.3 against 20.8 and 20.5, 2^22 84.5 and 72.6 against 82.4 and 82.8: within that machine's
   * noise, so its preset (and the other vendors', unmeasured) keeps the whole tile loading before
   * it walks. Rle and reduce-by-key take 512 invocations x 4 rows for u32 keys (7680 keys with the
   * walk; reduce-by-key 384 without it, above), and their walking subgroup goes on to the value
   * look-back. H200, 2^24 / 2^26 / 2^28, same run (0.7.34): rle 0.067 / 0.216 / 0.819 ms against
   * 0.071 / 0.246 / 0.949 without, reduce-by-key of u32 sums 0.088 / 0.299 / 1.135 against 0.092 /
   * 0.312 / 1.193, unique 0.048 / 0.144 / 0.517 against 0.055 / 0.171 / 0.645 (CUB: rle 0.062 /
   * 0.204 / 0.765, reduce-by-key 0.068 / 0.223 / 0.844, unique 0.045 / 0.139 / 0.503); another run,
   * rle alone, 0.064 / 0.213 / 0.795 against 0.070 / 0.243 / 0.931 (CUB 0.065 / 0.206 / 0.764).
   * Select and partition walk after their two sub-tiles: a walk of their own, tried in tiles of one
   * sub-tile (staged after the walk), lost to them (H200, 0.7.35, 2^24 / 2^26 / 2^28, select and
   * partition ms, same run): 256 x 4 rows 0.067 / 0.222 / 0.848 and 0.077 / 0.262 / 1.003, 384 x 4
   * 0.062 / 0.203 / 0.770 and 0.081 / 0.280 / 1.079, 512 x 4 0.063 / 0.204 / 0.782 and 0.072 /
   * 0.247 / 0.948, 1024 x 4 1.068 and 1.229 at 2^28; one sub-tile of 256 x 4 without it 0.858 and
   * 1.030; the preset's two sub-tiles of 256 x 4 0.058 / 0.182 / 0.678 and 0.069 / 0.226 / 0.848
   * (CUB 0.596 and 0.795). Nor did a walker stepping between the two sub-tiles' barriers, in a
   * workgroup a subgroup larger (0.7.38, H200, 2^28, same run): select 0.864 ms and partition
   * 0.999 against 0.679 and 0.848, in one sub-tile 0.810 and 0.939, in three 0.863 and 0.997. And
   * the walker of unique, rle and reduce-by-key reading a later tile's input into cache as it
   * walks, as the scan's does (0.7.38, same run): 8192 KiB ahead, unique 0.560 ms against 0.513,
   * rle 0.831 against 0.817, reduce-by-key 1.324 against 1.068 (40 registers against 32); 4096
   * and 16384 KiB, and keys alone, were slower too. */
  c->early_walk = walks_early(device_config, config) && c->workgroup_size > dev->subgroup_size &&
                  (uint64_t)(c->workgroup_size - dev->subgroup_size) * c->items < 0x10000;
  c->tile = (c->workgroup_size - (c->early_walk ? dev->subgroup_size : 0)) * c->items * c->subtiles;
  /* The others' walk (compact.comp's walk_for_count): by subgroup 0's ballots where the device's
   * configuration says so (lavapipe: 7 to 21% less time for the five members at 2^22
   * keys; the figures are in compact.comp), rle's and reduce-by-key's only where that walk is not
   * known wrong for them (NVIDIA: device_config.c); else by the whole workgroup. */
  c->subgroup_walk =
      device_config->compact_subgroup_walk && (!reduces(config) || device_config->compact_runs_subgroup_walk);
  /* Select's and partition's read-ahead, in whole tiles (at least one where any was asked). On
   * an H200 (2^24 / 2^26 / 2^28 u32 keys, `bench --compact`, two rounds, same run), NVIDIA's
   * 8192 KiB (256 of their tiles of 32 KiB): select 0.056 to 0.057 / 0.182 to 0.184 / 0.677 to
   * 0.678 ms against 0.063 to 0.064 / 0.220 to 0.221 / 0.831 to 0.835 without, partition 0.069
   * / 0.225 to 0.227 / 0.849 to 0.852 against 0.079 to 0.080 / 0.278 to 0.284 / 1.085 to 1.090
   * (CUB: 0.051 / 0.160 / 0.592 and 0.064 / 0.209 / 0.795). Other distances (another run, at
   * 2^28, select and partition): 66 tiles 0.747 and 0.928 ms, 132 0.719 and 0.886, 264 0.687 and
   * 0.862, 528 0.710 and 0.974. On an H100 (0.7.50, 2^26 / 2^28, two rounds, same run) 8192 KiB
   * stays select's best: 0.194 / 0.726 and 0.727 ms, against 0.197 and 0.199 / 0.752 and 0.753 at
   * 4096, 0.195 / 0.738 and 0.740 at 6144, 0.195 and 0.196 / 0.732 and 0.734 at 12288, 0.218 and
   * 0.219 / 0.837 and 0.841 at 16384 (CUB 0.188 and 0.189 / 0.699 and 0.700); partition was 1.5 to
   * 2% faster at 6144 (0.928 and 0.932 ms at 2^28 against 0.944 and 0.946; CUB 0.970 and 0.976),
   * slower at 12288 and 16384; three sub-tiles gained neither (0.729 and 0.730, 0.947 and 0.948;
   * 0.7.52, one round: three 0.726 and 0.942, four 0.727 and 0.941, two 0.729 and 0.951).
   * Not for the other modes: unique, whose tiles load all their rows
   * at once, took 0.739 ms at 132 of its tiles ahead against 0.647, reduce-by-key 1.38 against
   * 1.18, rle 0.925 against 0.936; again at 1, 2, 4, 8 and 16 MiB ahead (H200, 0.7.32, 2^28,
   * same run, against 0.646 to 0.648, 0.946 to 0.949 and 1.189 to 1.195 without), unique took
   * 0.667 to 0.734 ms, rle 0.937 to 0.951 (at most 1% faster) and reduce-by-key, whose
   * read-ahead of keys and values took 56 registers against 40, 1.333 to 1.610; nor the scan
   * (0.908 against 0.683, at 86 registers against 64: one workgroup an SM instead of two) or
   * the sort's passes (u32 keys 7.00 ms against 5.62 at 256 tiles ahead). */
  if (GS_COMPACT_STAGES(config->mode) && device_config->compact_read_ahead_kib) {
    const uint64_t tile_bytes = (uint64_t)c->tile * key_bytes;
    const uint64_t tiles = (uint64_t)device_config->compact_read_ahead_kib * 1024 / tile_bytes;
    c->read_ahead = tiles == 0 ? 1 : tiles > 1u << 20 ? 1u << 20 : (uint32_t)tiles;
  }
  c->split_descriptors = reduces(config) && gs_scan_descriptors_split(dev, config->acc);
  char name[64];
  const gs_scan_config values = value_scan(config);
  const char *layout = c->split_descriptors ? "_split" : "";
  if (config->count_runs)
    snprintf(name, sizeof name, "compact_rle_k%u_r%u%s", key_bytes * 8, gs_scan_accumulator_rep(&values), layout);
  else if (reduces(config))
    snprintf(name, sizeof name, "compact_rbk_k%u_i%u_r%u%s", key_bytes * 8, gs_key_info_of(config->value)->bytes * 8,
             gs_scan_accumulator_rep(&values), layout);
  else
    snprintf(name, sizeof name, "compact_k%u", key_bytes * 8);
  const uint32_t spin = device_config->lookback_spin ? device_config->lookback_spin : 1;
  const uint32_t value_kind = reduces(config) ? (uint32_t)gs_key_info_of(config->value)->kind : 0;
  const uint32_t acc_kind = reduces(config) ? (uint32_t)gs_key_info_of(config->acc)->kind : 0;
  uint32_t spec[GS_SPEC_COUNT] = {0}; /* (the ids compact.comp does not read stay 0) */
  spec[GS_SPEC_WORKGROUP_SIZE] = c->workgroup_size;
  spec[GS_SPEC_KEY_KIND] = (uint32_t)gs_key_info_of(config->key)->kind;
  spec[GS_SPEC_TILE_ROWS] = c->items;
  spec[GS_SPEC_LOOKBACK_SPIN] = spin;
  spec[GS_SPEC_SCAN_OP] = (uint32_t)config->op;
  spec[GS_SPEC_SCAN_IN_KIND] = value_kind;
  spec[GS_SPEC_SCAN_ACC_KIND] = acc_kind;
  spec[GS_SPEC_COMPACT_MODE] = config->mode;
  spec[GS_SPEC_COMPACT_SUBTILES] = c->subtiles;
  spec[GS_SPEC_READ_AHEAD] = c->read_ahead;
  spec[GS_SPEC_EARLY_WALK] = c->early_walk;
  spec[GS_SPEC_SUBGROUP_WALK] = c->subgroup_walk;
  return gs_kernel_create(dev, &c->kernel, name, sizeof(gs_compact_push), spec, GS_SPEC_COUNT);
}

void gs_compact_destroy(gs_compact *c) {
  gs_device *dev = c->dev;
  if (!dev || !dev->device || dev->wedged) return; /* the GPU may still use it: leave to exit */
  gs_kernel_destroy(dev, &c->kernel);
  memset(c, 0, sizeof *c);
}

static uint64_t tiles_of(const gs_compact *c, uint64_t n) { return gs_groups_for(n ? n : 1, c->tile); }

static VkDeviceSize round16(VkDeviceSize bytes) { return (bytes + 15) & ~(VkDeviceSize)15; }

/* State: control words, then two halves of one size, each a count descriptor per tile and
 * (reduce-by-key) after those the value descriptors. A pass reads one half and zeroes its tiles'
 * descriptors in the other, so that the next pass, on that half, finds them empty (gs_compact_rest).
 * The halves' layout follows from the block's size alone, so that passes of any size on one
 * block agree on where each tile's descriptors are. */
static VkDeviceSize tile_descriptor_bytes(const gs_compact *c) {
  return 4 + (reduces(&c->config) ? gs_scan_descriptor_bytes(c->split_descriptors) : 0);
}

VkDeviceSize gs_compact_state_bytes(const gs_compact *c, uint64_t max_n) {
  /* (16 bytes a half more: the value descriptors start at the next 16 bytes after the counts) */
  return CONTROL_BYTES + 2 * round16(tiles_of(c, max_n) * tile_descriptor_bytes(c) + 16);
}

typedef struct {
  VkDeviceSize half_bytes, values_at; /* a half's size; its value descriptors' offset in it */
  uint64_t tiles;                     /* tiles whose descriptors a half holds */
} state_layout;

static state_layout layout_of(const gs_compact *c, VkDeviceSize state_bytes) {
  state_layout l = {((state_bytes - CONTROL_BYTES) / 2) & ~(VkDeviceSize)15, 0, 0};
  l.tiles = (l.half_bytes - 16) / tile_descriptor_bytes(c);
  l.values_at = round16(l.tiles * 4);
  return l;
}

void gs_compact_descriptors(const gs_compact *c, gs_range state, unsigned half, uint64_t tiles, gs_range *counts,
                            gs_range *values) {
  const state_layout l = layout_of(c, state.size);
  *counts = gs_subrange(state, CONTROL_BYTES + half * l.half_bytes, tiles * 4);
  if (values)
    *values = reduces(&c->config) ? gs_subrange(state, CONTROL_BYTES + half * l.half_bytes + l.values_at,
                                                tiles * gs_scan_descriptor_bytes(c->split_descriptors))
                                  : (gs_range){0};
}

int gs_compact_record(const gs_compact *c, VkCommandBuffer cb, uint64_t n, const gs_compact_run *run,
                      gs_timestamps *ts) {
  if (n > gs_compact_max_elements(c->dev, &c->config) || gs_compact_state_bytes(c, n) > run->state.size)
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a compaction beyond its capacity");
  if (run->has_previous && reduces(&c->config))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: reduce-by-key continues no earlier chunk");
  const bool selects = c->config.mode == GS_COMPACT_SELECT || c->config.mode == GS_COMPACT_PARTITION;
  if (run->carry_words > 2 || (run->carry_words && reduces(&c->config)))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a compaction carrying values it cannot");
  if (selects && (run->program_length == 0 || run->program_length > GS_PREDICATE_MAX_OPS))
    return gs_fail(GPUSORT_ERROR_RUNTIME, "internal error: a selection without a predicate");
  gs_cmd_barrier(cb); /* after earlier work on the same arrays and state */
  if (ts) gs_timestamps_write(cb, ts, 0);
  const uint64_t tiles = tiles_of(c, n);
  const state_layout layout = layout_of(c, run->state.size);
  gs_compact_rest *rest = run->rest;
  if (rest && rest->of != c) *rest = (gs_compact_rest){.of = c};
  /* What the pass reads starts empty: the control words and its tiles' descriptors, as the last
   * pass on the block left them, or cleared (with `rest` both halves, without it half 0). A pass
   * over no keys clears the control words alone, so that its total reads 0. */
  const bool at_rest = rest && rest->zeroed_tiles[rest->half] >= tiles;
  const VkDeviceSize clear_bytes = n == 0    ? CONTROL_BYTES
                                   : at_rest ? 0
                                             : CONTROL_BYTES + (rest ? 2 : 1) * layout.half_bytes;
  int rc = clear_bytes ? gs_record_clear(c->dev, cb, c->memops, run->state, clear_bytes / 4) : GPUSORT_OK;
  if (rest && clear_bytes > CONTROL_BYTES) rest->zeroed_tiles[0] = rest->zeroed_tiles[1] = layout.tiles;
  const unsigned half = rest ? rest->half : 0;
  gs_range counts, values, other_counts; /* (the other half's value descriptors lie as far on) */
  gs_compact_descriptors(c, run->state, half, tiles, &counts, &values);
  gs_compact_descriptors(c, run->state, 1 - half, tiles, &other_counts, NULL);
  if (!rc && n) {
    const uint32_t outputs = (run->keys_out.size ? GS_COMPACT_KEYS : 0) | (run->indices_out.size ? GS_COMPACT_INDICES : 0);
    gs_compact_push push = {.keys_in = run->keys_in.address,
                            .keys_out = run->keys_out.address,
                            .indices_out = run->indices_out.address,
                            .values_in = run->values_in.address,
                            .values_out = run->values_out.address,
                            .lookback = counts.address,
                            .tile_data = values.address,
                            .next_lookback = rest ? other_counts.address : 0,
                            .control = run->state.address,
                            .program = selects ? run->program.address : 0,
                            .n = (uint32_t)n,
                            .tiles = (uint32_t)tiles,
                            .flags = outputs | (run->has_previous ? GS_COMPACT_PREVIOUS : 0) |
                                     (c->config.count_runs ? GS_COMPACT_COUNT_RUNS : 0) |
                                     (run->carry_words ? GS_COMPACT_CARRY : 0) |
                                     (run->carry_words == 2 ? GS_COMPACT_CARRY_WIDE : 0) |
                                     (run->keys_in.address % 16 == 0 ? GS_COMPACT_ALIGNED : 0) |
                                     (run->values_in.address % 16 == 0 ? GS_COMPACT_VALUES_ALIGNED : 0),
                            .program_length = selects ? run->program_length : 0,
                            .prev_lo = (uint32_t)run->previous_bits,
                            .prev_hi = (uint32_t)(run->previous_bits >> 32)};
    rc = gs_kernel_dispatch(c->dev, cb, &c->kernel, &push, tiles);
    if (rest) { /* this half's first tiles are dirty, and the other's zeroed */
      rest->zeroed_tiles[half] = 0;
      if (rest->zeroed_tiles[1 - half] < tiles) rest->zeroed_tiles[1 - half] = tiles;
      rest->half = 1 - half;
    }
  }
  if (rc && rest) *rest = (gs_compact_rest){0};
  if (ts) gs_timestamps_write(cb, ts, 1);
  return rc;
}
