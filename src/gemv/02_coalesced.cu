// Rung 2, coalesced: the lanes of a warp read consecutive addresses of A (article 000, algorithm 2,
// without its host-side transpose: A is never copied).
// Trans::N: a warp per row. Lane l reads elements l, l + 32, ... of the row, so each load instruction
// of the warp is one 128-byte line; the 32 lane sums meet in a shuffle butterfly. 8 warps (8 rows)
// per 256-thread block, blocks striding over the rows.
// Trans::T: one thread per column, as in rung 1: lanes j .. j+31 read one line of row i and share
// x[i]. That pattern is already coalesced, so T is rung 1's kernel, kept here so the rung is whole.
// Bounded by: 32-bit loads, one per lane per loop step (a few in flight only where the compiler
// unrolls), so too few bytes in flight per SM to cover DRAM latency; for T, out_len threads only.
// Rung 5 adds 128-bit loads and explicit loads in flight.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::coalesced {

namespace {

namespace g = detail::gemv;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// y = alpha A x + beta y: warp w of the grid takes rows w, w + (warps in the grid), ...
__global__ void __launch_bounds__(kThreads)
    row_warp_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                    const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32; r < m; r += warps) {
    const float* a = A + r * lda;
    float acc = 0.0f;
    for (int64_t j = lane; j < n; j += 32) acc = fmaf(a[j], x[j * incx], acc);
    acc = g::warp_sum(acc);  // r is the same for the whole warp: all 32 lanes are here
    if (lane == 0) g::store_y(y, r, incy, acc, alpha, beta);
  }
}

// y = alpha A^T x + beta y: thread per column.
__global__ void __launch_bounds__(kThreads)
    col_thread_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                      const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; c < n;
       c += static_cast<int64_t>(gridDim.x) * kThreads) {
    const float* a = A + c;
    float acc = 0.0f;
    for (int64_t i = 0; i < m; ++i) acc = fmaf(a[i * lda], x[i * incx], acc);
    g::store_y(y, c, incy, acc, alpha, beta);
  }
}

}  // namespace

void run(const Args& a) {
  if (a.trans == Trans::N) {
    const int64_t want = g::ceil_div(a.m, kWarps);  // <= 2^28 blocks: fits gridDim.x
    row_warp_kernel<<<static_cast<unsigned>(want), kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x,
                                                                             a.incx, a.beta, a.y, a.incy);
  } else {
    const int64_t want = g::ceil_div(a.n, kThreads);
    col_thread_kernel<<<static_cast<unsigned>(want), kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x,
                                                                               a.incx, a.beta, a.y, a.incy);
  }
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv::coalesced
