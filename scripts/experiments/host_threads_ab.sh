#!/usr/bin/env bash
# One device call (nineteenth session): the GemmHost tests, then the pageable flows with 8 staging
# threads (the old default), the new default and 12, alternated, in one process each.
cd "$(dirname "$0")/../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_gpu rungs_cli rungs_gpu_tests
log tests
build-gpu/tests/rungs_gpu_tests --gtest_filter='GemmHost.*' > $OUT/gemmhost_tests.log 2>&1; echo "gtest rc $?"; grep -E "PASSED|FAILED|OK \]" $OUT/gemmhost_tests.log | tail -40
log bench
for args in "--size 1024,4096,8192 --memory pageable --host-threads 8" "--size 1024,4096,8192 --memory pageable" "--size 1024,4096 --memory pageable --host-threads 8" "--size 1024,4096 --memory pageable --host-threads 12" "--size 1024,4096 --memory pageable" "--size 1024 --memory pinned"; do
  echo "\$ rungs bench gemm_host $args"; build-gpu/rungs bench gemm_host $args 2>/dev/null | grep -E "^[0-9]+x"
done
log done
