#include "detail/check.hpp"

#include <cublas_v2.h>

#include <array>
#include <atomic>

namespace rungs::detail {

void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  // Clear a sticky-free error so the next call on this thread starts clean.
  (void)cudaGetLastError();
  std::ostringstream os;
  os << "CUDA error " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ") in " << what << " at "
     << file << ":" << line;
  throw Error(os.str());
}

void throw_cublas(int status, const char* what, const char* file, int line) {
  std::ostringstream os;
  os << "cuBLAS error " << cublasGetStatusName(static_cast<cublasStatus_t>(status)) << " ("
     << cublasGetStatusString(static_cast<cublasStatus_t>(status)) << ") in " << what << " at " << file << ":"
     << line;
  throw Error(os.str());
}

void unsupported(const std::string& variant, const std::string& reason) {
  throw Unsupported(variant + ": " + reason);
}

int current_sm() {
  static std::array<std::atomic<int>, 64> cache{};  // 0 = not yet known
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  if (dev >= 0 && dev < static_cast<int>(cache.size())) {
    int v = cache[dev].load(std::memory_order_relaxed);
    if (v) return v;
  }
  int major = 0, minor = 0;
  RUNGS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  RUNGS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  int sm = major * 10 + minor;
  if (dev >= 0 && dev < static_cast<int>(cache.size())) cache[dev].store(sm, std::memory_order_relaxed);
  return sm;
}

void require_sm(const char* fn, const char* rung, int min_sm) {
  if (min_sm <= 0) return;
  const int sm = current_sm();
  if (sm >= min_sm) return;
  std::ostringstream os;
  os << "rungs::" << fn << ": variant " << rung << " needs sm_" << min_sm << " or newer; this device is sm_" << sm;
  throw Error(os.str());
}

}  // namespace rungs::detail
