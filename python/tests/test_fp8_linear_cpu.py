"""rungs.scaled_mm, rungs.linear, rungs.torch and rungs.dist without a GPU.

- The fp8 scaling is read off the scales' shapes (every kind, and the error naming each kind's).
- The mapping onto the library, checked numerically: CPU tensors stand in for CUDA tensors on
  device 0 and HostLibrary (conftest.py) computes the library's calls in float64 on their memory.
- The fake implementations (meta tensors, torch.compile) reject what the real call rejects, with
  the same exception type and message: each case runs both ways.
- swap_linears swaps and restores; torch.compile(fullgraph=True) traces a swapped model.
Skipped where torch is not installed."""

import pytest

torch = pytest.importorskip("torch")

import rungs  # noqa: E402
from conftest import HostLibrary  # noqa: E402

if not rungs._torch_ops.AVAILABLE:  # pragma: no cover - torch older than 2.4
    pytest.skip("torch.library.custom_op needs torch 2.4 or newer", allow_module_level=True)

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device="meta")


@pytest.fixture
def host(monkeypatch):
    """CPU tensors read as CUDA tensors on device 0 (torch's current stream 0), the library
    replaced by HostLibrary; the eager fast paths stay out (they read CUDA tensors only)."""
    monkeypatch.setattr(torch.Tensor, "get_device", lambda self: 0)
    monkeypatch.setattr(rungs._arrays, "_raw_stream", lambda device: 0)
    lib = HostLibrary()
    monkeypatch.setattr(rungs._core, "_rungs", lib)
    monkeypatch.setattr(rungs._core, "gemm_torch", lambda *args: None)
    monkeypatch.setattr(rungs._core, "linear_torch", lambda *args: None)
    return lib


def blocks(v):
    return (v + 127) // 128


# -- the scaling, from the scales' shapes -----------------------------------------------------------

@pytest.mark.parametrize("sa, sb, kind", [
    ((), (), 0), ((1,), (1, 1), 0), ((5,), (7,), 1), ((5, 1), (1, 7), 1), ((5,), (1, 7), 1),
    ((5, 3), (1, 3), 2),
])
def test_scale_kind(sa, sb, kind):
    assert rungs._core.scale_kind(sa, sb, 5, 7, 300) == kind


def test_scale_kind_error_names_each_kinds_shapes():
    with pytest.raises(ValueError) as e:
        rungs._core.scale_kind((5, 2), (7,), 5, 7, 300)
    msg = str(e.value)
    assert msg.startswith("scale_a, scale_b: shapes (5, 2) and (7,) fit no scaling for a 5 x 300 by 300 x 7 product")
    for needed in ("tensor: one value each", "outer: scale_a (5,) or (5, 1) and scale_b (7,) or (1, 7)",
                   "block128: scale_a (5, 3) and scale_b (1, 3)"):
        assert needed in msg


def test_scaled_mm_on_meta_tensors():
    a, b = meta(5, 300, dtype=E4M3), meta(7, 300, dtype=E5M2).T
    c = rungs.scaled_mm(a, b, meta(5, 1), meta(1, 7))
    assert c.shape == (5, 7) and c.dtype == torch.bfloat16 and c.device.type == "meta"
    c = rungs.scaled_mm(a, b, meta(()), meta(1), out_dtype=torch.float32)
    assert c.dtype == torch.float32
    out = meta(5, 7)
    assert rungs.scaled_mm(a, b, meta(5, 3), meta(1, 3), out=out, beta=1.0) is out


@pytest.mark.parametrize("call, message", [
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=torch.bfloat16), meta(16, 7, dtype=E4M3), meta(()), meta(())),
     "^a: dtype bfloat16; rungs.scaled_mm takes float8_e4m3fn, float8_e5m2"),
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=E4M3), meta(15, 7, dtype=E4M3), meta(()), meta(())),
     r"^b: shape \(15, 7\) does not match a's \(5, 16\)"),
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=E4M3), meta(16, 7, dtype=E4M3), meta((), dtype=torch.float16),
                             meta(())), "^scale_a: dtype float16; rungs.scaled_mm takes float32"),
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=E4M3), meta(16, 7, dtype=E4M3), meta(()), meta(()),
                             out_dtype=torch.float16), "^out_dtype: dtype float16; rungs.scaled_mm takes bfloat16"),
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=E4M3), meta(16, 7, dtype=E4M3), meta(()), meta(()), beta=1.0),
     "^beta: 1.0 needs out="),
    (lambda: rungs.scaled_mm(meta(5, 16, dtype=E4M3), meta(16, 7, dtype=E4M3), meta(()), meta(()),
                             out=meta(5, 7, dtype=torch.bfloat16), out_dtype=torch.float32),
     "^out: dtype bfloat16, out_dtype is float32"),
    (lambda: rungs.scaled_mm(meta(5, 300, dtype=E4M3), meta(300, 7, dtype=E4M3), meta(3, 5).T, meta(1, 3)),
     r"^scale_a: shape \(5, 3\) with strides \(1, 5\)"),
    (lambda: rungs.scaled_mm(meta(5, 300, dtype=E4M3), meta(300, 7, dtype=E4M3), meta(5, 3), meta(1, 3),
                             out=meta(7, 5).T), "^out: a transposed view"),
])
def test_scaled_mm_checks(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _fp8(t, dtype=E4M3):
    return t.clamp(-400, 400).to(dtype)


@pytest.mark.parametrize("kind", ["tensor", "outer", "block128"])
def test_scaled_mm_numerically(host, kind):
    m, n, k = 5, 131, 300
    A = _fp8(torch.randn(m, k) * 8)
    Bnk = _fp8(torch.randn(n, k) * 8, E5M2)  # stored n x k, read as its transpose (Trans::T)
    sa = {"tensor": torch.rand(()) + 0.5, "outer": torch.rand(m, 1) + 0.5, "block128": torch.rand(m, blocks(k)) + 0.5}
    sb = {"tensor": torch.rand(1) + 0.5, "outer": torch.rand(1, n) + 0.5,
          "block128": torch.rand(blocks(n), blocks(k)) + 0.5}
    sa, sb = sa[kind], sb[kind]

    def dequant(x, s, rows_blocks):
        if kind == "tensor":
            return x.double() * s.double().reshape(())
        if kind == "outer":
            return x.double() * s.double().reshape(-1, 1)
        cols = torch.arange(x.shape[1]) // 128
        rows = torch.arange(x.shape[0]) // (128 if rows_blocks else 1)
        return x.double() * s.double()[rows][:, cols]

    ref = dequant(A, sa, False) @ dequant(Bnk, sb.reshape(n, 1) if kind == "outer" else sb, True).T
    for a in (A, A.T.contiguous().T):
        for b in (Bnk.T, Bnk.T.contiguous()):
            c = rungs.scaled_mm(a, b, sa, sb, alpha=0.5)
            assert c.dtype == torch.bfloat16 and c.shape == (m, n)
            assert (c.double() - 0.5 * ref).abs().max() <= 1e-2 * ref.abs().max()
            outs = [torch.randn(m, n)] + ([torch.randn(n, m).T] if kind != "block128" else [])
            for out in outs:
                want = ref + 2 * out.double()
                assert rungs.scaled_mm(a, b, sa, sb, out=out, beta=2.0) is out
                assert (out.double() - want).abs().max() <= 1e-5 * want.abs().max()


def test_quantize_fp8_round_trip():
    t = torch.randn(130, 300) * torch.logspace(-3, 3, 300)
    for gran, shape in [("tensor", (1,)), ("row", (130, 1)), ("1x128", (130, 3)), ("128x128", (2, 3))]:
        q, s = rungs.torch.quantize_fp8(t, gran)
        assert q.dtype == E4M3 and q.shape == t.shape and s.shape == shape and s.dtype == torch.float32
        if gran == "tensor":
            back = q.float() * s
        elif gran == "row":
            back = q.float() * s
        elif gran == "1x128":
            back = q.float() * s[:, torch.arange(300) // 128]
        else:
            back = q.float() * s[torch.arange(130) // 128][:, torch.arange(300) // 128]
        amax = {"tensor": t.abs().max(), "row": t.abs().amax(1, keepdim=True)}.get(gran)
        if amax is None:
            continue  # blocks: each block's own bound, checked below in bulk
        assert ((back - t).abs() <= amax / 448 * 8 + t.abs() * 2 ** -3).all(), gran
    q, s = rungs.torch.quantize_fp8(torch.zeros(3, 200), "1x128")
    assert (s == 1).all() and (q.float() == 0).all()


# -- rungs.linear ------------------------------------------------------------------------------------

def test_linear_on_meta_tensors():
    w, b = meta(6, 7), meta(6)
    for shape in [(7,), (5, 7), (2, 3, 7), (0, 7)]:
        assert rungs.linear(meta(*shape), w, b).shape == shape[:-1] + (6,)
    y = rungs.linear(meta(4, 7, dtype=torch.bfloat16), meta(6, 7, dtype=E4M3), weight_scale=meta(6))
    assert y.shape == (4, 6) and y.dtype == torch.bfloat16
    y = rungs.linear(meta(2, 4, 300, dtype=E4M3), meta(6, 300, dtype=E4M3), weight_scale=meta(1, 3),
                     x_scale=meta(2, 4, 3), out_dtype=torch.float32)
    assert y.shape == (2, 4, 6) and y.dtype == torch.float32


@pytest.mark.parametrize("call, message", [
    (lambda: rungs.linear(meta(5, 8), meta(6, 7)), r"^x: shape \(5, 8\); weight is 6 x 7"),
    (lambda: rungs.linear(meta(5, 7), meta(6, 7), meta(5)), r"^bias: shape \(5,\)"),
    (lambda: rungs.linear(meta(5, 7), meta(6, 7, dtype=torch.float16)), "^x: dtype float32, weight's is float16"),
    (lambda: rungs.linear(meta(5, 7), meta(6, 7), out_dtype=torch.bfloat16), "^out_dtype: bfloat16"),
    (lambda: rungs.linear(meta(5, 7), meta(6, 7, dtype=E4M3)), "^weight: dtype float8_e4m3fn; an fp8 weight needs"),
    (lambda: rungs.linear(meta(5, 7), meta(6, 7, dtype=E4M3), weight_scale=meta(5)),
     r"^weight_scale: shape \(5,\) fits no scaling of a 6 x 7 weight"),
    (lambda: rungs.linear(meta(5, 7, dtype=E4M3), meta(6, 7, dtype=E4M3), weight_scale=meta(6)),
     "^x_scale: None with an fp8 x"),
    (lambda: rungs.linear(meta(5, 7, dtype=E4M3), meta(6, 7, dtype=E4M3), weight_scale=meta(6), x_scale=meta(4)),
     r"^x_scale: shape \(4,\); with a per-feature weight_scale"),
])
def test_linear_checks(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_linear_takes_torch_tensors():
    import numpy as np

    with pytest.raises(TypeError, match="^x: ndarray is not a torch tensor"):
        rungs.linear(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="^x: a torch tensor on cpu; rungs.linear takes tensors on a CUDA device"):
        rungs.linear(torch.ones(2, 2), torch.ones(2, 2))
    with pytest.raises(TypeError, match="^weight: list is not a torch tensor"):
        rungs.linear(torch.ones(2, 2), [[1.0]])


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float16, 3e-3)])
def test_linear_numerically(host, dtype, tol):
    w = torch.randn(6, 7).to(dtype)
    bias = torch.randn(6).to(dtype)
    xs = [torch.randn(7), torch.randn(5, 7), torch.randn(2, 3, 7), torch.randn(3, 4, 9)[:, 1:3, :7],
          torch.randn(7, 2, 3).permute(1, 2, 0)]
    for x in xs:
        x = x.to(dtype)
        for b in (None, bias):
            y = rungs.linear(x, w, b)
            ref = torch.nn.functional.linear(x.double(), w.double(), None if b is None else b.double())
            assert y.shape == ref.shape and y.dtype == dtype
            assert (y.double() - ref).abs().max() <= tol * ref.abs().max(), (x.shape, x.stride(), b is None)
    # the weight is read in place as W^T
    assert all(c[0] == "gemm" and c[2] is True for c in host.calls)


@pytest.mark.parametrize("gran, kind", [("tensor", "tensor"), ("row", "outer"), ("128x128", "block128")])
def test_linear_fp8_numerically(host, gran, kind):
    k, n = 300, 130
    w = torch.randn(n, k)
    wq, ws = rungs.torch.quantize_fp8(w, gran)
    if kind == "tensor":
        w_read = wq.double() * ws.double()
    elif kind == "outer":
        w_read = wq.double() * ws.double()
    else:
        w_read = wq.double() * ws.double()[torch.arange(n) // 128][:, torch.arange(k) // 128]
    bias = torch.randn(n)
    x = torch.randn(2, 3, k)
    y = rungs.linear(x, wq, bias, weight_scale=ws.reshape(n) if kind == "outer" else ws)
    assert y.shape == (2, 3, n) and y.dtype == torch.float32
    ref = x.double() @ w_read.T + bias.double()
    # x quantized to e4m3 (3 mantissa bits): about 2^-4 per element, averaging over k
    assert (y.double() - ref).abs().max() <= 0.05 * ref.abs().max()
    # an fp8 x with its scales: exactly the dequantized product
    xq, xs = rungs.torch.quantize_fp8(x.reshape(6, k), {"tensor": "tensor", "outer": "row", "block128": "1x128"}[kind])
    y = rungs.linear(xq.reshape(2, 3, k), wq, weight_scale=ws, x_scale=xs.reshape(2, 3, -1) if kind != "tensor"
                     else xs, out_dtype=torch.float32)
    x_read = {"tensor": lambda: xq.double() * xs.double(), "outer": lambda: xq.double() * xs.double(),
              "block128": lambda: xq.double() * xs.double()[:, torch.arange(k) // 128]}[kind]()
    ref = (x_read @ w_read.T).reshape(2, 3, n)
    assert (y.double() - ref).abs().max() <= 1e-5 * ref.abs().max()


def test_linear_autograd_on_meta_tensors():
    x = meta(2, 3, 7).requires_grad_()
    w = meta(6, 7).requires_grad_()
    b = meta(6).requires_grad_()
    rungs.linear(x, w, b).sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape and b.grad.shape == b.shape


# -- the fakes reject what the real call rejects -----------------------------------------------------
# Each case runs on meta tensors (the fake implementation, as torch.compile's tracing runs it) and
# on CPU tensors standing in for CUDA tensors (the real call's own checks, which all run before the
# library would touch memory); both must raise the same exception type with the same message.
# tests/test_gpu.py holds the same cases against the real call on CUDA tensors.

def _t(device, *shape, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype, device=device)


REJECTED = {
    "gemm a[::2, ::2]": lambda d: rungs.gemm(_t(d, 8, 8)[::2, ::2], _t(d, 4, 4)),
    "gemm unknown variant": lambda d: rungs.gemm(_t(d, 4, 4), _t(d, 4, 4), variant="no_such_rung"),
    "gemm tf32 on bfloat16": lambda d: rungs.gemm(_t(d, 4, 4, dtype=torch.bfloat16),
                                                  _t(d, 4, 4, dtype=torch.bfloat16), math="tf32"),
    "gemm a rung without the type": lambda d: rungs.gemm(_t(d, 4, 4, dtype=torch.float16),
                                                         _t(d, 4, 4, dtype=torch.float16), variant="naive"),
    "gemm out= of stride 0": lambda d: rungs.gemm(_t(d, 4, 4), _t(d, 4, 4), _t(d, 4, 1).expand(4, 4), beta=1.0),
    "gemv unknown variant": lambda d: rungs.gemv(_t(d, 4, 4), _t(d, 4), variant="no_such_rung"),
    "gemv x of stride 0": lambda d: rungs.gemv(_t(d, 4, 4), _t(d, 1).expand(4)),
    "reduce unknown variant": lambda d: rungs.reduce_sum(_t(d, 9), variant="no_such_rung"),
    "reduce strided x": lambda d: rungs.reduce_sum(_t(d, 18)[::2]),
    "scaled_mm unknown variant": lambda d: rungs.scaled_mm(_t(d, 4, 32, dtype=E4M3), _t(d, 32, 4, dtype=E4M3),
                                                           _t(d, 1), _t(d, 1), variant="no_such_rung"),
    "scaled_mm a rung without fp8": lambda d: rungs.scaled_mm(_t(d, 4, 32, dtype=E4M3), _t(d, 32, 4, dtype=E4M3),
                                                              _t(d, 1), _t(d, 1), variant="warptile"),
    "scaled_mm a[::2, ::2]": lambda d: rungs.scaled_mm(_t(d, 8, 64, dtype=E4M3)[::2, ::2], _t(d, 32, 4, dtype=E4M3),
                                                       _t(d, 1), _t(d, 1)),
    "scaled_mm scales of no kind": lambda d: rungs.scaled_mm(_t(d, 4, 32, dtype=E4M3), _t(d, 32, 4, dtype=E4M3),
                                                             _t(d, 3), _t(d, 4)),
    "linear unknown variant": lambda d: rungs.linear(_t(d, 2, 3, 4), _t(d, 5, 4), variant="no_such_rung"),
    "linear tf32 on float16": lambda d: rungs.linear(_t(d, 3, 4, dtype=torch.float16), _t(d, 5, 4, dtype=torch.float16),
                                                     math="tf32"),
    "linear weight[::2, ::2]": lambda d: rungs.linear(_t(d, 3, 4), _t(d, 10, 8)[::2, ::2]),
    "linear fp8 unknown variant": lambda d: rungs.linear(_t(d, 3, 32), _t(d, 5, 32, dtype=E4M3),
                                                         weight_scale=_t(d, 5), variant="no_such_rung"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_fake_rejects_what_the_call_rejects(host, case):
    with pytest.raises(Exception) as real:
        REJECTED[case]("cpu")
    with pytest.raises(Exception) as fake:
        REJECTED[case]("meta")
    assert type(fake.value) is type(real.value) and str(fake.value) == str(real.value)
    assert isinstance(real.value, (ValueError, rungs.Error)), real.value
    assert not [c for c in host.calls if c[0] in ("gemm", "gemv", "reduce_sum", "scaled_mm")]  # nothing ran


# -- torch.compile ---------------------------------------------------------------------------------------

@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_compile_scaled_mm_and_linear_fullgraph(fresh_dynamo):
    def f(a, b, sa, sb, x, w, bias, w8, ws):
        c = rungs.scaled_mm(a, b, sa, sb, out_dtype=torch.float32)
        return c * 2, rungs.linear(x, w, bias).relu(), rungs.linear(x, w8, weight_scale=ws)

    g = torch.compile(f, fullgraph=True, backend="aot_eager")
    c, y, y8 = g(meta(5, 300, dtype=E4M3), meta(7, 300, dtype=E4M3).T, meta(5, 3), meta(1, 3), meta(2, 3, 32),
                 meta(6, 32), meta(6), meta(6, 32, dtype=E4M3), meta(6))
    assert c.shape == (5, 7) and c.dtype == torch.float32 and y.shape == (2, 3, 6) and y8.shape == (2, 3, 6)


def test_compile_rejects_at_trace_time(fresh_dynamo):
    g = torch.compile(lambda a, b: rungs.gemm(a, b, variant="no_such_rung"), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match='unknown variant "no_such_rung"'):
        g(meta(4, 4), meta(4, 4))


# -- swap_linears ---------------------------------------------------------------------------------------

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(8, 16)
        self.down = torch.nn.Linear(16, 8, bias=False)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(x + self.down(torch.relu(self.up(x))))


def test_swap_linears_and_restore():
    model = torch.nn.Sequential(Block(), Block())
    state = {k: v.clone() for k, v in model.state_dict().items()}
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    swapped = rungs.torch.swap_linears(model)
    assert swapped.names == ["0.up", "0.down", "1.up", "1.down"] and len(swapped) == 4
    assert all(type(m) is rungs.torch.RungsLinear and isinstance(m, torch.nn.Linear) for m in linears)
    assert [m for m in model.modules() if isinstance(m, torch.nn.Linear)] == linears  # the same objects
    assert all(torch.equal(state[k], v) for k, v in model.state_dict().items())
    swapped.restore()
    assert all(type(m) is torch.nn.Linear for m in linears)
    swapped.restore()  # a second restore does nothing
    only = rungs.torch.swap_linears(model, filter=lambda name, m: name.endswith("down"), variant="cublas")
    assert only.names == ["0.down", "1.down"] and model[0].down.rungs_variant == "cublas"
    assert type(model[0].up) is torch.nn.Linear
    with only:
        pass
    assert type(model[0].down) is torch.nn.Linear and "rungs_variant" not in model[0].down.__dict__
    with pytest.raises(TypeError, match="is not a torch.nn.Module"):
        rungs.torch.swap_linears(object())


def test_swapped_model_routes_through_rungs(host):
    model = Block()
    x = torch.randn(2, 3, 8)
    want = model(x)
    with rungs.torch.swap_linears(model):
        got = model(x)
    assert [c[0] for c in host.calls] == ["gemm", "gemm"]
    assert (got - want).abs().max() < 1e-5


def test_compile_swapped_model_fullgraph(fresh_dynamo):
    model = torch.nn.Sequential(Block(), Block()).to("meta")
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    with rungs.torch.swap_linears(model):
        y = torch.compile(model, fullgraph=True, backend=backend)(meta(2, 3, 8))
    assert y.shape == (2, 3, 8) and len(graphs) == 1
    ops = [n.target for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert sum(op in (torch.ops.rungs.linear, torch.ops.rungs.linear.default) for op in ops) == 4


# -- rungs.dist, JAX --------------------------------------------------------------------------------------

def test_dist_needs_an_initialized_group_and_cuda_tensors():
    if not rungs.dist.available():
        with pytest.raises(rungs.Unsupported, match="no NCCL ladder"):
            rungs.dist.allgather_gemm(torch.ones(2, 2), torch.ones(2, 2))
        with pytest.raises(ValueError, match="no NCCL ladder"):
            rungs.variants("allgather_gemm")
        return
    assert [v.name for v in rungs.variants("allgather_gemm")]
    a = torch.ones(2, 2, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="^a_local: a torch tensor on cpu"):
        rungs.dist.allgather_gemm(a, a)
    with pytest.raises(TypeError, match="is not a torch tensor"):
        rungs.dist.gemm_reducescatter([1], a)
    with pytest.raises(ValueError, match="^a: a torch tensor on meta"):
        rungs.dist.gemm_reducescatter(a.to("meta"), a.to("meta"))


def test_dist_checks(host):
    if not rungs.dist.available():
        pytest.skip("this build has no NCCL ladder")
    bf = dict(dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="^a_local: dtype float32; rungs.allgather_gemm takes float16, bfloat16"):
        rungs.dist.allgather_gemm(torch.ones(2, 2), torch.ones(2, 2))
    with pytest.raises(ValueError, match="^b: a transposed view"):
        rungs.dist.allgather_gemm(torch.ones(2, 3, **bf), torch.ones(2, 3, **bf).T)
    with pytest.raises(ValueError, match=r"^b: shape \(4, 2\) does not match a_local's \(2, 3\)"):
        rungs.dist.allgather_gemm(torch.ones(2, 3, **bf), torch.ones(4, 2, **bf))
    with pytest.raises(ValueError, match="^group: torch.distributed is not initialized"):
        rungs.dist.allgather_gemm(torch.ones(2, 3, **bf), torch.ones(3, 2, **bf))


def test_jax_inside_jit_says_so():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    @jax.jit
    def f(a, b):
        return rungs.gemm(a, b)

    with pytest.raises(ValueError, match="^a: a JAX tracer"):
        f(jnp.ones((2, 2)), jnp.ones((2, 2)))
