// Rung 1, interleaved: one block reduces a chunk of 256 elements in shared memory by interleaved
// addressing, `if (tid % (2*s) == 0) sdata[tid] += sdata[tid + s]` for s = 1, 2, ..., 128 (the
// classic first version; article 002's first kernel halves the other way but shares its shape).
// Each thread loads one element (converted to the accumulator: int64 via uint64, float, double);
// the block writes one partial; the same kernel runs again over the partials until one value
// remains (n = 2^24: 65536 -> 256 -> 1, three launches). Plain sums in the accumulator type.
// Unlike the article, the input is only read: partials go to stream-ordered scratch.
//
// Bounded by: the tree, not memory. Each thread issues one load and then sits through 8 barrier
// steps in which the active threads are every 2s-th one: warps are divergent (in step s only
// 32/(2s) lanes of a warp work, yet every warp of the block still issues the step while any lane
// is active), the `%` is a slow integer modulo, and 8-byte sdata accesses at stride 2s collide in
// the banks. Rung 2 keeps the active threads contiguous.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::interleaved {

namespace {

constexpr int kThreads = 256;  // = elements per block (power of two)

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    interleaved_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  __shared__ Acc sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t chunk = chunk0 + blockIdx.x;
  const int64_t i = chunk * kThreads + tid;
  sdata[tid] = i < n ? static_cast<Acc>(in[i]) : Acc(0);
  __syncthreads();
  for (int s = 1; s < kThreads; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];  // tid + s < kThreads: tid is a multiple of 2s
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
          interleaved_kernel<detail::elem_t<decltype(src)>, Acc>
              <<<grid, kThreads, 0, a.stream>>>(src, count, dst, chunk0);
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::interleaved
