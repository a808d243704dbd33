"""rungs from Python on a GPU: every rung of every ladder against a float64 reference at odd shapes,
transposed views, out= with beta, f16 / bf16 / tf32 / tf32x3, torch, CuPy, JAX and plain DLPack /
__cuda_array_interface__ producers, stream ordering on a side stream without synchronization,
torch.compile(fullgraph=True), autograd, concurrent calls from Python threads, and no device memory
beyond the result. Skipped where no CUDA device is usable; the torch-based tests need torch."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import rungs
from conftest import GPU, call, rel_err

if not GPU:
    pytest.skip("no usable CUDA device", allow_module_level=True)

torch = pytest.importorskip("torch", reason="the GPU tests compare against torch")

# Normwise relative error bound of a product, by element type and math mode (inputs are exact in
# their type; the reference is their float64 product).
TOL = {"f32": 1e-5, "tf32": 3e-3, "tf32x3": 1e-5, "f16": 2e-3, "bf16": 1e-2}
TORCH_DTYPE = {"f32": torch.float32, "tf32": torch.float32, "tf32x3": torch.float32, "f16": torch.float16,
               "bf16": torch.bfloat16}
MATH = {"f32": "fp32", "tf32": "tf32", "tf32x3": "tf32x3", "f16": "fp32", "bf16": "fp32"}


def device_sm():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def runs_here(v):
    if v.min_sm > device_sm():
        pytest.skip(f"{v.name} needs sm_{v.min_sm}")


def mag_err(got, ref, mag):
    """The error against the size of the terms summed (mag = |A| |x|, and |beta| |y| where it
    applies): the bound a float32 dot product meets whatever the cancellation, where an error
    relative to |ref| grows without limit as the terms cancel (a 1-element gemv of 513 terms)."""
    got = got.double()
    return ((got - ref).norm() / mag.norm().clamp_min(1e-30)).item()


def rand(*shape, dtype=torch.float32, gen=None):
    return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(dtype)


def operand(rows, cols, transposed, dtype):
    """A rows x cols operand: row-major, or the transposed view of a cols x rows matrix."""
    return rand(cols, rows, dtype=dtype).T if transposed else rand(rows, cols, dtype=dtype)


# fp8 goes through rungs.scaled_mm (test_gpu_fp8_linear.py).
GEMM_CASES = [(v.name, t) for v in rungs.variants("gemm") for t in v.types.split() if t != "fp8"]
SHAPES = [(37, 29, 43), (1, 65, 3), (130, 67, 1)]


# -- gemm: every rung, every type it does ------------------------------------------------------------

@pytest.mark.parametrize("variant, kind", GEMM_CASES, ids=[f"{v}-{t}" for v, t in GEMM_CASES])
def test_gemm_every_rung(variant, kind):
    runs_here(next(v for v in rungs.variants("gemm") if v.name == variant))
    dtype, math, tol = TORCH_DTYPE[kind], MATH[kind], TOL[kind]
    ran = 0
    for m, n, k in SHAPES:
        for ta in (False, True):
            for tb in (False, True):
                a, b = operand(m, k, ta, dtype), operand(k, n, tb, dtype)
                ref = a.double() @ b.double()
                try:
                    c = call(rungs.gemm, a, b, variant=variant, math=math)
                except rungs.Unsupported:
                    continue  # a shape the rung refuses (the decode rungs: m > 128); some shape must run
                ran += 1
                assert c.shape == (m, n) and c.dtype == dtype and c.device == a.device
                err = rel_err(c, ref)
                assert err < tol, (variant, kind, m, n, k, ta, tb, err)
                # out= with beta, into a transposed view of a wider buffer
                c0 = rand(n + 3, m, dtype=dtype)[:n].T
                c0_ref = c0.double().clone()
                out = call(rungs.gemm, a, b, c0, alpha=-0.75, beta=0.5, variant=variant, math=math)
                assert out is c0
                err = rel_err(c0, -0.75 * ref + 0.5 * c0_ref)
                assert err < tol, (variant, kind, "out", m, n, k, ta, tb, err)
    assert ran, (variant, kind, "refused every shape")


def test_gemm_auto_and_padded_rows():
    big = rand(300, 520)
    a, b = big[:77, 5:98], big[100:193, :61]  # rows padded to 520, offset starts
    c = rungs.gemm(a, b)
    assert rel_err(c, a.double() @ b.double()) < TOL["f32"]
    for kind in ("f16", "bf16", "tf32x3"):
        a, b = rand(257, 129, dtype=TORCH_DTYPE[kind]), rand(129, 95, dtype=TORCH_DTYPE[kind])
        c = rungs.gemm(a, b, math=MATH[kind])
        assert rel_err(c, a.double() @ b.double()) < TOL[kind], kind


def test_gemm_empty_and_k0():
    a, b = rand(5, 0), rand(0, 4)
    c = rand(5, 4)
    want = 2 * c.double()
    rungs.gemm(a, b, c, beta=2.0)
    assert torch.equal(c.double(), want)
    assert rungs.gemm(rand(0, 3), rand(3, 4)).shape == (0, 4)


def test_resolve_variant():
    a, b = rand(512, 256), rand(256, 128)
    names = {v.name for v in rungs.variants("gemm")}
    assert rungs.resolve_variant("gemm", a, b) in names
    assert rungs.resolve_variant("gemm", a, b, variant="warptile") == "warptile"
    assert rungs.resolve_variant("gemm", a.half(), b.half()) in names
    assert rungs.resolve_variant("gemv", a, rand(256)) in {v.name for v in rungs.variants("gemv")}
    assert rungs.resolve_variant("reduce", rand(1000)) in {v.name for v in rungs.variants("reduce")}
    with pytest.raises(rungs.Error, match="unknown variant"):
        rungs.resolve_variant("gemm", a, b, variant="nope")


def test_library_errors():
    a = rand(8, 8, dtype=torch.float16)
    with pytest.raises(rungs.Unsupported, match="naive: does not do __half"):
        rungs.gemm(a, a, variant="naive")
    with pytest.raises(rungs.Error, match="math modes apply to float inputs only"):
        rungs.gemm(a, a, math="tf32")
    with pytest.raises(rungs.Error, match='unknown variant "nope"'):
        rungs.reduce_sum(rand(8), variant="nope")


# -- gemv ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", [v.name for v in rungs.variants("gemv")])
def test_gemv_every_rung(variant):
    runs_here(next(v for v in rungs.variants("gemv") if v.name == variant))
    for m, n in [(37, 29), (1, 300), (513, 1), (1000, 7)]:
        for at in (False, True):
            a = operand(m, n, at, torch.float32)
            for trans in (False, True):
                x_len, y_len = (m, n) if trans else (n, m)
                x = rand(2 * x_len)[::2]  # element stride 2
                op_a = a.double().T if trans else a.double()
                ref = op_a @ x.double()
                mag = op_a.abs() @ x.double().abs()
                y = call(rungs.gemv, a, x, trans=trans, variant=variant)
                assert y.shape == (y_len,) and y.dtype == torch.float32
                assert mag_err(y, ref, mag) < 1e-5, (variant, m, n, at, trans)
                y0 = rand(3 * y_len)[::3]
                y0_ref = y0.double().clone()
                assert call(rungs.gemv, a, x, y0, trans=trans, alpha=1.5, beta=-2.0, variant=variant) is y0
                assert mag_err(y0, 1.5 * ref - 2.0 * y0_ref, 1.5 * mag + 2.0 * y0_ref.abs()) < 1e-5, (
                    variant, "out", m, n, at, trans)


# -- reduce_sum ------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", [v.name for v in rungs.variants("reduce")])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float64])
def test_reduce_every_rung(variant, dtype):
    runs_here(next(v for v in rungs.variants("reduce") if v.name == variant))
    for n in (0, 1, 1000, 1_000_003):
        if dtype.is_floating_point:
            x = rand(n, dtype=dtype)
        else:
            x = torch.randint(-1000, 1000, (n,), device="cuda", dtype=dtype)
        s = call(rungs.reduce_sum, x, variant=variant)
        assert s.shape == () and s.device == x.device
        if dtype.is_floating_point:
            assert s.dtype == dtype
            tol = (1e-5 if dtype == torch.float32 else 1e-13) * max(x.double().abs().sum().item(), 1.0)
            assert abs(s.item() - x.double().sum().item()) <= tol, (variant, dtype, n)
        else:
            assert s.dtype == torch.int64
            assert s.item() == x.long().sum().item(), (variant, dtype, n)


def test_reduce_auto_is_reproducible():
    x = rand(3_000_001)
    assert rungs.reduce_sum(x).item() == rungs.reduce_sum(x.clone()).item()


# -- other producers: DLPack and __cuda_array_interface__ wrappers, CuPy, JAX ---------------------------

class DLPackOnly:
    """A torch tensor seen only through DLPack."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)


class CaiOnly:
    """A torch tensor seen only through __cuda_array_interface__."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


@pytest.mark.parametrize("wrap", [DLPackOnly, CaiOnly])
def test_generic_producers(wrap):
    dtypes = [torch.float32, torch.float16] + ([torch.bfloat16] if wrap is DLPackOnly else [])
    for dtype in dtypes:
        a, b = rand(33, 17, dtype=dtype), rand(40, 17, dtype=dtype).T
        c = torch.zeros(33, 40, dtype=dtype, device="cuda")
        assert rungs.gemm(wrap(a), wrap(b), wrap(c)) is not None
        kind = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
        assert rel_err(c, a.double() @ b.double()) < TOL[kind], (wrap.__name__, dtype)
    with pytest.raises(ValueError, match="pass the result's array as out="):
        rungs.gemm(wrap(rand(2, 2)), wrap(rand(2, 2)))


def test_cupy():
    cp = pytest.importorskip("cupy")
    a = cp.random.rand(37, 29, dtype=cp.float32) - 0.5
    b = cp.random.rand(29, 43, dtype=cp.float32) - 0.5
    c = rungs.gemm(a, b.T.copy().T)
    assert isinstance(c, cp.ndarray) and c.shape == (37, 43) and c.dtype == cp.float32
    ref = cp.asnumpy(a).astype(np.float64) @ cp.asnumpy(b).astype(np.float64)
    assert np.linalg.norm(cp.asnumpy(c) - ref) / np.linalg.norm(ref) < TOL["f32"]
    out = cp.ones((37, 43), dtype=cp.float32)
    assert rungs.gemm(a, b, out, beta=1.0) is out
    assert np.linalg.norm(cp.asnumpy(out) - (ref + 1)) / np.linalg.norm(ref + 1) < TOL["f32"]
    x = cp.arange(1000, dtype=cp.int32)
    s = rungs.reduce_sum(x)
    assert isinstance(s, cp.ndarray) and s.dtype == cp.int64 and int(s) == 999 * 1000 // 2
    y = rungs.gemv(a, b[:, 0].copy())
    assert isinstance(y, cp.ndarray) and y.shape == (37,)
    with cp.cuda.Stream(non_blocking=True):  # rungs runs on CuPy's current stream
        assert float(rungs.reduce_sum(cp.ones(77, dtype=cp.float32))) == 77.0


def test_jax():
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here")
    jnp = jax.numpy
    a = jax.device_put(jnp.asarray(np.random.rand(37, 29).astype(np.float32)), gpu)
    b = jax.device_put(jnp.asarray(np.random.rand(43, 29).astype(np.float32)), gpu)
    c = rungs.gemm(a, b.T)
    assert isinstance(c, jax.Array) and c.shape == (37, 43) and next(iter(c.devices())) == gpu
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64).T
    assert np.linalg.norm(np.asarray(c) - ref) / np.linalg.norm(ref) < TOL["f32"]
    ab = a.astype(jnp.bfloat16)
    cb = rungs.gemm(ab, ab.T)
    assert cb.dtype == jnp.bfloat16
    refb = np.asarray(ab.astype(jnp.float32), np.float64) @ np.asarray(ab.astype(jnp.float32), np.float64).T
    assert np.linalg.norm(np.asarray(cb.astype(jnp.float32)) - refb) / np.linalg.norm(refb) < TOL["bf16"]
    with pytest.raises(ValueError, match="^out: JAX arrays are immutable"):
        rungs.gemm(a, b.T, c)
    assert float(rungs.reduce_sum(jnp.ones(1001, jnp.float32, device=gpu))) == 1001.0


# -- streams ---------------------------------------------------------------------------------------

def test_side_stream_ordering_without_synchronization():
    # On a side stream, the input is written after a long sleep; rungs runs on the current (side)
    # stream, so it reads the written input. Had it run on another stream it would read garbage.
    a, b = rand(256, 256), rand(256, 256)
    ref = a.double() @ b.double()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # a and b were written on the current stream
    with torch.cuda.stream(side):
        a2 = torch.full_like(a, float("nan"))
        torch.cuda._sleep(50_000_000)
        a2.copy_(a)
        c = rungs.gemm(a2, b)
        s = rungs.reduce_sum(c.view(-1))
        y = rungs.gemv(a2, b[:, 0])
    side.synchronize()
    assert rel_err(c, ref) < TOL["f32"]
    assert abs(s.item() - ref.sum().item()) < 1e-3 * ref.abs().sum().item()
    assert rel_err(y, ref[:, 0]) < 1e-5


@pytest.mark.parametrize("as_handle", [False, True])
def test_explicit_stream_waits_for_the_current_one(as_handle):
    a, b = rand(256, 256), rand(256, 256)
    ref = a.double() @ b.double()
    side = torch.cuda.Stream()
    a2 = torch.full_like(a, float("nan"))
    torch.cuda._sleep(50_000_000)  # on the current stream, then the input is written there
    a2.copy_(a)
    c = torch.empty(256, 256, device="cuda")
    rungs.gemm(a2, b, c, stream=side.cuda_stream if as_handle else side)
    side.synchronize()
    assert rel_err(c, ref) < TOL["f32"]


# -- torch.compile, autograd -------------------------------------------------------------------------

def test_compile_fullgraph():
    torch._dynamo.reset()
    a, b, x = rand(64, 48), rand(48, 32), rand(48)

    def f(a, b, x):
        c = torch.relu(rungs.gemm(a, b, alpha=2.0)) + 1
        return c, rungs.gemv(a, x), rungs.reduce_sum(c.view(-1))

    c, y, s = torch.compile(f, fullgraph=True)(a, b, x)
    ref = torch.relu(2 * (a.double() @ b.double())) + 1
    assert rel_err(c, ref) < TOL["f32"]
    assert rel_err(y, a.double() @ x.double()) < 1e-5
    assert abs(s.item() - ref.sum().item()) < 1e-4 * ref.abs().sum().item()

    def g(a, b, out):
        rungs.gemm(a, b, out, beta=1.0)
        return out * 2

    out = torch.ones(64, 32, device="cuda")
    r = torch.compile(g, fullgraph=True)(a, b, out)
    assert rel_err(out, a.double() @ b.double() + 1) < TOL["f32"]  # out= written in place
    assert rel_err(r, 2 * (a.double() @ b.double() + 1)) < TOL["f32"]
    torch._dynamo.reset()


def test_opcheck():
    # torch's own consistency checks of a custom operator: schema (what it mutates), fake
    # implementation against the real one, autograd registration, AOT dispatch.
    a, b, x = rand(33, 17), rand(17, 9), rand(17)
    torch.library.opcheck(torch.ops.rungs.gemm.default, (a, b, 1.5, "auto", "fp32", None))
    torch.library.opcheck(torch.ops.rungs.gemm_out.default, (a, b, rand(33, 9), 1.5, 0.5, "auto", "fp32", None))
    torch.library.opcheck(torch.ops.rungs.gemv.default, (a, x, False, 1.0, "auto", None))
    torch.library.opcheck(torch.ops.rungs.gemv_out.default, (a, x, rand(33), False, 1.0, 2.0, "auto", None))
    ints = torch.randint(-9, 9, (1001,), device="cuda", dtype=torch.int32)
    torch.library.opcheck(torch.ops.rungs.reduce_sum.default, (ints, "auto", None))
    torch.library.opcheck(torch.ops.rungs.reduce_sum.default, (rand(1001), "auto", None))


def test_autograd():
    a = rand(20, 30).requires_grad_()
    b = rand(30, 10).requires_grad_()
    rungs.gemm(a, b, alpha=0.5).square().sum().backward()
    a_ref, b_ref = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (0.5 * a_ref @ b_ref).square().sum().backward()
    assert rel_err(a.grad, a_ref.grad) < 1e-5 and rel_err(b.grad, b_ref.grad) < 1e-5
    x = rand(30).requires_grad_()
    rungs.gemv(a.detach(), x).sum().backward()
    assert rel_err(x.grad, a.detach().double().sum(0)) < 1e-5


# -- threads, memory ---------------------------------------------------------------------------------

def test_concurrent_threads():
    errors = []

    def work(seed):
        try:
            gen = torch.Generator(device="cuda").manual_seed(seed)
            with torch.cuda.stream(torch.cuda.Stream()):
                for i in range(20):
                    a, b = rand(97, 65, gen=gen), rand(65, 33, gen=gen)
                    c = rungs.gemm(a, b, variant="auto" if i % 2 else "warptile")
                    s = rungs.reduce_sum(c.reshape(-1))
                    torch.cuda.current_stream().synchronize()
                    ref = a.double() @ b.double()
                    assert rel_err(c, ref) < TOL["f32"]
                    assert abs(s.item() - ref.sum().item()) < 1e-4 * ref.abs().sum().item()
        except Exception as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# Runs in a fresh interpreter: torch's counters are per process, and other tests leave work behind
# in this one (torch.compile's background compile and autotuning threads allocate at their own times).
_MEMORY_CHECK = """
import torch, rungs
def rand(*s):
    return torch.randn(*s, device="cuda")
a, b = rand(1000, 700), rand(700, 900)
rungs.gemm(a, b)  # first call: the library's own one-time setup (not torch's memory anyway)
torch.cuda.synchronize()

def delta(fn):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    r = fn()
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated() - before, torch.cuda.max_memory_allocated() - before, r

result_only, _, _ = delta(lambda: torch.empty(1000, 900, device="cuda"))
grown, peak, c = delta(lambda: rungs.gemm(a, b))
assert grown == result_only and peak == result_only, ("gemm", grown, peak, result_only)
grown, peak, _ = delta(lambda: rungs.gemm(a, b, c, beta=1.0))
assert grown == 0 and peak == 0, ("gemm out=", grown, peak)
at, bt = a.T.contiguous().T, b.T.contiguous().T  # transposed views: Trans::T on the same memory
grown, peak, _ = delta(lambda: rungs.gemm(at, bt, c))
assert grown == 0 and peak == 0, ("gemm transposed views", grown, peak)
grown, peak, _ = delta(lambda: rungs.reduce_sum(a.view(-1)))
s_only, _, _ = delta(lambda: torch.empty((), device="cuda"))
assert grown == s_only and peak == s_only, ("reduce_sum", grown, peak, s_only)
print("ok")
"""


def test_no_device_memory_beyond_the_result():
    r = subprocess.run([sys.executable, "-c", _MEMORY_CHECK], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_other_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device")
    a, b = rand(33, 17).to("cuda:1"), rand(17, 9).to("cuda:1")
    c = rungs.gemm(a, b)
    assert c.device == a.device
    assert rel_err(c.cpu(), (a.double() @ b.double()).cpu()) < TOL["f32"]
    with pytest.raises(ValueError, match="^b: on CUDA device 0, a on CUDA device 1"):
        rungs.gemm(a, rand(17, 9))


# -- gemm_host ---------------------------------------------------------------------------------------

def test_gemm_host_numpy_and_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((123, 77)).astype(np.float32)
    b = rng.standard_normal((91, 77)).astype(np.float32).T
    c = rungs.gemm_host(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert isinstance(c, np.ndarray) and np.linalg.norm(c - ref) / np.linalg.norm(ref) < TOL["f32"]
    out = np.ones((123, 91), np.float32)
    assert rungs.gemm_host(a, b, out, alpha=2.0, beta=-1.0) is out
    assert np.linalg.norm(out - (2 * ref - 1)) / np.linalg.norm(2 * ref - 1) < TOL["f32"]
    ta = torch.from_numpy(a).pin_memory().to(torch.bfloat16)
    tb = torch.from_numpy(np.ascontiguousarray(b)).to(torch.bfloat16)
    tc = rungs.gemm_host(ta, tb)
    assert isinstance(tc, torch.Tensor) and tc.dtype == torch.bfloat16 and tc.device.type == "cpu"
    assert rel_err(tc, ta.double() @ tb.double()) < TOL["bf16"]
    with pytest.raises(ValueError, match="^a: a torch tensor on cuda:0; rungs.gemm_host takes host memory"):
        rungs.gemm_host(rand(2, 2), rand(2, 2))
