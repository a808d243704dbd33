// The epilogue of the reduce-scatter rungs: C = alpha * P + beta * C with one rounding, P being
// the sum of the ranks' partial products (fp32; bf16 for rung 5), or the sum of `parts` partials
// `part_stride` elements apart (fp32 for rung 4, bf16 for rung 6), added in order in fp32 (the
// copy-engine rungs, whose copy engines move the partials and do not add).
#include "dist/dist_rung.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace rungs::dist::detail {

namespace {

template <typename T>
__device__ float to_float(T v);
template <>
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ float to_float(__half v) { return __half2float(v); }
template <typename T>
__device__ T from_float(float v);
template <>
__device__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __half from_float(float v) { return __float2half_rn(v); }

// One thread per element of a row chunk; grid.y walks rows (grid-stride past 65535).
__device__ float to_float(float v) { return v; }

template <typename P_t, typename T>
__global__ void scale_into_kernel(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha,
                                  const P_t* __restrict__ P, int64_t ldp, float beta, T* __restrict__ C, int64_t ldc) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    float sum = to_float(P[i * ldp + j]);
    for (int q = 1; q < parts; ++q) sum += to_float(P[q * part_stride + i * ldp + j]);
    float v = alpha * sum;
    if (beta != 0.0f) v += beta * to_float(C[i * ldc + j]);
    C[i * ldc + j] = from_float<T>(v);
  }
}

template <typename P_t, typename T>
void launch(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const P_t* P, int64_t ldp,
            float beta, T* C, int64_t ldc, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                  static_cast<unsigned>(rows < 65535 ? rows : 65535));
  scale_into_kernel<P_t, T><<<grid, kThreads, 0, stream>>>(rows, cols, parts, part_stride, alpha, P, ldp, beta, C, ldc);
  RUNGS_LAUNCHED();
}

}  // namespace

void scale_into(int64_t rows, int64_t cols, float alpha, const float* P, int64_t ldp, float beta, __nv_bfloat16* C,
                int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, 1, 0, alpha, P, ldp, beta, C, ldc, stream);
}
void scale_into(int64_t rows, int64_t cols, float alpha, const float* P, int64_t ldp, float beta, __half* C,
                int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, 1, 0, alpha, P, ldp, beta, C, ldc, stream);
}

void scale_into(int64_t rows, int64_t cols, float alpha, const __nv_bfloat16* P, int64_t ldp, float beta,
                __nv_bfloat16* C, int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, 1, 0, alpha, P, ldp, beta, C, ldc, stream);
}

void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const float* P, int64_t ldp,
              float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, parts, part_stride, alpha, P, ldp, beta, C, ldc, stream);
}
void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const float* P, int64_t ldp,
              float beta, __half* C, int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, parts, part_stride, alpha, P, ldp, beta, C, ldc, stream);
}
void sum_into(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const __nv_bfloat16* P,
              int64_t ldp, float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream) {
  launch(rows, cols, parts, part_stride, alpha, P, ldp, beta, C, ldc, stream);
}

}  // namespace rungs::dist::detail
