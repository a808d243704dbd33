#!/usr/bin/env python3
"""PyTorch's tensor-parallel products on the same shapes as `rungs bench allgather_gemm|gemm_reducescatter`,
for the comparison in docs/dist.md: torch.ops.symm_mem.fused_all_gather_matmul and
fused_matmul_reduce_scatter (symmetric memory, NVLink multicast off), and the two steps one after the
other (NCCL collective, then torch.mm), and rungs' own ladder called from Python on the process
group's communicator (rungs.dist, variant auto; where the installed rungs has the NCCL ladder). One
process per visible GPU; bf16; each time is the median over --reps of the slowest rank's time (CUDA
events, ranks aligned by a barrier before each rep).

    python scripts/bench_torch_dist.py [--world N] [--reps 20]
Shapes (the issue's): allgather_gemm M = 16384 rows in all, k = 8192, n_local = 8192 / world;
gemm_reducescatter m = 16384, k_local = 8192 / world, n = 8192.
"""
import argparse
import os
import statistics

# NVLink multicast stays off, in this process and the ones it starts.
for _k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    os.environ[_k] = "0" if _k == "NCCL_NVLS_ENABLE" else "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def timed(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    t = torch.tensor(ms, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank, rep by rep
    return statistics.median(t.tolist())


def worker(rank, world, reps, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    try:
        import rungs.dist as rungs_dist

        if not rungs_dist.available():
            rungs_dist = None
    except ImportError:
        rungs_dist = None
    import torch.distributed._symmetric_memory as symm

    group = dist.group.WORLD
    if hasattr(symm, "enable_symm_mem_for_group"):
        symm.enable_symm_mem_for_group(group.group_name)
    bf = dict(dtype=torch.bfloat16, device="cuda")
    rows = []

    # allgather_gemm: A_shard m_local x k, B k x n_local.
    M, k, n_local = 16384, 8192, 8192 // world
    a = torch.randn(M // world, k, **bf)
    b = torch.randn(k, n_local, **bf)
    gathered = torch.empty(M, k, **bf)
    seq = timed(lambda: (dist.all_gather_into_tensor(gathered, a), torch.mm(gathered, b)), reps)
    comm = timed(lambda: dist.all_gather_into_tensor(gathered, a), reps)
    gemm = timed(lambda: torch.mm(gathered, b), reps)
    fused = timed(lambda: torch.ops.symm_mem.fused_all_gather_matmul(a, [b], 0, group.group_name), reps)
    ours = timed(lambda: rungs_dist.allgather_gemm(a, b), reps) if rungs_dist else float("nan")
    rows.append(("allgather_gemm", f"m_local={M // world} n_local={n_local} k={k}", comm, gemm, seq, fused, ours))

    # gemm_reducescatter: A m x k_local, B k_local x n; rank r gets rows [r m / world, (r+1) m / world).
    m, k_local, n = 16384, 8192 // world, 8192
    a = torch.randn(m, k_local, **bf)
    b = torch.randn(k_local, n, **bf)
    part = torch.empty(m, n, **bf)
    out = torch.empty(m // world, n, **bf)
    seq = timed(lambda: (torch.mm(a, b, out=part), dist.reduce_scatter_tensor(out, part)), reps)
    comm = timed(lambda: dist.reduce_scatter_tensor(out, part), reps)
    gemm = timed(lambda: torch.mm(a, b, out=part), reps)
    fused = timed(lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, group.group_name), reps)
    ours = timed(lambda: rungs_dist.gemm_reducescatter(a, b, out=out), reps) if rungs_dist else float("nan")
    rows.append(("gemm_reducescatter", f"m={m} n={n} k_local={k_local}", comm, gemm, seq, fused, ours))

    if rank == 0:
        print(f"torch {torch.__version__}, {world} x {torch.cuda.get_device_name(0)}, bf16, median of {reps} reps "
              "(the slowest rank's time), ms:")
        print(f"  {'op':<20} {'shape':<32} {'comm':>7} {'gemm':>7} {'comm+gemm':>9} {'fused':>7} {'rungs':>7}  "
              "fused / max(comm, gemm)  rungs / max(comm, gemm)")
        for op, shape, c, g, s, f, r in rows:
            print(f"  {op:<20} {shape:<32} {c:7.3f} {g:7.3f} {s:9.3f} {f:7.3f} {r:7.3f}  {f / max(c, g):.2f}"
                  f"{r / max(c, g):25.2f}")
        print("  comm: NCCL all_gather_into_tensor / reduce_scatter_tensor (bf16) alone; gemm: torch.mm alone;")
        print("  fused: torch.ops.symm_mem.fused_all_gather_matmul / fused_matmul_reduce_scatter;")
        print("  rungs: rungs.dist.allgather_gemm / gemm_reducescatter (auto) on the group's NCCL communicator.")
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=int, default=torch.cuda.device_count())
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--port", type=int, default=29531)
    args = ap.parse_args()
    if args.world < 2:
        raise SystemExit(f"bench_torch_dist.py: needs 2 or more GPUs ({args.world} asked for or visible)")
    mp.spawn(worker, args=(args.world, args.reps, args.port), nprocs=args.world)


if __name__ == "__main__":
    main()
