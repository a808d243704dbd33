#!/usr/bin/env bash
# Everything rungs needs from a GPU machine, in one go (used through the device tool):
# build with all cores, the full GPU test suite, the same tests at small shapes under
# compute-sanitizer (memcheck; racecheck for the shared-memory rungs), then `rungs bench`
# (the main job) and `rungs tune gemm`. Results land under $OUT (default ./out).
# Usage: scripts/gpu.sh [stage ...]   stages: build test sanitize bench tune (default: all but tune)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize bench)
has() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
status=0
log() { echo "=== $* ($(date +%T))"; }

log "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv 2>&1 | tee "$OUT/device.txt"
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')" | tee -a "$OUT/device.txt"

if has build || [ ! -x build-gpu/rungs ]; then
  log "build"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  grep -E "registers|spill|lmem" "$OUT/build.log" | head -5
fi
export RUNGS_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

if has test; then
  log "tests (full GPU suite)"
  (cd build-gpu && ctest --output-on-failure -j1 >"$OUT/tests.log" 2>&1) || status=1
  tail -15 "$OUT/tests.log"
  grep -E "Kahan|max relative error" "$OUT/tests.log" | head -5
  build-gpu/tests/rungs_gpu_tests --gtest_filter='GemmAccuracy.*' 2>&1 | grep -E "max relative|OK|FAIL" | head
fi

if has sanitize; then
  # Small shapes only (RUNGS_TEST_MAX_MNK): the sanitizers slow kernels down by 10-100x.
  export RUNGS_TEST_MAX_MNK=$((1 << 22))
  log "compute-sanitizer memcheck"
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    build-gpu/tests/rungs_gpu_tests --gtest_filter='Ladder/GemmRung.OddShapes*:Ladder/GemmRung.Padded*:Ladder/GemmRung.Misaligned*:Ladder/GemmRung.EmptyProduct*:TestTheTest.*' \
    >"$OUT/memcheck.log" 2>&1 || status=1
  tail -4 "$OUT/memcheck.log"; grep -m5 -E "Invalid|ERROR SUMMARY" "$OUT/memcheck.log"
  log "compute-sanitizer racecheck"
  compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 9 \
    build-gpu/tests/rungs_gpu_tests --gtest_filter='Ladder/GemmRung.OddShapes*:Ladder/GemmRung.Misaligned*' \
    >"$OUT/racecheck.log" 2>&1 || status=1
  tail -4 "$OUT/racecheck.log"; grep -m5 -E "hazard|ERROR SUMMARY" "$OUT/racecheck.log"
  unset RUNGS_TEST_MAX_MNK
fi

if has bench; then
  log "rungs info"
  build-gpu/rungs info | tee "$OUT/info.txt"
  log "rungs bench (the main job)"
  # The table goes to stdout (and bench.txt); the JSON (Google Benchmark layout) to bench.json.
  build-gpu/rungs bench --format json --output "$OUT/bench.json" 2>"$OUT/bench.progress" | tee "$OUT/bench.txt" ||
    status=1
  tail -3 "$OUT/bench.progress"
fi

if has tune; then
  log "rungs tune gemm"
  build-gpu/rungs tune gemm --size 1024,2048,4096,8192 2>/dev/null | tee "$OUT/tune.txt" || status=1
fi
log "done, status $status"
exit $status
