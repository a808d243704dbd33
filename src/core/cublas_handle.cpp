#include "detail/cublas_handle.hpp"

#include "detail/check.hpp"

#include <map>

namespace rungs::detail {

namespace {
struct Handles {
  std::map<int, cublasHandle_t> by_device;
  ~Handles() {
    for (auto& kv : by_device) cublasDestroy(kv.second);  // errors at exit are ignored
  }
};
}  // namespace

cublasHandle_t cublas_handle() {
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

}  // namespace rungs::detail
