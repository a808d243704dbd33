"""The cost of calling rungs from Python (a benchmark, not a test; needs a GPU and torch).

  python scripts/bench_python.py [--calls 10000] [--large 4096]

1. Host time per call at 64 x 64 x 64 float32: rungs.gemm(a, b) against torch.mm(a, b), and the
   extension module's raw call (rungs._rungs.gemm on the same pointers, with the result allocated
   beforehand) that the Python layer wraps, interleaved in turns of 100 calls. Each call is timed
   on its own (time.perf_counter_ns); the median of --calls calls is reported. Every 100 calls the stream is synchronized (untimed), so
   the launch queue never fills and blocks a call.
2. Host time per call of a linear layer at 16 x 4096 x 4096 bfloat16 (weight 4096 x 4096, with and
   without bias): rungs.linear(x, w, b) against torch.nn.functional.linear(x, w, b), interleaved the
   same way.
3. Device time at --large^3 float32: rungs.gemm against the raw call (the same kernel; the Python
   layer's work is host-side only), medians of CUDA-event times.

Prints one line per measurement and, with --json FILE, writes them with the device and versions.
"""

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import torch

import rungs


def host_times(fn, calls):
    times = []
    stream = torch.cuda.current_stream()
    for i in range(calls):
        if i % 100 == 0:
            stream.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    stream.synchronize()
    return times


def device_times(fn, reps):
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # us
    return times


def raw_gemm(a, b, c):
    """rungs._rungs.gemm on the tensors' pointers: the C++ call with nothing of the Python layer."""
    m, k = a.shape
    n = b.shape[1]
    stream = torch.cuda.current_stream().cuda_stream
    device = a.device.index
    return lambda: rungs._rungs.gemm(0, False, False, m, n, k, 1.0, a.data_ptr(), k, b.data_ptr(), n, 0.0,
                                     c.data_ptr(), n, "auto", 0, stream, device)


def commit():
    """RUNGS_GIT_COMMIT where set (as scripts/gpu.sh sets it: a copied tree's .git may be stale), else git's."""
    if os.environ.get("RUNGS_GIT_COMMIT"):
        return os.environ["RUNGS_GIT_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=10_000)
    p.add_argument("--large", type=int, default=4096)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--json")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_python: no usable CUDA device")

    a, b = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
    c = torch.empty(64, 64, device="cuda")
    for fn in (lambda: rungs.gemm(a, b), lambda: torch.mm(a, b), raw_gemm(a, b, c)):  # warm-up
        host_times(fn, 1000)
    rows = []
    med = {}
    # The three calls interleaved (100 calls of each in turn), so that the CPU's clock and the other
    # processes on the host affect them alike.
    calls = {"rungs.gemm": lambda: rungs.gemm(a, b), "torch.mm": lambda: torch.mm(a, b),
             "rungs._rungs.gemm (raw)": raw_gemm(a, b, c)}
    times = {name: [] for name in calls}
    for _ in range(max(1, args.calls // 100)):
        for name, fn in calls.items():
            times[name] += host_times(fn, 100)
    for name in calls:
        med[name] = statistics.median(times[name]) / 1e3
        rows.append({"what": f"host time per call, 64^3 float32: {name}", "us": med[name]})
    rows.append({"what": "rungs.gemm - torch.mm, host time per call, 64^3", "us": med["rungs.gemm"] - med["torch.mm"]})
    # Where a call's host time goes: the pieces rungs.gemm and torch.mm are made of, each alone.
    device = a.device.index
    for name, fn in (("torch.mm(out=), no allocation", lambda: torch.mm(a, b, out=c)),
                     ("a.new_empty((64, 64)), torch's allocation", lambda: a.new_empty((64, 64))),
                     ("rungs._rungs.device_count(), a bare extension call", rungs._rungs.device_count),
                     ("torch's current stream, as rungs reads it", lambda: rungs._arrays.current_stream("torch", device)),
                     ("rungs._rungs.resolve_gemm, the C++ auto choice", lambda: rungs._rungs.resolve_gemm(
                         False, False, 64, 64, 64, 0, 64, 64, "auto", 0, device))):
        host_times(fn, 1000)
        rows.append({"what": f"host time per call: {name}", "us": statistics.median(host_times(fn, args.calls)) / 1e3})

    # rungs.linear against F.linear: a decode-sized linear layer, bfloat16.
    x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    F = torch.nn.functional
    for label, bb in (("", None), (" with bias", bias)):
        lin = {"rungs.linear": lambda: rungs.linear(x, w, bb), "F.linear": lambda: F.linear(x, w, bb)}
        for fn in lin.values():
            host_times(fn, 200)
        lt = {name: [] for name in lin}
        for _ in range(max(1, args.calls // 100)):
            for name, fn in lin.items():
                lt[name] += host_times(fn, 100)
        lm = {name: statistics.median(t) / 1e3 for name, t in lt.items()}
        for name in lin:
            rows.append({"what": f"host time per call, linear 16 x 4096 x 4096 bfloat16{label}: {name}", "us": lm[name]})
        rows.append({"what": f"rungs.linear - F.linear, host time per call{label}",
                     "us": lm["rungs.linear"] - lm["F.linear"]})

    n = args.large
    A, B = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    C = torch.empty(n, n, device="cuda")
    py = lambda: rungs.gemm(A, B, C)  # noqa: E731
    raw = raw_gemm(A, B, C)
    device_times(py, 5)
    device_times(raw, 5)
    py_t, raw_t = [], []
    for _ in range(args.reps):  # interleaved, so that clocks and temperature affect both alike
        py_t += device_times(py, 1)
        raw_t += device_times(raw, 1)
    py_med, raw_med = statistics.median(py_t), statistics.median(raw_t)
    rows.append({"what": f"device time, {n}^3 float32: rungs.gemm", "us": py_med})
    rows.append({"what": f"device time, {n}^3 float32: rungs._rungs.gemm (raw)", "us": raw_med})
    rows.append({"what": f"rungs.gemm / raw, {n}^3", "ratio": py_med / raw_med})

    path = ("rungs._rungs_torch (libtorch's C++ API)" if getattr(rungs._core, "_rungs_torch", None)
            else "rungs._rungs.gemm_torch (torch's Python API)")
    print(f"rungs.gemm's and rungs.linear's eager torch path: {path}")
    for r in rows:
        value = f"{r['us']:.2f} us" if "us" in r else f"{r['ratio']:.4f}"
        print(f"{r['what']}: {value}")
    if args.json:
        meta = {"device": torch.cuda.get_device_name(), "commit": commit(), "date": time.strftime("%Y-%m-%d"),
                "rungs": rungs.__version__,
                "torch": torch.__version__, "calls": args.calls, "reps": args.reps, "torch_path": path}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
