"""The fused epilogues against what a PyTorch user runs today (a benchmark, not a test; needs a GPU).

  python scripts/bench_epilogue_torch.py [--m 16,4096] [--k 4096] [--n 28672] [--reps 50] [--json FILE]

bf16, the weight stored n x k (x @ w.T), per m, each pair timed in turns (the torch chain, then
rungs with the same epilogue), the L2 flushed before each (a write of twice its size), CUDA events,
medians of --reps:
  - bias:          torch.nn.functional.linear(x, w, b) (cuBLASLt's bias epilogue) | rungs.gemm(x, w.T, bias=b)
  - bias + silu:   F.silu(F.linear(x, w, b))                                     | rungs.gemm(x, w.T, bias=b, activation="silu")
  - gated silu:    y = x @ w.T (2n = --n columns); F.silu(y[:, :n]) * y[:, n:]   | rungs.gemm(x, w.T, activation="silu", gated=True)
  - gated + fp8:   the above, then e4m3 per row and 128-column block (max / 448) | the same with out_dtype=float8_e4m3fn
  - the product alone: torch.mm(x, w.T)                                          | rungs.gemm(x, w.T)
Each rungs result is compared with torch's (the fp8 ones dequantized) before timing. Prints one line
per case: both medians (ms) and torch / rungs; --json writes them with the device and versions.
"""

import argparse
import json
import statistics
from pathlib import Path

import torch
import torch.nn.functional as F

import rungs
from bench_python import commit  # scripts/ is on the path when this script runs

E4M3_MAX = 448.0


def flush_buffer():
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return torch.empty(2 * l2 // 4 + 1, dtype=torch.float32, device="cuda")


def timed_pairs(fns, reps, flush):
    """Median ms of each fn, run in turns, the L2 flushed before every launch."""
    times = [[] for _ in fns]
    for fn in fns:  # warm-up
        fn()
    torch.cuda.synchronize()
    for _ in range(reps):
        for i, fn in enumerate(fns):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def quantize_blocks(y):
    """torch's e4m3 quantization per row and 128-column block: (q, scales)."""
    m, n = y.shape
    pad = (-n) % 128
    yp = F.pad(y.float(), (0, pad)).view(m, -1, 128)
    amax = yp.abs().amax(-1)
    s = torch.where(amax == 0, torch.ones_like(amax), amax / E4M3_MAX)
    q = (yp / s.unsqueeze(-1)).to(torch.float8_e4m3fn).view(m, -1)[:, :n]
    return q, s


def dequantize(q, s):
    m, n = q.shape
    return (F.pad(q.float(), (0, (-n) % 128)).view(m, -1, 128) * s.unsqueeze(-1)).view(m, -1)[:, :n]


def close(got, want, what, rtol):
    err = ((got.float() - want.float()).norm() / want.float().norm().clamp_min(1e-30)).item()
    if not err <= rtol:
        raise SystemExit(f"bench_epilogue_torch: {what}: relative error {err:.3g} against torch's (tolerance {rtol})")


def cases(m, n, k):
    """[(name, torch fn, rungs fn, check)] at one m; n: the weight's rows (2n' for the gated ones)."""
    torch.manual_seed(m)
    bf = torch.bfloat16
    x = torch.randn(m, k, dtype=bf, device="cuda")
    w = torch.randn(n, k, dtype=bf, device="cuda") / k ** 0.5
    b = torch.randn(n, dtype=bf, device="cuda")
    h = n // 2

    def gated_torch():
        y = x @ w.T
        return F.silu(y[:, :h]) * y[:, h:]

    def check_fp8():
        q, s = rungs.gemm(x, w.T, activation="silu", gated=True, out_dtype=torch.float8_e4m3fn)
        close(dequantize(q, s), gated_torch(), "gated silu, fp8 output", 0.08)  # e4m3: 3 mantissa bits

    return [
        ("product alone (torch.mm)", lambda: torch.mm(x, w.T), lambda: rungs.gemm(x, w.T),
         lambda: close(rungs.gemm(x, w.T), torch.mm(x, w.T), "product", 0.02)),
        ("bias (F.linear)", lambda: F.linear(x, w, b), lambda: rungs.gemm(x, w.T, bias=b),
         lambda: close(rungs.gemm(x, w.T, bias=b), F.linear(x, w, b), "bias", 0.02)),
        ("bias + silu", lambda: F.silu(F.linear(x, w, b)), lambda: rungs.gemm(x, w.T, bias=b, activation="silu"),
         lambda: close(rungs.gemm(x, w.T, bias=b, activation="silu"), F.silu(F.linear(x, w, b)), "bias + silu", 0.02)),
        ("gated silu", gated_torch, lambda: rungs.gemm(x, w.T, activation="silu", gated=True),
         lambda: close(rungs.gemm(x, w.T, activation="silu", gated=True), gated_torch(), "gated silu", 0.02)),
        ("gated silu, fp8 output", lambda: quantize_blocks(gated_torch()),
         lambda: rungs.gemm(x, w.T, activation="silu", gated=True, out_dtype=torch.float8_e4m3fn), check_fp8),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", default="16,4096")
    p.add_argument("--n", type=int, default=28672, help="the weight's rows (the gated cases: 2n)")
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--json")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_epilogue_torch: no usable CUDA device")
    flush = flush_buffer()
    rows = []
    for m in [int(v) for v in args.m.split(",")]:
        for name, fn_torch, fn_rungs, check in cases(m, args.n, args.k):
            check()
            t_torch, t_rungs = timed_pairs([fn_torch, fn_rungs], args.reps, flush)
            row = {"case": name, "m": m, "n": args.n, "k": args.k, "torch_ms": t_torch, "rungs_ms": t_rungs,
                   "torch_over_rungs": t_torch / t_rungs}
            rows.append(row)
            print(f"{name:28s} {m:5d} x {args.n} x {args.k}: torch {t_torch:.4f} ms, rungs {t_rungs:.4f} ms, "
                  f"{t_torch / t_rungs:.2f}x")
    if args.json:
        meta = {"device": torch.cuda.get_device_name(0), "commit": commit(), "torch": torch.__version__,
                "cuda": torch.version.cuda, "reps": args.reps, "method": "median of CUDA-event times, the pair run "
                "in turns, the L2 flushed before each launch"}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
