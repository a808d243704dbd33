// The epilogue of the reduce-scatter rungs: C = alpha * P + beta * C with one rounding, P being
// the sum of the ranks' partial products (fp32; bf16 for rung 5), or the sum of `parts` partials
// `part_stride` elements apart (fp32 for rung 4, bf16 for rung 6), added in order in fp32 (the
// copy-engine rungs, whose copy engines move the partials and do not add).
#include "dist/dist_rung.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

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

// Eight consecutive elements per thread where every row starts on a 16-byte boundary: 16-byte
// loads and stores, an eighth of the blocks (fewer SMs taken from the products beside it).
constexpr int kVec = 8;
template <typename P_t>
__device__ void load8(const P_t* p, float (&v)[kVec]);
template <>
__device__ void load8(const float* p, float (&v)[kVec]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
template <typename T>
__device__ void load8(const T* p, float (&v)[kVec]) {  // 16-bit
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
  for (int e = 0; e < kVec; ++e) v[e] = to_float(h[e]);
}

template <typename P_t, typename T>
__global__ void scale_into_vec_kernel(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha,
                                      const P_t* __restrict__ P, int64_t ldp, float beta, T* __restrict__ C,
                                      int64_t ldc) {
  const int64_t j = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  if (j >= cols) return;
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    float sum[kVec], v[kVec];
    load8(P + i * ldp + j, sum);
    for (int q = 1; q < parts; ++q) {
      load8(P + q * part_stride + i * ldp + j, v);
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum[e] += v[e];
    }
    if (beta != 0.0f) load8(C + i * ldc + j, v);
    uint4 out;
    T* o = reinterpret_cast<T*>(&out);
#pragma unroll
    for (int e = 0; e < kVec; ++e) o[e] = from_float<T>(beta != 0.0f ? alpha * sum[e] + beta * v[e] : alpha * sum[e]);
    *reinterpret_cast<uint4*>(C + i * ldc + j) = out;
  }
}

template <typename P_t, typename T>
void launch(int64_t rows, int64_t cols, int parts, int64_t part_stride, float alpha, const P_t* P, int64_t ldp,
            float beta, T* C, int64_t ldc, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  constexpr int kThreads = 256;
  const unsigned grid_y = static_cast<unsigned>(rows < 65535 ? rows : 65535);
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec = cols % kVec == 0 && ldp % kVec == 0 && ldc % kVec == 0 && (parts == 1 || part_stride % kVec == 0) &&
                   aligned(P) && aligned(C);
  if (vec) {
    const dim3 grid(static_cast<unsigned>((cols / kVec + kThreads - 1) / kThreads), grid_y);
    scale_into_vec_kernel<P_t, T><<<grid, kThreads, 0, stream>>>(rows, cols, parts, part_stride, alpha, P, ldp, beta,
                                                                 C, ldc);
  } else {
    const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads), grid_y);
    scale_into_kernel<P_t, T><<<grid, kThreads, 0, stream>>>(rows, cols, parts, part_stride, alpha, P, ldp, beta, C,
                                                             ldc);
  }
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
