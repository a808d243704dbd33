// rungs._rungs_torch: rungs.gemm's eager path on torch CUDA tensors, compiled against the libtorch
// of the Python that builds the package (python/CMakeLists.txt builds it where torch is importable
// then; rungs/_core.py loads it only under that same torch version). It reads the tensors through
// libtorch's C++ API (sizes, strides, dtype, device and pointers are fields there), allocates the
// result with at::empty as torch.mm does, takes torch's current stream from c10, and makes one
// library call with the GIL released. rungs._rungs.gemm_torch does the same through torch's Python
// API where this module is absent; both decline (return None, having done nothing) anything but
// the plain case, and the general path in rungs/_core.py then runs, with its checks and messages.
#define PY_SSIZE_T_CLEAN  // Py_BuildValue's s# takes a Py_ssize_t
#include <Python.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/python_variable.h>

#include <rungs/rungs.hpp>

#include "view_layout.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace {

PyObject* g_error = nullptr;        // rungs.Error
PyObject* g_unsupported = nullptr;  // rungs.Unsupported

// A plain torch tensor (torch.Tensor or torch.nn.Parameter, not a subclass with its own behaviour).
bool plain_tensor(PyObject* o) { return THPVariableClass && THPVariable_CheckExact(o); }

using rungs::python::view_layout;

bool number(PyObject* o, double& v) {
  if (!PyFloat_CheckExact(o) && !PyLong_CheckExact(o)) return false;
  v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// The call: the arguments of rungs._rungs.gemm, and the tensor it returns.
struct Call {
  int dtype = 0;  // 0 float, 1 half, 2 bfloat16 (rungs._rungs' codes)
  int math = 0;   // 0 fp32, 1 tf32, 2 tf32x3
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  std::string variant;
  int device = 0;
  at::Tensor result;
};

// Reads the call; false (no Python error set) to decline. cuda: the tensors must be CUDA tensors
// (plan() lets CPU tensors stand in for them, as device 0, for the tests on machines without a GPU).
bool read_call(PyObject* const* args, bool cuda, Call& g) {
  PyObject *pa = args[0], *pb = args[1], *pout = args[2], *palpha = args[3], *pbeta = args[4];
  PyObject *pvariant = args[5], *pmath = args[6];
  if (!plain_tensor(pa) || !plain_tensor(pb) || !PyUnicode_CheckExact(pvariant) || !PyUnicode_CheckExact(pmath))
    return false;
  double alpha = 0, beta = 0;
  if (!number(palpha, alpha) || !number(pbeta, beta)) return false;
  const at::Tensor& a = THPVariable_Unpack(pa);
  const at::Tensor& b = THPVariable_Unpack(pb);
  if (a.dim() != 2 || b.dim() != 2 || a.layout() != c10::kStrided || b.layout() != c10::kStrided) return false;
  if (a.scalar_type() != b.scalar_type()) return false;
  switch (a.scalar_type()) {
    case c10::ScalarType::Float: g.dtype = 0; break;
    case c10::ScalarType::Half: g.dtype = 1; break;
    case c10::ScalarType::BFloat16: g.dtype = 2; break;
    default: return false;
  }
  if (c10::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad())) return false;
  if (a.device() != b.device()) return false;
  if (cuda ? !a.is_cuda() : !(a.is_cuda() || a.is_cpu())) return false;
  g.device = a.is_cuda() ? a.get_device() : 0;
  if (PyUnicode_CompareWithASCIIString(pmath, "fp32") == 0) g.math = 0;
  else if (PyUnicode_CompareWithASCIIString(pmath, "tf32") == 0) g.math = 1;
  else if (PyUnicode_CompareWithASCIIString(pmath, "tf32x3") == 0) g.math = 2;
  else return false;
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (b.size(0) != k) return false;
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  if (!view_layout(m, k, a.stride(0), a.stride(1), ta, lda) ||
      !view_layout(k, n, b.stride(0), b.stride(1), tb, ldb))
    return false;
  Py_ssize_t len = 0;
  const char* v = PyUnicode_AsUTF8AndSize(pvariant, &len);
  if (!v) {
    PyErr_Clear();
    return false;
  }
  g.variant.assign(v, static_cast<size_t>(len));
  g.alpha = static_cast<float>(alpha);
  const void* da = a.const_data_ptr();
  const void* db = b.const_data_ptr();
  if (pout == Py_None) {
    if (beta != 0.0) return false;
    try {
      g.result = at::empty({m, n}, a.options());
    } catch (...) {  // out of memory and the like: the general path allocates again and raises torch's error
      return false;
    }
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.a = da, g.lda = lda, g.b = db, g.ldb = ldb;
    g.beta = 0.0f, g.ldc = n > 1 ? n : 1;
  } else {
    if (!plain_tensor(pout)) return false;
    const at::Tensor& out = THPVariable_Unpack(pout);
    if (out.dim() != 2 || out.layout() != c10::kStrided || out.device() != a.device() ||
        out.scalar_type() != a.scalar_type() || out.requires_grad() || out.size(0) != m || out.size(1) != n)
      return false;
    bool tc = false;
    int64_t ldc = 0;
    if (!view_layout(m, n, out.stride(0), out.stride(1), tc, ldc)) return false;
    g.result = out;
    g.beta = static_cast<float>(beta), g.k = k, g.ldc = ldc;
    if (tc) {  // a transposed out: out.T = b.T @ a.T on the same memory
      g.ta = !tb, g.tb = !ta, g.m = n, g.n = m, g.a = db, g.lda = ldb, g.b = da, g.ldb = lda;
    } else {
      g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.a = da, g.lda = lda, g.b = db, g.ldb = ldb;
    }
  }
  g.c = g.result.data_ptr();
  return true;
}

rungs::Trans trans_of(bool t) { return t ? rungs::Trans::T : rungs::Trans::N; }

template <typename T>
void run(const Call& g, const rungs::Options& o) {
  rungs::gemm(trans_of(g.ta), trans_of(g.tb), g.m, g.n, g.k, g.alpha, static_cast<const T*>(g.a), g.lda,
              static_cast<const T*>(g.b), g.ldb, g.beta, static_cast<T*>(g.c), g.ldc, o);
}

// Runs a read call with the GIL released, on the tensors' device and torch's current stream there;
// false with the Python error set (rungs' exception types) where the library threw.
bool run_released(Call& g) {
  rungs::Options o;
  o.variant = g.variant;
  o.math = g.math == 0 ? rungs::Math::fp32 : g.math == 1 ? rungs::Math::tf32 : rungs::Math::tf32x3;
  PyObject* error_type = nullptr;
  std::string message;
  Py_BEGIN_ALLOW_THREADS
  try {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(g.device));
    o.stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(g.device)).stream();
    if (g.dtype == 0) run<float>(g, o);
    else if (g.dtype == 1) run<__half>(g, o);
    else run<__nv_bfloat16>(g, o);
  } catch (const rungs::Unsupported& e) {
    error_type = g_unsupported ? g_unsupported : PyExc_RuntimeError, message = e.what();
  } catch (const rungs::Error& e) {
    error_type = g_error ? g_error : PyExc_RuntimeError, message = e.what();
  } catch (const std::exception& e) {
    error_type = PyExc_RuntimeError, message = e.what();
  } catch (...) {
    error_type = PyExc_RuntimeError, message = "rungs: an unknown C++ exception";
  }
  Py_END_ALLOW_THREADS
  if (error_type) {
    PyErr_SetString(error_type, message.c_str());
    return false;
  }
  return true;
}

// gemm(a, b, out, alpha, beta, variant, math): the result (out or a new tensor), or None having
// done nothing.
PyObject* gemm(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "_rungs_torch.gemm takes 7 arguments");
    return nullptr;
  }
  Call g;
  if (!read_call(args, true, g)) Py_RETURN_NONE;
  if (!run_released(g)) return nullptr;
  if (args[2] != Py_None) {
    Py_INCREF(args[2]);
    return args[2];
  }
  return THPVariable_Wrap(std::move(g.result));
}

// linear(x, weight, bias, variant, math): rungs.linear on plain torch CUDA tensors of one float
// dtype, no gradients: x (..., k) read as one (M, k) row-major matrix where its leading dimensions
// collapse into one stride, the weight (n, k) as its transpose in place (Trans::T), the result
// (..., n) from at::empty, the bias copied into it first and the product added (beta = 1). The
// result, or None having done nothing (anything else: the general path).
bool read_linear(PyObject* const* args, Call& g) {
  PyObject *px = args[0], *pw = args[1], *pbias = args[2], *pvariant = args[3], *pmath = args[4];
  if (!plain_tensor(px) || !plain_tensor(pw) || !PyUnicode_CheckExact(pvariant) || !PyUnicode_CheckExact(pmath))
    return false;
  if (pbias != Py_None && !plain_tensor(pbias)) return false;
  const at::Tensor& x = THPVariable_Unpack(px);
  const at::Tensor& w = THPVariable_Unpack(pw);
  if (x.dim() < 1 || w.dim() != 2 || x.layout() != c10::kStrided || w.layout() != c10::kStrided) return false;
  if (x.scalar_type() != w.scalar_type() || !x.is_cuda() || x.device() != w.device()) return false;
  switch (x.scalar_type()) {
    case c10::ScalarType::Float: g.dtype = 0; break;
    case c10::ScalarType::Half: g.dtype = 1; break;
    case c10::ScalarType::BFloat16: g.dtype = 2; break;
    default: return false;
  }
  const bool grad = c10::GradMode::is_enabled();
  if (grad && (x.requires_grad() || w.requires_grad())) return false;
  const int64_t n = w.size(0), k = w.size(1);
  if (x.size(-1) != k) return false;
  // The (M, k) matrix of x: its leading dimensions (those of extent > 1) must collapse into one stride.
  int64_t m = 1, row_stride = -1, inner = -1;
  for (int64_t d = x.dim() - 2; d >= 0; --d) {
    const int64_t e = x.size(d);
    m *= e;
    if (e == 1) continue;
    if (row_stride < 0) row_stride = x.stride(d), inner = e;
    else if (x.stride(d) != row_stride * inner) return false;
    else inner *= e;
  }
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  if (!view_layout(m, k, row_stride < 0 ? k : row_stride, x.stride(-1), ta, lda) ||
      !view_layout(k, n, w.stride(1), w.stride(0), tb, ldb))
    return false;
  if (pbias != Py_None) {
    const at::Tensor& bias = THPVariable_Unpack(pbias);
    if (bias.dim() != 1 || bias.size(0) != n || bias.scalar_type() != x.scalar_type() || bias.device() != x.device() ||
        (grad && bias.requires_grad()))
      return false;
  }
  if (PyUnicode_CompareWithASCIIString(pmath, "fp32") == 0) g.math = 0;
  else if (PyUnicode_CompareWithASCIIString(pmath, "tf32") == 0) g.math = 1;
  else if (PyUnicode_CompareWithASCIIString(pmath, "tf32x3") == 0) g.math = 2;
  else return false;
  Py_ssize_t len = 0;
  const char* v = PyUnicode_AsUTF8AndSize(pvariant, &len);
  if (!v) {
    PyErr_Clear();
    return false;
  }
  g.variant.assign(v, static_cast<size_t>(len));
  g.device = x.get_device();
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = n;
  try {
    g.result = at::empty(shape, x.options());
    if (pbias != Py_None) g.result.copy_(THPVariable_Unpack(pbias));
  } catch (...) {  // out of memory and the like: the general path tries again and raises torch's error
    return false;
  }
  g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = n > 1 ? n : 1;
  g.a = x.const_data_ptr(), g.b = w.const_data_ptr(), g.c = g.result.data_ptr();
  g.alpha = 1.0f, g.beta = pbias != Py_None ? 1.0f : 0.0f;
  return true;
}

// Runs a read call (run_released); the result, or nullptr with the Python error set.
PyObject* run_call(Call& g) {
  if (!run_released(g)) return nullptr;
  return THPVariable_Wrap(std::move(g.result));
}

PyObject* linear(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "_rungs_torch.linear takes 5 arguments");
    return nullptr;
  }
  Call g;
  if (!read_linear(args, g)) Py_RETURN_NONE;
  return run_call(g);
}

// plan(a, b, out, alpha, beta, variant, math, stream): gemm's reading stopped before the library,
// CPU tensors standing in for CUDA tensors on device 0: (result, the arguments of
// rungs._rungs.gemm with this stream), or None. The tests compare it with the general path.
PyObject* plan(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 8) {
    PyErr_SetString(PyExc_TypeError, "_rungs_torch.plan takes 8 arguments");
    return nullptr;
  }
  Call g;
  if (!read_call(args, false, g)) Py_RETURN_NONE;
  PyObject* result = args[2] != Py_None ? (Py_INCREF(args[2]), args[2]) : THPVariable_Wrap(std::move(g.result));
  if (!result) return nullptr;
  const auto ptr = [](const void* p) { return PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(p)); };
  PyObject* call = Py_BuildValue("(iOOLLLdNLNLdNLs#iOi)", g.dtype, g.ta ? Py_True : Py_False, g.tb ? Py_True : Py_False,
                                 static_cast<long long>(g.m), static_cast<long long>(g.n), static_cast<long long>(g.k),
                                 static_cast<double>(g.alpha), ptr(g.a), static_cast<long long>(g.lda), ptr(g.b),
                                 static_cast<long long>(g.ldb), static_cast<double>(g.beta), ptr(g.c),
                                 static_cast<long long>(g.ldc), g.variant.data(),
                                 static_cast<Py_ssize_t>(g.variant.size()), g.math, args[7], g.device);
  if (!call) {
    Py_DECREF(result);
    return nullptr;
  }
  PyObject* out = PyTuple_Pack(2, result, call);
  Py_DECREF(result);
  Py_DECREF(call);
  return out;
}

// setup(error, unsupported): the exception types rungs raises.
PyObject* setup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_rungs_torch.setup takes 2 arguments");
    return nullptr;
  }
  PyObject** slots[] = {&g_error, &g_unsupported};
  for (int i = 0; i < 2; ++i) {
    Py_INCREF(args[i]);
    Py_XDECREF(*slots[i]);
    *slots[i] = args[i];
  }
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"gemm", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(gemm)), METH_FASTCALL,
     "gemm(a, b, out, alpha, beta, variant, math): rungs.gemm on plain torch CUDA tensors, or None"},
    {"linear", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(linear)), METH_FASTCALL,
     "linear(x, weight, bias, variant, math): rungs.linear on plain torch CUDA tensors, or None"},
    {"plan", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(plan)), METH_FASTCALL,
     "plan(a, b, out, alpha, beta, variant, math, stream): gemm's reading without the call (tests)"},
    {"setup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(setup)), METH_FASTCALL,
     "setup(error, unsupported)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rungs_torch",
                      "rungs.gemm's eager path on torch CUDA tensors, against libtorch", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__rungs_torch() { return PyModule_Create(&module); }
