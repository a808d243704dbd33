// Rung 3, unroll8: each thread first adds 8 elements from global memory (in[base + k * 256] for
// k < 8, so each of the 8 loads is coalesced across the block), then rung 2's sequential tree over
// the 256 per-thread sums (article 002's kUnroll8ReduceSafe, 1.9x over its first version). A block
// now reduces 2048 elements; the same kernel again over the partials until one value remains
// (n = 2^24: 8192 -> 4 -> 1). Full chunks take an unguarded path whose 8 independent loads are
// all in flight before the first add; the last, partial chunk checks each index.
//
// Bounded by: the tree is amortized over 8x the elements, but it still takes 8 barrier steps, and
// in the last 5 (s <= 16) a single warp works while the block's other 7 warps wait at barriers.
// The loads are scalar (4 or 8 bytes per lane): 8 x 256 load instructions per 2048 elements, and
// every block retires after one chunk (block launch and drain once per 16 KiB of int64).
// Rung 4 takes the last warp out of the barriers.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::unroll8 {

namespace {

constexpr int kThreads = 256;                  // power of two
constexpr int kPerThread = 8;                  // elements a thread adds before the tree
constexpr int kChunk = kThreads * kPerThread;  // elements per block

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    unroll8_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  __shared__ Acc sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t chunk = chunk0 + blockIdx.x;
  const int64_t base = chunk * kChunk + tid;
  Acc sum = Acc(0);
  if ((chunk + 1) * kChunk <= n) {  // a full chunk: no checks, 8 loads in flight
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) sum += static_cast<Acc>(in[base + k * kThreads]);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      if (base + k * kThreads < n) sum += static_cast<Acc>(in[base + k * kThreads]);
    }
  }
  sdata[tid] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[chunk] = sdata[0];
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using Acc = detail::plain_t<detail::elem_t<decltype(in)>>;
    detail::multi_pass(
        in, a.n, out, a.stream, [](int64_t) { return int64_t{kChunk}; },
        [&](auto src, int64_t count, Acc* dst, unsigned grid, int64_t chunk0) {
          unroll8_kernel<detail::elem_t<decltype(src)>, Acc><<<grid, kThreads, 0, a.stream>>>(src, count, dst, chunk0);
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::unroll8
