#!/usr/bin/env bash
# Builds and runs the wgmma chain-throughput probe (wgmma_probe.cu: the question rung 18 left) on
# the GPU machine; output to stdout. About a second of GPU time.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build-probe
nvcc -std=c++17 -O3 -arch=sm_90a -Iinclude -Isrc --expt-relaxed-constexpr \
  scripts/experiments/wgmma_probe.cu -o build-probe/wgmma_probe
build-probe/wgmma_probe "$@"
