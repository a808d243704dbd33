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

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

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

// Element types as the Python layer numbers them (rungs/_core.py keeps the same table).
enum GemmDtype : int { kF32 = 0, kF16 = 1, kBF16 = 2 };
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

std::vector<rungs::VariantInfo> variants(const std::string& op) {
  if (op == "gemm") return rungs::variants(rungs::Op::gemm);
  if (op == "gemv") return rungs::variants(rungs::Op::gemv);
  if (op == "reduce") return rungs::variants(rungs::Op::reduce);
  throw nb::value_error(("op: unknown operation '" + op + "' (must be 'gemm', 'gemv' or 'reduce')").c_str());
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

}  // namespace

NB_MODULE(_rungs, m) {
  m.doc() = "rungs' extension module: the C++ library's calls on raw pointers (use the rungs package)";
  m.attr("__version__") = RUNGS_VERSION;

  // Most recently registered translators are tried first: Error, then Unsupported (an Error).
  static nb::exception<rungs::Error> error(m, "Error", PyExc_RuntimeError);
  static nb::exception<rungs::Unsupported> unsupported(m, "Unsupported", error);

  nb::class_<rungs::VariantInfo>(m, "VariantInfo",
                                 "One rung of a ladder: name, summary, rung number, min_sm (0: runs on the "
                                 "host), baseline (the vendor's), types (gemm: the element types and math "
                                 "modes it does)")
      .def_ro("name", &rungs::VariantInfo::name)
      .def_ro("summary", &rungs::VariantInfo::summary)
      .def_ro("rung", &rungs::VariantInfo::rung)
      .def_ro("min_sm", &rungs::VariantInfo::min_sm)
      .def_ro("baseline", &rungs::VariantInfo::baseline)
      .def_ro("types", &rungs::VariantInfo::types)
      .def("__repr__", [](const rungs::VariantInfo& v) {
        return "VariantInfo(name='" + v.name + "', rung=" + std::to_string(v.rung) +
               ", min_sm=" + std::to_string(v.min_sm) + ", baseline=" + (v.baseline ? "True" : "False") +
               (v.types.empty() ? std::string() : ", types='" + v.types + "'") + ")";
      });

  const auto no_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("gemm", &gemm, no_gil);
  m.def("gemm_host", &gemm_host, no_gil);
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
}
