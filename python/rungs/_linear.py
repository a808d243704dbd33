"""rungs.linear: F.linear's semantics (y = x W^T + b) on rungs' gemm and fp8 gemm, for torch tensors.

x has any leading shape (..., k) and is read as one (M, k) matrix (a view where its strides give
one: any leading dimensions that collapse into a single stride, e.g. a contiguous tensor or a
slice along the first dimension; a copy otherwise, as x.reshape does). The weight (n, k) is read
in place as the transposed operand (W^T, Trans::T), the bias (n) is written into the result first
and the product added to it (beta = 1), and the result has shape (..., n).

fp8 weights (float8_e4m3fn / float8_e5m2) take their scales through weight_scale=, whose shape
picks the scaling as rungs.scaled_mm's does for b = W^T: one value (tensor), (n,) or (n, 1) (outer:
one per output feature), (ceil(n/128), ceil(k/128)) (block128: 128 x 128 blocks of W). x is then
either fp8 with x_scale= in the matching layout (one value; one per row of x, shape (...,) or
(..., 1); (..., ceil(k/128))), or bfloat16 / float16 / float32, quantized to float8_e4m3fn here at
the same granularity (rungs.torch.quantize_fp8).
"""

import torch

from . import _arrays, _core

_FLOAT = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
_FP8 = {getattr(torch, n): n for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n)}
E4M3_MAX = 448.0


def _name(dtype):
    return _arrays._torch_dtype_name(dtype)


def _check_x_weight(x, weight, op):
    if x.dim() < 1:
        raise ValueError(f"x: a 0-d tensor; rungs.{op} takes x of shape (..., k)")
    if weight.dim() != 2:
        raise ValueError(f"weight: a {weight.dim()}-D tensor of shape {tuple(weight.shape)}; rungs.{op} takes a 2-D "
                         "weight (out_features x in_features)")
    n, k = weight.shape
    if x.shape[-1] != k:
        raise ValueError(f"x: shape {tuple(x.shape)}; weight is {n} x {k}, so x's last dimension must be {k}")
    return n, k


def _on_device(x, weight):
    """The real call's first check (the fakes see meta or fake tensors): CUDA tensors, on one device."""
    for name, t in (("x", x), ("weight", weight)):
        if t.get_device() < 0:
            raise ValueError(f"{name}: a torch tensor on {t.device}; rungs.linear takes tensors on a CUDA device")


def _rows(x, k):
    """x as an (M, k) matrix: a view where x's strides allow one, else a copy (x.reshape)."""
    return x.reshape(-1, k)


def _out_shape(x, n):
    return tuple(x.shape[:-1]) + (n,)


def _check_bias(bias, n, dtype, op):
    if bias is None:
        return
    if bias.shape != (n,):
        raise ValueError(f"bias: shape {tuple(bias.shape)}; rungs.{op} takes a bias of shape ({n},)")
    if bias.dtype != dtype:
        raise ValueError(f"bias: dtype {_name(bias.dtype)}; rungs.{op} takes a bias of the output's dtype "
                         f"({_name(dtype)})")


def _rows_meta(x, k):
    """The (shape, strides, dtype) of x's (M, k) matrix: the view's where it has one, else a copy's."""
    rows = 1
    for extent in x.shape[:-1]:
        rows *= extent
    strides = None
    if x.dim() == 1:
        strides = (k, x.stride(0))
    else:
        # the leading dimensions collapse into one stride (size-1 dimensions take any stride)
        lead = [(e, s) for e, s in zip(x.shape[:-1], x.stride()[:-1]) if e != 1]
        ok = all(lead[i][1] == lead[i + 1][1] * lead[i + 1][0] for i in range(len(lead) - 1))
        if ok:
            strides = (lead[-1][1] if lead else k, x.stride(-1))
    if strides is None:
        strides = (k, 1)  # x.reshape copies into a contiguous matrix
    return (rows, k), strides, _name(x.dtype)


def validate_linear(x, weight, bias, variant, math):
    """Every check of linear_impl, on shapes, strides and dtypes (the fake implementation). Returns the
    result's shape."""
    n, k = _check_x_weight(x, weight, "linear")
    if weight.dtype in _FP8:
        raise ValueError(f"weight: dtype {_name(weight.dtype)}; an fp8 weight needs weight_scale=")
    if x.dtype != weight.dtype:
        raise ValueError(f"x: dtype {_name(x.dtype)}, weight's is {_name(weight.dtype)}; rungs.linear takes one dtype "
                         "(or an fp8 weight with weight_scale=)")
    _check_bias(bias, n, x.dtype, "linear")
    _core._layout_of("weight", ((n, k), weight.stride()), "linear")
    wt = ((k, n), (weight.stride(1), weight.stride(0)), _name(weight.dtype))
    _core.validate_gemm(_rows_meta(x, k), wt, None, 0.0, variant, math)
    return _out_shape(x, n)


def linear_impl(x, weight, bias, variant, math, stream):
    """rungs.linear on float tensors (the general path, and the custom operator's real implementation)."""
    _on_device(x, weight)
    validate_linear(x, weight, bias, variant, math)
    n, k = weight.shape
    x2 = _rows(x, k)
    if bias is None:
        y2 = _core._gemm_impl(x2, weight.T, None, 1.0, 0.0, variant, math, stream)
        return y2.reshape(_out_shape(x, n))
    y = x.new_empty(_out_shape(x, n))
    y2 = y.view(-1, n)
    y2.copy_(bias)
    _core._gemm_impl(x2, weight.T, y2, 1.0, 1.0, variant, math, stream)
    return y


# -- fp8 ----------------------------------------------------------------------------------------

def _blocks(v):
    return (v + 127) // 128


def weight_scaling(weight_scale, n, k):
    """The scaling of an fp8 weight from weight_scale's shape: "tensor", "outer" or "block128"."""
    shape = tuple(weight_scale.shape)
    if weight_scale.numel() == 1 and len(shape) <= 2:
        return "tensor"
    if shape in ((n,), (n, 1)):
        return "outer"
    if shape == (_blocks(n), _blocks(k)):
        return "block128"
    raise ValueError(f"weight_scale: shape {shape} fits no scaling of a {n} x {k} weight; tensor: one value (shape "
                     f"(), (1,) or (1, 1)); outer: ({n},) or ({n}, 1), one per output feature; block128: "
                     f"({_blocks(n)}, {_blocks(k)}), one per 128 x 128 block")


def _x_scale_2d(x_scale, kind, rows, k):
    """x_scale in the layout scaled_mm reads for the (rows, k) matrix, or ValueError."""
    if kind == "tensor":
        if x_scale.numel() != 1:
            raise ValueError(f"x_scale: shape {tuple(x_scale.shape)}; with a per-tensor weight_scale, x_scale is one "
                             "value")
        return x_scale.reshape(())
    if kind == "outer":
        if x_scale.numel() != rows:
            raise ValueError(f"x_scale: shape {tuple(x_scale.shape)}; with a per-feature weight_scale, x_scale holds one "
                             f"value per row of x ({rows}: shape (...,) or (..., 1))")
        return x_scale.reshape(rows, 1)
    kb = _blocks(k)
    if x_scale.numel() != rows * kb or (x_scale.dim() > 0 and x_scale.shape[-1] != kb):
        raise ValueError(f"x_scale: shape {tuple(x_scale.shape)}; with block128 weight scales, x_scale holds one value "
                         f"per row of x and 128 columns: shape (..., {kb})")
    return x_scale.reshape(rows, kb)


def quantize_fp8(t, granularity, dtype=None):
    """(q, scale): t quantized to fp8 (float8_e4m3fn by default) with one float32 scale per
    granularity ("tensor"; "row": one per row of a 2-D t; "1x128": per row and 128 columns, shape
    (rows, ceil(cols/128)); "128x128": per 128 x 128 block), such that q * scale ~ t, in the layouts
    rungs.scaled_mm reads. An all-zero block gets scale 1."""
    dtype = dtype or torch.float8_e4m3fn
    fmax = torch.finfo(dtype).max
    t32 = t.float()
    if granularity == "tensor":
        amax = t32.abs().amax() if t.numel() else t32.new_zeros(())
        scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax)).reshape(1)
        return (t32 / scale).clamp(-fmax, fmax).to(dtype), scale
    if t.dim() != 2:
        raise ValueError(f"t: a {t.dim()}-D tensor; quantize_fp8 with granularity {granularity!r} takes a 2-D tensor")
    r, c = t.shape
    if granularity == "row":
        amax = t32.abs().amax(dim=1, keepdim=True) if c else t32.new_zeros((r, 1))
        scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
        return (t32 / scale).clamp(-fmax, fmax).to(dtype), scale
    cb = _blocks(c)
    padded = torch.nn.functional.pad(t32, (0, cb * 128 - c))
    if granularity == "1x128":
        blocks = padded.view(r, cb, 128)
        amax = blocks.abs().amax(dim=2)
        scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
        q = (blocks / scale.unsqueeze(2)).clamp(-fmax, fmax).view(r, cb * 128)[:, :c]
        return q.to(dtype).contiguous(), scale
    if granularity == "128x128":
        rb = _blocks(r)
        padded = torch.nn.functional.pad(padded, (0, 0, 0, rb * 128 - r))
        blocks = padded.view(rb, 128, cb, 128)
        amax = blocks.abs().amax(dim=(1, 3))
        scale = torch.where(amax > 0, amax / fmax, torch.ones_like(amax))
        q = (blocks / scale.view(rb, 1, cb, 1)).clamp(-fmax, fmax).view(rb * 128, cb * 128)[:r, :c]
        return q.to(dtype).contiguous(), scale
    raise ValueError(f"granularity: {granularity!r} (must be 'tensor', 'row', '1x128' or '128x128')")


_X_GRANULARITY = {"tensor": "tensor", "outer": "row", "block128": "1x128"}


def _fp8_out_dtype(x, out_dtype):
    if out_dtype is not None:
        name = _core.dtype_name(out_dtype)
        if name not in ("bfloat16", "float32"):
            raise ValueError(f"out_dtype: {name}; rungs.linear with an fp8 weight writes bfloat16 or float32")
        return _arrays.TORCH_DTYPE_OF[name]
    return x.dtype if x.dtype in (torch.bfloat16, torch.float32) else torch.bfloat16


def validate_linear_fp8(x, weight, weight_scale, x_scale, bias, out_dtype, variant):
    """Every check of linear_fp8_impl on shapes, strides and dtypes: (result's shape, its dtype)."""
    n, k = _check_x_weight(x, weight, "linear")
    if weight.dtype not in _FP8:
        raise ValueError(f"weight: dtype {_name(weight.dtype)} with weight_scale=; weight_scale goes with an fp8 weight "
                         "(float8_e4m3fn, float8_e5m2)")
    kind = weight_scaling(weight_scale, n, k)
    rows = 1
    for extent in x.shape[:-1]:
        rows *= extent
    if x.dtype in _FP8:
        if x_scale is None:
            raise ValueError("x_scale: None with an fp8 x; an fp8 x needs its scales (x_scale=)")
        sa = _x_scale_2d(x_scale, kind, rows, k)
        sa_meta = (tuple(sa.shape), _contiguous_strides(sa.shape), _name(x_scale.dtype))
        xq_dtype = _name(x.dtype)
    else:
        if x_scale is not None:
            raise ValueError(f"x_scale: given with a {_name(x.dtype)} x; x_scale goes with an fp8 x (a float x is "
                             "quantized here)")
        if x.dtype not in _FLOAT:
            raise ValueError(f"x: dtype {_name(x.dtype)}; rungs.linear takes float32, float16, bfloat16 or fp8 x")
        sa_shape = {"tensor": (), "outer": (rows, 1), "block128": (rows, _blocks(k))}[kind]
        sa_meta = (sa_shape, _contiguous_strides(sa_shape), "float32")
        xq_dtype = "float8_e4m3fn"
    dt = _fp8_out_dtype(x, out_dtype)
    _check_bias(bias, n, dt, "linear")
    _core._layout_of("weight", ((n, k), weight.stride()), "linear")
    sb_shape = (n,) if kind == "outer" else tuple(weight_scale.shape)
    sb_meta = (sb_shape, _contiguous_strides(sb_shape) if kind == "outer" else weight_scale.stride(),
               _name(weight_scale.dtype))
    wt = ((k, n), (weight.stride(1), weight.stride(0)), _name(weight.dtype))
    xm = ((rows, k), _rows_meta(x, k)[1], xq_dtype) if x.dtype in _FP8 else ((rows, k), (k, 1), xq_dtype)
    _core.validate_scaled_mm(xm, wt, sa_meta, sb_meta, None, _name(dt), 0.0, variant)
    return _out_shape(x, n), dt


def _contiguous_strides(shape):
    return _arrays._contiguous_strides(tuple(shape))


def linear_fp8_impl(x, weight, weight_scale, x_scale, bias, out_dtype, variant, stream):
    """rungs.linear with an fp8 weight (the general path, and the custom operator's real implementation)."""
    _on_device(x, weight)
    shape, dt = validate_linear_fp8(x, weight, weight_scale, x_scale, bias, out_dtype, variant)
    n, k = weight.shape
    kind = weight_scaling(weight_scale, n, k)
    x2 = _rows(x, k)
    rows = x2.shape[0]
    if x.dtype in _FP8:
        xq, sa = x2, _x_scale_2d(x_scale, kind, rows, k).contiguous()
    else:
        xq, sa = quantize_fp8(x2, _X_GRANULARITY[kind])
    sb = weight_scale.reshape(n) if kind == "outer" else weight_scale
    if bias is None:
        y2 = _core._scaled_impl(xq, weight.T, sa, sb, None, _name(dt), 1.0, 0.0, variant, stream)
        return y2.reshape(shape)
    y = x.new_empty(shape, dtype=dt)
    y2 = y.view(-1, n)
    y2.copy_(bias)
    _core._scaled_impl(xq, weight.T, sa, sb, y2, None, 1.0, 1.0, variant, stream)
    return y
