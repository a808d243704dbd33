#!/usr/bin/env bash
# One device call (twentieth session): where single bench calls of pageable gemm_host spend their
# time, in the bench's own sequence (each after a naive flow and C's reset): `rungs bench gemm_host
# --calls` at 4096^3 and 1024^3 pageable. Output to stdout and $OUT/calls.txt.
cd "$(dirname "$0")/../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_gpu rungs_cli
log runs
{ build-gpu/rungs bench gemm_host --size 4096 --memory pageable --calls 2>/dev/null
  build-gpu/rungs bench gemm_host --size 1024 --memory pageable --calls 2>/dev/null; } | tee "$OUT/calls.txt"
log done
