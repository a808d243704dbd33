#!/usr/bin/env bash
# Builds and runs the wgmma chain-throughput probe (wgmma_probe.cu: the question rung 18 left) on
# the GPU machine; output to stdout. About a second of GPU time.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # run_cu
run_cu wgmma_probe "$@"
