#!/usr/bin/env bash
# gemm_host at 1024^3 pinned (docs/gemm_host.md: warptile split-K was not kept as the panel rung;
# 256 x 1024 x 1024 0.0284 ms against cuBLAS 0.0248): the panel products alone (warptile with split-K
# against cuBLAS at m x 1024 x 1024), then the flow with each as the panel rung over a few plans, then
# one traced call per rung. Builds build-exp's CLI (its experiment flags: --plan, --trace); output on stdout.
# Usage: scripts/experiments/host_plans/host_panels.sh ["plans"] ["variants"]
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_exp
build_exp rungs_cli
R=build-exp/rungs
log "panel products"
for m in 128 256 512 1024; do
  $R bench gemm --m "$m" --n 1024 --k 1024 --variant warptile,cublas --quiet | grep -E "warptile|cublas"
done
log "flows"
for v in ${2:-cublas warptile}; do
  for p in ${1:-4x1 8x1 2x1 4x1:k1/0.25}; do
    $R bench gemm_host --size 1024 --memory pinned --reps 50 --variant "$v" --plan "$p" --quiet | grep -E "^1024"
  done
done
log "traces"
for v in ${2:-cublas warptile}; do
  $R bench gemm_host --size 1024 --memory pinned --variant "$v" --plan 4x1 --trace --quiet | tee -a "$OUT/trace.txt" |
    grep -vE "^ *H +[0-9]" | tail -40
done
