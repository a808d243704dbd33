#!/usr/bin/env bash
# One device call (twentieth session): C's staged blocks unpacked with streaming stores. Builds the
# library, the CLI and the tests; runs the GemmHost GPU tests and the WorkerPool and StreamCopy CPU
# tests; host_probe's `unpack` mode twice (C unpacked by memcpy / streaming stores, alternated call by
# call in one process, 1024^3, 4096^3 and 8192^3 pageable); then `rungs bench gemm_host` (the main
# job's gemm_host table) and a traced 1024^3 pageable call. Output to stdout, logs under $OUT.
cd "$(dirname "$0")/../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_gpu rungs rungs_cli rungs_gpu_tests rungs_cpu_tests
log tests
build-gpu/tests/rungs_gpu_tests --gtest_filter='GemmHost.*' >"$OUT/gemmhost_tests.log" 2>&1; echo "GemmHost rc $?"
grep -E "PASSED|FAILED" "$OUT/gemmhost_tests.log" | tail -5
build-gpu/tests/rungs_cpu_tests --gtest_filter='WorkerPool.*:StreamCopy.*' 2>&1 | tail -1
log probe
g++ -O2 -std=c++17 -Iinclude -Isrc -I/usr/local/cuda/include scripts/experiments/host_probe.cpp build-gpu/librungs.a \
  -L/usr/local/cuda/lib64 -lcublas -lcublasLt -lcudart -lcuda -lpthread -ldl -o build-gpu/host_probe &&
  build-gpu/host_probe unpack | tee "$OUT/probe-unpack.txt" && build-gpu/host_probe unpack | tee -a "$OUT/probe-unpack.txt"
log "rungs bench gemm_host"
build-gpu/rungs bench gemm_host 2>/dev/null | tee "$OUT/bench-host.txt"
log "a traced pageable call"
build-gpu/rungs bench gemm_host --size 1024 --memory pageable --trace --reps 10 2>/dev/null | tee "$OUT/trace-1024-pageable.txt" | tail -17
log done
