#!/usr/bin/env bash
# One device call: Nsight Compute on tensor-core rungs beside cuBLAS's own kernel (docs/gemm_tc.md's
# "ncu <commit>" figures: rung 15's epilogue bound, rungs 18 and 19's misses, rung 16 DRAM-bound at
# 8192^3, the 2048^3 cycles: tensor-pipe use, clocks, L2/DRAM traffic, stall reasons, cuBLAS's tile
# and grid).
# Usage: PROFILES="bf16:4096:wgmma_ws bf16:4096:cublas" scripts/experiments/ncu_tc.sh
# Each profile is dtype:size:variant[:kernel regex] (default <variant>_kernel; rungs 15, 17 and 19
# run wgmma_ws_kernel, 18 pingpong_kernel); one kernel launch each (the third), clocks not locked.
set -uo pipefail
cd "$(dirname "$0")/../.."
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
  log "ncu $p"
  timeout 200 ncu --clock-control none --kernel-name "$k" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats ${metrics:+--metrics $metrics} \
    build-gpu/rungs bench gemm --size "$size" --dtype "$dtype" --variant "$variant" --baseline none --reps 3 \
    --warmup 1 --check-rows 16 >"$f" 2>&1
  echo "ncu rc $?"
  grep -E "^  [a-zA-Z_].*\(|Frequency|Duration|Throughput|Registers|Shared Memory Config|Dynamic Shared|Grid Size|Block Size|Cluster|Achieved Occ|Issue Slots|Warp Cycles Per Issued|No Eligible|gmma|hit_rate|dram__bytes|bank_conflicts|elapsed" "$f" |
    grep -v "^    ---" | head -45
done
log done
