#!/usr/bin/env bash
# What holds the promoting fp8 rungs (29, 30) at ~0.85x rung 28: each probe applies a patch to the
# tree, builds the CLI into build-gpu, benches against the unpatched build, and takes the patch back.
#   fp8_halves.patch:  rung 28's n256 MMAs issued as two n128 halves (A read from shared memory
#                      twice per k tile, as rungs 29 and 30 read it; no promotion).
#   fp8_handoff.patch: rung 30's turn handed to the other consumer when HANDOFF (3, or 2 with
#                      HANDOFF=2) of a half-step's four MMAs are done, not when they are issued.
#   fp8_pipelined.patch: a rung 33 wgmma_fp8_pipelined, rung 29 with a k tile in four n64 quarters
#                      into two partial sums in turn, each promoted under the next quarter's MMAs;
#                      A of the k tile in registers (pipelined) or read from shared memory by every
#                      quarter (pipelined_ss).
# Usage (on the GPU, from the repository root):
#   scripts/experiments/fp8_promote_probes.sh [halves] [handoff] [handoff2] [pipelined] [pipelined_ss]
source "$(dirname "$0")/lib.sh"
bench() {  # bench NAME VARIANTS: tensor and block128 at 4096^3 and 8192^3, e4m3 nt, beside cuBLASLt
  for sc in tensor block128; do
    build-gpu/rungs bench gemm --dtype fp8 --scaling "$sc" --trans nt --size 4096,8192 --variant "$2" --reps 20 \
      --quiet --format csv --output "$OUT/fp8-$1-$sc.csv" >/dev/null
    python3 -c "
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r['pass'] == 'true': print(sys.argv[2], sys.argv[3], r['m'], r['variant'], r['tflops'], 'x' + r['speedup_vs_baseline'])
" "$OUT/fp8-$1-$sc.csv" "$1" "$sc"
  done
}
probe() {  # probe NAME PATCH VARIANTS [sed expression applied after the patch [to this file]]
  patch -p1 <"scripts/experiments/$2" >/dev/null || exit 1
  [ -n "${4:-}" ] && sed -i "$4" "${5:-src/gemm/30_wgmma_fp8_overlap.cu}"
  build_gpu rungs_cli
  bench "$1" "$3"
  git checkout -- src/gemm/wgmma_ws.cuh src/gemm/30_wgmma_fp8_overlap.cu src/detail/hopper.cuh \
    src/cli/help.cpp src/gemm/gemm_rung.hpp src/gemm/ladder.cpp
  rm -f src/gemm/33_wgmma_fp8_pipelined.cu
}
build_gpu rungs_cli
bench base wgmma_fp8,wgmma_fp8_promote,wgmma_fp8_overlap
for p in "${@:-halves handoff handoff2}"; do
  for q in $p; do
    case $q in
      halves) probe halves fp8_halves.patch wgmma_fp8 ;;
      handoff) probe handoff fp8_handoff.patch wgmma_fp8_overlap ;;
      handoff2) probe handoff2 fp8_handoff.patch wgmma_fp8_overlap 's/HANDOFF = 3;/HANDOFF = 2;/' ;;
      pipelined) probe pipelined fp8_pipelined.patch wgmma_fp8_promote,wgmma_fp8_pipelined ;;
      pipelined_ss) probe pipelined_ss fp8_pipelined.patch wgmma_fp8_promote,wgmma_fp8_pipelined \
        's/A_IN_REGISTERS = true;/A_IN_REGISTERS = false;/' src/gemm/33_wgmma_fp8_pipelined.cu ;;
    esac
  done
done
