// Rung 11, cublas: cublasSgemm with the handle's default math (true fp32, no TF32), the
// vendor baseline every rung is timed against (article 004's v9).
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the operands swap.
// Handles are per host thread and per device, so concurrent callers never share one.
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"

#include <cublas_v2.h>

#include <climits>
#include <map>

namespace rungs::sgemm::cublas {

using detail::unsupported;

namespace {
struct Handles {
  std::map<int, cublasHandle_t> by_device;
  ~Handles() {
    for (auto& kv : by_device) cublasDestroy(kv.second);  // errors at exit are ignored
  }
};

cublasHandle_t handle_for_current_device() {
  thread_local Handles handles;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  auto it = handles.by_device.find(dev);
  if (it != handles.by_device.end()) return it->second;
  cublasHandle_t h = nullptr;
  RUNGS_CUBLAS(cublasCreate(&h));
  RUNGS_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  handles.by_device.emplace(dev, h);
  return h;
}
}  // namespace

void run(const Args& a) {
  if (a.lda > INT_MAX || a.ldb > INT_MAX || a.ldc > INT_MAX) unsupported("cublas", "cuBLAS takes 32-bit leading dimensions");
  cublasHandle_t h = handle_for_current_device();
  RUNGS_CUBLAS(cublasSetStream(h, a.stream));
  const cublasOperation_t opa = a.ta == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = a.tb == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  RUNGS_CUBLAS(cublasSgemm(h, opb, opa, static_cast<int>(a.n), static_cast<int>(a.m), static_cast<int>(a.k), &a.alpha,
                           a.B, static_cast<int>(a.ldb), a.A, static_cast<int>(a.lda), &a.beta, a.C,
                           static_cast<int>(a.ldc)));
}

}  // namespace rungs::sgemm::cublas
