#!/usr/bin/env bash
# The CUDA compiler launcher of the rungs library's target (CMakeLists.txt): runs one nvcc command and
# fails it when ptxas says it serialized a kernel's wgmma instructions ("Potential Performance Loss:
# wgmma.mma_async instructions are serialized", C7510-C7520). ptxas prints that as information, not
# as a warning -Werror could catch, and it silently costs a Hopper rung much of its speed (C7520: a
# branch between a stage's two wgmmas; C7511 / C7514: two copies of an epilogue in one kernel).
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
"$@" 2>"$err"
rc=$?
cat "$err" >&2
if [ "$rc" -eq 0 ] && grep -q "wgmma.mma_async instructions are serialized" "$err"; then
  echo "error: ptxas serialized wgmma instructions (the C75xx lines above); rungs treats that as a build error" >&2
  exit 1
fi
exit "$rc"
