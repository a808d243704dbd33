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
