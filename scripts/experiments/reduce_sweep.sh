#!/usr/bin/env bash
# Builds and runs the single_pass tuning sweep (reduce_sweep.cu) on the GPU machine; output to stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build-sweep
nvcc -std=c++17 -O3 -arch=sm_90a -Iinclude -Isrc --expt-relaxed-constexpr \
  scripts/experiments/reduce_sweep.cu -o build-sweep/reduce_sweep
build-sweep/reduce_sweep "$@"
