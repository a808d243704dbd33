#!/usr/bin/env bash
# One device call (twentieth session): do the bench's pageable gemm_host rows depend on what ran
# before them in the process? `rungs bench gemm_host --size 4096` with the pageable row alone and
# after the pinned row, alternated, twice each. Output to stdout and $OUT/order.txt.
cd "$(dirname "$0")/../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_gpu rungs_cli
log runs
for i in 1 2; do
  for mem in pageable pinned,pageable; do
    echo "--- --memory $mem (run $i)"
    build-gpu/rungs bench gemm_host --size 4096 --memory $mem --format csv 2>/dev/null | cut -d, -f1-12
  done
done 2>&1 | tee "$OUT/order.txt"
log done
