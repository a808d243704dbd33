"""rungs.scaled_mm, rungs.linear, rungs.torch.swap_linears and CUDA graphs on a GPU, against float64
references: every fp8 rung with every scaling and fp8 type pair it does, linear's float and fp8 paths
(N-D x, bias, views) and their gradients, the custom operators' opcheck, torch.compile(fullgraph=True)
over a model whose linears were swapped, a CUDA graph replay, the fakes' rejections against the
real calls', and one copy of cudart, cuBLAS and NCCL per process. Skipped where no CUDA device is
usable."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rungs
from conftest import GPU, call, rel_err

if not GPU:
    pytest.skip("no usable CUDA device", allow_module_level=True)

torch = pytest.importorskip("torch", reason="the GPU tests compare against torch")
F = torch.nn.functional
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def sm():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def fp8_tol(k, bf16_out=False):
    """The library's normwise fp8 tolerance (src/check/gemm_check.cpp, fp8_normwise_tolerance): the
    fp32 one, 4u sqrt(k + 2), plus 2^-10 for the tensor core's ~14-bit accumulation of each promoted
    block of 128 products, plus 2^-8 for a bf16 output's rounding."""
    return 4 * 2.0 ** -24 * math.sqrt(k + 2) + 2.0 ** -10 + (2.0 ** -8 if bf16_out else 0.0)


def blocks(v):
    return (v + 127) // 128


def fp8(rows, cols, dtype):
    return (torch.randn(rows, cols, device="cuda") * 4).clamp(-200, 200).to(dtype)


def scales(kind, m, n, k):
    u = lambda *s: torch.rand(*s, device="cuda") + 0.5  # noqa: E731
    return {"tensor": (u(()), u(1)), "outer": (u(m, 1), u(1, n)),
            "block128": (u(m, blocks(k)), u(blocks(n), blocks(k)))}[kind]


def reference(a, b, sa, sb, kind):
    """(sa * a) @ (sb * b) in float64; a m x k, b k x n (views as given)."""
    A, B = a.double(), b.double()
    m, k = A.shape
    n = B.shape[1]
    if kind == "tensor":
        return (A * sa.double().reshape(())) @ (B * sb.double().reshape(()))
    if kind == "outer":
        return (A * sa.double().reshape(m, 1)) @ (B * sb.double().reshape(1, n))
    cols = torch.arange(k, device="cuda") // 128
    A = A * sa.double()[:, cols]
    B = B * sb.double()[torch.arange(n, device="cuda") // 128][:, cols].T
    return A @ B


FP8_RUNGS = [v.name for v in rungs.variants("gemm") if "fp8" in v.types.split()]
FP8_CASES = [(v, kind, ta, tb) for v in FP8_RUNGS + ["auto"] for kind in ("tensor", "outer", "block128")
             for ta, tb in ((E4M3, E4M3), (E4M3, E5M2), (E5M2, E4M3), (E5M2, E5M2))]


@pytest.mark.parametrize("variant, kind, ta, tb", FP8_CASES,
                         ids=[f"{v}-{k}-{str(a)[-4:]}-{str(b)[-4:]}" for v, k, a, b in FP8_CASES])
@pytest.mark.parametrize("m, n, k", [(256, 384, 512), (37, 200, 160), (1, 4096, 1024)])
def test_scaled_mm_every_fp8_rung(variant, kind, ta, tb, m, n, k):
    a = fp8(m, k, ta)              # row-major
    b = fp8(n, k, tb).T            # k x n, k-contiguous (the layout fp8 tensor cores read)
    sa, sb = scales(kind, m, n, k)
    ref = reference(a, b, sa, sb, kind)
    for out_dtype, tol in ((torch.bfloat16, fp8_tol(k, True)), (torch.float32, fp8_tol(k))):
        c = call(rungs.scaled_mm, a, b, sa, sb, out_dtype=out_dtype, alpha=0.5, variant=variant)
        assert c.dtype == out_dtype and c.shape == (m, n)
        assert rel_err(c, 0.5 * ref) < tol, (variant, kind, out_dtype)
    out = torch.randn(m, n, device="cuda")
    want = ref + 2 * out.double()
    assert call(rungs.scaled_mm, a, b, sa, sb, out=out, beta=2.0, variant=variant) is out
    assert rel_err(out, want) < fp8_tol(k)


def test_scaled_mm_transposed_out_and_resolve():
    m, n, k = 64, 96, 256
    a, b = fp8(m, k, E4M3), fp8(n, k, E4M3).T
    for kind in ("tensor", "outer"):
        sa, sb = scales(kind, m, n, k)
        out = torch.zeros(n, m, device="cuda").T
        call(rungs.scaled_mm, a, b, sa, sb, out=out)
        assert rel_err(out, reference(a, b, sa, sb, kind)) < fp8_tol(k)
    assert rungs.resolve_variant("scaled_mm", a, b, *scales("block128", m, n, k)) in FP8_RUNGS + ["cublas"]


# -- linear ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 1e-2)])
def test_linear_matches_f_linear(dtype, tol):
    w = torch.randn(200, 96, device="cuda").to(dtype)
    bias = torch.randn(200, device="cuda").to(dtype)
    xs = [torch.randn(96, device="cuda"), torch.randn(37, 96, device="cuda"), torch.randn(2, 3, 96, device="cuda"),
          torch.randn(4, 9, 100, device="cuda")[:, 2:7, :96], torch.randn(96, 3, 5, device="cuda").permute(1, 2, 0)]
    for x in xs:
        x = x.to(dtype)
        for b in (None, bias):
            y = rungs.linear(x, w, b)
            ref = F.linear(x.double(), w.double(), None if b is None else b.double())
            assert y.shape == ref.shape and y.dtype == dtype
            assert rel_err(y, ref) < tol, (tuple(x.shape), x.stride(), b is None)


def test_linear_autograd():
    x = torch.randn(3, 5, 64, device="cuda", requires_grad=True)
    w = torch.randn(48, 64, device="cuda", requires_grad=True)
    b = torch.randn(48, device="cuda", requires_grad=True)
    rungs.linear(x, w, b).square().sum().backward()
    xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
    F.linear(xr, wr, br).square().sum().backward()
    for got, ref in ((x.grad, xr.grad), (w.grad, wr.grad), (b.grad, br.grad)):
        assert rel_err(got, ref) < 1e-5


@pytest.mark.parametrize("gran, kind", [("tensor", "tensor"), ("row", "outer"), ("128x128", "block128")])
def test_linear_fp8_weight(gran, kind):
    n, k = 384, 512
    w = torch.randn(n, k, device="cuda")
    wq, ws = rungs.torch.quantize_fp8(w, gran)
    if kind == "block128":
        w_read = wq.double() * ws.double()[torch.arange(n, device="cuda") // 128][:, torch.arange(k, device="cuda") // 128]
    else:
        w_read = wq.double() * ws.double()
    x = torch.randn(2, 16, k, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = call(rungs.linear, x, wq, bias, weight_scale=ws.reshape(n) if kind == "outer" else ws)
    assert y.shape == (2, 16, n) and y.dtype == torch.bfloat16
    ref = x.double() @ w_read.T + bias.double()
    assert rel_err(y, ref) < 0.05  # x quantized to e4m3 here
    xq, xs = rungs.torch.quantize_fp8(x.reshape(32, k), {"tensor": "tensor", "outer": "row", "block128": "1x128"}[kind])
    y = call(rungs.linear, xq, wq, weight_scale=ws, x_scale=xs, out_dtype=torch.float32)
    x_read = xq.double() * (xs.double()[:, torch.arange(k, device="cuda") // 128] if kind == "block128" else xs.double())
    assert rel_err(y, x_read @ w_read.T) < fp8_tol(k)


# -- the custom operators ------------------------------------------------------------------------------

def test_opcheck_fp8_and_linear():
    m, n, k = 64, 128, 256
    a, b = fp8(m, k, E4M3), fp8(n, k, E4M3).T
    sa, sb = scales("outer", m, n, k)
    try:
        rungs.scaled_mm(a, b, sa, sb)
    except rungs.Unsupported as e:
        pytest.skip(str(e))
    # test_schema is left out where an input is fp8: it does arithmetic on the inputs, which torch
    # does not implement for float8 tensors ("mul_cuda" not implemented for 'Float8_e4m3fn').
    fp8_utils = ("test_faketensor", "test_autograd_registration", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.rungs.scaled_mm.default, (a, b, sa, sb, torch.bfloat16, 1.0, "auto", None),
                          test_utils=fp8_utils)
    torch.library.opcheck(torch.ops.rungs.scaled_mm_out.default,
                          (a, b, sa, sb, torch.randn(m, n, device="cuda"), 1.0, 0.5, "auto", None),
                          test_utils=fp8_utils)
    x = torch.randn(2, 5, 32, device="cuda", requires_grad=True)
    w = torch.randn(24, 32, device="cuda", requires_grad=True)
    bias = torch.randn(24, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.rungs.linear.default, (x, w, bias, "auto", "fp32", None))
    torch.library.opcheck(torch.ops.rungs.linear.default, (x, w, None, "auto", "fp32", None))
    wq, ws = rungs.torch.quantize_fp8(torch.randn(128, 256, device="cuda"), "128x128")
    torch.library.opcheck(torch.ops.rungs.linear_fp8.default,
                          (torch.randn(4, 256, device="cuda", dtype=torch.bfloat16), wq, ws, None, None, None, "auto",
                           None), test_utils=("test_faketensor", "test_aot_dispatch_dynamic"))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 256)
        self.down = torch.nn.Linear(256, 64, bias=False)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(x)))


def test_compile_swapped_model_fullgraph():
    torch._dynamo.reset()
    model = torch.nn.Sequential(MLP(), MLP()).cuda()
    x = torch.randn(4, 7, 64, device="cuda")
    with torch.no_grad():
        ref = model.double()(x.double())
        model.float()
        with rungs.torch.swap_linears(model):
            y = torch.compile(model, fullgraph=True)(x)
    assert rel_err(y, ref) < 1e-5
    torch._dynamo.reset()


def test_cuda_graph_capture_and_replay():
    # The doc's example: rungs calls captured into a CUDA graph, replayed on new inputs.
    a, b = torch.randn(128, 96, device="cuda"), torch.randn(96, 64, device="cuda")
    x, w, bias = torch.randn(8, 96, device="cuda"), torch.randn(32, 96, device="cuda"), torch.randn(32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside the capture (workspaces, the auto choice)
        rungs.gemm(a, b)
        rungs.linear(x, w, bias)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = rungs.gemm(a, b)
        y = rungs.linear(x, w, bias)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(c, a.double() @ b.double()) < 1e-5
        assert rel_err(y, F.linear(x.double(), w.double(), bias.double())) < 1e-5


# -- the fakes reject what the real call rejects -------------------------------------------------------

def test_fakes_reject_what_the_real_call_rejects():
    from test_fp8_linear_cpu import REJECTED

    for case, fn in sorted(REJECTED.items()):
        with pytest.raises(Exception) as real:
            fn("cuda")
        with pytest.raises(Exception) as fake:
            fn("meta")
        assert type(fake.value) is type(real.value) and str(fake.value) == str(real.value), case


# -- one copy of each CUDA library --------------------------------------------------------------------

@pytest.mark.parametrize("order", ["import rungs, torch", "import torch, rungs"])
def test_one_copy_of_cudart_cublas_nccl(order):
    code = (f"{order}\n"
            "torch.ones(4, 4, device='cuda') @ torch.ones(4, 4, device='cuda')\n"
            "rungs.gemm(torch.ones(64, 64, device='cuda'), torch.ones(64, 64, device='cuda'), variant='cublas')\n"
            "torch.cuda.synchronize()\n"
            "import re\n"
            "libs = {}\n"
            "for line in open('/proc/self/maps'):\n"
            "    m = re.search(r'(/\\S*/(libcudart|libcublas|libcublasLt|libnccl)\\.so[.0-9]*)$', line)\n"
            "    if m: libs.setdefault(m.group(2), set()).add(m.group(1))\n"
            "print(libs)\n"
            "assert all(len(v) == 1 for v in libs.values()), libs\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# -- rungs.dist under torchrun --------------------------------------------------------------------------

@pytest.mark.parametrize("ranks", [1, 2])
def test_dist_under_torchrun(ranks):
    """Each rank takes its communicator from torch's NCCL process group; with one rank the same path
    runs on a one-GPU machine (every rung's world-of-one case)."""
    if torch.cuda.device_count() < ranks:
        pytest.skip(f"needs {ranks} GPUs, {torch.cuda.device_count()} visible")
    if not rungs.dist.available():
        pytest.skip("this build of rungs has no NCCL ladder")
    worker = Path(__file__).with_name("dist_worker.py")
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}",
                        str(worker)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert r.stdout.count("rank ok") == ranks, r.stdout[-4000:]
