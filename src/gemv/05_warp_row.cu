// Rung 5, warp_row: 128-bit loads with several in flight per lane, shuffle sums.
// Trans::N: a warp per row (8 rows per 256-thread block). Fast path (A 16-byte aligned, lda % 4 == 0,
// x 16-byte aligned, incx == 1): lane l reads float4 l, l + 32, ... of the row and of x, U = 4 of each
// issued before the first FMA (the register cap of __launch_bounds__(256, 4) makes ptxas keep them
// together), so a warp has 4 x 512 bytes of A in flight; the row's last n % 4 elements are scalar.
// Otherwise the same walk with 32-bit loads (4 in flight per lane).
// Trans::T: lane l of every warp owns columns c0 + 4l .. c0 + 4l + 3 of a 128-column block, one
// float4 of each row (a warp reads a 512-byte row segment); the block's 8 warps take rows w, w + 8, ...,
// 4 rows in flight per lane, and the 8 partial sums of each column meet in shared memory, summed in
// warp order. Fast path: A aligned and lda % 4 == 0 (x is read as a scalar per row, a broadcast);
// otherwise, and for the last partial group of 4 columns, guarded 32-bit loads.
// Bounded by: N: fine for long rows (4096^2 in 26 us on an H100 with a clean L2, cuBLAS 30), but a row
// shorter than 128 elements leaves lanes idle (2^20 x 64: 270 us, 1.0 TB/s). T: only ceil(n / 128)
// blocks: n = 4096 runs 32 blocks on 132 SMs (71 us, a third of the bandwidth), n = 64 one block.
// Rung 6 packs short rows several per warp and sizes the T grid to fill the GPU.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::warp_row {

namespace {

namespace g = detail::gemv;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kUnroll = 4;              // loads in flight per lane
constexpr int kCols = 32 * 4;           // Trans::T: columns per block
// At least 4 resident blocks, so <= 64 registers. Left free, ptxas keeps registers low by issuing each
// load just before its FMA (2 or 3 in flight, whatever the unroll); capped, it issues the whole batch
// first.
constexpr int kMinBlocks = 4;

template <bool VEC>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    row_warp_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                    const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32; r < m; r += warps) {
    const float* a = A + r * lda;
    float acc;
    if constexpr (VEC) {
      const int64_t n4 = n / 4;
      acc = g::row_dot_vec<32, kUnroll, true>(a, x, 1, 0, n4, lane);
      const int64_t j = 4 * n4 + lane;  // the last n % 4 elements
      if (j < n) acc = fmaf(a[j], x[j], acc);
    } else {
      acc = g::row_dot_scalar<32, kUnroll>(a, x, incx, 0, n, lane);
    }
    acc = g::warp_sum(acc);
    if (lane == 0) g::store_y(y, r, incy, acc, alpha, beta);
  }
}

template <bool VEC>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    col_block_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                     const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  __shared__ __align__(16) float part[kWarps][kCols];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int64_t c0 = blockIdx.x * static_cast<int64_t>(kCols);
  const int64_t col = c0 + 4 * lane;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (col < n) {
    const int64_t left = n - col;
    if (VEC && left >= 4)
      acc = g::col_dot_vec<kUnroll>(A, lda, col, warp, m, kWarps, x, incx);
    else
      acc = g::col_dot_scalar<VEC ? 1 : kUnroll>(A, lda, col, left < 4 ? static_cast<int>(left) : 4, warp, m, kWarps,
                                                   x, incx);
  }
  *reinterpret_cast<float4*>(&part[warp][4 * lane]) = acc;
  __syncthreads();
  if (tid < kCols && c0 + tid < n) {
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += part[w][tid];  // fixed order: deterministic
    g::store_y(y, c0 + tid, incy, s, alpha, beta);
  }
}

}  // namespace

void run(const Args& a) {
  if (a.trans == Trans::N) {
    const unsigned blocks = static_cast<unsigned>(g::ceil_div(a.m, kWarps));  // <= 2^28
    if (g::vec_a(a.A, a.lda) && g::vec_x(a.x, a.incx))
      row_warp_kernel<true><<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta,
                                                               a.y, a.incy);
    else
      row_warp_kernel<false><<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta,
                                                                a.y, a.incy);
  } else {
    const unsigned blocks = static_cast<unsigned>(g::ceil_div(a.n, kCols));  // <= 2^24
    if (g::vec_a(a.A, a.lda))
      col_block_kernel<true><<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta,
                                                                a.y, a.incy);
    else
      col_block_kernel<false><<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta,
                                                                 a.y, a.incy);
  }
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv::warp_row
