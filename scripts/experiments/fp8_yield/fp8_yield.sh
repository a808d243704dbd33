#!/usr/bin/env bash
# The yield-flag probe (sass_yield.py): fp8_promote_tc.cu and the rungs CLI, each built with
# uncompressed device code, patched (alt: every other FFMA of a run; all: every FFMA), and run
# beside the original: the probe's MACs per SM cycle, then rungs 28-30 on block128 fp8 at 4096^3
# and 8192^3 (the originals run first and last). On the GPU machine, from the repository root.
set -u
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source scripts/experiments/lib.sh
B=build-experiments; mkdir -p $B
( cmake -S . -B build-nc -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS=--no-compress >"$OUT/build.log" 2>&1 &&
  cmake --build build-nc -j"$(nproc)" --target rungs_cli >>"$OUT/build.log" 2>&1; echo "rungs build rc $?" ) &
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a --no-compress -Iinclude -Isrc --expt-relaxed-constexpr \
  scripts/experiments/fp8_promote_tc/fp8_promote_tc.cu -o $B/p_orig || exit 1
for m in alt all; do cp $B/p_orig $B/p_$m; log "patch $m"; python3 scripts/experiments/fp8_yield/sass_yield.py $m $B/p_$m | tail -3; done
for m in orig alt all orig; do log "probe $m"; timeout 60 $B/p_$m | grep -v "^fp8"; done
wait
[ -x build-nc/rungs ] || { tail -20 "$OUT/build.log"; exit 1; }
cp build-nc/rungs build-nc/rungs_orig
for m in alt all; do cp build-nc/rungs build-nc/rungs_$m; log "patch rungs $m"; python3 scripts/experiments/fp8_yield/sass_yield.py $m build-nc/rungs_$m | tail -1; done
for m in orig alt all orig alt; do
  log "bench $m"
  timeout 90 build-nc/rungs_$m bench gemm --dtype fp8 --trans nt --size 4096,8192 --scaling block128 \
    --variant wgmma_fp8,wgmma_fp8_promote,wgmma_fp8_overlap --reps 20 2>/dev/null | grep -E "^\s+[0-9]+ "
done
