#!/usr/bin/env python3
"""Where a kernel's warp-stall samples fall, from Nsight Compute's source page as CSV
(`ncu -i REP --page source --csv --print-source sass > k.csv`, which ncu_tc.sh's SOURCE=1 writes).
Prints the samples per run of instructions executed equally often (a loop body is one run: per k
tile, per tile, once), then the TOP instructions with most samples and their main stall reasons.
Usage: ncu_source.py k.csv [TOP]   (anywhere, no GPU)"""
import csv
import sys


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr, data = rows[head], [r for r in rows[head + 1:] if len(r) == len(rows[head])]
    col = {name: i for i, name in enumerate(hdr)}
    samples, execs = col["Warp Stall Sampling (All Samples)"], col["Instructions Executed"]
    reasons = [i for i, name in enumerate(hdr) if name.startswith("stall_") and "Not Issued" not in name]
    total = sum(int(r[samples]) for r in data)
    print(f"{len(data)} instructions, {total} samples")
    start = 0
    for i in range(1, len(data) + 1):  # runs of equal execution counts
        if i == len(data) or data[i][execs] != data[start][execs]:
            n = sum(int(r[samples]) for r in data[start:i])
            if n >= total // 100:
                print(f"  [{start:5d}, {i - 1:5d}] executed {data[start][execs]:>8}: {n:6d} samples "
                      f"({100 * n / total:4.1f} %), from {data[start][1].strip()[:40]}")
            start = i
    print(f"top {top} instructions:")
    for i in sorted(sorted(range(len(data)), key=lambda i: -int(data[i][samples]))[:top]):
        r = data[i]
        why = sorted(((int(r[j]), hdr[j][6:]) for j in reasons if int(r[j]) > 0), reverse=True)[:3]
        print(f"  {i:5d} {r[1].strip()[:60]:60s} {r[samples]:>6} " + ", ".join(f"{w} {n}" for n, w in why))


if __name__ == "__main__":
    main()
