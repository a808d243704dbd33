// Rung 11's fp8 path: the 1x128 block scales of A in the order cuBLASLt reads them.
// Ours are m x ceil(k/128) row-major (a row's k blocks contiguous); cuBLASLt's VEC128_32F scales of
// its B operand (our A, k-major) are the same numbers with the m index contiguous, i.e. the
// transpose, ceil(k/128) x m row-major. The array is k/128 times smaller than A, so one pass of a
// 32x32 shared-memory tile transpose costs little beside the product.
#include "core/errors.hpp"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::cublas {

namespace {
constexpr int kTile = 32;

// dst (cols x rows, row-major) = transpose of src (rows x cols, row-major). Block: 32 x 8 threads;
// blockIdx.x walks the rows (m, up to 2^31 - 1: gridDim.x allows that many), blockIdx.y the columns.
__global__ void transpose_kernel(int64_t rows, int64_t cols, const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ float tile[kTile][kTile + 1];  // +1: the column reads hit 32 different banks
  const int64_t r0 = int64_t(blockIdx.x) * kTile, c0 = int64_t(blockIdx.y) * kTile;
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && c < cols) dst[c * rows + r] = tile[threadIdx.x][i];
  }
}
}  // namespace

void transpose_scales(int64_t rows, int64_t cols, const float* src, float* dst, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const int64_t gx = (rows + kTile - 1) / kTile, gy = (cols + kTile - 1) / kTile;
  if (gy > 65535) detail::unsupported("cublas", "more than 65535 * 32 blocks of 128 along k in the block scales");
  transpose_kernel<<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), dim3(kTile, 8), 0, stream>>>(
      rows, cols, src, dst);
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemm::cublas
