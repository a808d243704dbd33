// Device helpers shared by the SGEMV rungs (one copy, never pasted into a rung): the alpha/beta
// epilogue with BLAS beta == 0 semantics, warp and sub-warp shuffle sums, the host-side float4
// fast-path tests, and the per-thread dot-product loops that rungs 06 (multi_row) and 07 (split_k)
// both run (07 over a slice of the dot product, 06 over all of it).
// Everything lives in rungs::detail::gemv so no name can clash with the SGEMM helpers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace rungs::detail::gemv {

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- Host: when 128-bit loads are legal. ---
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }
// Every row of A starts on a 16-byte boundary: A aligned and lda % 4 == 0.
inline bool vec_a(const float* A, int64_t lda) { return aligned16(A) && lda % 4 == 0; }
// x can be read as float4 along its length: aligned and unit stride.
inline bool vec_x(const float* x, int64_t incx) { return aligned16(x) && incx == 1; }

// --- Epilogue. ---
// y[o * incy] = alpha * dot + beta * y[o * incy]; with beta == 0, y is not read (NaN in y must not leak).
__device__ __forceinline__ void store_y(float* __restrict__ y, int64_t o, int64_t incy, float dot, float alpha,
                                        float beta) {
  float* p = y + o * incy;
  *p = (beta == 0.0f) ? alpha * dot : alpha * dot + beta * *p;
}

// --- Shuffle sums (fixed butterfly order: deterministic). All 32 lanes must call them. ---
// Sum over each aligned group of G lanes (G a power of two <= 32); every lane of the group gets it.
template <int G>
__device__ __forceinline__ float group_sum(float v) {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G: a power of two up to 32");
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
__device__ __forceinline__ float warp_sum(float v) { return group_sum<32>(v); }

// Sum over the lanes that share lane % L (L a power of two <= 32): the lanes L, 2L, ... apart.
template <int L>
__device__ __forceinline__ float4 sum_across_rows(float4 v) {
#pragma unroll
  for (int off = L; off < 32; off *= 2) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, off);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, off);
    v.z += __shfl_xor_sync(0xffffffffu, v.z, off);
    v.w += __shfl_xor_sync(0xffffffffu, v.w, off);
  }
  return v;
}

__device__ __forceinline__ void fma4(float4& acc, const float4 a, const float4 b) {
  acc.x = fmaf(a.x, b.x, acc.x);
  acc.y = fmaf(a.y, b.y, acc.y);
  acc.z = fmaf(a.z, b.z, acc.z);
  acc.w = fmaf(a.w, b.w, acc.w);
}
__device__ __forceinline__ void fma4(float4& acc, const float4 a, const float s) {
  acc.x = fmaf(a.x, s, acc.x);
  acc.y = fmaf(a.y, s, acc.y);
  acc.z = fmaf(a.z, s, acc.z);
  acc.w = fmaf(a.w, s, acc.w);
}
__device__ __forceinline__ float hsum(const float4 v) { return (v.x + v.y) + (v.z + v.w); }

// x[4q .. 4q+3] (elements of x, stride incx): one 128-bit load when VX (x aligned, incx == 1).
template <bool VX>
__device__ __forceinline__ float4 load_x4(const float* __restrict__ x, int64_t incx, int64_t q) {
  if constexpr (VX) {
    return reinterpret_cast<const float4*>(x)[q];
  } else {
    const float* p = x + 4 * q * incx;
    return make_float4(p[0], p[incx], p[2 * incx], p[3 * incx]);
  }
}

// Every loop below runs whole batches of U independent loads (all issued before the first use),
// then at most one guarded batch for what is left, its loads predicated but still all in flight
// together: a lane with 6 loads left and U = 8 waits for one round trip, not 6.

// --- Trans::N: one row's dot product, spread over a group of G lanes. ---
// Float4 path: a = the row (16-byte aligned), float4 indices q in [q0, q1); lane g of the group takes
// q0 + g, q0 + g + G, ...; U float4 of A (and U of x) are loaded before any is used. The caller adds
// the row's scalar tail (n % 4 elements) itself.
template <int G, int U, bool VX>
__device__ __forceinline__ float row_dot_vec(const float* __restrict__ a, const float* __restrict__ x, int64_t incx,
                                             int64_t q0, int64_t q1, int g) {
  const float4* a4 = reinterpret_cast<const float4*>(a);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  int64_t q = q0 + g;
#pragma unroll 1
  for (; q + (U - 1) * G < q1; q += U * G) {
    float4 av[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) av[u] = a4[q + u * G];
#pragma unroll
    for (int u = 0; u < U; ++u) xv[u] = load_x4<VX>(x, incx, q + u * G);
#pragma unroll
    for (int u = 0; u < U; ++u) fma4(acc, av[u], xv[u]);
  }
  if (q < q1) {
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 av[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      av[u] = xv[u] = zero;
      if (q + u * G < q1) {
        av[u] = a4[q + u * G];
        xv[u] = load_x4<VX>(x, incx, q + u * G);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) fma4(acc, av[u], xv[u]);
  }
  return hsum(acc);
}

// Scalar path (any alignment, any lda, any incx): elements j in [j0, j1), lane g takes j0 + g, + G, ...
// with U independent loads of A in flight.
template <int G, int U>
__device__ __forceinline__ float row_dot_scalar(const float* __restrict__ a, const float* __restrict__ x,
                                                int64_t incx, int64_t j0, int64_t j1, int g) {
  float acc[U] = {};
  int64_t j = j0 + g;
#pragma unroll 1
  for (; j + (U - 1) * G < j1; j += U * G) {
    float av[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) av[u] = a[j + u * G];
#pragma unroll
    for (int u = 0; u < U; ++u) xv[u] = x[(j + u * G) * incx];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = fmaf(av[u], xv[u], acc[u]);
  }
  if (j < j1) {
    float av[U], xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      av[u] = xv[u] = 0.0f;
      if (j + u * G < j1) {
        av[u] = a[j + u * G];
        xv[u] = x[(j + u * G) * incx];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = fmaf(av[u], xv[u], acc[u]);
  }
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < U; ++u) s += acc[u];
  return s;
}

// --- Trans::T: four consecutive columns col .. col+3, summed over rows i0, i0 + step, ... < i1. ---
// The walk shared by both paths: U rows loaded (load(row pointer) -> float4) before any is used,
// then a guarded last batch.
template <int U, typename Load>
__device__ __forceinline__ float4 col_dot(const float* __restrict__ A, int64_t lda, int64_t col, int64_t i0,
                                          int64_t i1, int64_t step, const float* __restrict__ x, int64_t incx,
                                          Load load) {
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const int64_t stride = step * lda, xstride = step * incx;
  const float* p = A + i0 * lda + col;
  const float* xp = x + i0 * incx;
  int64_t i = i0;
#pragma unroll 1
  for (; i + (U - 1) * step < i1; i += U * step, p += U * stride, xp += U * xstride) {
    float4 av[U];
    float xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) av[u] = load(p + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) xv[u] = xp[u * xstride];
#pragma unroll
    for (int u = 0; u < U; ++u) fma4(acc, av[u], xv[u]);
  }
  if (i < i1) {
    float4 av[U];
    float xv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      av[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      xv[u] = 0.0f;
      if (i + u * step < i1) {
        av[u] = load(p + u * stride);
        xv[u] = xp[u * xstride];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) fma4(acc, av[u], xv[u]);
  }
  return acc;
}

// Float4 path: A's rows 16-byte aligned, col % 4 == 0 and col + 3 < n (a whole group).
template <int U>
__device__ __forceinline__ float4 col_dot_vec(const float* __restrict__ A, int64_t lda, int64_t col, int64_t i0,
                                              int64_t i1, int64_t step, const float* __restrict__ x, int64_t incx) {
  return col_dot<U>(A, lda, col, i0, i1, step, x, incx,
                    [](const float* r) { return *reinterpret_cast<const float4*>(r); });
}

// Scalar path: columns col .. col + cols - 1 (cols = 1..4 are inside; the others give 0), any
// alignment and lda. U rows in flight.
template <int U>
__device__ __forceinline__ float4 col_dot_scalar(const float* __restrict__ A, int64_t lda, int64_t col, int cols,
                                                 int64_t i0, int64_t i1, int64_t step, const float* __restrict__ x,
                                                 int64_t incx) {
  return col_dot<U>(A, lda, col, i0, i1, step, x, incx, [cols](const float* r) {
    return make_float4(r[0], cols > 1 ? r[1] : 0.0f, cols > 2 ? r[2] : 0.0f, cols > 3 ? r[3] : 0.0f);
  });
}

}  // namespace rungs::detail::gemv
