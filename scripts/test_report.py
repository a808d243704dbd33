#!/usr/bin/env python3
"""Checks scripts/report.py on the committed sample runs (tests/data/bench_sample.json, the main job's
rows at the smallest seed sizes, and bench_host_sample.json, from an NVIDIA H100): the tables parse,
every generated block is filled, the pictures are SVG, the newest run of a GPU wins, and a second run
on the same JSON gives the same bytes; and on synthetic rows of the gemm decode workload (made up
here, not measurements), its table. Run by ctest (exit 77 = skipped: matplotlib is not installed).
"""
import copy
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(REPO, "tests", "data")
SAMPLES = [os.path.join(DATA, "bench_sample.json"), os.path.join(DATA, "bench_host_sample.json")]
BLOCKS = ["headline", "gemm", "gemm_tc", "decode", "decode_fp8", "gemv", "reduce", "gemm_host", "allgather_gemm",
          "gemm_reducescatter"]
NO_SAMPLE_ROWS = {"decode", "decode_fp8", "allgather_gemm", "gemm_reducescatter"}  # no rows in the committed samples
DECODE_WEIGHTS = [(7168, 8192), (28672, 8192), (8192, 28672)]
DECODE_FP8_WEIGHTS = [(7168, 8192), (28672, 8192)]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def make_root(tmp):
    """A copy of the repository's README.md and docs/*.md (their report blocks emptied), and a page that
    holds every block, so each block is generated and checked."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "docs"))
    empty = re.compile(r"(<!-- report:([a-z0-9_]+) -->\n).*?(<!-- /report:\2 -->)", re.S)
    for src, dst in [(os.path.join(REPO, "README.md"), "README.md")] + [
        (os.path.join(REPO, "docs", f), os.path.join("docs", f))
        for f in sorted(os.listdir(os.path.join(REPO, "docs")))
        if f.endswith(".md") and f != "BENCHMARKS.md"
    ]:
        with open(src) as f:
            text = empty.sub(lambda m: m.group(1) + m.group(3), f.read())
        with open(os.path.join(root, dst), "w") as f:
            f.write(text)
    with open(os.path.join(root, "docs", "all_blocks.md"), "w") as f:
        f.write("".join(f"## {b}\n<!-- report:{b} -->\n<!-- /report:{b} -->\n" for b in BLOCKS))
    return root


def run_report(root, inputs):
    r = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), *inputs, "--root", root], capture_output=True, text=True)
    check(r.returncode == 0, f"report.py exit {r.returncode}: {r.stderr.strip()}")
    return r


def tables_parse(text, where):
    """Every markdown table: a header, a --- row with as many cells, and body rows with as many cells."""
    lines = text.split("\n")
    i, n = 0, 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(---\|)+", lines[i + 1]):
            cells = lines[i].count("|") - 1
            check(lines[i + 1].count("|") - 1 == cells, f"{where}: the separator of table at line {i + 1}")
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                check(lines[j].count("|") - 1 == cells, f"{where}: line {j + 1} has {lines[j].count('|') - 1} cells, not {cells}")
                j += 1
            check(j > i + 2, f"{where}: table at line {i + 1} has no rows")
            n += 1
            i = j
        else:
            i += 1
    return n


def decode_run(sample_context, fp8=False):
    """A run of the decode workload only, with made-up times (a fixed rate per rung): cublas the baseline,
    decode_rows and wgmma_balanced, auto, and one SKIP row. fp8: the fp8 decode workload's rows instead
    (e4m3, outer scales, the two weights it has)."""
    ctx = copy.deepcopy(sample_context)
    ctx["git_commit"] = "dec0de1"
    dram = ctx["dram_read_gbs"]
    rows = []
    extra = {"dtype": "fp8", "workload": "decode_fp8", "scaling": "outer"} if fp8 else {}
    for n, k in DECODE_FP8_WEIGHTS if fp8 else DECODE_WEIGHTS:
        for m in (1, 16, 64, 128):
            nbytes = 2.0 * (m * k + k * n + m * n)
            base_ms = nbytes / 2.6e12 * 1e3
            for rung, variant, rate in ((11, "cublas", 2.6e12), (23, "wgmma_balanced", 1.4e12), (24, "decode_rows", 2.9e12), (-1, "auto=decode_rows", 2.9e12)):
                ms = nbytes / rate * 1e3
                rows.append({
                    "name": f"gemm/{variant}/{m}x{n}x{k}/nt/bf16", "op": "gemm", "rung": rung, "variant": variant,
                    "m": m, "n": n, "k": k, "trans": "nt", "dtype": "bf16", "alpha": 1, "beta": 0,
                    "baseline_rung": variant == "cublas", "workload": "decode", "repetitions": 20, "real_time": ms,
                    "time_unit": "ms", "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12, "pct_peak": 1.0,
                    "bytes": nbytes, "bytes_per_second": rate, "pct_dram": 100.0 * rate / 1e9 / dram,
                    "arithmetic_intensity": 2.0 * m * n * k / nbytes, "ridge_point": 357.0, "memory_bound": True,
                    "baseline": "cublas", "baseline_real_time": base_ms, "speedup_vs_baseline": base_ms / ms,
                    "pass": True, "status": "ok", **extra})
            rows.append({
                "name": f"gemm/wgmma_streamk/{m}x{n}x{k}/nt/bf16", "op": "gemm", "rung": 19, "variant": "wgmma_streamk",
                "m": m, "n": n, "k": k, "trans": "nt", "dtype": "bf16", "baseline_rung": False, "workload": "decode",
                "pass": False, "status": "skip", "reason": "made-up reason for the test", **extra})
    return {"context": ctx, "benchmarks": rows}


def dist_run(sample_context, world=2):
    """`rungs bench allgather_gemm|gemm_reducescatter --format json` rows with made-up times: rungs 1 and 2,
    auto (on rung 2), and rung 5 with an error row."""
    ctx = copy.deepcopy(sample_context)
    ctx["git_commit"] = "d15d15d"
    ctx["command_line"] = f"rungs bench gemm_reducescatter --world {world} --format json --output dist.json"
    rows = []
    for op, (m, n, k) in (("allgather_gemm", (8192, 4096, 8192)), ("gemm_reducescatter", (16384, 8192, 4096))):
        for variant, rung, ms in (("nccl_then_gemm", 1, 2.0), ("chunked_overlap", 2, 1.6), ("auto", 2, 1.6)):
            rows.append({"op": op, "variant": variant, "rung": rung, "world": world, "dtype": "bf16", "m": m, "n": n, "k": k,
                         "status": "ok", "real_time": ms, "time_unit": "ms", "tflops_per_gpu": 500.0,
                         "comm_ms": 0.5, "gemm_ms": 1.25, "overlap_eff": 1.25 / ms})
    rows.append({"op": "gemm_reducescatter", "variant": "narrow_partials", "rung": 5, "world": world, "dtype": "bf16",
                 "m": 16384, "n": 8192, "k": 4096, "status": "error", "reason": "made-up reason for the test"})
    return {"context": ctx, "benchmarks": rows}


def snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skipped: matplotlib is not installed (pip install matplotlib)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(tmp)
        run_report(root, SAMPLES)
        bench = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check(tables_parse(bench, "BENCHMARKS.md") >= 6, "BENCHMARKS.md holds the headline and every ladder's table")
        check("NVIDIA H100 80GB HBM3" in bench and "commit fd866b0" in bench, "BENCHMARKS.md names the device and the commit")
        check("`rungs bench --format json --output bench.json`" in bench, "BENCHMARKS.md names the command")
        for b in ["gemm", "gemm_tc", "gemv", "reduce", "gemm_host"]:
            check(os.path.exists(os.path.join(root, "docs", "img", f"{b}-h100.svg")), f"picture {b}-h100.svg")
        for f in sorted(os.listdir(os.path.join(root, "docs", "img"))):
            try:
                tree = ET.parse(os.path.join(root, "docs", "img", f))
                check(tree.getroot().tag.endswith("svg"), f"{f} is an SVG")
                check(len(list(tree.iter())) > 50, f"{f} draws something")
            except ET.ParseError as e:
                check(False, f"{f} does not parse: {e}")
        all_blocks = open(os.path.join(root, "docs", "all_blocks.md")).read()
        for b in BLOCKS:
            m = re.search(rf"<!-- report:{b} -->\n(.*?)<!-- /report:{b} -->", all_blocks, re.S)
            check(m is not None and len(m.group(1).strip()) > 40, f"block {b} is filled")
            if m and b not in NO_SAMPLE_ROWS:
                check(tables_parse(m.group(1), f"block {b}") >= 1, f"block {b} holds a table")
        check("decode" not in bench, "no decode section without decode rows")
        # Every block the repository's own pages hold is filled too.
        for page in ["README.md"] + [os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md")]:
            text = open(os.path.join(root, page)).read()
            for m in re.finditer(r"<!-- report:([a-z0-9_]+) -->\n(.*?)<!-- /report:\1 -->", text, re.S):
                check(len(m.group(2).strip()) > 0, f"{page}: block {m.group(1)} is filled")
        # The same JSON gives the same files.
        first = snapshot(root)
        run_report(root, SAMPLES)
        second = snapshot(root)
        check(first == second, "a second run on the same JSON changes nothing: " + ", ".join(k for k in first if first.get(k) != second.get(k)))
        # The newest run per GPU and ladder wins; an older one is left out.
        with open(SAMPLES[0]) as f:
            old = json.load(f)
        older = copy.deepcopy(old)
        older["context"]["date"] = "2000-01-01T00:00:00+00:00"
        older["context"]["git_commit"] = "0ldc0de"
        p = os.path.join(tmp, "older.json")
        with open(p, "w") as f:
            json.dump(older, f)
        run_report(root, [p] + SAMPLES)
        bench2 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check("0ldc0de" not in bench2, "an older run of the same GPU is not reported")
        newer = copy.deepcopy(old)
        newer["context"]["date"] = "2999-01-01T00:00:00+00:00"
        newer["context"]["git_commit"] = "n3wc0de"
        with open(p, "w") as f:
            json.dump(newer, f)
        run_report(root, [p] + SAMPLES)
        bench3 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check("n3wc0de" in bench3, "a newer run of the same GPU replaces the older one")
        # A second GPU gets its own section and headline columns.
        other = copy.deepcopy(old)
        other["context"]["device"] = "NVIDIA H200"
        with open(p, "w") as f:
            json.dump(other, f)
        run_report(root, [p] + SAMPLES)
        bench4 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check("## NVIDIA H100 80GB HBM3" in bench4 and "H100 auto" in bench4 and "H200 auto" in bench4, "two GPUs side by side")
        check(bench4.index("## NVIDIA H100") < bench4.index("## NVIDIA H200"), "GPUs in a fixed order")
        # The decode workload: one table per weight matrix, rungs x m, each cell time, GB/s, % DRAM, x cuBLAS.
        with open(SAMPLES[0]) as f:
            sample_context = json.load(f)["context"]
        with open(p, "w") as f:
            json.dump(decode_run(sample_context), f)
        run_report(root, [p] + SAMPLES)
        bench5 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check("### gemm decode shapes (bf16, nt)" in bench5, "BENCHMARKS.md has the decode section")
        check(bench5.index("### gemm on tensor cores") < bench5.index("### gemm decode") < bench5.index("### gemv"), "decode after the tensor-core ladder")
        check("commit fd866b0" in bench5 and "commit dec0de1" in bench5, "the decode run beside the main job's run")
        tables_parse(bench5, "BENCHMARKS.md with decode rows")
        for n, k in DECODE_WEIGHTS:
            check(f"W {n} x {k} (bf16, nt):" in bench5, f"a decode table for W {n} x {k}")
        check("| rung | m = 1 | m = 16 | m = 64 | m = 128 |" in bench5, "decode tables: one column per m")
        dram = sample_context["dram_read_gbs"]
        m, n, k = 1, 7168, 8192
        us = 2.0 * (m * k + k * n + m * n) / 2.9e12 * 1e6
        cell = f"{us:.1f} us, 2900 GB/s, {100 * 2900 / dram:.0f}%, {2.9 / 2.6:.2f}x"
        check(f"| 24 decode_rows | {cell} |" in bench5, f"decode_rows at m = 1: {cell}")
        check(re.search(r"\| 11 cublas \| [0-9.]+ us, 2600 GB/s, [0-9]+% \|", bench5) is not None, "the baseline's cells carry no x")
        check("| auto (decode_rows) |" in bench5, "auto names the rung it chose")
        check("19 wgmma_streamk: skip, made-up reason for the test" in bench5, "SKIP rows are noted")
        check(f"{dram:.0f} GB/s a streaming read reaches" in bench5, "the % of DRAM denominator is named")
        all_blocks = open(os.path.join(root, "docs", "all_blocks.md")).read()
        mb = re.search(r"<!-- report:decode -->\n(.*?)<!-- /report:decode -->", all_blocks, re.S)
        check(mb is not None and tables_parse(mb.group(1), "block decode") == 3, "block decode holds three tables")
        gemm_tc = re.search(r"<!-- report:gemm_tc -->\n(.*?)<!-- /report:gemm_tc -->", all_blocks, re.S)
        check(gemm_tc is not None and "decode_rows" not in gemm_tc.group(1), "decode rows stay out of the tensor-core tables")
        # The fp8 decode workload: its own section and block, one table per weight, the scales named.
        fp8_json = os.path.join(tmp, "decode_fp8.json")
        with open(fp8_json, "w") as f:
            json.dump(decode_run(sample_context, fp8=True), f)
        run_report(root, [p, fp8_json] + SAMPLES)
        bench6 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        title = "### gemm decode shapes (fp8 e4m3 -> bf16, nt)"
        check(title in bench6 and bench6.index("### gemm decode shapes (bf16") < bench6.index(title) < bench6.index("### gemv"),
              "the fp8 decode section after the bf16 one")
        tables_parse(bench6, "BENCHMARKS.md with fp8 decode rows")
        for n, k in DECODE_FP8_WEIGHTS:
            check(f"W {n} x {k} (fp8, nt, per-row / per-column scales):" in bench6, f"an fp8 decode table for W {n} x {k}")
        check("(A + W + C bytes + the scales) / median" in bench6, "the fp8 decode note counts the scales")
        all6 = open(os.path.join(root, "docs", "all_blocks.md")).read()
        m8 = re.search(r"<!-- report:decode_fp8 -->\n(.*?)<!-- /report:decode_fp8 -->", all6, re.S)
        check(m8 is not None and tables_parse(m8.group(1), "block decode_fp8") == 2, "block decode_fp8 holds two tables")
        mb6 = re.search(r"<!-- report:decode -->\n(.*?)<!-- /report:decode -->", all6, re.S)
        check(mb6 is not None and "fp8" not in mb6.group(1), "fp8 decode rows stay out of the bf16 decode block")
        tc6 = re.search(r"<!-- report:gemm_tc -->\n(.*?)<!-- /report:gemm_tc -->", all6, re.S)
        check(tc6 is not None and "decode_rows" not in tc6.group(1), "fp8 decode rows stay out of the tensor-core tables")
        # dist rows (made-up numbers): one table per operation, auto naming its rung, x rung 1.
        check("### allgather_gemm" not in bench5, "no dist section without dist rows")
        dist_json = os.path.join(tmp, "dist.json")
        with open(dist_json, "w") as f:
            json.dump(dist_run(sample_context), f)
        run_report(root, SAMPLES + [dist_json])
        with open(os.path.join(root, "docs", "BENCHMARKS.md")) as f:
            bench_d = f.read()
        check("### allgather_gemm: tensor-parallel gemm over NCCL" in bench_d and
              "### gemm_reducescatter: tensor-parallel gemm over NCCL" in bench_d, "BENCHMARKS.md has the dist sections")
        tables_parse(bench_d, "BENCHMARKS.md with dist rows")
        check("allgather_gemm on 2 GPUs (m_local x n_local x k per rank's call):" in bench_d, "an allgather_gemm table")
        check("| 2 chunked_overlap | 16384x8192x4096 | 1.600 | 500 | 1.25x | 0.500 | 1.250 | 1.28 |" in bench_d,
              "a dist row: time, TFLOP/s, x rung 1, comm, gemm, time / max")
        check("| auto (chunked_overlap) |" in bench_d, "dist auto names the rung it ran")
        check("| 5 narrow_partials | 16384x8192x4096 | error |" in bench_d, "a dist error row")
        # A run on 4 GPUs beside the one on 2: both tables, each under its own run's command.
        dist4_json = os.path.join(tmp, "dist4.json")
        with open(dist4_json, "w") as f:
            json.dump(dist_run(sample_context, world=4), f)
        run_report(root, SAMPLES + [dist_json, dist4_json])
        with open(os.path.join(root, "docs", "BENCHMARKS.md")) as f:
            bench_d4 = f.read()
        tables_parse(bench_d4, "BENCHMARKS.md with dist rows on 2 and 4 GPUs")
        check("allgather_gemm on 2 GPUs (" in bench_d4 and "allgather_gemm on 4 GPUs (" in bench_d4,
              "a dist table per world size")
        check("`rungs bench gemm_reducescatter --world 4 --format json --output dist.json`" in bench_d4 and
              "`rungs bench gemm_reducescatter --world 2 --format json --output dist.json`" in bench_d4,
              "each world's table under its run's command")
        # A picture per dist operation: per rung, max(comm, gemm) / time for each world and shape.
        for op in ("allgather_gemm", "gemm_reducescatter"):
            svg = os.path.join(root, "docs", "img", f"{op}-h100.svg")
            check(os.path.exists(svg), f"picture {op}-h100.svg")
            if os.path.exists(svg):
                text = open(svg).read()
                check("2 GPUs, " in text and "4 GPUs, " in text and "(auto: rung 2)" in text,
                      f"{op}-h100.svg has a series per world, naming auto's rung")
                check("2 chunked_overlap" in text and "commit d15d15d" in text, f"{op}-h100.svg names the rungs and the commit")
            check(f"img/{op}-h100.svg" in bench_d4, f"BENCHMARKS.md shows {op}-h100.svg")
        # fp8 rows in the main job (made-up numbers): a table per scales' layout in the tensor-core
        # block, and per-tensor headline rows; none of them without fp8 rows.
        check("gemm fp8" not in bench5 and "fp8 (e4m3" not in bench5, "no fp8 table or headline without fp8 rows")
        with open(SAMPLES[0]) as f:
            with_f8 = json.load(f)
        for s3 in (2048, 4096):
            for variant, rung, x in (("cublas", 11, 1.0), ("wgmma_fp8", 28, 1.05), ("auto=cublas", -1, 1.0)):
                for scaling in ("tensor", "block128"):
                    ms = 2.0 * s3 ** 3 / (1.2e15 * x) * 1e3
                    with_f8["benchmarks"].append({
                        "name": f"gemm/{variant}/{s3}x{s3}x{s3}/nt/fp8", "op": "gemm", "rung": rung, "variant": variant,
                        "m": s3, "n": s3, "k": s3, "trans": "nt", "dtype": "fp8", "scaling": scaling, "alpha": 1, "beta": 0,
                        "baseline_rung": variant == "cublas", "repetitions": 20, "real_time": ms, "time_unit": "ms",
                        "tflops": 2.0 * s3 ** 3 / (ms * 1e-3) / 1e12, "pct_peak": 60.0, "baseline": "cublas",
                        "baseline_real_time": ms * x, "speedup_vs_baseline": x, "error_normwise": 1.0e-4,
                        "pass": True, "status": "ok"})
        with open(p, "w") as f:
            json.dump(with_f8, f)
        run_report(root, [p] + SAMPLES[1:])
        bench_f8 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        tables_parse(bench_f8, "BENCHMARKS.md with fp8 rows")
        check("fp8 (e4m3 x e4m3 -> bf16, nt, per-tensor scales; x = over cuBLASLt):" in bench_f8, "an fp8 per-tensor table")
        check("fp8 (e4m3 x e4m3 -> bf16, nt, 128-block scales; x = over cuBLASLt):" in bench_f8, "an fp8 block128 table")
        check("| gemm fp8 4096^3 nt, per-tensor | cuBLASLt | 1.00x (cublas) | 1.05x (wgmma_fp8) |" in bench_f8,
              "fp8 headline rows: auto and the best own rung")
        check("bf16:" in bench_f8, "the bf16 table stays beside the fp8 ones")
        # scripts/bench_python.py's JSON: a Python section in BENCHMARKS.md and the python block, the
        # newest run per GPU (made-up numbers for the test).
        check("## Python" not in bench5, "no Python section without a bench_python.py run")

        def py_run(commit, date, us):
            return {"meta": {"device": "NVIDIA H100 80GB HBM3", "commit": commit, "date": date, "rungs": "0.1.0",
                             "torch": "2.11.0", "calls": 10000, "reps": 50},
                    "rows": [{"what": "host time per call, 64^3 float32: rungs.gemm", "us": us},
                             {"what": "rungs.gemm / raw, 4096^3", "ratio": 1.0012}]}
        py_old, py_new = os.path.join(tmp, "py-old.json"), os.path.join(tmp, "py-new.json")
        with open(py_old, "w") as f:
            json.dump(py_run("0ldpy00", "2000-01-01", 99.5), f)
        with open(py_new, "w") as f:
            json.dump(py_run("py0c0de", "2026-11-27", 12.34), f)
        run_report(root, [py_old, py_new] + SAMPLES)
        bench6 = open(os.path.join(root, "docs", "BENCHMARKS.md")).read()
        check("## Python: the cost of a call from PyTorch" in bench6, "BENCHMARKS.md has the Python section")
        check("| host time per call, 64^3 float32: rungs.gemm | 12.34 us |" in bench6, "the Python run's rows")
        check("| rungs.gemm / raw, 4096^3 | 1.0012 |" in bench6, "ratios as ratios")
        check("py0c0de" in bench6 and "0ldpy00" not in bench6, "the newest Python run per GPU, with its commit")
        if os.path.exists(os.path.join(root, "docs", "python.md")):
            pm = re.search(r"<!-- report:python -->\n(.*?)<!-- /report:python -->",
                           open(os.path.join(root, "docs", "python.md")).read(), re.S)
            check(pm is not None and "12.34 us" in pm.group(1), "docs/python.md's python block holds the run")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("report.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
