# Sourced by the device-call experiment scripts (tc_device.sh, ncu_tc.sh, ws_probe.sh): $OUT,
# log, and the build of the targets they need in build-gpu (the tree scripts/gpu.sh builds).
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
log() { echo "=== $* ($(date +%T))"; }
# build_gpu TARGET...: configure build-gpu (Release, Ninja) and build TARGETs with all cores; the
# log goes to $OUT/build.log, its tail to stdout, and the script exits if either step fails.
build_gpu() {
  log build
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target "$@" >>"$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
}
