// Device helpers shared by the SGEMM rungs (one copy, never pasted into a rung):
// operand addressing for both transposes, guarded tile loads with a float4 fast path,
// cp.async wrappers, and the alpha/beta epilogue with BLAS beta == 0 semantics.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>

namespace rungs::detail {

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Element (r, c) of op(X) where X is stored row-major with stride ld.
// TRANS = false: op(X) = X, element at p[r * ld + c]; TRANS = true: op(X) = X^T, at p[c * ld + r].
template <bool TRANS>
__device__ __forceinline__ float op_at(const float* __restrict__ p, int64_t ld, int64_t r, int64_t c) {
  return TRANS ? p[c * ld + r] : p[r * ld + c];
}

// Runtime-transpose flavour for the simplest rungs.
__device__ __forceinline__ float op_at(const float* __restrict__ p, int64_t ld, bool trans, int64_t r, int64_t c) {
  return trans ? p[c * ld + r] : p[r * ld + c];
}

// True when float4 loads along stored rows are legal: 16-byte aligned base and ld % 4 == 0.
inline bool float4_ok(const void* p, int64_t ld) {
  return (reinterpret_cast<uintptr_t>(p) % 16 == 0) && (ld % 4 == 0);
}

// C[r, c] = alpha * acc + beta * C[r, c]; with beta == 0, C is not read (NaN in C must not leak).
__device__ __forceinline__ void epilogue_store(float* __restrict__ C, int64_t ldc, int64_t r, int64_t c, float acc,
                                               float alpha, float beta) {
  float* p = C + r * ldc + c;
  *p = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * *p;
}

// --- cp.async (sm_80+): global -> shared without staging through registers. ---
// 16-byte copy; src_bytes < 16 zero-fills the rest (src_bytes == 0 reads nothing).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes = 16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#else
  (void)smem; (void)gmem; (void)src_bytes;
  __trap();
#endif
}
// 4-byte copy (ca: the only size below 16 that cp.async allows with .cg is none, so use .ca).
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes = 4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#else
  (void)smem; (void)gmem; (void)src_bytes;
  __trap();
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
// Wait until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace rungs::detail

namespace rungs::detail {
// Host: a 1D grid of tiles_m * tiles_n blocks (block b covers tile (b / tiles_n, b % tiles_n)).
// Throws Unsupported if the tile count exceeds what one launch can address.
dim3 tile_grid(int64_t tiles_m, int64_t tiles_n, const char* rung);
// Host: turn a launch error into rungs::Error.
void check_launch(const char* rung);
}  // namespace rungs::detail
