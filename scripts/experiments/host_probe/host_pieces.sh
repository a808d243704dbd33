#!/usr/bin/env bash
# One device call: phase 1's op(A) in pieces of ~2048 rows (Plan::kmajor_row_panels = m / 2048), and
# phase 1 over 3/8 of k at 8192^3, against one piece per row panel over half of k (the library's plan).
# docs/gemm_host.md: the taller pieces measured level (4096^3 3.80 vs 3.84 ms) and 3/8 of k 1.5-1.7 %
# faster at 8192^3 only; neither kept. Builds build-exp (the CLI with --plan, --trace); runs the GemmHost GPU tests
# and the schedule's CPU tests; host_probe pinned_plans and pageable_plans (plans alternated call by call
# in one process, eager calls); then `rungs bench gemm_host --memory pinned` (graph replay) at 4096^3 and
# 8192^3 with each plan forced, in alternating processes, twice; a traced 4096^3 pinned call per plan;
# the bench with the library's choices. The forced-plan benches run pinned only: with the pageable rows
# (~58 s a process) the call does not fit in 600 s.
# Output to stdout, logs under $OUT.
cd "$(dirname "$0")/../../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_exp rungs rungs_cli rungs_gpu_tests rungs_cpu_tests
host_tests 'GemmHostSchedule.*:WorkerPool.*:StreamCopy.*'
log probe
build_host_probe || exit 1
build-exp/host_probe pinned_plans | tee "$OUT/probe.txt"
build-exp/host_probe pageable_plans | tee -a "$OUT/probe.txt"
log "rungs bench gemm_host, the two plans forced"
for round in 1 2; do
  for n in 4096 8192; do
    p=$((n / 512))
    plans=("${p}x1:k2/0.5" "${p}x1:k2/0.5:r$((n / 2048))")
    [ $n = 8192 ] && plans+=("${p}x1:k2/0.375:r$((n / 2048))")
    for plan in "${plans[@]}"; do
      echo "--- round $round, $n^3, --plan $plan"
      build-exp/rungs bench gemm_host --size $n --memory pinned --plan "$plan" 2>/dev/null | grep -E "^${n}x" | tee -a "$OUT/bench-plans.txt"
    done
  done
done
log "a traced 4096^3 pinned call, each plan"
for plan in 8x1:k2/0.5 8x1:k2/0.5:r2; do
  build-exp/rungs bench gemm_host --size 4096 --memory pinned --plan $plan --trace --reps 5 2>/dev/null >"$OUT/trace-${plan//[:/]/_}.txt"
  grep -E "^4096x|span|busy" "$OUT/trace-${plan//[:/]/_}.txt" | head -6
done
log "rungs bench gemm_host (the library's choices)"
build-exp/rungs bench gemm_host 2>/dev/null | tee "$OUT/bench-host.txt"
log done
