// y = beta * y for the empty product and alpha == 0 (BLAS: beta == 0 writes zeros, y unread).
#include "core/errors.hpp"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv {

namespace {
__global__ void scale_y_kernel(int64_t len, float beta, float* y, int64_t inc) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < len;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float* p = y + i * inc;
    *p = beta == 0.0f ? 0.0f : beta * *p;
  }
}
}  // namespace

void scale_y(int64_t len, float beta, float* y, int64_t inc, cudaStream_t stream) {
  if (len <= 0) return;
  if (beta == 1.0f) return;  // y = 1 * y: nothing to do (NaN stays NaN, as BLAS leaves it)
  constexpr int kThreads = 256;
  const int64_t want = (len + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  scale_y_kernel<<<blocks, kThreads, 0, stream>>>(len, beta, y, inc);
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv
