#!/usr/bin/env bash
# gemm_host schedule sweep (docs/gemm_host.md: 4x1 is the best plan at 1024^3 pinned, 0.269-0.275
# ms): the flow time of forced plans at 1024^3 and 4096^3, pinned and pageable, beside the library's
# own choice. Needs build-exp/rungs, the CLI with its experiment flags (--plan):
# `source scripts/experiments/lib.sh && build_exp rungs_cli` first.
# Usage: scripts/experiments/host_plans/host_plans.sh [sizes] [plans]   results on stdout (CSV rows).
set -uo pipefail
cd "$(dirname "$0")/../../.."
sizes=${1:-1024 4096}
plans=${2:-auto 2x2 4x4 8x8 4x4:k1/0.25 8x8:k1/0.25 16x16 16x16:k1/0.5 16x16:k2/0.5 8x8:k2/0.5}
for s in $sizes; do
  for p in $plans; do
    flag=(); [ "$p" != auto ] && flag=(--plan "$p")
    build-exp/rungs bench gemm_host --size "$s" --memory all --reps 20 --format csv --quiet "${flag[@]}" 2>&1 |
      sed -n '2,$p' | sed "s|^|$p,|"
  done
done
