#!/usr/bin/env bash
# One device call for the tensor-core ladder (issue 5): build the tests and the CLI, the GemmTc
# tests and the tf32x3 accuracy test, the sanitizers on the new rungs at small shapes, and a
# bench of the tensor-core rungs. Usage: scripts/experiments/tc_device.sh "<variants>" "<sanitize filter>"
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
VARIANTS=${1:-wmma,mma_sync,cublas}
SAN=${2:-}
build_gpu rungs_gpu_tests rungs_cli
log tests
timeout ${TEST_TIMEOUT:-300} build-gpu/tests/rungs_gpu_tests --gtest_filter="${TESTS:-Ladder/GemmTc.*:GemmAccuracy.Tf32x3*}" >"$OUT/tests.log" 2>&1
echo "tests rc $?"
grep -E "^\[  FAILED|Failure$|normwise error|tests ran|PASSED|SKIPPED \]" "$OUT/tests.log" | sort | uniq -c | sort -rn | head -50
grep -A3 "Failure$" "$OUT/tests.log" | head -60
if [ -n "$SAN" ]; then
  export RUNGS_TEST_MAX_MNK=$((1 << 22))
  log memcheck
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/rungs_gpu_tests --gtest_filter="$SAN" >"$OUT/memcheck.log" 2>&1; echo "memcheck rc $?"
  grep -m3 -E "Invalid|ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.log"
  log racecheck
  timeout 150 compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 9 build-gpu/tests/rungs_gpu_tests --gtest_filter="$SAN" >"$OUT/racecheck.log" 2>&1; echo "racecheck rc $?"
  grep -m3 -E "hazard|ERROR SUMMARY|PASSED|FAILED" "$OUT/racecheck.log"
  unset RUNGS_TEST_MAX_MNK
fi
log bench
build-gpu/rungs bench gemm --size ${SIZES:-2048,4096,8192} --dtype ${DTYPES:-f16,bf16,tf32,tf32x3} --variant "$VARIANTS" \
  --format json --output "$OUT/bench.json" 2>"$OUT/bench.progress" | tee "$OUT/bench.txt"
tail -3 "$OUT/bench.progress"
# BENCH2: a second bench line's extra flags (e.g. odd shapes or transposes), same variants.
if [ -n "${BENCH2:-}" ]; then
  log bench2
  build-gpu/rungs bench gemm $BENCH2 --variant "$VARIANTS" 2>>"$OUT/bench.progress" | tee "$OUT/bench2.txt"
fi
log done
