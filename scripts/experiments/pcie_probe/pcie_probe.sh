#!/usr/bin/env bash
# Runs scripts/experiments/pcie_probe/pcie_probe.cu (what the host-to-host flow can reach at 1024^3, apart from
# any GEMM; docs/gemm_host.md) with the default and the spin scheduling. Output on stdout.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh
mkdir -p build-experiments
nvcc -std=c++17 -O3 -arch=sm_90a scripts/experiments/pcie_probe/pcie_probe.cu -o build-experiments/pcie_probe -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current --format=csv
timeout 120 build-experiments/pcie_probe

