"""rungs' operations as PyTorch custom operators (torch.library), registered when torch is
importable (torch 2.4 or newer): torch.ops.rungs.gemm, gemm_out, gemv, gemv_out, reduce_sum,
scaled_mm, scaled_mm_out, linear and linear_fp8.

Each has a fake implementation (shapes and dtypes) that makes every check the real call makes
before a kernel runs (rungs._core.validate_*: the same Python checks, and the library's own on the
variant, the math mode and the types), so torch.compile(fullgraph=True) traces a function that
calls rungs with no graph break and rejects at trace time what the call would reject; the *_out
operators declare that they write `out`. gemm, gemv, reduce_sum and linear have backward formulas
(the products run on rungs; gemv's weight gradient is torch.outer); the fp8 ones have none.

rungs.gemm and the others call these operators only where the direct path cannot serve: while
torch.compile traces, for tensor subclasses (fake tensors, functional tensors), meta tensors, and
tensors that need gradients. Plain CUDA tensors in eager mode take the direct path (_core), which
is the same real implementation without the dispatcher's per-call cost.
"""

from typing import Optional, Tuple

import torch

from . import _arrays, _core
from . import _epilogue
from . import _linear as _linear_mod

_PLAIN = (torch.Tensor, torch.nn.Parameter)
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
AVAILABLE = hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd")


def _name(dtype):
    return _arrays._torch_dtype_name(dtype)


def route(*tensors):
    """True where a call with these arguments goes through the torch operators."""
    if not AVAILABLE:
        return False
    if _is_compiling():
        return True
    grad = torch.is_grad_enabled()
    for t in tensors:
        if isinstance(t, torch.Tensor) and (type(t) not in _PLAIN or t.is_meta or (grad and t.requires_grad)):
            return True
    return False


def _meta(t):
    """What the checks read of a tensor: (shape, strides, dtype name)."""
    return tuple(t.shape), t.stride(), _name(t.dtype)


def _stream(stream):
    return stream if stream is None or isinstance(stream, int) else _arrays.stream_handle(stream)


if AVAILABLE:
    Tensor = torch.Tensor

    # -- gemm -------------------------------------------------------------------------------

    @torch.library.custom_op("rungs::gemm", mutates_args=())
    def _gemm(a: Tensor, b: Tensor, alpha: float, variant: str, math: str, stream: Optional[int]) -> Tensor:
        return _core._gemm_impl(a, b, None, alpha, 0.0, variant, math, stream)

    @_gemm.register_fake
    def _gemm_fake(a, b, alpha, variant, math, stream):
        m, n = _core.validate_gemm(_meta(a), _meta(b), None, 0.0, variant, math)
        return a.new_empty((m, n))

    def _gemm_setup(ctx, inputs, output):
        a, b, alpha, variant, math, stream = inputs
        ctx.save_for_backward(a, b)
        ctx.args = (alpha, variant, math, stream)

    def _gemm_backward(ctx, grad):
        a, b = ctx.saved_tensors
        alpha, variant, math, stream = ctx.args
        g = grad.contiguous()
        ga = _gemm(g, b.mT, alpha, variant, math, stream) if ctx.needs_input_grad[0] else None
        gb = _gemm(a.mT, g, alpha, variant, math, stream) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None, None, None

    torch.library.register_autograd("rungs::gemm", _gemm_backward, setup_context=_gemm_setup)

    @torch.library.custom_op("rungs::gemm_out", mutates_args=("out",))
    def _gemm_out(a: Tensor, b: Tensor, out: Tensor, alpha: float, beta: float, variant: str, math: str,
                  stream: Optional[int]) -> None:
        _core._gemm_impl(a, b, out, alpha, beta, variant, math, stream)

    @_gemm_out.register_fake
    def _gemm_out_fake(a, b, out, alpha, beta, variant, math, stream):
        _core.validate_gemm(_meta(a), _meta(b), _meta(out), beta, variant, math)

    # -- gemv -------------------------------------------------------------------------------

    @torch.library.custom_op("rungs::gemv", mutates_args=())
    def _gemv(a: Tensor, x: Tensor, trans: bool, alpha: float, variant: str, stream: Optional[int]) -> Tensor:
        return _core._gemv_impl(a, x, None, trans, alpha, 0.0, variant, stream)

    @_gemv.register_fake
    def _gemv_fake(a, x, trans, alpha, variant, stream):
        y_len = _core.validate_gemv(_meta(a), _meta(x), None, trans, 0.0, variant)
        return a.new_empty((y_len,))

    def _gemv_setup(ctx, inputs, output):
        a, x, trans, alpha, variant, stream = inputs
        ctx.save_for_backward(a, x)
        ctx.args = (trans, alpha, variant, stream)

    def _gemv_backward(ctx, grad):
        a, x = ctx.saved_tensors
        trans, alpha, variant, stream = ctx.args
        g = grad.contiguous()
        ga = gx = None
        if ctx.needs_input_grad[0]:  # y = alpha A x: dA = alpha g x^T;  y = alpha A^T x: dA = alpha x g^T
            ga = torch.outer(x, g) if trans else torch.outer(g, x)
            ga = ga * alpha
        if ctx.needs_input_grad[1]:  # dx = alpha op(A)^T g
            gx = _gemv(a, g, not trans, alpha, variant, stream)
        return ga, gx, None, None, None, None

    torch.library.register_autograd("rungs::gemv", _gemv_backward, setup_context=_gemv_setup)

    @torch.library.custom_op("rungs::gemv_out", mutates_args=("out",))
    def _gemv_out(a: Tensor, x: Tensor, out: Tensor, trans: bool, alpha: float, beta: float, variant: str,
                  stream: Optional[int]) -> None:
        _core._gemv_impl(a, x, out, trans, alpha, beta, variant, stream)

    @_gemv_out.register_fake
    def _gemv_out_fake(a, x, out, trans, alpha, beta, variant, stream):
        _core.validate_gemv(_meta(a), _meta(x), _meta(out), trans, beta, variant)

    # -- reduce_sum ---------------------------------------------------------------------------

    @torch.library.custom_op("rungs::reduce_sum", mutates_args=())
    def _reduce_sum(x: Tensor, variant: str, stream: Optional[int]) -> Tensor:
        return _core._reduce_impl(x, variant, stream)

    @_reduce_sum.register_fake
    def _reduce_sum_fake(x, variant, stream):
        code = _core.validate_reduce(_meta(x), variant)
        return x.new_empty((), dtype=torch.int64 if code <= 1 else x.dtype)

    def _reduce_setup(ctx, inputs, output):
        ctx.n = inputs[0].shape[0]

    def _reduce_backward(ctx, grad):
        return grad.expand(ctx.n), None, None

    torch.library.register_autograd("rungs::reduce_sum", _reduce_backward, setup_context=_reduce_setup)


    # -- scaled_mm (fp8) ----------------------------------------------------------------------

    @torch.library.custom_op("rungs::scaled_mm", mutates_args=())
    def _scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out_dtype: torch.dtype, alpha: float,
                   variant: str, stream: Optional[int]) -> Tensor:
        return _core._scaled_impl(a, b, scale_a, scale_b, None, out_dtype, alpha, 0.0, variant, stream)

    @_scaled_mm.register_fake
    def _scaled_mm_fake(a, b, scale_a, scale_b, out_dtype, alpha, variant, stream):
        m, n, dt = _core.validate_scaled_mm(_meta(a), _meta(b), _meta(scale_a), _meta(scale_b), None, out_dtype, 0.0,
                                            variant)
        return a.new_empty((m, n), dtype=_arrays.TORCH_DTYPE_OF[dt])

    @torch.library.custom_op("rungs::scaled_mm_out", mutates_args=("out",))
    def _scaled_mm_out(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out: Tensor, alpha: float,
                       beta: float, variant: str, stream: Optional[int]) -> None:
        _core._scaled_impl(a, b, scale_a, scale_b, out, None, alpha, beta, variant, stream)

    @_scaled_mm_out.register_fake
    def _scaled_mm_out_fake(a, b, scale_a, scale_b, out, alpha, beta, variant, stream):
        _core.validate_scaled_mm(_meta(a), _meta(b), _meta(scale_a), _meta(scale_b), _meta(out), None, beta, variant)

    # -- linear -------------------------------------------------------------------------------

    @torch.library.custom_op("rungs::linear", mutates_args=())
    def _linear(x: Tensor, weight: Tensor, bias: Optional[Tensor], variant: str, math: str,
                stream: Optional[int]) -> Tensor:
        return _linear_mod.linear_impl(x, weight, bias, variant, math, stream)

    @_linear.register_fake
    def _linear_fake(x, weight, bias, variant, math, stream):
        shape = _linear_mod.validate_linear(x, weight, bias, variant, math)
        return x.new_empty(shape)

    def _linear_setup(ctx, inputs, output):
        x, weight, bias, variant, math, stream = inputs
        ctx.save_for_backward(x, weight)
        ctx.args = (variant, math, stream)
        ctx.has_bias = bias is not None

    def _linear_backward(ctx, grad):
        x, weight = ctx.saved_tensors
        variant, math, stream = ctx.args
        n, k = weight.shape
        g = grad.reshape(-1, n).contiguous()
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:  # dx = g W
            gx = _gemm(g, weight, 1.0, variant, math, stream).reshape(x.shape)
        if ctx.needs_input_grad[1]:  # dW = g^T x
            gw = _gemm(g.mT, x.reshape(-1, k), 1.0, variant, math, stream)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g.sum(0)
        return gx, gw, gb, None, None, None

    torch.library.register_autograd("rungs::linear", _linear_backward, setup_context=_linear_setup)

    @torch.library.custom_op("rungs::linear_fp8", mutates_args=())
    def _linear_fp8(x: Tensor, weight: Tensor, weight_scale: Tensor, x_scale: Optional[Tensor], bias: Optional[Tensor],
                    out_dtype: Optional[torch.dtype], variant: str, stream: Optional[int]) -> Tensor:
        return _linear_mod.linear_fp8_impl(x, weight, weight_scale, x_scale, bias, out_dtype, variant, stream)

    @_linear_fp8.register_fake
    def _linear_fp8_fake(x, weight, weight_scale, x_scale, bias, out_dtype, variant, stream):
        shape, dt = _linear_mod.validate_linear_fp8(x, weight, weight_scale, x_scale, bias, out_dtype, variant)
        return x.new_empty(shape, dtype=dt)


if AVAILABLE:
    # -- gemm with an epilogue (no backward formula) -----------------------------------------

    @torch.library.custom_op("rungs::gemm_epilogue", mutates_args=())
    def _gemm_epilogue(a: Tensor, b: Tensor, bias: Optional[Tensor], activation: str, gated: bool, alpha: float,
                       variant: str, math: str, stream: Optional[int]) -> Tensor:
        return _epilogue.gemm_impl(a, b, None, alpha, 0.0, variant, math, stream, bias, activation, gated, None)

    @_gemm_epilogue.register_fake
    def _gemm_epilogue_fake(a, b, bias, activation, gated, alpha, variant, math, stream):
        m, n, _ = _epilogue.validate(_meta(a), _meta(b), None if bias is None else _meta(bias), activation, gated,
                                     None, variant, math)
        return a.new_empty((m, n))

    @torch.library.custom_op("rungs::gemm_epilogue_out", mutates_args=("out",))
    def _gemm_epilogue_out(a: Tensor, b: Tensor, out: Tensor, bias: Optional[Tensor], activation: str, gated: bool,
                           alpha: float, beta: float, variant: str, math: str, stream: Optional[int]) -> None:
        _epilogue.gemm_impl(a, b, out, alpha, beta, variant, math, stream, bias, activation, gated, None)

    @_gemm_epilogue_out.register_fake
    def _gemm_epilogue_out_fake(a, b, out, bias, activation, gated, alpha, beta, variant, math, stream):
        m, n, _ = _epilogue.validate(_meta(a), _meta(b), None if bias is None else _meta(bias), activation, gated,
                                     None, variant, math)
        if tuple(out.shape) != (m, n) or out.dtype != a.dtype:
            raise ValueError(f"out: shape {tuple(out.shape)} {_name(out.dtype)}, the result is {m} x {n} "
                             f"{_name(a.dtype)}")

    @torch.library.custom_op("rungs::gemm_epilogue_fp8", mutates_args=())
    def _gemm_epilogue_fp8(a: Tensor, b: Tensor, bias: Optional[Tensor], activation: str, gated: bool, alpha: float,
                           variant: str, math: str, stream: Optional[int]) -> Tuple[Tensor, Tensor]:
        return _epilogue.gemm_impl(a, b, None, alpha, 0.0, variant, math, stream, bias, activation, gated,
                                   _epilogue.FP8_OUT)

    @_gemm_epilogue_fp8.register_fake
    def _gemm_epilogue_fp8_fake(a, b, bias, activation, gated, alpha, variant, math, stream):
        m, n, _ = _epilogue.validate(_meta(a), _meta(b), None if bias is None else _meta(bias), activation, gated,
                                     _epilogue.FP8_OUT, variant, math)
        c_shape, s_shape = _epilogue.shapes(m, n)
        return a.new_empty(c_shape, dtype=torch.float8_e4m3fn), a.new_empty(s_shape, dtype=torch.float32)


# The entry points rungs.gemm and the others call when route() says so.

def gemm(a, b, out, alpha, beta, variant, math, stream):
    if out is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        return torch.ops.rungs.gemm(a, b, float(alpha), variant, math, _stream(stream))
    torch.ops.rungs.gemm_out(a, b, out, float(alpha), float(beta), variant, math, _stream(stream))
    return out


def gemv(a, x, out, trans, alpha, beta, variant, stream):
    if out is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the y that out= holds)")
        return torch.ops.rungs.gemv(a, x, bool(trans), float(alpha), variant, _stream(stream))
    torch.ops.rungs.gemv_out(a, x, out, bool(trans), float(alpha), float(beta), variant, _stream(stream))
    return out


def reduce_sum(x, variant, stream):
    return torch.ops.rungs.reduce_sum(x, variant, _stream(stream))


def scaled_mm(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream):
    if out is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        dt = _arrays.TORCH_DTYPE_OF.get(_core.dtype_name(out_dtype) or "bfloat16")
        if dt is None:
            raise ValueError(f"out_dtype: {out_dtype}; rungs.scaled_mm writes bfloat16, float32")
        return torch.ops.rungs.scaled_mm(a, b, scale_a, scale_b, dt, float(alpha), variant, _stream(stream))
    if out_dtype is not None and isinstance(out, torch.Tensor) and _core.dtype_name(out_dtype) != _name(out.dtype):
        raise ValueError(f"out: dtype {_name(out.dtype)}, out_dtype is {_core.dtype_name(out_dtype)}")
    torch.ops.rungs.scaled_mm_out(a, b, scale_a, scale_b, out, float(alpha), float(beta), variant, _stream(stream))
    return out


def gemm_epilogue(a, b, out, alpha, beta, variant, math, stream, bias, activation, gated, out_dtype):
    act = "none" if activation is None else activation
    if not isinstance(act, str):
        raise ValueError(f"activation: {activation!r} (must be None, 'relu', 'gelu' or 'silu')")
    if _core.dtype_name(out_dtype) not in (None, _name(a.dtype)):
        if out is not None:
            raise ValueError("out: with out_dtype=float8_e4m3fn rungs.gemm returns a new (c, c_scales)")
        if beta != 0:
            raise ValueError("beta: an fp8 output is quantized from the epilogue's result alone (beta must be 0)")
        if _core.dtype_name(out_dtype) != _epilogue.FP8_OUT:
            raise ValueError(f"out_dtype: {_core.dtype_name(out_dtype)}; rungs.gemm writes the inputs' dtype, or "
                             "float8_e4m3fn with block scales")
        return torch.ops.rungs.gemm_epilogue_fp8(a, b, bias, act, bool(gated), float(alpha), variant, math,
                                                 _stream(stream))
    if out is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        return torch.ops.rungs.gemm_epilogue(a, b, bias, act, bool(gated), float(alpha), variant, math,
                                             _stream(stream))
    torch.ops.rungs.gemm_epilogue_out(a, b, out, bias, act, bool(gated), float(alpha), float(beta), variant, math,
                                      _stream(stream))
    return out
