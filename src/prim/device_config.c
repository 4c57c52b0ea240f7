#include "prim/device_config.h"

#include <stdio.h>
#include <string.h>

#include "util/knobs.h"

enum { ANY = 0 };

/* Presets, first match wins. Tiles of 16 subgroups; sort tiles of 9 keys per invocation for
 * 32-bit keys with or without values, 5 for 64-bit keys with or without, 16 on lavapipe. On
 * NVIDIA each layout has its own tile (invocations x keys, held or in registers, early counts
 * or not): 32-bit keys alone 256 x 28 in registers, with early counts; with 32-bit values 384
 * x 26, the keys in registers and the values loaded after the look-back, with early counts;
 * with 64-bit values 512 x 10, held (as many as shared memory holds); 64-bit keys alone 384 x
 * 18 in registers, staged a half at a time, with early counts; 64-bit keys with values 384 x 13
 * in registers, with early counts.
 * NVIDIA, occupancy: the driver gives a compute pipeline about 100 KiB of shared memory per SM
 * (H200, 580.159.04), not the 228 the SM has, so three workgroups share an SM only when each
 * takes at most about 33 KiB, whatever their registers allow. H200, 2^28 u32 keys, same runs:
 * 384 x 10 held (32,824 bytes, 56 registers) took 7.39 ms, and 8.57 with 2,560 bytes of unused
 * shared memory added; 256 x 18 held 6.82 against 8.19; 256 x 17 (30,760 bytes) 6.98 against
 * 6.99 (33,320 still fit). So the held 384 x 20 (48,184 bytes) ran two workgroups an SM at 77
 * registers and at 50 alike (6.32 and 6.36 ms). CUB's u32 tile is 384 x 20 with its keys in
 * registers (32,768 bytes): 56 registers and three blocks an SM sorting descending, 74 and two
 * ascending (cuobjdump, Nsight Compute), hence its 5.33 ms against 6.34. 32-bit keys alone in
 * registers with early counts, each digit taken twice (radix_onesweep.comp's rank_shift; H200,
 * three runs that day; registers, shared bytes, ms): u32 keys 256 x 28 79, 33,832, 5.66 and
 * 5.68; 256 x 27 5.74; 384 x 17 56, 31,288, 5.71; 320 x 21 64, 32,048, 5.73; 288 x 24 72, 5.79;
 * 256 x 26 5.76; 384 x 16 54, 5.81; 320 x 20 5.84; 384 x 18 60 (two workgroups) 6.44; 384 x 20
 * 64, 35,896 (two) 6.23; 352 x 18 6.82; 448 x 13 6.95, against 6.32 held at 384 x 20. f32 keys,
 * whose first and last passes map their bits: 256 x 28 79 registers and 5.77 ms, 384 x 17 58
 * (two workgroups in those passes) 6.24, 320 x 21 66 6.35, against 6.40 held; i32 5.74, 5.79,
 * 5.83 against 6.37. At 2^26 in 384 x 16 and 320 x 20 against held 384 x 20: sorted 1.53 and
 * 1.42 against 1.54, reversed the same, equal 0.40 all, few 1.40 and 1.41 against 1.51, entropy
 * 1.57 and 1.58 against 1.70, lowbits:16 1.06 both against 1.12.
 * NVIDIA, 64-bit keys in registers (H100, 2^28, same runs, ms and registers): held, their 8
 * bytes beside the counters fill the 48 KiB at 384 x 10 (u64 keys 22.12, 61); in registers
 * only the staged tile takes shared memory, and with early counts u64 keys took 18.07 at 320 x
 * 17 (95), 18.55 at 320 x 16, 19.15 at 320 x 15, 18.51 at 256 x 21 (109; 22 keys do not fit),
 * 18.86 at 256 x 20, 19.26 at 384 x 12 (79), 19.37 at 288 x 17, 21.41 at 224 x 24, 21.91 at 192
 * x 28, and past the registers that let two workgroups share an SM, 27.45 at 384 x 13 (83),
 * 28.60 at 288 x 18 (97), 27.31 at 352 x 15; without early counts 20.34 at 320 x 14 against
 * 19.82 with them. CUB's 64-bit tile is 384 x 15 at 72 registers (Nsight Compute). u64/u64
 * pairs in registers: 256 x 20 31.23 (122) against 32.57 held at 384 x 10, 31.32 with early
 * counts, 31.86 at 256 x 18, 32.13 at 320 x 14, 33.11 at 192 x 24; u64/u32 pairs 25.39 at 256 x
 * 20 against 27.60, 26.11 at 256 x 18. 32-bit keys in registers with early counts were faster on
 * uniform keys at 256 x 32 (6.65 against 6.77 held at 384 x 20; 121 registers; 256 x 34 6.56
 * at 127, 256 x 36 10.04 at 133) but not on sorted or descending keys: at 2^26 their passes
 * after the first took 0.608 ms against 0.398 on uniform keys (held at 384 x 20: 0.383 and
 * 0.403), for all shapes in registers measured (256 x 16 and 24, 512 x 16), so they stay held;
 * since held keys' digits wait in registers (0.7.17) held keys are also the faster on uniform
 * keys (H200, 2^28, same run: 6.31 ms against 6.52 at 256 x 32 in registers, 8.31 at 384 x 28,
 * 8.61 at 512 x 16; sorted keys at 2^26 1.54 against 2.31 at 256 x 32);
 * u32/u32 pairs with keys and values in registers took 13.49 at best (384 x 16) and u32/u64
 * pairs 16.01 (384 x 12), against 10.90 and 14.45 held.
 * NVIDIA, 64-bit keys with values (0.7.32): 384 x 13 in registers with early counts, 78
 * registers, two workgroups an SM; 256 x 20 without early counts had taken 124. H200, ms at
 * 2^24 / 2^26 / 2^28, same run, CUB 1.711 / 6.312 / 24.872: u64/u64 1.670 / 6.244 / 24.736
 * against 1.739 / 6.414 / 25.343; early counts at 256 x 20 1.713 / 6.322 / 24.979 (116), at
 * 320 x 16 36.26 at 2^28 (99, one workgroup an SM). Another run, two rounds: u64/u64 1.670 /
 * 6.200 / 24.546 against 1.727 / 6.367 / 25.201, u64/u32 1.476 / 5.490 / 21.634 against 1.582
 * / 5.823 / 22.840. Staging the pairs a 32-bit half at a time was slower (256 x 20 26.43
 * against 25.20; 384 x 18 32.83, 116 registers).
 * NVIDIA, 64-bit keys alone (0.7.31): 384 x 18, 80 registers and 32,824 bytes of shared
 * memory, once the staged tile took a 32-bit half of each key at a time (radix_onesweep.comp's
 * STAGE_HALVES). H100 (0.7.44, the high halves read before the look-back), ms at 2^24 / 2^26 /
 * 2^28, same run, CUB 1.200 / 4.369 / 16.878: 384 x 18 1.209 / 4.364 / 16.61, 384 x 16 (75
 * registers) 1.233 / 4.476 / 17.33, 320 x 20 (89) 1.264 / 4.521 / 17.36, 384 x 20 (89, one
 * workgroup an SM) 22.89 at 2^28. H100 (0.7.43, another run, CUB 16.894 at 2^28): 384 x 18
 * 17.45 at 2^28, 384 x 16 17.54, 384 x 15 17.90, 320 x 20 17.67, 256 x 24 18.18, 448 x 15 24.22,
 * 512 x 12 24.82. H200, ms at 2^24 / 2^26 / 2^28, same run, CUB 1.163 / 4.211 / 16.438: u64
 * keys 1.156 / 4.131 / 16.019 against 1.201 / 4.428 / 17.389 at 384 x 14 before, f64 1.204 /
 * 4.355 / 16.926 against 1.202 / 4.456 / 17.472, i64 1.165 / 4.170 / 16.213 against 1.201 /
 * 4.446 / 17.434; past 80 registers, one workgroup an SM, u64 keys took 23.05 ms at 2^28 in
 * 384 x 19 (82), 22.53 in 384 x 20 (86), 23.10 in 448 x 16 (75). Another run, the ranks not
 * yet packed: 448 x 15 (71) 16.14 against 15.95 at 384 x 18; at 2^26 against 384 x 14, sorted
 * 2.574 against 2.707, equal 0.828 against 0.858, 64 distinct keys 3.740 against 4.015.
 * Before (0.7.27 to 0.7.30): 384 x 14, 66 registers and 48,184 bytes of shared
 * memory (384 x 15 does not fit 48 KiB: the knob's 15 gives 14). H200, u64 keys, ms at 2^24 /
 * 2^26 / 2^28, same runs: 384 x 14 1.200 / 4.429 / 17.408, 448 x 12 1.194 / 4.438 / 17.494,
 * 320 x 17 (0.7.26, 74 registers) 1.224 / 4.498 / 17.633; at 2^28 alone 384 x 13 18.03, 384 x
 * 12 18.84, 256 x 21 18.05, 512 x 10 17.71 (CUB 16.45 in that run); at 2^26 sorted 2.705
 * against 2.731, 64 distinct keys 4.018 against 4.112. u64/u64 pairs keep 256 x 20 (25.17
 * ms at 2^28): 320 x 14 25.84, 256 x 18 26.12, and 35 to 37 ms at 256 x 21, 320 x 16 and 17,
 * 384 x 12 to 14, 448 x 11 and 512 x 9 and 10 (one workgroup an SM). u32/u64 pairs keep 512 x
 * 10: 448 x 12 took 10.378 ms against 10.500 at 2^28 but 2.518 against 2.491 on sorted keys
 * at 2^26.
 * NVIDIA, 32-bit keys with 32-bit values (0.7.26): 384 x 26, two workgroups an SM at up to 80
 * registers, once the copy pass (radix_onesweep.comp) stores from row pointers too: its 26
 * keys, values and indices had set the pipeline's registers (384 x 23: 96 before, 72 after).
 * H200, 2^28 u32/u32 pairs, ms and registers, beside CUB's 7.42 to 7.48 in each run: 384 x 27
 * 7.26 (80), 384 x 26 7.27 and 7.32 (78), 384 x 25 7.35 (76), 384 x 24 7.42 (74), 512 x 17 7.44
 * (64), 448 x 20 7.46 (66), 448 x 19 7.50 (64), 512 x 16 7.52, 384 x 23 7.53 (72), 416 x 22
 * 7.54 (69), 320 x 30 7.59 (85), 384 x 22 7.62 (70), 448 x 18 7.64 (62), 512 x 15 7.69 (62),
 * 320 x 28 7.75 (82), 256 x 32 8.25 (91), 256 x 28 8.57 (81), and past 80, one workgroup an
 * SM: 384 x 28 10.57 (82), 416 x 24 10.90 (73, past 72 for 416), 352 x 31 10.94 (87). 384 x
 * 27 takes f32 keys' first and last passes to 81 registers (f32/u32 pairs 8.97 ms against 7.32
 * at 384 x 26, whose float pipeline takes 79). 2^26 at 384 x 26 against 512 x 15: uniform 1.896
 * against 1.987, sorted 1.804 against 1.879, few 1.694 against 1.776, entropy 1.941 against
 * 2.021; 2^22 0.209 against 0.195 (421 tiles against 547; below 128 tiles of their own, small sorts
 * take the small tiles below). 384 x 27 again on an H100 (0.7.46, same runs): u32/u32 pairs 0.619
 * and 0.618 / 2.222 and 2.219 / 8.788 and 8.778 ms at 2^24 / 2^26 / 2^28 against 0.620 and 0.625 /
 * 2.236 and 2.234 / 8.849 and 8.840 (80 registers), i32/u32 0.626 / 2.225 against 0.631 / 2.240,
 * but f32/u32 0.705 / 2.523 against 0.628 / 2.233 (81 registers in the passes that map, one
 * workgroup an SM). So since 0.7.47 float keys take 384 x 26 (float_fewer_keys) and the others
 * 384 x 27 (i32 and descending u32 keys with values take 80 registers there, as u32's: i32/u32 2.242
 * and 2.234 ms at 2^26 against 2.241 and 2.242 in the first run below; descending pairs untimed).
 * H100, two trial builds whose u32 keys took 0.7.47's tile (the first with its code for them too),
 * each beside 0.7.46 in one run, two rounds, ms at 2^24 / 2^26 / 2^28: u32/u32 pairs 0.622 and
 * 0.620 / 2.220 and 2.219 / 8.810 and 8.831 against 0.623 and 0.624 / 2.232 and 2.238 / 8.876 and
 * 8.895 (CUB's 0.616 / 2.197 / 8.928), and 0.621 and 0.619 / 2.213 and 2.217 / 8.802 and 8.815
 * against 0.623 and 0.625 / 2.227 and 2.226 / 8.858 and 8.861 (CUB's 0.618 / 2.213 / 8.904). Tried
 * for float keys at 27 in those builds and dropped: the float map without a select (lib/keys.glsl)
 * left f32/u32's passes that map at 81 registers (first and last pass 0.669 and 0.667 ms at 2^26
 * against 0.515 and 0.526 at 26); both maps as xors under a mask, all ones in the pass that maps,
 * instead of a branch on the pass, took f32/u32 to 80 (2.215 and 2.208 ms at 2^26 against 26's
 * 2.231 and 2.234) but descending f32/u32 to 81, and f32 keys alone, at 256 x 28, to 81 (1.670 and
 * 1.663 ms against 1.515 and 1.506, another run). In the 0.7.46 runs, u32/u32 pairs in 384 x 24, 25
 * and 28 took 2.244 and 2.247, 2.238 and 2.250, and 2.760 and 2.765 ms at 2^26. Nor did the sorts
 * lose to a last, part-empty round of tiles over the SMs (as the scan's tiles had, scan_rows
 * below): per-key times at sizes that fill 24.9 to 26.1 rounds of the tiles the device holds at
 * once went smoothly, with no step at whole rounds (u32/u32 pairs 33.1 to 33.6 ps a key, the
 * slowest at 24.9 and 26.1 rounds; u64 keys 71.2 to 72.5 at 8.9 to 9.9 rounds; f32 keys 22.5 to
 * 22.6). u64 keys in 384 x 16 and 17 took 1.233 and 1.216 ms at 2^24 against 1.204 to 1.208 in the
 * preset's 384 x 18; f32 keys in 256 x 24, 26 and 30 1.572 to 1.581, 1.543 to 1.549 and 1.762 to
 * 1.776 ms at 2^26 against 1.506 to 1.515 in 256 x 28.
 * NVIDIA, 32-bit keys with 32-bit values (0.7.25): keys in registers with early counts, the
 * values loaded after the keys are written out, all at once (radix_onesweep.comp), in 512 x 15:
 * 64 registers at most let two workgroups of 512 share an SM. H200, 2^28 u32/u32 pairs, ms and
 * registers, each beside CUB's 7.41 to 7.49 ms in its run (some shapes with each load's index
 * clamped instead of a row count, up to two registers more): 512 x 15 7.69 and 7.71 (62), 448 x
 * 17 7.78 (70), 512 x 14 7.95 (59), 384 x 19 8.01 (80), 448 x 16 8.02 (66), 384 x 17 8.37 (70),
 * 384 x 14 8.48 (56, three workgroups an SM), 256 x 28 8.59 (114), 320 x 16 9.45 (66), and past
 * the registers for two workgroups, 512 x 16 10.92 (68), 384 x 23 11.20 (96; CUB's tile), 384 x
 * 20 11.74 (84); against 8.72 to 8.80 held at 384 x 14 (below). u32/u64 pairs keep their held
 * keys in 512 x 10, now with the values loaded the same way: 10.51 ms against 13.31 (same run).
 * Before (0.7.13 to 0.7.25, a path removed since), the values were loaded with the keys and held in
 * shared memory while the keys, in registers, were ranked: a tile of about 5400 keys (H200, 2^28
 * u32/u32 pairs, two rounds, same run, ms and registers): 384 x 14 8.759 (75), 320 x 17 8.784 (80),
 * 448 x 12 8.795 (71), 256 x 21 8.801 (88), 512 x 10 13.17 (71, one workgroup an SM), 384 x 14
 * without early counts 9.115 (77), against 9.837 (76) with the keys held beside the values at 256 x
 * 17; sorted keys at 2^26 2.151 ms against 2.409.
 * Another run: 384 x 14 8.680, 352 x 15 8.898 (76), 384 x 13 8.991 (72), 416 x 13 13.346 (74).
 * Before, held beside the keys, their tiles were of about 4300 keys (H100, 2^28 u32/u32
 * pairs, same run, ms and registers): 256 x 17 11.39 (107; 73 once full tiles load without
 * bounds checks), 256 x 16 11.55, 384 x 10 11.69 (66), 256 x 14 12.25, 384 x 9 12.32, 512 x 6
 * 12.86, 128 x 36 14.26 (154), against 12.29 at 512 x 13 with the values loaded after the look-back.
 * Loaded before the look-back into registers instead, they took 15.05 ms at 512 x 11 (87) and
 * 16.03 at 384 x 14. u32 keys with u64 values keep 512 x 10: 14.78 ms against 19.79 at 256 x 17
 * and 16.18 at 384 x 13. Before early counts, u32 keys alone kept 512 x 13 (7.10 ms; 384 x 16
 * 7.56, 384 x 14 7.85, 256 x 28 7.72, 256 x 24 8.08, 256 x 20 8.49).
 * NVIDIA, early counts (radix_onesweep.comp's EARLY_COUNTS: a tile's digit counts counted and
 * published before its keys are ranked, which takes fewer registers), H100, 2^28, same run, ms
 * and registers: u32 keys in 384 x 20 (CUB's tile; 48 KiB of shared memory at most) 6.77 (49),
 * 384 x 18 7.01 (45), 384 x 16 7.30 (41), 256 x 20 6.95 (48), 512 x 13 6.98 (45), 512 x 12 7.18,
 * 256 x 24 7.95 (56), 768 x 8 12.56, against 6.93 at 512 x 13 (60) without; 384 x 20 without
 * them took 2.55 ms at 2^26 against 1.75. u32/u32 pairs at 256 x 17 10.91 (74) against 10.98
 * without (256 x 20 10.91, 384 x 10 11.44, 512 x 8 12.75); but on an H200 once the ranking's
 * votes started from the whole subgroup (0.7.16), 10.13 ms without against 10.25 with (76
 * registers against 74; three rounds each, same run; 2^24 0.741 against 0.755, 2^26 2.611
 * against 2.643), so they went without; once the held keys' digits waited in registers
 * (0.7.17), with them again: 9.77 ms against 10.02 (H200, 2^28, same run). u32/u64 pairs keep
 * 512 x 10 without them: 14.45 against 14.66 with, 15.71 at 384 x 14 with, 15.83 at 384 x 13
 * without, 16.95 at 384 x 10. 64-bit keys keep 384 x 10 without them: u64 keys 22.13 against
 * 22.55 (38 registers against 61), 23.81 at 384 x 9, 23.95 at 256 x 14, 25.41 at 512 x 7 with
 * them.
 * NVIDIA, 13 keys: once the ranking kept one register per key (radix_onesweep.comp), 13 took
 * 60 registers for u32 keys (H100, 2^28, same run: 7.09 ms against 7.29 at 12 and 7.54 at 11
 * before that change at 64), f32 keys 61 (7.29 against 7.48 at 12), u32/u32 pairs 63 (12.32
 * against 12.56 at 12). Earlier measurements follow.
 * hold_keys (NVIDIA only, the one measured): the keys wait in shared memory while they are
 * ranked (radix_onesweep.comp), which leaves registers for more keys; two workgroups of 512
 * share an SM at up to 64 registers, two of 384 at up to 80. (Held, the tile needs up to 48
 * KiB of shared memory: a device with 32 KiB would get fewer keys per invocation.)
 * 64-bit keys, H100, same run, 384 x 10 against 512 x 6 (5 with
 * values): u64 keys 24.30 ms against 27.02 at 2^28 (75 registers against 53), u64/u64 pairs
 * 40.25 against 43.77 (70), u64/u32 37.44 against 41.08; slower where there are few tiles:
 * 2^16 u64/u64 pairs 0.147 ms against 0.127. A sweep (2^28 u64 keys, H100): 384 x 8 27.66
 * ms (65 registers), 256 x 10 25.32 (71), 256 x 12 28.49 (90); on an H200 320 x 12 24.53
 * (81), 448 x 8 24.55 (59), 384 x 9 25.31, 384 x 10 24.06. For 32-bit keys (before 0.7.4)
 * no shape beat 512 x 11 (H100, 2^28 u32 keys: 384 x 14 9.07 ms at 78 registers, 384 x 16
 * 12.68 at 88, 256 x 24 9.56 at 128, 768 x 8 13.78; u32/u64 pairs on an H200, 2^26: 384 x 14 3.97 ms against 3.66).
 * H100, 2^28 keys, same run (GPUSORT_SORT_KEYS_PER_THREAD, registers from
 * GPUSORT_PIPELINE_STATS): held, u32 keys took 8.58 ms at 11 keys (63 registers), 8.69 at 10,
 * 9.06 at 9, and in registers 9.08 at 9 (64); u32/u32 pairs 13.92 at 10 (62), 14.37 at 9, 22.23
 * at 11 (67). Another run: u32/u64 pairs 15.40 ms at 10 (62) against 19.49 at 5; u64 keys held
 * 27.04 ms at 6 (53) against 29.43 in registers at 5 (64; held at 5: 30.11); at 2^26 u64/u64
 * pairs held 11.01 ms at 5 against 12.01 in registers at 4, u64/u32 10.38 against 11.32 (at 5
 * in registers they took 65 registers and one workgroup per SM: 16.7 ms). Seven 64-bit keys
 * held would pass the 48 KiB of shared memory. Before keys were held, a 512 x 9 sort tile was
 * as fast as any shape measured on an H100 (5 to 30 keys, 256 to 1024 invocations), where 15
 * keys took 99 registers and one workgroup per SM. Scan tiles on NVIDIA: 512 x 11 rows since
 * 0.7.46 (at 2^24 u32 elements, 12 rows leave the last of 2.8 rounds of two workgroups an SM
 * part-filled, 11 fill 3.0: the likely cause). H100, `bench --scan-algos` with
 * GPUSORT_SCAN_ROWS, two rounds, same run, share of the copy at 2^24 / 2^25 / 2^26 / 2^27 /
 * 2^28: 11 rows 85.7 and 85.5 / 88.1 and 88.9 / 91.4 and 91.5 / 92.3 and 92.6 / 93.2 and
 * 93.5%, 12 rows 81.4 and 80.6 / 87.1 and 88.2 / 90.6 and 91.9 / 92.3 and 92.7 / 93.5 and
 * 92.9, 10 rows 85.8 and 82.5 / 87.5 and 88.5 / 91.1 and 90.2 / 91.3 and 92.7 / 92.4 and 92.9;
 * another run at 2^24: 11 rows 85.5 and 84.3, 12 81.2 and 80.9, 10 86.7 and 86.3, 9 83.1 and
 * 84.3, 13 80.9 and 82.1. 512 x 12 rows from 0.7.16 (H200, `bench --scan-algos`, 2^28 u32 sums,
 * same run: 0.678 and 0.681 ms against 0.700 and 0.695 at 384 x 16, 2^24 and 2^26 2 to 3% faster
 * too; one run of each other shape, 0.696 for the preset: 256 x 12 0.692, 256 x 16 0.696, 128 x 16
 * 0.722, 256 x 8 0.724, 384 x 12 0.741, 512 x 8 0.751, 384 x 20 0.840; 0.7.18, two rounds, 0.684
 * and 0.685 for the preset (74.9 and 75.0% of the copy): 256 x 12 0.696 to 0.698, 320 x 12 0.699 to
 * 0.700, 256 x 16 0.703 to 0.708, 256 x 24 0.731, 384 x 12 0.754, 512 x 8 0.760, 1024 x 6 0.777,
 * 512 x 16 0.798, 768 x 8 0.828, 640 x 10 0.832, 1024 x 4 0.873 to 0.879; 0.7.32, against 0.675 to
 * 0.685 at 64 registers, the most that lets two workgroups share an SM: 512 x 13 0.826, 512 x 14
 * 0.816, and in a trial build holding 1 to 5 more rows a tile in shared memory, loaded first and
 * written last, 0.827 to 0.874 at 90 to 118 registers). Files of 2^27 elements,
 * `scan -v`, same run: u64 sums 0.95 ms against 1.01 (116 registers against 148), u32 into
 * u64 1.36 against 1.43, f64 max 0.99 against 1.07, i32 min 0.34 against 0.35, f32 sums by
 * reduce-then-scan 0.411 against 0.422). 384 x 16 came when the scan began to issue every
 * row's load before scanning any (H100, 2^28 u32 sums, same run, GPU time as a share of the
 * copy's: 384 x 16 85.3% at 80 registers, 256 x 16 84.0%, 320 x 12 82.9%, 256 x 12 82.7%,
 * 512 x 8 79.9% (69.2% before that change), 512 x 16 78.3%, 128 x 32 79.0% at 156; 512 x 12
 * not measured there). The look-back family takes 1024 invocations before its own caps
 * (src/prim/compact.c), which hold every member but unique to 512 or fewer and its rows to at
 * most 4 of the scan's 12 (unique: 8): rle of u32 keys, capped at 512, took 1.545 ms in the
 * scan's former 384 against 1.309 in 512 (same run); unique took the 1024 from 0.7.29 until
 * its early walk came (0.7.33), with which it takes 512.
 * GPUSORT_SCAN_WORKGROUP sets both. Select and partition take tiles of 2 sub-tiles
 * (compact.comp; H100, 2^28 u32 keys, 256 x 16 keys a sub-tile, same run: select 1.20 ms
 * against 1.43 before, partition 1.40 against 1.62 in its 384 x 16 tiles before; lavapipe, 2^20
 * keys, `bench --compact`: select 18.9 to 21.1 ms in 2 against 22.4 to 23.0 in 1, partition 16.7
 * to 18.1 against 20.0 to 20.2). The AMD and Intel rows carry the earlier shapes at 32 lanes,
 * unmeasured (but 32-bit keys with 64-bit values take the pairs' 9 keys, 5 before 0.7.2).
 * NVIDIA's small sorts take tiles of 256 x 4, 256 x 8 and 512 x 8 keys, each once 128 tiles
 * fill it (H200, one run, `bench` at 2^14 to 2^22 with GPUSORT_SORT_WORKGROUP and
 * GPUSORT_SORT_KEYS_PER_THREAD, ms): a pass of few tiles is the serial work of one tile, and
 * the layouts' tiles of 5000 to 7700 keys leave 2^16 keys 9 to 13 tiles. u32 keys at 2^16
 * 0.053 in 256 x 4 against 0.066 in 384 x 20, at 2^18 0.061 in 256 x 8 against 0.070, at 2^19
 * 0.066 in 512 x 8 against 0.073 (at 2^20, 0.081 against 0.085, but there u32/u32 pairs and
 * u64 keys were as fast in their own tiles, which the 128 tiles' rule keeps); u64/u64 pairs at
 * 2^16 0.104 against 0.139, at 2^18 0.129 against 0.151; u32/u32 pairs at 2^16 0.055 against
 * 0.066, u64 keys 0.101 against 0.116. 128 x 8, 128 x 16 and 64 x 16 were slower at every size, 384 x 6
 * and 384 x 10 within 2% of these.
 * NVIDIA's small look-back scans take tiles of 4 rows (512 x 4 vectors, 8192 u32 elements)
 * below 256 of their own tiles (H200, `bench --scan-algos` with GPUSORT_SCAN_WORKGROUP and
 * GPUSORT_SCAN_ROWS, one run, ms for 2^14 / 2^16 / 2^18 / 2^20 / 2^22 u32 sums): 512 x 12
 * 0.014 / 0.015 / 0.016 / 0.017 / 0.023, 512 x 4 0.011 / 0.012 / 0.012 / 0.014 / 0.021, 256 x 4
 * 0.011 / 0.012 / 0.012 / 0.014 / 0.022, 256 x 8 0.013 / 0.013 / 0.013 / 0.014 / 0.020, 512 x 8
 * 0.013 / 0.013 / 0.014 / 0.015 / 0.020, 128 x 4 0.011 / 0.012 / 0.012 / 0.015 / 0.022; at 2^24
 * (above the bound) 512 x 12 took 0.060 either way in the run that measured the choice.
 * NVIDIA's sort histogram runs in at most 1056 workgroups, as many as an H200 or H100 holds at
 * once (132 multiprocessors x 8 of 256), where others keep 4096; fewer workgroups clear and
 * add up fewer copies of the histograms (H200, two rounds each, same runs, sort ms: u32 keys
 * at 2^24 0.457 and 0.455 against 0.479 and 0.481, the histogram 0.050 against 0.072; at 2^28
 * 6.299 and 6.293 against 6.306 and 6.305; u64 keys 1.224 and 1.225 against 1.228 and 1.231
 * at 2^24, 17.61 against 17.64 at 2^28; in 512, 2^28 u32 keys took 6.313, in 2048, 2^24 0.466).
 * Fewer again were no faster on an H100 (0.7.51, `bench -v --reps 9`, two rounds, same run, sort
 * ms at 2^24 / 2^26 / 2^28): u64 keys in 264 workgroups 1.198 and 1.199 / 4.355 and 4.357 /
 * 16.612 and 16.620, in 528 1.199 and 1.203 / 4.356 and 4.358 / 16.614 and 16.615, in 1056 1.202
 * and 1.204 / 4.361 and 4.364 / 16.604 and 16.617 (the histogram stage 0.076, 0.077 and 0.081 ms
 * at 2^24); u32 keys and u32/u32 pairs within 0.5% of each other at every size. In 132 (another
 * run), u32 keys at 2^26 took 1.504 ms against 1.483 in 1056.
 * NVIDIA's rle and reduce-by-key never take the look-back family's subgroup walk
 * (runs_subgroup_walk_wrong; compact.comp's walk_for_count), not even where
 * GPUSORT_COMPACT_SUBGROUP_WALK asks for it: on an H100 (0.7.51, driver 580, `test_compact small`
 * with it) their tiles read wrong counts: 267 of 1648 checks failed (reduce-by-key's: rle walks
 * early there), and rle's 33 of 108 without its early walk, where select's, partition's and
 * unique's passed (196 and 180). Nor was it runs_tile's shuffles' place before the walk (a
 * trial with them after it, 0.7.52: 12 of 384 failed). `test_compact matrix u32 only:select`
 * checks this bound on the device it runs on (passed on the H100, 0.7.52: 56 checks).
 * lavapipe runs subgroups of 8 only and keeps its keys in registers. lavapipe (Mesa 22.3, two
 * cores; `gpusort bench --sizes 2^22 --algo reduce-then-scan`, sort time over the copy's):
 * 128 x 16 took 78 copies, 64 x 16 82, 128 x 20 81, 128 x 12 90, 64 x 24 87, 128 x 9 107;
 * every shared-memory access there is a loop over the lanes, and a tile's per-digit work
 * (counters of every subgroup, look-back, digit starts) is paid per tile, so the tile is long
 * (2^21 u64 keys: 106 copies at 16 keys, 148 at 9, 167 at 5).
 */
typedef struct {
  const char *name;
  uint32_t vendor_id; /* ANY, or PCI vendor */
  uint32_t driver_id; /* ANY, or the driver (VkDriverId) */
  uint32_t subgroup_size;
  gs_sort_tile sort[GS_SORT_LAYOUTS]; /* per layout; a workgroup of 0: 16 subgroups */
  uint32_t hold_keys;    /* the layouts whose keys wait in shared memory while ranked */
  uint32_t early_counts; /* the layouts whose tiles count and publish their digits before ranking
                          * their keys (radix_onesweep.comp's EARLY_COUNTS) */
  uint32_t split_maps;   /* the layouts whose first and last passes take pipelines of their own */
  /* the layouts whose float keys' tiles hold a key an invocation fewer */
  uint32_t float_fewer_keys;
  gs_sort_tile small[GS_SORT_SMALL_TILES]; /* tiles of small sorts, smallest first (none: {0}) */
  uint32_t small_min_tiles;
  uint32_t scan_small_rows, scan_small_min_tiles; /* small look-back scans' rows (0: none) */
  uint32_t scan_workgroup, scan_rows, spin;
  uint32_t histogram_groups; /* 0: 4096 */
  uint64_t submit_keys;
  bool forward_progress, onesweep;
  uint64_t bitonic_max_keys;
  uint32_t compact_workgroup; /* the look-back family's workgroup; 0: the scan's */
  uint32_t compact_subtiles;  /* sub-tiles per look-back of select and partition (0: 1) */
  uint32_t compact_read_ahead_kib; /* select's and partition's read-ahead (0: none) */
  uint32_t compact_early_walk;     /* GPUSORT_EARLY_WALK_*: a subgroup walks while the others load */
  bool compact_subgroup_walk;      /* the others' count walk by subgroup 0 (compact.comp's walk_for_count) */
  bool runs_subgroup_walk_wrong;   /* rle and reduce-by-key read wrong counts by that walk: never taken */
  bool scan_early_walk;            /* the look-back scan: a subgroup walks while the others load */
  uint32_t scan_read_ahead_kib;    /* ... and reads the input this far ahead as it walks (0: none) */
} preset;

/* submit_keys: lavapipe runs a sort pass at about 15 M keys/s on two cores (2^22 keys: a
 * quarter of a second); a discrete GPU of these vendors at billions, so a pass of 2^32 keys
 * takes milliseconds and needs no bound; a device unknown to the table might be a slow
 * integrated one. */
/* forward_progress: the mobile and Apple GPUs below are known not to promise that a spinning
 * workgroup lets an earlier one run (Onesweep's look-back hung or crawled on them in other
 * projects), so `auto` sorts by reduce-then-scan there. onesweep: with forward progress,
 * whether `auto` takes Onesweep (else reduce-then-scan). lavapipe: 2^22 u32 keys in 128 x 16
 * tiles took 107 copies by Onesweep against 78 by reduce-then-scan: its look-back walks and
 * waits over 256 digits per tile, each access a loop over the lanes, where reduce-then-scan's
 * upsweep and table scan cost less. bitonic_max_keys: the crossover below
 * which `auto` sorts by bitonic sort. lavapipe: a whole `gpusort sort` of u32 keys took 0.62 s
 * by bitonic against 0.65 s by Onesweep at 2^14 keys, 0.81 against 0.69 at 2^15 (bitonic
 * needs one pipeline where Onesweep needs five, and lavapipe compiles each as the device
 * opens; on the GPU alone Onesweep was faster at every size). H100 (`gpusort bench --algo`,
 * GPU time of u32 keys): bitonic 0.051 ms against Onesweep's 0.061 at 2^12, 0.075 against
 * 0.063 at 2^13. */
/* split_maps: the first and last passes of mapped keys (signed, float or descending) in
 * pipelines that map only in or only out, with no test of the pass flags. 64-bit keys alone on
 * NVIDIA: i64 keys' pipeline for both takes 86 registers (one workgroup an SM), the split ones
 * 80; f64 keys' 80, the split ones 78 and 76. H100, 0.7.45 against 0.7.44, same run, ms at 2^24
 * / 2^26 / 2^28: f64 1.222 / 4.401 / 16.696 against 1.250 / 4.563 / 17.378 (first and last pass
 * at 2^28 2.02 and 1.97 against 2.35 and 2.33), i64 1.212 / 4.382 / 16.669 against 1.317 /
 * 4.826 / 18.611 (1.99 and 1.96 against 2.94 and 2.96); u64 keys 16.62 in both in another
 * run. 32-bit keys lost by it at 2^24 and 2^26, though their first and last passes kept 79
 * registers either way (a trial build, same run): f32 0.461 to 0.463 / 1.521 to 1.527 / 5.819 to
 * 5.820 against 0.438 to 0.440 / 1.513 to 1.514 / 5.831 to 5.833, i32 0.457 / 1.513 / 5.764 against
 * 0.438 / 1.503 / 5.784, f32 keys with u32 values 0.667 / 2.275 / 8.932 against 0.629 / 2.233 /
 * 8.894; at 2^24 each of their passes but the third took 6 to 8 us more, the histogram 2 (cause not
 * found). With values, 64-bit keys gained little or lost (0.7.45, GPUSORT_SORT_SPLIT_MAPS=1, 2^26 /
 * 2^28): f64 keys with u64 values 9.122 / 33.255 against 9.039 / 33.235, with u32 values 6.967 /
 * 27.283 against 6.967 / 27.267, i64 with u64 values 8.686 / 31.826 against 8.805 / 32.581. */
#define BIT GS_SORT_LAYOUT_BIT
/* One workgroup for every layout, keys32 keys each for 32-bit keys (with or without values),
 * keys64 for 64-bit keys: the presets measured no further than their first shapes. */
#define TILES_OF(workgroup, keys32, keys64)                                                      \
  {[GS_SORT_KEYS32] = {workgroup, keys32}, [GS_SORT_PAIRS32_32] = {workgroup, keys32},          \
   [GS_SORT_PAIRS32_64] = {workgroup, keys32}, [GS_SORT_KEYS64] = {workgroup, keys64},           \
   [GS_SORT_PAIRS64] = {workgroup, keys64}}
static const preset presets[] = {
    {.name = "nvidia", .vendor_id = 0x10DE, .driver_id = ANY, .subgroup_size = 32,
     .sort = {[GS_SORT_KEYS32] = {256, 28}, [GS_SORT_PAIRS32_32] = {384, 27}, [GS_SORT_PAIRS32_64] = {512, 10},
              [GS_SORT_KEYS64] = {384, 18}, [GS_SORT_PAIRS64] = {384, 13}},
     .hold_keys = BIT(GS_SORT_PAIRS32_64),
     .early_counts = BIT(GS_SORT_KEYS32) | BIT(GS_SORT_PAIRS32_32) | BIT(GS_SORT_KEYS64) | BIT(GS_SORT_PAIRS64),
     .split_maps = BIT(GS_SORT_KEYS64), .float_fewer_keys = BIT(GS_SORT_PAIRS32_32),
     .scan_workgroup = 512, .scan_rows = 11, .spin = 256, .submit_keys = 0, .forward_progress = true, .onesweep = true,
     .bitonic_max_keys = 1u << 12, .compact_workgroup = 1024, .compact_subtiles = 2, .histogram_groups = 1056,
     .compact_read_ahead_kib = 8192, .compact_early_walk = GPUSORT_EARLY_WALK_UNIQUE | GPUSORT_EARLY_WALK_RLE,
     .runs_subgroup_walk_wrong = true, .scan_early_walk = true,
     .scan_read_ahead_kib = 8192, .small = {{256, 4}, {256, 8}, {512, 8}}, .small_min_tiles = 128, .scan_small_rows = 4,
     .scan_small_min_tiles = 256},
    {.name = "amd", .vendor_id = 0x1002, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(512, 9, 5),
     .scan_workgroup = 512, .scan_rows = 8, .spin = 256, .submit_keys = 0, .forward_progress = true, .onesweep = true},
    {.name = "intel", .vendor_id = 0x8086, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(512, 9, 5),
     .scan_workgroup = 512, .scan_rows = 8, .spin = 256, .submit_keys = 1u << 26, .forward_progress = true,
     .onesweep = true},
    {.name = "lavapipe", .vendor_id = ANY, .driver_id = VK_DRIVER_ID_MESA_LLVMPIPE, .subgroup_size = 8,
     .sort = TILES_OF(128, 16, 16),
     .scan_workgroup = 128, .scan_rows = 8, .spin = 256, .submit_keys = 1u << 22, .forward_progress = true,
     .onesweep = false, .bitonic_max_keys = 1u << 14, .compact_subtiles = 2, .compact_subgroup_walk = true},
    {.name = "apple", .vendor_id = 0x106B, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 26, .forward_progress = false, .onesweep = true},
    {.name = "arm", .vendor_id = 0x13B5, .driver_id = ANY, .subgroup_size = 16, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "qualcomm", .vendor_id = 0x5143, .driver_id = ANY, .subgroup_size = 64, .sort = TILES_OF(0, 9, 5),
     .scan_rows = 8, .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "imagination", .vendor_id = 0x1010, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5),
     .scan_rows = 8, .spin = 256, .submit_keys = 1u << 24, .forward_progress = false, .onesweep = true},
    {.name = "generic", .vendor_id = ANY, .driver_id = ANY, .subgroup_size = 32, .sort = TILES_OF(0, 9, 5), .scan_rows = 8,
     .spin = 256, .submit_keys = 1u << 26, .forward_progress = true, .onesweep = true}, /* 0: 16 subgroups of the size the device runs */
};
#undef TILES_OF
#undef BIT

static uint32_t clamp_subgroup(const gs_device_info *info, uint32_t want) {
  if (want < info->min_subgroup_size) return info->min_subgroup_size;
  if (want > info->max_subgroup_size) return info->max_subgroup_size;
  return want;
}

/* The preset's workgroup (`want`), else 16 subgroups up to 512 invocations; at least 64, within
 * the device's limits. (At least 64: llvmpipe in Mesa 22.3 computed wrong results for
 * workgroups of 2 to 6 subgroups of 8.) */
static uint32_t workgroup_for(const gs_device_info *info, uint32_t subgroup, uint32_t want) {
  uint32_t wg = want ? want : subgroup * 16;
  if (!want && wg > 512) wg = 512;
  if (wg < 64) wg = 64;
  const uint32_t limit = gs_workgroup_limit(info, subgroup);
  while (wg > limit && wg > subgroup) wg /= 2;
  return wg - wg % subgroup; /* (384 halves to 48, not whole subgroups of 32) */
}

/* A set of layouts from an on/off knob: every layout, none, or (unset) the preset's. */
static uint32_t layouts_switched(uint32_t knob, uint32_t preset_layouts) {
  return knob == GS_KNOB_UNSET ? preset_layouts : knob ? GS_SORT_LAYOUT_ALL : 0;
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
  for (int l = 0; l < GS_SORT_LAYOUTS; l++) {
    gs_sort_tile *t = &c->sort_tiles[l];
    t->workgroup_size = k->sort_workgroup ? k->sort_workgroup : workgroup_for(info, c->subgroup_size, p->sort[l].workgroup_size);
    t->keys_per_thread = k->sort_keys_per_thread ? k->sort_keys_per_thread : p->sort[l].keys_per_thread;
  }
  /* small sorts: the knob's tiles, else none where a knob fixed the tile, else the preset's */
  if (k->sort_small_tile_count != GS_KNOB_UNSET) {
    c->sort_small_tile_count = k->sort_small_tile_count;
    for (uint32_t i = 0; i < c->sort_small_tile_count; i++)
      c->sort_small_tiles[i] = (gs_sort_tile){k->sort_small_tiles[i][0], k->sort_small_tiles[i][1]};
    c->sort_small_min_tiles = k->sort_small_min_tiles;
  } else if (!k->sort_workgroup && !k->sort_keys_per_thread) {
    for (uint32_t i = 0; i < GS_SORT_SMALL_TILES && p->small[i].keys_per_thread; i++)
      c->sort_small_tiles[c->sort_small_tile_count++] =
          (gs_sort_tile){workgroup_for(info, c->subgroup_size, p->small[i].workgroup_size), p->small[i].keys_per_thread};
    c->sort_small_min_tiles = p->small_min_tiles;
  }
  if (!c->sort_small_min_tiles) c->sort_small_min_tiles = 128;
  c->sort_hold_keys = layouts_switched(k->sort_hold_keys, p->hold_keys);
  c->sort_early_counts = layouts_switched(k->sort_early_counts, p->early_counts);
  c->sort_split_maps = layouts_switched(k->sort_split_maps, p->split_maps);
  /* (a knob's keys per invocation hold for every sort unless this knob asks too) */
  c->sort_float_fewer_keys =
      layouts_switched(k->sort_float_fewer_keys, k->sort_keys_per_thread ? 0 : p->float_fewer_keys);
  c->scan_workgroup_size = k->scan_workgroup ? k->scan_workgroup : workgroup_for(info, c->subgroup_size, p->scan_workgroup);
  c->scan_rows = k->scan_rows ? k->scan_rows : p->scan_rows;
  /* small scans: the knob's rows, else none where a knob fixed the tile, else the preset's */
  if (k->scan_small_rows != GS_KNOB_UNSET) {
    c->scan_small_rows = k->scan_small_rows;
    c->scan_small_min_tiles = k->scan_small_min_tiles;
  } else if (!k->scan_workgroup && !k->scan_rows) {
    c->scan_small_rows = p->scan_small_rows;
    c->scan_small_min_tiles = p->scan_small_min_tiles;
  }
  if (!c->scan_small_min_tiles) c->scan_small_min_tiles = 256;
  c->compact_workgroup_size = k->scan_workgroup       ? k->scan_workgroup
                              : p->compact_workgroup ? workgroup_for(info, c->subgroup_size, p->compact_workgroup)
                                                     : c->scan_workgroup_size;
  c->compact_subtiles = k->compact_subtiles ? k->compact_subtiles : p->compact_subtiles ? p->compact_subtiles : 1;
  c->compact_read_ahead_kib = k->compact_read_ahead_kib != GS_KNOB_UNSET ? k->compact_read_ahead_kib : p->compact_read_ahead_kib;
  c->compact_early_walk = k->compact_early_walk != GS_KNOB_UNSET ? k->compact_early_walk : p->compact_early_walk;
  c->compact_subgroup_walk =
      k->compact_subgroup_walk != GS_KNOB_UNSET ? k->compact_subgroup_walk != 0 : p->compact_subgroup_walk;
  /* (a correctness bound, not a tuning: no knob lifts it) */
  c->compact_runs_subgroup_walk = !p->runs_subgroup_walk_wrong;
  c->scan_early_walk = k->scan_early_walk != GS_KNOB_UNSET ? k->scan_early_walk != 0 : p->scan_early_walk;
  /* (the walker reads ahead: without the walk, none) */
  c->scan_read_ahead_kib = !c->scan_early_walk                         ? 0
                           : k->scan_read_ahead_kib != GS_KNOB_UNSET ? k->scan_read_ahead_kib
                                                                     : p->scan_read_ahead_kib;
  c->lookback_spin = k->lookback_spin ? k->lookback_spin : p->spin;
  c->histogram_groups = k->histogram_groups ? k->histogram_groups : p->histogram_groups ? p->histogram_groups : 4096;
  c->submit_keys = k->submit_keys ? k->submit_keys : p->submit_keys;
  c->forward_progress = p->forward_progress;
  c->auto_onesweep = p->forward_progress && p->onesweep;
  c->bitonic_max_keys = p->bitonic_max_keys;
  const bool tuned = k->subgroup_size || k->sort_workgroup || k->sort_keys_per_thread || k->scan_workgroup ||
                     k->scan_rows || k->compact_subtiles || k->histogram_groups || k->lookback_spin || k->submit_keys ||
                     k->sort_hold_keys != GS_KNOB_UNSET || k->sort_early_counts != GS_KNOB_UNSET ||
                     k->sort_split_maps != GS_KNOB_UNSET || k->sort_float_fewer_keys != GS_KNOB_UNSET ||
                     k->sort_small_tile_count != GS_KNOB_UNSET || k->scan_small_rows != GS_KNOB_UNSET ||
                     k->compact_read_ahead_kib != GS_KNOB_UNSET || k->compact_early_walk != GS_KNOB_UNSET ||
                     k->compact_subgroup_walk != GS_KNOB_UNSET ||
                     k->scan_early_walk != GS_KNOB_UNSET || k->scan_read_ahead_kib != GS_KNOB_UNSET;
  snprintf(c->preset, sizeof c->preset, "%s%s", p->name, tuned ? " (tuned by GPUSORT_*)" : "");
}

gs_sort_layout gs_sort_layout_of(unsigned key_bytes, unsigned value_bytes) {
  if (key_bytes == 8) return value_bytes ? GS_SORT_PAIRS64 : GS_SORT_KEYS64;
  return value_bytes == 8 ? GS_SORT_PAIRS32_64 : value_bytes ? GS_SORT_PAIRS32_32 : GS_SORT_KEYS32;
}

gs_sort_algo gs_sort_algo_for(const gs_device_config *c, gs_sort_algo requested, uint64_t n) {
  if (requested != GS_SORT_AUTO) return requested;
  if (n <= c->bitonic_max_keys) return GS_SORT_BITONIC;
  return c->auto_onesweep ? GS_SORT_ONESWEEP : GS_SORT_REDUCE_THEN_SCAN;
}

const char *gs_sort_algo_name(gs_sort_algo algo) {
  static const char *const names[] = {"auto", "onesweep", "reduce-then-scan", "bitonic"};
  return (unsigned)algo < sizeof names / sizeof names[0] ? names[algo] : NULL;
}
