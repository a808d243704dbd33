#!/usr/bin/env python3
"""Turn the JSON of `rungs bench` runs into docs/BENCHMARKS.md, the ladder pictures under docs/img/
and the generated blocks of README.md and docs/*.md.

usage: scripts/report.py RUN.json [RUN.json ...] [--root DIR] [--no-images]

Each RUN.json is what `rungs bench --format json --output RUN.json` wrote: the main job (gemm, gemv,
reduce), `rungs bench gemm_host`, `rungs bench allgather_gemm|gemm_reducescatter` (2+ GPUs), or any part
of them. The runs are grouped by GPU; for each GPU and
each ladder the newest run (the context's date) that measured that ladder is the one reported, so
the output holds the latest numbers per GPU only (older runs live in git history). The same JSON
gives the same files, byte for byte.

Generated blocks: in README.md and docs/*.md, the text between `<!-- report:NAME -->` and
`<!-- /report:NAME -->` is replaced by block NAME: headline, gemm, gemm_tc, decode, decode_fp8, gemv,
reduce, gemm_host, allgather_gemm, gemm_reducescatter, python. decode and decode_fp8 are the gemm
ladder's decode workloads (the rows with "workload": "decode" or "decode_fp8");
python is scripts/bench_python.py's JSON (also accepted as a RUN.json: {"meta", "rows"}).
"""
import argparse
import json
import os
import re
import sys
from collections import OrderedDict

# Colour-blind-safe (Okabe-Ito), in the order series are drawn.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

# Why a rung is slower than the rung below it, for the pictures (the ladder docs say more).
SLOWER_BECAUSE = {
    ("gemm", "blocktile_2d"): "inner-product form: 2 shared loads per FMA and 4-way bank conflicts (article 004 v3/v4)",
    ("gemm", "kahan"): "Kahan-compensated sums: 4 operations per product, bought for accuracy",
    ("gemm_tc", "wgmma_pingpong"): "measured miss: the tensor cores fed by one consumer warpgroup at a time (0.80x cuBLAS)",
    ("gemm_tc", "wgmma_streamk"): "measured miss: stream-K ranges start at different k, so L2 hits fall and DRAM reads double",
    ("gemm_tc", "wgmma_overlap"): "measured miss: the epilogue beside the MMAs slows them by as much as it saves",
}

SEED_GEMM_SIZES = [1024, 2048, 4096, 8192]
FP8_SCALINGS = {"tensor": "per-tensor scales", "outer": "per-row / per-column scales", "block128": "128-block scales"}
KIND_TITLES = OrderedDict([("bf16", "bf16"), ("f16", "f16"), ("tf32", "tf32"), ("tf32x3", "tf32x3 (x = over cuBLAS sgemm)")])
LADDER_TITLES = OrderedDict(
    [
        ("gemm", "gemm: SGEMM on CUDA cores (fp32), TFLOP/s (x cuBLAS)"),
        ("gemm_tc", "gemm on tensor cores, TFLOP/s (x cuBLAS)"),
        ("decode", "gemm decode shapes (bf16, nt): time, GB/s, % of DRAM read (x cuBLAS)"),
        ("decode_fp8", "gemm decode shapes (fp8 e4m3 -> bf16, nt): time, GB/s, % of DRAM read (x cuBLASLt)"),
        ("gemv", "gemv: SGEMV (fp32), GB/s (x cuBLAS)"),
        ("reduce", "reduce: reduce_sum, GB/s (x CUB)"),
        ("gemm_host", "gemm_host: the host-to-host flow"),
        ("allgather_gemm", "allgather_gemm: tensor-parallel gemm over NCCL (bf16), ms (x rung 1)"),
        ("gemm_reducescatter", "gemm_reducescatter: tensor-parallel gemm over NCCL (bf16), ms (x rung 1)"),
    ]
)
DIST_OPS = ("allgather_gemm", "gemm_reducescatter")


# ---------------------------------------------------------------------------------------------
# Loading


def gpu_slug(device):
    """'NVIDIA H100 80GB HBM3' -> 'h100'; names without a model number: the name, sanitized."""
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Za-z]?)\b", device or "")
    if m:
        return m.group(1).lower()
    return re.sub(r"[^a-z0-9]+", "-", (device or "unknown").lower()).strip("-") or "unknown"


def short_commit(c):
    """A full 40-digit sha as git's 7-digit short form (runs record either)."""
    return c[:7] if re.fullmatch(r"[0-9a-f]{40}", c or "") else c


def ladder_of(row):
    op = row.get("op", "gemm")
    if op in DIST_OPS:
        return op
    if op == "gemm" and row.get("workload") in ("decode", "decode_fp8"):
        return row["workload"]
    if op == "gemm":
        return "gemm" if row.get("dtype", "f32") == "f32" else "gemm_tc"
    return op


class Run:
    def __init__(self, path, data):
        self.path = path
        self.context = data.get("context", {})
        self.rows = data.get("benchmarks", [])
        self.device = self.context.get("device", "unknown device")
        self.slug = gpu_slug(self.device)
        self.date = self.context.get("date", "")

    def command(self):
        cmd = self.context.get("command_line", "rungs bench")
        cmd = re.sub(r"\s--quiet\b", "", cmd)
        return re.sub(r"(--output\s+)(\S+)", lambda m: m.group(1) + os.path.basename(m.group(2)), cmd)

    def header(self):
        c = self.context
        day = self.date[:10]
        parts = [f"{self.device}", f"commit {short_commit(c.get('git_commit', '?'))}", day, f"`{self.command()}`"]
        return ", ".join(p for p in parts if p)


def is_python_run(data):
    """scripts/bench_python.py's JSON: {"meta": {...}, "rows": [{"what", "us" or "ratio"}]}."""
    return isinstance(data, dict) and "meta" in data and "rows" in data and "benchmarks" not in data


def load_runs(paths):
    """(bench runs, Python runs): `rungs bench --format json` output, and bench_python.py's."""
    runs, py = [], []
    for p in sorted(paths):
        with open(p) as f:
            data = json.load(f)
        if is_python_run(data):
            py.append((p, data))
            continue
        if "benchmarks" not in data:
            raise SystemExit(f"report.py: {p} is neither `rungs bench --format json` output (no 'benchmarks') nor "
                             "scripts/bench_python.py's (no 'meta' and 'rows')")
        runs.append(Run(p, data))
    return runs, py


def python_block(py_runs):
    """The Python layer's cost: per GPU, the newest bench_python.py run (its meta's date)."""
    newest = OrderedDict()
    for path, data in sorted(py_runs, key=lambda pd: (pd[1]["meta"].get("date", ""), pd[0])):
        newest[gpu_slug(data["meta"].get("device", "?"))] = data
    parts = []
    for data in (newest[k] for k in sorted(newest)):
        m = data["meta"]
        head = (f"**{m.get('device', '?')}**: commit {short_commit(m.get('commit', '?'))}, {m.get('date', '?')}, "
                f"`python scripts/bench_python.py` (rungs {m.get('rungs', '?')}, torch {m.get('torch', '?')}, "
                f"median of {m.get('calls', '?')} calls; device times: median of {m.get('reps', '?')})"
                + (f"; rungs.gemm's eager torch path: {m['torch_path']}" if m.get("torch_path") else ""))
        rows = []
        for r in data["rows"]:
            value = f"{r['us']:.2f} us" if "us" in r else f"{r['ratio']:.4f}"
            rows.append([r["what"], value])
        parts.append(head + "\n\n" + md_table(["measurement", "value"], rows))
    return "\n\n".join(parts) if parts else "(no bench_python.py run in the report's input)"


def latest_by_gpu(runs):
    """{slug: {ladder: (run, rows)}}: per GPU and ladder, the rows of the newest run that has any. A dist
    operation keeps the newest run per world size (2 and 4 GPUs are separate runs), its rows together under
    the newest run, each row carrying its own run's header line in '_header'."""
    out, dist = {}, {}
    for run in sorted(runs, key=lambda r: (r.date, r.path)):
        per = {}
        for row in run.rows:
            per.setdefault(ladder_of(row), []).append(row)
        for ladder, rows in per.items():
            if ladder in DIST_OPS:
                # Runs whose timing says "interleaved" ran the rungs and the two operations alone in
                # turn, repetition by repetition; older ones timed each in a block, rung after rung.
                order = ("interleaved" if "interleaved" in run.context.get("timing", "")
                         else "timed rung after rung, each in a block")
                for row in rows:
                    row["_header"] = f"**{run.device}**: {run.header().split(', ', 1)[1]} ({order})"
                worlds = dist.setdefault((run.slug, ladder), {})
                for w in sorted({r.get("world", 0) for r in rows}):
                    worlds[w] = (run, [r for r in rows if r.get("world", 0) == w])
                newest = max((rv[0] for rv in worlds.values()), key=lambda r: (r.date, r.path))
                out.setdefault(run.slug, {})[ladder] = (newest, [r for w in sorted(worlds) for r in worlds[w][1]])
            else:
                out.setdefault(run.slug, {})[ladder] = (run, rows)
    return OrderedDict(sorted(out.items()))


# ---------------------------------------------------------------------------------------------
# Tables


def ok(row):
    return row.get("status") == "ok" and row.get("real_time") is not None


def fnum(v, digits=3):
    """Three significant figures, no exponent for the numbers these tables hold."""
    if v is None:
        return "-"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.{digits}g}"


def ratio(v):
    return "-" if v is None else f"{v:.2f}x"


def rung_label(row):
    v = row["variant"]
    if v.startswith("auto="):
        return f"auto ({v[5:]})"
    return f"{row['rung']} {v}" if row.get("rung", -1) >= 0 else v


def rung_order(rows):
    """Rung labels in ladder order, auto last."""
    seen = OrderedDict()
    for r in rows:
        key = (r.get("rung", -1) < 0, r.get("rung", -1), r["variant"].split("=")[0])
        seen.setdefault(key, r["variant"].split("=")[0])
    return [seen[k] for k in sorted(seen)]


def base_variant(row):
    return row["variant"].split("=")[0]


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def skip_notes(rows):
    notes = OrderedDict()
    for r in rows:
        if r.get("status") != "ok" and r.get("reason"):
            notes.setdefault(f"{rung_label(r)}: {r['status']}, {r['reason']}", None)
    return "".join(f"- {n}\n" for n in notes)


def none_ran_note(rows):
    """A line under a table that leaves out the rungs that ran none of its sizes: which, and why."""
    ran = {base_variant(r) for r in rows if ok(r)}
    why = OrderedDict()
    for r in rows:
        if base_variant(r) not in ran and r.get("reason"):
            why.setdefault(rung_label(r), re.sub(r"^m = \d+ rows of A; ", "", r["reason"]))
    if not why:
        return ""
    return "\n\nNot run at these sizes:\n" + "".join(f"- {k}: {v}\n" for k, v in why.items()).rstrip()


def cell_tflops(r):
    if r is None or not ok(r):
        return "-"
    x = r.get("speedup_vs_baseline")
    return fnum(r["tflops"]) + ("" if r.get("baseline_rung") or x is None else f" ({ratio(x)})")


def cell_gbs(r):
    if r is None or not ok(r):
        return "-"
    x = r.get("speedup_vs_baseline")
    gbs = r.get("bytes_per_second", 0) / 1e9
    return f"{gbs:.0f}" + ("" if r.get("baseline_rung") or x is None else f" ({ratio(x)})")


def rung_rows(rows, cases, case_of, ran_only=False):
    """(label, cells) per rung in ladder order: cells[i] is the rung's row at cases[i] (or None); auto's
    label names the rungs it resolved to. ran_only: leave out the rungs that ran no case."""
    by = {(base_variant(r), case_of(r)): r for r in rows}
    out = []
    for v in rung_order(rows):
        cells = [by.get((v, c)) for c in cases]
        present = [c for c in cells if c is not None]
        if not present or (ran_only and not any(ok(c) for c in present)):
            continue
        label = rung_label(present[0])
        if v == "auto":
            label = "auto (" + ", ".join(OrderedDict.fromkeys(c["variant"][5:] for c in present)) + ")"
        out.append((label, cells))
    return out


def gemm_table(rows, shapes, ran_only=False):
    """Rungs x sizes, TFLOP/s (x baseline); the normwise error at the largest size."""
    big = shapes[-1]
    header = ["rung"] + [shape_title(s) for s in shapes] + [f"error at {shape_title(big)}"]
    body = []
    for label, cells in rung_rows(rows, shapes, lambda r: (r["m"], r["n"], r["k"]), ran_only):
        e = cells[-1]
        err = f"{e['error_normwise']:.2e}" if e is not None and e.get("error_normwise") is not None and ok(e) else "-"
        body.append([label] + [cell_tflops(c) for c in cells] + [err])
    return md_table(header, body)


def shape_title(s):
    m, n, k = s
    if m == n == k:
        return f"{m}^3"
    return f"{m}x{n}x{k}"


def shapes_of(rows):
    return sorted(OrderedDict(((r["m"], r["n"], r["k"]), None) for r in rows))


def block_gemm(run, rows):
    rows = [r for r in rows if r.get("trans", "nn") == "nn"]
    out = gemm_table(rows, shapes_of(rows))
    notes = skip_notes(rows)
    return out + ("\n\n" + notes.rstrip() if notes else "")


def block_gemm_tc(run, rows):
    parts = []
    for kind, title in KIND_TITLES.items():
        kr = [r for r in rows if r.get("dtype") == kind and r.get("trans", "nn") == "nn"]
        if not kr:
            continue
        parts.append(f"{title}:\n\n" + gemm_table(kr, shapes_of(kr), ran_only=True) + none_ran_note(kr))
    # fp8: nt (the form cuBLASLt's fp8 kernels take), one table per scales' layout.
    f8 = [r for r in rows if r.get("dtype") == "fp8" and r.get("trans") == "nt"]
    for scaling in OrderedDict((r.get("scaling", "tensor"), None) for r in f8):
        sr = [r for r in f8 if r.get("scaling", "tensor") == scaling]
        parts.append(f"fp8 (e4m3 x e4m3 -> bf16, nt, {FP8_SCALINGS.get(scaling, scaling)}; x = over cuBLASLt):\n\n"
                     + gemm_table(sr, shapes_of(sr), ran_only=True) + none_ran_note(sr))
    return "\n\n".join(parts)


def decode_cell(r):
    """'41.2 us, 2930 GB/s, 94%, 1.02x': the median, the bytes moved per second, that as % of the DRAM
    read rate, and x the baseline (not on the baseline's own row)."""
    if r is None or not ok(r):
        return "-"
    parts = [f"{fnum(r['real_time'] * 1e3)} us"]
    if r.get("bytes_per_second"):
        parts.append(f"{r['bytes_per_second'] / 1e9:.0f} GB/s")
    if r.get("pct_dram"):
        parts.append(f"{r['pct_dram']:.0f}%")
    x = r.get("speedup_vs_baseline")
    if not r.get("baseline_rung") and x is not None:
        parts.append(ratio(x))
    return ", ".join(parts)


def block_decode(run, rows):
    """One table per weight matrix (n x k): rungs x batch sizes m."""
    parts = []
    for n, k in OrderedDict(((r["n"], r["k"]), None) for r in rows):
        wr = [r for r in rows if (r["n"], r["k"]) == (n, k)]
        ms = sorted(OrderedDict((r["m"], None) for r in wr))
        body = [[label] + [decode_cell(c) for c in cells] for label, cells in rung_rows(wr, ms, lambda r: r["m"])]
        scales = f", {FP8_SCALINGS.get(wr[0]['scaling'], wr[0]['scaling'])}" if wr[0].get("scaling") else ""
        parts.append(f"W {n} x {k} ({wr[0].get('dtype', 'bf16')}, {wr[0].get('trans', 'nt')}{scales}):\n\n" + md_table(["rung"] + [f"m = {m}" for m in ms], body))
    base = next((r["baseline"] for r in rows if r.get("baseline")), "the baseline")
    dram = run.context.get("dram_read_gbs")
    note = (
        "Each cell: the median time; GB/s = (A + W + C bytes"
        + (" + the scales" if any(r.get("scaling") for r in rows) else "")
        + ") / median"
        + (f"; % of the {dram:.0f} GB/s a streaming read reaches on this GPU (`rungs info`)" if dram else "")
        + f"; x {base} = its median over the rung's, interleaved."
    )
    notes = skip_notes(rows)
    return "\n\n".join(parts) + "\n\n" + note + ("\n\n" + notes.rstrip() if notes else "")


def gemv_shape(r):
    return (r["m"], r["n"], r["trans"])


def gemv_title(s):
    m, n, t = s

    def p(x):
        e = x.bit_length() - 1
        return f"2^{e}" if x == 1 << e and e >= 16 else str(x)

    return f"{p(m)}x{p(n)} {t}"


def block_gemv(run, rows):
    parts = []
    dram = run.context.get("dram_read_gbs")
    for t in ("n", "t"):
        tr = [r for r in rows if r.get("trans") == t]
        if not tr:
            continue
        shapes = sorted(OrderedDict((gemv_shape(r), None) for r in tr), key=lambda s: (s[0] * s[1], s[0]))
        body = [[label] + [cell_gbs(c) for c in cells] for label, cells in rung_rows(tr, shapes, gemv_shape)]
        parts.append(f"Trans::{t.upper()}:\n\n" + md_table(["rung"] + [gemv_title(s) for s in shapes], body))
    return "\n\n".join(parts) + (f"\n\n% of DRAM = GB/s over the {dram:.0f} GB/s a streaming read reaches on this GPU." if dram else "")


def block_reduce(run, rows):
    cases = sorted(OrderedDict(((r["n"], r["dtype"]), None) for r in rows), key=lambda c: (c[0], ["i64", "i32", "f32", "f64"].index(c[1]) if c[1] in ("i64", "i32", "f32", "f64") else 9))
    body = [[label] + [cell_gbs(c) for c in cells] for label, cells in rung_rows(rows, cases, lambda r: (r["n"], r["dtype"]))]

    def t(c):
        n, d = c
        e = n.bit_length() - 1
        return f"{d} 2^{e}" if n == 1 << e else f"{d} {n}"

    dram = run.context.get("dram_read_gbs")
    out = md_table(["rung"] + [t(c) for c in cases], body)
    return out + (f"\n\n% of DRAM: the {dram:.0f} GB/s a streaming read reaches on this GPU." if dram else "")


def block_gemm_host(run, rows):
    body = []
    for r in sorted(rows, key=lambda r: (r["m"] * r["n"] * r["k"], r.get("trans", ""), r.get("memory", "") != "pinned")):
        body.append(
            [
                r.get("shape", f"{r['m']}x{r['n']}x{r['k']}"),
                r.get("memory", ""),
                r.get("plan", ""),
                fnum(r.get("flow_ms")),
                fnum(r.get("naive_ms")),
                ratio(r.get("speedup")),
                fnum(r.get("floor_ms")),
                ratio(r.get("x_floor")),
                fnum(r.get("h2d_gbs")),
                fnum(r.get("d2h_gbs")),
                r.get("status", ""),
            ]
        )
    header = ["shape", "memory", "plan", "flow ms", "naive ms", "speedup", "floor ms", "x floor", "H2D GB/s", "D2H GB/s", "status"]
    return (
        md_table(header, body)
        + "\n\nflow: the whole call on the host clock, median; naive: copy in, gemm, copy out on one stream, same run; "
        "floor: max(bytes in / pinned H2D rate, bytes out / pinned D2H rate, the product alone)."
    )


def block_dist(run, rows):
    """One dist operation: per world size (the newest run of each), its run's header line and a table of rungs
    (and auto) x shapes: the time, TFLOP/s per GPU, x rung 1, the communication and the product alone, time
    over the longer of those two (with the per-rank product of the 1-GPU shape, the weak-scaling ratio), and
    NCCL's bus bandwidth."""
    worlds = OrderedDict()
    for r in rows:
        worlds.setdefault(r.get("world", 0), []).append(r)
    parts = []
    for w, wrows in sorted(worlds.items()):
        head = wrows[0].get("_header")
        parts.append((head + "\n\n" if head else "") + block_dist_world(wrows))
    return "\n\n".join(parts) + (
        "\n\nMedians of the slowest rank's time; comm = rung 1's collective alone (ncclAllGather of A in bf16; "
        "ncclReduceScatter of the fp32 partials); gemm = rungs::gemm of one rank's product alone; x rung 1 = rung 1's "
        "median over the rung's, same run. Sustained load lowers the clocks, so a rung timed late in a block-timed "
        "run is slower than early (up to 15 % on 2 H200); interleaved runs time every rung and both operations "
        "alone in the same stretch.")


def block_dist_world(rows):
    """block_dist's table for the rows of one run (one world size)."""
    op = rows[0]["op"]
    names = {r["rung"]: r["variant"] for r in rows if r.get("variant") != "auto"}
    base = {(r["m"], r["n"], r["k"]): r for r in rows if r.get("rung") == 1 and r.get("variant") != "auto" and ok(r)}
    sizes = "m_local x n_local x k" if op == "allgather_gemm" else "m x n x k_local"
    body = []
    for r in rows:
        label = f"auto ({names.get(r['rung'], r['rung'])})" if r.get("variant") == "auto" else f"{r['rung']} {r['variant']}"
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        if not ok(r):
            body.append([label, shape, r.get("status", "?"), "-", "-", "-", "-", "-"])
            continue
        b = base.get((r["m"], r["n"], r["k"]))
        x = "-" if b is None or (r.get("rung") == 1 and r.get("variant") != "auto") else ratio(b["real_time"] / r["real_time"])
        longer = max(r.get("comm_ms", 0), r.get("gemm_ms", 0))
        body.append([label, shape, f"{r['real_time']:.3f}", f"{r['tflops_per_gpu']:.0f}", x, f"{r['comm_ms']:.3f}",
                     f"{r['gemm_ms']:.3f}", f"{r['real_time'] / longer:.2f}" if longer > 0 else "-"])
    world = rows[0].get("world", 0)
    parts = [f"{op} on {world or '?'} GPUs ({sizes} per rank's call):\n\n"
             + md_table(["rung", "shape", "time ms", "TFLOP/s per GPU", "x rung 1", "comm ms", "gemm ms",
                         "time / max(comm, gemm)"], body)]
    # The interconnect as NCCL's tests count it: bus bandwidth = bytes / time * (world - 1) / world,
    # the bytes being the gathered A (bf16) or the reduce-scattered fp32 partials (m x n).
    bw = []
    for (m, n, k), b in base.items():
        if world > 1 and b.get("comm_ms"):
            nbytes = world * m * k * 2 if op == "allgather_gemm" else m * n * 4
            bw.append(f"{m}x{n}x{k}: {nbytes / 1e6:.0f} MB in {b['comm_ms']:.3f} ms, "
                      f"{nbytes / (b['comm_ms'] * 1e-3) / 1e9 * (world - 1) / world:.0f} GB/s")
    if bw:
        what = "ncclAllGather (bf16)" if op == "allgather_gemm" else "ncclReduceScatter (fp32)"
        parts.append(f"Interconnect, {what} alone as NCCL's bus bandwidth: " + "; ".join(bw) + ".")
    return "\n\n".join(parts)


BLOCKS = OrderedDict(
    [
        ("gemm", block_gemm),
        ("gemm_tc", block_gemm_tc),
        ("decode", block_decode),
        ("decode_fp8", block_decode),
        ("gemv", block_gemv),
        ("reduce", block_reduce),
        ("gemm_host", block_gemm_host),
        ("allgather_gemm", block_dist),
        ("gemm_reducescatter", block_dist),
    ]
)


def ladder_block(latest, ladder, with_images=True):
    """Every GPU's latest table of one ladder, each under its run's header line."""
    parts = []
    for slug, per in latest.items():
        if ladder not in per:
            continue
        run, rows = per[ladder]
        head = "" if ladder in DIST_OPS else f"**{run.device}**: {run.header().split(', ', 1)[1]}\n\n"
        parts.append(head + BLOCKS[ladder](run, rows))
    return "\n\n".join(parts) if parts else "(no run of this ladder in the report's input)"


# Headline: auto and our best rung against the vendor at the seed workloads.
def best_own(rows, key):
    """Among the non-baseline, non-auto rungs: the one with the largest speedup for this case."""
    cands = [r for r in rows if key(r) and ok(r) and not r.get("baseline_rung") and r.get("rung", -1) >= 0]
    cands = [r for r in cands if r.get("speedup_vs_baseline") is not None]
    return max(cands, key=lambda r: r["speedup_vs_baseline"]) if cands else None


def auto_row(rows, key):
    for r in rows:
        if key(r) and r["variant"].startswith("auto=") and ok(r):
            return r
    return None


def headline_cells(rows, key):
    a, b = auto_row(rows, key), best_own(rows, key)
    ac = "-" if a is None else f"{ratio(a.get('speedup_vs_baseline'))} ({a['variant'][5:]})"
    bc = "-" if b is None else f"{ratio(b['speedup_vs_baseline'])} ({b['variant']})"
    return ac, bc


def headline(latest):
    slugs = list(latest)
    cases = []  # (ladder, title, key, vendor)
    for s in SEED_GEMM_SIZES:
        cases.append(("gemm", f"gemm fp32 {s}^3", lambda r, s=s: r["m"] == r["n"] == r["k"] == s and r.get("trans") == "nn", "cuBLAS sgemm"))
    for kind, vendor in (("bf16", "cublasGemmEx"), ("tf32x3", "cuBLAS sgemm")):
        for s in SEED_GEMM_SIZES[1:]:
            cases.append(("gemm_tc", f"gemm {kind} {s}^3", lambda r, s=s, kind=kind: r.get("dtype") == kind and r["m"] == r["n"] == r["k"] == s and r.get("trans") == "nn", vendor))
    for s in SEED_GEMM_SIZES[1:]:
        cases.append(("gemm_tc", f"gemm fp8 {s}^3 nt, per-tensor", lambda r, s=s: r.get("dtype") == "fp8" and r["m"] == r["n"] == r["k"] == s and r.get("trans") == "nt" and r.get("scaling", "tensor") == "tensor", "cuBLASLt"))
    def row_for(ladder, title, vendor, cells):
        """[title, vendor, then each GPU's two cells]; None where no GPU measured this ladder's case."""
        row, seen = [title, vendor], False
        for slug in slugs:
            per = latest[slug]
            a, b = cells(per[ladder][1]) if ladder in per else ("-", "-")
            seen = seen or a != "-" or b != "-"
            row += [a, b]
        return row if seen else None

    def ranges(rows):
        """auto's and our best rung's speedups over every seed workload of a ladder, as min-max."""
        autos, bests = [], []
        for c in OrderedDict(((r["m"], r["n"], r.get("trans"), r.get("dtype")), None) for r in rows):
            key = lambda r, c=c: (r["m"], r["n"], r.get("trans"), r.get("dtype")) == c
            a, b = auto_row(rows, key), best_own(rows, key)
            if a is not None and a.get("speedup_vs_baseline") is not None:
                autos.append(a["speedup_vs_baseline"])
            if b is not None:
                bests.append(b["speedup_vs_baseline"])
        fmt = lambda xs: "-" if not xs else f"{min(xs):.2f}-{max(xs):.2f}x"
        return fmt(autos), fmt(bests)

    body = [row_for(ladder, title, vendor, lambda rows, key=key: headline_cells(rows, key)) for ladder, title, key, vendor in cases]
    # gemv and reduce: the range over every seed workload.
    body += [row_for(ladder, title, vendor, ranges) for ladder, title, vendor in (("gemv", "gemv, the 12 seed shapes", "cublasSgemv"), ("reduce", "reduce_sum, the 8 seed workloads", "CUB"))]
    body = [r for r in body if r is not None]
    # gemm_host: the flow against the naive flow, at each seed size and memory kind.
    host_cases = OrderedDict()
    for slug in slugs:
        for r in latest[slug].get("gemm_host", (None, []))[1]:
            host_cases[(r["m"] * r["n"] * r["k"], r.get("shape"), r.get("memory") != "pinned", r.get("memory"))] = None
    for _, shape, _, mem in sorted(host_cases):
        row = [f"gemm_host {shape} {mem}", "naive flow"]
        for slug in slugs:
            rows = latest[slug].get("gemm_host", (None, []))[1]
            r = next((r for r in rows if r.get("shape") == shape and r.get("memory") == mem), None)
            row += ["-" if r is None else f"{ratio(r.get('speedup'))} ({ratio(r.get('x_floor'))} the floor)", ""]
        body.append(row)
    header = ["workload", "vendor"]
    for slug in slugs:
        header += [f"{slug.upper()} auto", f"{slug.upper()} best own rung"]
    lines = [md_table(header, body), ""]
    lines.append("x = the vendor's median time over ours, both measured interleaved in the same run (higher is faster).")
    for slug in slugs:
        runs = OrderedDict()
        for ladder in latest[slug]:
            if ladder in DIST_OPS:  # no headline rows of their own (their tables are in docs/dist.md)
                continue
            run = latest[slug][ladder][0]
            runs.setdefault(run.path, run)
        for run in runs.values():
            lines.append(f"- {slug.upper()}: {run.header()}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Pictures


def plt_setup():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "rungs",
            "svg.fonttype": "none",
            "font.family": "DejaVu Sans",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        }
    )
    return plt


def save(fig, path):
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "rungs scripts/report.py"}, bbox_inches="tight")


def bar_ladder(ax, labels, series, baselines, ylabel, log=True):
    """Grouped bars: one group per rung, one bar per series; each series' baseline as a dashed line."""
    n = max(1, len(series))
    width = 0.8 / n
    for i, (name, values) in enumerate(series):
        xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
        ys = [v if v else 0 for v in values]
        ax.bar(xs, ys, width, label=name, color=PALETTE[i % len(PALETTE)], zorder=2)
        b = baselines[i] if i < len(baselines) else None
        if b:
            ax.axhline(b, color=PALETTE[i % len(PALETTE)], linestyle="--", linewidth=0.9, zorder=3)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
        plain_ticks(ax.yaxis)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6, zorder=0)
    ax.set_xlim(-0.6, len(labels) - 0.4)


def plain_ticks(axis):
    """Log-axis ticks as plain numbers (0.01, 1, 100), not powers of ten."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def legend_above(ax, title=None, ncol=4):
    ax.legend(title=title, fontsize=8, title_fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.01), frameon=False,
              ncol=ncol, borderaxespad=0.0)


def notes_below(ax, notes):
    """The reasons for slower rungs, as the x label (placed below the tick labels, whatever their size)."""
    if notes:
        ax.set_xlabel("\n".join(notes), fontsize=7.5, loc="left", labelpad=6)


def baseline_value(rows, shape_key, value):
    """The vendor's throughput at a case: its own row, else each rung's throughput over its speedup
    (the bench times the baseline interleaved with every rung even where it lists no row of its own)."""
    own = [r for r in rows if shape_key(r) and r.get("baseline_rung") and ok(r)]
    if own:
        return own[0][value]
    xs = sorted(r[value] / r["speedup_vs_baseline"] for r in rows if shape_key(r) and ok(r) and r.get("speedup_vs_baseline"))
    return xs[len(xs) // 2] if xs else None


def secondary_pct(ax, full_scale, label):
    """A second y axis in % of full_scale (the peak, or the DRAM read rate)."""
    if not full_scale:
        return
    sec = ax.secondary_yaxis("right", functions=(lambda y: 100.0 * y / full_scale, lambda p: p * full_scale / 100.0))
    sec.set_ylabel(label)
    if ax.get_yscale() == "log":
        plain_ticks(sec.yaxis)


def slower_notes(op_key, variants, labels, values):
    """The one-line reasons for rungs slower than the rung below (largest series)."""
    notes = []
    for i in range(1, len(values)):
        a, b = values[i - 1], values[i]
        why = SLOWER_BECAUSE.get((op_key, variants[i]))
        if why and a and b and b < a:
            notes.append(f"{labels[i]}: {why}")
    return notes


def picture_gemm_like(plt, path, title, rows, op_key, value="tflops", unit="TFLOP/s", pct_label="% of peak"):
    rows = [r for r in rows if r.get("trans", "nn") == "nn" and ok(r) and not r["variant"].startswith("auto")]
    if not rows:
        return False
    shapes = shapes_of(rows)
    variants = [v for v in rung_order(rows) if v != "cublas"]
    labels = [rung_label(next(r for r in rows if base_variant(r) == v)) for v in variants]
    by = {(base_variant(r),) + (r["m"], r["n"], r["k"]): r for r in rows}
    series, baselines = [], []
    for s in shapes:
        series.append((shape_title(s), [by[(v,) + s][value] if (v,) + s in by else 0 for v in variants]))
        baselines.append(baseline_value(rows, lambda r, s=s: (r["m"], r["n"], r["k"]) == s, value))
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    bar_ladder(ax, labels, series, baselines, unit)
    peak = next((r[value] * 100.0 / r["pct_peak"] for r in rows if r.get("pct_peak")), None)
    secondary_pct(ax, peak, pct_label)
    fig.suptitle(title, fontsize=10)
    legend_above(ax, "size (dashed line: cuBLAS at that size)", ncol=len(shapes))
    notes_below(ax, slower_notes(op_key, variants, labels, series[-1][1]) if series else [])
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
    return True


def picture_gemm_tc(plt, path, title, rows):
    kinds = [k for k in KIND_TITLES if any(r.get("dtype") == k for r in rows)]
    kinds = [k for k in kinds if k in ("bf16", "tf32x3")] or kinds
    if not kinds:
        return False
    fig, axes = plt.subplots(len(kinds), 1, figsize=(7.5, 3.2 * len(kinds)), squeeze=False)
    notes = []
    for ax, kind in zip(axes[:, 0], kinds):
        kr = [r for r in rows if r.get("dtype") == kind and r.get("trans", "nn") == "nn" and ok(r) and not r["variant"].startswith("auto")]
        shapes = shapes_of(kr)
        variants = [v for v in rung_order(kr) if v != "cublas"]
        labels = [rung_label(next(r for r in kr if base_variant(r) == v)) for v in variants]
        by = {(base_variant(r),) + (r["m"], r["n"], r["k"]): r for r in kr}
        series = [(shape_title(s), [by[(v,) + s]["tflops"] if (v,) + s in by else 0 for v in variants]) for s in shapes]
        baselines = [baseline_value(kr, lambda r, s=s: (r["m"], r["n"], r["k"]) == s, "tflops") for s in shapes]
        bar_ladder(ax, labels, series, baselines, "TFLOP/s", log=False)
        peak = next((r["tflops"] * 100.0 / r["pct_peak"] for r in kr if r.get("pct_peak")), None)
        secondary_pct(ax, peak, "% of peak")
        vendor = "cuBLAS sgemm" if kind == "tf32x3" else "cuBLAS"
        legend_above(ax, f"{kind}, size (dashed line: {vendor} at that size)", ncol=len(shapes))
        if series:
            notes += [f"{kind} {n}" for n in slower_notes("gemm_tc", variants, labels, series[-1][1])]
    fig.suptitle(title, fontsize=10)
    notes_below(axes[-1, 0], notes)
    fig.tight_layout(h_pad=2.0)
    save(fig, path)
    plt.close(fig)
    return True


def picture_bandwidth(plt, path, title, rows, run, groups, group_title):
    """gemv / reduce: GB/s per rung, one bar per case of `groups` (a list of (name, predicate))."""
    rows = [r for r in rows if ok(r) and not r["variant"].startswith("auto")]
    if not rows:
        return False
    variants = rung_order(rows)
    base = next((base_variant(r) for r in rows if r.get("baseline_rung")), None)
    variants = [v for v in variants if v != base]
    labels = [rung_label(next(r for r in rows if base_variant(r) == v)) for v in variants]
    panels = [(name, [(cn, pred) for cn, pred in cases]) for name, cases in groups]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 3.0 * len(panels)), squeeze=False)
    dram = run.context.get("dram_read_gbs")
    for ax, (pname, cases) in zip(axes[:, 0], panels):
        series, baselines = [], []
        for cname, pred in cases:
            vals = []
            for v in variants:
                r = next((r for r in rows if base_variant(r) == v and pred(r)), None)
                vals.append(r["bytes_per_second"] / 1e9 if r else 0)
            series.append((cname, vals))
            b = baseline_value(rows, pred, "bytes_per_second")
            baselines.append(b / 1e9 if b else None)
        bar_ladder(ax, labels, series, baselines, "GB/s", log=False)
        secondary_pct(ax, dram, "% of DRAM read")
        legend_above(ax, f"{pname}: {group_title} (dashed line: {base} at that {group_title})", ncol=3)
        top = max([max(s[1]) for s in series] + [b or 0 for b in baselines])
        ax.set_ylim(0, top * 1.05)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(h_pad=2.0)
    save(fig, path)
    plt.close(fig)
    return True


def picture_gemm_host(plt, path, title, rows):
    rows = [r for r in rows if r.get("status") == "ok" and r.get("flow_ms")]
    if not rows:
        return False
    shapes = sorted(OrderedDict(((r["m"] * r["n"] * r["k"], r["shape"]), None) for r in rows))
    mems = [m for m in ("pinned", "pageable") if any(r.get("memory") == m for r in rows)]
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    series = []
    for mem in mems:
        series.append((f"{mem}: flow", "flow_ms", mem))
        series.append((f"{mem}: naive", "naive_ms", mem))
    n = len(series)
    width = 0.8 / n
    for i, (name, key, mem) in enumerate(series):
        xs, ys, texts = [], [], []
        for j, (_, shape) in enumerate(shapes):
            r = next((r for r in rows if r["shape"] == shape and r.get("memory") == mem), None)
            if r is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(r[key] / r["floor_ms"])
            texts.append(f"{r[key]:.3g}")
        color = PALETTE[(i // 2) * 2 % len(PALETTE)] if key == "flow_ms" else PALETTE[(i // 2) * 2 + 1]
        bars = ax.bar(xs, ys, width, label=name, color=color, hatch=None if key == "flow_ms" else "//", edgecolor="white", zorder=2)
        for b, t in zip(bars, texts):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), t, ha="center", va="bottom", fontsize=6.5)
    ax.axhline(1.0, color="#000000", linewidth=1.0, zorder=3)
    ax.text(-0.55, 1.0, "floor", va="bottom", ha="left", fontsize=8)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([s for _, s in shapes])
    ax.set_ylabel("time / floor (bar labels: ms)")
    ax.set_yscale("log")
    plain_ticks(ax.yaxis)
    ax.set_ylim(0.8, None)
    ax.set_xlim(-0.6, len(shapes) - 0.4)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6, zorder=0)
    fig.suptitle(title, fontsize=10)
    legend_above(ax, "floor = max(bytes in / pinned H2D rate, bytes out / pinned D2H rate, the product alone)", ncol=4)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
    return True


def picture_dist(plt, path, title, rows):
    """One dist operation: per rung, the overlap efficiency max(comm, gemm) / time at each world size and
    shape (1 = the longer part alone, the most any overlap can give), rung 1's as the dashed line."""
    rows = [r for r in rows if ok(r) and r.get("comm_ms") and r.get("gemm_ms")]
    if not rows:
        return False
    cases = list(OrderedDict(((r.get("world", 0), r["m"], r["n"], r["k"]), None) for r in rows))
    rungs = sorted({(r["rung"], r["variant"]) for r in rows if r.get("variant") != "auto"})
    labels = [f"{n} {v}" for n, v in rungs]
    eff = {(r.get("world", 0), r["m"], r["n"], r["k"], r["rung"], r["variant"]): max(r["comm_ms"], r["gemm_ms"]) / r["real_time"]
           for r in rows}
    series, baselines = [], []
    for c in cases:
        auto = next((r["rung"] for r in rows if r.get("variant") == "auto" and (r.get("world", 0), r["m"], r["n"], r["k"]) == c), None)
        name = f"{c[0]} GPUs, {c[1]}x{c[2]}x{c[3]}" + (f" (auto: rung {auto})" if auto else "")
        series.append((name, [eff.get(c + (n, v), 0) for n, v in rungs]))
        baselines.append(next((eff[c + (n, v)] for n, v in rungs if n == 1 and c + (n, v) in eff), None))
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    bar_ladder(ax, labels, series, baselines, "max(comm, gemm) / time", log=False)
    ax.axhline(1.0, color="#000000", linewidth=1.0, zorder=3)
    ax.set_ylim(0, 1.05)
    sizes = "m_local x n_local x k" if rows[0]["op"] == "allgather_gemm" else "m x n x k_local"
    legend_above(ax, f"GPUs, {sizes} per rank (solid line: the longer part alone; dashed: rung 1)", ncol=2)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
    return True


def gemv_groups(rows):
    groups = []
    for t in ("n", "t"):
        shapes = sorted(OrderedDict((gemv_shape(r), None) for r in rows if r.get("trans") == t), key=lambda s: (s[0] * s[1], s[0]))
        groups.append((f"Trans::{t.upper()}", [(gemv_title(s), lambda r, s=s: gemv_shape(r) == s) for s in shapes]))
    return [g for g in groups if g[1]]


def reduce_groups(rows):
    cases = sorted(OrderedDict(((r["n"], r["dtype"]), None) for r in rows), key=lambda c: (c[0], c[1]))
    picks = [c for c in cases if c[1] in ("i64", "f32")] or cases

    def t(c):
        n, d = c
        e = n.bit_length() - 1
        return f"{d} 2^{e}" if n == 1 << e else f"{d} {n}"

    return [("reduce_sum", [(t(c), lambda r, c=c: (r["n"], r["dtype"]) == c) for c in picks])]


def pictures(latest, img_dir):
    plt = plt_setup()
    os.makedirs(img_dir, exist_ok=True)
    written = []
    for slug, per in latest.items():
        for ladder, (run, rows) in per.items():
            path = os.path.join(img_dir, f"{ladder}-{slug}.svg")
            name = f"{run.device}, commit {short_commit(run.context.get('git_commit', '?'))}"
            done = False
            if ladder == "gemm":
                done = picture_gemm_like(plt, path, f"SGEMM ladder (fp32, CUDA cores) on {name}", rows, "gemm")
            elif ladder == "gemm_tc":
                done = picture_gemm_tc(plt, path, f"Tensor-core ladder on {name}", rows)
            elif ladder == "gemv":
                done = picture_bandwidth(plt, path, f"SGEMV ladder on {name}", rows, run, gemv_groups(rows), "shape")
            elif ladder == "reduce":
                done = picture_bandwidth(plt, path, f"Reduction ladder on {name}", rows, run, reduce_groups(rows), "dtype, n")
            elif ladder == "gemm_host":
                done = picture_gemm_host(plt, path, f"gemm_host against the naive flow on {name}", rows)
            elif ladder in DIST_OPS:
                runs = sorted(OrderedDict((r["_header"].split("commit ")[1].split(",")[0], None) for r in rows if "_header" in r))
                done = picture_dist(plt, path, f"{ladder} over NCCL, {run.device} GPUs, commit {', '.join(runs)}", rows)
            if done:
                written.append(path)
    return written


# ---------------------------------------------------------------------------------------------
# Files


def benchmarks_md(latest, images, py_runs=()):
    out = [
        "# Benchmarks",
        "",
        "Generated by `scripts/report.py docs/runs/*.json` from the JSON that `rungs bench` wrote (kept in",
        "docs/runs/); do not edit by hand. After a run on a GPU (`rungs bench --format json --output bench.json`,",
        "`rungs bench gemm_host --format json --output bench-host.json`; `scripts/gpu.sh bench` writes both), put",
        "its JSON in docs/runs/ and run the script again: it reports the newest run per GPU and ladder.",
        "",
        "Method (`rungs bench --help`): CUDA events, warm-up, the median of at least 20 repetitions, the L2 flushed",
        "before each timed launch, the vendor baseline interleaved with each rung in the same run; x = the",
        "baseline's median over the rung's (higher is faster). gemm_host is timed on the host clock.",
        "",
        "## Headline",
        "",
        headline(latest),
    ]
    for slug, per in latest.items():
        devices = OrderedDict((run.device, None) for run, _ in per.values())
        out += ["", f"## {' / '.join(devices)}", ""]
        runs = OrderedDict()
        for ladder, (run, _) in per.items():
            runs.setdefault(run.path, (run, []))[1].append(ladder)
        for run, ladders in runs.values():
            c = run.context
            extra = []
            if c.get("sm_clock_mhz"):
                extra.append(f"{c.get('sms', '?')} SMs at up to {c['sm_clock_mhz']:.0f} MHz")
            if c.get("dram_read_gbs"):
                extra.append(f"DRAM read {c['dram_read_gbs']:.0f} GB/s measured")
            if c.get("cuda_driver"):
                extra.append(f"CUDA {c.get('cuda_runtime', '?')} (driver {c['cuda_driver']}), cuBLAS {c.get('cublas', '?')}")
            out.append(f"- {', '.join(ladders)}: {run.header()}" + (f"; {'; '.join(extra)}" if extra else ""))
        for ladder in LADDER_TITLES:
            if ladder not in per:
                continue
            run, rows = per[ladder]
            out += ["", f"### {LADDER_TITLES[ladder]}", ""]
            img = f"img/{ladder}-{slug}.svg"
            if img in images:
                out += [f"![{LADDER_TITLES[ladder].split(',')[0]} on {run.device}]({img})", ""]
            out.append(BLOCKS[ladder](run, rows))
    if py_runs:
        out += ["", "## Python: the cost of a call from PyTorch", "",
                "`scripts/bench_python.py` (`scripts/gpu.sh python` runs it): host time per call, each call timed on",
                "its own with `time.perf_counter_ns`, the stream synchronized (untimed) every 100 calls; device",
                "times from CUDA events, rungs.gemm and the raw extension call interleaved. The raw call is",
                "`rungs._rungs.gemm` on the tensors' pointers with the result allocated beforehand (the C++ call",
                "with nothing of the Python layer); the rows below it split a call into its pieces.", "",
                python_block(py_runs)]
    return "\n".join(out) + "\n"


MARKER = re.compile(r"(<!-- report:([a-z0-9_]+) -->\n)(.*?)(<!-- /report:\2 -->)", re.S)


def fill_blocks(text, blocks):
    def sub(m):
        name = m.group(2)
        if name not in blocks:
            raise SystemExit(f"report.py: unknown block <!-- report:{name} -->")
        return m.group(1) + blocks[name].rstrip("\n") + "\n" + m.group(4)

    return MARKER.sub(sub, text)


def write_if_changed(path, text):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:
        with open(path, "w") as f:
            f.write(text)
        return True
    return False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="JSON files written by rungs bench --format json")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), help="the repository (default: this script's)")
    ap.add_argument("--no-images", action="store_true", help="tables only (no matplotlib needed)")
    args = ap.parse_args(argv)
    bench_runs, py_runs = load_runs(args.runs)
    latest = latest_by_gpu(bench_runs)
    if not latest:
        raise SystemExit("report.py: no benchmark rows in the input")
    root = os.path.abspath(args.root)
    docs = os.path.join(root, "docs")
    images = set()
    if not args.no_images:
        for p in pictures(latest, os.path.join(docs, "img")):
            images.add(os.path.relpath(p, docs).replace(os.sep, "/"))
    blocks = {"headline": headline(latest), "python": python_block(py_runs)}
    for ladder in BLOCKS:
        blocks[ladder] = ladder_block(latest, ladder)
    changed = []
    if write_if_changed(os.path.join(docs, "BENCHMARKS.md"), benchmarks_md(latest, images, py_runs)):
        changed.append("docs/BENCHMARKS.md")
    targets = [os.path.join(root, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md") and f != "BENCHMARKS.md"
    )
    for path in targets:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        if write_if_changed(path, fill_blocks(text, blocks)):
            changed.append(os.path.relpath(path, root))
    print(f"report.py: {len(latest)} GPU(s), {len(images)} picture(s) under docs/img; text changed: {', '.join(changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
