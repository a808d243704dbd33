#!/usr/bin/env bash
# The warp-specialized rungs (15-23) of this tree against those of another commit, interleaved in
# one run: ROUNDS rounds of `rungs bench gemm` at the seed sizes and the ragged shapes, the other
# build first in each round; then the table of medians (ws_before_after.py).
# Usage (on the GPU, after scripts/gpu.sh build): scripts/experiments/ws_before_after/ws_before_after.sh
#   BEFORE=<commit> (default d1f851d: the family as one kernel with boolean switches), or
#   SRC_BEFORE=<dir> (that commit's src/, when this clone lacks it); ROUNDS (default 3).
# Output: $OUT/ws_before_after.csv and $OUT/ws_before_after.md.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
ROUNDS=${ROUNDS:-3}
OLD=${TMPDIR:-/tmp}/rungs_before
if [ ! -x "$OLD/build/rungs" ]; then
  rm -rf "$OLD" && mkdir -p "$OLD" && cp -r CMakeLists.txt cmake include scripts tests "$OLD/"
  if [ -n "${SRC_BEFORE:-}" ]; then cp -r "$SRC_BEFORE" "$OLD/src"
  else git archive "${BEFORE:-d1f851d}" src | tar -x -C "$OLD" || { echo "no commit ${BEFORE:-d1f851d} here: set SRC_BEFORE" >&2; exit 1; }
  fi
  (cd "$OLD" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNGS_BUILD_TESTS=OFF >build.log 2>&1 &&
    cmake --build build -j"$(nproc)" >>build.log 2>&1) || { tail -30 "$OLD/build.log"; exit 1; }
fi
csv="$OUT/ws_before_after.csv"
: >"$csv"
run() {  # label binary bench-args...
  local label=$1 bin=$2 tmp
  shift 2
  tmp=$(mktemp)
  "$bin" bench gemm "$@" --format csv --quiet --output "$tmp" >/dev/null || echo "failed: $label $*" >&2
  sed "s/^/$label,$round,/" "$tmp" >>"$csv"
  rm -f "$tmp"
}
for round in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    bin=build-gpu/rungs
    [ $side = before ] && bin=$OLD/build/rungs
    run $side $bin --dtype bf16,f16,tf32 --size 2048,4096,8192 --variant 15,17,19,20,21,23
    run $side $bin --dtype bf16,tf32 --m 4096 --n 4104 --k 4096 --variant 17,20,23
    run $side $bin --dtype bf16,tf32 --m 4095 --n 4097 --k 4093 --variant 17,20,23
    run $side $bin --dtype bf16 --m 4104 --n 4096 --k 4096 --variant 20,23
    run $side $bin --dtype tf32x3 --size 4096,8192 --variant 16,22
  done
done
python3 scripts/experiments/ws_before_after/ws_before_after.py "$csv" | tee "$OUT/ws_before_after.md"
