// Rung 7, vectorized: 128-bit loads and a resident grid. The array is split into a scalar head
// (up to the first 16-byte boundary: `in` may be misaligned, e.g. in + 1), 16-byte vectors (int4,
// longlong2, float4, double2: 4 int32 / 2 int64 / 4 float / 2 double per load) and a scalar tail.
// The grid is sized once from the device: sm_count() x kBlocksPerSm blocks of kThreads (all
// resident at once), fewer when n is small, and it strides over the vectors: per iteration a
// thread issues kUnroll independent 16-byte loads (vectors gtid + u * G*kThreads, each coalesced
// across the grid) before adding any of them, so kUnroll x 16 B per thread (64 KiB per SM) are in
// flight. Whole iterations cover every thread equally; the remaining < kUnroll * G*kThreads
// vectors take one more, guarded iteration (at most kUnroll extra vectors per thread).
// Each block then sums its threads (shuffles, detail::block_sum) into one partial, and a second,
// one-block launch (detail::final_pass_kernel) sums the G partials into *out.
// Plain sums in the input's type for floats (float / double), uint64 for integers.
//
// Bounded by: DRAM bandwidth for large n (the loop is a few instructions per 16 bytes); what is
// left is fixed cost: the second launch (a few microseconds at the end of a ~45 us sum of 128 MiB)
// and the partials' round trip through memory. Rung 8 folds the final pass into the same launch
// and makes the float sums accurate.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::vectorized {

namespace {

constexpr int kThreads = 256;     // per block (whole warps)
constexpr int kBlocksPerSm = 4;   // resident blocks per SM (with kThreads: 1024 threads, <= 64 registers)
constexpr int kUnroll = 4;        // independent 16-byte loads per thread per iteration
constexpr int kFinalThreads = 256;

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    vectorized_kernel(const T* __restrict__ in, detail::VecSplit sp, Acc* __restrict__ partials) {
  using V = typename detail::Vec<T>::type;
  constexpr int N = detail::Vec<T>::N;
  __shared__ Acc warp_part[kThreads / 32];
  const V* __restrict__ vin = reinterpret_cast<const V*>(in + sp.head);  // 16-byte aligned
  const int64_t gtid = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * kThreads;  // vectors between a thread's loads
  const int64_t step = stride * kUnroll;                  // vectors per grid iteration
  const int64_t full = sp.nvec / step;                    // iterations every thread does whole
  Acc sum = Acc(0);
  for (int64_t it = 0; it < full; ++it) {
    const V* p = vin + it * step + gtid;
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(p + u * stride);  // all loads before any add
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += detail::vec_to_acc<Acc, T>(v[u]);
  }
  // The < step vectors left: at most kUnroll per thread, at the same offsets as in a whole
  // iteration; guarded, and again all loads before any add (a loop here would serialize them).
  {
    const int64_t i0 = full * step + gtid;
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i0 + u * stride < sp.nvec) v[u] = __ldg(vin + i0 + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i0 + u * stride < sp.nvec) sum += detail::vec_to_acc<Acc, T>(v[u]);
    }
  }
  if (gtid < sp.head) sum += static_cast<Acc>(in[gtid]);                       // head < N <= 4 threads
  if (gtid < sp.tail) sum += static_cast<Acc>(in[sp.head + sp.nvec * N + gtid]);  // tail < N
  sum = detail::block_sum<kThreads>(sum, warp_part);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using T = detail::elem_t<decltype(in)>;
    using Acc = detail::plain_t<T>;
    const detail::VecSplit sp = detail::vec_split(in, a.n);
    // Resident blocks, or fewer: one whole iteration's worth of vectors per block at least.
    const int64_t max_grid = int64_t{detail::sm_count()} * kBlocksPerSm;
    const int64_t want = detail::div_up(sp.nvec, int64_t{kThreads} * kUnroll);
    const int grid = static_cast<int>(std::clamp<int64_t>(want, 1, max_grid));
    detail::Scratch partials(static_cast<size_t>(grid) * sizeof(Acc), a.stream);
    vectorized_kernel<T, Acc><<<grid, kThreads, 0, a.stream>>>(in, sp, partials.as<Acc>());
    RUNGS_LAUNCHED();
    detail::final_pass_kernel<kFinalThreads, Acc, Acc>
        <<<1, kFinalThreads, 0, a.stream>>>(partials.as<Acc>(), grid, out);
    RUNGS_LAUNCHED();
  });
}

}  // namespace rungs::reduce::vectorized
