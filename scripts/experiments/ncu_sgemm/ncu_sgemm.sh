#!/usr/bin/env bash
# One device call: Nsight Compute on CUDA-core SGEMM rungs beside cuBLAS's sgemm kernel (docs/gemm.md:
# why rungs 5 and 6 run below rung 4, and why warptile trails cuBLAS: issue-slot use, FFMA share, warp
# stall reasons, the SASS lines that stall most).
# Usage: PROFILES="4096:warptile 4096:cublas" scripts/experiments/ncu_sgemm/ncu_sgemm.sh
# Each profile is size:variant[:kernel regex[:name base]] (default <variant>_kernel, matched on the
# function name; base "mangled" matches the mangled name, which spells out template arguments);
# variant "tune" profiles inside `rungs tune gemm` (every warptile configuration: pick one with a
# mangled-name regex such as TileILi128ELi256ELi16ELi64ELi64ELi16ELi8ELi3ELi1ELi0ELi4EE). One
# launch (the third), clocks not locked. Per kernel: $OUT/ncu_<variant>_<size>.txt (details) and .sass.csv (per-SASS
# stall samples, the 60 lines with most samples, plus the totals by stall reason).
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/experiments/lib.sh  # OUT, log, build_gpu
build_gpu rungs_cli
metrics=sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_inst_executed_op_shared_ld.sum,sm__cycles_elapsed.avg.per_second,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
for p in ${PROFILES:-4096:warptile 4096:cublas}; do
  IFS=: read -r size variant kernel kbase <<<"$p"
  if [ "$variant" = cublas ]; then k='regex:sgemm|xmma|ffma|gemm'; else k="regex:${kernel:-${variant}_kernel}"; fi
  cmd=(bench gemm --size "$size" --variant "$variant" --baseline none)
  [ "$variant" = tune ] && cmd=(tune gemm --size "$size")
  tag=$variant; [ -n "${kernel:-}" ] && tag=$variant$(echo "$kernel" | md5sum | cut -c1-6)
  base="$OUT/ncu_${tag}_${size}"
  log "ncu $p"
  timeout 240 ncu --clock-control none --kernel-name-base "${kbase:-function}" --kernel-name "$k" \
    --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters \
    --metrics "$metrics" --export "$base" --force-overwrite \
    build-gpu/rungs "${cmd[@]}" --reps 3 --warmup 1 --check-rows 16 >"$base.txt" 2>&1
  echo "ncu rc $?"
  ncu -i "$base.ncu-rep" --page details --print-details all >>"$base.txt" 2>&1
  grep -E "^  [a-zA-Z_].*\(|Frequency|Duration|Registers|Block Size|Grid Size|Achieved Occ|Issue Slots|Issued Ipc|Warp Cycles Per Issued|No Eligible|Eligible Warps|Active Warps|fma|shared_ld|inst_executed.sum|bank_conflicts|elapsed|Stall|stall" "$base.txt" |
    grep -v "^    ---" | head -60
  ncu -i "$base.ncu-rep" --page source --csv --print-source sass >"$base.sass.full.csv" 2>/dev/null
  python3 - "$base.sass.full.csv" >"$base.sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = [i for i, r in enumerate(rows) if 'Source' in r]
if not hi: print('no header row; first rows:', rows[:3]); sys.exit()
hdr = rows[hi[0]]; body = [r for r in rows[hi[0] + 1:] if len(r) == len(hdr)]
def col(name):
    return [i for i, h in enumerate(hdr) if h == name]
def num(s):
    try: return float(s.replace(',', ''))
    except ValueError: return 0.0
samp = (col('Warp Stall Sampling (All Samples)') or col('Warp Stall Sampling (All Cycles)') or [None])[0]
src = (col('Source') or [1])[0]
stall_cols = [i for i, h in enumerate(hdr) if h.startswith('stall_') or 'Stall' in h and i != samp]
print('columns:', '|'.join(hdr))
if samp is None: sys.exit()
tot = sum(num(r[samp]) for r in body)
print('total samples', tot)
# totals by stall reason (columns whose name mentions a reason)
for i, h in enumerate(hdr):
    if i in (samp, src): continue
    s = sum(num(r[i]) for r in body if len(r) > i)
    if s > 0.005 * tot and s <= tot * 1.01: print(f'{h:60s} {s:12.0f} {100*s/tot:6.1f}%')
top = sorted(body, key=lambda r: -num(r[samp]))[:60]
for r in top: print(f'{num(r[samp]):8.0f}  {r[src]}')
PY
  echo "$p" >>"$base.sass.csv"; head -40 "$base.sass.csv"
  gzip -f "$base.sass.full.csv"; rm -f "$base.ncu-rep"
done
log done
