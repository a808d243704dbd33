#!/usr/bin/env bash
# One device call: build the library, then scripts/experiments/ws_timeline.cu (rung 17's kernel with
# clock64 stamps, RUNGS_WS_TIMELINE) and run it at the sizes given (default 2048). The library's
# kernel carries no stamps: the probe compiles the stamped kernel of commit d1f851d
# (src/gemm/wgmma_ws.cuh there, rung 17's and 21's code the same as today's parts).
# Usage: scripts/experiments/ws_timeline.sh [sizes]   output on stdout and in $OUT/ws_timeline.txt
# (RUNG=21 for rung 21)
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs
log "ws_timeline"
mkdir -p build-experiments/ws_timeline_src/gemm
git show d1f851d:src/gemm/wgmma_ws.cuh >build-experiments/ws_timeline_src/gemm/wgmma_ws.cuh ||
  { echo "ws_timeline: needs commit d1f851d in this clone (git fetch)" >&2; exit 1; }
nvcc -std=c++17 -O3 --generate-code=arch=compute_90a,code=sm_90a -DRUNGS_HAVE_SM90A=1 -DRUNGS_WS_TIMELINE -Iinclude \
  -Ibuild-experiments/ws_timeline_src -Isrc \
  --expt-relaxed-constexpr scripts/experiments/ws_timeline.cu build-gpu/librungs.a -lcublas -lcuda \
  -o build-experiments/ws_timeline 2>&1 | grep -v Advisory
for n in ${1:-2048}; do build-experiments/ws_timeline "$n" ${RUNG:-17} | tee -a "$OUT/ws_timeline.txt"; done
