#!/usr/bin/env python3
"""Checks scripts/report.py. On the committed sample runs (tests/data/bench_sample.json, the main job's rows
at the smallest seed sizes, and bench_host_sample.json, from an NVIDIA H100) and on synthetic rows made up
here (not measurements): the tables parse, every generated block is filled, every picture is an SVG that
carries the data it draws, BENCHMARKS.md is an index whose links (and the pages' links) reach a page and an
anchor, each GPU's tables sit on its page and the NCCL ladders and Python on theirs, the newest run of a part
wins, the headline holds one commit per machine and names a faster rung only beyond the run's noise,
decode, fp8 and the NCCL ladders get headline rows, epilogue runs get their own page and do not move the
headline's commit, and a second run on the same JSON gives the same bytes;
--check passes on a tree it generated and fails where a page, a block or a picture's data differs, or a
page is missing or left over. Last, on the repository itself: the committed README.md, docs/BENCHMARKS.md,
docs/bench/, generated blocks and pictures match docs/runs/, every generated page is under 25 KB, and every
link into or out of them reaches its page and anchor. Run by ctest (exit 77 = skipped: matplotlib is not
installed).
"""
import copy
import glob
import json
import os
import re
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

sys.path.insert(0, HERE)
import report  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def make_root(tmp, name="root"):
    """A copy of the repository's README.md and docs/*.md (their report blocks emptied), and a page that
    holds every block, so each block is generated and checked."""
    root = os.path.join(tmp, name)
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


def run_report(root, inputs, *flags, expect=0):
    r = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), *inputs, "--root", root, *flags],
                       capture_output=True, text=True)
    check(r.returncode == expect, f"report.py {' '.join(flags)} exit {r.returncode} (expected {expect}): {r.stdout.strip()} {r.stderr.strip()}")
    return r


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()


def bench_page(root, name):
    """docs/bench/NAME.md ("" if the report wrote none)."""
    path = os.path.join(root, "docs", "bench", name + ".md")
    return read(root, os.path.relpath(path, root)) if os.path.exists(path) else ""


def report_text(root):
    """Everything the report wrote: docs/BENCHMARKS.md and the pages under docs/bench/."""
    bench = os.path.join(root, "docs", "bench")
    names = sorted(f for f in os.listdir(bench) if f.endswith(".md")) if os.path.isdir(bench) else []
    return "\n".join([read(root, "docs/BENCHMARKS.md")] + [read(root, os.path.join("docs", "bench", f)) for f in names])


def anchors(text):
    """The anchors a markdown page has: explicit <a id>s and its headings (lowercased, punctuation but '-'
    and '_' dropped, spaces to '-'), outside code blocks."""
    out = set(re.findall(r'<a id="([^"]+)"', text))
    for h in re.findall(r"^#{1,6} (.*)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M):
        out.add(re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-"))
    return out


def check_links(root, rel, only=None):
    """Every relative markdown link of page rel reaches an existing file and, for a .md, its anchor. only:
    check just the links whose target path passes it. Returns how many links were checked."""
    n = 0
    for m in re.finditer(r"\]\(([^)\s]+)\)", read(root, rel)):
        link = m.group(1)
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
        if only is not None and not only(target.replace(os.sep, "/")):
            continue
        n += 1
        if not os.path.exists(os.path.join(root, target)):
            check(False, f"{rel}: link {link}: no file {target}")
        elif anchor and target.endswith(".md"):
            check(anchor in anchors(read(root, target)), f"{rel}: link {link}: {target} has no anchor {anchor}")
    return n


def check_report_links(root):
    """The links of BENCHMARKS.md and the generated pages; returns how many."""
    bench = os.path.join(root, "docs", "bench")
    rels = ["docs/BENCHMARKS.md"] + [f"docs/bench/{f}" for f in sorted(os.listdir(bench)) if f.endswith(".md")]
    return sum(check_links(root, rel) for rel in rels)


def block(text, name):
    m = re.search(rf"<!-- report:{name} -->\n(.*?)<!-- /report:{name} -->", text, re.S)
    return None if m is None else m.group(1)


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


def headline_row(text, title):
    """The cells of the headline row that starts with title (None if there is none)."""
    m = re.search(r"^\| " + re.escape(title) + r" \|(.*)\|$", text, re.M)
    return None if m is None else [c.strip() for c in m.group(1).split("|")]


def write_json(tmp, name, data):
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        json.dump(data, f)
    return p


def load(p):
    with open(p) as f:
        return json.load(f)


def gemm_row(variant, rung, s, dtype, ms, base_ms, scaling=None, trans="nn", **extra):
    """A made-up gemm row at s^3: the rung's median ms, the baseline's median beside it base_ms."""
    row = {"name": f"gemm/{variant}/{s}x{s}x{s}/{trans}/{dtype}", "op": "gemm", "rung": rung, "variant": variant,
           "m": s, "n": s, "k": s, "trans": trans, "dtype": dtype, "alpha": 1, "beta": 0,
           "baseline_rung": variant == "cublas", "repetitions": 20, "real_time": ms, "time_unit": "ms",
           "tflops": 2.0 * s ** 3 / (ms * 1e-3) / 1e12, "pct_peak": 50.0, "baseline": "cublas",
           "baseline_real_time": base_ms, "speedup_vs_baseline": base_ms / ms, "error_normwise": 1.0e-4,
           "pass": True, "status": "ok"}
    if scaling:
        row["scaling"] = scaling
    row.update(extra)
    return row


def decode_run(sample_context, fp8=False, commit="dec0de1"):
    """A run of the decode workload only, with made-up times (a fixed rate per rung): cublas the baseline,
    decode_rows and wgmma_balanced, auto, and one SKIP row. fp8: the fp8 decode workload's rows instead
    (e4m3, outer scales, the two weights it has)."""
    ctx = copy.deepcopy(sample_context)
    ctx["git_commit"] = commit
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
    """`rungs bench allgather_gemm|gemm_reducescatter --format json` rows with made-up times: rungs 1, 2 and 5
    (5 narrow_partials beats the overlap ceiling of the reduce-scatter), auto (on rung 2), and an error row."""
    ctx = copy.deepcopy(sample_context)
    ctx["git_commit"] = "d15d15d"
    ctx["date"] = "2026-11-28T00:00:00+00:00"
    ctx["command_line"] = f"rungs bench gemm_reducescatter --world {world} --format json --output dist.json"
    rows = []
    for op, (m, n, k) in (("allgather_gemm", (8192, 4096, 8192)), ("gemm_reducescatter", (16384, 8192, 4096))):
        for variant, rung, ms in (("nccl_then_gemm", 1, 2.0), ("chunked_overlap", 2, 1.6), ("auto", 2, 1.6)):
            rows.append({"op": op, "variant": variant, "rung": rung, "world": world, "dtype": "bf16", "m": m, "n": n, "k": k,
                         "status": "ok", "real_time": ms, "time_unit": "ms", "tflops_per_gpu": 500.0,
                         "comm_ms": 0.5, "gemm_ms": 1.25, "overlap_eff": 1.25 / ms})
    rows.append({"op": "gemm_reducescatter", "variant": "narrow_own_last", "rung": 9, "world": world, "dtype": "bf16",
                 "m": 16384, "n": 8192, "k": 4096, "status": "ok", "real_time": 1.0, "time_unit": "ms",
                 "tflops_per_gpu": 700.0, "comm_ms": 0.5, "gemm_ms": 1.25, "overlap_eff": 1.25})
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


def check_pictures(root):
    img = os.path.join(root, "docs", "img")
    for f in sorted(os.listdir(img)):
        try:
            tree = ET.parse(os.path.join(img, f))
            check(tree.getroot().tag.endswith("svg"), f"{f} is an SVG")
            check(len(list(tree.iter())) > 50, f"{f} draws something")
        except ET.ParseError as e:
            check(False, f"{f} does not parse: {e}")
        check(report.svg_data(read(img, f)) is not None, f"{f} carries the data it draws")


def test_samples(tmp):
    root = make_root(tmp)
    run_report(root, SAMPLES)
    bench = read(root, "docs/BENCHMARKS.md")
    h100 = bench_page(root, "h100")
    check(tables_parse(bench, "BENCHMARKS.md") == 1, "BENCHMARKS.md holds the headline and no ladder's table")
    check(tables_parse(h100, "bench/h100.md") >= 5, "bench/h100.md holds every ladder's table")
    check(sorted(os.listdir(os.path.join(root, "docs", "bench"))) == ["h100.md"],
          "one page per GPU; no NCCL or Python page without their runs")
    for where, text in (("BENCHMARKS.md", bench), ("bench/h100.md", h100)):
        check("NVIDIA H100 80GB HBM3" in text and "commit fd866b0" in text, f"{where} names the device and the commit")
        check("`rungs bench --format json --output bench.json`" in text, f"{where} names the command")
    check("](bench/h100.md#gemm-h100)" in bench, "BENCHMARKS.md links the ladders on their page")
    check(check_report_links(root) >= 12, "BENCHMARKS.md and the pages link pages and anchors that exist")
    for b in ["gemm", "gemm_tc", "gemv", "reduce", "gemm_host"]:
        check(os.path.exists(os.path.join(root, "docs", "img", f"{b}-h100.svg")), f"picture {b}-h100.svg")
        check(f'<a id="{b}-h100"></a>' in h100, f"bench/h100.md has the anchor {b}-h100")
        check(f"](../img/{b}-h100.svg)" in h100, f"bench/h100.md shows {b}-h100.svg")
    check(os.path.exists(os.path.join(root, "docs", "img", "ladders.svg")), "the composite picture ladders.svg")
    check_pictures(root)
    comp = report.svg_data(read(root, "docs/img/ladders.svg"))
    check(comp["machine"] == "H100" and comp["commit"] == "fd866b0", "ladders.svg: one GPU at one commit")
    check([p["title"] for p in comp["panels"]][:2] == ["SGEMM fp32 1024^3, x cuBLAS", "bf16 1024^3, x cuBLAS"],
          "ladders.svg: a panel per ladder at its largest case")
    sg = report.svg_data(read(root, "docs/img/gemm-h100.svg"))
    labels = sg["rows"][0]["labels"]
    check("11 cublas" not in labels and labels[-1] == "auto", "the vendor is the line at 1, not a bar; auto last")
    warptile = sg["rows"][0]["panels"][0]["values"][labels.index("9 warptile")]
    check(abs(warptile - 0.988712) < 1e-5, f"the SGEMM picture draws warptile's x cuBLAS ({warptile})")
    check(any(n.startswith("10 kahan: 0.36x cuBLAS at 1024^3, below 9 warptile's 0.99x") for n in sg["notes"]),
          f"notes from the data: {sg['notes']}")
    all_blocks = read(root, "docs/all_blocks.md")
    for b in BLOCKS:
        body = block(all_blocks, b)
        check(body is not None and len(body.strip()) > 40, f"block {b} is filled")
        if body and b not in NO_SAMPLE_ROWS:
            check(tables_parse(body, f"block {b}") >= 1, f"block {b} holds a table")
    check("decode" not in bench + h100, "no decode section without decode rows")
    for page in ["README.md"] + [os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md")]:
        for m in re.finditer(r"<!-- report:([a-z0-9_]+) -->\n(.*?)<!-- /report:\1 -->", read(root, page), re.S):
            check(len(m.group(2).strip()) > 0, f"{page}: block {m.group(1)} is filled")
    # The same JSON gives the same files; --check agrees, and catches an edited block or picture.
    first = snapshot(root)
    run_report(root, SAMPLES)
    second = snapshot(root)
    check(first == second, "a second run on the same JSON changes nothing: " + ", ".join(k for k in first if first.get(k) != second.get(k)))
    r = run_report(root, SAMPLES, "--check")
    check("match" in r.stdout, "--check passes on what the same runs wrote")
    readme = read(root, "README.md")
    if block(readme, "headline") is not None:
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(readme.replace(block(readme, "headline"), block(readme, "headline").replace("the floor)", "the fl00r)", 1)))
        r = run_report(root, SAMPLES, "--check", expect=1)
        check("README.md differs" in r.stdout, f"--check names an edited README headline: {r.stdout[:300]}")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(readme)
    svg_path = os.path.join(root, "docs", "img", "gemv-h100.svg")
    svg = read(root, "docs/img/gemv-h100.svg")
    with open(svg_path, "w") as f:  # other bytes, the same data: still matches
        f.write(svg.replace("<svg ", "<svg data-restyled=\"1\" ", 1))
    run_report(root, SAMPLES, "--check")
    data = report.svg_data(svg)
    data["rows"][0]["panels"][0]["values"][0] += 0.5
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    with open(svg_path, "w") as f:
        f.write(re.sub(r"<!-- rungs-report-data .*? -->", lambda _: f"<!-- rungs-report-data {blob} -->", svg, flags=re.S))
    r = run_report(root, SAMPLES, "--check", expect=1)
    check("gemv-h100.svg draws other data" in r.stdout, f"--check names a picture whose data differs: {r.stdout[:300]}")
    with open(os.path.join(root, "docs", "img", "stray.svg"), "w") as f:
        f.write(svg)
    r = run_report(root, SAMPLES, "--check", expect=1)
    check("stray.svg is not drawn from the runs" in r.stdout, "--check names a picture the runs do not give")
    run_report(root, SAMPLES)
    check(not os.path.exists(os.path.join(root, "docs", "img", "stray.svg")), "a stale generated picture is removed")
    run_report(root, SAMPLES, "--check")
    # Pages: an edited one, a missing one and a left-over one fail --check; the next run removes the left-over.
    h100_path = os.path.join(root, "docs", "bench", "h100.md")
    with open(h100_path, "w") as f:
        f.write(h100.replace("| 9 warptile |", "| 9 warptiles |", 1))
    r = run_report(root, SAMPLES, "--check", expect=1)
    check("docs/bench/h100.md differs" in r.stdout, f"--check names an edited page: {r.stdout[:300]}")
    os.remove(h100_path)
    r = run_report(root, SAMPLES, "--check", expect=1)
    check("docs/bench/h100.md differs" in r.stdout, f"--check names a missing page: {r.stdout[:300]}")
    stray = os.path.join(root, "docs", "bench", "h999.md")
    with open(stray, "w") as f:
        f.write(h100)
    r = run_report(root, SAMPLES, "--check", expect=1)
    check("docs/bench/h999.md is not generated from the runs" in r.stdout, f"--check names a left-over page: {r.stdout[:300]}")
    run_report(root, SAMPLES)
    check(not os.path.exists(stray) and read(root, "docs/bench/h100.md") == h100, "a left-over page is removed, a missing one written")
    run_report(root, SAMPLES, "--check")


def test_selection(tmp, root):
    """Parts, commits and machines: the newest run per part; one commit per machine in the headline."""
    old = load(SAMPLES[0])
    sample_context = old["context"]
    p = os.path.join(tmp, "other.json")
    older = copy.deepcopy(old)
    older["context"]["date"] = "2000-01-01T00:00:00+00:00"
    older["context"]["git_commit"] = "0ldc0de"
    run_report(root, [write_json(tmp, "other.json", older)] + SAMPLES)
    check("0ldc0de" not in report_text(root), "an older run of the same parts is not reported")
    newer = copy.deepcopy(old)
    newer["context"]["date"] = "2999-01-01T00:00:00+00:00"
    newer["context"]["git_commit"] = "n3wc0de"
    run_report(root, [write_json(tmp, "other.json", newer)] + SAMPLES)
    bench = read(root, "docs/BENCHMARKS.md")
    head = block(read(root, "README.md"), "headline") or bench
    check("n3wc0de" in bench and "n3wc0de" in bench_page(root, "h100"), "a newer run of the same GPU replaces the older one")
    # The newer run measured gemm, gemv and reduce but not gemm_host: the headline takes the newer commit
    # only and names gemm_host as not measured there, and its page; the page keeps the older gemm_host table.
    check("commit n3wc0de" in head and "commit fd866b0" not in head.split("x = the baseline")[1],
          "the headline holds one commit per machine")
    check(re.search(r"not measured at commit n3wc0de: gemm_host \(older runs' tables: docs/bench/h100\.md\)", head) is not None,
          "the headline names what the newest commit did not measure, and where its tables are")
    check("gemm_host 1024x1024x1024, pinned" not in head, "no headline row from an older commit")
    check("commit fd866b0" in bench and "commit fd866b0" in bench_page(root, "h100") and "## gemm_host" in bench_page(root, "h100"),
          "the index lists the older commit's run and its page keeps its gemm_host table")
    run_report(root, [p] + SAMPLES, "--newest-commit")
    check("commit fd866b0" not in report_text(root), "--newest-commit drops the older commit's runs everywhere")
    # A second GPU gets its own section and headline column.
    other = copy.deepcopy(old)
    other["context"]["device"] = "NVIDIA H200"
    run_report(root, [write_json(tmp, "other.json", other)] + SAMPLES)
    bench = read(root, "docs/BENCHMARKS.md")
    check("## NVIDIA H100 80GB HBM3" in bench and "| workload | baseline | H100 | H200 |" in bench, "two GPUs side by side")
    check(bench.index("## NVIDIA H100") < bench.index("## NVIDIA H200"), "GPUs in a fixed order")
    check(bench_page(root, "h200").startswith("# Benchmarks: NVIDIA H200\n") and "NVIDIA H100" not in bench_page(root, "h200"),
          "the second GPU gets its own page, with its runs only")
    check(bench.index("](bench/h100.md)") < bench.index("](bench/h200.md)"), "the index links both pages")
    check_report_links(root)
    # A run of one part (fp8 with block128 scales, as `rungs bench gemm --workload fp8 --scaling block128` writes)
    # replaces that part only: the bf16 table of the main run stays.
    sel = report.select([report.Run("a", old), report.Run("b", {"context": dict(sample_context, date="2999"),
                                                                 "benchmarks": [gemm_row("cublas", 11, 4096, "fp8", 1.0, 1.0, "block128", "nt")]})])
    parts = sel["h100"]
    check(parts[("gemm_tc", "fp8", "block128")][0].path == "b" and parts[("gemm_tc", "bf16", None)][0].path == "a",
          "a run replaces the parts it measured, no others")


def test_headline(tmp, root):
    """auto's x; a faster rung only beyond the noise; fp8 per scales' layout; decode; the NCCL ladders."""
    old = load(SAMPLES[0])
    sample_context = old["context"]
    main = copy.deepcopy(old)
    rows = main["benchmarks"]
    # bf16 4096^3: streamk 11 % faster than auto, the noise 0.5 %: named. 8192^3: 0.3 % faster: not named.
    # tf32x3 4096^3: the rung auto ran timed faster than auto itself: never named as another rung.
    rows += [gemm_row("cublas", 11, 4096, "bf16", 1.0, 1.0), gemm_row("wgmma_tma_store", 17, 4096, "bf16", 0.99, 1.0),
             gemm_row("wgmma_streamk", 19, 4096, "bf16", 0.90, 1.0), gemm_row("auto=wgmma_tma_store", -1, 4096, "bf16", 0.995, 1.0)]
    rows += [gemm_row("cublas", 11, 8192, "bf16", 8.0, 8.0), gemm_row("wgmma_tma_store", 17, 8192, "bf16", 7.9, 8.0),
             gemm_row("wgmma_streamk", 19, 8192, "bf16", 7.8, 7.82), gemm_row("auto=wgmma_tma_store", -1, 8192, "bf16", 7.9, 8.0)]
    rows += [gemm_row("wgmma_x3_rs", 37, 4096, "tf32x3", 1.0, 2.4), gemm_row("auto=wgmma_x3_rs", -1, 4096, "tf32x3", 1.05, 2.4)]
    for scaling, x in (("tensor", 1.05), ("block128", 0.95)):
        for s in (2048, 4096):
            base = 2.0 * s ** 3 / 1.2e15 * 1e3 * (1.1 if scaling == "block128" else 1.0)
            rows += [gemm_row("cublas", 11, s, "fp8", base, base, scaling, "nt"),
                     gemm_row("wgmma_fp8", 28, s, "fp8", base / x, base, scaling, "nt"),
                     gemm_row("auto=cublas", -1, s, "fp8", base, base, scaling, "nt")]
    inputs = [write_json(tmp, "main.json", main), SAMPLES[1], write_json(tmp, "decode.json", decode_run(sample_context, commit="fd866b0")),
              write_json(tmp, "decode_fp8.json", decode_run(sample_context, fp8=True, commit="fd866b0"))]
    for w in (2, 4):
        d = dist_run(sample_context, world=w)
        d["context"]["git_commit"] = f"d15d{w}00"
        inputs.append(write_json(tmp, f"dist{w}.json", d))
    run_report(root, inputs)
    bench = read(root, "docs/BENCHMARKS.md")
    tables_parse(bench, "BENCHMARKS.md with every kind of row")
    check(headline_row(bench, "gemm bf16 4096^3") == ["cuBLAS (cublasGemmEx)", "1.01x (wgmma_tma_store), best 1.11x (wgmma_streamk)"],
          f"a rung faster than auto beyond the noise is named: {headline_row(bench, 'gemm bf16 4096^3')}")
    check(headline_row(bench, "gemm bf16 8192^3") == ["cuBLAS (cublasGemmEx)", "1.01x (wgmma_tma_store)"],
          f"a rung within the noise is not: {headline_row(bench, 'gemm bf16 8192^3')}")
    check(headline_row(bench, "gemm tf32x3 4096^3") == ["cuBLAS (cublasSgemm, fp32)", "2.29x (wgmma_x3_rs)"],
          f"auto's own rung is not another rung: {headline_row(bench, 'gemm tf32x3 4096^3')}")
    check(headline_row(bench, "gemm fp8 4096^3 nt, per-tensor scales") ==
          ["cuBLASLt (fp8, per-tensor scales)", "1.00x (cublas), best 1.05x (wgmma_fp8)"], "an fp8 per-tensor headline row")
    check(headline_row(bench, "gemm fp8 4096^3 nt, 128-block scales") ==
          ["cuBLASLt (fp8, 128-block scales)", "1.00x (cublas)"], "an fp8 block128 headline row")
    dram = sample_context["dram_read_gbs"]
    pct = f"{100 * 2900 / dram:.0f}"
    check(headline_row(bench, "decode bf16 nt, W 7168 x 8192, m = 1-128") ==
          ["cuBLAS (cublasGemmEx)", f"{2.9 / 2.6:.2f}x, {pct} % of DRAM"], f"a decode headline row per weight: {headline_row(bench, 'decode bf16 nt, W 7168 x 8192, m = 1-128')}")
    check(headline_row(bench, "decode fp8 nt, per-row / per-column scales, W 28672 x 8192, m = 1-128") is not None,
          "an fp8 decode headline row")
    check(headline_row(bench, "gemm_reducescatter bf16, 4 GPUs, 16384x8192x4096 (m x n x k_local)") ==
          ["rung 1: the gemm, then ncclReduceScatter", "1.25x (chunked_overlap), best 2.00x (narrow_own_last)"],
          "an NCCL headline row: auto against rung 1, the faster rung beyond the noise")
    head = bench.split("## Headline")[1].split("## NVIDIA")[0]
    h100, dist = bench_page(root, "h100"), bench_page(root, "dist")
    tables_parse(h100, "bench/h100.md with every kind of row")
    tables_parse(dist, "bench/dist.md")
    check("allgather_gemm" not in h100 and "decode" not in dist and "](bench/dist.md#gemm_reducescatter-h100)" in bench,
          "the NCCL ladders on their own page, linked from the index")
    check_report_links(root)
    check("- 2 x H100: NVIDIA H100 80GB HBM3, commit d15d200" in head and "- 4 x H100: NVIDIA H100 80GB HBM3, commit d15d400" in head,
          "each machine's commit under the headline")
    # Decode tables: one per weight matrix, rungs x m, each cell time, GB/s, % DRAM, x cuBLAS.
    check("## gemm decode shapes (bf16, nt)" in h100, "bench/h100.md has the decode section")
    check(h100.index("## gemm on tensor cores") < h100.index("## gemm decode") < h100.index("## gemv"), "decode after the tensor-core ladder")
    for n, k in DECODE_WEIGHTS:
        check(f"W {n} x {k} (bf16, nt):" in h100, f"a decode table for W {n} x {k}")
    check("| rung | m = 1 | m = 16 | m = 64 | m = 128 |" in h100, "decode tables: one column per m")
    m, n, k = 1, 7168, 8192
    us = 2.0 * (m * k + k * n + m * n) / 2.9e12 * 1e6
    cell = f"{us:.1f} us, 2900 GB/s, {100 * 2900 / dram:.0f}%, {2.9 / 2.6:.2f}x"
    check(f"| 24 decode_rows | {cell} |" in h100, f"decode_rows at m = 1: {cell}")
    check(re.search(r"\| 11 cublas \| [0-9.]+ us, 2600 GB/s, [0-9]+% \|", h100) is not None, "the baseline's cells carry no x")
    check("19 wgmma_streamk: skip, made-up reason for the test" in h100, "SKIP rows are noted")
    for n, k in DECODE_FP8_WEIGHTS:
        check(f"W {n} x {k} (fp8, nt, per-row / per-column scales):" in h100, f"an fp8 decode table for W {n} x {k}")
    all_blocks = read(root, "docs/all_blocks.md")
    check(tables_parse(block(all_blocks, "decode"), "block decode") == 3, "block decode holds three tables")
    check(tables_parse(block(all_blocks, "decode_fp8"), "block decode_fp8") == 2, "block decode_fp8 holds two tables")
    check("decode_rows" not in block(all_blocks, "gemm_tc"), "decode rows stay out of the tensor-core tables")
    check("fp8 (e4m3 x e4m3 -> bf16, nt, 128-block scales; x = over cuBLASLt):" in h100, "an fp8 block128 table")
    # Pictures: decode (% of DRAM per m, auto and the vendor as timed beside it), fp8 per scales' layout.
    dec = report.svg_data(read(root, "docs/img/decode-h100.svg"))
    p0 = dec["panels"][0]
    check(p0["title"] == "W 7168 x 8192, bf16" and p0["ms"] == [1, 16, 64, 128], f"decode picture panels: {p0['title']}")
    check(abs(p0["auto_pct"][0] - 100 * 2900 / dram) < 0.01 and abs(p0["vendor_pct"][0] - 100 * 2600 / dram) < 0.01,
          "the decode picture draws % of DRAM for auto and the vendor")
    check(len(dec["panels"]) == 5, "a decode panel per weight, bf16 and fp8")
    f8 = report.svg_data(read(root, "docs/img/fp8-h100.svg"))
    check([p["scaling"] for p in f8["panels"]] == ["tensor", "block128"], "an fp8 panel per scales' layout")
    check(len(f8["panels"][1]["per_tensor"]) == 2, "block128's panel marks cuBLASLt's per-tensor TFLOP/s")
    check(any("128-block scales at 4096^3: 28 wgmma_fp8" in n and "0.95x cuBLASLt's 128-block scales" in n for n in f8["notes"]),
          f"fp8 notes computed from the data: {f8['notes']}")
    # The NCCL ladders: a table per GPU count, auto naming its rung, x rung 1; a picture per operation.
    check("allgather_gemm on 2 GPUs (m_local x n_local x k per rank's call):" in dist and "allgather_gemm on 4 GPUs (" in dist,
          "a dist table per GPU count")
    check("| 2 chunked_overlap | 16384x8192x4096 | 1.600 | 500 | 1.25x | 0.500 | 1.250 | 1.28 |" in dist,
          "a dist row: time, TFLOP/s, x rung 1, comm, gemm, time / max")
    check("| auto (chunked_overlap) |" in dist and "| 5 narrow_partials | 16384x8192x4096 | error |" in dist, "dist auto and error rows")
    for op in ("allgather_gemm", "gemm_reducescatter"):
        d = report.svg_data(read(root, f"docs/img/{op}-h100.svg"))
        check([r["title"] for r in d["rows"]] == ["2 GPUs, commit d15d200", "4 GPUs, commit d15d400"], f"{op}: a row per GPU count")
        check(d["rows"][0]["panels"][0]["ceiling"] == 2.0 / 1.25, f"{op}: the overlap ceiling rung 1 / max(comm, gemm)")
    rs = report.svg_data(read(root, "docs/img/gemm_reducescatter-h100.svg"))
    check(any("9 narrow_own_last at 2.00x passes the dashed line (1.60x): its partials are bf16" in n for n in rs["notes"]),
          f"a rung past the ceiling is explained: {rs['notes']}")
    check_pictures(root)


def test_python(tmp, root):
    """scripts/bench_python.py's JSON: a Python page (docs/bench/python.md) listed in BENCHMARKS.md and the
    python block, the newest run per GPU (made-up numbers)."""
    run_report(root, SAMPLES)
    check("Python" not in read(root, "docs/BENCHMARKS.md") and not bench_page(root, "python"),
          "no Python section or page without a bench_python.py run")

    def py_run(commit, date, us):
        return {"meta": {"device": "NVIDIA H100 80GB HBM3", "commit": commit, "date": date, "rungs": "0.1.0",
                         "torch": "2.11.0", "calls": 10000, "reps": 50},
                "rows": [{"what": "host time per call, 64^3 float32: rungs.gemm", "us": us},
                         {"what": "rungs.gemm / raw, 4096^3", "ratio": 1.0012}]}

    run_report(root, [write_json(tmp, "py-old.json", py_run("0ldpy00", "2000-01-01", 99.5)),
                      write_json(tmp, "py-new.json", py_run("py0c0de", "2026-11-27", 12.34))] + SAMPLES)
    bench, py = read(root, "docs/BENCHMARKS.md"), bench_page(root, "python")
    check(py.startswith("# Benchmarks: Python, the cost of a call from PyTorch\n"), "the Python page")
    check("[Python: the cost of a call from PyTorch](bench/python.md)" in bench, "BENCHMARKS.md links the Python page")
    check("| host time per call, 64^3 float32: rungs.gemm | 12.34 us |" in py, "the Python run's rows")
    check("| rungs.gemm / raw, 4096^3 | 1.0012 |" in py, "ratios as ratios")
    check("py0c0de" in bench and "py0c0de" in py and "0ldpy00" not in bench + py, "the newest Python run per GPU, with its commit")
    check("12.34" not in bench, "the Python rows on their page only")
    check_report_links(root)
    if os.path.exists(os.path.join(root, "docs", "python.md")):
        body = block(read(root, "docs/python.md"), "python")
        check(body is None or "12.34 us" in body, "docs/python.md's python block holds the run")


def test_epilogue(tmp, root):
    """`rungs bench gemm --epilogue ...` rows (made-up times): their own page per GPU with a table per run and a
    picture, linked from the index; a newer epilogue run leaves the headline's commit as it was."""
    old = load(SAMPLES[0])
    ctx = copy.deepcopy(old["context"])
    ctx["git_commit"], ctx["date"] = "e9170de", "2999-01-01T00:00:00+00:00"
    ctx["command_line"] = "rungs bench gemm --m 16,4096 --n 14336 --k 4096 --epilogue silu --gated --output epi.json"
    rows = []
    for m in (16, 4096):
        chain = 0.05 + m * 3e-4
        for variant, rung, ms in (("cublas", 11, chain), ("wgmma_tma_store", 17, chain / 1.1), ("auto=wgmma_tma_store", -1, chain / 1.1)):
            rows.append({"name": f"gemm/{variant}/{m}x14336x4096/nt/bf16/silu+gated", "op": "gemm", "rung": rung,
                         "variant": variant, "m": m, "n": 14336, "k": 4096, "trans": "nt", "dtype": "bf16",
                         "epilogue": "silu+gated", "baseline_rung": variant == "cublas", "real_time": ms,
                         "time_unit": "ms", "tflops": 1.0, "baseline": "cublas", "baseline_real_time": chain,
                         "speedup_vs_baseline": chain / ms, "pass": True, "status": "ok"})
    run_report(root, [write_json(tmp, "epi.json", {"context": ctx, "benchmarks": rows})] + SAMPLES)
    page, bench = bench_page(root, "h100-epilogue"), read(root, "docs/BENCHMARKS.md")
    check(page.startswith("# Benchmarks: NVIDIA H100 80GB HBM3 (gemm with an epilogue)\n"), "the epilogue page")
    check("| epilogue | m x n x k (n: C's columns) | cublas (the chain) | wgmma_tma_store | auto |" in page,
          "the epilogue table's header: the chain, each fusing rung, auto")
    check("| silu+gated (bf16, nt) | 4096x14336x4096 | 1.279 | 1.163 (1.10x) | wgmma_tma_store: 1.163 (1.10x) |" in page,
          "an epilogue row: the chain's ms, each rung's ms and x the chain, auto's rung")
    check("](bench/h100-epilogue.md#gemm_epilogue-h100)" in bench, "the index links the epilogue page")
    check("silu+gated" not in bench_page(root, "h100"), "the epilogue rows on their own page only")
    head = block(read(root, "README.md"), "headline") or bench
    check("e9170de" not in head.split("x = the baseline")[-1] and "commit fd866b0" in head,
          "an epilogue run does not pick the headline's commit")
    check(os.path.exists(os.path.join(root, "docs", "img", "epilogue-h100.svg")), "the epilogue picture")
    check_report_links(root)


def test_repository():
    """The doc check CI runs: the committed pages and pictures match docs/runs. Each generated page is under
    25 KB, and every link into or out of them (from README.md, CONTRIBUTING.md, docs/ and the probes'
    READMEs) reaches its page and anchor."""
    runs = sorted(glob.glob(os.path.join(REPO, "docs", "runs", "*.json")))
    r = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), *runs, "--check"], capture_output=True, text=True)
    check(r.returncode == 0, "the committed docs match docs/runs (scripts/report.py --check docs/runs/*.json):\n" + r.stdout[-3000:] + r.stderr[-2000:])
    generated = ["docs/BENCHMARKS.md"] + sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "bench", "*.md")))
    for rel in generated:
        size = os.path.getsize(os.path.join(REPO, rel))
        check(size < report.PAGE_LIMIT, f"{rel} is {size} bytes, under {report.PAGE_LIMIT}")
    check(len(generated) >= 3, f"the committed report is split into pages: {generated}")
    n = sum(check_links(REPO, rel) for rel in generated)
    docs = ["README.md", "CONTRIBUTING.md"] + [
        os.path.relpath(p, REPO) for d in ("docs", os.path.join("scripts", "experiments"))
        for p in glob.glob(os.path.join(REPO, d, "**", "*.md"), recursive=True)]
    into = lambda target: target == "docs/BENCHMARKS.md" or target.startswith("docs/bench/")  # noqa: E731
    n += sum(check_links(REPO, rel, only=into) for rel in sorted(set(docs) - set(generated)) if os.path.exists(os.path.join(REPO, rel)))
    check(n > 50, f"the links of the generated pages and into them are checked ({n})")


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skipped: matplotlib is not installed (pip install matplotlib)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        test_samples(tmp)
        test_selection(tmp, make_root(tmp, "selection"))
        test_headline(tmp, make_root(tmp, "headline"))
        test_python(tmp, make_root(tmp, "python"))
        test_epilogue(tmp, make_root(tmp, "epilogue"))
    test_repository()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("report.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
