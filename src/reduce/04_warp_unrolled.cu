// Rung 4, warp_unrolled: rung 3 with the last 32 lanes taken out of the barriers: the block tree
// runs with __syncthreads only while s > 32 (s = 128, 64), then warp 0 alone adds the last 64
// values in 6 steps (+32, +16, ..., +1) synchronized by __syncwarp: 2 block barriers after the
// first instead of rung 3's 8 (article 002's kReduceWholeWarpSingle, "5 fewer syncs").
//
// Warp-synchronous done correctly. The article's version (and the classic one) writes
// `mem[tid] += mem[tid + 16]; mem[tid] += mem[tid + 8]; ...` with no synchronization, relying on
// the 32 lanes executing in lockstep; in the article `volatile` is even commented out, so the
// compiler may keep mem[tid] in a register and read stale neighbours. Even with volatile it is a
// data race: lane L reads mem[L + s] while lane L + s writes it in the same statement. Before
// Volta the lockstep made that work; since Volta (independent thread scheduling) lanes of a warp
// may run apart, and the result can be wrong. Here each step reads the partner into a register,
// then __syncwarp, then writes, then __syncwarp: every write is ordered after the reads of the
// same location and before the next step's reads (__syncwarp is also a memory fence among the
// participating lanes, so no volatile is needed). All 32 lanes run every step (reads stay inside
// sdata[0, 64)); only lane 0's value matters. Race-free under compute-sanitizer racecheck.
//
// Bounded by: the loads, which are still scalar (8 x 256 load instructions per block), and the
// block-per-chunk shape (a block launches, loads 2048 elements, reduces and retires); the tree's
// loop still tests s at run time. Rung 5 unrolls it completely with the block size known at compile time.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::warp_unrolled {

namespace {

constexpr int kThreads = 256;                  // power of two, >= 64
constexpr int kPerThread = 8;                  // elements a thread adds before the tree
constexpr int kChunk = kThreads * kPerThread;  // elements per block
static_assert(kThreads >= 64 && (kThreads & (kThreads - 1)) == 0, "the last warp reads sdata[0, 64)");

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    warp_unrolled_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  __shared__ Acc sdata[kThreads];
  const int tid = threadIdx.x;
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
  sdata[tid] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {  // warp 0, whole: sdata[0, 64) holds the 64 values left
    Acc v = sdata[tid] + sdata[tid + 32];
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
      __syncwarp();  // the previous reads of sdata[tid] by lane tid - 2s are done
      sdata[tid] = v;
      __syncwarp();  // the write is visible to lane tid - s
      v += sdata[tid + s];
    }
    if (tid == 0) partials[chunk] = v;
  }
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using Acc = detail::plain_t<detail::elem_t<decltype(in)>>;
    detail::multi_pass(
        in, a.n, out, a.stream, [](int64_t) { return int64_t{kChunk}; },
        [&](auto src, int64_t count, Acc* dst, unsigned grid, int64_t chunk0) {
          warp_unrolled_kernel<detail::elem_t<decltype(src)>, Acc>
              <<<grid, kThreads, 0, a.stream>>>(src, count, dst, chunk0);
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::warp_unrolled
