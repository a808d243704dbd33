# Sourced by the probes' scripts (scripts/experiments/*/*.sh, and run_cu for the .cu probes): $OUT,
# log, the build of the targets they need in build-gpu (the tree scripts/gpu.sh builds) or, for those
# that use the CLI's experiment flags, in build-exp (-DRUNGS_EXPERIMENTS=ON), and standalone probe
# programs.
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
log() { echo "=== $* ($(date +%T))"; }
# build_gpu TARGET...: configure build-gpu (Release, Ninja) and build TARGETs with all cores; the
# log goes to $OUT/build.log, its tail to stdout, and the script exits if either step fails.
build_gpu() {
  log build
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target "$@" >>"$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
}
# build_exp TARGET...: the same in build-exp, configured with -DRUNGS_EXPERIMENTS=ON: the CLI's --plan
# and --trace (gemm_host's forced plans and traced calls). The library is the same as build-gpu's.
build_exp() {
  log "build (experiments)"
  cmake -S . -B build-exp -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNGS_EXPERIMENTS=ON >"$OUT/build.log" 2>&1 &&
    cmake --build build-exp -j"$(nproc)" --target "$@" >>"$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
}
# run_cu NAME [ARGS...]: compile scripts/experiments/NAME/NAME.cu alone (sm_90a, the library's headers)
# into build-experiments/NAME and run it with ARGS; output to stdout.
run_cu() {
  local name=$1; shift
  mkdir -p build-experiments
  nvcc -std=c++17 -O3 -arch=sm_90a -Iinclude -Isrc --expt-relaxed-constexpr \
    "scripts/experiments/$name/$name.cu" -o "build-experiments/$name" && "build-experiments/$name" "$@"
}
# host_tests CPU_FILTER: the GemmHost GPU tests (log in $OUT/gemmhost_tests.log, summary on stdout) and
# the CPU tests of CPU_FILTER (gemm_host's experiment scripts; needs build-exp's rungs_gpu_tests and
# rungs_cpu_tests).
host_tests() {
  log tests
  build-exp/tests/rungs_gpu_tests --gtest_filter='GemmHost.*' >"$OUT/gemmhost_tests.log" 2>&1; echo "GemmHost rc $?"
  grep -E "PASSED|FAILED" "$OUT/gemmhost_tests.log" | tail -5
  build-exp/tests/rungs_cpu_tests --gtest_filter="$1" 2>&1 | tail -1
}
# build_host_probe: scripts/experiments/host_probe/host_probe.cpp (it sets Tuning's hooks) against
# build-exp/librungs.a (build_exp rungs first), into build-exp/host_probe.
build_host_probe() {
  g++ -O2 -std=c++17 -Iinclude -Isrc -I/usr/local/cuda/include scripts/experiments/host_probe/host_probe.cpp \
    build-exp/librungs.a -L/usr/local/cuda/lib64 -lcublas -lcublasLt -lcudart -lcuda -lpthread -ldl -o build-exp/host_probe
}
