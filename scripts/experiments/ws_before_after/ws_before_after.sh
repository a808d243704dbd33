#!/usr/bin/env bash
# The tensor-core rungs of this tree against those of another commit, interleaved in one run:
# ROUNDS rounds of `rungs bench gemm`, the other build first in each round; then the table of
# medians (ws_before_after.py).
# Usage (on the GPU, after scripts/gpu.sh build): scripts/experiments/ws_before_after/ws_before_after.sh
#   BEFORE=<commit> (default d1f851d: the family as one kernel with boolean switches), or
#   SRC_BEFORE=<dir> (that commit's src/, when this clone lacks it); ROUNDS (default 3);
#   SET=ws (default: the warp-specialized rungs at the seed and ragged shapes) or SET=guard (every
#   tensor-core rung and auto at the skeleton's guard shapes; rungs by name, which a renumbering keeps: the dense squares, decode, fp8 in its
#   three scalings, fp8 decode, the prefill products), PARTS (guard: any of "dense decode fp8
#   fp8decode prefill", default all, so that a 10-minute call can take some of them); a row to rerun:
#   DECODE_NK ("28672x8192 ..."), DECODE_M, DECODE_VARIANTS, FP8DECODE_SCALINGS, FP8DECODE_M,
#   FP8DECODE_VARIANTS.
# Output: $OUT/ws_before_after.csv and $OUT/ws_before_after.md.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
ROUNDS=${ROUNDS:-3}
OLD=${TMPDIR:-/tmp}/rungs_before
if [ ! -x "$OLD/build/rungs" ]; then
  rm -rf "$OLD" && mkdir -p "$OLD" && cp -r CMakeLists.txt cmake include scripts tests examples "$OLD/"
  if [ -n "${SRC_BEFORE:-}" ]; then cp -r "$SRC_BEFORE" "$OLD/src"
  else git archive "${BEFORE:-d1f851d}" src | tar -x -C "$OLD" || { echo "no commit ${BEFORE:-d1f851d} here: set SRC_BEFORE" >&2; exit 1; }
  fi
  (cd "$OLD" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNGS_BUILD_TESTS=OFF >build.log 2>&1 &&
    cmake --build build -j"$(nproc)" >>build.log 2>&1) || { tail -30 "$OLD/build.log"; exit 1; }
fi
csv="$OUT/ws_before_after.csv"
: >"$csv"
run() {  # label binary bench-args... (a --variant list keeps the names this binary has, and auto)
  local label=$1 bin=$2 tmp a have args=()
  shift 2
  have=" auto $("$bin" list gemm | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}')"
  while [ $# -gt 0 ]; do
    a=$1
    shift
    if [ "$a" = --variant ]; then
      a=$(tr , '\n' <<<"$1" | while read -r v; do [[ $have == *" $v "* ]] && printf '%s,' "$v"; done)
      args+=(--variant "${a%,}")
      shift
    else
      args+=("$a")
    fi
  done
  set -- "${args[@]}"
  tmp=$(mktemp)
  "$bin" bench gemm "$@" --format csv --quiet --output "$tmp" >/dev/null || echo "failed: $label $*" >&2
  sed "s/^/$label,$round,/" "$tmp" >>"$csv"
  rm -f "$tmp"
}
guard() {  # side binary: the guard's shapes, the parts asked for
  local side=$1 bin=$2 part
  for part in ${PARTS:-dense decode fp8 fp8decode prefill}; do
    case $part in
      dense)
        run $side $bin --dtype bf16,f16,tf32 --size 2048,4096,8192 --variant wgmma,wgmma_ws,wgmma_narrow,wgmma_tma_store,wgmma_pingpong,wgmma_streamk,wgmma_ragged,wgmma_overlap,wgmma_deal,wgmma_balanced,wgmma_sums,auto
        run $side $bin --dtype tf32x3 --size 2048,4096,8192 --variant wgmma_x3,wgmma_x3_rs,auto ;;
      decode)
        for nk in ${DECODE_NK:-7168x8192 28672x8192 8192x28672}; do
          run $side $bin --dtype bf16 --trans nt --m "${DECODE_M:-1,16,64,128}" --n "${nk%x*}" --k "${nk#*x}" \
            --variant "${DECODE_VARIANTS:-decode_wgmma,decode_streamk,decode_resident,decode_wide,auto}"
        done ;;
      fp8)
        for sc in tensor outer block128; do
          run $side $bin --dtype fp8 --trans nt --scaling $sc --size 2048,4096,8192 --variant wgmma_fp8,wgmma_fp8_promote,wgmma_fp8_overlap,auto
        done ;;
      fp8decode)
        for sc in ${FP8DECODE_SCALINGS:-tensor outer block128}; do
          run $side $bin --dtype fp8 --trans nt --scaling $sc --m "${FP8DECODE_M:-1,16,64,128}" --n 7168,28672 --k 8192 \
            --variant "${FP8DECODE_VARIANTS:-decode_fp8,decode_fp8_wide,auto}"
        done ;;
      prefill)
        for nk in "6144 4096" "4096 4096" "28672 4096" "4096 14336" "128256 4096"; do
          set -- $nk
          run $side $bin --dtype bf16 --trans nt --m 2048 --n "$1" --k "$2" --variant auto
        done ;;
    esac
  done
}
for round in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    bin=build-gpu/rungs
    [ $side = before ] && bin=$OLD/build/rungs
    if [ "${SET:-ws}" = guard ]; then
      guard $side $bin
      continue
    fi
    run $side $bin --dtype bf16,f16,tf32 --size 2048,4096,8192 --variant wgmma_ws,wgmma_tma_store,wgmma_streamk,wgmma_ragged,wgmma_overlap,wgmma_balanced
    run $side $bin --dtype bf16,tf32 --m 4096 --n 4104 --k 4096 --variant wgmma_tma_store,wgmma_ragged,wgmma_balanced
    run $side $bin --dtype bf16,tf32 --m 4095 --n 4097 --k 4093 --variant wgmma_tma_store,wgmma_ragged,wgmma_balanced
    run $side $bin --dtype bf16 --m 4104 --n 4096 --k 4096 --variant wgmma_ragged,wgmma_balanced
    run $side $bin --dtype tf32x3 --size 4096,8192 --variant wgmma_x3,wgmma_x3_rs
  done
done
python3 scripts/experiments/ws_before_after/ws_before_after.py "$csv" | tee "$OUT/ws_before_after.md"
