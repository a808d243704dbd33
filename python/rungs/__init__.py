"""rungs: GPU linear-algebra kernels as ladders of rungs, each verified against fp64 and timed
beside the vendor library, called on the arrays you already hold (PyTorch, CuPy, JAX, anything
that speaks DLPack or __cuda_array_interface__), without copies.

    import rungs, torch
    a = torch.randn(4096, 4096, device="cuda")
    c = rungs.gemm(a, a.T)                  # a torch tensor, on torch's current stream

The reference: docs/python.md in the repository.
"""

from . import _arrays, _core, _rungs
from ._rungs import Error, Unsupported, VariantInfo

__version__ = _rungs.__version__

for _cls in (Error, Unsupported, VariantInfo):
    _cls.__module__ = "rungs"

if _arrays._torch is not None:
    from . import _torch_ops

    _route = _torch_ops.route if _torch_ops.AVAILABLE else None
    _Tensor, _Parameter = _arrays._torch.Tensor, _arrays._torch.nn.Parameter
else:  # pragma: no cover - depends on the environment
    _torch_ops = None
    _route = None
    _Tensor = _Parameter = None

__all__ = ["gemm", "gemv", "reduce_sum", "gemm_host", "variants", "resolve_variant", "Error", "Unsupported",
           "VariantInfo", "__version__"]


def gemm(a, b, out=None, *, alpha=1.0, beta=0.0, variant="auto", math="fp32", stream=None):
    """C = alpha * a @ b + beta * C on a CUDA device.

    a (m x k) and b (k x n): 2-D arrays of one dtype (float32, float16, bfloat16) on one device,
    each a row-major view (unit column stride) or a transposed one (unit row stride, e.g. x.T).
    out: an m x n array that receives C (beta scales what it holds); without it, a new array of the
    inputs' framework (beta must then be 0). math: "fp32", "tf32" or "tf32x3" (float32 only).
    variant: a rung's name from rungs.variants("gemm"), or "auto". stream: None (the framework's
    current stream), an int handle, or a stream object (.cuda_stream, .ptr or __cuda_stream__).
    Returns out, or the new array.
    """
    if stream is None and (type(a) is _Tensor or type(a) is _Parameter):
        c = _core.gemm_torch(a, b, out, alpha, beta, variant, math)
        if c is not None:
            return c
    if _route is not None and _route(a, b, out):
        return _torch_ops.gemm(a, b, out, alpha, beta, variant, math, stream)
    return _core._gemm_impl(a, b, out, alpha, beta, variant, math, stream)


def gemv(a, x, out=None, *, trans=False, alpha=1.0, beta=0.0, variant="auto", stream=None):
    """y = alpha * op(a) @ x + beta * y on a CUDA device, op(a) = a or a.T (trans=True).

    a: a 2-D float32 array (row-major or transposed view); x, out: 1-D float32 arrays of any
    positive element stride. The other arguments as for gemm. Returns out, or the new array.
    """
    if _route is not None and _route(a, x, out):
        return _torch_ops.gemv(a, x, out, trans, alpha, beta, variant, stream)
    return _core._gemv_impl(a, x, out, trans, alpha, beta, variant, stream)


def reduce_sum(x, *, variant="auto", stream=None):
    """The sum of a contiguous 1-D array on a CUDA device, as a 0-d array on that device: int64 for
    int32 and int64 input (int32 summed exactly, int64 modulo 2^64), float32 / float64 otherwise
    (the "auto" sum is accurate and bitwise reproducible)."""
    if _route is not None and _route(x):
        return _torch_ops.reduce_sum(x, variant, stream)
    return _core._reduce_impl(x, variant, stream)


def gemm_host(a, b, out=None, *, alpha=1.0, beta=0.0, variant="auto", math="fp32"):
    """gemm on arrays in host memory (NumPy arrays, CPU torch tensors; pageable or pinned), on the
    current CUDA device; returns when the result is in out (or the new array). The copies in, the
    products and the copies out overlap on the library's own streams; the GIL is released meanwhile.
    """
    return _core._gemm_host_impl(a, b, out, alpha, beta, variant, math)


def variants(op):
    """The rungs of a ladder (op: "gemm", "gemv" or "reduce"), in ladder order, the vendor's
    baseline included: objects with name, summary, rung, min_sm, baseline and types."""
    if not isinstance(op, str):
        raise _arrays.ArgumentTypeError(f"op: {op!r} is not a str ('gemm', 'gemv' or 'reduce')")
    return _rungs.variants(op)


def resolve_variant(op, *args, **kwargs):
    """The rung variant="auto" runs for these arguments on their device: op is "gemm", "gemv" or
    "reduce" and the other arguments are the call's own (rungs.resolve_variant("gemm", a, b)).
    With variant= a rung's name, that name (after checking that it exists)."""
    if op == "gemm":
        return _core._resolve_gemm(*args, **kwargs)
    if op == "gemv":
        return _core._resolve_gemv(*args, **kwargs)
    if op == "reduce":
        return _core._resolve_reduce(*args, **kwargs)
    raise ValueError(f"op: {op!r} (must be 'gemm', 'gemv' or 'reduce')")
