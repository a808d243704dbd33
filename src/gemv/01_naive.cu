// Rung 1, naive: one thread per output element, walking its whole dot product (article 000,
// algorithm 1).
// Trans::N: thread i walks row i of A. At each step the 32 lanes of a warp read 32 different rows,
// lda * 4 bytes apart: every load instruction touches 32 sectors to use 4 bytes of each (the
// article's point). L1 keeps some of those lines for the next steps, but with up to 64 warps per SM
// each holding 32 rows in flight it thrashes, so most of each 32-byte sector is fetched again.
// Trans::T: thread j walks column j down the rows. At each step the lanes read 32 consecutive floats
// of one row (one 128-byte line) and all read the same x[i] (a broadcast): coalesced by nature, this
// is already rung 2's access pattern.
// Bounded by: for N, bytes over bandwidth with the traffic multiplied by the wasted sectors; for both,
// one dependent-free but unvectorized load per step per thread and only out_len threads: with few
// outputs (m or n in the thousands) most of the 132 SMs sit idle.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::naive {

namespace {

namespace g = detail::gemv;

constexpr int kThreads = 256;

template <bool TRANS>
__global__ void __launch_bounds__(kThreads)
    naive_kernel(int64_t out_len, int64_t dot_len, float alpha, const float* __restrict__ A, int64_t lda,
                 const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < out_len;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    if constexpr (!TRANS) {
      const float* a = A + o * lda;  // row o: consecutive lanes are lda apart
      for (int64_t j = 0; j < dot_len; ++j) acc = fmaf(a[j], x[j * incx], acc);
    } else {
      const float* a = A + o;  // column o: consecutive lanes are adjacent
      for (int64_t i = 0; i < dot_len; ++i) acc = fmaf(a[i * lda], x[i * incx], acc);
    }
    g::store_y(y, o, incy, acc, alpha, beta);
  }
}

}  // namespace

void run(const Args& a) {
  const int64_t out_len = a.out_len();
  const int64_t want = g::ceil_div(out_len, kThreads);  // <= 2^23: fits gridDim.x
  const unsigned blocks = static_cast<unsigned>(want);
  if (a.trans == Trans::N)
    naive_kernel<false><<<blocks, kThreads, 0, a.stream>>>(out_len, a.dot_len(), a.alpha, a.A, a.lda, a.x, a.incx,
                                                           a.beta, a.y, a.incy);
  else
    naive_kernel<true><<<blocks, kThreads, 0, a.stream>>>(out_len, a.dot_len(), a.alpha, a.A, a.lda, a.x, a.incx,
                                                          a.beta, a.y, a.incy);
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv::naive
