#!/usr/bin/env bash
# Builds and runs realign_probe.cu (how fast idle producer warps could copy an operand whose rows
# TMA cannot address) on the GPU machine; output to stdout. A few seconds of GPU time.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # run_cu
run_cu realign_probe "$@"
