// Rung 2, sequential: sequential addressing, `if (tid < s) sdata[tid] += sdata[tid + s]` for
// s = 128, 64, ..., 1 (article 002's tree): the active threads are the first s, so whole warps
// are either all active or all idle (divergence only inside the last warp, s < 32), no `%`, and a
// warp's 8-byte accesses are contiguous (no bank conflicts beyond the two wavefronts of 256 bytes).
// As in rung 1: 256 threads, one element each, one partial per block, the same kernel again over
// the partials until one value remains; plain sums in the accumulator type.
//
// Bounded by: still the tree and the barriers, not memory. Each thread loads one element, so per
// element the block pays 8 steps of `__syncthreads`, and half the threads are idle from the first
// step on (after the loads they only wait). Too few loads in flight per thread to cover DRAM
// latency with 8 resident blocks per SM. Rung 3 gives each thread 8 elements before the tree.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::sequential {

namespace {

constexpr int kThreads = 256;  // = elements per block (power of two)

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    sequential_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  __shared__ Acc sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t chunk = chunk0 + blockIdx.x;
  const int64_t i = chunk * kThreads + tid;
  sdata[tid] = i < n ? static_cast<Acc>(in[i]) : Acc(0);
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
        in, a.n, out, a.stream, [](int64_t) { return int64_t{kThreads}; },
        [&](auto src, int64_t count, Acc* dst, unsigned grid, int64_t chunk0) {
          sequential_kernel<detail::elem_t<decltype(src)>, Acc>
              <<<grid, kThreads, 0, a.stream>>>(src, count, dst, chunk0);
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::sequential
