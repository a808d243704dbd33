#!/usr/bin/env bash
# Builds and runs the single_pass tuning sweep (reduce_sweep.cu) on the GPU machine; output to stdout.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # run_cu
run_cu reduce_sweep "$@"
