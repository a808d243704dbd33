#include "core/cublas_handle.hpp"

#include "core/errors.hpp"

#include <map>

namespace rungs::detail {

namespace {
struct Handles {
  std::map<int, cublasHandle_t> by_device;
  ~Handles() {
    for (auto& kv : by_device) cublasDestroy(kv.second);  // errors at exit are ignored
  }
};
struct LtHandles {
  std::map<int, cublasLtHandle_t> by_device;
  ~LtHandles() {
    for (auto& kv : by_device) cublasLtDestroy(kv.second);  // errors at exit are ignored
  }
};
}  // namespace

cublasHandle_t cublas_handle(cudaStream_t stream) {
  thread_local Handles handles;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  cublasHandle_t h = nullptr;
  auto it = handles.by_device.find(dev);
  if (it != handles.by_device.end()) {
    h = it->second;
  } else {
    const RelaxedCaptureMode relaxed;  // cublasCreate allocates: allowed while `stream` is captured
    RUNGS_CUBLAS(cublasCreate(&h));
    RUNGS_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    handles.by_device.emplace(dev, h);
    RUNGS_CUBLAS(cublasSetStream(h, stream));
    return h;
  }
  cudaStream_t cur = nullptr;
  RUNGS_CUBLAS(cublasGetStream(h, &cur));
  if (cur != stream) RUNGS_CUBLAS(cublasSetStream(h, stream));
  return h;
}

cublasLtHandle_t cublaslt_handle() {
  thread_local LtHandles handles;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  auto it = handles.by_device.find(dev);
  if (it != handles.by_device.end()) return it->second;
  const RelaxedCaptureMode relaxed;  // cublasLtCreate may allocate: allowed while a stream is captured
  cublasLtHandle_t h = nullptr;
  RUNGS_CUBLAS(cublasLtCreate(&h));
  handles.by_device.emplace(dev, h);
  return h;
}

}  // namespace rungs::detail
