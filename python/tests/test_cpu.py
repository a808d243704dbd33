"""rungs from Python, everything that needs no GPU: the package, the version, the ladders against
`rungs list`, the library's errors as Python exceptions, and every argument check (arrays on the
wrong device, shapes, dtypes, strides, frameworks, streams), on NumPy arrays and on arrays that claim
to be on a CUDA device (FakeCudaArray)."""

import importlib.metadata
import re
import subprocess
import sys

import numpy as np
import pytest

import rungs
from conftest import FakeCudaArray, OtherFakeCudaArray, cmake_version, needs_no_gpu, rungs_cli

f32 = np.float32


def fake(shape, dtype=f32, device=0):
    return FakeCudaArray(np.zeros(shape, dtype=dtype), device)


# -- the package ---------------------------------------------------------------------------------

def test_version_is_the_projects():
    assert rungs.__version__ == cmake_version()
    assert importlib.metadata.version("rungs") == rungs.__version__


def test_public_names():
    for name in ("gemm", "gemv", "reduce_sum", "gemm_host", "variants", "resolve_variant", "Error",
                 "Unsupported", "__version__"):
        assert hasattr(rungs, name), name
    assert issubclass(rungs.Error, RuntimeError)
    assert issubclass(rungs.Unsupported, rungs.Error)
    assert rungs.Error.__module__ == "rungs"


def test_import_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import rungs\n"
            "assert rungs._torch_ops is None and rungs._route is None\n"
            "print(rungs.__version__, len(rungs.variants('gemm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == rungs.__version__


def test_cli_installed():
    cli = rungs_cli()
    if cli is None:
        pytest.skip("no rungs executable (the wheel installs one beside the interpreter)")
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"rungs {rungs.__version__}"


# -- variants ------------------------------------------------------------------------------------

def _cli_list(op):
    """(rung, name, min_sm, baseline) per row of `rungs list <op>`."""
    cli = rungs_cli()
    if cli is None:
        pytest.skip("no rungs executable to compare with")
    text = subprocess.run([cli, "list", op], capture_output=True, text=True, check=True).stdout
    row = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\d+)(?: \(host\))?\s+(yes|-)\s+\S")
    return [(int(m[1]), m[2], int(m[3]), m[4] == "yes") for m in map(row.match, text.splitlines()) if m]


@pytest.mark.parametrize("op", ["gemm", "gemv", "reduce"])
def test_variants_match_rungs_list(op):
    vs = rungs.variants(op)
    assert vs, op
    cli = _cli_list(op)
    assert [v.rung for v in vs] == [r[0] for r in cli]
    assert [v.name for v in vs] == [r[1] for r in cli]
    assert [v.min_sm for v in vs] == [r[2] for r in cli]
    for v in vs:
        assert isinstance(v.summary, str) and v.summary
    assert [v.baseline for v in vs] == [r[3] for r in cli]


def test_variants_fields():
    gemm = rungs.variants("gemm")
    assert gemm[0].rung == 0 and gemm[0].min_sm == 0  # the CPU rung
    assert any(v.name == "cublas" and v.baseline for v in gemm)
    assert all(set(v.types.split()) <= {"f32", "tf32", "tf32x3", "f16", "bf16", "fp8"} for v in gemm)
    assert rungs.variants("gemv")[0].rung == 1 and rungs.variants("reduce")[0].rung == 1
    assert "name='cpu_naive'" in repr(gemm[0])


def test_variants_bad_op():
    with pytest.raises(ValueError, match="op: unknown operation 'gemmm'"):
        rungs.variants("gemmm")
    with pytest.raises(TypeError):
        rungs.variants(3)
    with pytest.raises(ValueError, match="op: 'sum'"):
        rungs.resolve_variant("sum", fake((2,)))


# -- the library's errors, translated --------------------------------------------------------------
# The extension module's calls on zero-sized problems with device -1 (the current device left as it
# is): the library checks the arguments before it touches a device.

def test_error_carries_the_librarys_message():
    with pytest.raises(rungs.Error, match='rungs::gemm: unknown variant "nope" \\(known: auto, cpu_naive') as e:
        rungs._rungs.gemm(0, False, False, 0, 0, 0, 1.0, 0, 1, 0, 1, 0.0, 0, 1, "nope", 0, 0, -1)
    assert not isinstance(e.value, rungs.Unsupported)
    with pytest.raises(rungs.Error, match="invalid argument lda = 0"):
        rungs._rungs.gemv(False, 0, 0, 1.0, 0, 0, 0, 1, 0.0, 0, 1, "auto", 0, -1)
    with pytest.raises(rungs.Error, match="invalid argument out = nullptr"):
        rungs._rungs.reduce_sum(0, 0, 0, 0, "auto", 0, -1)


def test_unsupported_is_an_error():
    with pytest.raises(rungs.Unsupported, match="naive: does not do __half"):
        rungs._rungs.gemm(1, False, False, 0, 0, 0, 1.0, 0, 1, 0, 1, 0.0, 0, 1, "naive", 0, 0, -1)
    with pytest.raises(rungs.Error, match="math modes apply to float inputs only"):
        rungs._rungs.gemm(2, False, False, 0, 0, 0, 1.0, 0, 1, 0, 1, 0.0, 0, 1, "auto", 2, 0, -1)


@needs_no_gpu
def test_no_device_is_an_error_not_a_crash():
    with pytest.raises(rungs.Error, match="cudaGetDevice"):
        rungs._rungs.gemm(0, False, False, 0, 0, 0, 1.0, 0, 1, 0, 1, 0.0, 0, 1, "auto", 0, 0, 0)
    assert rungs._rungs.device_count() == 0


# -- arrays in the wrong place -----------------------------------------------------------------------

def test_numpy_arrays_are_not_device_arrays():
    a = np.ones((3, 3), f32)
    with pytest.raises(ValueError, match="^a: a NumPy array in host memory; rungs.gemm takes arrays on a CUDA device"):
        rungs.gemm(a, a)
    with pytest.raises(ValueError, match="^a: a NumPy array"):
        rungs.gemv(a, np.ones(3, f32))
    with pytest.raises(ValueError, match="^x: a NumPy array"):
        rungs.reduce_sum(np.ones(3, f32))
    with pytest.raises(ValueError, match="^b: a NumPy array"):
        rungs.gemm(fake((3, 3)), a)
    with pytest.raises(ValueError, match="^out: a NumPy array"):
        rungs.gemm(fake((3, 3)), fake((3, 3)), np.ones((3, 3), f32))
    with pytest.raises(ValueError, match="^a: a NumPy array"):
        rungs.resolve_variant("gemm", a, a)


def test_not_an_array():
    with pytest.raises(TypeError, match="^a: builtins.list is not an array"):
        rungs.gemm([[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="^x: builtins.int is not an array"):  # also a ValueError
        rungs.reduce_sum(3)
    with pytest.raises(TypeError, match="^b: builtins.str is not an array"):
        rungs.gemm_host(np.ones((2, 2), f32), "b")


def test_device_arrays_are_not_host_arrays():
    with pytest.raises(ValueError, match="^a: a conftest array on a CUDA device; rungs.gemm_host takes host memory"):
        rungs.gemm_host(fake((2, 2)), np.ones((2, 2), f32))


# -- shapes, dtypes, strides, frameworks, devices (before any library call) -------------------------

def test_gemm_shapes():
    with pytest.raises(ValueError, match=r"^b: shape \(4, 5\) does not match a's \(2, 3\) \(b needs 3 rows\)"):
        rungs.gemm(fake((2, 3)), fake((4, 5)))
    with pytest.raises(ValueError, match=r"^a: a 1-D array of shape \(3,\); rungs.gemm takes a 2-D array"):
        rungs.gemm(fake((3,)), fake((3, 3)))
    with pytest.raises(ValueError, match=r"^b: a 3-D array"):
        rungs.gemm(fake((2, 3)), fake((3, 3, 1)))
    with pytest.raises(ValueError, match=r"^out: shape \(3, 2\), the product is 2 x 5"):
        rungs.gemm(fake((2, 3)), fake((3, 5)), fake((3, 2)))


def test_gemm_dtypes():
    with pytest.raises(ValueError, match="^a: dtype float64; rungs.gemm takes float32, float16, bfloat16"):
        rungs.gemm(fake((2, 2), np.float64), fake((2, 2), np.float64))
    with pytest.raises(ValueError, match="^b: dtype float16, a's is float32"):
        rungs.gemm(fake((2, 2)), fake((2, 2), np.float16))
    with pytest.raises(ValueError, match="^out: dtype float16, a's is float32"):
        rungs.gemm(fake((2, 2)), fake((2, 2)), fake((2, 2), np.float16))
    with pytest.raises(ValueError, match="^a: dtype int32"):
        rungs.gemm(fake((2, 2), np.int32), fake((2, 2), np.int32))


def test_gemm_scalars():
    with pytest.raises(ValueError, match="^math: 'fp16' \\(must be 'fp32', 'tf32' or 'tf32x3'\\)"):
        rungs.gemm(fake((2, 2)), fake((2, 2)), math="fp16")
    with pytest.raises(TypeError, match="^variant: 3 is not a str"):
        rungs.gemm(fake((2, 2)), fake((2, 2)), variant=3)
    with pytest.raises(ValueError, match="^beta: 0.5 needs out="):
        rungs.gemm(fake((2, 2)), fake((2, 2)), beta=0.5)


def test_strides():
    big = np.zeros((8, 8), f32)
    # Neither dimension of unit stride: a clear error naming the argument, never a copy.
    with pytest.raises(ValueError, match=r"^a: a 4 x 4 view with strides \(16, 2\) \(in elements\)"):
        rungs.gemm(FakeCudaArray(big[::2, ::2]), fake((4, 4)))
    with pytest.raises(ValueError, match=r"^b: a 4 x 4 view with strides \(2, 16\)"):
        rungs.gemm(fake((4, 4)), FakeCudaArray(big[::2, ::2].T))
    with pytest.raises(ValueError, match=r"^out: a 4 x 4 view"):
        rungs.gemm(fake((4, 4)), fake((4, 4)), FakeCudaArray(big[::2, ::2]))
    with pytest.raises(ValueError, match=r"^a: a 4 x 4 view"):
        rungs.gemv(FakeCudaArray(big[::2, ::2]), fake((4,)))
    with pytest.raises(ValueError, match=r"^x: element stride 2; rungs.reduce_sum takes contiguous elements"):
        rungs.reduce_sum(FakeCudaArray(np.zeros(8, f32)[::2]))
    # Rows shorter than their stride would overlap: also refused.
    over = np.lib.stride_tricks.as_strided(np.zeros(16, f32), shape=(4, 4), strides=(8, 4))
    with pytest.raises(ValueError, match=r"^a: a 4 x 4 view with strides \(2, 1\)"):
        rungs.gemm(FakeCudaArray(over), fake((4, 4)))


def test_gemv_shapes_and_dtypes():
    with pytest.raises(ValueError, match="^x: 4 elements; a is 3 x 5, so x needs 5"):
        rungs.gemv(fake((3, 5)), fake((4,)))
    with pytest.raises(ValueError, match=r"^x: 5 elements; a is 3 x 5, so x needs 3 \(trans=True\)"):
        rungs.gemv(fake((3, 5)), fake((5,)), trans=True)
    with pytest.raises(ValueError, match="^out: 5 elements; the product has 3"):
        rungs.gemv(fake((3, 5)), fake((5,)), fake((5,)))
    with pytest.raises(ValueError, match="^a: dtype float16; rungs.gemv takes float32"):
        rungs.gemv(fake((3, 5), np.float16), fake((5,)))
    with pytest.raises(ValueError, match="^x: a 2-D array"):
        rungs.gemv(fake((3, 5)), fake((5, 1)))
    with pytest.raises(ValueError, match="^beta: 1.0 needs out="):
        rungs.gemv(fake((3, 5)), fake((5,)), beta=1.0)


def test_reduce_shapes_and_dtypes():
    with pytest.raises(ValueError, match=r"^x: a 2-D array of shape \(2, 2\); rungs.reduce_sum takes a 1-D"):
        rungs.reduce_sum(fake((2, 2)))
    with pytest.raises(ValueError, match="^x: dtype float16; rungs.reduce_sum takes int32, int64, float32, float64"):
        rungs.reduce_sum(fake((4,), np.float16))


def test_mixed_frameworks_and_devices():
    with pytest.raises(ValueError, match="^b: a otherframework array with a conftest array as a; one call takes "
                                         "arrays of one framework"):
        rungs.gemm(fake((2, 2)), OtherFakeCudaArray(np.zeros((2, 2), f32)))
    with pytest.raises(ValueError, match="^out: a otherframework array with a conftest array as a"):
        rungs.gemm(fake((2, 2)), fake((2, 2)), OtherFakeCudaArray(np.zeros((2, 2), f32)))
    with pytest.raises(ValueError, match="^b: on CUDA device 1, a on CUDA device 0; one call takes arrays on one "
                                         "device"):
        rungs.gemm(fake((2, 2)), fake((2, 2), device=1))
    with pytest.raises(ValueError, match="^x: on CUDA device 1, a on CUDA device 0"):
        rungs.gemv(fake((2, 2)), fake((2,), device=1))


def test_results_need_a_known_framework():
    # rungs allocates results with torch, CuPy or JAX; other producers pass out=.
    with pytest.raises(ValueError, match="^out: rungs allocates results with torch, CuPy, JAX or NumPy; for conftest "
                                         "arrays pass the result's array as out="):
        rungs.gemm(fake((2, 3)), fake((3, 4)))


def test_stream_argument():
    with pytest.raises(TypeError, match="^stream: str is not a stream"):
        rungs.gemm(fake((2, 2)), fake((2, 2)), fake((2, 2)), stream="s")


@needs_no_gpu
def test_a_call_that_reaches_the_library_without_a_device():
    # Every check passes; the library call fails with rungs.Error, and the DLPack producer was asked
    # for the stream the call runs on: the legacy default stream (1 in the DLPack protocol) ...
    a, b, c = fake((2, 3)), fake((3, 4)), fake((2, 4))
    with pytest.raises(rungs.Error):
        rungs.gemm(a, b, c, beta=1.0)
    assert a.streams == [1] and b.streams == [1] and c.streams == [1]
    # ... or the stream given.
    a, b, c = fake((2, 3)), fake((3, 4)), fake((2, 4))
    with pytest.raises(rungs.Error):
        rungs.gemm(a, b.T.T, c, stream=12345)
    assert a.streams == [12345] and c.streams == [12345]
    x = fake((3,))
    with pytest.raises(rungs.Error):
        rungs.gemv(fake((2, 3)), x, fake((2,)), stream=type("TorchLikeStream", (), {"cuda_stream": 777})())
    assert x.streams == [777]
    with pytest.raises(rungs.Error):
        rungs.resolve_variant("gemm", fake((2, 3)), fake((3, 4)))


@needs_no_gpu
def test_cuda_array_interface_without_a_device():
    class Cai:
        __cuda_array_interface__ = {"shape": (2, 2), "typestr": "<f4", "data": (4096, False), "version": 3,
                                    "strides": None}

    with pytest.raises(rungs.Error, match="cudaPointerGetAttributes"):
        rungs.gemm(Cai(), Cai(), Cai())


# -- gemm_host's checks (host arrays) ----------------------------------------------------------------

def test_gemm_host_checks():
    a = np.ones((3, 4), f32)
    with pytest.raises(ValueError, match=r"^b: shape \(3, 4\) does not match a's \(3, 4\) \(b needs 4 rows\)"):
        rungs.gemm_host(a, a)
    with pytest.raises(ValueError, match="^a: dtype float64; rungs.gemm_host takes float32, float16, bfloat16"):
        rungs.gemm_host(a.astype(np.float64), a.T.astype(np.float64))
    with pytest.raises(ValueError, match=r"^a: a 2 x 2 view with strides \(8, 2\)"):
        rungs.gemm_host(np.ones((4, 4), f32)[::2, ::2], np.ones((2, 2), f32))
    out = np.ones((3, 3), f32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="^out: a read-only array"):
        rungs.gemm_host(a, a.T, out)
    with pytest.raises(ValueError, match="^beta: 2 needs out="):
        rungs.gemm_host(a, a.T, beta=2)
    with pytest.raises(ValueError, match="^math: 'x'"):
        rungs.gemm_host(a, a.T, math="x")


@needs_no_gpu
def test_gemm_host_without_a_device():
    a = np.ones((3, 4), f32)
    with pytest.raises(rungs.Error, match="CUDA"):
        rungs.gemm_host(a, a.T)


# -- how views map onto the library's row-major storage ------------------------------------------------

def _arr(shape, strides):
    return ("x", 0, shape, strides, "float32", 0, None, False)


@pytest.mark.parametrize("shape, strides, want", [
    ((3, 4), (4, 1), (False, 4)),      # row-major
    ((3, 4), (10, 1), (False, 10)),    # row-major with padded rows (a slice of a wider matrix)
    ((3, 4), (1, 3), (True, 3)),       # a.T of a 4 x 3 row-major matrix: Trans::T, ld = 3
    ((3, 4), (1, 7), (True, 7)),       # the transpose of a padded one
    ((1, 4), (99, 1), (False, 4)),     # one row: its stride is irrelevant
    ((1, 4), (4, 5), (True, 5)),       # one row with a column stride: the transpose of a 4 x 1 matrix
    ((3, 1), (2, 7), (False, 2)),      # one column: any column stride
    ((0, 4), (0, 0), (False, 4)),      # empty: nothing is read
    ((1, 1), (0, 0), (False, 1)),
])
def test_matrix_layouts(shape, strides, want):
    from rungs import _core

    assert _core._matrix("a", _arr(shape, strides), "gemm") == want


@pytest.mark.parametrize("shape, strides", [((3, 4), (8, 2)), ((3, 4), (2, 1)), ((3, 4), (1, 2)),
                                            ((3, 4), (0, 1)), ((3, 4), (-4, 1))])
def test_matrix_layouts_refused(shape, strides):
    from rungs import _core

    with pytest.raises(ValueError, match="^a: a 3 x 4 view"):
        _core._matrix("a", _arr(shape, strides), "gemm")


def test_transposed_out_swaps_the_operands():
    # C^T = op(B)^T op(A)^T: a transposed out is the product of the swapped, flipped operands.
    from rungs import _core

    A = ("x", 100, (2, 3), (3, 1), "float32", 0, None, False)
    B = ("x", 200, (3, 5), (1, 3), "float32", 0, None, False)   # transposed view
    C = ("x", 300, (2, 5), (1, 2), "float32", 0, None, False)   # transposed view
    assert _core._gemm_args(C, False, True, A, 3, B, 3, 2, 5, 3) == (False, True, 5, 2, 200, 3, 100, 3, 2)
    Crow = ("x", 300, (2, 5), (5, 1), "float32", 0, None, False)
    assert _core._gemm_args(Crow, False, True, A, 3, B, 3, 2, 5, 3) == (False, True, 2, 5, 100, 3, 200, 3, 5)


def test_jax_cpu_arrays_are_not_device_arrays():
    jax = pytest.importorskip("jax")
    cpu = jax.devices("cpu")[0]  # JAX's default device is a GPU where one is usable
    a = jax.device_put(jax.numpy.ones((3, 3), jax.numpy.float32), cpu)
    with pytest.raises(ValueError, match="^a: a JAX array in host memory; rungs.gemm takes arrays on a CUDA device"):
        rungs.gemm(a, a)
    with pytest.raises(ValueError, match="^x: a JAX array in host memory; rungs.reduce_sum"):
        rungs.reduce_sum(jax.device_put(jax.numpy.ones(3, jax.numpy.float32), cpu))
