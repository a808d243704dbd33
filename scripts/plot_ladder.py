#!/usr/bin/env python3
"""Plot a ladder from `rungs bench --format json` output: one bar group per rung, one bar per
size, throughput on the y axis, the baseline as a dashed line per size. The rung order and
names come from the JSON (which the bench takes from the ladder list): nothing here to edit
when a rung is added.

usage: scripts/plot_ladder.py bench.json [out.png] [--op gemm]
"""
import json
import sys
from collections import OrderedDict


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    op = "gemm"
    if "--op" in sys.argv:
        op = sys.argv[sys.argv.index("--op") + 1]
        args = [a for a in args if a != op]
    if not args:
        print(__doc__)
        return 2
    src = args[0]
    out = args[1] if len(args) > 1 else src.rsplit(".", 1)[0] + ".png"
    data = json.load(open(src))
    rows = [b for b in data["benchmarks"] if b.get("op", op) == op and "real_time" in b]
    for b in rows:
        b["shape"] = f'{b["m"]}x{b["n"]}x{b["k"]} {b.get("trans", "")}'
    rungs, shapes = OrderedDict(), OrderedDict()
    for b in rows:
        rungs.setdefault(b["variant"], b["rung"] if b.get("rung", -1) >= 0 else 999)
        shapes.setdefault(b["shape"], None)
    value_key = "tflops" if any("tflops" in b for b in rows) else "gbs"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(rungs, key=lambda n: rungs[n])
    fig, ax = plt.subplots(figsize=(max(8, len(names) * 0.9), 4.5))
    width = 0.8 / max(1, len(shapes))
    for si, shape in enumerate(shapes):
        ys = []
        for n in names:
            v = [b.get(value_key, 0) for b in rows if b["variant"] == n and b["shape"] == shape]
            ys.append(v[0] if v else 0)
        ax.bar([i + si * width for i in range(len(names))], ys, width, label=shape)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("TFLOP/s" if value_key == "tflops" else "GB/s")
    ctx = data.get("context", {})
    ax.set_title(f"rungs {op} ladder on {ctx.get('device', '?')} (commit {ctx.get('git_commit', '?')})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
