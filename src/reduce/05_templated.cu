// Rung 5, templated: rung 4 fully unrolled with the block size a template parameter (article 002's
// final version, UnrollAllReduce<iblocksize>): every step of the tree is `if constexpr (BS >= 2s)`,
// so the loop, its counter and the tests of s vanish and the steps that cannot occur for this BS
// are not compiled at all; the last warp is unrolled too (with __syncwarp between steps, as in
// rung 4). Each thread first adds 8 elements (rung 3). The block size is picked per pass from
// {512, 256, 128, 64}: the largest whose chunk of 8 * BS elements the pass fills, so the big first
// pass gets 512 threads (the article's best) and the small passes over partials smaller blocks.
// n = 2^24: 4096 partials -> 1 (two launches).
//
// Bounded by: the loads. They are scalar: per 16-byte vector's worth of data, 2-4 load
// instructions, address arithmetic and adds per element, and 8 loads per thread before the block
// reduces and retires: each block pays launch, tree (a few hundred cycles) and drain once per
// 8 * BS elements, with no loads in flight meanwhile. Rung 6 drops shared memory from the tree.
#include "detail/reduce_kernels.cuh"

namespace rungs::reduce::templated {

namespace {

constexpr int kPerThread = 8;  // elements a thread adds before the tree

template <int BS, typename T, typename Acc>
__global__ void __launch_bounds__(BS)
    templated_kernel(const T* __restrict__ in, int64_t n, Acc* __restrict__ partials, int64_t chunk0) {
  static_assert(BS >= 64 && BS <= 1024 && (BS & (BS - 1)) == 0, "a power of two, at least two warps");
  constexpr int kChunk = BS * kPerThread;
  __shared__ Acc sdata[BS];
  const int tid = threadIdx.x;
  const int64_t chunk = chunk0 + blockIdx.x;
  const int64_t base = chunk * kChunk + tid;
  Acc sum = Acc(0);
  if ((chunk + 1) * kChunk <= n) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) sum += static_cast<Acc>(in[base + k * BS]);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      if (base + k * BS < n) sum += static_cast<Acc>(in[base + k * BS]);
    }
  }
  // sum stays in a register beside its sdata copy: a thread re-reads only its partner's slot.
  sdata[tid] = sum;
  __syncthreads();
  if constexpr (BS >= 1024) {
    if (tid < 512) sdata[tid] = sum = sum + sdata[tid + 512];
    __syncthreads();
  }
  if constexpr (BS >= 512) {
    if (tid < 256) sdata[tid] = sum = sum + sdata[tid + 256];
    __syncthreads();
  }
  if constexpr (BS >= 256) {
    if (tid < 128) sdata[tid] = sum = sum + sdata[tid + 128];
    __syncthreads();
  }
  if constexpr (BS >= 128) {
    if (tid < 64) sdata[tid] = sum = sum + sdata[tid + 64];
    __syncthreads();
  }
  if (tid < 32) {  // warp 0: sdata[0, 64) holds the 64 values left; sum == sdata[tid]
    sum += sdata[tid + 32];
    __syncwarp();
    sdata[tid] = sum;
    __syncwarp();
    sum += sdata[tid + 16];
    __syncwarp();
    sdata[tid] = sum;
    __syncwarp();
    sum += sdata[tid + 8];
    __syncwarp();
    sdata[tid] = sum;
    __syncwarp();
    sum += sdata[tid + 4];
    __syncwarp();
    sdata[tid] = sum;
    __syncwarp();
    sum += sdata[tid + 2];
    __syncwarp();
    sdata[tid] = sum;
    __syncwarp();
    sum += sdata[tid + 1];
    if (tid == 0) partials[chunk] = sum;
  }
}

// The block size for a pass over count elements: the largest that a full chunk fits, at least 64.
int block_for(int64_t count) {
  for (int bs : {512, 256, 128})
    if (count >= int64_t{bs} * kPerThread) return bs;
  return 64;
}

}  // namespace

void run(const Args& a) {
  detail::dispatch_sum(a, [&](auto in, auto out) {
    using Acc = detail::plain_t<detail::elem_t<decltype(in)>>;
    detail::multi_pass(
        in, a.n, out, a.stream, [](int64_t count) { return int64_t{block_for(count)} * kPerThread; },
        [&](auto src, int64_t count, Acc* dst, unsigned grid, int64_t chunk0) {
          using S = detail::elem_t<decltype(src)>;
          switch (block_for(count)) {
            case 512: templated_kernel<512, S, Acc><<<grid, 512, 0, a.stream>>>(src, count, dst, chunk0); break;
            case 256: templated_kernel<256, S, Acc><<<grid, 256, 0, a.stream>>>(src, count, dst, chunk0); break;
            case 128: templated_kernel<128, S, Acc><<<grid, 128, 0, a.stream>>>(src, count, dst, chunk0); break;
            default: templated_kernel<64, S, Acc><<<grid, 64, 0, a.stream>>>(src, count, dst, chunk0); break;
          }
          RUNGS_LAUNCHED();
        });
  });
}

}  // namespace rungs::reduce::templated
