#!/usr/bin/env python3
"""Turn the JSON of `rungs bench` runs into docs/BENCHMARKS.md and the pages under docs/bench/, the
pictures under docs/img/ and the generated blocks of README.md and docs/*.md; or check that the committed
files match the runs.

usage: scripts/report.py RUN.json [RUN.json ...] [--root DIR] [--no-images] [--newest-commit] [--redraw] [--check]

Each RUN.json is what `rungs bench --format json --output RUN.json` wrote: the main job (gemm, gemv,
reduce), `rungs bench gemm_host`, `rungs bench allgather_gemm|gemm_reducescatter` (2+ GPUs), or any part
of them; or scripts/bench_python.py's JSON ({"meta", "rows"}).

Runs are grouped by machine: the GPU model and the number of GPUs a run used. A run's rows fall into
parts (gemm fp32; each tensor-core type, fp8 per scales' layout; decode per type and scales; gemv;
reduce; gemm_host; each NCCL operation per GPU count). The pages and the pictures report, per GPU and
part, the newest run that measured it, each table under its own run's device, commit, date and command.
docs/BENCHMARKS.md is the index: the method, the headline, every run's device, commit, date and command,
and links to the pages that hold the tables: docs/bench/<gpu>.md per GPU (its single-GPU ladders),
docs/bench/dist.md (the NCCL ladders of every GPU), docs/bench/python.md (bench_python.py's runs); each
page stays under 25 KB (--check fails past that: split it further in page_of). The headline never mixes
commits on one machine: it takes the commit of the machine's newest run and only the runs at that commit;
parts measured only at older commits are named under it, with the page that holds their tables.
--newest-commit drops every run that is not at its machine's newest commit (everywhere, not only in the
headline). A new run dropped into docs/runs/ replaces the parts it measured. The same JSON gives the same
files.

Generated blocks: in README.md and docs/*.md, the text between `<!-- report:NAME -->` and
`<!-- /report:NAME -->` is replaced by block NAME: headline, gemm, gemm_tc, decode, decode_fp8, gemv,
reduce, gemm_host, allgather_gemm, gemm_reducescatter, python (bench_python.py's runs), example_gemm
(examples/gemm.cpp, in a code block).

--check regenerates everything into a temporary copy of the tree and fails (exit 1) where README.md,
docs/BENCHMARKS.md, a page under docs/bench/, a generated block or a picture differs from the committed
one (or a page is 25 KB or more). A picture is compared by the data it draws (each SVG carries it in a
`rungs-report-data` comment), not by its bytes, which depend on the matplotlib version.
"""
import argparse
import io
import json
import os
import re
import shutil
import sys
import tempfile
from collections import OrderedDict

# Colour-blind-safe (Okabe-Ito), in the order series are drawn.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
OWN, AUTO, VENDOR = PALETTE[0], PALETTE[1], "#000000"

# Why a rung is slower than the rung above it in its ladder: shown under a picture only where the data
# has it slower (the numbers come from the data).
SLOWER_BECAUSE = {
    ("gemm", "blocktile_2d"): "the inner-product form: 2 shared loads per FMA and 4-way bank conflicts",
    ("gemm", "kahan"): "Kahan-compensated sums: 4 operations per product, bought for accuracy",
    ("gemm_tc", "wgmma_pingpong"): "one consumer warpgroup at a time feeds the tensor cores",
    ("gemm_tc", "wgmma_streamk"): "stream-K ranges start at different k: fewer L2 hits, more DRAM reads",
    ("gemm_tc", "wgmma_overlap"): "the epilogue beside the MMAs slows them by about what it hides",
    ("gemm_tc", "wgmma_fp8_promote"): "each k tile's partial sums promoted to fp32 registers: the tensor core waits",
    ("gemm_tc", "wgmma_fp8_overlap"): "the consumers' turns order the issue, not the work",
}
# Rungs of a dist operation whose communication moves fewer bytes than rung 1's collective (comm).
FEWER_BYTES_BECAUSE = {
    ("gemm_reducescatter", "narrow"): "its partials are bf16, half the bytes of comm's fp32 reduce-scatter",
}

HEADLINE_SIZES = [2048, 4096, 8192]
FP8_SCALINGS = {"tensor": "per-tensor scales", "outer": "per-row / per-column scales", "block128": "128-block scales"}
KIND_TITLES = OrderedDict([("bf16", "bf16"), ("f16", "f16"), ("tf32", "tf32"), ("tf32x3", "tf32x3 (x = over cuBLAS sgemm)")])
LADDER_TITLES = OrderedDict(
    [
        ("gemm", "gemm: SGEMM on CUDA cores (fp32), TFLOP/s (x cuBLAS)"),
        ("gemm_tc", "gemm on tensor cores, TFLOP/s (x cuBLAS)"),
        ("decode", "gemm decode shapes (bf16, nt): time, GB/s, % of DRAM read (x cuBLAS)"),
        ("decode_fp8", "gemm decode shapes (fp8 e4m3 -> bf16, nt): time, GB/s, % of DRAM read (x cuBLASLt)"),
        ("gemm_epilogue", "gemm with an epilogue (bias, activation, gated product, fp8 output): ms (x the unfused chain)"),
        ("gemv", "gemv: SGEMV (fp32), GB/s (x cuBLAS)"),
        ("reduce", "reduce: reduce_sum, GB/s (x CUB)"),
        ("gemm_host", "gemm_host: the host-to-host flow"),
        ("allgather_gemm", "allgather_gemm: tensor-parallel gemm over NCCL (bf16), ms (x rung 1)"),
        ("gemm_reducescatter", "gemm_reducescatter: tensor-parallel gemm over NCCL (bf16), ms (x rung 1)"),
    ]
)
# The pictures of each ladder section of the pages under docs/bench/ (file stem; the GPU's slug is appended).
LADDER_PICTURES = {
    "gemm": ["gemm"], "gemm_tc": ["gemm_tc", "fp8"], "decode": ["decode"], "gemm_epilogue": ["epilogue"],
    "gemv": ["gemv"], "reduce": ["reduce"],
    "gemm_host": ["gemm_host"], "allgather_gemm": ["allgather_gemm"], "gemm_reducescatter": ["gemm_reducescatter"],
}
PICTURE_ALT = {
    "gemm": "The SGEMM ladder against cuBLAS", "gemm_tc": "The tensor-core ladder against cuBLAS",
    "fp8": "fp8 gemm TFLOP/s against cuBLASLt", "decode": "Decode shapes: % of the DRAM read rate, auto and the vendor",
    "epilogue": "Fused epilogues against the unfused chain",
    "gemv": "The SGEMV ladder against cuBLAS", "reduce": "The reduction ladder against CUB",
    "gemm_host": "gemm_host against the naive flow and the floor", "allgather_gemm": "allgather_gemm's rungs against rung 1",
    "gemm_reducescatter": "gemm_reducescatter's rungs against rung 1",
}
DIST_OPS = ("allgather_gemm", "gemm_reducescatter")
NOT_IN_HEADLINE = ("gemm_epilogue",)
GEMM_VENDOR = {"f32": "cuBLAS (cublasSgemm)", "bf16": "cuBLAS (cublasGemmEx)", "f16": "cuBLAS (cublasGemmEx)",
               "tf32": "cuBLAS (cublasGemmEx, tf32)", "tf32x3": "cuBLAS (cublasSgemm, fp32)"}
DATA_TAG = "rungs-report-data"


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
    return c[:7] if re.fullmatch(r"[0-9a-f]{40}", c or "") else (c or "?")


def part_of(row):
    """The part of the seed workloads a row belongs to; a run replaces the older runs' rows part by part."""
    op = row.get("op", "gemm")
    if op in DIST_OPS:
        return (op, row.get("world", 0))
    if op == "gemm":
        dtype = row.get("dtype", "f32")
        if row.get("epilogue"):  # a run with --epilogue / --gated / --out: its own tables
            return ("gemm_epilogue", dtype, row["epilogue"])
        if row.get("workload") in ("decode", "decode_fp8"):
            return (row["workload"], dtype, row.get("scaling"))
        if dtype == "f32":
            return ("gemm",)
        return ("gemm_tc", dtype, row.get("scaling"))
    return (op,)


def ladder_of(row):
    return part_of(row)[0]


class Run:
    def __init__(self, path, data):
        self.path = path
        self.context = data.get("context", {})
        self.rows = data.get("benchmarks", [])
        self.device = self.context.get("device", "unknown device")
        self.slug = gpu_slug(self.device)
        self.date = self.context.get("date", "")
        self.commit = short_commit(self.context.get("git_commit"))
        self.world = max([r.get("world", 1) or 1 for r in self.rows] or [1])
        self.machine = (self.slug, self.world)

    def key(self):
        return (self.date, self.path)

    def command(self):
        cmd = self.context.get("command_line", "rungs bench")
        cmd = re.sub(r"\s--quiet\b", "", cmd)
        return re.sub(r"(--output\s+)(\S+)", lambda m: m.group(1) + os.path.basename(m.group(2)), cmd)

    def header(self):
        parts = [self.device, f"commit {self.commit}", self.date[:10], f"`{self.command()}`"]
        return ", ".join(p for p in parts if p)

    def parts(self):
        out = OrderedDict()
        for row in self.rows:
            out.setdefault(part_of(row), []).append(row)
        return out


def machine_label(machine):
    slug, world = machine
    return slug.upper() if world <= 1 else f"{world} x {slug.upper()}"


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


def newest_commit_only(runs):
    """The runs at the commit of their machine's newest run."""
    newest = {}
    for run in sorted(runs, key=Run.key):
        newest[run.machine] = run.commit
    return [r for r in runs if r.commit == newest[r.machine]]


def newest_by_part(runs):
    """{part: (run, rows)}: per part, the rows of the newest run that measured it."""
    out = {}
    for run in sorted(runs, key=Run.key):
        for part, rows in run.parts().items():
            out[part] = (run, rows)
    return out


def select(runs):
    """{slug: {part: (run, rows)}}: per GPU (every machine of that GPU model) and part, the newest run."""
    by_slug = OrderedDict()
    for run in runs:
        by_slug.setdefault(run.slug, []).append(run)
    return OrderedDict((slug, newest_by_part(by_slug[slug])) for slug in sorted(by_slug))


def headline_select(runs):
    """{machine: (commit, {part: (run, rows)}, parts measured only at older commits)}: one commit per machine,
    the one of its newest run. Refuses (exits) if the selection were to hold two commits of one machine."""
    by_machine = {}
    for run in runs:
        if all(p[0] in NOT_IN_HEADLINE for p in run.parts()):
            continue  # parts the headline does not show: their run's commit does not decide the machine's
        by_machine.setdefault(run.machine, []).append(run)
    out = OrderedDict()
    for machine in sorted(by_machine):
        mruns = sorted(by_machine[machine], key=Run.key)
        commit = mruns[-1].commit
        chosen = newest_by_part([r for r in mruns if r.commit == commit])
        commits = sorted({run.commit for run, _ in chosen.values()})
        if len(commits) != 1:
            raise SystemExit(f"report.py: the headline of {machine_label(machine)} would mix commits {', '.join(commits)}")
        older = sorted({p for r in mruns if r.commit != commit for p in r.parts()} - set(chosen))
        out[machine] = (commit, chosen, older)
    return out


def ladder_runs(per, ladder):
    """[(run, rows)] of one ladder on one GPU: every part of the ladder, grouped by the run it comes from,
    oldest run first."""
    by_run = OrderedDict()
    for part in sorted(per, key=lambda p: tuple(str(x) for x in p)):
        if part[0] != ladder:
            continue
        run, rows = per[part]
        by_run.setdefault(run.path, (run, []))[1].extend(rows)
    return sorted(by_run.values(), key=lambda rr: (rr[0].world, rr[0].key()))


def rows_of(per, ladder):
    return [r for _, rows in ladder_runs(per, ladder) for r in rows]


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


def dist_timing(run):
    # Runs whose timing says "interleaved" ran the rungs and the two operations alone in turn,
    # repetition by repetition; older ones timed each in a block, rung after rung.
    return "interleaved" if "interleaved" in run.context.get("timing", "") else "timed rung after rung, each in a block"


DIST_NOTE = (
    "Medians of the slowest rank's time; comm = rung 1's collective alone (ncclAllGather of A in bf16; "
    "ncclReduceScatter of the fp32 partials); gemm = rungs::gemm of one rank's product alone; x rung 1 = rung 1's "
    "median over the rung's, same run. Sustained load lowers the clocks, so a rung timed late in a block-timed "
    "run is slower than early (up to 15 % on 2 H200); interleaved runs time every rung and both operations "
    "alone in the same stretch.")


def block_dist(run, rows):
    """One dist operation at one GPU count (one run): a table of rungs (and auto) x shapes: the time, TFLOP/s
    per GPU, x rung 1, the communication and the product alone, time over the longer of those two, and
    NCCL's bus bandwidth."""
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


def epilogue_cases(rows):
    """[(epilogue, dtype, (m, n, k))] of an epilogue run's rows, in the run's order."""
    return list(OrderedDict(((r["epilogue"], r.get("dtype", "?"), (r["m"], r["n"], r["k"])), None) for r in rows))


def block_gemm_epilogue(run, rows):
    """Per epilogue and shape: the cublas rung's unfused chain (the product, then the plain kernel) and each
    rung that fuses it, ms (x the chain, timed interleaved in the same run)."""
    cases = epilogue_cases(rows)
    variants = rung_order(rows)
    by = {(base_variant(r), r["epilogue"], r.get("dtype"), (r["m"], r["n"], r["k"])): r for r in rows}
    header = ["epilogue", "m x n x k (n: C's columns)"] + [
        "cublas (the chain)" if v == "cublas" else ("auto" if v == "auto" else v) for v in variants]
    body = []
    for epi, dtype, shape in cases:
        cells = [f"{epi} ({dtype}, {next(r['trans'] for r in rows if r['epilogue'] == epi)})", "x".join(map(str, shape))]
        for v in variants:
            r = by.get((v, epi, dtype, shape))
            if r is None or not ok(r):
                cells.append("-" if r is None else r.get("status", "-"))
                continue
            ms = f"{r['real_time']:.3f}"
            label = r["variant"].split("=", 1)[1] + ": " if v == "auto" and "=" in r["variant"] else ""
            cells.append(ms if r.get("baseline_rung") else f"{label}{ms} ({r['speedup_vs_baseline']:.2f}x)")
        body.append(cells)
    return md_table(header, body)


BLOCKS = OrderedDict(
    [
        ("gemm", block_gemm),
        ("gemm_tc", block_gemm_tc),
        ("decode", block_decode),
        ("decode_fp8", block_decode),
        ("gemm_epilogue", block_gemm_epilogue),
        ("gemv", block_gemv),
        ("reduce", block_reduce),
        ("gemm_host", block_gemm_host),
        ("allgather_gemm", block_dist),
        ("gemm_reducescatter", block_dist),
    ]
)


def ladder_block(selected, ladder):
    """Every GPU's tables of one ladder, each under its run's header line."""
    parts = []
    for slug, per in selected.items():
        for run, rows in ladder_runs(per, ladder):
            head = f"**{run.device}**: {run.header().split(', ', 1)[1]}"
            if ladder in DIST_OPS:
                head += f" ({dist_timing(run)})"
            parts.append(head + "\n\n" + BLOCKS[ladder](run, rows))
    if not parts:
        return "(no run of this ladder in the report's input)"
    return "\n\n".join(parts) + ("\n\n" + DIST_NOTE if ladder in DIST_OPS else "")


# ---------------------------------------------------------------------------------------------
# Headline: auto against the vendor at the seed workloads, one commit per machine


def is_auto(row):
    return row["variant"] == "auto" or row["variant"].startswith("auto=")


def dist_x(rows):
    """x rung 1 of a dist case's rows: rung 1's median over the row's."""
    base = next((r for r in rows if r.get("rung") == 1 and not is_auto(r) and ok(r)), None)
    return lambda r: None if base is None or not ok(r) else base["real_time"] / r["real_time"]


def resolved_name(rows, auto):
    if auto["variant"].startswith("auto="):
        return auto["variant"][5:]
    return next((r["variant"] for r in rows if r.get("rung") == auto.get("rung") and not is_auto(r)), str(auto.get("rung")))


def case_noise(rows, auto, resolved):
    """The run's noise at one case: the relative spread of the baseline's medians across the case's rows
    (the bench times the baseline interleaved with every rung), and between auto's median and that of the
    rung auto ran (one kernel timed twice)."""
    full = [r for r in rows if ok(r) and not r.get("reps_cut")]
    times = [r["real_time"] for r in full if r.get("baseline_rung")]
    times += [r["baseline_real_time"] for r in full if not r.get("baseline_rung") and r.get("baseline_real_time")]
    noise = max(times) / min(times) - 1 if len(times) > 1 else 0.0
    if resolved is not None:
        noise = max(noise, abs(auto["real_time"] / resolved["real_time"] - 1))
    return noise


def auto_and_best(rows, x_of=None):
    """auto's x at one case, the rung it ran, and another rung that beats it beyond the case's noise (or None)."""
    x_of = x_of or (lambda r: r.get("speedup_vs_baseline") if ok(r) else None)
    auto = next((r for r in rows if is_auto(r) and ok(r)), None)
    if auto is None or x_of(auto) is None:
        return None
    name = resolved_name(rows, auto)
    resolved = next((r for r in rows if not is_auto(r) and r["variant"] == name and ok(r)), None)
    noise = case_noise(rows, auto, resolved)
    cands = [r for r in rows if ok(r) and not is_auto(r) and not r.get("baseline_rung") and r.get("rung", -1) >= 0
             and r["variant"] != name and x_of(r) is not None and not (r["op"] in DIST_OPS and r.get("rung") == 1)]
    best = max(cands, key=x_of, default=None)
    if best is not None and not x_of(best) > x_of(auto) * (1 + noise):
        best = None
    return {"auto": auto, "x": x_of(auto), "name": name, "best": best, "bx": None if best is None else x_of(best),
            "noise": noise}


def cell_one(res):
    if res is None:
        return "-"
    out = f"{res['x']:.2f}x ({res['name']})"
    if res["best"] is not None:
        out += f", best {res['bx']:.2f}x ({res['best']['variant']})"
    return out


def span(values, fmt="{:.2f}", unit="x"):
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return f"{lo}{unit}" if lo == hi else f"{lo}-{hi}{unit}"


def cell_range(results, dram=False):
    results = [r for r in results if r is not None]
    if not results:
        return "-"
    out = span([r["x"] for r in results])
    pct = [r["auto"]["pct_dram"] for r in results if r["auto"].get("pct_dram")]
    if dram and pct:
        out += f", {span(pct, '{:.0f}', ' %')} of DRAM"
    faster = sum(1 for r in results if r["best"] is not None)
    if faster:
        out += f"; another rung faster at {faster} of {len(results)}"
    return out


def part_title(part):
    ladder = part[0]
    if ladder == "gemm":
        return "gemm fp32"
    if ladder == "gemm_tc":
        return f"gemm {part[1]}" + (f" ({FP8_SCALINGS.get(part[2], part[2])})" if part[2] else "")
    if ladder in ("decode", "decode_fp8"):
        return f"decode {part[1]}" + (f" ({FP8_SCALINGS.get(part[2], part[2])})" if part[2] else "")
    if ladder in DIST_OPS:
        return f"{ladder} on {part[1]} GPUs"
    return {"reduce": "reduce_sum"}.get(ladder, ladder)


def headline(hsel):
    """The headline table (markdown) from headline_select's choice."""
    slugs = sorted({m[0] for m in hsel})

    def part_rows(slug, part, world=1):
        return hsel.get((slug, world), (None, {}, []))[1].get(part, (None, []))[1]

    body = []

    def add(title, vendor, cells):
        if any(c != "-" for c in cells):
            body.append([title, vendor] + cells)

    squares = [("gemm fp32 {s}^3", ("gemm",), "nn", GEMM_VENDOR["f32"])]
    for kind in ("bf16", "f16", "tf32", "tf32x3"):
        squares.append((f"gemm {kind} {{s}}^3", ("gemm_tc", kind, None), "nn", GEMM_VENDOR[kind]))
    for scaling in ("tensor", "outer", "block128"):
        squares.append((f"gemm fp8 {{s}}^3 nt, {FP8_SCALINGS[scaling]}", ("gemm_tc", "fp8", scaling), "nt",
                        f"cuBLASLt (fp8, {FP8_SCALINGS[scaling]})"))
    for title, part, trans, vendor in squares:
        for s in HEADLINE_SIZES:
            cells = []
            for slug in slugs:
                case = [r for r in part_rows(slug, part) if r["m"] == r["n"] == r["k"] == s and r.get("trans", "nn") == trans]
                cells.append(cell_one(auto_and_best(case)) if case else "-")
            add(title.format(s=s), vendor, cells)
    # Decode: one row per weight matrix, auto's range over the batch sizes m.
    decode_parts = sorted({p for m in hsel.values() for p in m[1] if p[0] in ("decode", "decode_fp8")},
                          key=lambda p: (p[0], str(p[2])))
    for part in decode_parts:
        weights = OrderedDict()
        for slug in slugs:
            for r in part_rows(slug, part):
                weights.setdefault((r["n"], r["k"]), set()).add(r["m"])
        for (n, k), ms in weights.items():
            cells = []
            for slug in slugs:
                rows = [r for r in part_rows(slug, part) if (r["n"], r["k"]) == (n, k)]
                cells.append(cell_range([auto_and_best([r for r in rows if r["m"] == m]) for m in sorted(ms)], dram=True))
            scales = f", {FP8_SCALINGS.get(part[2], part[2])}" if part[2] else ""
            vendor = "cuBLASLt (fp8" + scales + ")" if part[1] == "fp8" else GEMM_VENDOR.get(part[1], "cuBLAS")
            add(f"decode {part[1]} nt{scales}, W {n} x {k}, m = {min(ms)}-{max(ms)}", vendor, cells)
    # gemv and reduce: auto's range over every seed workload.
    for part, title, vendor, case_of in (
            (("gemv",), "gemv, the {n} seed shapes", "cuBLAS (cublasSgemv)", lambda r: (r["m"], r["n"], r.get("trans"))),
            (("reduce",), "reduce_sum, the {n} seed workloads", "CUB (DeviceReduce::Sum)", lambda r: (r["n"], r.get("dtype")))):
        cells, count = [], 0
        for slug in slugs:
            rows = part_rows(slug, part)
            cases = list(OrderedDict((case_of(r), None) for r in rows))
            count = max(count, len(cases))
            cells.append(cell_range([auto_and_best([r for r in rows if case_of(r) == c]) for c in cases]))
        add(title.format(n=count), vendor, cells)
    # gemm_host: the flow against the naive flow, per size and memory kind.
    host = OrderedDict()
    for slug in slugs:
        for r in part_rows(slug, ("gemm_host",)):
            host[(r["m"] * r["n"] * r["k"], r.get("memory") != "pinned", r.get("shape"), r.get("memory"))] = None
    for _, _, shape, mem in sorted(host):
        cells = []
        for slug in slugs:
            r = next((r for r in part_rows(slug, ("gemm_host",)) if r.get("shape") == shape and r.get("memory") == mem), None)
            cells.append("-" if r is None or r.get("speedup") is None else f"{ratio(r['speedup'])} ({ratio(r.get('x_floor'))} the floor)")
        add(f"gemm_host {shape}, {mem}", "the naive flow (copy in, gemm, copy out)", cells)
    # The NCCL ladders: auto against rung 1, per GPU count and shape.
    for op, vendor in (("allgather_gemm", "rung 1: ncclAllGather, then the gemm"),
                       ("gemm_reducescatter", "rung 1: the gemm, then ncclReduceScatter")):
        worlds = sorted({m[1] for m in hsel if m[1] > 1})
        for w in worlds:
            shapes = OrderedDict()
            for slug in slugs:
                for r in part_rows(slug, (op, w), w):
                    shapes[(r["m"], r["n"], r["k"])] = None
            for shape in shapes:
                cells = []
                for slug in slugs:
                    rows = [r for r in part_rows(slug, (op, w), w) if (r["m"], r["n"], r["k"]) == shape]
                    cells.append(cell_one(auto_and_best(rows, dist_x(rows))) if rows else "-")
                per = "m_local x n_local x k" if op == "allgather_gemm" else "m x n x k_local"
                add(f"{op} bf16, {w} GPUs, {'x'.join(map(str, shape))} ({per})", vendor, cells)
    lines = [md_table(["workload", "baseline"] + [s.upper() for s in slugs], body), ""]
    lines.append(
        "x = the baseline's median time over auto's (what the library runs by default; in parentheses the rung it "
        "ran), both timed interleaved in one run: higher is faster. best = another rung, named only where it beats "
        "auto by more than the run's noise at that case (the spread of the baseline's medians across the case's "
        "rows, or between two medians of auto's kernel). Ranges span the workloads of a row. gemm_host: the naive "
        "flow's time over the flow's, and the flow's time over the floor (the copies or the product alone, "
        "whichever is longer).")
    for machine, (commit, chosen, older) in hsel.items():
        runs = OrderedDict()
        for run, _ in sorted(chosen.values(), key=lambda rr: rr[0].key()):
            runs[run.path] = run
        days = sorted({run.date[:10] for run in runs.values()})
        device = next(iter(runs.values())).device
        line = (f"- {machine_label(machine)}: {device}, commit {commit}, {days[0]}"
                + (f" to {days[-1]}" if len(days) > 1 else "") + ": "
                + ", ".join(f"`{run.command()}`" for run in runs.values()))
        if older:
            line += (f"; not measured at commit {commit}: " + ", ".join(OrderedDict((part_title(p), None) for p in older))
                     + " (older runs' tables: " + ", ".join(OrderedDict((f"docs/{page_of(machine[0], p[0])}", None) for p in older)) + ")")
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Pictures. Each one is drawn from a dict of what it shows (titles, labels, values, notes), which the SVG
# carries in a comment: --check compares those, and a picture whose data did not change is not rewritten.


def plt_setup():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "rungs",
            "svg.fonttype": "none",
            "font.family": "DejaVu Sans",
            "font.size": 8,
            "axes.titlesize": 8,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        }
    )
    return plt


def sig(v):
    """A drawn value as stored in the picture's data: six significant digits."""
    return None if v is None else float(f"{v:.6g}")


def svg_data(text):
    m = re.search(r"<!-- " + DATA_TAG + r" (.*?) -->", text, re.S)
    return None if m is None else json.loads(m.group(1))


REDRAW = False  # --redraw: write every picture, even where the file there draws the same data


def save(fig, path, data):
    """Write the SVG with its data in front, unless the file there already draws the same data (so a newer
    matplotlib does not rewrite every picture; --redraw does, after a change to how they are drawn)."""
    data = json.loads(json.dumps(data))  # tuples as lists, as read back
    if os.path.exists(path) and not REDRAW:
        with open(path) as f:
            if svg_data(f.read()) == data:
                return
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "rungs scripts/report.py"}, bbox_inches="tight")
    svg = buf.getvalue()
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).replace("--", "-\\u002d")
    i = svg.index("<svg")
    with open(path, "w") as f:
        f.write(svg[:i] + f"<!-- {DATA_TAG} {blob} -->\n" + svg[i:])


def notes_below(fig, notes):
    """Lines of text under the panels (the tight bounding box takes them in)."""
    if notes:
        fig.text(0.01, 0.0, "\n".join(notes), ha="left", va="top", fontsize=7)


def hbar_panel(ax, labels, p, xmax, nmax):
    """One panel of horizontal bars (a rung each, ladder order top down; auto's orange), the baseline as a solid
    line at 1.0, a dashed line at p["ceiling"] if given; linear x axis from 0 to xmax, room for nmax bars."""
    ys = list(range(len(labels)))
    colors = [AUTO if k == p.get("auto") else OWN for k in ys]
    ax.barh(ys, [v or 0 for v in p["values"]], height=0.72, color=colors, zorder=2)
    for y, v in zip(ys, p["values"]):
        ax.text((v or 0) + xmax * 0.015, y, "-" if v is None else f"{v:.2f}" if v >= 0.005 else "<0.01", va="center",
                ha="left", fontsize=6)
    a = p.get("auto")
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    if a is not None and p.get("auto_name") and (p["values"][a] or 0) / xmax * width_in > 0.05 * len(p["auto_name"]) + 0.1:
        ax.text(xmax * 0.02, a, p["auto_name"], va="center", ha="left", fontsize=5.5, color="white", zorder=4)
    ax.axvline(1.0, color=VENDOR, linewidth=1.1, zorder=3)
    if p.get("ceiling"):
        ax.axvline(p["ceiling"], color=VENDOR, linewidth=0.9, linestyle="--", zorder=3)
    ax.set_xlim(0, xmax)
    ax.set_ylim(nmax - 0.5, -0.5)
    ax.set_yticks(ys)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6, zorder=0)


def hbar_grid(plt, path, title, rows, xlabel, notes=()):
    """Small panels of horizontal bars: rows = [(row title, labels, [panel, ...])], panel = {"title", "values",
    "auto": index of auto's bar or None, "auto_name", "ceiling"}; one bar per label (None: not run). Each row of
    panels shares its linear x axis, from 0 to a little past its largest value (at least 1)."""
    ncols = max(len(p) for _, _, p in rows)
    heights = [0.8 + 0.17 * len(labels) for _, labels, _ in rows]
    label_w = 0.065 * max(len(l) for _, labels, _ in rows for l in labels) + 0.3
    fig_h = sum(heights) + 0.9
    fig = plt.figure(figsize=(label_w + 1.9 * ncols, fig_h))
    gs = fig.add_gridspec(len(rows), ncols, height_ratios=heights, hspace=0.6, wspace=0.15, top=1 - 0.75 / fig_h,
                          bottom=0.45 / fig_h, left=label_w / (label_w + 1.9 * ncols), right=0.98)
    data = {"title": title, "xlabel": xlabel, "rows": [], "notes": list(notes)}
    for i, (row_title, labels, panels) in enumerate(rows):
        xmax = max([1.0] + [v for p in panels for v in p["values"] + [p.get("ceiling")] if v is not None]) * 1.2
        first = None
        drow = {"title": row_title, "labels": labels, "panels": []}
        for j in range(ncols):
            ax = fig.add_subplot(gs[i, j])
            if j >= len(panels):
                ax.set_visible(False)
                continue
            p = panels[j]
            hbar_panel(ax, labels, p, xmax, len(labels))
            if j == 0:
                ax.set_yticklabels(labels)
                first = ax
            else:
                ax.tick_params(labelleft=False)
            head = (row_title if row_title else "") if j == 0 else ""
            ax.set_title((head + "\n" if any(r[0] for r in rows) else "") + p["title"], loc="left", fontsize=7.5)
            drow["panels"].append({"title": p["title"], "values": [sig(v) for v in p["values"]], "auto": p.get("auto"),
                                   "auto_name": p.get("auto_name"), "ceiling": sig(p.get("ceiling"))})
        assert first is not None
        data["rows"].append(drow)
    fig.suptitle(title, fontsize=9, x=0.01, ha="left")
    fig.supxlabel(xlabel, fontsize=7.5)
    notes_below(fig, notes)
    save(fig, path, data)
    plt.close(fig)
    return True


def is_decode_rung(variant):
    return variant.startswith("decode")


def ladder_panels(rows, cases, case_of, pct_title=False):
    """(labels, panels) for hbar_grid: the own rungs that ran any case (no vendor, no decode rung), then auto;
    per case a panel of x vendor."""
    own = [v for v in rung_order([r for r in rows if ok(r)]) if v != "auto" and not is_decode_rung(v)]
    own = [v for v in own if not any(r.get("baseline_rung") for r in rows if base_variant(r) == v)]
    if not own:
        return None
    labels = [rung_label(next(r for r in rows if base_variant(r) == v)) for v in own] + ["auto"]
    by = {(base_variant(r), case_of(r)): r for r in rows if ok(r)}
    panels = []
    for title, c in cases:
        vals = [by[(v, c)].get("speedup_vs_baseline") if (v, c) in by else None for v in own]
        a = by.get(("auto", c))
        vals.append(None if a is None else a.get("speedup_vs_baseline"))
        if a is not None and a.get("pct_dram") and pct_title:
            title += f"\nauto: {a['pct_dram']:.0f} % of DRAM"
        panels.append({"title": title, "values": vals, "auto": len(own) if a is not None else None,
                       "auto_name": None if a is None else a["variant"][5:]})
    return labels, panels


def slower_notes(ladder, labels, panel, vendor, where):
    """'18 wgmma_pingpong: 0.80x cuBLAS at 8192^3, below 17 wgmma_tma_store's 1.01x: one consumer ...': the
    rungs slower than the rung above them where a reason is known."""
    notes = []
    vals = panel["values"]
    for i in range(1, len(labels) - 1):
        name = labels[i].split(" ", 1)[-1]
        why = SLOWER_BECAUSE.get((ladder, name))
        prev = next((j for j in range(i - 1, -1, -1) if vals[j] is not None), None)
        if why and prev is not None and vals[i] is not None and vals[i] < vals[prev]:
            notes.append(f"{labels[i]}: {vals[i]:.2f}x {vendor} at {where}, below {labels[prev]}'s {vals[prev]:.2f}x: {why}")
    return notes


def picture_gemm(plt, path, title, rows):
    rows = [r for r in rows if r.get("trans", "nn") == "nn"]
    shapes = shapes_of(rows)
    lp = ladder_panels(rows, [(shape_title(s), s) for s in shapes], lambda r: (r["m"], r["n"], r["k"]))
    if lp is None:
        return False
    labels, panels = lp
    notes = slower_notes("gemm", labels, panels[-1], "cuBLAS", panels[-1]["title"])
    return hbar_grid(plt, path, title, [("", labels, panels)], "x cuBLAS sgemm (its median time over the rung's)", notes)


def picture_gemm_tc(plt, path, title, rows):
    grid, notes = [], []
    for kind in KIND_TITLES:
        kr = [r for r in rows if r.get("dtype") == kind and r.get("trans", "nn") == "nn"]
        if not kr:
            continue
        shapes = shapes_of(kr)
        lp = ladder_panels(kr, [(shape_title(s), s) for s in shapes], lambda r: (r["m"], r["n"], r["k"]))
        if lp is None:
            continue
        labels, panels = lp
        vendor = "cuBLAS sgemm" if kind == "tf32x3" else "cuBLAS"
        grid.append((f"{kind} (x {vendor})", labels, panels))
        notes += [f"{kind}: {n}" for n in slower_notes("gemm_tc", labels, panels[-1], vendor, panels[-1]["title"])]
    if not grid:
        return False
    return hbar_grid(plt, path, title, grid, "x cuBLAS (its median time over the rung's)", notes)


def grouped_bars(ax, groups, series, ylabel, fmt, fontsize=5.5, inside=()):
    """Vertical bars: per group (x tick) one bar per series [(name, color, values, texts)]; the labels of the
    series in `inside` are written in white inside the top of their bars."""
    n = len(series)
    width = 0.8 / n
    for i, (name, color, vals, texts) in enumerate(series):
        xs = [g - 0.4 + width * (i + 0.5) for g in range(len(groups))]
        ax.bar(xs, [v or 0 for v in vals], width * 0.92, color=color, label=name, zorder=2)
        for x, v, t in zip(xs, vals, texts or [None] * len(vals)):
            if v is not None:
                t = t if t is not None else fmt.format(v)
                if i in inside:
                    ax.text(x, v * 0.97, t, ha="center", va="top", fontsize=fontsize, color="white", zorder=4)
                else:
                    ax.text(x, v, t, ha="center", va="bottom", fontsize=fontsize, rotation=90 if n > 3 else 0)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6, zorder=0)


def picture_fp8(plt, path, title, rows):
    """TFLOP/s per scales' layout: cuBLASLt and each own fp8 rung at each size; in the panels other than per-tensor,
    cuBLASLt's per-tensor TFLOP/s as a black tick over each size."""
    f8 = [r for r in rows if r.get("dtype") == "fp8" and r.get("trans") == "nt" and ok(r)]
    scalings = [s for s in FP8_SCALINGS if any(r.get("scaling", "tensor") == s for r in f8)]
    if not scalings:
        return False
    fig, axes = plt.subplots(1, len(scalings), figsize=(5.0 * len(scalings), 3.2), squeeze=False, sharey=True)
    data = {"title": title, "panels": [], "notes": []}
    tensor = {(r["m"], r["n"], r["k"]): r["tflops"] for r in f8 if r.get("scaling", "tensor") == "tensor" and r.get("baseline_rung")}
    top = max(r["tflops"] for r in f8)
    for ax, scaling in zip(axes[0], scalings):
        sr = [r for r in f8 if r.get("scaling", "tensor") == scaling]
        shapes = shapes_of(sr)
        own = [v for v in rung_order(sr) if v != "auto" and not is_decode_rung(v)
               and not any(r.get("baseline_rung") for r in sr if base_variant(r) == v)]
        vend = next((base_variant(r) for r in sr if r.get("baseline_rung")), None)
        by = {(base_variant(r), (r["m"], r["n"], r["k"])): r for r in sr}
        series = []
        for i, v in enumerate(([vend] if vend else []) + own):
            vals = [by[(v, s)]["tflops"] if (v, s) in by else None for s in shapes]
            texts = [None if (v, s) not in by else (f"{by[(v, s)]['tflops']:.0f}" if v == vend else
                                                    f"{by[(v, s)]['tflops']:.0f} ({by[(v, s)]['speedup_vs_baseline']:.2f}x)") for s in shapes]
            name = "cuBLASLt" if v == vend else rung_label(next(r for r in sr if base_variant(r) == v))
            series.append((name, VENDOR if v == vend else PALETTE[i % 6], vals, texts))
        grouped_bars(ax, [shape_title(s) for s in shapes], series, "TFLOP/s", "{:.0f}")
        ticks = []
        if scaling != "tensor":
            for g, s in enumerate(shapes):
                if s in tensor:
                    ax.plot([g - 0.45, g + 0.45], [tensor[s]] * 2, color=VENDOR, linewidth=1.4, linestyle=(0, (1, 1)), zorder=3)
                    ticks.append(sig(tensor[s]))
            if ticks:
                ax.plot([], [], color=VENDOR, linewidth=1.4, linestyle=(0, (1, 1)), label="cuBLASLt, per-tensor scales")
            for s in shapes:
                best = max((by[(v, s)] for v in own if (v, s) in by), key=lambda r: r["tflops"], default=None)
                if best is not None and s in tensor and (vend, s) in by:
                    data["notes"].append(
                        f"{FP8_SCALINGS[scaling]} at {shape_title(s)}: {rung_label(best)} {best['tflops']:.0f} TFLOP/s, "
                        f"{best['tflops'] / by[(vend, s)]['tflops']:.2f}x cuBLASLt's {FP8_SCALINGS[scaling]} and "
                        f"{best['tflops'] / tensor[s]:.2f}x its per-tensor scales")
        ax.set_ylim(0, top * 1.3)
        ax.set_title(f"{FP8_SCALINGS[scaling]} (bar labels: TFLOP/s, x cuBLASLt at these scales)", loc="left")
        ax.legend(fontsize=6.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4)
        data["panels"].append({"scaling": scaling, "groups": [shape_title(s) for s in shapes],
                               "series": [[n, [sig(v) for v in vals]] for n, _, vals, _ in series], "per_tensor": ticks})
    fig.suptitle(title, fontsize=9, x=0.01, ha="left")
    fig.tight_layout()
    notes_below(fig, data["notes"])
    save(fig, path, data)
    plt.close(fig)
    return True


def picture_epilogue(plt, path, title, rows):
    """Time of each rung that fuses the epilogue against the unfused chain (the cublas rung), one panel per
    epilogue, one group per shape."""
    good = [r for r in rows if ok(r)]
    epis = list(OrderedDict((r["epilogue"], None) for r in good))
    if not epis:
        return False
    fig, axes = plt.subplots(1, len(epis), figsize=(3.6 * len(epis), 3.0), squeeze=False)
    data = {"title": title, "panels": []}
    for ax, epi in zip(axes[0], epis):
        er = [r for r in good if r["epilogue"] == epi]
        shapes = shapes_of(er)
        variants = [v for v in rung_order(er) if v != "auto"]
        by = {(base_variant(r), (r["m"], r["n"], r["k"])): r for r in er}
        series = []
        for i, v in enumerate(variants):
            vals = [by[(v, s)]["real_time"] if (v, s) in by else None for s in shapes]
            texts = [None if (v, s) not in by else (f"{by[(v, s)]['real_time']:.3g}" if v == "cublas" else
                                                    f"{by[(v, s)]['speedup_vs_baseline']:.2f}x") for s in shapes]
            series.append(("the chain (cublas)" if v == "cublas" else v, VENDOR if v == "cublas" else PALETTE[i % 6],
                           vals, texts))
        grouped_bars(ax, [shape_title(s) for s in shapes], series, "ms", "{:.3g}")
        ax.set_yscale("log")
        ax.set_title(f"{epi} (bar labels: ms, x the chain)", loc="left")
        ax.legend(fontsize=6.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
        data["panels"].append({"epilogue": epi, "groups": [shape_title(s) for s in shapes],
                               "series": [[n, [sig(v) for v in vals]] for n, _, vals, _ in series]})
    fig.suptitle(title, fontsize=9, x=0.01, ha="left")
    fig.tight_layout()
    save(fig, path, data)
    plt.close(fig)
    return True


def picture_decode(plt, path, title, parts):
    """% of the DRAM read rate per batch size m, auto and the vendor, one panel per weight matrix; a row per
    decode part (bf16, fp8 per scales' layout)."""
    panels = []
    for part, rows in parts:
        for n, k in OrderedDict(((r["n"], r["k"]), None) for r in rows):
            wr = [r for r in rows if (r["n"], r["k"]) == (n, k) and ok(r)]
            ms = sorted({r["m"] for r in wr})
            auto = {r["m"]: r for r in wr if is_auto(r)}
            if not auto:
                continue
            scales = f", {FP8_SCALINGS.get(part[2], part[2])}" if part[2] else ""
            panels.append({"title": f"W {n} x {k}, {part[1]}{scales}", "ms": ms, "row": part,
                           "vendor": "cuBLASLt" if part[1] == "fp8" else "cuBLAS",
                           # the vendor as timed beside auto, the pair auto's x compares
                           "vendor_pct": [auto[m]["pct_dram"] * auto[m]["real_time"] / auto[m]["baseline_real_time"]
                                          if m in auto and auto[m].get("pct_dram") and auto[m].get("baseline_real_time") else None
                                          for m in ms],
                           "auto_pct": [auto[m].get("pct_dram") if m in auto else None for m in ms],
                           "auto_x": [auto[m].get("speedup_vs_baseline") if m in auto else None for m in ms]})
    if not panels:
        return False
    rows_ = list(OrderedDict((p["row"], None) for p in panels))
    ncols = max(sum(1 for p in panels if p["row"] == r) for r in rows_)
    fig, axes = plt.subplots(len(rows_), ncols, figsize=(3.1 * ncols, 2.6 * len(rows_)), squeeze=False, sharey=True)
    for ax in axes.flat:
        ax.set_visible(False)
    for i, r in enumerate(rows_):
        for j, p in enumerate([p for p in panels if p["row"] == r]):
            ax = axes[i][j]
            ax.set_visible(True)
            grouped_bars(ax, [f"m = {m}" for m in p["ms"]],
                         [(p["vendor"], VENDOR, p["vendor_pct"], None),
                          ("auto (ours)", AUTO, p["auto_pct"], [None if x is None else f"{v:.0f}\n{x:.2f}x" for v, x in zip(p["auto_pct"], p["auto_x"])])],
                         "% of DRAM read rate" if j == 0 else "", "{:.0f}", fontsize=6, inside=(1,))
            ax.axhline(100, color=VENDOR, linewidth=1.1, zorder=3)
            ax.set_ylim(0, 125)
            ax.set_title(p["title"], loc="left")
            if j == 0:
                ax.legend(fontsize=6.5, frameon=False, loc="upper left", ncol=2)
    fig.suptitle(title + "\n100 % = the streaming read rate `rungs info` measures; the vendor as timed beside auto; "
                 "auto's bars: % and x the vendor",
                 fontsize=9, x=0.01, ha="left")
    fig.tight_layout()
    data = {"title": title, "panels": [{k: ([sig(x) for x in v] if isinstance(v, list) and k != "ms" else v)
                                        for k, v in p.items() if k != "row"} for p in panels]}
    save(fig, path, data)
    plt.close(fig)
    return True


def picture_gemv(plt, path, title, rows):
    grid = []
    for t in ("n", "t"):
        tr = [r for r in rows if r.get("trans") == t]
        shapes = sorted(OrderedDict((gemv_shape(r), None) for r in tr), key=lambda s: (s[0] * s[1], s[0]))
        lp = ladder_panels(tr, [(gemv_title(s), s) for s in shapes], gemv_shape, pct_title=True)
        if lp:
            grid.append((f"Trans::{t.upper()}", lp[0], lp[1]))
    if not grid:
        return False
    return hbar_grid(plt, path, title, grid, "x cuBLAS sgemv (its median time over the rung's)")


def reduce_title(c):
    n, d = c
    e = n.bit_length() - 1
    return f"{d}, n = 2^{e}" if n == 1 << e else f"{d}, n = {n}"


def picture_reduce(plt, path, title, rows):
    order = ["i32", "i64", "f32", "f64"]
    grid = []
    for n in sorted({r["n"] for r in rows}):
        nr = [r for r in rows if r["n"] == n]
        cases = sorted({(n, r["dtype"]) for r in nr}, key=lambda c: order.index(c[1]) if c[1] in order else 9)
        lp = ladder_panels(nr, [(reduce_title(c), c) for c in cases], lambda r: (r["n"], r["dtype"]), pct_title=True)
        if lp:
            grid.append(("", lp[0], lp[1]))
    if not grid:
        return False
    return hbar_grid(plt, path, title, grid, "x CUB DeviceReduce::Sum (its median time over the rung's)")


def picture_gemm_host(plt, path, title, rows):
    rows = [r for r in rows if r.get("status") == "ok" and r.get("flow_ms")]
    if not rows:
        return False
    shapes = [s for _, s in sorted(OrderedDict(((r["m"] * r["n"] * r["k"], r["shape"]), None) for r in rows))]
    mems = [m for m in ("pinned", "pageable") if any(r.get("memory") == m for r in rows)]
    by = {(r["shape"], r.get("memory")): r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 2.9))
    views = [("x the naive flow (its time over the flow's)", lambda r: r["naive_ms"] / r["flow_ms"]),
             ("the floor's time over the flow's (1 = at the floor)", lambda r: r["floor_ms"] / r["flow_ms"])]
    data = {"title": title, "shapes": shapes, "views": []}
    for ax, (label, f) in zip(axes, views):
        series = []
        for i, mem in enumerate(mems):
            vals = [f(by[(s, mem)]) if (s, mem) in by else None for s in shapes]
            series.append((mem, PALETTE[2 * i], vals, None))
            data["views"].append([label, mem, [sig(v) for v in vals]])
        grouped_bars(ax, shapes, series, "", "{:.2f}", fontsize=6.5)
        ax.axhline(1.0, color=VENDOR, linewidth=1.1, zorder=3)
        ax.set_title(label, loc="left")
        ax.set_ylim(0, max([1.0] + [v for _, _, vals, _ in series for v in vals if v]) * 1.2)
        if ax is axes[0]:
            ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    fig.suptitle(title + "\nfloor = max(bytes in / pinned H2D rate, bytes out / pinned D2H rate, the product alone)",
                 fontsize=9, x=0.01, ha="left")
    fig.tight_layout()
    save(fig, path, data)
    plt.close(fig)
    return True


def picture_dist(plt, path, title, runs_rows):
    """One dist operation: per GPU count (a row) and shape (a panel), each rung's x rung 1 (the collective, then
    the product); the dashed line is rung 1's time over the longer of the collective and the product alone,
    the most an overlap of rung 1's collective can give."""
    grid, notes = [], []
    for run, rows in runs_rows:
        rows = [r for r in rows if ok(r)]
        if not rows:
            continue
        op, world = rows[0]["op"], rows[0].get("world", 0)
        own = sorted({(r["rung"], r["variant"]) for r in rows if not is_auto(r) and r["rung"] != 1})
        labels = [f"{n} {v}" for n, v in own] + ["auto"]
        panels = []
        for shape in OrderedDict(((r["m"], r["n"], r["k"]), None) for r in rows):
            sr = [r for r in rows if (r["m"], r["n"], r["k"]) == shape]
            x = dist_x(sr)
            by = {(r["rung"], r["variant"]): r for r in sr if not is_auto(r)}
            auto = next((r for r in sr if is_auto(r)), None)
            base = next((r for r in sr if r["rung"] == 1 and not is_auto(r)), None)
            ceiling = None
            if base is not None and base.get("comm_ms") and base.get("gemm_ms"):
                ceiling = base["real_time"] / max(base["comm_ms"], base["gemm_ms"])
            vals = [x(by[k]) if k in by else None for k in own] + [None if auto is None else x(auto)]
            name = "x".join(map(str, shape))
            panels.append({"title": name, "values": vals, "auto": len(own) if auto is not None else None,
                           "auto_name": None if auto is None else resolved_name(sr, auto), "ceiling": ceiling})
            for (n, v), val in zip(own, vals):
                why = next((w for (o, prefix), w in FEWER_BYTES_BECAUSE.items() if o == op and v.startswith(prefix)), None)
                if why and ceiling and val and val > ceiling:
                    notes.append(f"{world} GPUs, {name}: {n} {v} at {val:.2f}x passes the dashed line ({ceiling:.2f}x): {why}")
        timing = "" if dist_timing(run) == "interleaved" else ", rungs timed in blocks"
        grid.append((f"{world} GPUs, commit {run.commit}{timing}", labels, panels))
    if not grid:
        return False
    sizes = "m_local x n_local x k" if runs_rows[0][1][0]["op"] == "allgather_gemm" else "m x n x k_local"
    return hbar_grid(plt, path, f"{title}; shapes {sizes} per rank",
                     grid, "x rung 1 (its median time over the rung's); dashed: rung 1 over max(comm, gemm)", notes)


def composite_machine(hsel):
    """The one-GPU machine whose headline commit covers the most parts (the newest run breaks ties)."""
    cands = [(len(chosen), max(run.key() for run, _ in chosen.values()), m) for m, (_, chosen, _) in hsel.items() if m[1] == 1 and chosen]
    return max(cands)[2] if cands else None


def picture_composite(plt, path, hsel):
    """Every ladder at its largest seed case, on one GPU at one commit: each rung's x the vendor."""
    machine = composite_machine(hsel)
    if machine is None:
        return False
    commit, chosen, _ = hsel[machine]
    device = next(iter(chosen.values()))[0].device
    panels = []

    def add(title, rows, case_of, pick):
        if not rows:
            return
        cases = sorted({case_of(r) for r in rows}, key=pick)
        c = cases[-1]
        lp = ladder_panels([r for r in rows if case_of(r) == c], [("", c)], case_of)
        if lp:
            panels.append((title.format(case=c, exp=(c[0].bit_length() - 1) if isinstance(c[0], int) else 0), lp[0], lp[1][0]))

    sq = lambda r: (r["m"], r["n"], r["k"])
    for part, name in ((("gemm",), "SGEMM fp32 {case[0]}^3, x cuBLAS"), (("gemm_tc", "bf16", None), "bf16 {case[0]}^3, x cuBLAS"),
                       (("gemm_tc", "tf32x3", None), "tf32x3 {case[0]}^3, x cuBLAS sgemm"),
                       (("gemm_tc", "fp8", "tensor"), "fp8 {case[0]}^3 per-tensor, x cuBLASLt")):
        rows = [r for r in chosen.get(part, (None, []))[1] if r["m"] == r["n"] == r["k"]]
        add(name, rows, sq, lambda c: c)
    add("gemv {case[0]} x {case[1]} {case[2]}, x cuBLAS", chosen.get(("gemv",), (None, []))[1], gemv_shape,
        lambda c: (c[0] * c[1], c[2] == "n", c[0]))
    add("reduce_sum {case[1]}, n = 2^{exp}, x CUB", chosen.get(("reduce",), (None, []))[1], lambda r: (r["n"], r["dtype"]),
        lambda c: (c[0], c[1] == "f32"))
    if not panels:
        return False
    ncols = 3 if len(panels) > 4 else min(2, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    rows_of_panels = [panels[i * ncols:(i + 1) * ncols] for i in range(nrows)]
    heights = [0.8 + 0.17 * max(len(p[1]) for p in rp) for rp in rows_of_panels]
    fig = plt.figure(figsize=(3.5 * ncols, sum(heights) + 0.6))
    gs = fig.add_gridspec(nrows, ncols, height_ratios=heights, hspace=0.5, wspace=0.75)
    data = {"machine": machine_label(machine), "commit": commit, "panels": []}
    for idx, (title, labels, p) in enumerate(panels):
        ax = fig.add_subplot(gs[idx // ncols, idx % ncols])
        xmax = max([1.0] + [v for v in p["values"] if v is not None]) * 1.2
        hbar_panel(ax, labels, dict(p, auto_name=None), xmax, max(len(q[1]) for q in rows_of_panels[idx // ncols]))
        ax.set_yticklabels([l if l != "auto" else f"auto ({p['auto_name']})" for l in labels], fontsize=6.5)
        ax.set_title(title, loc="left", fontsize=7.5)
        data["panels"].append({"title": title, "labels": labels, "values": [sig(v) for v in p["values"]], "auto_name": p["auto_name"]})
    fig.suptitle(f"The ladders on an {device} (commit {commit}): each rung's speed over the vendor's at the largest "
                 "seed case\n(the vendor's median time over the rung's; solid line: the vendor; orange: auto, the default)",
                 fontsize=9, x=0.01, ha="left")
    save(fig, path, data)
    plt.close(fig)
    return True


def pictures(selected, hsel, img_dir):
    """Every picture; returns the paths written or kept."""
    plt = plt_setup()
    os.makedirs(img_dir, exist_ok=True)
    written = []
    for slug, per in selected.items():
        def rows_runs(ladder):
            return ladder_runs(per, ladder)

        def name(ladder):
            commits = list(OrderedDict((run.commit, None) for run, _ in rows_runs(ladder)))
            device = rows_runs(ladder)[0][0].device
            return f"{device}, commit {', '.join(commits)}"

        jobs = [
            ("gemm", "gemm", lambda p, l: picture_gemm(plt, p, f"SGEMM ladder (fp32, CUDA cores) on {name(l)}", rows_of(per, l))),
            ("gemm_tc", "gemm_tc", lambda p, l: picture_gemm_tc(plt, p, f"Tensor-core ladder on {name(l)}", rows_of(per, l))),
            ("fp8", "gemm_tc", lambda p, l: picture_fp8(plt, p, f"fp8 gemm (e4m3, nt, bf16 C) against cuBLASLt on {name(l)}", rows_of(per, l))),
            ("epilogue", "gemm_epilogue", lambda p, l: picture_epilogue(plt, p, f"Fused epilogues against the unfused chain on {name(l)}", rows_of(per, l))),
            ("gemv", "gemv", lambda p, l: picture_gemv(plt, p, f"SGEMV ladder on {name(l)}", rows_of(per, l))),
            ("reduce", "reduce", lambda p, l: picture_reduce(plt, p, f"Reduction ladder on {name(l)}", rows_of(per, l))),
            ("gemm_host", "gemm_host", lambda p, l: picture_gemm_host(plt, p, f"gemm_host against the naive flow on {name(l)}", rows_of(per, l))),
        ]
        for stem, ladder, draw in jobs:
            if rows_runs(ladder):
                path = os.path.join(img_dir, f"{stem}-{slug}.svg")
                if draw(path, ladder):
                    written.append(path)
        decode_parts = [(p, per[p][1]) for p in sorted((p for p in per if p[0] in ("decode", "decode_fp8")), key=lambda p: (p[0], str(p[2])))]
        if decode_parts:
            commits = list(OrderedDict((per[p][0].commit, None) for p, _ in decode_parts))
            device = per[decode_parts[0][0]][0].device
            path = os.path.join(img_dir, f"decode-{slug}.svg")
            if picture_decode(plt, path, f"Decode shapes (nt, m = batch rows) on {device}, commit {', '.join(commits)}", decode_parts):
                written.append(path)
        for op in DIST_OPS:
            rr = rows_runs(op)
            if rr:
                path = os.path.join(img_dir, f"{op}-{slug}.svg")
                if picture_dist(plt, path, f"{op} over NCCL (bf16) on {rr[0][0].device}", rr):
                    written.append(path)
    path = os.path.join(img_dir, "ladders.svg")
    if picture_composite(plt, path, hsel):
        written.append(path)
    return written


# ---------------------------------------------------------------------------------------------
# Files


def python_block(py_runs):
    """The Python layer's cost: per GPU, the newest bench_python.py run (its meta's date)."""
    parts = []
    for data in newest_python(py_runs):
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


def example_block():
    """examples/gemm.cpp as a C++ code block (the README shows the real program)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "gemm.cpp")
    if not os.path.exists(path):
        return "(examples/gemm.cpp is missing)"
    with open(path) as f:
        return "```cpp\n" + f.read().rstrip("\n") + "\n```"


PAGE_LIMIT = 25 * 1024  # bytes: a generated page past this is split further (a doc over 25 KB is a diary)
GENERATED = "Generated by `scripts/report.py docs/runs/*.json`"
INTRO = [
    GENERATED + " from the JSON that `rungs bench` wrote (kept in",
    "docs/runs/); do not edit by hand: CI fails where a page, the README's headline or a picture no longer",
    "matches the runs (`scripts/report.py --check docs/runs/*.json`).",
]


def page_of(slug, ladder):
    """The generated page (relative to docs/) that holds one ladder's tables on one GPU: one page per GPU
    for its single-GPU ladders, one for the NCCL ladders of every GPU."""
    if ladder in DIST_OPS:
        return "bench/dist.md"
    return f"bench/{slug}-epilogue.md" if ladder == "gemm_epilogue" else f"bench/{slug}.md"


def ladder_link(slug, ladder, base=""):
    return f"[{ladder}]({base}{page_of(slug, ladder)}#{ladder}-{slug})"


def devices_of(per):
    return " / ".join(OrderedDict((run.device, None) for run, _ in per.values()))


def run_lines(slug, per, ladders, base=None):
    """One line per run behind the given ladders on one GPU: the ladders it gives (links into their pages
    when base is the path from the linking page to docs/), device, commit, date, command, and the machine."""
    runs = OrderedDict()
    for ladder in ladders:
        for run, _ in ladder_runs(per, ladder):
            runs.setdefault(run.path, (run, []))
            if ladder not in runs[run.path][1]:
                runs[run.path][1].append(ladder)
    out = []
    for run, lads in sorted(runs.values(), key=lambda rl: rl[0].key()):
        c = run.context
        extra = []
        if run.world > 1:
            extra.append(f"{run.world} GPUs")
        if c.get("sm_clock_mhz"):
            extra.append(f"{c.get('sms', '?')} SMs at up to {c['sm_clock_mhz']:.0f} MHz")
        if c.get("dram_read_gbs"):
            extra.append(f"DRAM read {c['dram_read_gbs']:.0f} GB/s measured")
        if c.get("cuda_driver"):
            extra.append(f"CUDA {c.get('cuda_runtime', '?')} (driver {c['cuda_driver']}), cuBLAS {c.get('cublas', '?')}")
        names = ", ".join(lads if base is None else [ladder_link(slug, l, base) for l in lads])
        out.append(f"- {names}: {run.header()}" + (f"; {'; '.join(extra)}" if extra else ""))
    return out


def ladder_sections(slug, per, ladders, images, level):
    """Each ladder's anchor, heading, pictures and tables on one GPU (pictures linked from docs/bench/)."""
    out = []
    device = next(iter(OrderedDict((run.device, None) for run, _ in per.values())))
    for ladder in ladders:
        out += ["", f'<a id="{ladder}-{slug}"></a>', "", f"{'#' * level} {LADDER_TITLES[ladder]}", ""]
        for stem in LADDER_PICTURES.get(ladder, []):
            img = f"img/{stem}-{slug}.svg"
            if img in images:
                out += [f"![{PICTURE_ALT[stem]} on the {device}](../{img})", ""]
        out.append(ladder_block(OrderedDict([(slug, per)]), ladder))
    return out


def newest_python(py_runs):
    """Per GPU (sorted), the newest bench_python.py run (its meta's date)."""
    newest = OrderedDict()
    for path, data in sorted(py_runs, key=lambda pd: (pd[1]["meta"].get("date", ""), pd[0])):
        newest[gpu_slug(data["meta"].get("device", "?"))] = data
    return [newest[k] for k in sorted(newest)]


def bench_pages(selected, hsel, images, py_runs=()):
    """{path under docs/: text}: BENCHMARKS.md (the index: method, headline, every run's provenance, links)
    and the pages under docs/bench/ that hold the tables and pictures: one per GPU (its single-GPU ladders),
    dist.md (the NCCL ladders of every GPU), python.md (bench_python.py's runs)."""
    single = [l for l in LADDER_TITLES if l not in DIST_OPS]
    back = "The index, the method and the headline: [BENCHMARKS.md](../BENCHMARKS.md)."
    written = OrderedDict()
    index = [
        "# Benchmarks",
        "",
        *INTRO[:-1],
        INTRO[-1] + " To publish a run, put its JSON in",
        "docs/runs/ and run the script: per GPU, each part of the seed workloads comes from the newest run that",
        "measured it, and the headline takes one commit per machine (its newest).",
        "",
        "Method (`rungs bench --help`): CUDA events, warm-up, the median of at least 20 repetitions, the L2 flushed",
        "before each timed launch, the vendor baseline interleaved with each rung in the same run; x = the",
        "baseline's median over the rung's (higher is faster). gemm_host is timed on the host clock; the NCCL",
        "ladders take the slowest rank's time.",
        "",
        "The tables and pictures, one page each:",
        "",
    ]
    for slug, per in selected.items():
        lads = [l for l in single if ladder_runs(per, l)]
        if lads:
            index.append(f"- [{devices_of(per)}](bench/{slug}.md): " + ", ".join(ladder_link(slug, l, "") for l in lads))
    dist = [(slug, per, [l for l in DIST_OPS if ladder_runs(per, l)]) for slug, per in selected.items()]
    dist = [d for d in dist if d[2]]
    if dist:
        index.append("- [The NCCL ladders, tensor-parallel gemm on 2+ GPUs](bench/dist.md): "
                     + "; ".join(f"{slug.upper()} " + ", ".join(ladder_link(slug, l, "") for l in lads) for slug, per, lads in dist))
    if py_runs:
        index.append("- [Python: the cost of a call from PyTorch](bench/python.md)")
    index += ["", "## Headline", "", headline(hsel)]
    if "img/ladders.svg" in images:
        index += ["", "![Every ladder at its largest seed case](img/ladders.svg)"]
    for slug, per in selected.items():
        index += ["", f"## {devices_of(per)}", "", *run_lines(slug, per, LADDER_TITLES, base="")]
    if py_runs:
        index += ["", "## Python", ""]
        for data in newest_python(py_runs):
            m = data["meta"]
            index.append(f"- [python](bench/python.md): {m.get('device', '?')}, commit {short_commit(m.get('commit', '?'))}, "
                         f"{m.get('date', '?')}, `python scripts/bench_python.py`")
    written["BENCHMARKS.md"] = "\n".join(index) + "\n"
    for slug, per in selected.items():
        pages_lads = OrderedDict()  # page -> its ladders (each GPU's page; its epilogue tables apart)
        for l in single:
            if ladder_runs(per, l):
                pages_lads.setdefault(page_of(slug, l), []).append(l)
        for page, lads in pages_lads.items():
            what = " (gemm with an epilogue)" if lads == ["gemm_epilogue"] else ""
            out = [f"# Benchmarks: {devices_of(per)}{what}", "", *INTRO, back, "", *run_lines(slug, per, lads)]
            out += ladder_sections(slug, per, lads, images, 2)
            written[page] = "\n".join(out) + "\n"
    if dist:
        out = ["# Benchmarks: the NCCL ladders", "", *INTRO, back, "",
               "allgather_gemm and gemm_reducescatter ([dist.md](../dist.md)): tensor-parallel gemm over NCCL on 2+ GPUs",
               "of one host; each time is the slowest rank's."]
        for slug, per, lads in dist:
            out += ["", f"## {devices_of(per)}", "", *run_lines(slug, per, lads)]
            out += ladder_sections(slug, per, lads, images, 3)
        written["bench/dist.md"] = "\n".join(out) + "\n"
    if py_runs:
        out = ["# Benchmarks: Python, the cost of a call from PyTorch", "", *INTRO, back, "",
               "`scripts/bench_python.py` (`scripts/gpu.sh python` runs it): host time per call, each call timed on",
               "its own with `time.perf_counter_ns`, the stream synchronized (untimed) every 100 calls; device",
               "times from CUDA events, rungs.gemm and the raw extension call interleaved. The raw call is",
               "`rungs._rungs.gemm` on the tensors' pointers with the result allocated beforehand (the C++ call",
               "with nothing of the Python layer); the rows below it split a call into its pieces.", "",
               python_block(py_runs)]
        written["bench/python.md"] = "\n".join(out) + "\n"
    return written


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


def pages(root):
    """README.md and docs/*.md: the pages that may hold generated blocks."""
    docs = os.path.join(root, "docs")
    found = [os.path.join(root, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md") and f != "BENCHMARKS.md")
    return [p for p in found if os.path.exists(p)]


def generated_svgs(img_dir):
    """The SVGs under img_dir that this script drew (they carry its data comment)."""
    if not os.path.isdir(img_dir):
        return []
    out = []
    for f in sorted(os.listdir(img_dir)):
        p = os.path.join(img_dir, f)
        if f.endswith(".svg"):
            with open(p) as fh:
                if svg_data(fh.read()) is not None:
                    out.append(p)
    return out


def generated_pages(root):
    """docs/BENCHMARKS.md and the pages under docs/bench/ that this script wrote (they say so), relative to root."""
    out = ["docs/BENCHMARKS.md"] if os.path.exists(os.path.join(root, "docs", "BENCHMARKS.md")) else []
    bench = os.path.join(root, "docs", "bench")
    for f in sorted(os.listdir(bench)) if os.path.isdir(bench) else []:
        if f.endswith(".md"):
            with open(os.path.join(bench, f)) as fh:
                if GENERATED in fh.read():
                    out.append(f"docs/bench/{f}")
    return out


def generate(bench_runs, py_runs, root, images=True):
    """Write BENCHMARKS.md, the pages under docs/bench/, the pictures and the blocks under root; returns
    (changed files, pictures)."""
    selected = select(bench_runs)
    hsel = headline_select(bench_runs)
    if not selected:
        raise SystemExit("report.py: no benchmark rows in the input")
    docs = os.path.join(root, "docs")
    img_dir = os.path.join(docs, "img")
    pics = set()
    if images:
        drawn = pictures(selected, hsel, img_dir)
        for stale in sorted(set(generated_svgs(img_dir)) - set(drawn)):
            os.remove(stale)  # a picture this script drew once and the runs no longer give
        pics = {os.path.relpath(p, docs).replace(os.sep, "/") for p in drawn}
    blocks = {"headline": headline(hsel), "python": python_block(py_runs), "example_gemm": example_block()}
    for ladder in BLOCKS:
        blocks[ladder] = ladder_block(selected, ladder)
    changed = []
    written = bench_pages(selected, hsel, pics, py_runs)
    for stale in sorted(set(generated_pages(root)) - {"docs/" + rel for rel in written}):
        os.remove(os.path.join(root, stale))  # a page this script wrote once and the runs no longer give
        changed.append(stale)
    for rel, text in written.items():
        path = os.path.join(docs, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if write_if_changed(path, text):
            changed.append("docs/" + rel)
    for path in pages(root):
        with open(path) as f:
            text = f.read()
        if write_if_changed(path, fill_blocks(text, blocks)):
            changed.append(os.path.relpath(path, root))
    return changed, pics


def check(bench_runs, py_runs, root):
    """Regenerate into a temporary copy of root's pages and pictures; list what differs from root."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs", "img"))
        os.makedirs(os.path.join(tmp, "docs", "bench"))
        committed_pages = generated_pages(root)
        for rel in [os.path.relpath(p, root) for p in pages(root)] + committed_pages:
            shutil.copyfile(os.path.join(root, rel), os.path.join(tmp, rel))
        img = os.path.join(root, "docs", "img")
        committed = {os.path.basename(p): p for p in generated_svgs(img)}
        for p in committed.values():
            shutil.copyfile(p, os.path.join(tmp, "docs", "img", os.path.basename(p)))
        generate(bench_runs, py_runs, tmp)
        import difflib

        fresh_pages = generated_pages(tmp)
        for rel in fresh_pages:
            size = os.path.getsize(os.path.join(tmp, rel))
            if size >= PAGE_LIMIT:
                problems.append(f"{rel} would be {size} bytes, over {PAGE_LIMIT // 1024} KB: split it (page_of in scripts/report.py)")
        for rel in [os.path.relpath(p, root) for p in pages(root)] + sorted(set(committed_pages) | set(fresh_pages)):
            new_path = os.path.join(tmp, rel)
            old_path = os.path.join(root, rel)
            if not os.path.exists(new_path):
                problems.append(f"{rel} is not generated from the runs (remove it)")
                continue
            new = open(new_path).read()
            old = open(old_path).read() if os.path.exists(old_path) else ""
            if new != old:
                diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"committed {rel}", f"from the runs {rel}", n=0, lineterm=""))
                problems.append(f"{rel} differs from what the runs give:\n" + "\n".join(diff[:24]) + ("\n..." if len(diff) > 24 else ""))
        fresh = {os.path.basename(p): p for p in generated_svgs(os.path.join(tmp, "docs", "img"))}
        for name in sorted(set(fresh) | set(committed) | {f for f in os.listdir(img) if f.endswith(".svg")} if os.path.isdir(img) else set(fresh)):
            old_path = os.path.join(img, name)
            if name not in fresh:
                problems.append(f"docs/img/{name} is not drawn from the runs (remove it)")
            elif not os.path.exists(old_path):
                problems.append(f"docs/img/{name} is missing")
            else:
                with open(old_path) as f:
                    old = svg_data(f.read())
                with open(fresh[name]) as f:
                    new = svg_data(f.read())
                if old != new:
                    problems.append(f"docs/img/{name} draws other data than the runs give")
    return problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="JSON files written by rungs bench --format json (or bench_python.py)")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), help="the repository (default: this script's)")
    ap.add_argument("--no-images", action="store_true", help="tables only (no matplotlib needed)")
    ap.add_argument("--newest-commit", action="store_true", help="read only the runs at each machine's newest commit")
    ap.add_argument("--redraw", action="store_true", help="rewrite every picture (after a change to how they are drawn)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 where the committed files differ from what the runs give")
    args = ap.parse_args(argv)
    global REDRAW
    REDRAW = args.redraw and not args.check
    bench_runs, py_runs = load_runs(args.runs)
    if args.newest_commit:
        bench_runs = newest_commit_only(bench_runs)
    root = os.path.abspath(args.root)
    if args.check:
        problems = check(bench_runs, py_runs, root)
        for p in problems:
            print(f"report.py --check: {p}")
        if problems:
            runs_dir = os.path.join(root, "docs", "runs")
            named = ("docs/runs/*.json" if all(os.path.dirname(os.path.abspath(p)) == runs_dir for p in args.runs)
                     else " ".join(args.runs))
            flags = " --newest-commit" if args.newest_commit else ""
            print(f"report.py --check: the docs do not match the runs: run scripts/report.py{flags} {named} and commit the result")
            return 1
        print(f"report.py --check: README.md, docs/BENCHMARKS.md, docs/bench/, the generated blocks and the pictures match the {len(bench_runs) + len(py_runs)} run(s)")
        return 0
    changed, pics = generate(bench_runs, py_runs, root, images=not args.no_images)
    print(f"report.py: {len(pics)} picture(s) under docs/img; text changed: {', '.join(changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
