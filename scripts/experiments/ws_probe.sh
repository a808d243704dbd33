#!/usr/bin/env bash
# One device call for rung 15 (wgmma_ws): build, its GemmTc tests, the bench beside rung 14 and
# cuBLAS (f16, bf16, tf32, an odd shape), and, when rung 15 is still slower than rung 14, ncu's stall sections and its SASS barrier/fence
# instructions. Usage: scripts/experiments/ws_probe.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_gpu_tests rungs_cli
log tests
timeout 150 build-gpu/tests/rungs_gpu_tests --gtest_filter='Ladder/GemmTc.*wgmma_ws*' >"$OUT/tests.log" 2>&1; echo "tests rc $?"
grep -E "^\[  FAILED|PASSED" "$OUT/tests.log"; grep -A4 "Failure$" "$OUT/tests.log" | head -20
B="build-gpu/rungs bench gemm"
log bench
$B --size 2048,4096,8192 --dtype f16,bf16 --variant wgmma,wgmma_ws,cublas --format json --output "$OUT/bench.json" 2>/dev/null | tee "$OUT/bench.txt" | grep -E "^  1"
$B --size 4096,8192 --dtype tf32 --variant wgmma,wgmma_ws,cublas 2>/dev/null | tee "$OUT/bench_tf32.txt" | grep -E "^  1"
$B --m 4095 --n 4097 --k 4093 --dtype bf16,f16 --variant wgmma_ws,cublas 2>/dev/null | tee "$OUT/bench_odd.txt" | grep -E "^  1"
ws=$(grep -E "^  15 wgmma_ws +4096x4096x4096 nn bf16" "$OUT/bench.txt" | awk '{print $4}')
r14=$(grep -E "^  14 wgmma +4096x4096x4096 nn bf16" "$OUT/bench.txt" | awk '{print $4}')
echo "4096 bf16: wgmma_ws $ws ms, wgmma $r14 ms"
if awk "BEGIN{exit !($ws > $r14)}"; then
  log ncu
  timeout 150 ncu --section WarpStateStats --section SourceCounters -k regex:wgmma_ws -c 1 \
    $B --size 4096 --dtype bf16 --variant wgmma_ws --reps 1 --warmup 0 >"$OUT/ncu.txt" 2>&1
  grep -E "Stall|stall|Warp Cycles" "$OUT/ncu.txt" | head -30
  cuobjdump -sass build-gpu/CMakeFiles/rungs.dir/src/gemm/15_wgmma_ws.cu.o | grep -E "SYNCS|MEMBAR|FENCE|UCGABAR|CCTL" |
    sed -E 's@/\*[0-9a-f]+\*/@@; s/;.*//' | awk '{$1=$1};1' | sort | uniq -c | sort -rn | head -20
fi
log done
