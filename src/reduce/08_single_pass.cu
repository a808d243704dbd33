// Rung 8, single_pass: one launch, the last block combines the partials; accurate, reproducible
// float sums. The blocks stream the array as in rung 7 (scalar head to 16-byte alignment, 128-bit
// loads, a resident grid striding over the vectors, kUnroll independent loads per thread in
// flight; here one block of 1024 threads per SM, the shape that measured fastest, see below) and
// each writes its partial to scratch. Then thread 0 of each block fences (__threadfence: the
// partial is visible device-wide before the ticket) and takes a ticket from an atomic counter;
// the block that draws the last ticket fences again (the acquire side), passes that on to its
// threads with __syncthreads, and sums all G partials in a FIXED order (thread t merges partials
// t, t + 1024, ... then a fixed shuffle tree), reading through L2 (ld.global.cg), and writes *out.
// No second launch, no floating-point atomics. The counter lives in the call's Scratch, zeroed by
// its one cudaMemsetAsync (the scratch is fresh each call, so it must be zeroed; 16 + G * 16 bytes).
//
// Reproducible: G depends only on the SM count, n and the 16-byte alignment of `in` (the head
// length), each thread's elements and their merge order depend only on (G, n, head), and the
// partials are combined by index, not by arrival: the same device, n and alignment give the same
// bits run to run, whatever the block scheduling.
//
// Accumulators (what `auto` runs for floats must meet 1 ulp + 2^-40 S (f32) / 2^-69 S (f64),
// S = sum|x|):
//  * int32/int64: uint64, exact modulo 2^64 (int32 exact).
//  * f32: every element converted to double (exact), all adds in double, one rounding to float
//    at the end. Chains are bounded: per loop iteration a thread merges its kUnroll x 4 floats
//    pairwise (depth 4); iterations add into a chain accumulator that is restarted every
//    kChainIters = 256 iterations (<= 4096 floats), the chains add into the thread's total. So the
//    depth of any element's path through the whole sum tree is
//      D <= 4 + 256 + ceil(it / 256) + 1 (remainder) + 2 (head/tail) + 10 (block) + ceil(G / 1024) + 10,
//    it = n / (16 G 1024) iterations per thread. H100 (G = 132): n = 2^28 -> it = 124, D ~ 150;
//    n = 2^35 (128 GiB) -> it ~ 2^14, D ~ 350. Even a 16-SM device at n = 2^35 gives D < 800.
//    A double sum of depth D errs by <= D 2^-53 S < 2^-43 S (D < 2^10); rounding the double
//    result s' to float costs <= 1/2 ulp(s') <= 1 ulp of the exact sum (ulp doubles at most once
//    when s' crosses a power of two). Total <= 1 ulp + 2^-43 S: inside the bound.
//  * f64: double-double (detail::DD): every addition of the high parts is a TwoSum, so
//    hi + (exact sum of all TwoSum errors) == exact sum, and the errors are summed plainly in c.
//    Each |error| <= u |node sum|, u = 2^-53, and summing the node sums over the tree counts
//    every element at most D times: sum|errors| <= D u S (1 + O(u)); adding them plainly over a
//    tree of depth <= 2D costs <= 2D u sum|errors| <= 2 D^2 u^2 S; the final hi + c rounds once
//    (<= 1 ulp with the above). D as for f32, with 8 doubles per iteration (depth 3) instead of
//    16 floats: on H100 D ~ 45 at n = 2^24, ~ 300 at n = 2^31; < 800 on any device for any n that
//    fits in memory: 2 D^2 u^2 S < 2^-85 S, far inside 2^-69 S.
//    Inf/NaN: TwoSum with an infinite operand gives a NaN error term, so when hi is not finite
//    the result is hi alone (hi is exactly the plain IEEE sum, whose NaN/Inf rules are the API's).
//
// Cost: f32 adds one F2F and one DADD per element, f64 about 8 double adds per element (TwoSum 6
// + 2 for the error terms): at DRAM speed (~1.8 doubles or ~3.6 floats per clock per SM) that is
// ~15 of the SM's 64 DADD per clock, so the loop stays memory-bound.
//
// Block shape (measured, scripts/experiments/reduce_sweep/reduce_sweep.cu, docs/reduce.md): with the same
// threads per SM and loads in flight, 1 block of 1024 threads per SM beat rung 7's 4 x 256 by
// 0.5-2% at 2^24 and 2^28 elements for f32, f64 and i32 (and was the only shape at or above CUB
// for all of them); 8 loads per thread cost f32 7-9% (16 floats widened to doubles at once), and
// more blocks than fit at once (2-4 waves over the grid-stride loop) lost 1-30%.
//
// Bounded by: DRAM bandwidth, plus fixed costs: the counter's memset (a tiny node on the stream
// before the kernel), the last block's combine (G = 132 partials from L2, < 1 us) and the tail of
// the grid-stride loop.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::single_pass {

namespace {

constexpr int kThreads = 1024;    // per block (whole warps)
constexpr int kBlocksPerSm = 1;   // resident blocks per SM (1024 threads, <= 64 registers)
constexpr int kUnroll = 4;        // independent 16-byte loads per thread per iteration
constexpr int kChainIters = 256;  // iterations per chain accumulator (f32: 4096 floats)
constexpr size_t kCounterBytes = 16;  // the ticket counter, then the partials (16-byte aligned)

// The accumulator of the accurate sum: integers uint64, float -> double, double -> double-double.
template <typename T> struct AccurateOf { using type = uint64_t; };
template <> struct AccurateOf<float> { using type = double; };
template <> struct AccurateOf<double> { using type = detail::DD; };
template <typename T> using accurate_t = typename AccurateOf<T>::type;

template <typename T, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    single_pass_kernel(const T* __restrict__ in, detail::VecSplit sp, Acc* partials, unsigned* counter,
                       Out* __restrict__ out) {
  using V = typename detail::Vec<T>::type;
  constexpr int N = detail::Vec<T>::N;
  __shared__ Acc warp_part[kThreads / 32];
  __shared__ bool is_last;
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + sp.head);  // 16-byte aligned
  const int64_t gtid = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * kThreads;  // vectors between a thread's loads
  const int64_t step = stride * kUnroll;                  // vectors per grid iteration
  const int64_t full = sp.nvec / step;                    // iterations every thread does whole

  Acc total = detail::acc_zero<Acc>();
  for (int64_t it0 = 0; it0 < full; it0 += kChainIters) {  // chains of <= kChainIters iterations
    const int64_t it1 = it0 + kChainIters < full ? it0 + kChainIters : full;
    Acc chain = detail::acc_zero<Acc>();
    for (int64_t it = it0; it < it1; ++it) {
      const V* p = vin + it * step + gtid;
      V v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(p + u * stride);  // all loads before any add
      Acc a[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) a[u] = detail::vec_to_acc<Acc, T>(v[u]);
      chain = detail::merge(chain, detail::merge_tree(a));
    }
    total = detail::merge(total, chain);
  }
  // The < step vectors left: at most kUnroll per thread, at the same offsets as in a whole
  // iteration; guarded, all loads before any add (a loop here would serialize their latencies).
  {
    const int64_t i0 = full * step + gtid;
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i0 + u * stride < sp.nvec) v[u] = __ldg(vin + i0 + u * stride);
    }
    Acc a[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      a[u] = i0 + u * stride < sp.nvec ? detail::vec_to_acc<Acc, T>(v[u]) : detail::acc_zero<Acc>();
    total = detail::merge(total, detail::merge_tree(a));
  }
  if (gtid < sp.head) total = detail::merge(total, detail::acc_from<Acc>(in[gtid]));  // head < N
  if (gtid < sp.tail) total = detail::merge(total, detail::acc_from<Acc>(in[sp.head + sp.nvec * N + gtid]));

  total = detail::block_sum<kThreads>(total, warp_part);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
    __threadfence();  // the partial is visible to every block before this block's ticket is
    const unsigned ticket = atomicAdd(counter, 1u);
    is_last = ticket == gridDim.x - 1;
    // The last ticket saw every other block's (fence; atomic): fencing after it completes the
    // acquire, and the barrier below extends it to the block's other threads.
    if (is_last) __threadfence();
  }
  __syncthreads();  // is_last for all; also ends block_sum's use of warp_part
  if (!is_last) return;  // uniform over the block
  const Acc sum = detail::combine_partials<kThreads>(partials, static_cast<int>(gridDim.x), warp_part);
  if (threadIdx.x == 0) *out = detail::finish<Out>(sum);
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using T = detail::elem_t<decltype(in)>;
    using Out = detail::elem_t<decltype(out)>;
    using Acc = accurate_t<T>;
    const detail::VecSplit sp = detail::vec_split(in, a.n);
    // Resident blocks, or fewer: one whole iteration's worth of vectors per block at least.
    const int64_t max_grid = int64_t{detail::sm_count()} * kBlocksPerSm;
    const int64_t want = detail::div_up(sp.nvec, int64_t{kThreads} * kUnroll);
    const int grid = static_cast<int>(std::clamp<int64_t>(want, 1, max_grid));
    detail::Scratch scratch(kCounterBytes + static_cast<size_t>(grid) * sizeof(Acc), a.stream, /*zero=*/true);
    unsigned* counter = scratch.as<unsigned>();
    Acc* partials = reinterpret_cast<Acc*>(scratch.as<char>() + kCounterBytes);
    single_pass_kernel<T, Acc, Out><<<grid, kThreads, 0, a.stream>>>(in, sp, partials, counter, out);
    RUNGS_LAUNCHED();
  });
}

}  // namespace rungs::reduce::single_pass
