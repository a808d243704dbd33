#!/usr/bin/env python3
"""The table of ws_before_after.sh: per rung, dtype and shape, the median over rounds of each side's
median time, after / before, and cuBLAS (the baseline of the same runs)."""
import csv
import statistics
import sys
from collections import defaultdict

times = defaultdict(lambda: defaultdict(list))  # key -> side -> [ms]
base = defaultdict(list)
fails = []
with open(sys.argv[1]) as f:
    for row in csv.reader(f):
        side, _, cells = row[0], row[1], row[2:]
        if cells[0] == "name":
            header = cells
            continue
        r = dict(zip(header, cells))
        if r["rung"] == "" or r["variant"] in ("cublas", "cublas_tf32", "cublas_tc"):
            continue
        key = (int(r["rung"]), r["variant"], r["dtype"], f'{r["m"]} x {r["n"]} x {r["k"]}')
        if r["pass"] != "true":
            fails.append((side, key, r["status"], r["reason"]))
            continue
        times[key][side].append(float(r["median_ms"]))
        if r["baseline_median_ms"]:
            base[key].append(float(r["baseline_median_ms"]))

print("| rung | dtype | m x n x k | before ms | after ms | after / before | cuBLAS ms |")
print("|---|---|---|---:|---:|---:|---:|")
for key in sorted(times, key=lambda k: (k[0], k[2], k[3])):
    b, a = times[key].get("before", []), times[key].get("after", [])
    if not b or not a:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    cb = f"{statistics.median(base[key]):.4f}" if base[key] else ""
    print(f"| {key[0]} {key[1]} | {key[2]} | {key[3]} | {mb:.4f} | {ma:.4f} | {ma / mb:.3f} | {cb} |")
for f in fails:
    print("not passed:", *f)
