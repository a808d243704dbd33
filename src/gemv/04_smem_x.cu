// Rung 4, smem_x: rung 2 with x staged through shared memory in tiles of the block size (article 000,
// algorithm 4). The article's version assumed n a multiple of the block size; here the last tile is
// padded with zeros (and A is not read past the edge), so any m and n work.
// Trans::N: a 256-thread block = 8 warps = 8 rows. The block loads the next 256 elements of x into
// shared memory (one coalesced load per thread, any incx), then each warp runs its row over the tile
// (lane l: tile elements l, l + 32, ...; consecutive lanes hit consecutive banks), shuffle sum at the end.
// x is read from global memory once per 8 rows instead of once per row.
// Trans::T: a thread per column, 256 columns per block; the block stages 256 entries of x and every
// thread walks 256 rows of its column against them (one shared address per warp: a broadcast).
// Bounded by: the same 32-bit loads as rung 2, plus two __syncthreads per tile that stall the warps
// waiting for the slowest one's loads; for T, out_len threads only.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::smem_x {

namespace {

namespace g = detail::gemv;

constexpr int kThreads = 256;  // also the x tile length
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads)
    row_warp_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                    const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  __shared__ float xs[kThreads];
  const int tid = threadIdx.x, lane = tid % 32;
  // r0 is the same for the whole block: every thread reaches every __syncthreads.
  for (int64_t r0 = blockIdx.x * static_cast<int64_t>(kWarps); r0 < m;
       r0 += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t r = r0 + tid / 32;
    const bool row_ok = r < m;
    const float* a = A + (row_ok ? r : 0) * lda;
    float acc = 0.0f;
    for (int64_t j0 = 0; j0 < n; j0 += kThreads) {
      const int64_t j = j0 + tid;
      xs[tid] = j < n ? x[j * incx] : 0.0f;
      __syncthreads();
      if (row_ok) {
        const int len = static_cast<int>(n - j0 < kThreads ? n - j0 : kThreads);
        for (int t = lane; t < len; t += 32) acc = fmaf(a[j0 + t], xs[t], acc);
      }
      __syncthreads();  // the next tile overwrites xs
    }
    acc = g::warp_sum(acc);
    if (row_ok && lane == 0) g::store_y(y, r, incy, acc, alpha, beta);
  }
}

__global__ void __launch_bounds__(kThreads)
    col_thread_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                      const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  __shared__ float xs[kThreads];
  const int tid = threadIdx.x;
  for (int64_t c0 = blockIdx.x * static_cast<int64_t>(kThreads); c0 < n;
       c0 += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t c = c0 + tid;
    const bool col_ok = c < n;
    const float* a = A + (col_ok ? c : 0);
    float acc = 0.0f;
    for (int64_t i0 = 0; i0 < m; i0 += kThreads) {
      const int64_t i = i0 + tid;
      xs[tid] = i < m ? x[i * incx] : 0.0f;
      __syncthreads();
      if (col_ok) {
        const int len = static_cast<int>(m - i0 < kThreads ? m - i0 : kThreads);
        const float* p = a + i0 * lda;
        for (int t = 0; t < len; ++t) acc = fmaf(p[t * lda], xs[t], acc);
      }
      __syncthreads();
    }
    if (col_ok) g::store_y(y, c, incy, acc, alpha, beta);
  }
}

}  // namespace

void run(const Args& a) {
  if (a.trans == Trans::N) {
    const int64_t want = g::ceil_div(a.m, kWarps);  // <= 2^28 blocks
    row_warp_kernel<<<static_cast<unsigned>(want), kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x,
                                                                             a.incx, a.beta, a.y, a.incy);
  } else {
    const int64_t want = g::ceil_div(a.n, kThreads);
    col_thread_kernel<<<static_cast<unsigned>(want), kThreads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x,
                                                                               a.incx, a.beta, a.y, a.incy);
  }
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv::smem_x
