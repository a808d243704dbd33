"""How views map onto the library's arguments, checked numerically without a GPU: the extension
module is replaced by HostLibrary (conftest.py), which computes gemm and gemv on host memory from
the C++ API's documented semantics, and NumPy arrays claim to be on a CUDA device
(FakeCudaArray). Every layout of every operand and of the output must give the float64 product."""

import itertools

import numpy as np
import pytest

import rungs
from conftest import FakeCudaArray, HostLibrary

rng = np.random.default_rng(34)


@pytest.fixture
def library(monkeypatch):
    lib = HostLibrary()
    monkeypatch.setattr(rungs._core, "_rungs", lib)
    return lib


def layouts(rows, cols, dtype=np.float32):
    """The same rows x cols values as: row-major, rows padded (a slice of a wider array), the
    transposed view of a row-major array (a.T), and that of a padded one."""
    values = rng.uniform(-1, 1, (rows, cols)).astype(dtype)
    padded = np.zeros((rows + 2, cols + 5), dtype)
    padded[1:rows + 1, 2:cols + 2] = values
    padded_t = np.zeros((cols + 3, rows + 4), dtype)
    padded_t[:cols, 1:rows + 1] = values.T
    return {"row-major": values.copy(), "padded": padded[1:rows + 1, 2:cols + 2],
            "a.T": np.ascontiguousarray(values.T).T, "padded.T": padded_t[:cols, 1:rows + 1].T}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("m, n, k", [(5, 3, 7), (1, 4, 3), (4, 1, 1), (6, 6, 6)])
def test_gemm_every_layout(library, dtype, m, n, k):
    tol = 1e-5 if dtype == np.float32 else 2e-3
    As, Bs = layouts(m, k, dtype), layouts(k, n, dtype)
    for (an, a), (bn, b) in itertools.product(As.items(), Bs.items()):
        for cn, c in layouts(m, n, dtype).items():
            c0 = c.astype(np.float64)
            ref = -0.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 2.0 * c0
            rungs.gemm(FakeCudaArray(a), FakeCudaArray(b), FakeCudaArray(c), alpha=-0.5, beta=2.0)
            err = np.abs(c - ref).max() / max(np.abs(ref).max(), 1e-30)
            assert err < tol, (an, bn, cn, library.calls[-1])


def test_gemm_layouts_become_flags(library):
    a, b, c = layouts(5, 7), layouts(7, 3), layouts(5, 3)
    rungs.gemm(FakeCudaArray(a["a.T"]), FakeCudaArray(b["padded"]), FakeCudaArray(c["row-major"]))
    assert library.calls[-1] == ("gemm", True, False, 5, 3, 7, 5, 3 + 5, 3)
    # A transposed out: out.T = b.T @ a.T, with the operands swapped and their flags flipped.
    rungs.gemm(FakeCudaArray(a["row-major"]), FakeCudaArray(b["padded.T"]), FakeCudaArray(c["a.T"]))
    assert library.calls[-1] == ("gemm", False, True, 3, 5, 7, 7 + 4, 7, 5)


@pytest.mark.parametrize("m, n", [(5, 7), (1, 4), (6, 1)])
def test_gemv_every_layout(library, m, n):
    for (an, a), trans, x_step, y_step in itertools.product(layouts(m, n).items(), (False, True), (1, 3), (1, 2)):
        x_len, y_len = (m, n) if trans else (n, m)
        x = rng.uniform(-1, 1, x_len * x_step).astype(np.float32)[::x_step]
        y = rng.uniform(-1, 1, y_len * y_step).astype(np.float32)[::y_step]
        y0 = y.astype(np.float64)
        ref = 1.5 * ((a.T if trans else a).astype(np.float64) @ x.astype(np.float64)) - y0
        rungs.gemv(FakeCudaArray(a), FakeCudaArray(x), FakeCudaArray(y), trans=trans, alpha=1.5, beta=-1.0)
        assert np.abs(y - ref).max() < 1e-5 * max(np.abs(ref).max(), 1), (an, trans, x_step, y_step, library.calls[-1])
