"""Shared pieces of rungs' Python tests: whether a CUDA device is usable, the optional frameworks,
and FakeCudaArray, an array that claims to live on a CUDA device (for the argument checks on
machines without one)."""

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

# JAX takes 75 % of a GPU's memory when it first touches the device; cuBLAS's handles (the cublas
# rung, auto's choice at small shapes) and torch then fail to allocate in the same process, or in
# a parallel test process. Before any test imports jax:
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import rungs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def call(fn, *args, **kwargs):
    """A rung that cannot do a case throws rungs.Unsupported: the case is skipped with its reason,
    as in the C++ GPU tests."""
    try:
        return fn(*args, **kwargs)
    except rungs.Unsupported as e:
        pytest.skip(str(e))


def rel_err(got, ref):
    """Normwise relative error of a torch tensor against a float64 reference."""
    got = got.double()
    return ((got - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def gpu_usable():
    """A CUDA device the library can use (the runtime sees one) and, where torch is installed, one
    torch can use too."""
    if rungs._rungs.device_count() == 0:
        return False
    if importlib.util.find_spec("torch") is not None:
        import torch

        return torch.cuda.is_available()
    return True


GPU = gpu_usable()
needs_gpu = pytest.mark.skipif(not GPU, reason="no usable CUDA device")
needs_no_gpu = pytest.mark.skipif(GPU, reason="a CUDA device is usable here (this checks the failure without one)")


def cmake_version():
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(rungs VERSION ([0-9.]+)", text).group(1)


def rungs_cli():
    """The rungs executable the wheel installed beside this Python, else the one on PATH, else the
    C++ build's (build/rungs), else None."""
    beside = Path(sys.executable).parent / "rungs"
    if beside.exists():
        return str(beside)
    for candidate in (shutil.which("rungs"), os.environ.get("RUNGS_CLI"), str(REPO / "build" / "rungs")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


class FakeCudaArray:
    """A NumPy array presented as if it were in CUDA device memory: __dlpack_device__ says CUDA
    device `device` and __dlpack__ hands out the NumPy array's capsule (recording the stream it was
    asked for). rungs reads pointer, shape, strides and dtype from it like from any DLPack producer,
    so every check before the library call runs on it; a call that reaches the library gets
    rungs.Error where no GPU is usable. Never pass one to rungs where a GPU is usable."""

    def __init__(self, array, device=0):
        self.array = array
        self.device = device
        self.streams = []

    def __dlpack_device__(self):
        return (2, self.device)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.array.__dlpack__()

    @property
    def T(self):
        return type(self)(self.array.T, self.device)

    def __getitem__(self, index):
        return type(self)(self.array[index], self.device)


class OtherFakeCudaArray(FakeCudaArray):
    """The same, from another framework (its type's module differs)."""


OtherFakeCudaArray.__module__ = "otherframework"


class HostLibrary:
    """The extension module's gemm and gemv computed in float64 on host memory, from the semantics
    include/rungs/rungs.hpp documents (row-major storage, ld = row stride, Trans::T: the stored
    matrix is op's transpose, beta == 0: C not read). With it standing in for the library, arrays
    in host memory that claim to be on a device (FakeCudaArray, or CPU tensors) check numerically
    how the Python layer maps views, transposes, strides and outputs onto the library's arguments."""

    DTYPES = {0: "float32", 1: "float16"}

    def __init__(self):
        self.calls = []

    @staticmethod
    def _view(np, ptr, shape, strides, dtype):
        import ctypes

        if 0 in shape:
            return np.zeros(shape, dtype)
        itemsize = np.dtype(dtype).itemsize
        count = 1 + sum((extent - 1) * stride for extent, stride in zip(shape, strides))
        flat = np.frombuffer((ctypes.c_char * (count * itemsize)).from_address(ptr), dtype=dtype, count=count)
        return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=[s * itemsize for s in strides])

    def gemm(self, code, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc, variant, math, stream, device):
        import numpy as np

        self.calls.append(("gemm", ta, tb, m, n, k, lda, ldb, ldc))
        dt = self.DTYPES[code]
        a_rows, a_cols = (k, m) if ta else (m, k)
        b_rows, b_cols = (n, k) if tb else (k, n)
        assert lda >= max(1, a_cols) and ldb >= max(1, b_cols) and ldc >= max(1, n)
        A = self._view(np, pa, (a_rows, a_cols), (lda, 1), dt).astype(np.float64)
        B = self._view(np, pb, (b_rows, b_cols), (ldb, 1), dt).astype(np.float64)
        C = self._view(np, pc, (m, n), (ldc, 1), dt)
        result = alpha * ((A.T if ta else A) @ (B.T if tb else B))
        if beta != 0:
            result += beta * C.astype(np.float64)
        C[...] = result

    def gemv(self, trans, m, n, alpha, pa, lda, px, incx, beta, py, incy, variant, stream, device):
        import numpy as np

        self.calls.append(("gemv", trans, m, n, lda, incx, incy))
        assert lda >= max(1, n) and incx > 0 and incy > 0
        A = self._view(np, pa, (m, n), (lda, 1), "float32").astype(np.float64)
        x_len, y_len = (m, n) if trans else (n, m)
        x = self._view(np, px, (x_len,), (incx,), "float32").astype(np.float64)
        y = self._view(np, py, (y_len,), (incy,), "float32")
        result = alpha * ((A.T if trans else A) @ x)
        if beta != 0:
            result += beta * y.astype(np.float64)
        y[...] = result

    def scaled_mm(self, a_code, b_code, c_code, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, psa, psb, kind, beta, pc,
                  ldc, variant, stream, device):
        """The fp8 gemm (rungs.hpp's Scales layouts), the fp8 bytes decoded by torch."""
        import numpy as np
        import torch

        self.calls.append(("scaled_mm", a_code, b_code, c_code, ta, tb, m, n, k, lda, ldb, kind, ldc))
        f8 = {0: torch.float8_e4m3fn, 1: torch.float8_e5m2}

        def fp8(ptr, rows, cols, ld, code):
            raw = self._view(np, ptr, (rows, cols), (ld, 1), "uint8").copy()
            return torch.from_numpy(raw).view(f8[code]).double()

        a_rows, a_cols = (k, m) if ta else (m, k)
        b_rows, b_cols = (n, k) if tb else (k, n)
        A = fp8(pa, a_rows, a_cols, lda, a_code)
        B = fp8(pb, b_rows, b_cols, ldb, b_code)
        A, B = (A.T if ta else A), (B.T if tb else B)  # m x k, k x n
        kb, nb = (k + 127) // 128, (n + 127) // 128
        counts = {0: (1, 1), 1: (m, n), 2: (m * kb, nb * kb)}[kind]
        sa = torch.from_numpy(self._view(np, psa, (counts[0],), (1,), "float32").copy()).double()
        sb = torch.from_numpy(self._view(np, psb, (counts[1],), (1,), "float32").copy()).double()
        if kind == 0:
            A, B = A * sa[0], B * sb[0]
        elif kind == 1:
            A, B = A * sa[:, None], B * sb[None, :]
        else:
            cols = torch.arange(k) // 128
            A = A * sa.view(m, kb)[:, cols]
            B = B * sb.view(nb, kb)[torch.arange(n) // 128][:, cols].T
        result = alpha * (A @ B)
        out_dtype = "float32" if c_code == 0 else "uint16"
        C = self._view(np, pc, (m, n), (ldc, 1), out_dtype)
        if c_code == 0:
            if beta != 0:
                result += beta * torch.from_numpy(C.astype(np.float64))
            C[...] = result.numpy()
        else:  # bfloat16 bits
            old = torch.from_numpy(C.copy().view(np.int16)).view(torch.bfloat16).double()
            if beta != 0:
                result += beta * old
            C[...] = result.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)

    def __getattr__(self, name):  # everything else: the extension module's own (checks, variants)
        import rungs

        return getattr(rungs._rungs, name)

    def stream_wait(self, *args):
        self.calls.append(("stream_wait",) + args)

    def stream_synchronize(self, *args):
        self.calls.append(("stream_synchronize",) + args)
