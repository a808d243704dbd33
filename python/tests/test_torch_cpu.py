"""rungs with torch, without a GPU: CPU tensors are refused with the argument's name, the custom
operators are registered with fake implementations (shapes and dtypes on meta tensors, the same
checks as the real call), and torch.compile(fullgraph=True) traces rungs' calls with no graph
break. Skipped where torch is not installed."""

import pytest

torch = pytest.importorskip("torch")

import rungs  # noqa: E402

if not rungs._torch_ops.AVAILABLE:  # pragma: no cover - torch older than 2.4
    pytest.skip("torch.library.custom_op needs torch 2.4 or newer", allow_module_level=True)


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


# -- CPU tensors ----------------------------------------------------------------------------------

def test_cpu_tensors_are_refused():
    a = torch.ones(3, 3)
    with pytest.raises(ValueError, match="^a: a torch tensor on cpu; rungs.gemm takes tensors on a CUDA device"):
        rungs.gemm(a, a)
    with pytest.raises(ValueError, match="^a: a torch tensor on cpu; rungs.gemv"):
        rungs.gemv(a, torch.ones(3))
    with pytest.raises(ValueError, match="^x: a torch tensor on cpu; rungs.reduce_sum"):
        rungs.reduce_sum(torch.ones(3))
    with pytest.raises(ValueError, match="^a: a torch tensor on cpu"):
        rungs.resolve_variant("gemm", a, a)
    with pytest.raises(ValueError, match="^x: a torch tensor on cpu"):
        rungs.resolve_variant("reduce", torch.ones(3, dtype=torch.int32))


def test_cpu_tensors_with_gradients_are_refused_too():
    a = torch.ones(3, 3, requires_grad=True)
    with pytest.raises(ValueError, match="^a: a torch tensor on cpu"):
        rungs.gemm(a, a)


def test_mixed_frameworks():
    import numpy as np

    from conftest import FakeCudaArray

    with pytest.raises(ValueError, match="^b: a torch tensor on cpu"):
        rungs.gemm(FakeCudaArray(np.zeros((2, 2), np.float32)), torch.ones(2, 2))


def test_gemm_host_refuses_device_and_meta_tensors():
    with pytest.raises(ValueError, match="^a: a torch tensor on meta; rungs.gemm_host takes host memory"):
        rungs.gemm_host(meta(2, 2), meta(2, 2))
    with pytest.raises(ValueError, match=r"^b: shape \(3, 2\) does not match a's \(2, 2\)"):
        rungs.gemm_host(torch.ones(2, 2), torch.ones(3, 2))
    with pytest.raises(ValueError, match=r"^a: a 2 x 2 view with strides \(8, 2\)"):
        rungs.gemm_host(torch.ones(4, 4)[::2, ::2], torch.ones(2, 2))


# -- the custom operators and their fake implementations ----------------------------------------------

def test_operators_registered():
    for name in ("gemm", "gemm_out", "gemv", "gemv_out", "reduce_sum"):
        assert hasattr(torch.ops.rungs, name), name


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_gemm_shapes_on_meta_tensors(dtype):
    c = rungs.gemm(meta(5, 7, dtype=dtype), meta(7, 3, dtype=dtype))
    assert c.shape == (5, 3) and c.dtype == dtype and c.device.type == "meta"
    c = rungs.gemm(meta(7, 5, dtype=dtype).T, meta(3, 7, dtype=dtype).T)
    assert c.shape == (5, 3)
    out = meta(5, 3, dtype=dtype)
    assert rungs.gemm(meta(5, 7, dtype=dtype), meta(7, 3, dtype=dtype), out, beta=1.0) is out


def test_gemm_checks_on_meta_tensors():
    with pytest.raises(ValueError, match=r"^b: shape \(6, 3\) does not match a's \(5, 7\)"):
        rungs.gemm(meta(5, 7), meta(6, 3))
    with pytest.raises(ValueError, match="^b: dtype float16, a's is float32"):
        rungs.gemm(meta(5, 7), meta(7, 3, dtype=torch.float16))
    with pytest.raises(ValueError, match="^a: dtype float64"):
        rungs.gemm(meta(5, 7, dtype=torch.float64), meta(7, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"^out: shape \(3, 5\), the product is 5 x 3"):
        rungs.gemm(meta(5, 7), meta(7, 3), meta(3, 5))
    with pytest.raises(ValueError, match="^math: 'tf16'"):
        rungs.gemm(meta(5, 7), meta(7, 3), math="tf16")
    with pytest.raises(ValueError, match="^beta: 1.0 needs out="):
        rungs.gemm(meta(5, 7), meta(7, 3), beta=1.0)


def test_gemv_and_reduce_on_meta_tensors():
    assert rungs.gemv(meta(5, 7), meta(7)).shape == (5,)
    assert rungs.gemv(meta(5, 7), meta(5), trans=True).shape == (7,)
    with pytest.raises(ValueError, match="^x: 5 elements; a is 5 x 7, so x needs 7"):
        rungs.gemv(meta(5, 7), meta(5))
    for dtype, want in [(torch.int32, torch.int64), (torch.int64, torch.int64), (torch.float32, torch.float32),
                        (torch.float64, torch.float64)]:
        s = rungs.reduce_sum(meta(11, dtype=dtype))
        assert s.shape == () and s.dtype == want
    with pytest.raises(ValueError, match="^x: dtype float16"):
        rungs.reduce_sum(meta(11, dtype=torch.float16))


# -- the epilogue keywords (bias, activation, gated, out_dtype=float8_e4m3fn) ------------------------

def test_epilogue_operators_registered():
    for name in ("gemm_epilogue", "gemm_epilogue_out", "gemm_epilogue_fp8"):
        assert hasattr(torch.ops.rungs, name), name


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_epilogue_shapes_on_meta_tensors(dtype):
    c = rungs.gemm(meta(5, 7, dtype=dtype), meta(7, 3, dtype=dtype), bias=meta(3, dtype=dtype), activation="gelu")
    assert c.shape == (5, 3) and c.dtype == dtype
    # gated: b's 2n columns give n; the weight stored (2n, k) passes as w.T
    c = rungs.gemm(meta(5, 7, dtype=dtype), meta(600, 7, dtype=dtype).T, gated=True, activation="silu",
                   bias=meta(600, dtype=dtype))
    assert c.shape == (5, 300) and c.dtype == dtype
    out = meta(5, 300, dtype=dtype)
    assert rungs.gemm(meta(5, 7, dtype=dtype), meta(7, 600, dtype=dtype), out, beta=1.0, gated=True) is out


def test_epilogue_fp8_output_on_meta_tensors():
    c, s = rungs.gemm(meta(5, 7, dtype=torch.bfloat16), meta(600, 7, dtype=torch.bfloat16).T, gated=True,
                      activation="silu", bias=meta(600), out_dtype=torch.float8_e4m3fn)
    assert c.shape == (5, 300) and c.dtype == torch.float8_e4m3fn
    assert s.shape == (5, 3) and s.dtype == torch.float32  # ceil(300 / 128) blocks a row


def test_linear_epilogue_keywords_on_meta_tensors():
    bf = torch.bfloat16
    y = rungs.linear(meta(2, 5, 7, dtype=bf), meta(600, 7, dtype=bf), meta(600, dtype=bf), activation="silu",
                     gated=True)
    assert y.shape == (2, 5, 300) and y.dtype == bf
    y = rungs.linear(meta(5, 7, dtype=bf), meta(6, 7, dtype=bf), activation="gelu")
    assert y.shape == (5, 6)
    y, s = rungs.linear(meta(2, 5, 7, dtype=bf), meta(600, 7, dtype=bf), meta(600), activation="silu", gated=True,
                        out_dtype=torch.float8_e4m3fn)
    assert y.shape == (2, 5, 300) and y.dtype == torch.float8_e4m3fn
    assert s.shape == (2, 5, 3) and s.dtype == torch.float32
    with pytest.raises(ValueError, match="^b: 7 columns; gated=True takes 2n"):
        rungs.linear(meta(5, 7, dtype=bf), meta(7, 7, dtype=bf), gated=True)
    with pytest.raises(ValueError, match="^x: shape \\(5, 7\\), weight: shape \\(6, 8\\)"):
        rungs.linear(meta(5, 7, dtype=bf), meta(6, 8, dtype=bf), activation="relu")


def test_epilogue_checks_on_meta_tensors():
    bf = torch.bfloat16
    with pytest.raises(ValueError, match="^b: 7 columns; gated=True takes 2n"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 7, dtype=bf), gated=True)
    with pytest.raises(ValueError, match=r"^bias: shape \(3,\); a 1-D array of 6 values \(2n: gated\)"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 6, dtype=bf), gated=True, bias=meta(3, dtype=bf))
    with pytest.raises(ValueError, match="^bias: dtype float32; bfloat16"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 6, dtype=bf), bias=meta(6))
    with pytest.raises(ValueError, match="^bias: dtype bfloat16; float32 \\(float32 with an fp8 output"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 6, dtype=bf), bias=meta(6, dtype=bf), out_dtype=torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="^activation: 'tanh'"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 6, dtype=bf), activation="tanh")
    with pytest.raises(ValueError, match="^out_dtype: float8_e4m3fn takes bfloat16 inputs"):
        rungs.gemm(meta(5, 7, dtype=torch.float16), meta(7, 6, dtype=torch.float16), out_dtype=torch.float8_e4m3fn)
    with pytest.raises(rungs.Unsupported, match="does not apply epilogues"):
        rungs.gemm(meta(5, 7, dtype=bf), meta(7, 6, dtype=bf), activation="relu", variant="wgmma")


# -- torch.compile: no graph break ------------------------------------------------------------------
# The real operators need a GPU; on meta tensors the compiled graph runs the fake implementations,
# which is what tracing uses. backend="aot_eager" also functionalizes the out= operators.

@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_compile_gemm_fullgraph(fresh_dynamo):
    def f(a, b):
        return rungs.gemm(a, b.T, alpha=2.0) * 3

    g = torch.compile(f, fullgraph=True, backend="aot_eager")
    c = g(meta(5, 7), meta(3, 7))
    assert c.shape == (5, 3)


def test_compile_out_and_others_fullgraph(fresh_dynamo):
    def f(a, b, c, x, y, v):
        rungs.gemm(a, b, c, alpha=0.5, beta=1.0)
        rungs.gemv(a, x, y, beta=2.0, variant="auto")
        return c + 1, y * 2, rungs.reduce_sum(v), rungs.gemv(a, y, trans=True)

    g = torch.compile(f, fullgraph=True, backend="aot_eager")
    c, y, s, z = g(meta(5, 7), meta(7, 3), meta(5, 3), meta(7), meta(5), meta(9, dtype=torch.int32))
    assert c.shape == (5, 3) and y.shape == (5,) and s.dtype == torch.int64 and z.shape == (7,)


def test_compile_graph_has_the_operators(fresh_dynamo):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(a, b):
        return rungs.gemm(a, b)

    torch.compile(f, fullgraph=True, backend=backend)(meta(4, 4), meta(4, 4))
    assert len(graphs) == 1
    assert any(node.target in (torch.ops.rungs.gemm, torch.ops.rungs.gemm.default) for node in graphs[0].graph.nodes)


def test_autograd_formulas_on_meta_tensors():
    a = meta(5, 7).requires_grad_()
    b = meta(7, 3).requires_grad_()
    c = rungs.gemm(a, b)
    c.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    x = meta(7).requires_grad_()
    rungs.gemv(a.detach(), x).sum().backward()
    assert x.grad.shape == (7,)


# -- what reaches the library: the fast path and the general path agree ----------------------------------
# CPU tensors stand in for CUDA tensors on device 0 (get_device patched), torch's current stream is
# 4242, and the extension module is replaced by a recorder of its calls. The torch fast path
# (_rungs.gemm_torch) calls the library from C++; here it runs as _rungs.gemm_torch_plan, the same
# reading of the tensors stopped before the library, whose call then goes to the recorder.

def _planned(lib):
    def gemm_torch(a, b, out, alpha, beta, variant, math):
        plan = rungs._rungs.gemm_torch_plan(a, b, out, alpha, beta, variant, math)
        if plan is None:
            return None
        lib.gemm(*plan[1])
        return plan[0]
    return gemm_torch


@pytest.fixture
def torch_path(monkeypatch):
    """The extension's torch path with torch's current stream 4242 and tensors on device 0."""
    monkeypatch.setattr(torch.Tensor, "get_device", lambda self: 0)
    rungs._core._setup_torch_path(lambda device: 4242)
    yield
    rungs._core._setup_torch_path()


@pytest.fixture
def library(monkeypatch, torch_path):
    import types

    calls = []
    monkeypatch.setattr(rungs._arrays, "_raw_stream", lambda device: 4242)
    fake = types.SimpleNamespace(
        gemm=lambda *args: calls.append(("gemm",) + args),
        gemv=lambda *args: calls.append(("gemv",) + args),
        reduce_sum=lambda *args: calls.append(("reduce_sum",) + args),
        stream_wait=lambda *args: calls.append(("stream_wait",) + args),
        stream_synchronize=lambda *args: calls.append(("stream_synchronize",) + args))
    monkeypatch.setattr(rungs._core, "_rungs", fake)
    monkeypatch.setattr(rungs._core, "gemm_torch", _planned(fake))
    return calls


def _views(rows, cols, dtype):
    base = torch.randn(rows + 3, cols + 5).to(dtype)
    return [base[:rows, :cols].contiguous(), base[:rows, :cols], base.T.contiguous()[:cols, :rows].T]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_fast_and_general_paths_make_the_same_call(library, dtype):
    for a in _views(5, 7, dtype):
        for b in _views(7, 3, dtype):
            for out in [None] + _views(5, 3, dtype):
                kw = dict(alpha=0.5, beta=0.0 if out is None else 2.0, variant="auto", math="fp32")
                fast = rungs._core.gemm_torch(a, b, out, kw["alpha"], kw["beta"], kw["variant"], kw["math"])
                general = rungs._core._gemm_impl(a, b, out, stream=None, **kw)
                assert fast is not None and general is not None
                f, g = library[-2], library[-1]
                if out is None:  # each allocated its own result
                    assert f[13] == fast.data_ptr() and g[13] == general.data_ptr()
                    f, g = f[:13] + f[14:], g[:13] + g[14:]
                assert f == g, (a.stride(), b.stride(), None if out is None else out.stride())


def test_the_call_for_views(library):
    a = torch.randn(7, 5).T          # 5 x 7, unit row stride: Trans::T, ld 5
    b = torch.randn(3, 10)[:, :7].T  # 7 x 3, the transpose of a 3 x 7 block of rows 10 long
    c = rungs.gemm(a, b, alpha=2.0, variant="warptile", math="tf32x3")
    (_, code, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc, variant, math, stream, device), = library
    assert (code, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc) == (0, True, True, 5, 3, 7, 2.0, 5, 10, 0.0, 3)
    assert (pa, pb, pc) == (a.data_ptr(), b.data_ptr(), c.data_ptr())
    assert (variant, math, stream, device) == ("warptile", 2, 4242, 0)
    # A transposed out: out.T = b.T @ a.T, the operands swapped and their flags flipped.
    out = torch.empty(3, 5).T
    rungs.gemm(a, b, out, beta=1.0)
    (_, code, ta, tb, m, n, k, *_rest), = library[1:]
    assert (ta, tb, m, n, k) == (False, False, 3, 5, 7)


def test_explicit_stream_waits_for_the_current_one(library):
    a, b, c = torch.randn(4, 4), torch.randn(4, 4), torch.empty(4, 4)
    rungs.gemm(a, b, c, stream=77)
    assert library[0] == ("stream_wait", 77, 4242, 0)
    assert library[1][0] == "gemm" and library[1][-2:] == (77, 0)
    rungs.gemv(a, b[0], c[0], stream=type("S", (), {"cuda_stream": 4242})())  # torch's own: no wait
    assert [call[0] for call in library[2:]] == ["gemv"]


def test_fast_path_declines(library):
    # (_core.gemm_torch is the plan here: a plan that did not decline would reach the recorder.)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    assert rungs._core.gemm_torch(a.requires_grad_(), b, None, 1.0, 0.0, "auto", "fp32") is None
    assert rungs._core.gemm_torch(a.detach(), b.half(), None, 1.0, 0.0, "auto", "fp32") is None
    assert rungs._core.gemm_torch(a.detach(), b[:, ::2], None, 1.0, 0.0, "auto", "fp32") is None
    assert rungs._core.gemm_torch(a.detach(), b, None, 1.0, 1.0, "auto", "fp32") is None  # beta without out
    assert rungs._core.gemm_torch(a.detach(), b, None, 1.0, 0.0, "auto", "fp8") is None
    assert not library  # declining does nothing


def test_extension_path_declines_without_a_call(torch_path):
    # The extension's own gemm_torch (which would call the library) declines what the plan declines,
    # before reading a pointer or calling anything.
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    ext = rungs._rungs.gemm_torch
    assert ext(a.requires_grad_(), b, None, 1.0, 0.0, "auto", "fp32") is None
    a = a.detach()
    assert ext(a, b.half(), None, 1.0, 0.0, "auto", "fp32") is None
    assert ext(a, b[:, ::2], None, 1.0, 0.0, "auto", "fp32") is None
    assert ext(a, b, None, 1.0, 1.0, "auto", "fp32") is None
    assert ext(a, b, None, 1.0, 0.0, "auto", "fp8") is None
    assert ext(a, torch.randn(5, 4), None, 1.0, 0.0, "auto", "fp32") is None  # k mismatch
    assert ext(a, b, torch.empty(4, 5), 1.0, 0.0, "auto", "fp32") is None      # out's shape
    assert ext(a, b, None, torch.tensor(1.0), 0.0, "auto", "fp32") is None     # alpha not a number
    assert ext(a.int(), b.int(), None, 1.0, 0.0, "auto", "fp32") is None
    assert ext(a[None], b, None, 1.0, 0.0, "auto", "fp32") is None            # 3-D


_torch_module = rungs._core._rungs_torch if hasattr(rungs._core, "_rungs_torch") else None
needs_torch_module = pytest.mark.skipif(
    _torch_module is None, reason="rungs._rungs_torch not built here (no CUDA build of torch at build time)")


@needs_torch_module
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_libtorch_path_makes_the_general_paths_call(library, dtype):
    # rungs._rungs_torch reads the tensors through libtorch; its plan (CPU tensors standing in for
    # CUDA ones on device 0, the stream given) must make the general path's call.
    for a in _views(5, 7, dtype):
        for b in _views(7, 3, dtype):
            for out in [None] + _views(5, 3, dtype):
                kw = dict(alpha=0.5, beta=0.0 if out is None else 2.0, variant="auto", math="fp32")
                plan = _torch_module.plan(a, b, out, kw["alpha"], kw["beta"], kw["variant"], kw["math"], 4242)
                general = rungs._core._gemm_impl(a, b, out, stream=None, **kw)
                assert plan is not None and general is not None
                result, f = plan
                g = library[-1][1:]
                if out is None:  # each allocated its own result
                    assert result.shape == (5, 3) and result.dtype == dtype
                    assert f[12] == result.data_ptr() and g[12] == general.data_ptr()
                    f, g = f[:12] + f[13:], g[:12] + g[13:]
                else:
                    assert result is out
                assert f == g, (a.stride(), b.stride(), None if out is None else out.stride())


@needs_torch_module
def test_libtorch_path_declines():
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    plan = _torch_module.plan
    assert plan(a, b, None, 1.0, 0.0, "auto", "fp32", 0) is not None
    assert plan(a.requires_grad_(), b, None, 1.0, 0.0, "auto", "fp32", 0) is None
    with torch.no_grad():  # without grad mode a tensor that requires grad is read as any other
        assert plan(a, b, None, 1.0, 0.0, "auto", "fp32", 0) is not None
    a = a.detach()
    assert plan(a, b.half(), None, 1.0, 0.0, "auto", "fp32", 0) is None
    assert plan(a, b[:, ::2], None, 1.0, 0.0, "auto", "fp32", 0) is None
    assert plan(a, b, None, 1.0, 1.0, "auto", "fp32", 0) is None                # beta without out
    assert plan(a, b, None, 1.0, 0.0, "auto", "fp8", 0) is None
    assert plan(a, torch.randn(5, 4), None, 1.0, 0.0, "auto", "fp32", 0) is None  # k mismatch
    assert plan(a, b, torch.empty(4, 5), 1.0, 0.0, "auto", "fp32", 0) is None     # out's shape
    assert plan(a, b, torch.empty(4, 4).half(), 1.0, 0.0, "auto", "fp32", 0) is None
    assert plan(a, b, None, torch.tensor(1.0), 0.0, "auto", "fp32", 0) is None    # alpha not a number
    assert plan(a.int(), b.int(), None, 1.0, 0.0, "auto", "fp32", 0) is None
    assert plan(a[None], b, None, 1.0, 0.0, "auto", "fp32", 0) is None           # 3-D
    assert plan(a.to_sparse(), b, None, 1.0, 0.0, "auto", "fp32", 0) is None     # not strided
    assert plan(torch.nn.Parameter(a, requires_grad=False), b, None, 1.0, 0.0, "auto", "fp32", 0) is not None

    class Sub(torch.Tensor):
        pass

    assert plan(a.as_subclass(Sub), b, None, 1.0, 0.0, "auto", "fp32", 0) is None  # a subclass: its own rules
    # The call itself takes CUDA tensors only: CPU tensors are declined before anything runs.
    assert _torch_module.gemm(a, b, None, 1.0, 0.0, "auto", "fp32") is None


def test_fast_path_numerically(monkeypatch, torch_path):
    # The direct torch path on CPU tensors standing in for CUDA ones, with the library replaced by
    # HostLibrary (conftest.py): every layout of a, b and out gives the float64 product.
    from conftest import HostLibrary

    monkeypatch.setattr(torch.Tensor, "get_device", lambda self: 0)
    monkeypatch.setattr(rungs._arrays, "_raw_stream", lambda device: 0)
    host = HostLibrary()
    monkeypatch.setattr(rungs._core, "_rungs", host)
    monkeypatch.setattr(rungs._core, "gemm_torch", _planned(host))
    for dtype, tol in [(torch.float32, 1e-5), (torch.float16, 2e-3)]:
        for a in _views(5, 7, dtype):
            for b in _views(7, 3, dtype):
                ref = a.double() @ b.double()
                c = rungs.gemm(a, b, alpha=2.0)
                assert (c.double() - 2 * ref).abs().max() <= tol * 2 * ref.abs().max()
                for out in _views(5, 3, dtype):
                    want = 2 * ref - out.double()
                    assert rungs.gemm(a, b, out, alpha=2.0, beta=-1.0) is out
                    assert (out.double() - want).abs().max() <= tol * want.abs().max()
    a, x = torch.randn(6, 4), torch.randn(8)[::2]
    y = rungs.gemv(a.T, x, trans=True)  # (a.T).T @ x = a @ x
    assert y.shape == (6,) and (y.double() - a.double() @ x.double()).abs().max() < 1e-5

