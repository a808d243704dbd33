#!/usr/bin/env bash
# Everything rungs needs from a GPU machine, in one go (used through the device tool):
# build with all cores, the full GPU test suite, the same tests at small shapes under
# compute-sanitizer (memcheck; racecheck for the shared-memory rungs), then `rungs bench`
# (the main job: bench.json and bench-host.json, the input of scripts/report.py), `rungs profile`
# (the SGEMM ladder at 4096^3 under Nsight Compute), `rungs tune gemm` and the Python package
# (`pip install .` into build-py/venv, which sees the machine's torch, CuPy and JAX; its pytest
# suite; scripts/bench_python.py; scripts/bench_epilogue_torch.py). Results land under $OUT (default ./out); more than 7 files there
# are packed into $OUT/results.tar.gz, the summaries kept.
# Usage: scripts/gpu.sh [stage ...]   stages: build test sanitize bench profile tune python
# (default: build test sanitize bench)
# Environment (all optional; the defaults run everything):
#   RUNGS_LADDERS="gemm gemv reduce gemm_host dist"  the ladders (gemm_host; dist = allgather_gemm and
#                                     gemm_reducescatter, 2+ GPUs) whose tests, sanitizer runs and bench
#                                     rows to run
#   RUNGS_CTEST_JOBS=3                test processes at once (the tests assert results, not times)
#   RUNGS_GPUS=<n>                    GPUs to spread the GPU tests and the sanitizers over (default: all
#                                     that nvidia-smi lists). With 2 or more, rungs_gpu_tests runs in n
#                                     gtest shards at once, shard i alone on GPU i (CUDA_VISIBLE_DEVICES),
#                                     each sanitizer likewise; the dist tests then run on all GPUs and
#                                     ctest runs the CPU tests. With 1 (or RUNGS_CTEST_REGEX), ctest runs
#                                     everything on the one GPU.
#   RUNGS_SHARDS=<n>                  gtest shards of the GPU tests and of each sanitizer run at once
#                                     (default: RUNGS_GPUS), shard i on GPU i mod RUNGS_GPUS: on one GPU,
#                                     RUNGS_SHARDS=4 runs four test processes beside each other (their
#                                     fp64 references take the host's cores); 2 or more take the sharded
#                                     path above
#   RUNGS_SHARD_TIMEOUT=3600          seconds one shard may run before it is stopped (a hung kernel)
#   RUNGS_TEST_TIMEOUT=300            seconds one test may run before ctest stops it (a hung kernel)
#   RUNGS_CTEST_REGEX=<regex>         run only the tests whose names match (ctest -R); the every-rung
#                                     check then shows what ran instead of requiring every rung
#   RUNGS_GIT_COMMIT=<sha>            the commit to record (default: git rev-parse in this tree)
#   RUNGS_SANITIZE_FILTER=<gtest filter>  sanitize these tests only (memcheck and racecheck)
#   RUNGS_SANITIZE_MAX_MNK=<n>        the largest case (m*n*k) the sanitizers run (default 2^22)
#   RUNGS_MEMCHECK_FILTER, RUNGS_RACECHECK_FILTER  the same for one tool (before RUNGS_SANITIZE_FILTER)
#   RUNGS_BENCH_ARGS="<args>[;<args>...]" bench: `rungs bench <args>` per item instead of the main job,
#                                     item i's JSON in bench-part<i>.json
# The test stage and each sanitizer run end with the every-rung check: the GPU tests write one line
# "<ladder> <rung> <test>" for each rung that ran a real case in a test (tests/gpu_env.hpp,
# record_ran) to ran-tests.log, ran-memcheck.log or ran-racecheck.log, and every rung that
# `rungs list` names for the ladders asked for must be there, or the stage fails naming the rungs
# that never ran.
# On one H100 everything takes longer than one 10-minute device call: the GPU tests take more than
# 7 GPU-minutes on a 16-core host (the first 869, up to GemmTc's DecodeShapesFewRows, 400 s; that
# test, StreamKTails, ShortLastRow and TileMultiplesAndNeighbours of every tensor-core rung the most)
# and the gemm racecheck alone ~10 (blocktile_2d's OddShapes 3).
# Split it, e.g. `scripts/gpu.sh build test` with RUNGS_LADDERS=gemm, then with "gemv reduce", then
# `scripts/gpu.sh sanitize`, then `scripts/gpu.sh bench`; on a machine of several GPUs the test and
# sanitize stages run sharded over them (RUNGS_GPUS). Keep the machine's CPUs for the tests while
# they run (no build beside them): their fp64 references run on the host. The gemm ladder's
# bench alone (952 rows with the decode and fp8 workloads, before decode_fp8's) runs more than 7
# minutes on an H100 and the build about 3: build in one call, then bench in parts on the warm
# machine, e.g. RUNGS_BENCH_ARGS="gemm --workload bf16,tf32x3,fp8,decode_fp8" scripts/gpu.sh bench,
# then the same with "gemm --workload f32,decode;gemv;reduce" (scripts/report.py takes each of its
# ladders, gemm (f32), gemm_tc (bf16, tf32x3, fp8), decode, decode_fp8, gemv, reduce, from the
# newest run that measured it, so a part must hold whole ladders).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1  # absolute: the tests run in build-gpu/tests
unset RUNGS_TEST_RAN_LOG                             # set per stage below, for its test runs only
# NVLink multicast stays off on these machines, for every program this script starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize bench)
has() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
status=0
LADDERS=${RUNGS_LADDERS:-gemm gemv reduce gemm_host dist}
on() { [[ " $LADDERS " == *" $1 "* ]]; }
# ctest exclusion regex and sanitizer gtest filters per ladder.
ctest_re="" memcheck_f="" racecheck_f=""
add() { local v=$1 x=$2; [ -z "${!v}" ] && printf -v "$v" '%s' "$x" || printf -v "$v" '%s' "${!v}$3$x"; }
if on gemm; then
  add memcheck_f 'Ladder/GemmRung.OddShapes*:Ladder/GemmRung.Padded*:Ladder/GemmRung.Misaligned*:Ladder/GemmRung.EmptyProduct*:TestTheTest.*:Warptile/WarptileConfig.*' ':'
  add racecheck_f 'Ladder/GemmRung.OddShapes*:Ladder/GemmRung.Misaligned*' ':'
  # The epilogues (tests/gpu/test_gemm_epilogue.cpp): the plain kernel after a product, the fused part.
  add memcheck_f 'Rungs/GemmEpilogue.*' ':'
  add racecheck_f 'Rungs/GemmEpilogue.*' ':'
  # The tensor-core kinds (tests/gpu/test_gemm_tc.cpp); the ragged-edge tests (sized for the
  # sanitizers) reach the storer warps' hand-over, the narrow-tile deal and the short last row.
  add memcheck_f 'Ladder/GemmTc.OddShapes*:Ladder/GemmTc.Padded*:Ladder/GemmTc.Misaligned*:Ladder/GemmTc.EmptyProduct*' ':'
  add racecheck_f 'Ladder/GemmTc.OddShapes*:Ladder/GemmTc.Misaligned*' ':'
  edges='Ladder/GemmTc.RaggedShapesAlignedRows*:Ladder/GemmTc.NarrowLastColumn*:Ladder/GemmTc.ShortLastRow*'
  add memcheck_f "$edges" ':'
  add racecheck_f "$edges" ':'
  # The decode rungs' own cases (sized for the sanitizers): ragged k slices, split-K partials, the
  # nn kernel's shared-memory sums. DecodeShapes' k are odd (rows TMA cannot address), so the kernels
  # of rungs 26 and 27 run in DecodeShapesFewRows (aligned rows; its cases with m n k <= 2^22: n8, n16
  # and n32, split k / tiles cut between blocks, the captured split case), and rung 33's fitted tile
  # widths in DecodeFittedWidths.
  add memcheck_f 'Ladder/GemmTc.DecodeShapes/decode_*:Ladder/GemmTc.DecodeShapesFewRows/decode_*:Ladder/GemmTc.DecodeFittedWidths/decode_*' ':'
  add racecheck_f 'Ladder/GemmTc.DecodeShapes/decode_*:Ladder/GemmTc.DecodeShapesFewRows/decode_*:Ladder/GemmTc.DecodeFittedWidths/decode_*' ':'
  # The fp8 rungs (tests/gpu/test_gemm_fp8.cpp): odd shapes in every format, scaling and transpose,
  # alpha/beta with padded rows, decode_fp8's decode shapes and decode_fp8_wide's block widths.
  fp8='Rungs/GemmFp8.FormatsScalingsTransposesOddShapes/*:Rungs/GemmFp8.BetaAlphaAndPaddedRows/*:Rungs/GemmFp8.DecodeShapes/*:Rungs/GemmFp8.DecodeFittedWidths/*'
  add memcheck_f "$fp8" ':'
  add racecheck_f "$fp8" ':'
fi
if on gemv; then
  add memcheck_f 'Ladder/GemvRung.OddShapes*:Ladder/GemvRung.StridedXAndY*:Ladder/GemvRung.MisalignedPointers*:Ladder/GemvRung.PaddedLeadingDimension*:Ladder/GemvRung.EmptyProduct*:Ladder/GemvRung.EmptyY*' ':'
  add racecheck_f 'Ladder/GemvRung.OddShapes*:Ladder/GemvRung.MisalignedPointers*' ':'
fi
if on reduce; then
  add memcheck_f 'Ladder/ReduceRung.RandomAllTypes*:Ladder/ReduceRung.MisalignedInput*:Ladder/ReduceRung.EmptySum*:Ladder/ReduceRung.SmallIntegers*' ':'
  add racecheck_f 'Ladder/ReduceRung.RandomAllTypes*:Ladder/ReduceRung.MisalignedInput*' ':'
fi
[ -n "$racecheck_f" ] && racecheck_f+='-*/cublas*:*/auto*:*/cub'
if on gemm_host; then  # no kernels of its own (racecheck has nothing to see); memcheck sees its copies' targets
  add memcheck_f 'GemmHost.OddShapes*:GemmHost.SmallStaging*:GemmHost.CUnpacked*:GemmHost.LargerThan*:GemmHost.Failure*:GemmHost.Repeated*:GemmHost.HalfAndBfloat16' ':'
fi
# ctest leaves out the tests of the ladders not asked for.
on gemm_host || add ctest_re 'GemmHost' '|'
on dist || add ctest_re 'DistThreads|DistProcesses|DistOneRank' '|'
on gemv || add ctest_re 'GemvRung|GemvDeterminism' '|'
on reduce || add ctest_re 'ReduceRung|ReduceConcurrency|ReduceAuto' '|'
on gemm || add ctest_re 'GemmRung|GemmTc|GemmFp8|GemmAccuracy|WarptileConfig|TestTheTest\.' '|'
# The same exclusions as a gtest filter, for the sharded runs of rungs_gpu_tests.
gtest_neg=""
on gemm_host || add gtest_neg 'GemmHost.*' ':'
on gemv || add gtest_neg '*GemvRung.*:GemvDeterminism.*' ':'
on reduce || add gtest_neg '*ReduceRung.*:ReduceConcurrency.*:ReduceAuto.*' ':'
on gemm || add gtest_neg '*GemmRung.*:*GemmTc.*:*GemmTcTf32.*:*GemmFp8.*:GemmAccuracy.*:*WarptileConfig.*:TestTheTest.*' ':'
gpus=${RUNGS_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[[ "$gpus" =~ ^[0-9]+$ ]] && [ "$gpus" -ge 1 ] || gpus=1
nshards=${RUNGS_SHARDS:-$gpus}
[[ "$nshards" =~ ^[0-9]+$ ]] && [ "$nshards" -ge 1 ] || nshards=$gpus
# shards N LOG CMD...: CMD (a gtest program, or compute-sanitizer running one) as N gtest shards at
# once, shard g on GPU g mod gpus, its output in LOG-g.log (LOG.log when N = 1); false if any failed.
shards() {
  local n=$1 log=$2 g rc=0 pids=()
  shift 2
  if [ "$n" -le 1 ]; then
    "$@" >"$log.log" 2>&1
    return
  fi
  for ((g = 0; g < n; ++g)); do
    CUDA_VISIBLE_DEVICES=$((g % gpus)) GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$g \
      timeout "${RUNGS_SHARD_TIMEOUT:-3600}" "$@" >"$log-$g.log" 2>&1 &
    pids+=($!)
  done
  for ((g = 0; g < n; ++g)); do
    wait "${pids[$g]}" || { rc=$?; echo "shard $g (GPU $((g % gpus))): exit status $rc, $log-$g.log"; }
  done
  return $rc
}
log() { echo "=== $* ($(date +%T))"; }

# rung_names LADDER: the rungs of LADDER, one name a line, from the table of `rungs list LADDER`
# (its rows start with the rung's number; the heading "LADDER (N rungs):" gives the count).
rung_names() {
  build-gpu/rungs list "$1" | awk -v op="$1" -v ours="${2:-}" '
    $1 == op && $2 ~ /^\([0-9]+$/ { want = substr($2, 2) + 0 }
    $1 ~ /^[0-9]+$/ { if (!(ours && $4 == "yes")) print $2; ++got }
    END { if (got == 0 || got != want) { print "rungs list " op ": read " got " rungs, the heading says " want > "/dev/stderr"; exit 1 } }'
}
# every_rung_ran WHAT LOG [shown]: for each ladder asked for (of gemm gemv reduce), the rungs of
# `rungs list` that have no line in LOG (the tests' record of the rungs that ran a case). One line of
# output, e.g. "every rung ran (tests): gemm 24/24, gemv 8/8, reduce 9/9: ok"; when a rung never
# ran, FAILED and false, naming the rungs (with "shown": the counts and names only, true).
every_rung_ran() {
  local what=$1 ran_log=$2 shown=${3:-} op names never counts="" missing="" n
  for op in gemm gemv reduce allgather_gemm gemm_reducescatter; do
    case $op in
      allgather_gemm | gemm_reducescatter)
        # The dist ladders: in the test stage (the sanitizers do not run them), where the build has
        # them and 2 or more GPUs run their tests.
        [[ $what == tests* ]] && on dist && [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] &&
          build-gpu/rungs list "$op" | grep -q "^$op (" || continue ;;
      *) on "$op" || continue ;;
    esac
    # racecheck runs our kernels only (the vendor baselines stay out of its filter, see below).
    if ! names=$(rung_names "$op" "$([[ $what == racecheck* ]] && echo ours)"); then
      missing+=" $op/(rungs list failed)"
      continue
    fi
    n=$(grep -c . <<<"$names")
    never=$(awk -v op="$op" -v ran_log="$ran_log" '
      BEGIN { while ((getline line < ran_log) > 0) { split(line, f, " "); if (f[1] == op) ran[f[2]] = 1 } }
      !($1 in ran) { print op "/" $1 }' <<<"$names")
    counts+="${counts:+, }$op $((n - $(grep -c . <<<"$never")))/$n"
    [ -n "$never" ] && missing+=" $(paste -sd' ' <<<"$never")"
  done
  if [ -z "$counts$missing" ]; then
    echo "every rung ran ($what): no ladder asked for"
  elif [ -z "$missing" ]; then
    echo "every rung ran ($what): $counts: ok"
  elif [ -n "$shown" ]; then
    echo "every rung ran ($what): $counts; never ran:$missing"
  else
    echo "every rung ran ($what): $counts: FAILED, never ran:$missing"
    return 1
  fi
}

log "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv 2>&1 | tee "$OUT/device.txt"
# RUNGS_GIT_COMMIT, when set, names the commit (a copy of a working tree may carry a stale .git).
if [ -n "${RUNGS_GIT_COMMIT:-}" ]; then
  echo "commit $RUNGS_GIT_COMMIT (given)" | tee -a "$OUT/device.txt"
else
  RUNGS_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  echo "commit $RUNGS_GIT_COMMIT$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')" | tee -a "$OUT/device.txt"
fi

# The Python package's build (pip install . into build-py/venv) needs the CPU, not the GPU: with the
# test or sanitize stage it runs beside them.
# No index on a GPU machine: nanobind, scikit-build-core, torch, CuPy and JAX come from the
# machine's python3 (--no-build-isolation). That python3 may itself live in a virtual environment,
# whose packages a new venv does not see (--system-site-packages reaches the base interpreter's
# only): a .pth file names its site-packages. build-py/build keeps the wheel's CMake build.
python_build() {
  if [ ! -x build-py/venv/bin/python ]; then
    python3 -m venv --system-site-packages build-py/venv &&
      python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
        >"$(build-py/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/machine-site.pth" ||
      return 1
  fi
  # Device code for this machine's GPU only (a wheel's default is five architectures, several times
  # the compile time): sm_90a on Hopper, else the GPU's own.
  local cap
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  [ "$cap" = 90 ] && cap=90a
  RUNGS_CUDA_ARCHITECTURES=${RUNGS_CUDA_ARCHITECTURES:-${cap:-90a}} \
    build-py/venv/bin/python -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=build-py/build . \
    >"$OUT/python-build.log" 2>&1
}
py_build_pid=""
if has python && { has test || has sanitize; }; then
  python_build & py_build_pid=$!
fi

# The CLI and test build (build-gpu): asked for, or missing where a stage runs it (python alone
# needs only the package's own build).
needs_cli() { has test || has sanitize || has bench || has profile || has tune; }
if has build || { [ ! -x build-gpu/rungs ] && needs_cli; }; then
  log "build"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  grep -E "registers|spill|lmem" "$OUT/build.log" | head -5
fi
export RUNGS_GIT_COMMIT

if has test && [ "$nshards" -gt 1 ] && [ -z "${RUNGS_CTEST_REGEX:-}" ]; then
  log "tests (full GPU suite: $nshards shards on $gpus GPUs; then the dist tests on all GPUs, the CPU tests)"
  : >"$OUT/ran-tests.log"
  export RUNGS_TEST_RAN_LOG="$OUT/ran-tests.log"
  shards "$nshards" "$OUT/tests-shard" build-gpu/tests/rungs_gpu_tests --gtest_filter="-Dist*${gtest_neg:+:$gtest_neg}" ||
    status=1
  if on dist; then
    timeout "${RUNGS_SHARD_TIMEOUT:-3600}" build-gpu/tests/rungs_gpu_tests --gtest_filter='Dist*' \
      >"$OUT/tests-dist.log" 2>&1 || status=1
  fi
  unset RUNGS_TEST_RAN_LOG
  (cd build-gpu && ctest -LE gpu --output-on-failure -j"$(nproc)" --timeout "${RUNGS_TEST_TIMEOUT:-300}" \
    >"$OUT/tests-cpu.log" 2>&1) || status=1
  for f in "$OUT"/tests-shard-*.log "$OUT"/tests-dist.log; do
    [ -f "$f" ] || continue
    echo "${f##*/}: $(grep -E '^\[  (PASSED|FAILED)  \]|^\[  SKIPPED \] [0-9]+ test' "$f" | tr -s ' ' | paste -sd' ')"
    grep -E '^\[  FAILED  \] [^0-9]' "$f" | head -20
  done
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/tests-cpu.log" | head -20
  cat "$OUT"/tests-shard-*.log "$OUT"/tests-dist.log "$OUT/tests-cpu.log" >"$OUT/tests.log" 2>/dev/null
  rm -f "$OUT"/tests-shard-*.log "$OUT"/tests-dist.log "$OUT/tests-cpu.log"
  every_rung_ran tests "$OUT/ran-tests.log" || status=1
  if on gemm; then
    build-gpu/tests/rungs_gpu_tests --gtest_filter='GemmAccuracy.*' 2>&1 | grep -E "max relative|OK|FAIL" | head
  fi
elif has test; then
  log "tests (full GPU suite)"
  : >"$OUT/ran-tests.log"
  (cd build-gpu && RUNGS_TEST_RAN_LOG="$OUT/ran-tests.log" ctest --output-on-failure -j"${RUNGS_CTEST_JOBS:-3}" \
    --timeout "${RUNGS_TEST_TIMEOUT:-300}" ${ctest_re:+-E "$ctest_re"} ${RUNGS_CTEST_REGEX:+-R "$RUNGS_CTEST_REGEX"} \
    >"$OUT/tests.log" 2>&1) || status=1
  grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Failed|Total Test time" "$OUT/tests.log" | head -40
  echo "$(grep -cE '^\s+[0-9]+ - .* \(Skipped\)$' "$OUT/tests.log") tests skipped (listed at the end of tests.log)"
  if [ -n "${RUNGS_CTEST_REGEX:-}" ]; then
    every_rung_ran "tests, a given regex: not checked" "$OUT/ran-tests.log" shown
  else
    every_rung_ran tests "$OUT/ran-tests.log" || status=1
  fi
  if on gemm; then
    build-gpu/tests/rungs_gpu_tests --gtest_filter='GemmAccuracy.*' 2>&1 | grep -E "max relative|OK|FAIL" | head
  fi
fi

if has sanitize; then
  # Small shapes only (RUNGS_TEST_MAX_MNK): the sanitizers slow kernels down by 10-100x (racecheck
  # more on the CUDA-core rungs' shared-memory tiles: blocktile_2d's odd shapes ran over 5 minutes
  # at 2^22; RUNGS_SANITIZE_MAX_MNK lowers the limit for such a run).
  export RUNGS_TEST_MAX_MNK=${RUNGS_SANITIZE_MAX_MNK:-$((1 << 22))}
  # sanitize TOOL FILTER DEFAULT [ARGS...]: the GPU tests of FILTER under compute-sanitizer TOOL
  # (none: skip), then the every-rung check where FILTER is the ladders' DEFAULT (a filter given
  # through RUNGS_*_FILTER picks tests on purpose: the rungs it ran are shown, not held to all).
  sanitize() {
    local tool=$1 filter=$2 default=$3; shift 3
    [ -n "$filter" ] || return 0
    log "compute-sanitizer $tool$([ "$nshards" -gt 1 ] && echo " ($nshards shards on $gpus GPUs)")"
    : >"$OUT/ran-$tool.log"
    RUNGS_TEST_RAN_LOG="$OUT/ran-$tool.log" shards "$nshards" "$OUT/$tool" compute-sanitizer --tool "$tool" "$@" \
      --error-exitcode 9 build-gpu/tests/rungs_gpu_tests --gtest_filter="$filter" || status=1
    if [ "$nshards" -gt 1 ]; then
      cat "$OUT/$tool"-[0-9]*.log >"$OUT/$tool.log" && rm -f "$OUT/$tool"-[0-9]*.log
      grep -E "^\[  (PASSED|FAILED)  \]|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$tool.log"
    else
      tail -4 "$OUT/$tool.log"
    fi
    grep -m5 -E "Invalid|hazard|ERROR SUMMARY: [1-9]" "$OUT/$tool.log"
    if [ "$filter" = "$default" ]; then
      every_rung_ran "$tool" "$OUT/ran-$tool.log" || status=1
    else
      every_rung_ran "$tool, a given filter: not checked" "$OUT/ran-$tool.log" shown
    fi
  }
  sanitize memcheck "${RUNGS_MEMCHECK_FILTER:-${RUNGS_SANITIZE_FILTER:-$memcheck_f}}" "$memcheck_f" --leak-check full
  # racecheck looks at our kernels only: the vendor baselines (cublas, cub) and auto (which runs them
  # at many of the tests' shapes) stay out. cuBLASLt's fp8 kernels synchronize through mbarriers
  # racecheck does not follow (WAR hazards reported in every launch), and under racecheck cuBLAS's
  # kernels for the smallest and decode shapes (f16 1x1x1, fp8 1x144x224) end in "The Sanitizer
  # failed to handle a hardware exception", which leaves the context unusable for the tests after.
  # Every rung auto can choose is sanitized by name.
  sanitize racecheck "${RUNGS_RACECHECK_FILTER:-${RUNGS_SANITIZE_FILTER:-$racecheck_f}}" "$racecheck_f" \
    --racecheck-report hazard
  # The dist ladders' reduce-scatter (its partial products, epilogues and NCCL buffers) under
  # memcheck, on 2+ GPUs. --report-api-errors no: NCCL probes kernel images for other GPUs and
  # re-enables peer access, API errors it expects. The all-gather tests stay out: NCCL's LL protocol
  # reads a send buffer in 16-byte blocks, past the end of one whose size is not a multiple of 16
  # (NVIDIA/nccl issues 265 and 816; inside the block, never another page), which memcheck reports
  # and stops on at the tests' odd sizes.
  if [ -z "${RUNGS_SANITIZE_FILTER:-}${RUNGS_MEMCHECK_FILTER:-}" ] && on dist &&
    [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] && build-gpu/rungs list gemm_reducescatter >/dev/null 2>&1; then
    log "compute-sanitizer memcheck (dist: gemm_reducescatter)"
    compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 build-gpu/tests/rungs_gpu_tests \
      --gtest_filter='DistThreads.GemmReduceScatterEveryRung' >"$OUT/memcheck-dist.log" 2>&1 || status=1
    tail -3 "$OUT/memcheck-dist.log"; grep -m5 -E "Invalid|ERROR SUMMARY" "$OUT/memcheck-dist.log"
  fi
  unset RUNGS_TEST_MAX_MNK
fi

if has bench; then
  log "rungs info"
  build-gpu/rungs info | tee "$OUT/info.txt"
  log "rungs bench (the main job)"
  # The table goes to stdout (and bench.txt); the JSON (Google Benchmark layout) to bench.json.
  if [ -n "${RUNGS_BENCH_ARGS:-}" ]; then
    : >"$OUT/bench.txt"
    IFS=';' read -ra items <<<"$RUNGS_BENCH_ARGS"
    part=0
    for item in "${items[@]}"; do
      part=$((part + 1))
      echo "\$ rungs bench $item" | tee -a "$OUT/bench.txt"
      # shellcheck disable=SC2086
      build-gpu/rungs bench $item --format json --output "$OUT/bench-part$part.json" 2>>"$OUT/bench.progress" |
        tee -a "$OUT/bench.txt" || status=1
    done
  elif on gemm && on gemv && on reduce; then
    bench_all=1  # `rungs bench` adds the dist ladders where 2+ GPUs are visible
    build-gpu/rungs bench --format json --output "$OUT/bench.json" 2>"$OUT/bench.progress" | tee "$OUT/bench.txt" ||
      status=1
  else
    : >"$OUT/bench.txt"
    for op in gemm gemv reduce; do
      on "$op" || continue
      build-gpu/rungs bench "$op" --format json --output "$OUT/bench-$op.json" 2>>"$OUT/bench.progress" |
        tee -a "$OUT/bench.txt" || status=1
    done
  fi
  tail -3 "$OUT/bench.progress"
  if on dist && [ -z "${bench_all:-}" ] && [ -z "${RUNGS_BENCH_ARGS:-}" ] &&
    build-gpu/rungs list allgather_gemm | grep -q "^allgather_gemm ("; then
    for op in allgather_gemm gemm_reducescatter; do
      log "rungs bench $op"
      build-gpu/rungs bench "$op" 2>>"$OUT/bench.progress" | tee -a "$OUT/bench.txt" || status=1
    done
  fi
  if on gemm_host; then
    log "rungs bench gemm_host"
    build-gpu/rungs bench gemm_host --format json --output "$OUT/bench-host.json" 2>>"$OUT/bench.progress" |
      tee "$OUT/bench-host.txt" || status=1
  fi
fi

if has profile; then
  log "rungs profile gemm --size 4096"
  build-gpu/rungs profile gemm --size 4096 2>>"$OUT/profile.progress" | tee "$OUT/profile.txt" || status=1
fi

if has tune; then
  log "rungs tune gemm"
  build-gpu/rungs tune gemm --size 1024,2048,4096,8192 2>/dev/null | tee "$OUT/tune.txt" || status=1
fi
if has python; then
  log "python: pip install . (build-py), pytest, bench_python.py, bench_epilogue_torch.py"
  if [ -n "$py_build_pid" ]; then wait "$py_build_pid"; else python_build; fi ||
    { tail -30 "$OUT/python-build.log"; status=1; }
  build-py/venv/bin/python -m pytest -q -rs python/tests 2>&1 | tee "$OUT/pytest.txt" | tail -25
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  build-py/venv/bin/python scripts/bench_python.py --json "$OUT/bench-python.json" | tee "$OUT/bench-python.txt" ||
    status=1
  build-py/venv/bin/python scripts/bench_epilogue_torch.py --json "$OUT/bench-epilogue-torch.json" |
    tee "$OUT/bench-epilogue-torch.txt" || status=1
fi
# A remote runner may bring back only a few files (the device tool: 8): past 7, everything but the
# summaries goes into one archive, results.tar.gz.
mapfile -t outs < <(find "$OUT" -maxdepth 1 -type f ! -name results.tar.gz -printf '%f\n' | sort)
if [ ${#outs[@]} -gt 7 ]; then
  keep=" device.txt bench.txt bench.json bench-host.json bench-python.json bench-epilogue-torch.json profile.txt tests.log pytest.txt "
  (cd "$OUT" && tar czf results.tar.gz "${outs[@]}") && for f in "${outs[@]}"; do
    [[ "$keep" == *" $f "* ]] || rm -f "$OUT/$f"
  done
  echo "$OUT: ${#outs[@]} files, all in results.tar.gz; beside it: $(cd "$OUT" && find . -maxdepth 1 -type f \
    ! -name results.tar.gz -printf '%f ')"
fi
log "done, status $status"
exit $status
