#!/usr/bin/env bash
# One device call (twentieth session): why the bench's pageable gemm_host rows on the H100 came out
# 1.5-2.5x slower than host_probe's back-to-back calls. Builds the library; runs host_probe's
# `between_pageable` mode (before each call: nothing / C reset / the naive pageable flow / both) and
# `unpack` mode once more. Output to stdout and $OUT/between.txt.
cd "$(dirname "$0")/../.." || exit 1
set -uo pipefail
source scripts/experiments/lib.sh
build_gpu rungs
log probe
build_host_probe &&
  { nproc; lscpu | grep -E "Model name|Socket|NUMA node|Thread"; build-gpu/host_probe between_pageable; } 2>&1 | tee "$OUT/between.txt"
log done
