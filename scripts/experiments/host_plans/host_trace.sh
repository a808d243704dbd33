#!/usr/bin/env bash
# gemm_host timelines (docs/gemm_host.md: where 1024^3 and 4096^3 pinned lose their time, e.g. the
# 24 products of 4096^3 at 3.31 ms against 2.66 for one): build the CLI and the GPU tests with the
# experiment flags (build-exp: --trace, --plan), run the
# GemmHost tests, then `rungs bench gemm_host --trace` per size and plan (every copy and product
# of one call timed on its stream). Timelines go to $OUT/trace.txt, summaries to stdout.
# Usage: scripts/experiments/host_plans/host_trace.sh ["sizes"] ["plans"] [memory]   (plans: auto or RxC[:kN/F])
# NOTESTS=1: skip the tests.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_exp
build_exp rungs_gpu_tests rungs_cli
if [ -z "${NOTESTS:-}" ]; then
  log "GemmHost tests"
  timeout 300 build-exp/tests/rungs_gpu_tests --gtest_filter='GemmHost.*' >"$OUT/host_tests.log" 2>&1
  echo "tests rc $?"
  grep -E "^\[  FAILED|Failure$|tests ran|PASSED" "$OUT/host_tests.log" | head -20
fi
for s in ${1:-1024 4096}; do
  for p in ${2:-auto}; do
    flag=(); [ "$p" != auto ] && flag=(--plan "$p")
    log "trace $s $p"
    build-exp/rungs bench gemm_host --size "$s" --memory "${3:-pinned}" --quiet --trace "${flag[@]}" |
      tee -a "$OUT/trace.txt" | grep -E "^[0-9]+x|span"
  done
done
