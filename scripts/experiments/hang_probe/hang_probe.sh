#!/usr/bin/env bash
# One device call: repeat one GPU test (or one bench shape) many times under a timeout, to catch an
# intermittent hang and say how often it happens (docs/gemm_tc.md: rung 20 hung in ~1 of 12 runs of
# GemmTc.StreamKTails/wgmma_ragged_tf32; consumers without rows now multiply 64 wide, 9,000 launches clean).
# Usage: TESTS="filter[,filter]" REPEAT=20 LIMIT=30 BENCH="args;args" scripts/experiments/hang_probe/hang_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_cli rungs_gpu_tests
IFS=',' read -ra filters <<<"${TESTS:-}"
for f in "${filters[@]}"; do
  for i in $(seq "${REPEAT:-20}"); do
    t0=$(date +%s%N)
    timeout "${LIMIT:-30}" build-gpu/tests/rungs_gpu_tests --gtest_filter="$f" >"$OUT/last.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && cp "$OUT/last.log" "$OUT/hang_$(grep -c "rc 124" "$OUT/probe.txt" 2>/dev/null).log"
    printf '%s run %d rc %d %d ms\n' "$f" "$i" "$rc" $((($(date +%s%N) - t0) / 1000000)) | tee -a "$OUT/probe.txt"
  done | tail -3
  echo "$f: $(grep -c "^$f run .* rc 124" "$OUT/probe.txt") of ${REPEAT:-20} runs hung (rc 124 = timeout)"
done
IFS=';' read -ra benches <<<"${BENCH:-}"
for b in "${benches[@]}"; do
  log "bench $b"
  # shellcheck disable=SC2086
  timeout "${LIMIT:-30}" build-gpu/rungs bench gemm $b 2>&1 | grep -E "^ +[0-9]+ |rungs:" | tail -4
  echo "rc ${PIPESTATUS[0]}"
done
log done
