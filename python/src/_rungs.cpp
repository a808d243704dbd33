// rungs._rungs: the extension module under the Python package (python/rungs/). A thin layer over
// include/rungs/rungs.hpp: every entry point takes raw pointers (as integers), shapes, leading
// dimensions and transpose flags that the Python layer has already read off the arrays and checked;
// this file maps them onto the C++ calls, selects the arrays' device for the call, releases the GIL
// while the library runs, and turns rungs::Error / rungs::Unsupported into rungs.Error /
// rungs.Unsupported with the library's message. It also reads DLPack capsules (dlpack_view) and
// does the few CUDA runtime calls the Python layer needs (device count, a pointer's device, ordering
// one stream after another, waiting for a stream).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <rungs/rungs.hpp>
#if defined(RUNGS_HAVE_DIST)
#include <rungs/dist.hpp>
#endif

#include "view_layout.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace nb = nanobind;

namespace {

// A CUDA runtime failure outside the library's calls becomes rungs::Error, as the library's own do.
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw rungs::Error(std::string("rungs: ") + what + " failed: " + cudaGetErrorName(err) + " (" +
                       cudaGetErrorString(err) + ")");
}

// The library works on the calling thread's current device; the arrays' device becomes current for
// the call and the previous one is restored after it. device < 0 leaves the current device alone.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0) return;
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    if (current == device) return;
    check(cudaSetDevice(device), "cudaSetDevice");
    previous_ = current;
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

rungs::Trans trans_of(bool t) { return t ? rungs::Trans::T : rungs::Trans::N; }

cudaStream_t stream_of(uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }

template <typename T>
T* ptr_of(uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

// Element types as the Python layer numbers them (rungs/_core.py keeps the same tables).
enum GemmDtype : int { kF32 = 0, kF16 = 1, kBF16 = 2 };
enum Fp8Dtype : int { kE4M3 = 0, kE5M2 = 1 };
enum ReduceDtype : int { kI32 = 0, kI64 = 1, kRF32 = 2, kRF64 = 3 };

rungs::Math math_of(int m) {
  switch (m) {
    case 0: return rungs::Math::fp32;
    case 1: return rungs::Math::tf32;
    case 2: return rungs::Math::tf32x3;
  }
  throw rungs::Error("rungs: math code " + std::to_string(m) + " (must be 0 fp32, 1 tf32 or 2 tf32x3)");
}

rungs::Options options(std::string variant, int math, uintptr_t stream) {
  rungs::Options o;
  o.variant = std::move(variant);
  o.math = math_of(math);
  o.stream = stream_of(stream);
  return o;
}

// f(T{}) with T the element type of gemm dtype code `dtype`.
template <class F>
void with_gemm_type(int dtype, const char* op, F&& f) {
  switch (dtype) {
    case kF32: return f(float{});
    case kF16: return f(__half{});
    case kBF16: return f(__nv_bfloat16{});
  }
  throw rungs::Error(std::string("rungs: ") + op + " dtype code " + std::to_string(dtype));
}

void gemm(int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a, int64_t lda,
          uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, std::string variant, int math,
          uintptr_t stream, int device) {
  const rungs::Options o = options(std::move(variant), math, stream);
  DeviceScope scope(device);
  with_gemm_type(dtype, "gemm", [&](auto t) {
    using T = decltype(t);
    rungs::gemm(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const T>(a), lda, ptr_of<const T>(b), ldb, beta,
                ptr_of<T>(c), ldc, o);
  });
}

// f(A{}, B{}) with A and B the fp8 element types of codes `a` and `b`.
template <class F>
void with_fp8_types(int a, int b, F&& f) {
  const auto second = [&](auto ta) {
    switch (b) {
      case kE4M3: return f(ta, __nv_fp8_e4m3{});
      case kE5M2: return f(ta, __nv_fp8_e5m2{});
    }
    throw rungs::Error("rungs: scaled_mm b dtype code " + std::to_string(b));
  };
  switch (a) {
    case kE4M3: return second(__nv_fp8_e4m3{});
    case kE5M2: return second(__nv_fp8_e5m2{});
  }
  throw rungs::Error("rungs: scaled_mm a dtype code " + std::to_string(a));
}

rungs::Scaling scaling_of(int kind) {
  switch (kind) {
    case 0: return rungs::Scaling::tensor;
    case 1: return rungs::Scaling::outer;
    case 2: return rungs::Scaling::block128;
  }
  throw rungs::Error("rungs: scaling code " + std::to_string(kind) + " (must be 0 tensor, 1 outer or 2 block128)");
}

// The fp8 gemm: a_dtype, b_dtype fp8 codes, c_dtype kF32 or kBF16, kind a scaling code.
void scaled_mm(int a_dtype, int b_dtype, int c_dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               uintptr_t a, int64_t lda, uintptr_t b, int64_t ldb, uintptr_t scale_a, uintptr_t scale_b, int kind,
               float beta, uintptr_t c, int64_t ldc, std::string variant, uintptr_t stream, int device) {
  const rungs::Options o = options(std::move(variant), 0, stream);
  const rungs::Scales scales{ptr_of<const float>(scale_a), ptr_of<const float>(scale_b), scaling_of(kind)};
  if (c_dtype != kF32 && c_dtype != kBF16)
    throw rungs::Error("rungs: scaled_mm output dtype code " + std::to_string(c_dtype));
  DeviceScope scope(device);
  with_fp8_types(a_dtype, b_dtype, [&](auto ea, auto eb) {
    using A = decltype(ea);
    using B = decltype(eb);
    if (c_dtype == kF32)
      rungs::gemm(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const A>(a), lda, ptr_of<const B>(b), ldb, scales,
                  beta, ptr_of<float>(c), ldc, o);
    else
      rungs::gemm(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const A>(a), lda, ptr_of<const B>(b), ldb, scales,
                  beta, ptr_of<__nv_bfloat16>(c), ldc, o);
  });
}

// The checks rungs::gemm makes before it touches memory or a device: the math mode for the element
// type, the variant's name, and that the rung has an entry for the type (else Unsupported). They
// are made by the library itself, on an empty product (m = 0), after which it returns; so the fake
// implementations of the torch operators reject exactly what the call would, with its messages.
// "auto" asks the device for its choice; here it is checked as the first rung that does the type.
// (Called with the GIL held: the cache needs no lock of its own.)
std::string first_rung_of(const std::string& type) {
  static std::map<std::string, std::string> cache;
  const auto hit = cache.find(type);
  if (hit != cache.end()) return hit->second;
  std::string name = "auto";
  for (const rungs::VariantInfo& v : rungs::variants(rungs::Op::gemm)) {
    if ((" " + v.types + " ").find(" " + type + " ") != std::string::npos) {
      name = v.name;
      break;
    }
  }
  return cache[type] = name;
}

void check_gemm(int dtype, int math, std::string variant) {
  static const char* const names[] = {"f32", "f16", "bf16"};
  rungs::Options o = options(std::move(variant), math, 0);
  if (dtype < kF32 || dtype > kBF16) throw rungs::Error("rungs: gemm dtype code " + std::to_string(dtype));
  if (o.variant == "auto") o.variant = first_rung_of(dtype == kF32 && math == 1 ? "tf32"
                                                       : dtype == kF32 && math == 2 ? "tf32x3"
                                                                                    : names[dtype]);
  with_gemm_type(dtype, "gemm", [&](auto t) {
    using T = decltype(t);
    rungs::gemm(rungs::Trans::N, rungs::Trans::N, 0, 1, 1, 1.0f, static_cast<const T*>(nullptr), 1,
                static_cast<const T*>(nullptr), 1, 0.0f, static_cast<T*>(nullptr), 1, o);
  });
}

void check_scaled_mm(int a_dtype, int b_dtype, int c_dtype, int kind, std::string variant) {
  rungs::Options o = options(std::move(variant), 0, 0);
  if (o.variant == "auto") o.variant = first_rung_of("fp8");
  const rungs::Scales scales{nullptr, nullptr, scaling_of(kind)};
  if (c_dtype != kF32 && c_dtype != kBF16)
    throw rungs::Error("rungs: scaled_mm output dtype code " + std::to_string(c_dtype));
  with_fp8_types(a_dtype, b_dtype, [&](auto ea, auto eb) {
    using A = decltype(ea);
    using B = decltype(eb);
    if (c_dtype == kF32)
      rungs::gemm(rungs::Trans::N, rungs::Trans::N, 0, 1, 1, 1.0f, static_cast<const A*>(nullptr), 1,
                  static_cast<const B*>(nullptr), 1, scales, 0.0f, static_cast<float*>(nullptr), 1, o);
    else
      rungs::gemm(rungs::Trans::N, rungs::Trans::N, 0, 1, 1, 1.0f, static_cast<const A*>(nullptr), 1,
                  static_cast<const B*>(nullptr), 1, scales, 0.0f, static_cast<__nv_bfloat16*>(nullptr), 1, o);
  });
}

rungs::Activation activation_of(int act) {
  switch (act) {
    case 0: return rungs::Activation::none;
    case 1: return rungs::Activation::relu;
    case 2: return rungs::Activation::gelu;
    case 3: return rungs::Activation::silu;
  }
  throw rungs::Error("rungs: activation code " + std::to_string(act) + " (must be 0 none, 1 relu, 2 gelu or 3 silu)");
}

// gemm with an epilogue (rungs::Epilogue): bias (0: none), activation code, gated; fp8_out: C in
// e4m3 with its block scales at `scales` (dtype must be kBF16).
void gemm_epilogue(int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a,
                   int64_t lda, uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, uintptr_t bias,
                   int act, bool gated, bool fp8_out, uintptr_t scales, std::string variant, int math,
                   uintptr_t stream, int device) {
  rungs::Options o = options(std::move(variant), math, stream);
  o.epilogue.bias = ptr_of<const void>(bias), o.epilogue.act = activation_of(act), o.epilogue.gated = gated;
  DeviceScope scope(device);
  if (fp8_out) {
    if (dtype != kBF16) throw rungs::Error("rungs: gemm with an fp8 output takes bfloat16 inputs");
    rungs::gemm(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const __nv_bfloat16>(a), lda,
                ptr_of<const __nv_bfloat16>(b), ldb, ptr_of<__nv_fp8_e4m3>(c), ldc, ptr_of<float>(scales), o);
    return;
  }
  with_gemm_type(dtype, "gemm", [&](auto t) {
    using T = decltype(t);
    rungs::gemm(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const T>(a), lda, ptr_of<const T>(b), ldb, beta,
                ptr_of<T>(c), ldc, o);
  });
}

// check_gemm's checks for a call with an epilogue (the library's, on an empty product): the
// variant must apply epilogues; "auto" is checked as itself (it applies every one).
void check_gemm_epilogue(int dtype, int math, int act, bool gated, bool fp8_out, std::string variant) {
  rungs::Options o = options(std::move(variant), math, 0);
  o.epilogue.act = activation_of(act), o.epilogue.gated = gated;
  // A bias alone (its pointer is not read on an empty product) where nothing else makes it one.
  if (o.epilogue.act == rungs::Activation::none && !gated) o.epilogue.bias = reinterpret_cast<const void*>(256);
  if (fp8_out) {
    rungs::gemm(rungs::Trans::N, rungs::Trans::T, 0, 1, 1, 1.0f, static_cast<const __nv_bfloat16*>(nullptr), 1,
                static_cast<const __nv_bfloat16*>(nullptr), 1, static_cast<__nv_fp8_e4m3*>(nullptr), 1, nullptr, o);
    return;
  }
  with_gemm_type(dtype, "gemm", [&](auto t) {
    using T = decltype(t);
    rungs::gemm(rungs::Trans::N, rungs::Trans::T, 0, 1, 1, 1.0f, static_cast<const T*>(nullptr), 1,
                static_cast<const T*>(nullptr), 1, 0.0f, static_cast<T*>(nullptr), 1, o);
  });
}

std::string resolve_scaled_mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int kind, int64_t lda, int64_t ldb,
                              std::string variant, int device) {
  const rungs::Options o = options(std::move(variant), 0, 0);
  DeviceScope scope(device);
  return rungs::resolve_gemm_variant(trans_of(ta), trans_of(tb), m, n, k, o, rungs::GemmType::fp8, lda, ldb,
                                     scaling_of(kind));
}

void gemm_host(int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, uintptr_t a, int64_t lda,
               uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, std::string variant, int math,
               int device) {
  const rungs::Options o = options(std::move(variant), math, 0);
  DeviceScope scope(device);
  with_gemm_type(dtype, "gemm_host", [&](auto t) {
    using T = decltype(t);
    rungs::gemm_host(trans_of(ta), trans_of(tb), m, n, k, alpha, ptr_of<const T>(a), lda, ptr_of<const T>(b), ldb,
                     beta, ptr_of<T>(c), ldc, o);
  });
}

void gemv(bool trans, int64_t m, int64_t n, float alpha, uintptr_t a, int64_t lda, uintptr_t x, int64_t incx,
          float beta, uintptr_t y, int64_t incy, std::string variant, uintptr_t stream, int device) {
  const rungs::Options o = options(std::move(variant), 0, stream);
  DeviceScope scope(device);
  rungs::gemv(trans_of(trans), m, n, alpha, ptr_of<const float>(a), lda, ptr_of<const float>(x), incx, beta,
              ptr_of<float>(y), incy, o);
}

void reduce_sum(int dtype, uintptr_t in, int64_t n, uintptr_t out, std::string variant, uintptr_t stream,
                int device) {
  const rungs::Options o = options(std::move(variant), 0, stream);
  DeviceScope scope(device);
  switch (dtype) {
    case kI32: rungs::reduce_sum(ptr_of<const int32_t>(in), n, ptr_of<int64_t>(out), o); return;
    case kI64: rungs::reduce_sum(ptr_of<const int64_t>(in), n, ptr_of<int64_t>(out), o); return;
    case kRF32: rungs::reduce_sum(ptr_of<const float>(in), n, ptr_of<float>(out), o); return;
    case kRF64: rungs::reduce_sum(ptr_of<const double>(in), n, ptr_of<double>(out), o); return;
  }
  throw rungs::Error("rungs: reduce_sum dtype code " + std::to_string(dtype));
}

std::string resolve_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int dtype, int64_t lda, int64_t ldb,
                         std::string variant, int math, int device) {
  const rungs::Options o = options(std::move(variant), math, 0);
  DeviceScope scope(device);
  const rungs::GemmType type =
      dtype == kF16 ? rungs::GemmType::f16 : dtype == kBF16 ? rungs::GemmType::bf16 : rungs::GemmType::f32;
  return rungs::resolve_gemm_variant(trans_of(ta), trans_of(tb), m, n, k, o, type, lda, ldb);
}

std::string resolve_gemv(bool trans, int64_t m, int64_t n, std::string variant, int device) {
  const rungs::Options o = options(std::move(variant), 0, 0);
  DeviceScope scope(device);
  return rungs::resolve_gemv_variant(trans_of(trans), m, n, o);
}

std::string resolve_reduce(int dtype, int64_t n, std::string variant, int device) {
  const rungs::Options o = options(std::move(variant), 0, 0);
  DeviceScope scope(device);
  const rungs::DType t = dtype == kI32    ? rungs::DType::i32
                         : dtype == kI64  ? rungs::DType::i64
                         : dtype == kRF32 ? rungs::DType::f32
                                          : rungs::DType::f64;
  return rungs::resolve_reduce_variant(t, n, o);
}

#if defined(RUNGS_HAVE_DIST)
// rungs::dist on a communicator given as its address (torch's ProcessGroupNCCL._comm_ptr(), or any
// ncclComm_t), 16-bit types only (dtype kF16 or kBF16).
ncclComm_t comm_of(uintptr_t comm) { return reinterpret_cast<ncclComm_t>(comm); }

template <class F>
void with_dist_type(int dtype, const char* op, F&& f) {
  switch (dtype) {
    case kF16: return f(__half{});
    case kBF16: return f(__nv_bfloat16{});
  }
  throw rungs::Error(std::string("rungs: ") + op + " dtype code " + std::to_string(dtype));
}

void allgather_gemm(int dtype, int64_t m_local, int64_t n_local, int64_t k, float alpha, uintptr_t a, int64_t lda,
                    uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, uintptr_t comm,
                    std::string variant, uintptr_t stream, int device) {
  const rungs::Options o = options(std::move(variant), 0, stream);
  DeviceScope scope(device);
  with_dist_type(dtype, "allgather_gemm", [&](auto t) {
    using T = decltype(t);
    rungs::dist::allgather_gemm(m_local, n_local, k, alpha, ptr_of<const T>(a), lda, ptr_of<const T>(b), ldb, beta,
                                ptr_of<T>(c), ldc, comm_of(comm), o);
  });
}

void gemm_reducescatter(int dtype, int64_t m, int64_t n, int64_t k_local, float alpha, uintptr_t a, int64_t lda,
                        uintptr_t b, int64_t ldb, float beta, uintptr_t c, int64_t ldc, uintptr_t comm,
                        std::string variant, uintptr_t stream, int device) {
  const rungs::Options o = options(std::move(variant), 0, stream);
  DeviceScope scope(device);
  with_dist_type(dtype, "gemm_reducescatter", [&](auto t) {
    using T = decltype(t);
    rungs::dist::gemm_reducescatter(m, n, k_local, alpha, ptr_of<const T>(a), lda, ptr_of<const T>(b), ldb, beta,
                                    ptr_of<T>(c), ldc, comm_of(comm), o);
  });
}

void dist_release(uintptr_t comm, int device) {
  DeviceScope scope(device);
  rungs::dist::release(comm_of(comm));
}
#endif

std::vector<rungs::VariantInfo> variants(const std::string& op) {
  if (op == "gemm") return rungs::variants(rungs::Op::gemm);
  if (op == "gemv") return rungs::variants(rungs::Op::gemv);
  if (op == "reduce") return rungs::variants(rungs::Op::reduce);
  if (op == "allgather_gemm" || op == "gemm_reducescatter") {
    std::vector<rungs::VariantInfo> v =
        rungs::variants(op == "allgather_gemm" ? rungs::Op::allgather_gemm : rungs::Op::gemm_reducescatter);
    if (v.empty())
      throw nb::value_error(("op: '" + op + "': this build of rungs has no NCCL ladder (built without NCCL's "
                             "headers: install nvidia-nccl-cu13 and build again)").c_str());
    return v;
  }
  throw nb::value_error(("op: unknown operation '" + op +
                         "' (must be 'gemm', 'gemv', 'reduce', 'allgather_gemm' or 'gemm_reducescatter')")
                            .c_str());
}

// The number of CUDA devices the runtime can use; 0 where there is none (or no driver).
int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // the failed query is also the thread's last error: clear it
    return 0;
  }
  return n;
}

int current_device() {
  int d = 0;
  check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

// The device that owns device (or managed) memory at `ptr`, for arrays that carry only a pointer
// (__cuda_array_interface__); -1 for host memory the device cannot address as its own.
int pointer_device(uintptr_t ptr) {
  cudaPointerAttributes attr{};
  check(cudaPointerGetAttributes(&attr, reinterpret_cast<const void*>(ptr)), "cudaPointerGetAttributes");
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) return attr.device;
  return -1;
}

// `consumer` waits for the work queued so far on `producer` (an event between them), so arrays that
// another stream is still writing are ready before rungs reads them. Same stream: nothing to do.
void stream_wait(uintptr_t consumer, uintptr_t producer, int device) {
  if (consumer == producer) return;
  nb::gil_scoped_release release;
  DeviceScope scope(device);
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  cudaError_t err = cudaEventRecord(e, stream_of(producer));
  if (err == cudaSuccess) err = cudaStreamWaitEvent(stream_of(consumer), e, 0);
  cudaEventDestroy(e);
  check(err, "ordering one stream after another (cudaEventRecord / cudaStreamWaitEvent)");
}

void stream_synchronize(uintptr_t stream, int device) {
  nb::gil_scoped_release release;
  DeviceScope scope(device);
  check(cudaStreamSynchronize(stream_of(stream)), "cudaStreamSynchronize");
}

// The fields of a DLPack capsule ("dltensor", DLPack's unversioned ABI, which every producer gives
// when __dlpack__ is called without max_version). The capsule is read, not consumed: it stays
// named "dltensor", so the producer's own destructor frees it when the Python object goes away.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

// (pointer + byte_offset, device_type, device_id, (code, bits, lanes), shape, strides or None).
nb::tuple dlpack_view(nb::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw nb::type_error("__dlpack__() did not return an unconsumed DLPack capsule named 'dltensor'");
  auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (mt == nullptr) throw nb::python_error();
  const DLTensor& t = mt->dl_tensor;
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    throw nb::value_error("DLPack capsule with an invalid shape");
  nb::list shape, strides;
  for (int32_t i = 0; i < t.ndim; ++i) {
    shape.append(t.shape[i]);
    if (t.strides) strides.append(t.strides[i]);
  }
  const uintptr_t ptr = reinterpret_cast<uintptr_t>(t.data) + static_cast<uintptr_t>(t.byte_offset);
  return nb::make_tuple(ptr, t.device.device_type, t.device.device_id,
                        nb::make_tuple(t.dtype.code, t.dtype.bits, t.dtype.lanes), nb::tuple(shape),
                        t.strides ? nb::object(nb::tuple(strides)) : nb::none());
}

// -- the eager torch path --------------------------------------------------------------------
// rungs.gemm on plain torch CUDA tensors, on torch's current stream, outside torch.compile: the
// commonest call, read here through the C API instead of Python code (rungs/_core.py, gemm_torch,
// calls it after its torch.compile check). torch is not linked: its objects come from
// torch_setup, and the tensors are read through their Python attributes. Anything but the plain
// case (a dtype, a layout, grad, mixed devices, beta without out...) declines with None, having done
// nothing: the general Python path then runs, with its checks and messages.
struct TorchRefs {
  PyObject *tensor = nullptr, *parameter = nullptr, *f32 = nullptr, *f16 = nullptr, *bf16 = nullptr;
  PyObject *grad_enabled = nullptr, *raw_stream = nullptr;
  PyObject *s_dtype = nullptr, *s_get_device = nullptr, *s_stride = nullptr, *s_shape = nullptr;
  PyObject *s_requires_grad = nullptr, *s_data_ptr = nullptr, *s_new_empty = nullptr;
};
TorchRefs g_torch;  // strong references, kept for the life of the process

void torch_setup(nb::handle tensor, nb::handle parameter, nb::handle f32, nb::handle f16, nb::handle bf16,
                 nb::handle grad_enabled, nb::handle raw_stream) {
  TorchRefs& t = g_torch;
  for (auto [slot, h] : {std::pair<PyObject**, nb::handle>{&t.tensor, tensor}, {&t.parameter, parameter},
                         {&t.f32, f32}, {&t.f16, f16}, {&t.bf16, bf16}, {&t.grad_enabled, grad_enabled},
                         {&t.raw_stream, raw_stream}}) {
    Py_XINCREF(h.ptr());
    Py_XDECREF(*slot);
    *slot = h.ptr();
  }
  if (!t.s_dtype) {
    t.s_dtype = PyUnicode_InternFromString("dtype");
    t.s_get_device = PyUnicode_InternFromString("get_device");
    t.s_stride = PyUnicode_InternFromString("stride");
    t.s_shape = PyUnicode_InternFromString("shape");
    t.s_requires_grad = PyUnicode_InternFromString("requires_grad");
    t.s_data_ptr = PyUnicode_InternFromString("data_ptr");
    t.s_new_empty = PyUnicode_InternFromString("new_empty");
  }
}

bool is_torch_tensor(PyObject* o) {
  const PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(o));
  return g_torch.tensor && (type == g_torch.tensor || type == g_torch.parameter);
}

// A Python failure inside the path is the caller's error (nb::python_error carries it).
nb::object checked(PyObject* o) {
  if (!o) throw nb::python_error();
  return nb::steal(o);
}
nb::object call_method(PyObject* self, PyObject* name) {
  PyObject* args[] = {self};
  return checked(PyObject_VectorcallMethod(name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
}
int64_t as_int(const nb::object& o) {
  const long long v = PyLong_AsLongLong(o.ptr());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

using rungs::python::view_layout;

// A 2-D tensor's shape and strides; false unless it has two dimensions.
bool shape_strides(PyObject* x, int64_t& r, int64_t& c, int64_t& sr, int64_t& sc) {
  const nb::object shape = checked(PyObject_GetAttr(x, g_torch.s_shape));
  const nb::object stride = call_method(x, g_torch.s_stride);
  if (!PyTuple_Check(shape.ptr()) || !PyTuple_Check(stride.ptr()) || PyTuple_GET_SIZE(shape.ptr()) != 2 ||
      PyTuple_GET_SIZE(stride.ptr()) != 2)
    return false;
  r = as_int(nb::borrow(PyTuple_GET_ITEM(shape.ptr(), 0)));
  c = as_int(nb::borrow(PyTuple_GET_ITEM(shape.ptr(), 1)));
  sr = as_int(nb::borrow(PyTuple_GET_ITEM(stride.ptr(), 0)));
  sc = as_int(nb::borrow(PyTuple_GET_ITEM(stride.ptr(), 1)));
  return true;
}

// The call the path makes: the arguments of `gemm` above (the extension's raw entry), and the
// tensor it returns (out, or the new result).
struct TorchGemm {
  int dtype = 0, math = 0, device = 0;
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  uintptr_t a = 0, b = 0, c = 0, stream = 0;
  std::string variant;
  nb::object result;
};

bool torch_gemm_plan(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta, nb::handle variant,
                     nb::handle math, TorchGemm& g) {
  const TorchRefs& R = g_torch;
  if (!is_torch_tensor(a.ptr()) || !is_torch_tensor(b.ptr()) || !PyUnicode_CheckExact(variant.ptr()) ||
      !PyUnicode_CheckExact(math.ptr()))
    return false;
  if (!(PyFloat_CheckExact(alpha.ptr()) || PyLong_CheckExact(alpha.ptr())) ||
      !(PyFloat_CheckExact(beta.ptr()) || PyLong_CheckExact(beta.ptr())))
    return false;
  const double al = PyFloat_AsDouble(alpha.ptr()), be = PyFloat_AsDouble(beta.ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  const int grad = PyObject_IsTrue(checked(PyObject_CallNoArgs(R.grad_enabled)).ptr());
  if (grad < 0) throw nb::python_error();
  if (grad) {
    if (checked(PyObject_GetAttr(a.ptr(), R.s_requires_grad)).ptr() == Py_True ||
        checked(PyObject_GetAttr(b.ptr(), R.s_requires_grad)).ptr() == Py_True)
      return false;
  }
  const nb::object dt = checked(PyObject_GetAttr(a.ptr(), R.s_dtype));
  if (checked(PyObject_GetAttr(b.ptr(), R.s_dtype)).ptr() != dt.ptr()) return false;
  if (dt.ptr() == R.f32) g.dtype = kF32;
  else if (dt.ptr() == R.f16) g.dtype = kF16;
  else if (dt.ptr() == R.bf16) g.dtype = kBF16;
  else return false;
  if (PyUnicode_CompareWithASCIIString(math.ptr(), "fp32") == 0) g.math = 0;
  else if (PyUnicode_CompareWithASCIIString(math.ptr(), "tf32") == 0) g.math = 1;
  else if (PyUnicode_CompareWithASCIIString(math.ptr(), "tf32x3") == 0) g.math = 2;
  else return false;
  g.device = static_cast<int>(as_int(call_method(a.ptr(), R.s_get_device)));
  if (g.device < 0 || as_int(call_method(b.ptr(), R.s_get_device)) != g.device) return false;
  int64_t m, k, k2, n, sa0, sa1, sb0, sb1;
  if (!shape_strides(a.ptr(), m, k, sa0, sa1) || !shape_strides(b.ptr(), k2, n, sb0, sb1) || k2 != k) return false;
  bool ta, tb;
  int64_t lda, ldb;
  if (!view_layout(m, k, sa0, sa1, ta, lda) || !view_layout(k, n, sb0, sb1, tb, ldb)) return false;
  Py_ssize_t len = 0;
  const char* v = PyUnicode_AsUTF8AndSize(variant.ptr(), &len);
  if (!v) throw nb::python_error();
  g.variant.assign(v, static_cast<size_t>(len));
  g.alpha = static_cast<float>(al);
  const uintptr_t pa = static_cast<uintptr_t>(as_int(call_method(a.ptr(), R.s_data_ptr)));
  const uintptr_t pb = static_cast<uintptr_t>(as_int(call_method(b.ptr(), R.s_data_ptr)));
  if (out.is_none()) {
    if (be != 0.0) return false;
    PyObject* args[] = {a.ptr(), PyLong_FromLongLong(m), PyLong_FromLongLong(n)};
    const nb::object mo = nb::steal(args[1]), no = nb::steal(args[2]);
    if (!args[1] || !args[2]) throw nb::python_error();
    g.result = checked(PyObject_VectorcallMethod(R.s_new_empty, args, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.a = pa, g.lda = lda, g.b = pb, g.ldb = ldb;
    g.beta = 0.0f, g.ldc = n > 1 ? n : 1;
  } else {
    int64_t om, on, so0, so1;
    if (!is_torch_tensor(out.ptr()) || as_int(call_method(out.ptr(), R.s_get_device)) != g.device ||
        checked(PyObject_GetAttr(out.ptr(), R.s_dtype)).ptr() != dt.ptr() ||
        checked(PyObject_GetAttr(out.ptr(), R.s_requires_grad)).ptr() == Py_True ||
        !shape_strides(out.ptr(), om, on, so0, so1) || om != m || on != n)
      return false;
    bool tc;
    int64_t ldc;
    if (!view_layout(m, n, so0, so1, tc, ldc)) return false;
    g.result = nb::borrow(out);
    g.beta = static_cast<float>(be), g.k = k, g.ldc = ldc;
    if (tc) {  // a transposed out: out.T = b.T @ a.T on the same memory
      g.ta = !tb, g.tb = !ta, g.m = n, g.n = m, g.a = pb, g.lda = ldb, g.b = pa, g.ldb = lda;
    } else {
      g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.a = pa, g.lda = lda, g.b = pb, g.ldb = ldb;
    }
  }
  g.c = static_cast<uintptr_t>(as_int(call_method(g.result.ptr(), R.s_data_ptr)));
  PyObject* dev = PyLong_FromLong(g.device);
  if (!dev) throw nb::python_error();
  const nb::object dev_o = nb::steal(dev);
  g.stream = static_cast<uintptr_t>(as_int(checked(PyObject_CallOneArg(R.raw_stream, dev))));
  return true;
}

// rungs.gemm's torch path: the result (out or a new tensor), or None having done nothing.
nb::object gemm_torch(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta,
                      nb::handle variant, nb::handle math) {
  TorchGemm g;
  if (!torch_gemm_plan(a, b, out, alpha, beta, variant, math, g)) return nb::none();
  {
    nb::gil_scoped_release no_gil;
    gemm(g.dtype, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, std::move(g.variant),
         g.math, g.stream, g.device);
  }
  return g.result;
}

// The same path stopped before the library: (result, the arguments of _rungs.gemm), or None. The
// tests on machines without a GPU compare it with the general path's call.
nb::object gemm_torch_plan(nb::handle a, nb::handle b, nb::handle out, nb::handle alpha, nb::handle beta,
                           nb::handle variant, nb::handle math) {
  TorchGemm g;
  if (!torch_gemm_plan(a, b, out, alpha, beta, variant, math, g)) return nb::none();
  return nb::make_tuple(g.result, nb::make_tuple(g.dtype, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb,
                                                 g.beta, g.c, g.ldc, g.variant, g.math, g.stream, g.device));
}

}  // namespace

NB_MODULE(_rungs, m) {
  m.doc() = "rungs' extension module: the C++ library's calls on raw pointers (use the rungs package)";
  m.attr("__version__") = RUNGS_VERSION;

  // Most recently registered translators are tried first: Error, then Unsupported (an Error).
  static nb::exception<rungs::Error> error(m, "Error", PyExc_RuntimeError);
  static nb::exception<rungs::Unsupported> unsupported(m, "Unsupported", error);

  nb::class_<rungs::VariantInfo>(m, "VariantInfo",
                                 "One rung of a ladder: name, summary, rung number, min_sm (0: runs on the "
                                 "host), baseline (the vendor's), types (the element types and math modes it "
                                 "does), parent (the rung it builds on; empty for the first and the baseline)")
      .def_ro("name", &rungs::VariantInfo::name)
      .def_ro("summary", &rungs::VariantInfo::summary)
      .def_ro("rung", &rungs::VariantInfo::rung)
      .def_ro("min_sm", &rungs::VariantInfo::min_sm)
      .def_ro("baseline", &rungs::VariantInfo::baseline)
      .def_ro("types", &rungs::VariantInfo::types)
      .def_ro("parent", &rungs::VariantInfo::parent)
      .def("__repr__", [](const rungs::VariantInfo& v) {
        return "VariantInfo(name='" + v.name + "', rung=" + std::to_string(v.rung) +
               ", min_sm=" + std::to_string(v.min_sm) + ", baseline=" + (v.baseline ? "True" : "False") +
               (v.types.empty() ? std::string() : ", types='" + v.types + "'") +
               (v.parent.empty() ? std::string() : ", parent='" + v.parent + "'") + ")";
      });

  const auto no_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("gemm", &gemm, no_gil);
  m.def("gemm_host", &gemm_host, no_gil);
  m.def("scaled_mm", &scaled_mm, no_gil);
  m.def("check_gemm", &check_gemm);
  m.def("check_scaled_mm", &check_scaled_mm);
  m.def("gemm_epilogue", &gemm_epilogue, no_gil);
  m.def("check_gemm_epilogue", &check_gemm_epilogue);
  m.def("resolve_scaled_mm", &resolve_scaled_mm, no_gil);
#if defined(RUNGS_HAVE_DIST)
  m.attr("HAVE_DIST") = true;
  m.def("allgather_gemm", &allgather_gemm, no_gil);
  m.def("gemm_reducescatter", &gemm_reducescatter, no_gil);
  m.def("dist_release", &dist_release, no_gil);
#else
  m.attr("HAVE_DIST") = false;
#endif
  m.def("gemv", &gemv, no_gil);
  m.def("reduce_sum", &reduce_sum, no_gil);
  m.def("resolve_gemm", &resolve_gemm, no_gil);
  m.def("resolve_gemv", &resolve_gemv, no_gil);
  m.def("resolve_reduce", &resolve_reduce, no_gil);
  m.def("variants", &variants);
  m.def("device_count", &device_count);
  m.def("current_device", &current_device);
  m.def("pointer_device", &pointer_device);
  m.def("stream_wait", &stream_wait);
  m.def("stream_synchronize", &stream_synchronize);
  m.def("dlpack_view", &dlpack_view);
  m.def("torch_setup", &torch_setup);
  // Any argument may be None (the path then declines, or out is absent).
  const auto torch_args = std::make_tuple(nb::arg("a").none(), nb::arg("b").none(), nb::arg("out").none(),
                                          nb::arg("alpha").none(), nb::arg("beta").none(), nb::arg("variant").none(),
                                          nb::arg("math").none());
  std::apply([&](auto... a) { m.def("gemm_torch", &gemm_torch, a...); }, torch_args);
  std::apply([&](auto... a) { m.def("gemm_torch_plan", &gemm_torch_plan, a...); }, torch_args);
}
