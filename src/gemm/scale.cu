// C = beta * C for the empty product (k == 0 or alpha == 0); beta == 0 writes zeros
// without reading C, so NaN in C does not survive (BLAS semantics).
#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm {

namespace {
template <typename T>
__global__ void scale_kernel(int64_t m, int64_t n, float beta, T* __restrict__ C, int64_t ldc) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / n, c = i % n;
    T* p = C + r * ldc + c;
    *p = T(beta == 0.0f ? 0.0f : beta * static_cast<float>(*p));
  }
}

template <typename T>
void scale_any(int64_t m, int64_t n, float beta, T* C, int64_t ldc, cudaStream_t stream) {
  if (beta == 1.0f) return;  // C unchanged
  const int threads = 256;
  const int64_t blocks = detail::ceil_div(m * n, threads);
  const unsigned grid = static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  scale_kernel<<<grid, threads, 0, stream>>>(m, n, beta, C, ldc);
  RUNGS_LAUNCHED();
}
}  // namespace

void scale_c(int64_t m, int64_t n, float beta, float* C, int64_t ldc, cudaStream_t stream) {
  scale_any(m, n, beta, C, ldc, stream);
}
void scale_c(int64_t m, int64_t n, float beta, __half* C, int64_t ldc, cudaStream_t stream) {
  scale_any(m, n, beta, C, ldc, stream);
}
void scale_c(int64_t m, int64_t n, float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream) {
  scale_any(m, n, beta, C, ldc, stream);
}

}  // namespace rungs::sgemm
