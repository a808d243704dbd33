"""Reading arrays: what rungs needs of an array argument, from whichever protocol it speaks.

An array becomes a tuple (framework, pointer, shape, strides, dtype, device, producer_stream,
readonly):

- framework: "torch", "cupy", "jax", "numpy" or the producer's top-level module name; results
  are allocated by the inputs' framework, and one call takes arrays of one framework.
- pointer: the address of element [0, 0, ...] (int); shape and strides: tuples of ints, strides
  in elements; dtype: a name ("float32", "float16", "bfloat16", "int32", "int64", "float64", or
  the producer's name for anything else); device: the CUDA device ordinal, or -1 for host memory.
- producer_stream: a CUDA stream the producer still writes the array on, which the call's stream
  must wait for (from __cuda_array_interface__'s "stream"); None when nothing is pending or the
  producer already ordered its work before the call's stream (the DLPack stream protocol).
- readonly: the producer marked the memory read-only (array interfaces); such an array is no out=.

Torch tensors are read through their own attributes (the fastest path); other arrays through
DLPack (__dlpack_device__ / __dlpack__), then __cuda_array_interface__, then __array_interface__
(host arrays, for gemm_host). Nothing is copied.
"""

import sys

# torch, where installed, is imported before the extension module: the CUDA libraries and NCCL it
# loads (its nvidia-* wheels') are then the ones rungs._rungs binds to, by their sonames, whatever
# the import order of the program: one copy of each in the process.
try:  # torch is optional: its tensors get a fast path when it is installed
    import torch as _torch
except Exception:  # pragma: no cover - not installed, or an installation that does not load
    _torch = None

from . import _rungs  # noqa: E402

# DLPack device types (dlpack.h).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DEVICE_NAMES = {1: "in host memory", 2: "on a CUDA device", 3: "in CUDA pinned host memory",
                    4: "on an OpenCL device", 7: "on a Vulkan device", 8: "on a Metal device", 10: "on a ROCm device",
                    13: "in CUDA managed memory"}
_FRAMEWORK_NAMES = {"torch": "a torch tensor", "cupy": "a CuPy array", "jax": "a JAX array", "numpy": "a NumPy array"}

# DLPack (type code, bits, lanes) and __cuda_array_interface__ / __array_interface__ type strings.
# DLPack 1.1's fp8 codes: kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12.
_DL_DTYPES = {(2, 32, 1): "float32", (2, 16, 1): "float16", (4, 16, 1): "bfloat16", (0, 32, 1): "int32",
              (0, 64, 1): "int64", (2, 64, 1): "float64", (10, 8, 1): "float8_e4m3fn", (12, 8, 1): "float8_e5m2"}
_TYPESTRS = {"<f4": "float32", "<f2": "float16", "<i4": "int32", "<i8": "int64", "<f8": "float64"}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "float64": 8, "float8_e4m3fn": 1,
            "float8_e5m2": 1}

if _torch is not None:
    _TORCH_TYPES = (_torch.Tensor, _torch.nn.Parameter)
    _TORCH_DTYPES = {_torch.float32: "float32", _torch.float16: "float16", _torch.bfloat16: "bfloat16",
                     _torch.int32: "int32", _torch.int64: "int64", _torch.float64: "float64"}
    for _name in ("float8_e4m3fn", "float8_e5m2"):
        if hasattr(_torch, _name):
            _TORCH_DTYPES[getattr(_torch, _name)] = _name
    TORCH_DTYPE_OF = {v: k for k, v in _TORCH_DTYPES.items()}
    _raw_stream = getattr(_torch._C, "_cuda_getCurrentRawStream", None)
else:
    _TORCH_TYPES = ()
    _TORCH_DTYPES = {}
    TORCH_DTYPE_OF = {}
    _raw_stream = None


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong kind (not an array, not a stream): a TypeError, and a ValueError
    like every other argument error of rungs."""


def framework_of(obj):
    module = type(obj).__module__.partition(".")[0]
    return "jax" if module == "jaxlib" else module


def _contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _byte_strides(name, strides, itemsize):
    out = []
    for s in strides:
        if s % itemsize:
            raise ValueError(f"{name}: a stride of {s} bytes is not a whole number of {itemsize}-byte elements")
        out.append(s // itemsize)
    return tuple(out)


def _torch_dtype_name(dt):
    return _TORCH_DTYPES.get(dt) or str(dt).replace("torch.", "")


def _where(device_type):
    return _DL_DEVICE_NAMES.get(device_type, f"on DLPack device type {device_type}")


def what(framework):
    """An array of `framework`, in words: "a torch tensor", "a NumPy array", ..."""
    return _FRAMEWORK_NAMES.get(framework) or f"a {framework} array"


def device_array(obj, name, op, dl_stream):
    """The tuple of an array in CUDA device memory; ValueError (naming the argument) for anything
    else. dl_stream: the stream the call will run on, as the DLPack stream protocol numbers it;
    None while the stream is not chosen yet (it depends on the first array's framework and
    device): then an array read through DLPack comes back with pointer None, its framework and
    device only, to be read again once the stream is known."""
    t = type(obj)
    if t in _TORCH_TYPES:
        device = obj.get_device()
        if device < 0:
            raise ValueError(f"{name}: a torch tensor on {obj.device}; rungs.{op} takes tensors on a CUDA device"
                             + (" (rungs.gemm_host takes host memory)" if op == "gemm" else ""))
        return ("torch", obj.data_ptr(), tuple(obj.shape), obj.stride(), _torch_dtype_name(obj.dtype), device, None,
                False)
    framework = framework_of(obj)
    if framework == "jax" and _is_jax_tracer(obj):
        raise ValueError(f"{name}: a JAX tracer ({type(obj).__name__}: the call is inside jax.jit, vmap, grad or "
                         f"another transformation); rungs.{op} runs on concrete device arrays and cannot be called "
                         "under a JAX transformation: call it outside jit, on concrete arrays")
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        device_type, device_id = obj.__dlpack_device__()
        device_type, device_id = int(device_type), int(device_id)
        if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
            raise ValueError(f"{name}: {what(framework)} {_where(device_type)}; rungs.{op} takes arrays on a CUDA "
                             "device" + (" (rungs.gemm_host takes host memory)" if op == "gemm" else ""))
        if dl_stream is None:
            return (framework, None, None, None, None, device_id, None, False)
        return _from_dlpack(obj, framework, device_id, dl_stream)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(obj, cai, name, framework)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        raise ValueError(f"{name}: {what(framework)} in host memory; rungs.{op} takes arrays on a CUDA device"
                         + (" (rungs.gemm_host takes host memory)" if op == "gemm" else ""))
    raise ArgumentTypeError(f"{name}: {t.__module__}.{t.__qualname__} is not an array (rungs.{op} takes arrays that "
                            "speak DLPack or __cuda_array_interface__: torch, CuPy, JAX, ...)")


def _is_jax_tracer(obj):
    jax = sys.modules.get("jax")
    for owner in (getattr(jax, "core", None), getattr(getattr(jax, "_src", None), "core", None)):
        tracer = getattr(owner, "Tracer", None)
        if isinstance(tracer, type) and isinstance(obj, tracer):
            return True
    return False


def _from_dlpack(obj, framework, device, dl_stream):
    """Read through DLPack. dl_stream: the consumer's stream, which the producer orders its pending
    work before (None for host memory, where there is no stream)."""
    if dl_stream is None:
        capsule = obj.__dlpack__()
    else:
        try:
            capsule = obj.__dlpack__(stream=dl_stream)
        except TypeError:  # a producer older than the stream argument: nothing to order
            capsule = obj.__dlpack__()
    ptr, _, _, code, shape, strides = _rungs.dlpack_view(capsule)
    dtype = _DL_DTYPES.get(code) or f"DLPack type (code {code[0]}, {code[1]} bits, {code[2]} lanes)"
    return (framework, ptr, shape, strides if strides is not None else _contiguous_strides(shape), dtype, device,
            None, False)


def _from_cai(obj, cai, name, framework):
    shape = tuple(int(s) for s in cai["shape"])
    typestr = cai["typestr"]
    dtype = _TYPESTRS.get(typestr) or typestr
    ptr, readonly = cai["data"]
    ptr = int(ptr or 0)
    strides = cai.get("strides")
    if strides is None:
        strides = _contiguous_strides(shape)
    else:
        strides = _byte_strides(name, strides, ITEMSIZE.get(dtype) or int(typestr[2:]))
    # The interface carries no device: the memory's own, or the current device for an empty array.
    device = _rungs.pointer_device(ptr) if ptr else _rungs.current_device()
    if device < 0:
        raise ValueError(f"{name}: __cuda_array_interface__ points at memory no CUDA device owns")
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    return (framework, ptr, shape, strides, dtype, device, stream, bool(readonly))


def host_array(obj, name):
    """The tuple of an array in host memory (pageable or pinned), for gemm_host."""
    t = type(obj)
    if t in _TORCH_TYPES:
        if obj.get_device() >= 0 or obj.device.type != "cpu":
            raise ValueError(f"{name}: a torch tensor on {obj.device}; rungs.gemm_host takes host memory "
                             "(rungs.gemm takes device memory)")
        return ("torch", obj.data_ptr(), tuple(obj.shape), obj.stride(), _torch_dtype_name(obj.dtype), -1, None, False)
    framework = framework_of(obj)
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        shape = tuple(int(s) for s in ai["shape"])
        dtype_obj = getattr(obj, "dtype", None)
        dtype = getattr(dtype_obj, "name", None) if dtype_obj is not None else None
        if dtype not in ITEMSIZE:
            dtype = _TYPESTRS.get(ai["typestr"]) or dtype or ai["typestr"]
        ptr, readonly = ai["data"]
        strides = ai.get("strides")
        itemsize = ITEMSIZE.get(dtype) or int(ai["typestr"][2:])
        strides = _contiguous_strides(shape) if strides is None else _byte_strides(name, strides, itemsize)
        return (framework, int(ptr or 0), shape, strides, dtype, -1, None, bool(readonly))
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        device_type, _ = obj.__dlpack_device__()
        if int(device_type) not in (_DL_CPU, _DL_CUDA_HOST):
            raise ValueError(f"{name}: {what(framework)} {_where(int(device_type))}; rungs.gemm_host takes host "
                             "memory (rungs.gemm takes device memory)")
        return _from_dlpack(obj, framework, -1, None)
    if hasattr(obj, "__cuda_array_interface__"):
        raise ValueError(f"{name}: {what(framework)} in CUDA device memory; rungs.gemm_host takes host memory "
                         "(rungs.gemm takes device memory)")
    raise ArgumentTypeError(f"{name}: {t.__module__}.{t.__qualname__} is not an array (rungs.gemm_host takes "
                            "NumPy arrays, or any array in host memory that speaks DLPack)")


def current_stream(framework, device):
    """The framework's current stream on `device` (the stream a call runs on by default), as an
    int handle: torch's and CuPy's current stream; 0 (the legacy default stream) for others."""
    if framework == "torch":
        if _raw_stream is not None:
            return _raw_stream(device)
        return _torch.cuda.current_stream(device).cuda_stream
    if framework == "cupy":
        return sys.modules["cupy"].cuda.get_current_stream(device).ptr
    return 0


def stream_handle(stream):
    """A stream argument as an int handle: an int, or an object with __cuda_stream__ (the CUDA
    stream protocol), .cuda_stream (torch) or .ptr (CuPy)."""
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1])
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise ArgumentTypeError(f"stream: {type(stream).__qualname__} is not a stream (pass an int handle, or an object "
                            "with .cuda_stream (torch) or .ptr (CuPy) or __cuda_stream__)")


def dlpack_stream(handle):
    """The DLPack stream protocol's number for a stream handle: 0 (the legacy default stream) is
    1 there; the per-thread default stream (2) and real streams keep their handles."""
    return 1 if handle == 0 else handle


def empty(framework, like, shape, dtype, device, name):
    """A new array of `shape` and `dtype` on `device`, allocated by `framework` (the inputs' own),
    or ValueError naming `name` (the argument that would have given the memory)."""
    if framework == "torch":
        if _torch_dtype_name(like.dtype) != dtype:
            return like.new_empty(shape, dtype=TORCH_DTYPE_OF[dtype])
        return like.new_empty(shape)
    if framework == "cupy":
        cp = sys.modules["cupy"]
        if dtype == "bfloat16" and str(like.dtype) != dtype:
            raise ValueError(f"{name}: CuPy has no bfloat16 arrays; pass the result's array as out=")
        with cp.cuda.Device(device):
            return cp.empty(shape, dtype=like.dtype if str(like.dtype) == dtype else dtype)
    if framework == "jax":
        jnp = sys.modules["jax"].numpy
        out = jnp.empty(shape, dtype=like.dtype if str(like.dtype) == dtype else dtype,
                        device=next(iter(like.devices())))
        if str(out.dtype) != dtype:
            raise ValueError(f"{name}: JAX gives {out.dtype} for the {dtype} result; enable 64-bit types "
                             "(jax.config.update('jax_enable_x64', True))")
        return out
    if framework == "numpy":
        return sys.modules["numpy"].empty(shape, dtype=like.dtype if dtype != "int64" else "int64")
    raise ValueError(f"{name}: rungs allocates results with torch, CuPy, JAX or NumPy; for {framework} arrays pass "
                     f"the result's array as out=")
