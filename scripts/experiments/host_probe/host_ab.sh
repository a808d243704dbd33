#!/usr/bin/env bash
# One device call: gemm_host Tuning switches and plans A/B, alternated call by call in one process (how
# docs/gemm_host.md tells changes of a few percent apart: streaming stores, the background unpack below
# 256 MiB, 12 staging threads, the plan rules). Usage: host_ab.sh KNOB... [--trace]
# Builds the library, the CLI (with its experiment flags) and the tests in build-exp; runs the GemmHost GPU tests and the WorkerPool and
# StreamCopy CPU tests; `host_probe KNOB` for each KNOB (streaming | unpack | async: that switch off and
# on; threads: 8 / the library's / 16 staging threads; pageable_plans: k-major first chunks;
# pinned_plans: phase 1's piece heights; between, between_pageable: the bench's sequence; see
# host_probe.cpp); `rungs bench gemm_host` (the main job's
# table); with --trace, traced 1024^3, 4096^3 and 8192^3 pageable calls (timelines in
# $OUT/trace-N.txt, their summaries on stdout). Output to stdout, logs under $OUT.
cd "$(dirname "$0")/../../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
trace=0; knobs=()
for a in "$@"; do if [ "$a" = --trace ]; then trace=1; else knobs+=("$a"); fi; done
build_exp rungs rungs_cli rungs_gpu_tests rungs_cpu_tests
host_tests 'WorkerPool.*:StreamCopy.*'
log probe
build_host_probe || exit 1
for k in "${knobs[@]}"; do build-exp/host_probe "$k" | tee -a "$OUT/probe.txt"; done
log "rungs bench gemm_host"
build-exp/rungs bench gemm_host 2>/dev/null | tee "$OUT/bench-host.txt"
if [ $trace = 1 ]; then
  for n in 1024 4096 8192; do
    log "a traced pageable call, $n^3"
    build-exp/rungs bench gemm_host --size $n --memory pageable --trace --reps 5 2>/dev/null >"$OUT/trace-$n.txt"
    grep -E "^1024x|^4096x|^8192x|span" "$OUT/trace-$n.txt"
  done
fi
log done
