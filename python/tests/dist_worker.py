"""One rank of test_gpu_fp8_linear.py's torchrun test: every rung of rungs.dist's two ladders on the
default process group (NCCL), against float64 references built with torch.distributed's own
collectives. Run as `torchrun --nproc_per_node=N dist_worker.py` (N >= 1); prints "rank ok" when done."""

import os

import torch
import torch.distributed as dist

import rungs


def rel_err(got, ref):
    return ((got.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    torch.manual_seed(1234 + rank)
    bf = dict(device=device, dtype=torch.bfloat16)
    failures, ran = [], 0
    m_local, k, n_local = 96, 160, 72
    for v in rungs.variants("allgather_gemm"):
        for dtype in ([torch.bfloat16, torch.float16] if "f16" in v.types.split() else [torch.bfloat16]):
            a = torch.randn(m_local, k, device=device).to(dtype)
            b = torch.randn(k, n_local, device=device).to(dtype)
            try:
                c = rungs.dist.allgather_gemm(a, b, variant=v.name)
            except rungs.Unsupported:
                continue
            ran += 1
            parts = [torch.empty_like(a) for _ in range(world)]
            dist.all_gather(parts, a)
            ref = torch.cat(parts).double() @ b.double()
            if c.shape != ref.shape or rel_err(c, ref) > 1e-2:
                failures.append(f"allgather_gemm {v.name} {dtype}: {rel_err(c, ref)}")
    m, k_local, n = 128, 80, 96
    for v in rungs.variants("gemm_reducescatter"):
        a = torch.randn(m, k_local, **bf)
        b = torch.randn(k_local, n, **bf)
        out = torch.randn(m // world, n, **bf)
        before = out.double().clone()
        try:
            rungs.dist.gemm_reducescatter(a, b, out=out, alpha=0.5, beta=1.0, variant=v.name)
        except rungs.Unsupported:
            continue
        ran += 1
        full = (a.double() @ b.double()).float()
        dist.all_reduce(full)
        ref = 0.5 * full.double()[rank * (m // world):(rank + 1) * (m // world)] + before
        if rel_err(out, ref) > 2e-2:
            failures.append(f"gemm_reducescatter {v.name}: {rel_err(out, ref)}")
    # ranks that disagree on the sizes: every rank raises rungs.Error instead of hanging
    if world > 1:
        try:
            rungs.dist.allgather_gemm(torch.randn(8 + rank, 16, **bf), torch.randn(16, 8, **bf))
            failures.append("mismatched sizes did not raise")
        except rungs.Error:
            pass
    rungs.dist.release()
    dist.destroy_process_group()
    if ran == 0:
        failures.append("no rung ran")
    if failures:
        raise SystemExit(f"rank {rank}: " + "; ".join(failures))
    print("rank ok", flush=True)


if __name__ == "__main__":
    main()
