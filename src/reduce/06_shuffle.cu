// Rung 6, shuffle: warp-shuffle reductions instead of a shared-memory tree. After rung 3's 8 loads
// per thread, each warp sums its 32 values in registers with __shfl_down_sync (5 steps, offsets
// 16..1; 64-bit values shuffle as long/double: detail::warp_sum), lane 0 of each of the 8 warps
// writes one value to shared memory, one __syncthreads, and warp 0 shuffles those 8 into the
// block's partial. One barrier per block instead of rung 5's four plus the __syncwarp chain, and
// 8 shared slots instead of 256. The same kernel again over the partials until one value remains
// (256 threads, 2048 elements per block: n = 2^24 -> 8192 -> 4 -> 1).
//
// Bounded by: memory access shape, no longer the reduction. Loads are scalar (a warp load moves
// 128 or 256 bytes; 16-byte vector loads move 512), each thread has 8 loads in flight and then
// its block retires, so the SM keeps refilling blocks (launch, 8 loads, a short tree, drain) and
// the DRAM pipe sees gaps at every block turnover; at large n the grid has thousands of blocks
// plus extra launches for the partial passes. Rung 7 uses 128-bit loads and a resident grid that
// strides over the array.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::shuffle {

namespace {

constexpr int kThreads = 256;                  // whole warps
constexpr int kWarps = kThreads / 32;          // <= 32: warp 0 holds one warp sum per lane
constexpr int kPerThread = 8;                  // elements a thread adds first
constexpr int kChunk = kThreads * kPerThread;  // elements per block
static_assert(kThreads % 32 == 0 && kWarps <= 32, "whole warps, at most 32");

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    shuffle_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  __shared__ Acc warp_sums[kWarps];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int64_t chunk = chunk0 + blockIdx.x;
  const int64_t base = chunk * kChunk + tid;
  Acc sum = Acc(0);
  if ((chunk + 1) * kChunk <= n) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) sum += static_cast<Acc>(in[base + k * kThreads]);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      if (base + k * kThreads < n) sum += static_cast<Acc>(in[base + k * kThreads]);
    }
  }
  sum = detail::warp_sum(sum);  // registers only: lane 0 holds the warp's sum
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < kWarps ? warp_sums[lane] : Acc(0);
    sum = detail::warp_sum(sum);
    if (lane == 0) partials[chunk] = sum;
  }
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using Acc = detail::plain_t<detail::elem_t<decltype(in)>>;
    detail::multi_pass(
        in, a.n, out, a.stream, [](int64_t) { return int64_t{kChunk}; },
        [&](auto src, int64_t count, Acc* dst, unsigned grid, int64_t chunk0) {
          shuffle_kernel<detail::elem_t<decltype(src)>, Acc><<<grid, kThreads, 0, a.stream>>>(src, count, dst, chunk0);
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::shuffle
