// Device helpers shared by the SGEMM rungs (one copy, never pasted into a rung):
// operand addressing for both transposes, guarded tile loads with a float4 fast path,
// cp.async wrappers, and the alpha/beta epilogue with BLAS beta == 0 semantics.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

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

// --- Guarded scalar tile load (rungs 03-05; any rung's fallback). ---
// Copies the R x C tile of op(X) whose corner is (r0, c0) into shared memory: element (i, j) goes to
// s[i * SR + j * SC]; elements outside the rows x cols operand are written as 0 and never read from X.
// NT threads share the copy (this thread is tid), R * C / NT elements each. Consecutive tids walk the
// direction that is contiguous in storage (along columns of op(X) when !trans, along rows when
// trans), so a warp's global reads coalesce for both transposes. SR / SC (padding, or a transposed
// layout) are the caller's, chosen against bank conflicts on these stores and on its own reads.
// trans may be a runtime value or a template constant of the caller (then the choice folds away).
template <int R, int C, int NT, int SR, int SC>
__device__ __forceinline__ void load_tile_guarded(float* __restrict__ s, const float* __restrict__ p, int64_t ld,
                                                  bool trans, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                                                  int tid) {
  static_assert((R * C) % NT == 0, "every thread copies the same number of elements");
#pragma unroll
  for (int it = 0; it < R * C / NT; ++it) {
    const int e = tid + it * NT;
    const int i = trans ? e % R : e / C;
    const int j = trans ? e / R : e % C;
    const int64_t r = r0 + i, c = c0 + j;
    float v = 0.0f;
    if (r < rows && c < cols) v = op_at(p, ld, trans, r, c);
    s[i * SR + j * SC] = v;
  }
}

// Four consecutive stored elements p[off .. off+3] of one stored row: one 128-bit load when vec
// (the caller has checked float4_ok and that off is a multiple of 4), the row is inside
// (row_ok) and all four are (rem >= 4, rem = elements left in the row from off); otherwise
// guarded scalar loads, zero where outside. Nothing outside the matrix is read.
__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ p, int64_t off, bool vec, bool row_ok,
                                                int64_t rem) {
  if (vec && row_ok && rem >= 4) return *reinterpret_cast<const float4*>(p + off);
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (row_ok) {
    if (rem > 0) v.x = p[off];
    if (rem > 1) v.y = p[off + 1];
    if (rem > 2) v.z = p[off + 2];
    if (rem > 3) v.w = p[off + 3];
  }
  return v;
}

// --- k-slab load with a float4 fast path (rungs 06, 07). ---
// Copies the BK x BX k-slab of one operand into shared memory laid out k-major, s: [BK][BX]:
// s[kk * BX + x] = element (x0 + x, k0 + kk) of the operand seen as X x K, where x is its non-k index
// (m for op(A), n for op(B)); elements outside X x K are 0. s must be 16-byte aligned.
//   X_CONTIG  (A^T stored k x m, B stored k x n): element at p[kk * ld + x]; float4 runs along x and
//             goes to shared memory as it is (one 128-bit store).
//   !X_CONTIG (A stored m x k, B^T stored n x k): element at p[x * ld + kk]; float4 runs along k and
//             is stored transposed (four scalar stores down the slab).
// So for A pass X_CONTIG = TA, for B pass X_CONTIG = !TB. vec = float4_ok(p, ld) from the host; with
// x0, k0 multiples of 4 every float4 is then aligned. A float4 wholly inside the operand is one
// 128-bit load, any other (vec false, or one that crosses the ragged edge) four guarded scalars.
template <int BK, int BX, int NT, bool X_CONTIG>
__device__ __forceinline__ void load_kslab_vec4(float* __restrict__ s, const float* __restrict__ p, int64_t ld,
                                                bool vec, int64_t x0, int64_t k0, int64_t X, int64_t K, int tid) {
  static_assert(BK % 4 == 0 && BX % 4 == 0, "float4 runs must tile the slab");
  constexpr int kVecs = BK * BX / 4;
  static_assert(kVecs % NT == 0, "every thread copies the same number of float4");
#pragma unroll
  for (int it = 0; it < kVecs / NT; ++it) {
    const int f = tid + it * NT;
    if constexpr (X_CONTIG) {
      const int kk = f / (BX / 4), x = (f % (BX / 4)) * 4;
      const int64_t gk = k0 + kk, gx = x0 + x;
      const float4 v = load4_guarded(p, gk * ld + gx, vec, gk < K, X - gx);
      *reinterpret_cast<float4*>(s + kk * BX + x) = v;
    } else {
      const int x = f / (BK / 4), kk = (f % (BK / 4)) * 4;
      const int64_t gx = x0 + x, gk = k0 + kk;
      const float4 v = load4_guarded(p, gx * ld + gk, vec, gx < X, K - gk);
      s[(kk + 0) * BX + x] = v.x;
      s[(kk + 1) * BX + x] = v.y;
      s[(kk + 2) * BX + x] = v.z;
      s[(kk + 3) * BX + x] = v.w;
    }
  }
}

// --- Thread placement of the 256-thread, 16 x 16 thread-tile blocks (rungs 05-07). ---
// Thread (row, col) of the 16 x 16 grid; each warp covers 4 thread rows x 8 thread columns
// (warp w: rows 4 * (w / 2) .., columns 8 * (w % 2) ..). With 4-wide column chunks (see
// store_acc_tile) a warp's scalar reads of a k-major B slab hit 8 addresses 4 floats apart (32
// distinct banks) and its reads of a k-major A slab 4 addresses 8 floats apart (distinct banks);
// for float4 reads each quarter-warp (8 lanes) shares one A address and reads 128 contiguous bytes of B.
struct ThreadRC {
  int row, col;
};
__device__ __forceinline__ ThreadRC thread_rc_16x16_warp4x8(int tid) {
  const int w = tid / 32, lane = tid % 32;
  return {(w / 2) * 4 + lane / 8, (w % 2) * 8 + lane % 8};
}

// --- Guarded epilogue of one thread's accumulator tile (rungs 04-07). ---
// acc[i][j] goes to C[r0 + i, c0 + (j / CW) * CSTRIDE + j % CW] (columns in chunks of CW, chunk
// starts CSTRIDE apart) through epilogue_store, only where inside m x n.
template <int TM, int TN, int CW, int CSTRIDE>
__device__ __forceinline__ void store_acc_tile(float* __restrict__ C, int64_t ldc, int64_t m, int64_t n, int64_t r0,
                                               int64_t c0, const float (&acc)[TM][TN], float alpha, float beta) {
  static_assert(TN % CW == 0, "whole column chunks");
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t r = r0 + i;
    if (r >= m) break;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int64_t c = c0 + (j / CW) * CSTRIDE + j % CW;
      if (c < n) epilogue_store(C, ldc, r, c, acc[i][j], alpha, beta);
    }
  }
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

// Host: calls f(std::bool_constant<ta == T>{}, std::bool_constant<tb == T>{}), so a rung instantiates
// its kernel once per transpose pair:
//   dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) { k<decltype(ta)::value, decltype(tb)::value><<<...>>>(...); });
template <class F>
void dispatch_trans(Trans ta, Trans tb, F&& f) {
  using NN = std::bool_constant<false>;
  using TT = std::bool_constant<true>;
  if (ta == Trans::N) {
    if (tb == Trans::N) f(NN{}, NN{}); else f(NN{}, TT{});
  } else {
    if (tb == Trans::N) f(TT{}, NN{}); else f(TT{}, TT{});
  }
}
}  // namespace rungs::detail
