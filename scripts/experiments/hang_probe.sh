#!/usr/bin/env bash
# One device call: repeat one GPU test (or one bench shape) many times under a timeout, to catch an
# intermittent hang and say how often it happens.
# Usage: TESTS="filter[,filter]" REPEAT=20 LIMIT=30 BENCH="args;args" scripts/experiments/hang_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_cli rungs_gpu_tests
IFS=',' read -ra filters <<<"${TESTS:-}"
for f in "${filters[@]}"; do
  hangs=0 fails=0
  for i in $(seq "${REPEAT:-20}"); do
    t0=$(date +%s.%N)
    timeout "${LIMIT:-30}" build-gpu/tests/rungs_gpu_tests --gtest_filter="$f" >"$OUT/last.log" 2>&1
    rc=$?
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    [ $rc -eq 124 ] && { hangs=$((hangs + 1)); cp "$OUT/last.log" "$OUT/hang_$hangs.log"; }
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && fails=$((fails + 1))
    printf '%s run %d rc %d %.1f s\n' "$f" "$i" "$rc" "$t"
  done | tee -a "$OUT/probe.txt" | awk '{print}' | tail -3
  grep -c "rc 124" "$OUT/probe.txt" | sed "s|^|$f: runs that hung so far (all filters): |"
done
IFS=';' read -ra benches <<<"${BENCH:-}"
for b in "${benches[@]}"; do
  log "bench $b"
  # shellcheck disable=SC2086
  timeout "${LIMIT:-30}" build-gpu/rungs bench gemm $b 2>&1 | grep -E "^ +[0-9]+ |rungs:" | tail -4
  echo "rc ${PIPESTATUS[0]}"
done
log done
