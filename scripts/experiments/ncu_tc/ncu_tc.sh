#!/usr/bin/env bash
# One device call: Nsight Compute on tensor-core rungs beside cuBLAS's own kernel (docs/gemm_tc.md's
# "ncu <commit>" figures: rung 15's epilogue bound, rungs 18 and 19's misses, rung 16 DRAM-bound at
# 8192^3, the 2048^3 cycles: tensor-pipe use, clocks, L2/DRAM traffic, stall reasons, cuBLAS's tile
# and grid).
# Usage: PROFILES="bf16:4096:wgmma_ws bf16:4096:cublas" scripts/experiments/ncu_tc/ncu_tc.sh
# Each profile is dtype:size:variant[:kernel regex] (default <variant>_kernel; rungs 15, 17, 19 and
# 28-30 run wgmma_ws_kernel, 18 pingpong_kernel); one kernel launch each (the third), clocks not
# locked unless CLOCKS=base. fp8 profiles run nt with SCALING's scales (default tensor).
# SOURCE=1 adds the warp-stall sampling per SASS instruction: the report's source page goes to
# $OUT/ncu_<profile>.csv and ncu_source.py prints where the samples fall (docs/gemm_tc.md, "Where
# rung 29's cycles go": CLOCKS=base SOURCE=1 PROFILES="fp8:4096:wgmma_fp8_promote:wgmma_ws_kernel").
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_cli
# Tensor-pipe metrics by the names this ncu knows (an unknown name would fail the whole run).
ncu --query-metrics --chip gh100 >/tmp/ncu_metrics.txt 2>&1
metrics=""
for base in sm__pipe_tensor_op_gmma_cycles_active sm__inst_executed_pipe_tensor_op_gmma sm__cycles_elapsed \
  lts__t_sector_hit_rate dram__bytes_read l1tex__data_bank_conflicts_pipe_lsu_mem_shared; do
  grep -q "^$base " /tmp/ncu_metrics.txt || { echo "ncu has no $base"; continue; }
  case $base in
    sm__pipe_tensor_op_gmma_cycles_active) m="$base.avg.pct_of_peak_sustained_active,$base.avg.pct_of_peak_sustained_elapsed" ;;
    sm__inst_executed_pipe_tensor_op_gmma) m="$base.sum" ;;
    sm__cycles_elapsed) m="$base.avg.per_second,$base.max" ;;
    lts__t_sector_hit_rate) m="$base.pct" ;;
    dram__bytes_read) m="$base.sum,$base.sum.per_second" ;;
    *) m="$base.sum" ;;
  esac
  metrics=${metrics:+$metrics,}$m
done
grep -oE "^sm__pipe_tensor[a-z_]*" /tmp/ncu_metrics.txt | sort -u | head -20
for p in ${PROFILES:-bf16:4096:wgmma_ws bf16:4096:cublas}; do
  IFS=: read -r dtype size variant kernel <<<"$p"
  if [ "$variant" = cublas ]; then k='regex:nvjet|sm90|xmma|cutlass|gemm'; else k="regex:${kernel:-${variant}_kernel}"; fi
  f="$OUT/ncu_${dtype}_${size}_${variant}.txt"
  extra=()
  [ "$dtype" = fp8 ] && extra=(--trans nt --scaling "${SCALING:-tensor}")
  src=()
  [ "${SOURCE:-0}" = 1 ] && src=(--section SourceCounters -o "${f%.txt}" -f)
  log "ncu $p"
  timeout 200 ncu --clock-control "${CLOCKS:-none}" --kernel-name "$k" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats ${metrics:+--metrics $metrics} \
    "${src[@]}" build-gpu/rungs bench gemm --size "$size" --dtype "$dtype" "${extra[@]}" --variant "$variant" \
    --baseline none --reps 3 --warmup 1 --check-rows 16 >"$f" 2>&1
  echo "ncu rc $?"
  if [ "${SOURCE:-0}" = 1 ]; then
    ncu -i "${f%.txt}.ncu-rep" --print-details all >"$f" 2>&1
    ncu -i "${f%.txt}.ncu-rep" --page source --csv --print-source sass >"${f%.txt}.csv" 2>&1
    python3 scripts/experiments/ncu_tc/ncu_source.py "${f%.txt}.csv"
  fi
  grep -E "^  [a-zA-Z_].*\(|Frequency|Duration|Throughput|Registers|Shared Memory Config|Dynamic Shared|Grid Size|Block Size|Cluster|Achieved Occ|Issue Slots|Warp Cycles Per Issued|No Eligible|gmma|hit_rate|dram__bytes|bank_conflicts|elapsed" "$f" |
    grep -v "^    ---" | head -45
done
log done
