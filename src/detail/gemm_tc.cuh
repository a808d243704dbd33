// Device helpers shared by the tensor-core gemm rungs (12 wmma, 13 mma_sync, ...), written once:
// element conversions for the three storage types, tf32 rounding and the 3xTF32 split, the
// alpha/beta epilogue store in the storage type, ldmatrix and mma.sync wrappers.
#pragma once

#include "detail/gemm_tile.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace rungs::detail {

// Storage type <-> fp32.
__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// fp32 -> tf32, round to nearest (ties away), kept in a 32-bit float with the low 13 bits zero.
__device__ __forceinline__ float to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#else
  return x;
#endif
}
// The 3xTF32 split: x = big + small + O(2^-22 |x|), both parts tf32.
__device__ __forceinline__ void split_tf32(float x, float& big, float& small) {
  big = to_tf32(x);
  small = to_tf32(x - big);
}

// C[r, c] = alpha * acc + beta * C[r, c] in the storage type; beta == 0: C is not read.
template <typename T>
__device__ __forceinline__ void store_c(T* __restrict__ C, int64_t ldc, int64_t r, int64_t c, float acc, float alpha,
                                        float beta) {
  T* p = C + r * ldc + c;
  const float v = beta == 0.0f ? alpha * acc : alpha * acc + beta * to_f32(*p);
  *p = from_f32<T>(v);
}

// Two neighbours C[r, c], C[r, c + 1] (c + 1 < n is the caller's business unless `two` is false);
// vec: one 2-element store is legal (C + r * ldc + c aligned to 2 elements).
template <typename T>
__device__ __forceinline__ void store_c_pair(T* __restrict__ C, int64_t ldc, int64_t r, int64_t c, float v0, float v1,
                                             float alpha, float beta, bool two, bool vec) {
  if (!two) {
    store_c(C, ldc, r, c, v0, alpha, beta);
    return;
  }
  if (!vec) {
    store_c(C, ldc, r, c, v0, alpha, beta);
    store_c(C, ldc, r, c + 1, v1, alpha, beta);
    return;
  }
  T* p = C + r * ldc + c;
  float o0 = alpha * v0, o1 = alpha * v1;
  if (beta != 0.0f) o0 += beta * to_f32(p[0]), o1 += beta * to_f32(p[1]);
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<float2*>(p) = make_float2(o0, o1);
  } else if constexpr (std::is_same_v<T, __half>) {
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(o0, o1);
  } else {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(o0, o1);
  }
}

// Element (r, c) of op(X), X stored row-major with stride ld (TRANS: op(X) = X^T), as fp32;
// zero outside rows x cols of op(X).
template <typename T>
__device__ __forceinline__ float load_op_guarded(const T* __restrict__ p, int64_t ld, bool trans, int64_t r,
                                                 int64_t c, int64_t rows, int64_t cols) {
  if (r >= rows || c >= cols) return 0.0f;
  return to_f32(trans ? p[c * ld + r] : p[r * ld + c]);
}

// --- ldmatrix / mma.sync (sm_80+) ---
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// Four 8x8 b16 matrices; lane l gives the row address of matrix l / 8.
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
#else
  (void)addr;
  r[0] = r[1] = r[2] = r[3] = 0;
  __trap();
#endif
}

// d += a (16x16, row) * b (16x8, col), fp32 accumulators; T = __half or __nv_bfloat16.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __half>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d; (void)a; (void)b;
  __trap();
#endif
}

}  // namespace rungs::detail
