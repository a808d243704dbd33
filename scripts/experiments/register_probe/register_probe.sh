#!/usr/bin/env bash
# Builds the library (build-gpu) and runs scripts/experiments/register_probe/register_probe.cpp: page-locking the
# caller's pageable buffers per gemm_host call against staging them (docs/gemm_host.md). Stdout.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh
build_gpu rungs
mkdir -p build-experiments
g++ -O2 -std=c++17 -Iinclude -Isrc -I/usr/local/cuda/include scripts/experiments/register_probe/register_probe.cpp \
  build-gpu/librungs.a -L/usr/local/cuda/lib64 -lcublas -lcudart -lpthread -o build-experiments/register_probe || exit 1
timeout 300 build-experiments/register_probe
