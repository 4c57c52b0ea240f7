#!/bin/sh
# Runs a libFuzzer target for a bounded time: run.sh TARGET SECONDS WORKDIR SEEDS [OPTION...]
# (OPTIONs go to libFuzzer, e.g. -dict=FILE). New inputs go to WORKDIR/corpus, never to SEEDS
# (the corpus kept in the source tree); a crash goes to WORKDIR/artifacts, named in the log,
# and fails the run. To reproduce one: TARGET WORKDIR/artifacts/crash-...
set -eu
target=$1 seconds=$2 work=$3 seeds=$4
shift 4
mkdir -p "$work/corpus" "$work/artifacts"
# Undefined behaviour stops the target as a memory error does.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# -error_exitcode=1: libFuzzer's own default, 77, is what meson takes for a skipped test.
exec "$target" -max_total_time="$seconds" -artifact_prefix="$work/artifacts/" -print_final_stats=1 -error_exitcode=1 \
  "$@" "$work/corpus" "$seeds"
