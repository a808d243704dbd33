#!/usr/bin/env python3
"""The table of ws_before_after.sh: per rung, dtype and shape, the median over rounds of each side's
median time, after / before, and each side's speed against cuBLAS timed interleaved with it (the
GPU's clock drifts between invocations; the baseline beside each rung moves with it)."""
import csv
import statistics
import sys
from collections import defaultdict

times = defaultdict(lambda: defaultdict(list))  # key -> side -> [ms]
base = defaultdict(lambda: defaultdict(list))  # key -> side -> [cuBLAS ms / ours]
number = defaultdict(dict)  # key -> side -> rung number
fails = []
with open(sys.argv[1]) as f:
    for row in csv.reader(f):
        side, _, cells = row[0], row[1], row[2:]
        if cells[0] == "name":
            header = cells
            continue
        r = dict(zip(header, cells))
        auto = r["variant"].startswith("auto")
        if r["variant"] in ("cublas", "cublas_tf32", "cublas_tc") or (r["rung"] == "" and not auto):
            continue
        kind = r["dtype"] + (" " + r["scaling"] if r.get("scaling") else "") + (" " + r["trans"] if r.get("trans") else "")
        # by name (a rung's number may differ between the two trees); shown with the after tree's
        key = ("auto" if auto else r["variant"], kind, f'{r["m"]} x {r["n"]} x {r["k"]}')
        number[key][side] = int(r["rung"]) if r["rung"] else 99
        if r["pass"] != "true":
            fails.append((side, key, r["status"], r["reason"]))
            continue
        times[key][side].append(float(r["median_ms"]))
        if r["speedup_vs_baseline"]:
            base[key][side].append(float(r["speedup_vs_baseline"]))

ratios = []
print("| rung | kind | m x n x k | before ms | after ms | after / before | x cuBLAS before | x cuBLAS after |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for key in sorted(times, key=lambda k: (number[k].get("after", number[k].get("before", 99)), k[0], k[2])):
    b, a = times[key].get("before", []), times[key].get("after", [])
    if not b or not a:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    x = [f"{statistics.median(base[key][s]):.3f}" if base[key][s] else "" for s in ("before", "after")]
    ratios.append((mb / ma, key))
    n = number[key].get("after", 99)
    print(f"| {'' if n == 99 else f'{n} '}{key[0]} | {key[1]} | {key[2]} | {mb:.4f} | {ma:.4f} | {ma / mb:.3f} | {x[0]} | {x[1]} |")
if ratios:
    low = min(ratios)
    print(f"\nspeed after / before over {len(ratios)} rows: median {statistics.median(r for r, _ in ratios):.3f}, "
          f"lowest {low[0]:.3f} ({low[1][0]}, {low[1][1]}, {low[1][2]})")
for f in fails:
    print("not passed:", *f)
