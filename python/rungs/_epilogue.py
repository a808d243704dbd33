"""rungs.gemm's epilogue keywords: bias, activation, gated and out_dtype=float8_e4m3fn
(include/rungs/rungs.hpp, Epilogue; docs/epilogue.md). The checks (ValueError naming the argument),
the call, and the shapes the torch operators' fakes return."""

from . import _arrays, _core, _rungs
from ._arrays import device_array, dlpack_stream

ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "silu": 3}
FP8_OUT = "float8_e4m3fn"


def wanted(bias, activation, gated, out_dtype):
    """Whether a gemm call asks for an epilogue."""
    return bias is not None or activation not in (None, "none") or bool(gated) or out_dtype is not None


def check(a_shape, a_dtype, b_shape, b_dtype, bias_shape, bias_dtype, c_shape, c_dtype, activation, gated, out_dtype,
          beta):
    """The epilogue call's checks on shapes and dtypes (c_shape None: no out=, bias_shape None: no
    bias): (dtype code, m, n, k, activation code, fp8 output). With gated, b has 2n columns."""
    op = "gemm"
    act = ACTIVATIONS.get(activation) if activation is None or isinstance(activation, str) else None
    if act is None:
        raise ValueError(f"activation: {activation!r} (must be None, 'relu', 'gelu' or 'silu')")
    out = _core.dtype_name(out_dtype)
    fp8 = out is not None and out != a_dtype
    if fp8 and out != FP8_OUT:
        raise ValueError(f"out_dtype: {out}; rungs.gemm writes the inputs' dtype, or float8_e4m3fn with block scales")
    if fp8 and a_dtype != "bfloat16":
        raise ValueError(f"out_dtype: float8_e4m3fn takes bfloat16 inputs (a is {a_dtype})")
    code, m, nb, k = _core.check_gemm(op, a_shape, a_dtype, b_shape, b_dtype, None, None, 0.0)
    if gated and nb % 2:
        raise ValueError(f"b: {nb} columns; gated=True takes 2n (the gate's n columns, then the up projection's n)")
    n = nb // 2 if gated else nb
    if c_shape is not None:
        if fp8:
            raise ValueError("out: with out_dtype=float8_e4m3fn rungs.gemm returns a new (c, c_scales)")
        if c_dtype != a_dtype:
            raise ValueError(f"out: dtype {c_dtype}, a's is {a_dtype}; rungs.gemm writes the inputs' dtype")
        if tuple(c_shape) != (m, n):
            raise ValueError(f"out: shape {tuple(c_shape)}, the result is {m} x {n}" + (" (gated)" if gated else ""))
    elif beta != 0:
        raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
    if bias_shape is not None:
        want = "float32" if fp8 else a_dtype
        if tuple(bias_shape) != (nb,):
            raise ValueError(f"bias: shape {tuple(bias_shape)}; a 1-D array of {nb} values"
                             + (" (2n: gated)" if gated else ""))
        if bias_dtype != want:
            raise ValueError(f"bias: dtype {bias_dtype}; {want} (" + ("float32 with an fp8 output" if fp8 else
                                                                        "the inputs' dtype") + ")")
    return code, m, n, k, act, fp8


def shapes(m, n):
    """The results' shapes: C, and an fp8 output's scales (m x ceil(n/128))."""
    return (m, n), (m, (n + 127) // 128)


def validate(a_meta, b_meta, bias_meta, activation, gated, out_dtype, variant, math):
    """The fakes' checks (metas: (shape, strides, dtype name), bias_meta None: no bias): the
    checks above and the library's own. Returns (m, n, fp8 output)."""
    mcode = _core._check_scalars("gemm", variant, math)
    bs, bd = (None, None) if bias_meta is None else (bias_meta[0], bias_meta[2])
    code, m, n, _, act, fp8 = check(a_meta[0], a_meta[2], b_meta[0], b_meta[2], bs, bd, None, None, activation, gated,
                                    out_dtype, 0.0)
    _core._matrix("a", (None, None, a_meta[0], a_meta[1]), "gemm")
    _core._matrix("b", (None, None, b_meta[0], b_meta[1]), "gemm")
    _rungs.check_gemm_epilogue(code, mcode, act, bool(gated), fp8, variant)
    return m, n, fp8


def gemm_impl(a, b, out, alpha, beta, variant, math, stream, bias, activation, gated, out_dtype):
    """The call on device arrays: C, or (C, c_scales) for an fp8 output."""
    mcode = _core._check_scalars("gemm", variant, math)
    A, B, C, s, current = _core._operands("gemm", a, b, "b", out, stream)
    BI = None
    if bias is not None:
        BI = device_array(bias, "bias", "gemm", dlpack_stream(s))
        _core._same_framework("bias", BI, "a", A)
    bs, bd = (None, None) if BI is None else (BI[2], BI[4])
    code, m, n, k, act, fp8 = check(A[2], A[4], B[2], B[4], bs, bd, *_core._shape_dtype(C), activation, gated,
                                    out_dtype, beta)
    if BI is not None and len(BI[3]) == 1 and BI[2][0] > 1 and BI[3][0] != 1:
        raise ValueError(f"bias: element stride {BI[3][0]}; rungs reads the bias as contiguous values")
    ta, lda = _core._matrix("a", A, "gemm")
    tb, ldb = _core._matrix("b", B, "gemm")
    _rungs.check_gemm_epilogue(code, mcode, act, bool(gated), fp8, variant)
    framework, device = A[0], A[5]
    c_shape, s_shape = shapes(m, n)
    result, scales, S = out, None, None
    if C is None:
        result = _arrays.empty(framework, a, c_shape, FP8_OUT if fp8 else A[4], device, "out")
        C = device_array(result, "out", "gemm", dlpack_stream(s))
    tc, ldc = _core._matrix("out", C, "gemm")
    if tc:
        raise ValueError("out: a transposed view (unit row stride); with an epilogue rungs.gemm writes a row-major "
                         "out (unit column stride)")
    if fp8:
        scales = _arrays.empty(framework, a, s_shape, "float32", device, "c_scales")
        S = device_array(scales, "c_scales", "gemm", dlpack_stream(s))
    if stream is not None or any(x is not None and x[6] is not None for x in (A, B, C, BI)):
        _core._order(s, current, device, tuple(x for x in (A, B, C, BI) if x is not None))
    _rungs.gemm_epilogue(code, ta, tb, m, n, k, float(alpha), A[1], lda, B[1], ldb, float(beta), C[1], ldc,
                         0 if BI is None else BI[1], act, bool(gated), fp8, 0 if S is None else S[1], variant, mcode,
                         s, device)
    if framework == "jax":  # JAX cannot be told about work on another stream: wait for it here
        _rungs.stream_synchronize(s, device)
    return (result, scales) if fp8 else result
