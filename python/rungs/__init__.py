"""rungs: GPU linear-algebra kernels as ladders of rungs, each verified against fp64 and timed
beside the vendor library, called on the arrays you already hold (PyTorch, CuPy, JAX, anything
that speaks DLPack or __cuda_array_interface__), without copies.

    import rungs, torch
    a = torch.randn(4096, 4096, device="cuda")
    c = rungs.gemm(a, a.T)                  # a torch tensor, on torch's current stream
    y = rungs.linear(x, weight, bias)       # F.linear's semantics
    c = rungs.scaled_mm(a8, b8, sa, sb)     # fp8, the scaling read off the scales' shapes

The reference: docs/python.md in the repository.
"""

from . import _arrays, _core, _epilogue, _rungs, dist
from ._rungs import Error, Unsupported, VariantInfo

__version__ = _rungs.__version__

for _cls in (Error, Unsupported, VariantInfo):
    _cls.__module__ = "rungs"

if _arrays._torch is not None:
    from . import _linear, _torch_ops

    _route = _torch_ops.route if _torch_ops.AVAILABLE else None
    _Tensor, _Parameter = _arrays._torch.Tensor, _arrays._torch.nn.Parameter
else:  # pragma: no cover - depends on the environment
    _torch_ops = _linear = None
    _route = None
    _Tensor = _Parameter = None

__all__ = ["gemm", "gemv", "reduce_sum", "gemm_host", "scaled_mm", "linear", "variants", "resolve_variant", "dist",
           "Error", "Unsupported", "VariantInfo", "__version__"]


def gemm(a, b, out=None, *, alpha=1.0, beta=0.0, variant="auto", math="fp32", stream=None, bias=None,
         activation=None, gated=False, out_dtype=None):
    """C = alpha * a @ b + beta * C on a CUDA device, with an optional epilogue.

    a (m x k) and b (k x n): 2-D arrays of one dtype (float32, float16, bfloat16) on one device,
    each a row-major view (unit column stride) or a transposed one (unit row stride, e.g. x.T).
    out: an m x n array that receives C (beta scales what it holds); without it, a new array of the
    inputs' framework (beta must then be 0). math: "fp32", "tf32" or "tf32x3" (float32 only).
    variant: a rung's name from rungs.variants("gemm"), or "auto". stream: None (the framework's
    current stream), an int handle, or a stream object (.cuda_stream, .ptr or __cuda_stream__).
    Returns out, or the new array.

    The epilogue (docs/epilogue.md), with P = alpha * a @ b: C = act(P + bias) + beta * C; with
    gated=True b has 2n columns (the gate's n, then the up projection's n) and
    C = act(P[:, :n] + bias[:n]) * (P[:, n:] + bias[n:]) + beta * C. bias: n values (2n gated) of
    the inputs' dtype; activation: None, "relu", "gelu" (tanh approximation) or "silu".
    out_dtype=float8_e4m3fn (bfloat16 inputs, beta 0, no out=): returns (c, c_scales), c in e4m3
    and c_scales float32 m x ceil(n/128), one per row and 128-column block (max |C| / 448).
    """
    if _epilogue.wanted(bias, activation, gated, out_dtype):
        if _route is not None and _route(a, b, out, bias):
            return _torch_ops.gemm_epilogue(a, b, out, alpha, beta, variant, math, stream, bias, activation, gated,
                                            out_dtype)
        return _epilogue.gemm_impl(a, b, out, alpha, beta, variant, math, stream, bias, activation, gated, out_dtype)
    if stream is None and (type(a) is _Tensor or type(a) is _Parameter):
        c = _core.gemm_torch(a, b, out, alpha, beta, variant, math)
        if c is not None:
            return c
    if _route is not None and _route(a, b, out):
        return _torch_ops.gemm(a, b, out, alpha, beta, variant, math, stream)
    return _core._gemm_impl(a, b, out, alpha, beta, variant, math, stream)


def scaled_mm(a, b, scale_a, scale_b, *, out=None, out_dtype=None, alpha=1.0, beta=0.0, variant="auto", stream=None):
    """C = alpha * (scale_a * a) @ (scale_b * b) + beta * C on fp8 inputs, on a CUDA device.

    a (m x k), b (k x n): float8_e4m3fn or float8_e5m2 (either, each), row-major or transposed
    views. scale_a, scale_b: float32 on the same device; their shapes pick the scaling:
    tensor (one value each), outer (scale_a (m,) or (m, 1): one per row of a; scale_b (n,) or
    (1, n): one per column of b), block128 (scale_a (m, ceil(k/128)): 1 x 128 blocks along k;
    scale_b (ceil(n/128), ceil(k/128)): 128 x 128 blocks of b, n by k). out_dtype: bfloat16
    (default) or float32; out: an m x n array of that dtype (beta scales what it holds).
    Returns out, or the new array.
    """
    if _route is not None and _route(a, b, scale_a, scale_b, out):
        return _torch_ops.scaled_mm(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream)
    return _core._scaled_impl(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream)


def linear(x, weight, bias=None, *, weight_scale=None, x_scale=None, out_dtype=None, variant="auto", math="fp32",
           stream=None, activation=None, gated=False):
    """y = x @ weight.T + bias, torch.nn.functional.linear's semantics, on torch CUDA tensors.

    x (..., k), weight (n, k), bias (n) or None; y (..., n). float32 (math "fp32", "tf32",
    "tf32x3"), float16 or bfloat16, one dtype; gradients flow to x, weight and bias. An fp8
    weight (float8_e4m3fn / float8_e5m2) takes its scales as weight_scale= (one value; (n,): one
    per output feature; (ceil(n/128), ceil(k/128)): 128 x 128 blocks), and x either fp8 with
    x_scale= in the matching layout, or float (quantized to float8_e4m3fn here, per tensor, per
    row, or per row and 128 columns); out_dtype bfloat16 or float32 (default: x's dtype where it is
    one of those, else bfloat16); no gradients.

    The epilogue keywords of rungs.gemm (docs/epilogue.md), for a weight of x's dtype:
    activation None, "relu", "gelu" (tanh approximation) or "silu" on y; gated=True reads weight as
    (2n, k), the gate's n rows then the up projection's n, bias as 2n values, and returns
    act(x W_gate^T + b_gate) * (x W_up^T + b_up), (..., n); out_dtype=float8_e4m3fn (bfloat16 x)
    returns (y, y_scales), y in e4m3 with one float32 scale per row and 128 columns (..., ceil(n/128)).
    These run forward only: the result carries no gradient.
    """
    if activation not in (None, "none") or gated or (
            weight_scale is None and _core.dtype_name(out_dtype) == _epilogue.FP8_OUT):
        return _linear_epilogue(x, weight, bias, weight_scale, out_dtype, variant, math, stream, activation, gated)
    if _linear is None or not isinstance(x, _Tensor):
        raise _arrays.ArgumentTypeError(f"x: {type(x).__qualname__} is not a torch tensor; rungs.linear takes torch "
                                        "tensors (rungs.gemm takes any array)")
    if not isinstance(weight, _Tensor):
        raise _arrays.ArgumentTypeError(f"weight: {type(weight).__qualname__} is not a torch tensor; rungs.linear "
                                        "takes torch tensors")
    if weight_scale is None:
        if x_scale is not None:
            raise ValueError("x_scale: given without weight_scale; scales go with an fp8 weight")
        if out_dtype is not None and _core.dtype_name(out_dtype) != _arrays._torch_dtype_name(x.dtype):
            raise ValueError(f"out_dtype: {_core.dtype_name(out_dtype)}; rungs.linear on "
                             f"{_arrays._torch_dtype_name(x.dtype)} writes {_arrays._torch_dtype_name(x.dtype)} "
                             "(out_dtype is for fp8 weights)")
        if stream is None:
            y = _core.linear_torch(x, weight, bias, variant, math)
            if y is not None:
                return y
        if _route is not None and _route(x, weight, bias):
            return _arrays._torch.ops.rungs.linear(x, weight, bias, variant, math, _torch_ops._stream(stream))
        return _linear.linear_impl(x, weight, bias, variant, math, stream)
    if math != "fp32":
        raise ValueError(f"math: {math!r} with an fp8 weight; math modes apply to float32 inputs only")
    dt = None if out_dtype is None else _arrays.TORCH_DTYPE_OF.get(_core.dtype_name(out_dtype))
    if out_dtype is not None and dt is None:
        raise ValueError(f"out_dtype: {_core.dtype_name(out_dtype)}; rungs.linear with an fp8 weight writes bfloat16 "
                         "or float32")
    if _route is not None and _route(x, weight, weight_scale, x_scale, bias):
        return _arrays._torch.ops.rungs.linear_fp8(x, weight, weight_scale, x_scale, bias, dt, variant,
                                                   _torch_ops._stream(stream))
    return _linear.linear_fp8_impl(x, weight, weight_scale, x_scale, bias, dt, variant, stream)


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


def _linear_epilogue(x, weight, bias, weight_scale, out_dtype, variant, math, stream, activation, gated):
    """rungs.linear with an activation, the gated product or an fp8 output: rungs.gemm's epilogue on
    x viewed as (M, k) and weight.T."""
    if _linear is None or not isinstance(x, _Tensor) or not isinstance(weight, _Tensor):
        raise _arrays.ArgumentTypeError("rungs.linear takes torch tensors (rungs.gemm takes any array)")
    if weight_scale is not None:
        raise ValueError("activation, gated: rungs.linear applies them to a weight of x's dtype (an fp8 weight "
                         "takes its epilogue through rungs.gemm)")
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"x: shape {tuple(x.shape)}, weight: shape {tuple(weight.shape)}; linear takes x (..., k) "
                         "and weight (n, k) (2n rows with gated)")
    k = weight.shape[1]
    r = gemm(x.reshape(-1, k), weight.T, variant=variant, math=math, stream=stream, bias=bias,
             activation=activation, gated=gated, out_dtype=out_dtype)
    lead = tuple(x.shape[:-1])
    if isinstance(r, tuple):
        c, s = r
        return c.view(lead + (c.shape[-1],)), s.view(lead + (s.shape[-1],))
    return r.view(lead + (r.shape[-1],))


def gemm_host(a, b, out=None, *, alpha=1.0, beta=0.0, variant="auto", math="fp32"):
    """gemm on arrays in host memory (NumPy arrays, CPU torch tensors; pageable or pinned), on the
    current CUDA device; returns when the result is in out (or the new array). The copies in, the
    products and the copies out overlap on the library's own streams; the GIL is released meanwhile.
    """
    return _core._gemm_host_impl(a, b, out, alpha, beta, variant, math)


def variants(op):
    """The rungs of a ladder (op: "gemm", "gemv", "reduce", or the NCCL ladder's "allgather_gemm"
    and "gemm_reducescatter" where the build has it), in ladder order, the vendor's baseline
    included: objects with name, summary, rung, min_sm, baseline and types. scaled_mm and linear
    run the gemm ladder's rungs."""
    if not isinstance(op, str):
        raise _arrays.ArgumentTypeError(f"op: {op!r} is not a str ('gemm', 'gemv' or 'reduce')")
    return _rungs.variants(op)


def resolve_variant(op, *args, **kwargs):
    """The rung variant="auto" runs for these arguments on their device: op is "gemm", "scaled_mm",
    "gemv" or "reduce" and the other arguments are the call's own (rungs.resolve_variant("gemm", a,
    b)). With variant= a rung's name, that name (after checking that it exists)."""
    if op == "gemm":
        return _core._resolve_gemm(*args, **kwargs)
    if op == "scaled_mm":
        return _core._resolve_scaled_mm(*args, **kwargs)
    if op == "gemv":
        return _core._resolve_gemv(*args, **kwargs)
    if op == "reduce":
        return _core._resolve_reduce(*args, **kwargs)
    raise ValueError(f"op: {op!r} (must be 'gemm', 'scaled_mm', 'gemv' or 'reduce')")


if _linear is not None:
    from . import torch  # noqa: E402  (rungs.torch: swap_linears, quantize_fp8)
