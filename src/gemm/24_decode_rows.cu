// Rung 24, decode_rows: the decode-shaped product C = A W^T (m = 1..128 rows of activations, W n x k
// as a Linear layer stores it, or k x n) on CUDA cores; f16 and bf16, any layout, ld and alignment.
// m > 128: rungs::Unsupported (a tiled rung is the tool there); float inputs are not taken.
// Adds over the tiled rungs (which pad m to a 64- or 128-row tile): gemv rung 6's design carrying up
// to 8 rows of A at once, so each element of W is read once per 8 rows. Its own kernel.
// W n x k (tb = T): a 256-thread block owns 32 rows of W, 4 per warp; each lane issues 16-byte loads
// of 8 k, 2 per row in flight (8 independent loads a lane per 512-k warp step). The block stages A,
// 1024 k at a time, in shared memory as fp32 (zero past m and k), laid out for conflict-free LDS.128;
// each W element meets up to 8 rows of A in registers (8 x 4 fp32 sums a lane), and a shuffle
// butterfly adds each (row, column) across the lanes in a fixed order (deterministic).
// W k x n (tb = N): a block owns 64 columns, 8 threads across them (a 16-byte load of 8 columns each)
// and 32 down k; the sums are added by shuffles, then in warp order through shared memory.
// Rows go in groups of R = 1, 2, 4 or 8; m > 8 loops over groups, re-reading the block's W from L2.
// A is staged by scalar loads (any lda, either transpose); W unaligned (base or ldb % 8) and the ragged
// end of k (T) or n (N) take guarded 2-byte loads: slower, the same result.
// Bounded by: DRAM bandwidth on W once n gives every SM two blocks; short n leaves SMs idle (rung 25
// splits k); m > 8 re-reads W from L2, m / 8 passes (12-13 TFLOP/s from m = 8, H100).
// Measured: 1.04x cuBLAS at 7168 x 8192, m = 1 (H200, 72 % of DRAM); 0.29x at m = 16.
#include "core/errors.hpp"
#include "detail/gemm_tc.cuh"
#include "detail/gemv_kernels.cuh"
#include "gemm/24_decode_rows.cuh"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace rungs::sgemm::decode_rows {

namespace {

using detail::gemv::ceil_div;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kCols = kBlockCols / kWarps;  // rows of W (columns of C) per warp
constexpr int kUnroll = 2;                  // 16-byte loads of each W row in flight per lane
constexpr int kStep = 32 * 8 * kUnroll;     // k covered by one warp step
constexpr int kMaxRows = 8;                 // rows of A carried at once
static_assert(kChunk % kStep == 0, "a staged chunk is whole warp steps");
static_assert(kMaxRows * kCols <= 32, "one lane stores each (row, column) result");
static_assert(kBlockCols % kWarps == 0, "whole warps of columns");

// Shared-memory slot of chunk element kk: element e of 8-element group g (group g = q * 32 + lane is
// lane `lane`'s in warp-step load q) lies in float4 (2q + e / 4) * 32 + lane, so each of a lane's two
// LDS.128 reads the warp's 512 consecutive bytes.
__device__ __forceinline__ int a_slot(int kk) {
  const int g = kk >> 3, e = kk & 7;
  const int q = g >> 5, l = g & 31;
  return (((q * 2 + (e >> 2)) * 32 + l) << 2) + (e & 3);
}

// 8 consecutive 16-bit elements from p; VEC: p is 16-byte aligned. CHECK: only `left` (> 0) of them are
// inside the slice, the rest read as +0.
template <bool VEC, bool CHECK, typename T>
__device__ __forceinline__ uint4 load8(const T* __restrict__ p, int left) {
  if (VEC && (!CHECK || left >= 8)) return __ldg(reinterpret_cast<const uint4*>(p));
  const unsigned short* s = reinterpret_cast<const unsigned short*>(p);
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t lo = (!CHECK || 2 * i < left) ? __ldg(s + 2 * i) : 0u;
    const uint32_t hi = (!CHECK || 2 * i + 1 < left) ? __ldg(s + 2 * i + 1) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <typename T>
__device__ __forceinline__ void unpack8(const uint4 v, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 t;
    if constexpr (std::is_same_v<T, __half>) {
      __half2 h;
      memcpy(&h, &w[i], 4);
      t = __half22float2(h);
    } else {
      __nv_bfloat162 h;
      memcpy(&h, &w[i], 4);
      t = __bfloat1622float2(h);
    }
    f[2 * i] = t.x, f[2 * i + 1] = t.y;
  }
}

// 8 elements of W (one per k of a lane's group q of the chunk) against R rows of A from shared memory.
template <typename T, int R>
__device__ __forceinline__ void fma_group(float (&acc)[R][kCols], const float (&As)[R][kChunk],
                                          const uint4 (&wv)[kCols], int q, int lane) {
  float wf[kCols][8];
#pragma unroll
  for (int c = 0; c < kCols; ++c) unpack8<T>(wv[c], wf[c]);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float4* a4 = reinterpret_cast<const float4*>(&As[r][0]);
    const float4 lo = a4[(2 * q) * 32 + lane], hi = a4[(2 * q + 1) * 32 + lane];
    const float av[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int c = 0; c < kCols; ++c)
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][c] = fmaf(av[e], wf[c][e], acc[r][c]);
  }
}

// One staged chunk of `len` k (CHECK: len < kChunk) from k offset kc, into acc. The fast path (VEC,
// whole chunk) issues kUnroll 16-byte loads per row of W before the first FMA; the others (guarded or
// 2-byte loads) take one group of 8 k at a time, which keeps their registers to the fast path's.
template <typename T, int R, bool VEC, bool CHECK>
__device__ __forceinline__ void chunk(float (&acc)[R][kCols], const float (&As)[R][kChunk],
                                      const T* const (&w)[kCols], const bool (&live)[kCols], int64_t kc, int len,
                                      int lane) {
  if constexpr (VEC && !CHECK) {
#pragma unroll 1
    for (int s = 0; s < kChunk / kStep; ++s) {
      uint4 wv[kUnroll][kCols];
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        const int kk = s * kStep + (j * 32 + lane) * 8;
#pragma unroll
        for (int c = 0; c < kCols; ++c)
          wv[j][c] = live[c] ? load8<true, false>(w[c] + kc + kk, 0) : make_uint4(0u, 0u, 0u, 0u);
      }
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) fma_group<T, R>(acc, As, wv[j], s * kUnroll + j, lane);
    }
  } else {
#pragma unroll 1
    for (int q = 0; q < kChunk / 256; ++q) {
      if (CHECK && q * 256 >= len) break;
      const int kk = (q * 32 + lane) * 8;
      uint4 wv[kCols];
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        wv[c] = (live[c] && (!CHECK || kk < len)) ? load8<VEC, CHECK>(w[c] + kc + kk, len - kk)
                                                  : make_uint4(0u, 0u, 0u, 0u);
      fma_group<T, R>(acc, As, wv, q, lane);
    }
  }
}

// Block (x, s): columns [32x, 32x + 32) over k in [s * slice, min(k, (s + 1) * slice)), every row of A.
// TA: A stored k x m. part: null -> C with the epilogue; else the slice's sums into part.
template <typename T, int R, bool TA, bool VEC>
__global__ void __launch_bounds__(kThreads, 2) decode_kernel(ArgsT<T> a, int64_t slice, float* __restrict__ part) {
  __shared__ __align__(16) float As[R][kChunk];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t m = a.m, n = a.n;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kBlockCols + warp * kCols;
  const int64_t kb = static_cast<int64_t>(blockIdx.y) * slice;
  const int64_t ke = kb + slice < a.k ? kb + slice : a.k;
  const T* w[kCols];
  bool live[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    live[c] = col0 + c < n;
    w[c] = a.B + (live[c] ? col0 + c : 0) * a.ldb;
  }
#pragma unroll 1
  for (int64_t r0 = 0; r0 < m; r0 += R) {
    float acc[R][kCols];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[r][c] = 0.0f;
#pragma unroll 1
    for (int64_t kc = kb; kc < ke; kc += kChunk) {
      const int len = static_cast<int>(ke - kc < kChunk ? ke - kc : kChunk);
      __syncthreads();  // the previous chunk's readers are done with As
#pragma unroll 1
      for (int r = 0; r < R; ++r) {
        const int64_t row = r0 + r;
#pragma unroll
        for (int kk = threadIdx.x; kk < kChunk; kk += kThreads) {
          float v = 0.0f;
          if (row < m && kk < len)
            v = detail::to_f32(TA ? a.A[(kc + kk) * a.lda + row] : a.A[row * a.lda + kc + kk]);
          As[r][a_slot(kk)] = v;
        }
      }
      __syncthreads();
      if (len == kChunk) chunk<T, R, VEC, false>(acc, As, w, live, kc, len, lane);
      else chunk<T, R, VEC, true>(acc, As, w, live, kc, len, lane);
    }
    // Every lane ends with every sum (butterfly); lane r * kCols + c keeps (row r, column c).
    float mine = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const float s = detail::gemv::warp_sum(acc[r][c]);
        if (lane == r * kCols + c) mine = s;
      }
    if (lane < R * kCols) {
      const int64_t row = r0 + lane / kCols, col = col0 + lane % kCols;
      if (row < m && col < n) {
        if (part) part[(static_cast<int64_t>(blockIdx.y) * m + row) * n + col] = mine;
        else detail::store_c(a.C, a.ldc, row, col, mine, a.alpha, a.beta);
      }
    }
  }
}

// --- W stored k x n (tb = Trans::N): rows of W run along n. ---
// A block owns 64 columns: 8 threads across them, 8 consecutive columns (one 16-byte load) each, and
// 32 threads down k (4 per warp, 8 warps), each with 4 rows of W in flight. A is staged row-interleaved
// (As[kk * R + r], so one k's R values are contiguous and broadcast to the 8 threads reading them); each
// thread keeps R x 8 sums, added over the 4 k threads of a warp by shuffles and over the 8 warps in warp
// order through shared memory (the staging buffer, reused).
constexpr int kNnColThreads = 8;
constexpr int kNnCols = kNnColThreads * 8;
constexpr int kNnKThreads = kThreads / kNnColThreads;
constexpr int kNnUnroll = 4;
static_assert(kNnColThreads == 8 && kNnKThreads == 32, "the shuffles below add lanes 8 and 16 apart");

template <typename T, int R, bool TA, bool VEC>
__global__ void __launch_bounds__(kThreads, 2) decode_nn_kernel(ArgsT<T> a, int64_t slice, float* __restrict__ part) {
  __shared__ __align__(16) float As[R * kChunk];
  static_assert(kWarps * R * kNnCols <= R * kChunk, "the warps' sums fit in the staging buffer");
  const int ct = threadIdx.x % kNnColThreads, kt = threadIdx.x / kNnColThreads;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t m = a.m, n = a.n;
  const int64_t cb = static_cast<int64_t>(blockIdx.x) * kNnCols;
  const int64_t col = cb + ct * 8;
  const int cols = col >= n ? 0 : n - col < 8 ? static_cast<int>(n - col) : 8;  // this thread's columns
  const int64_t kb = static_cast<int64_t>(blockIdx.y) * slice;
  const int64_t ke = kb + slice < a.k ? kb + slice : a.k;
#pragma unroll 1
  for (int64_t r0 = 0; r0 < m; r0 += R) {
    float acc[R][8];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][e] = 0.0f;
#pragma unroll 1
    for (int64_t kc = kb; kc < ke; kc += kChunk) {
      const int len = static_cast<int>(ke - kc < kChunk ? ke - kc : kChunk);
      __syncthreads();  // the previous chunk's (or row group's) readers are done with As
#pragma unroll 4
      for (int i = threadIdx.x; i < R * kChunk; i += kThreads) {
        const int r = i % R, kk = i / R;
        const int64_t row = r0 + r;
        float v = 0.0f;
        if (row < m && kk < len)
          v = detail::to_f32(TA ? a.A[(kc + kk) * a.lda + row] : a.A[row * a.lda + kc + kk]);
        As[i] = v;
      }
      __syncthreads();
      if (cols > 0) {
#pragma unroll 1
        for (int k0 = kt; k0 < len; k0 += kNnKThreads * kNnUnroll) {
          uint4 wv[kNnUnroll];
#pragma unroll
          for (int u = 0; u < kNnUnroll; ++u) {
            const int kk = k0 + u * kNnKThreads;
            wv[u] = kk < len ? load8<VEC, true>(a.B + (kc + kk) * a.ldb + col, cols) : make_uint4(0u, 0u, 0u, 0u);
          }
#pragma unroll
          for (int u = 0; u < kNnUnroll; ++u) {
            const int kk = k0 + u * kNnKThreads;
            if (kk < len) {
              float wf[8];
              unpack8<T>(wv[u], wf);
#pragma unroll
              for (int r = 0; r < R; ++r) {
                const float av = As[kk * R + r];
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[r][e] = fmaf(av, wf[e], acc[r][e]);
              }
            }
          }
        }
      }
    }
    __syncthreads();  // As is free: it now holds each warp's sums, red[warp][r][column of the block]
    float* red = As;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        float v = acc[r][e];
        v += __shfl_xor_sync(0xffffffffu, v, 8);
        v += __shfl_xor_sync(0xffffffffu, v, 16);
        if (lane < kNnColThreads) red[(warp * R + r) * kNnCols + lane * 8 + e] = v;
      }
    __syncthreads();
    for (int t = threadIdx.x; t < R * kNnCols; t += kThreads) {
      const int r = t / kNnCols, c = t % kNnCols;
      const int64_t row = r0 + r, oc = cb + c;
      if (row < m && oc < n) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) v += red[(w * R + r) * kNnCols + c];  // warp order: deterministic
        if (part) part[(static_cast<int64_t>(blockIdx.y) * m + row) * n + oc] = v;
        else detail::store_c(a.C, a.ldc, row, oc, v, a.alpha, a.beta);
      }
    }
  }
}

template <typename T, int R, bool TA>
void launch_rows(const ArgsT<T>& a, int S, int64_t slice, float* part, bool vec) {
  const dim3 grid(static_cast<unsigned>(column_blocks(a.tb, a.n)), static_cast<unsigned>(S));
  if (a.tb == Trans::T) {
    auto k = vec ? decode_kernel<T, R, TA, true> : decode_kernel<T, R, TA, false>;
    k<<<grid, kThreads, 0, a.stream>>>(a, slice, part);
  } else {
    auto k = vec ? decode_nn_kernel<T, R, TA, true> : decode_nn_kernel<T, R, TA, false>;
    k<<<grid, kThreads, 0, a.stream>>>(a, slice, part);
  }
}

template <typename T, bool TA>
void launch_ta(const ArgsT<T>& a, int S, int64_t slice, float* part, bool vec) {
  if (a.m >= 5) launch_rows<T, kMaxRows, TA>(a, S, slice, part, vec);
  else if (a.m >= 3) launch_rows<T, 4, TA>(a, S, slice, part, vec);
  else if (a.m == 2) launch_rows<T, 2, TA>(a, S, slice, part, vec);
  else launch_rows<T, 1, TA>(a, S, slice, part, vec);
}

}  // namespace

int64_t column_blocks(Trans tb, int64_t n) { return ceil_div(n, tb == Trans::T ? kBlockCols : kNnCols); }

template <typename T>
void check(const ArgsT<T>& a, const char* rung) {
  if (a.m > kMaxM)
    detail::unsupported(rung, "m = " + std::to_string(a.m) + " rows of A; the decode rungs take m <= " +
                                  std::to_string(kMaxM) + " (a tiled rung is the tool past that)");
}

template <typename T>
void launch(const ArgsT<T>& a, int S, int64_t slice, float* part) {
  // 16-byte loads of W: every stored row starts 16-byte aligned (T: slices start at multiples of kChunk;
  // N: a thread's 8 columns start at a multiple of 8).
  const bool vec = reinterpret_cast<uintptr_t>(a.B) % 16 == 0 && a.ldb % 8 == 0;
  if (a.ta == Trans::N) launch_ta<T, false>(a, S, slice, part, vec);
  else launch_ta<T, true>(a, S, slice, part, vec);
  detail::check_launch("decode_rows");
}

template void check<__half>(const ArgsH&, const char*);
template void check<__nv_bfloat16>(const ArgsBF&, const char*);
template void launch<__half>(const ArgsH&, int, int64_t, float*);
template void launch<__nv_bfloat16>(const ArgsBF&, int, int64_t, float*);

void run_f16(const ArgsH& a) {
  check(a, "decode_rows");
  launch(a, 1, a.k, nullptr);
}
void run_bf16(const ArgsBF& a) {
  check(a, "decode_rows");
  launch(a, 1, a.k, nullptr);
}

}  // namespace rungs::sgemm::decode_rows
