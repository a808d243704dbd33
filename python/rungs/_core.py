"""rungs' Python API: the operations on arrays, mapped onto the C++ calls without copies.

Each operation reads its arrays (rungs._arrays), checks them (ValueError naming the argument),
maps each matrix view onto the library's row-major storage (a unit column stride: ld = the row
stride; a unit row stride, e.g. `a.T`: the transpose flag on the same memory), picks the stream,
allocates the result with the inputs' framework when no out= is given, and calls the extension
module, which releases the GIL while the library runs.
"""

from . import _arrays, _rungs
from ._arrays import current_stream, device_array, dlpack_stream, host_array, stream_handle

# The extension module's codes for element types and math modes.
_GEMM_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2}
_FP8_DTYPES = {"float8_e4m3fn": 0, "float8_e5m2": 1}
_FP8_OUT_DTYPES = {"bfloat16": 2, "float32": 0}
_SCALINGS = ("tensor", "outer", "block128")
_REDUCE_DTYPES = {"int32": 0, "int64": 1, "float32": 2, "float64": 3}
_MATH = {"fp32": 0, "tf32": 1, "tf32x3": 2}


def _same_framework(name, arr, first_name, first):
    if arr[0] != first[0]:
        raise ValueError(f"{name}: {_arrays.what(arr[0])} with {_arrays.what(first[0])} as {first_name}; one call "
                         "takes arrays of one framework")
    if arr[5] != first[5]:
        raise ValueError(f"{name}: on CUDA device {arr[5]}, {first_name} on CUDA device {first[5]}; one call takes "
                         "arrays on one device")


def _layout(r, c, sr, sc):
    """(transposed, ld): the library's row-major storage of an r x c view with strides (sr, sc) in
    elements, or None where it has none (no unit stride, overlapping rows, negative strides)."""
    if r == 0 or c == 0:  # nothing is read or written: any layout does
        return False, max(c, 1)
    if c == 1 or sc == 1:  # rows of unit stride: row-major, ld = the row stride
        if r == 1:
            return False, c
        if sr >= c:
            return False, sr
    if r == 1 or sr == 1:  # columns of unit stride: the transpose of a row-major c x r matrix
        if sc >= r:
            return True, sc
    return None


def _matrix(name, arr, op):
    """(transposed, ld) for a 2-D array: the library's row-major storage of this view."""
    shape, strides = arr[2], arr[3]
    if len(shape) != 2:
        raise ValueError(f"{name}: a {len(shape)}-D array of shape {tuple(shape)}; rungs.{op} takes a 2-D array here")
    r, c = shape
    sr, sc = strides
    layout = _layout(r, c, sr, sc)
    if layout is None:
        raise ValueError(f"{name}: a {r} x {c} view with strides ({sr}, {sc}) (in elements); rungs takes a view with "
                         "unit stride along one dimension and the other stride at least that dimension's length (a "
                         "row-major matrix, or a transposed one such as a.T); make a copy with unit strides first "
                         "(e.g. .contiguous())")
    return layout


def _vector(name, arr, op, length):
    """The element stride of a 1-D array of `length` elements."""
    shape, strides = arr[2], arr[3]
    if len(shape) != 1:
        raise ValueError(f"{name}: a {len(shape)}-D array of shape {tuple(shape)}; rungs.{op} takes a 1-D array here")
    if shape[0] != length:
        raise ValueError(f"{name}: {shape[0]} elements, {length} expected")
    if length <= 1:
        return 1
    if strides[0] < 1:
        raise ValueError(f"{name}: element stride {strides[0]}; rungs.{op} takes a positive stride")
    return strides[0]


def _ndim(name, shape, ndim, op):
    if len(shape) != ndim:
        raise ValueError(f"{name}: a {len(shape)}-D array of shape {tuple(shape)}; rungs.{op} takes a {ndim}-D "
                         "array here")


def _dtype_code(name, dtype, allowed, op):
    code = allowed.get(dtype)
    if code is None:
        raise ValueError(f"{name}: dtype {dtype}; rungs.{op} takes {', '.join(allowed)}")
    return code


def check_gemm(op, a_shape, a_dtype, b_shape, b_dtype, c_shape, c_dtype, beta):
    """gemm's checks on shapes and dtypes (c_shape None: no out=): (dtype code, m, n, k)."""
    _ndim("a", a_shape, 2, op)
    _ndim("b", b_shape, 2, op)
    code = _dtype_code("a", a_dtype, _GEMM_DTYPES, op)
    if b_dtype != a_dtype:
        raise ValueError(f"b: dtype {b_dtype}, a's is {a_dtype}; rungs.{op} takes one dtype")
    (m, k), (k2, n) = a_shape, b_shape
    if k2 != k:
        raise ValueError(f"b: shape {tuple(b_shape)} does not match a's {tuple(a_shape)} (b needs {k} rows)")
    if c_shape is not None:
        if c_dtype != a_dtype:
            raise ValueError(f"out: dtype {c_dtype}, a's is {a_dtype}; rungs.{op} writes the inputs' dtype")
        if tuple(c_shape) != (m, n):
            raise ValueError(f"out: shape {tuple(c_shape)}, the product is {m} x {n}")
    elif beta != 0:
        raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
    return code, m, n, k


def _blocks(x):
    return (x + 127) // 128


def scale_kind(sa_shape, sb_shape, m, n, k):
    """The scaling of an fp8 product, from its scales' shapes (include/rungs/rungs.hpp's layouts):
    0 tensor (one value each), 1 outer (a: (m,) or (m, 1); b: (n,) or (1, n)), 2 block128 (a: (m,
    ceil(k/128)), b: (ceil(n/128), ceil(k/128))); ValueError naming the shapes each kind needs.
    Where the shapes fit two kinds (m, n or k small), both mean the same product."""
    sa, sb = tuple(sa_shape), tuple(sb_shape)

    def numel(shape):
        count = 1
        for extent in shape:
            count *= extent
        return count

    if len(sa) <= 2 and len(sb) <= 2 and numel(sa) == 1 and numel(sb) == 1:
        return 0
    if sa in ((m,), (m, 1)) and sb in ((n,), (1, n)):
        return 1
    kb = _blocks(k)
    if sa == (m, kb) and sb == (_blocks(n), kb):
        return 2
    raise ValueError(f"scale_a, scale_b: shapes {sa} and {sb} fit no scaling for a {m} x {k} by {k} x {n} product; "
                     f"tensor: one value each (shape (), (1,) or (1, 1)); outer: scale_a ({m},) or ({m}, 1) and "
                     f"scale_b ({n},) or (1, {n}); block128: scale_a ({m}, {kb}) and scale_b ({_blocks(n)}, {kb}) "
                     "(1 x 128 blocks along k of a's rows, 128 x 128 blocks of b)")


def _scale_layout(name, shape, strides):
    """The scales are read as contiguous row-major floats."""
    step = 1
    for extent, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if extent > 1 and stride != step:
            raise ValueError(f"{name}: shape {tuple(shape)} with strides {tuple(strides)} (in elements); rungs reads "
                             "scales as contiguous row-major float32 (make a copy with .contiguous())")
        step *= extent


def check_scaled_mm(a_shape, a_dtype, b_shape, b_dtype, sa_shape, sa_dtype, sb_shape, sb_dtype, c_shape, c_dtype,
                    out_dtype, beta):
    """scaled_mm's checks on shapes and dtypes (c_shape None: no out=; out_dtype: a dtype name or
    None): (a code, b code, out code, scaling code, m, n, k, the output's dtype name)."""
    op = "scaled_mm"
    _ndim("a", a_shape, 2, op)
    _ndim("b", b_shape, 2, op)
    a_code = _dtype_code("a", a_dtype, _FP8_DTYPES, op)
    b_code = _dtype_code("b", b_dtype, _FP8_DTYPES, op)
    (m, k), (k2, n) = a_shape, b_shape
    if k2 != k:
        raise ValueError(f"b: shape {tuple(b_shape)} does not match a's {tuple(a_shape)} (b needs {k} rows)")
    _dtype_code("scale_a", sa_dtype, {"float32": 0}, op)
    _dtype_code("scale_b", sb_dtype, {"float32": 0}, op)
    kind = scale_kind(sa_shape, sb_shape, m, n, k)
    if c_shape is not None:
        if out_dtype is not None and out_dtype != c_dtype:
            raise ValueError(f"out: dtype {c_dtype}, out_dtype is {out_dtype}")
        c_code = _dtype_code("out", c_dtype, _FP8_OUT_DTYPES, op)
        if tuple(c_shape) != (m, n):
            raise ValueError(f"out: shape {tuple(c_shape)}, the product is {m} x {n}")
        out_dtype = c_dtype
    else:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        out_dtype = out_dtype or "bfloat16"
        c_code = _dtype_code("out_dtype", out_dtype, _FP8_OUT_DTYPES, op)
    return a_code, b_code, c_code, kind, m, n, k, out_dtype


def dtype_name(dtype):
    """A dtype argument (a torch, NumPy or JAX dtype, or its name) as rungs names dtypes; None stays None."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    if _arrays._torch is not None and isinstance(dtype, _arrays._torch.dtype):
        return _arrays._torch_dtype_name(dtype)
    name = getattr(dtype, "name", None) or getattr(getattr(dtype, "dtype", None), "name", None)
    if isinstance(name, str):
        return name
    raise _arrays.ArgumentTypeError(f"out_dtype: {dtype!r} is not a dtype (torch.bfloat16, torch.float32, or its name)")


def check_gemv(a_shape, a_dtype, x_shape, x_dtype, y_shape, y_dtype, trans, beta):
    """gemv's checks on shapes and dtypes (y_shape None: no out=): (x's length, y's length)."""
    _ndim("a", a_shape, 2, "gemv")
    _dtype_code("a", a_dtype, {"float32": 0}, "gemv")
    _ndim("x", x_shape, 1, "gemv")
    _dtype_code("x", x_dtype, {"float32": 0}, "gemv")
    r, c = a_shape
    x_len, y_len = (r, c) if trans else (c, r)
    if x_shape[0] != x_len:
        raise ValueError(f"x: {x_shape[0]} elements; a is {r} x {c}, so x needs {x_len}"
                         + (" (trans=True)" if trans else ""))
    if y_shape is not None:
        _ndim("out", y_shape, 1, "gemv")
        _dtype_code("out", y_dtype, {"float32": 0}, "gemv")
        if y_shape[0] != y_len:
            raise ValueError(f"out: {y_shape[0]} elements; the product has {y_len}")
    elif beta != 0:
        raise ValueError(f"beta: {beta} needs out= (beta scales the y that out= holds)")
    return x_len, y_len


def check_reduce(x_shape, x_dtype):
    """reduce_sum's checks on shape and dtype: (dtype code, n)."""
    if len(x_shape) != 1:
        raise ValueError(f"x: a {len(x_shape)}-D array of shape {tuple(x_shape)}; rungs.reduce_sum takes a 1-D "
                         "array (e.g. x.ravel() of a contiguous array)")
    return _dtype_code("x", x_dtype, _REDUCE_DTYPES, "reduce_sum"), x_shape[0]


def _shape_dtype(arr):
    return (None, None) if arr is None else (arr[2], arr[4])


def _check_scalars(op, variant, math=None):
    if not isinstance(variant, str):
        raise _arrays.ArgumentTypeError(f"variant: {variant!r} is not a str (a rung's name from "
                                        f"rungs.variants('{op}'), or 'auto')")
    if math is None:
        return 0
    code = _MATH.get(math)
    if code is None:
        raise ValueError(f"math: {math!r} (must be 'fp32', 'tf32' or 'tf32x3')")
    return code


def _writable(name, arr):
    if arr[7]:
        raise ValueError(f"{name}: a read-only array")
    if arr[0] == "jax":
        raise ValueError(f"{name}: JAX arrays are immutable; call without out= to get a new array")


def _choose_stream(stream, framework, device):
    """The stream the call runs on and the framework's current stream (None when the framework has
    none that rungs can order against)."""
    current = current_stream(framework, device) if framework in ("torch", "cupy") else None
    if stream is None:
        return (current if current is not None else 0), current
    return stream_handle(stream), current


def _order(s, current, device, arrays):
    """With an explicit stream, the call's stream waits for the framework's current stream (the
    inputs were written there) and for any stream an array's producer named as still writing it."""
    if current is not None and current != s:
        _rungs.stream_wait(s, current, device)
    for arr in arrays:
        ps = arr[6]
        if ps is not None and ps != s:
            _rungs.stream_wait(s, ps, device)


def _operands(op, a, second, second_name, out, stream, first_name="a"):
    """a, the second operand and out, read and checked against a's framework, with the stream the
    call runs on (DLPack producers are read with it, so they order their pending work before it)."""
    A = device_array(a, first_name, op, None)
    s, current = _choose_stream(stream, A[0], A[5])
    dls = dlpack_stream(s)
    if A[1] is None:  # DLPack: read now, so that the producer orders its work before the stream
        A = device_array(a, first_name, op, dls)
    B = device_array(second, second_name, op, dls)
    _same_framework(second_name, B, first_name, A)
    C = None
    if out is not None:
        C = device_array(out, "out", op, dls)
        _same_framework("out", C, first_name, A)
        _writable("out", C)
    return A, B, C, s, current


# ---------------------------------------------------------------------------------------------
# gemm

def _gemm_plan(a, b, out, alpha, beta, variant, math, stream):
    """Everything a gemm call needs: the arrays read and checked, the C++ arguments, the stream."""
    mcode = _check_scalars("gemm", variant, math)
    A, B, C, s, current = _operands("gemm", a, b, "b", out, stream)
    code, m, n, k = check_gemm("gemm", A[2], A[4], B[2], B[4], *_shape_dtype(C), beta)
    ta, lda = _matrix("a", A, "gemm")
    tb, ldb = _matrix("b", B, "gemm")
    if variant != "auto" or mcode:  # the library's checks that need no device (auto with fp32 always passes)
        _rungs.check_gemm(code, mcode, variant)
    return A, B, C, code, mcode, ta, tb, lda, ldb, m, n, k, s, current


def _gemm_args(C, ta, tb, A, lda, B, ldb, m, n, k):
    """The C++ call's operands: C stored row-major as it is, or, for a transposed out (unit row
    stride), C^T = op(B)^T op(A)^T on the same memory."""
    tc, ldc = _matrix("out", C, "gemm")
    if not tc:
        return ta, tb, m, n, A[1], lda, B[1], ldb, ldc
    return not tb, not ta, n, m, B[1], ldb, A[1], lda, ldc


def _gemm_impl(a, b, out, alpha, beta, variant, math, stream):
    A, B, C, code, mcode, ta, tb, lda, ldb, m, n, k, s, current = _gemm_plan(a, b, out, alpha, beta, variant, math,
                                                                          stream)
    framework, device = A[0], A[5]
    result = out
    if C is None:
        result = _arrays.empty(framework, a, (m, n), A[4], device, "out")
        C = device_array(result, "out", "gemm", dlpack_stream(s))
    if stream is not None or A[6] is not None or B[6] is not None or C[6] is not None:
        _order(s, current, device, (A, B, C))
    ta_, tb_, m_, n_, pa, lda_, pb, ldb_, ldc = _gemm_args(C, ta, tb, A, lda, B, ldb, m, n, k)
    _rungs.gemm(code, ta_, tb_, m_, n_, k, float(alpha), pa, lda_, pb, ldb_, float(beta), C[1], ldc, variant, mcode,
                s, device)
    if framework == "jax":  # JAX cannot be told about work on another stream: wait for it here
        _rungs.stream_synchronize(s, device)
    return result


# ---------------------------------------------------------------------------------------------
# scaled_mm (fp8)

def _scaled_plan(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream):
    _check_scalars("scaled_mm", variant)
    A, B, C, s, current = _operands("scaled_mm", a, b, "b", out, stream)
    dls = dlpack_stream(s)
    SA = device_array(scale_a, "scale_a", "scaled_mm", dls)
    _same_framework("scale_a", SA, "a", A)
    SB = device_array(scale_b, "scale_b", "scaled_mm", dls)
    _same_framework("scale_b", SB, "a", A)
    a_code, b_code, c_code, kind, m, n, k, out_dtype = check_scaled_mm(
        A[2], A[4], B[2], B[4], SA[2], SA[4], SB[2], SB[4], *_shape_dtype(C), dtype_name(out_dtype), beta)
    _scale_layout("scale_a", SA[2], SA[3])
    _scale_layout("scale_b", SB[2], SB[3])
    ta, lda = _matrix("a", A, "scaled_mm")
    tb, ldb = _matrix("b", B, "scaled_mm")
    if C is not None:
        _scaled_args(C, kind, ta, tb, A, lda, B, ldb, SA, SB, m, n, a_code, b_code)
    _rungs.check_scaled_mm(a_code, b_code, c_code, kind, variant)
    return A, B, C, SA, SB, a_code, b_code, c_code, kind, m, n, k, out_dtype, ta, tb, lda, ldb, s, current


def _scaled_args(C, kind, ta, tb, A, lda, B, ldb, SA, SB, m, n, a_code, b_code):
    """As _gemm_args, with the scales and the fp8 types: a transposed out is out.T = b.T @ a.T,
    whose row scales are b's column scales (tensor and outer scaling; block128's layouts are not
    symmetric, so its out is row-major)."""
    tc, ldc = _matrix("out", C, "scaled_mm")
    if not tc:
        return ta, tb, m, n, A[1], lda, B[1], ldb, SA[1], SB[1], a_code, b_code, ldc
    if kind == 2:
        raise ValueError("out: a transposed view (unit row stride); with block128 scales rungs.scaled_mm writes a "
                         "row-major out (unit column stride)")
    return not tb, not ta, n, m, B[1], ldb, A[1], lda, SB[1], SA[1], b_code, a_code, ldc


def _scaled_impl(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream):
    (A, B, C, SA, SB, a_code, b_code, c_code, kind, m, n, k, out_dtype, ta, tb, lda, ldb, s,
     current) = _scaled_plan(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream)
    framework, device = A[0], A[5]
    result = out
    if C is None:
        result = _arrays.empty(framework, a, (m, n), out_dtype, device, "out")
        C = device_array(result, "out", "scaled_mm", dlpack_stream(s))
    if stream is not None or any(x[6] is not None for x in (A, B, C, SA, SB)):
        _order(s, current, device, (A, B, C, SA, SB))
    ta_, tb_, m_, n_, pa, lda_, pb, ldb_, psa, psb, ac, bc, ldc = _scaled_args(C, kind, ta, tb, A, lda, B, ldb, SA,
                                                                              SB, m, n, a_code, b_code)
    _rungs.scaled_mm(ac, bc, c_code, ta_, tb_, m_, n_, k, float(alpha), pa, lda_, pb, ldb_, psa, psb, kind,
                     float(beta), C[1], ldc, variant, s, device)
    if framework == "jax":
        _rungs.stream_synchronize(s, device)
    return result


def _resolve_scaled_mm(a, b, scale_a, scale_b, out=None, *, out_dtype=None, alpha=1.0, beta=0.0, variant="auto",
                       stream=None):
    (A, B, C, SA, SB, a_code, b_code, c_code, kind, m, n, k, out_dtype, ta, tb, lda, ldb, s,
     current) = _scaled_plan(a, b, scale_a, scale_b, out, out_dtype, alpha, beta, variant, stream)
    if C is not None:
        ta, tb, m, n, _, lda, _, ldb, _, _, _, _, _ = _scaled_args(C, kind, ta, tb, A, lda, B, ldb, SA, SB, m, n,
                                                                   a_code, b_code)
    return _rungs.resolve_scaled_mm(ta, tb, m, n, k, kind, lda, ldb, variant, A[5])


# ---------------------------------------------------------------------------------------------
# The checks the fake implementations make (torch.compile, meta tensors): everything the real call
# checks before the library runs a kernel, on shapes, strides and dtypes alone. The Python checks
# are the real call's own; the library's (math for the dtype, the variant's name, the rung's entry
# for the type) come from the library itself (_rungs.check_gemm: the call on an empty product).

def validate_gemm(a, b, out, beta, variant, math):
    """(a, b, out): (shape, strides, dtype name) each, out None. Returns (m, n)."""
    mcode = _check_scalars("gemm", variant, math)
    code, m, n, _ = check_gemm("gemm", a[0], a[2], b[0], b[2], *((None, None) if out is None else (out[0], out[2])),
                               beta)
    _layout_of("a", a, "gemm")
    _layout_of("b", b, "gemm")
    if out is not None:
        _layout_of("out", out, "gemm")
    if variant != "auto" or mcode:
        _rungs.check_gemm(code, mcode, variant)
    return m, n


def validate_gemv(a, x, out, trans, beta, variant):
    _check_scalars("gemv", variant)
    x_len, y_len = check_gemv(a[0], a[2], x[0], x[2], *((None, None) if out is None else (out[0], out[2])),
                              bool(trans), beta)
    _layout_of("a", a, "gemv")
    _vector("x", (None, None, x[0], x[1]), "gemv", x_len)
    _check_variant("gemv", variant)
    if out is not None:
        _vector("out", (None, None, out[0], out[1]), "gemv", y_len)
    return y_len


def validate_reduce(x, variant):
    _check_scalars("reduce_sum", variant)
    code, n = check_reduce(x[0], x[2])
    if n > 1 and x[1][0] != 1:
        raise ValueError(f"x: element stride {x[1][0]}; rungs.reduce_sum takes contiguous elements (stride 1)")
    _check_variant("reduce", variant)
    return code


def validate_scaled_mm(a, b, scale_a, scale_b, out, out_dtype, beta, variant):
    """As validate_gemm, for scaled_mm. Returns (m, n, the output's dtype name)."""
    _check_scalars("scaled_mm", variant)
    a_code, b_code, c_code, kind, m, n, _, out_dtype = check_scaled_mm(
        a[0], a[2], b[0], b[2], scale_a[0], scale_a[2], scale_b[0], scale_b[2],
        *((None, None) if out is None else (out[0], out[2])), dtype_name(out_dtype), beta)
    _scale_layout("scale_a", scale_a[0], scale_a[1])
    _scale_layout("scale_b", scale_b[0], scale_b[1])
    ta, lda = _layout_of("a", a, "scaled_mm")
    tb, ldb = _layout_of("b", b, "scaled_mm")
    if out is not None:
        _scaled_args((None, None, out[0], out[1]), kind, ta, tb, (None, 0), lda, (None, 0), ldb, (None, 0),
                     (None, 0), m, n, a_code, b_code)
    _rungs.check_scaled_mm(a_code, b_code, c_code, kind, variant)
    return m, n, out_dtype


def _layout_of(name, meta, op):
    return _matrix(name, (None, None, meta[0], meta[1]), op)


_KNOWN = {}


def _check_variant(op, variant):
    """The library's own error for a variant name its ladder does not have (gemv and reduce: no
    type or math to check), raised as the call would (rungs.Error, the library's message)."""
    if variant == "auto":
        return
    names = _KNOWN.get(op)
    if names is None:
        names = _KNOWN[op] = {v.name for v in _rungs.variants(op)}
    if variant not in names:
        if op == "gemv":
            _rungs.resolve_gemv(False, 1, 1, variant, -1)
        else:
            _rungs.resolve_reduce(2, 1, variant, -1)


def _load_torch_module():
    """rungs._rungs_torch (libtorch's C++ API) where it was built against the torch imported now; else None."""
    try:
        from . import _torch_build
    except ImportError:  # built without torch at hand
        return None
    if _torch_build.TORCH_VERSION != _arrays._torch.__version__:
        return None  # another torch than the one it links: its C++ ABI may differ
    try:
        from . import _rungs_torch
    except ImportError as e:  # the path through torch's Python API still works: say why, and go on
        import warnings

        warnings.warn(f"rungs: rungs._rungs_torch does not load ({e}); rungs.gemm reads torch tensors through "
                      "torch's Python API instead", RuntimeWarning, stacklevel=2)
        return None
    return _rungs_torch


if _arrays._torch is not None:
    _Tensor, _Parameter = _arrays._torch.Tensor, _arrays._torch.nn.Parameter
    _grad_enabled = _arrays._torch.is_grad_enabled
    _is_compiling = getattr(getattr(_arrays._torch, "compiler", None), "is_compiling", None) or (lambda: False)
    _current_torch_stream = _arrays._raw_stream or (lambda d: _arrays.current_stream("torch", d))
    _rungs_torch = _load_torch_module()
    if _rungs_torch is not None:
        _rungs_torch.setup(_rungs.Error, _rungs.Unsupported)

    def _setup_torch_path(raw_stream=None):
        """Hands the extension module's torch path (gemm_torch) the torch objects it reads: the
        tensor types, the dtypes, the grad mode and torch's current raw stream (raw_stream: the
        tests' stand-in)."""
        from . import _rungs as ext  # the extension itself, also where a test stands in for _rungs here

        t = _arrays._torch
        ext.torch_setup(_Tensor, _Parameter, t.float32, t.float16, t.bfloat16, _grad_enabled,
                        raw_stream or _current_torch_stream)

    _setup_torch_path()

    def gemm_torch(a, b, out, alpha, beta, variant, math):
        """gemm on plain torch CUDA tensors in eager mode, on torch's current stream: the common call,
        its tensors read in C++: by rungs._rungs_torch through libtorch where that module was built,
        else by the extension module through torch's Python API (_rungs.gemm_torch). None (having
        done nothing) for anything else, and under torch.compile (whose trace must see the custom
        operators): then the general path runs, with its checks and messages, or the torch
        operators (route)."""
        if _is_compiling():
            return None
        if _rungs_torch is not None:
            return _rungs_torch.gemm(a, b, out, alpha, beta, variant, math)
        return _rungs.gemm_torch(a, b, out, alpha, beta, variant, math)

    def linear_torch(x, weight, bias, variant, math):
        """rungs.linear's eager path on plain torch CUDA tensors (as gemm_torch): x (..., k) read as
        one (M, k) matrix where its strides give one, weight as its transpose in place, bias
        written into the result first. None (having done nothing) for anything else."""
        if _is_compiling():
            return None
        if _rungs_torch is not None:
            return _rungs_torch.linear(x, weight, bias, variant, math)
        if bias is not None or type(weight) not in (_Tensor, _Parameter) or weight.dim() != 2 or x.dim() < 1:
            return None
        n, k = weight.shape
        if x.shape[-1] != k:
            return None
        if x.dim() == 2:
            return _rungs.gemm_torch(x, weight.T, None, 1.0, 0.0, variant, math)
        try:
            x2 = x.view(-1, k)
        except RuntimeError:  # no 2-D view: the general path copies
            return None
        y = _rungs.gemm_torch(x2, weight.T, None, 1.0, 0.0, variant, math)
        return None if y is None else y.view(x.shape[:-1] + (n,))
else:  # pragma: no cover - depends on the environment
    gemm_torch = linear_torch = None


# ---------------------------------------------------------------------------------------------
# gemv

def _gemv_plan(a, x, out, trans, alpha, beta, variant, stream):
    _check_scalars("gemv", variant)
    A, X, Y, s, current = _operands("gemv", a, x, "x", out, stream)
    trans = bool(trans)
    x_len, y_len = check_gemv(A[2], A[4], X[2], X[4], *_shape_dtype(Y), trans, beta)
    at, lda = _matrix("a", A, "gemv")
    r, c = A[2]
    incx = _vector("x", X, "gemv", x_len)
    _check_variant("gemv", variant)
    # The library's A is the row-major storage: the view itself, or for a transposed view (a.T) its
    # transpose, with the transpose flag flipped.
    lib_trans, lm, ln = (not trans, c, r) if at else (trans, r, c)
    return A, X, Y, lib_trans, lm, ln, lda, incx, y_len, s, current


def _gemv_impl(a, x, out, trans, alpha, beta, variant, stream):
    A, X, Y, lib_trans, lm, ln, lda, incx, y_len, s, current = _gemv_plan(a, x, out, trans, alpha, beta, variant,
                                                                          stream)
    framework, device = A[0], A[5]
    result = out
    if Y is None:
        result = _arrays.empty(framework, a, (y_len,), "float32", device, "out")
        Y = device_array(result, "out", "gemv", dlpack_stream(s))
    incy = _vector("out", Y, "gemv", y_len)
    if stream is not None or A[6] is not None or X[6] is not None or Y[6] is not None:
        _order(s, current, device, (A, X, Y))
    _rungs.gemv(lib_trans, lm, ln, float(alpha), A[1], lda, X[1], incx, float(beta), Y[1], incy, variant, s, device)
    if framework == "jax":
        _rungs.stream_synchronize(s, device)
    return result


# ---------------------------------------------------------------------------------------------
# reduce_sum

def _reduce_plan(x, variant, stream):
    _check_scalars("reduce_sum", variant)
    X = device_array(x, "x", "reduce_sum", None)
    framework, device = X[0], X[5]
    s, current = _choose_stream(stream, framework, device)
    if X[1] is None:
        X = device_array(x, "x", "reduce_sum", dlpack_stream(s))
    code, n = check_reduce(X[2], X[4])
    if n > 1 and X[3][0] != 1:
        raise ValueError(f"x: element stride {X[3][0]}; rungs.reduce_sum takes contiguous elements (stride 1)")
    _check_variant("reduce", variant)
    return X, code, n, s, current


def _reduce_impl(x, variant, stream):
    X, code, n, s, current = _reduce_plan(x, variant, stream)
    framework, device = X[0], X[5]
    out_dtype = "int64" if code <= 1 else X[4]
    result = _arrays.empty(framework, x, (), out_dtype, device, "x")
    R = device_array(result, "x", "reduce_sum", dlpack_stream(s))
    if stream is not None or X[6] is not None:
        _order(s, current, device, (X,))
    _rungs.reduce_sum(code, X[1], n, R[1], variant, s, device)
    if framework == "jax":
        _rungs.stream_synchronize(s, device)
    return result


# ---------------------------------------------------------------------------------------------
# gemm_host

def _gemm_host_impl(a, b, out, alpha, beta, variant, math):
    mcode = _check_scalars("gemm_host", variant, math)
    A = host_array(a, "a")
    B = host_array(b, "b")
    _same_framework("b", B, "a", A)
    C = None
    if out is not None:
        C = host_array(out, "out")
        _same_framework("out", C, "a", A)
        _writable("out", C)
    code, m, n, k = check_gemm("gemm_host", A[2], A[4], B[2], B[4], *_shape_dtype(C), beta)
    ta, lda = _matrix("a", A, "gemm_host")
    tb, ldb = _matrix("b", B, "gemm_host")
    result = out
    if C is None:
        if A[0] not in ("numpy", "torch"):
            raise ValueError(f"out: rungs.gemm_host allocates results with NumPy or torch; for {A[0]} arrays pass "
                             "the result's array as out=")
        result = _arrays.empty(A[0], a, (m, n), A[4], -1, "out")
        C = host_array(result, "out")
    ta_, tb_, m_, n_, pa, lda_, pb, ldb_, ldc = _gemm_args(C, ta, tb, A, lda, B, ldb, m, n, k)
    # The current device (-1: the call leaves it as it is).
    _rungs.gemm_host(code, ta_, tb_, m_, n_, k, float(alpha), pa, lda_, pb, ldb_, float(beta), C[1], ldc, variant,
                     mcode, -1)
    return result


# ---------------------------------------------------------------------------------------------
# resolve_variant

def _resolve_gemm(a, b, out=None, *, alpha=1.0, beta=0.0, variant="auto", math="fp32", stream=None):
    A, B, C, code, mcode, ta, tb, lda, ldb, m, n, k, s, current = _gemm_plan(a, b, out, alpha, beta, variant, math,
                                                                          stream)
    if C is not None:
        ta, tb, m, n, _, lda, _, ldb, _ = _gemm_args(C, ta, tb, A, lda, B, ldb, m, n, k)
    return _rungs.resolve_gemm(ta, tb, m, n, k, code, lda, ldb, variant, mcode, A[5])


def _resolve_gemv(a, x, out=None, *, trans=False, alpha=1.0, beta=0.0, variant="auto", stream=None):
    A, X, Y, lib_trans, lm, ln, lda, incx, y_len, s, current = _gemv_plan(a, x, out, trans, alpha, beta, variant,
                                                                          stream)
    return _rungs.resolve_gemv(lib_trans, lm, ln, variant, A[5])


def _resolve_reduce(x, *, variant="auto", stream=None):
    X, code, n, s, current = _reduce_plan(x, variant, stream)
    return _rungs.resolve_reduce(code, n, variant, X[5])
