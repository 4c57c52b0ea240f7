#!/usr/bin/env bash
# gpusort's checks and benchmarks on a machine with an NVIDIA GPU, beside the anchors, in one
# run (ratios are only meaningful within one run on one machine).
#
# usage: scripts/gpu-bench.sh BUILD_DIR ANCHORS_DIR RESULTS_DIR [STEPS]
#   ANCHORS_DIR holds cub_bench.cu and e2e_peers.py (CUB radix sort/scan and device copy;
#   numpy and CuPy file-to-file sorts). STEPS (default "tests anchors bench compact vulkan e2e") picks
#   parts; "vulkan" times a sort recorded through the Vulkan tier in an application's own
#   command buffer (tests/test_vulkan_tier bench) beside gpusort bench.
# Logs go to RESULTS_DIR; a summary is printed last.
set -u
build=$1 anchors=$2 results=$3
steps=${4:-tests anchors bench compact vulkan e2e}
mkdir -p "$results"
has() { [[ " $steps " == *" $1 "* ]]; }
log() { echo "== $*" | tee -a "$results/summary.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader \
  > "$results/gpu.txt" 2>&1
log "GPU: $(cat "$results/gpu.txt")"
"$build/gpusort" devices | tee "$results/devices.txt"

if has tests; then
  for mode in matrix types bits stability large fallback placements; do
    "$build/tests/test_sort" $mode > "$results/test_sort_$mode.txt" 2>&1
    log "test_sort $mode: rc=$? $(tail -1 "$results/test_sort_$mode.txt")"
  done
  GPUSORT_MAX_WORKGROUPS=5 "$build/tests/test_sort" fold > "$results/test_sort_fold.txt" 2>&1
  log "test_sort fold: rc=$? $(tail -1 "$results/test_sort_fold.txt")"
  for mode in matrix acc wrap references deterministic reduce; do
    "$build/tests/test_scan" $mode > "$results/test_scan_$mode.txt" 2>&1
    log "test_scan $mode: rc=$? $(tail -1 "$results/test_scan_$mode.txt")"
  done
  GPUSORT_SCAN_SPLIT=1 "$build/tests/test_scan" matrix > "$results/test_scan_split.txt" 2>&1
  log "test_scan matrix, split descriptors: rc=$? $(tail -1 "$results/test_scan_split.txt")"
  GPUSORT_SCAN_WORKGROUP=64 GPUSORT_SCAN_ROWS=1 "$build/tests/test_scan" levels > "$results/test_scan_levels.txt" 2>&1
  log "test_scan levels: rc=$? $(tail -1 "$results/test_scan_levels.txt")"
  "$build/tests/test_compact" matrix > "$results/test_compact_matrix.txt" 2>&1
  log "test_compact matrix: rc=$? $(tail -1 "$results/test_compact_matrix.txt")"
  # the family in shapes other than the preset's (rle counted wrong past 4 rows on an H200:
  # src/prim/compact.c)
  for workgroup in 128 256; do for keys in u32 u64; do
    GPUSORT_SCAN_WORKGROUP=$workgroup "$build/tests/test_compact" small $keys > "$results/test_compact_$workgroup$keys.txt" 2>&1
    log "test_compact small $keys, workgroup $workgroup: rc=$? $(tail -1 "$results/test_compact_$workgroup$keys.txt")"
  done; done
  "$build/tests/test_api" /tmp/gpusort-api-work > "$results/test_api.txt" 2>&1
  log "test_api: rc=$? $(tail -1 "$results/test_api.txt")"
  python3 tests/test_cli.py "$build/gpusort" . > "$results/test_cli.txt" 2>&1
  log "test_cli: rc=$? $(tail -1 "$results/test_cli.txt")"
fi

if has anchors; then
  nvcc -O3 -arch=native -o /tmp/cub_bench "$anchors/cub_bench.cu" > "$results/nvcc.txt" 2>&1 &&
    /tmp/cub_bench 16 18 20 22 24 26 28 > "$results/cub.txt" 2>&1
  log "CUB anchors (rc=$?):"
  grep -E "n=(16777216|67108864|268435456) " "$results/cub.txt" | tee -a "$results/summary.txt"
fi

if has bench; then
  for spec in "--keys u32" "--keys f32" "--keys u64" "--keys u32 --values u32"; do
    name=$(echo "$spec" | tr -d ' -')
    "$build/gpusort" bench -v $spec --sizes 2^24,2^26,2^28 > "$results/bench_$name.txt" 2>&1
    log "gpusort bench $spec (rc=$?):"
    grep -vE "^ +(vkCmdCopyBuffer|passes)" "$results/bench_$name.txt" | tail -n +3 | tee -a "$results/summary.txt"
  done
  # throughput against n for the README's plot: bench --json from 2^16 to 2^28, CUB beside it
  jsons=()
  for spec in "--keys u32" "--keys f32" "--keys u32 --values u32" "--keys u64" "--keys u64 --values u64"; do
    name=$(echo "$spec" | tr -d ' -')
    "$build/gpusort" bench --json $spec --sizes 2^16,2^18,2^20,2^22,2^24,2^26,2^28 > "$results/plot_$name.json" 2> /dev/null
    jsons+=("$results/plot_$name.json")
  done
  python3 "$(dirname "$0")/plot-bench.py" "$results/throughput.png" "${jsons[@]}" --cub "$results/cub.txt" \
    --title "gpusort and CUB, $(cut -d, -f1 "$results/gpu.txt"), $(date +%Y-%m-%d)" > "$results/plot.txt" 2>&1
  log "plot (rc=$?): $results/throughput.png"
  "$build/gpusort" bench --scan-algos --sizes 2^24,2^26,2^28 > "$results/bench_scan.txt" 2>&1
  log "gpusort bench --scan-algos (rc=$?):"
  tail -n +4 "$results/bench_scan.txt" | tee -a "$results/summary.txt"
fi

if has compact; then
  # the look-back family beside CUB's (cub.txt: cub_select_if ... cub_reduce_by_key), with the
  # compiler's register and spill counts of its pipelines
  GPUSORT_PIPELINE_STATS=1 "$build/gpusort" bench --compact --sizes 2^24,2^26,2^28 > "$results/bench_compact.txt" 2>&1
  log "gpusort bench --compact (rc=$?):"
  grep -vi "regist\|spill\|pipeline" "$results/bench_compact.txt" | tail -n +4 | tee -a "$results/summary.txt"
  grep -E "^cub_(select|partition|unique|rle|reduce)" "$results/cub.txt" | tee -a "$results/summary.txt"
fi

if has vulkan; then
  log "Vulkan tier (an application's own command buffer and timestamps) beside gpusort bench:"
  for n in 16777216 268435456; do
    "$build/tests/test_vulkan_tier" "$build/tests" bench $n 15 2>&1 | grep -E "median|failed" | tee -a "$results/summary.txt"
    "$build/gpusort" bench --sizes $n --reps 15 | tail -1 | tee -a "$results/summary.txt"
  done
fi

if has e2e; then
  in=/tmp/gpusort-e2e-in.bin
  "$build/gpusort" gen -q -f --keys u32 -n 2^28 "$in"
  cat "$in" > /dev/null
  for i in 1 2 3; do
    rm -f /tmp/gpusort-e2e-cp.bin
    s=$(date +%s.%N); cp "$in" /tmp/gpusort-e2e-cp.bin; e=$(date +%s.%N)
    log "cp 1 GiB run $i: $(awk "BEGIN{print $e - $s}") s"
    s=$(date +%s.%N); "$build/gpusort" -f --keys u32 "$in" /tmp/gpusort-e2e-out.bin 2> "$results/e2e_$i.txt"
    rc=$?; e=$(date +%s.%N)
    log "gpusort 1 GiB run $i: rc=$rc $(awk "BEGIN{print $e - $s}") s wall"
    tee -a "$results/summary.txt" < "$results/e2e_$i.txt"
  done
  "$build/gpusort" check --keys u32 /tmp/gpusort-e2e-out.bin 2>&1 | tee -a "$results/summary.txt"
  [ -f "$anchors/e2e_peers.py" ] && python3 "$anchors/e2e_peers.py" 28 /tmp > "$results/peers.txt" 2>&1
  log "peers:"; tee -a "$results/summary.txt" < "$results/peers.txt"
  rm -f "$in" /tmp/gpusort-e2e-cp.bin /tmp/gpusort-e2e-out.bin /tmp/in_u32.bin /tmp/o_np.bin /tmp/o_cp.bin
fi
log "done"
