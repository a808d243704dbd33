"""rungs.dist: the tensor-parallel products of the NCCL ladder (include/rungs/dist.hpp) on torch
tensors, one process per GPU under torch.distributed.

    rungs.dist.allgather_gemm(a_local, b, *, group=None, out=None, alpha=1.0, beta=0.0, variant="auto", stream=None)
    rungs.dist.gemm_reducescatter(a, b_local, *, group=None, out=None, alpha=1.0, beta=0.0, variant="auto", stream=None)

The communicator is the process group's own: group (default: the default group) must have an NCCL
backend, whose communicator for the tensors' device rungs uses directly (ProcessGroupNCCL's
_comm_ptr()); no second NCCL is started, and rungs' NCCL calls go through the libnccl that torch
loaded (one copy per process). Every rank calls with the same sizes and variant; the library checks
that they agree (one small all-reduce per call) and every rank raises rungs.Error when they do not.
The calls run on torch's current stream (or stream=), like rungs.gemm.
"""

from . import _arrays, _core, _rungs

__all__ = ["allgather_gemm", "gemm_reducescatter", "available", "communicator", "release"]

_DTYPES = {"float16": 1, "bfloat16": 2}


def available():
    """True where this build of rungs has the NCCL ladder (it was built with NCCL's headers)."""
    return bool(_rungs.HAVE_DIST)


def _require():
    if not _rungs.HAVE_DIST:
        raise _rungs.Unsupported("rungs.dist: this build of rungs has no NCCL ladder (it was built without NCCL's "
                                 "headers: `pip install nvidia-nccl-cu13`, then build rungs again)")


def _torch():
    torch = _arrays._torch
    if torch is None:
        raise ValueError("rungs.dist takes torch tensors under torch.distributed; torch is not importable")
    return torch


def communicator(group=None, device=None):
    """The address of the NCCL communicator (ncclComm_t) of `group`'s NCCL backend on CUDA device
    `device` (default: the current device); the communicator is created if the group has not used
    it yet (one all-reduce of one element)."""
    torch = _torch()
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("group: torch.distributed is not initialized (call torch.distributed.init_process_group("
                         "'nccl', ...) first)")
    if group is None:
        group = dist.distributed_c10d._get_default_group()
    device = torch.cuda.current_device() if device is None else device
    try:
        backend = group._get_backend(torch.device("cuda", device))
    except RuntimeError as e:
        raise ValueError(f"group: no NCCL backend for cuda:{device} ({e}); rungs.dist needs a process group with "
                         "the NCCL backend") from None
    if not hasattr(backend, "_comm_ptr"):
        raise ValueError(f"group: its backend for cuda:{device} is {type(backend).__name__}; rungs.dist needs the NCCL "
                         "backend (ProcessGroupNCCL)")
    with torch.cuda.device(device):
        try:
            ptr = backend._comm_ptr()
        except RuntimeError:
            ptr = 0
        if not ptr:  # created on first use: one collective creates it, on every rank alike
            dist.all_reduce(torch.zeros(1, device=torch.device("cuda", device)), group=group)
            ptr = backend._comm_ptr()
    return int(ptr)


def _plan(op, first, first_name, second, second_name, out, group, variant, stream):
    _require()
    torch = _torch()
    _core._check_scalars(op, variant)
    if not isinstance(first, torch.Tensor):
        raise _arrays.ArgumentTypeError(f"{first_name}: {type(first).__qualname__} is not a torch tensor; "
                                        f"rungs.dist.{op} takes torch tensors")
    A, B, C, s, current = _core._operands(op, first, second, second_name, out, stream, first_name)
    if A[0] != "torch":
        raise ValueError(f"{first_name}: {_arrays.what(A[0])}; rungs.dist.{op} takes torch tensors")
    code = _core._dtype_code(first_name, A[4], _DTYPES, op)
    if B[4] != A[4]:
        raise ValueError(f"{second_name}: dtype {B[4]}, {first_name}'s is {A[4]}; rungs.dist.{op} takes one dtype")
    _core._ndim(first_name, A[2], 2, op)
    _core._ndim(second_name, B[2], 2, op)
    for name, arr in ((first_name, A), (second_name, B)):
        t, _ = _core._matrix(name, arr, op)
        if t:
            raise ValueError(f"{name}: a transposed view (unit row stride); rungs.dist.{op} takes row-major matrices "
                             "(unit column stride; .contiguous() makes one)")
    if C is not None:
        if C[4] != A[4]:
            raise ValueError(f"out: dtype {C[4]}, {first_name}'s is {A[4]}; rungs.dist.{op} writes the inputs' dtype")
        _core._ndim("out", C[2], 2, op)
        if _core._matrix("out", C, op)[0]:
            raise ValueError(f"out: a transposed view (unit row stride); rungs.dist.{op} writes a row-major out")
    return A, B, C, code, s, current


def _world(group):
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("group: torch.distributed is not initialized (call torch.distributed.init_process_group("
                         "'nccl', ...) first)")
    return dist.get_world_size(group)


def allgather_gemm(a_local, b, *, group=None, out=None, alpha=1.0, beta=0.0, variant="auto", stream=None):
    """C = all_gather(a_local) @ b on every rank: a_local (m_local x k) holds this rank's rows of A,
    b (k x n_local) this rank's columns of B; C is (world * m_local) x n_local, A's rows in rank
    order (torch's fused_all_gather_matmul along dimension 0). bfloat16 or float16, row-major.
    variant: a rung of rungs.variants("allgather_gemm"), the same on every rank."""
    A, B, C, code, s, current = _plan("allgather_gemm", a_local, "a_local", b, "b", out, group, variant, stream)
    (m_local, k), (k2, n_local) = A[2], B[2]
    if k2 != k:
        raise ValueError(f"b: shape {tuple(B[2])} does not match a_local's {tuple(A[2])} (b needs {k} rows)")
    m = _world(group) * m_local
    result = out
    if C is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        result = a_local.new_empty((m, n_local))
        C = _arrays.device_array(result, "out", "allgather_gemm", None)
    elif tuple(C[2]) != (m, n_local):
        raise ValueError(f"out: shape {tuple(C[2])}; the product is {m} x {n_local} (world size x m_local rows)")
    comm = communicator(group, A[5])
    if stream is not None:
        _core._order(s, current, A[5], (A, B, C))
    _rungs.allgather_gemm(code, m_local, n_local, k, float(alpha), A[1], _core._matrix("a_local", A, "")[1], B[1],
                          _core._matrix("b", B, "")[1], float(beta), C[1], _core._matrix("out", C, "")[1], comm,
                          variant, s, A[5])
    return result


def gemm_reducescatter(a, b_local, *, group=None, out=None, alpha=1.0, beta=0.0, variant="auto", stream=None):
    """This rank's rows of sum over ranks of a_r @ b_r: a (m x k_local) and b_local (k_local x n) are
    this rank's slices along k; the result is (m / world) x n, rows [rank * m / world, (rank + 1) *
    m / world) (torch's fused_matmul_reduce_scatter along dimension 0). m must be a multiple of the
    world size. bfloat16 or float16, row-major."""
    A, B, C, code, s, current = _plan("gemm_reducescatter", a, "a", b_local, "b_local", out, group, variant,
                                      stream)
    (m, k_local), (k2, n) = A[2], B[2]
    if k2 != k_local:
        raise ValueError(f"b_local: shape {tuple(B[2])} does not match a's {tuple(A[2])} (b_local needs {k_local} "
                         "rows)")
    world = _world(group)
    if m % world:
        raise ValueError(f"a: {m} rows, not a multiple of the world size {world}")
    result = out
    if C is None:
        if beta != 0:
            raise ValueError(f"beta: {beta} needs out= (beta scales the C that out= holds)")
        result = a.new_empty((m // world, n))
        C = _arrays.device_array(result, "out", "gemm_reducescatter", None)
    elif tuple(C[2]) != (m // world, n):
        raise ValueError(f"out: shape {tuple(C[2])}; this rank's rows of the product are {m // world} x {n}")
    comm = communicator(group, A[5])
    if stream is not None:
        _core._order(s, current, A[5], (A, B, C))
    _rungs.gemm_reducescatter(code, m, n, k_local, float(alpha), A[1], _core._matrix("a", A, "")[1], B[1],
                              _core._matrix("b_local", B, "")[1], float(beta), C[1], _core._matrix("out", C, "")[1],
                              comm, variant, s, A[5])
    return result


def release(group=None):
    """Frees the device workspace rungs keeps for `group`'s communicator on the current device (call
    it before destroying the process group; it waits for the work that uses it)."""
    _require()
    torch = _torch()
    device = torch.cuda.current_device()
    _rungs.dist_release(communicator(group, device), device)
