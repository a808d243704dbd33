#!/usr/bin/env bash
# Rungs 20 and 23 (wgmma_ragged, wgmma_balanced) on shapes that are not tile multiples (docs/gemm_tc.md's
# "Any shape" figures and `auto`'s rows for them):
# build, their GemmTc tests beside rung 17's, the ragged shapes benched against rung 17 and cuBLAS,
# then memcheck and racecheck of the newest rung's tests (shapes up to RUNGS_TEST_MAX_MNK). Logs in
# $OUT, summaries on stdout.
# Usage: scripts/experiments/ragged/ragged.sh   NOTESTS=1: bench only; NOSAN=1: no sanitizers;
# VARIANTS=a,b,c: the benched rungs; SAN_RUNG=name: the rung under the sanitizers; SHAPES="M N K
# DTYPES [TRANS];...": the benched shapes instead of the list below; TEST_FILTER=...: the tests run
# instead of those named below; SAN_FILTER=...: the tests under the sanitizers instead of SAN_RUNG's.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_gpu_tests rungs_cli
if [ -z "${NOTESTS:-}" ]; then
  filter=${TEST_FILTER:-'Ladder/GemmTc.*/wgmma_balanced_*:Ladder/GemmTc.*/wgmma_ragged_*:Ladder/GemmTc.*/wgmma_tma_store_*:Ladder/GemmTc.NarrowLastColumn/*:Ladder/GemmTc.ShortLastRow/*'}
  log "GemmTc tests: $filter"
  timeout "${TEST_TIMEOUT:-200}" build-gpu/tests/rungs_gpu_tests --gtest_filter="$filter" >"$OUT/tc_tests.log" 2>&1
  echo "tests rc $?"
  grep -E "^\[  FAILED|Failure$|wrote past|tests ran|PASSED" "$OUT/tc_tests.log" | head -30
fi
log "bench"
bench() {  # M N K DTYPES [TRANS]
  timeout 90 build-gpu/rungs bench gemm --m "$1" --n "$2" --k "$3" --dtype "$4" --trans "${5:-nn}" --variant "${VARIANTS:-wgmma_tma_store,wgmma_ragged,wgmma_balanced,cublas}" \
    --quiet | grep -E "^  [0-9]+ " | tee -a "$OUT/bench.txt"
}
if [ -n "${SHAPES:-}" ]; then
  IFS=';' read -ra list <<<"$SHAPES"
  for sh in "${list[@]}"; do bench $sh; done
else
  bench 4096 4096 4096 bf16
  bench 4096 4104 4096 bf16,f16,tf32
  bench 4096 4097 4096 bf16
  bench 4095 4097 4093 bf16,f16,tf32
  bench 8192 8200 8192 bf16
  bench 2048 2056 2048 bf16
  bench 2048 2048 2048 bf16
  bench 4096 4100 4096 bf16 nt
fi
if [ -z "${NOTESTS:-}${NOSAN:-}" ]; then
  export RUNGS_TEST_MAX_MNK=${RUNGS_TEST_MAX_MNK:-$((1 << 22))}
  for tool in memcheck racecheck; do
    log "compute-sanitizer $tool"
    extra=(); [ $tool = racecheck ] && extra=(--racecheck-report hazard)
    timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
      build-gpu/tests/rungs_gpu_tests --gtest_filter="${SAN_FILTER:-Ladder/GemmTc.*/${SAN_RUNG:-wgmma_balanced}_*}" >"$OUT/$tool.log" 2>&1
    echo "$tool rc $?"
    grep -E "tests ran|PASSED|FAILED" "$OUT/$tool.log" | tail -3
    grep -m5 -E "Invalid|hazard|ERROR SUMMARY" "$OUT/$tool.log"
  done
fi
rm -f "$OUT/build.log"
