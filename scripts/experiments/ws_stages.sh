#!/usr/bin/env bash
# One device call (seventeenth session): rung 17's timeline (scripts/experiments/ws_timeline.cu) as built,
# with 3 stages, and with 3 stages and a 32 KB C buffer per consumer (C's two chunks filled and stored
# with no wait between them: what the epilogue costs when its TMA stores need not drain first).
# Usage: scripts/experiments/ws_stages.sh [sizes]   (default "4096 2048"); output on stdout.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs
mkdir -p build-experiments
i=0
for cfg in "" "-DRUNGS_WS_STAGES=3" "-DRUNGS_WS_STAGES=3 -DRUNGS_WS_C_BYTES=32768"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  nvcc -std=c++17 -O3 --generate-code=arch=compute_90a,code=sm_90a -DRUNGS_HAVE_SM90A=1 -DRUNGS_WS_TIMELINE $cfg -Iinclude \
    -Isrc --expt-relaxed-constexpr scripts/experiments/ws_timeline.cu build-gpu/librungs.a -lcublas -lcuda \
    -o "build-experiments/ws_stages_$i" 2>&1 | grep -v Advisory
  for n in ${1:-4096 2048}; do
    echo "--- [${cfg:-4 stages, 16 KB C}] $n^3"
    "build-experiments/ws_stages_$i" "$n" | grep -E "event time|^  [0-9]:|epilogue|first start"
  done
done
