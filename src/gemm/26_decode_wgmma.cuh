// The decode family's shared pieces: the split sums' exchange through distributed shared memory and
// the choice of splits (the skeleton's SplitKOf, ws/split_k.cuh: rungs 26 and 32; rung 31's kernel), the shared
// memory a block may have beside others on its SM, the choice of wgmma's N from m, and rung 27's
// programmatic second launch.
#pragma once

#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/mma_stage.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"
#include "core/errors.hpp"

#include <algorithm>
#include <type_traits>

namespace rungs::sgemm::decode_wgmma {

constexpr int ROW = 128;  // bytes per shared-memory row: one swizzle row

// The dynamic shared memory a block may have with OCC blocks per SM: 227 KB alone (OCC = 1); two
// blocks share the SM's 228 KB, each with 1 KB the system reserves (rung 32: 113 KB).
template <int OCC>
constexpr int smem_budget() {
  return OCC == 1 ? 227 * 1024 : 228 * 1024 / OCC - 1024;
}
// Splits of at least 4 k tiles, at most 8 (a tile's splits are one cluster: 8 blocks at most, the
// portable size).
constexpr int MIN_KT_PER_SPLIT = 4;
constexpr int64_t MAX_SPLITS = 8;

// Split sums through a cluster (rungs 26 and 31): the splits of a tile are one cluster along z,
// cluster rank = split. Each block leaves its fp32 sums in its own shared memory, where its stages
// were (stash_sums), laid out [row of A - m0][row of W - n0] with ld sums_ld<BM>() (4 floats of
// padding per row against bank conflicts); after a cluster barrier, block z adds quads
// [q0, q1) of the tile (four consecutive rows of W, i.e. columns of C, each) over the cluster's
// blocks in split order (add_split_sums: the same order every run) and stores them with alpha and
// beta; a second cluster barrier keeps every block's shared memory alive until the others have
// read it. A thread's quads (at most U) are loaded together per split, so each split costs one
// remote latency.
template <int BM>
constexpr int sums_ld() {
  return BM + 4;
}
// One consumer warpgroup's m64 accumulator block d (rows row0 .. row0 + 63 of the block's W rows,
// N columns: rows of A) into sums. Accumulator element (r, c) of warp w, lane 4g + q, d[4j + e]:
// r = 16w + g + 8(e / 2), c = 8j + 2q + e % 2.
template <int N, int BM>
__device__ __forceinline__ void stash_sums(float* sums, const float (&d)[N / 2], int row0, int t) {
  const int w = t / 32, g = (t % 32) / 4, q = t % 4;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = row0 + 16 * w + g + 8 * (e / 2), c = 8 * j + 2 * q + e % 2;
      sums[c * sums_ld<BM>() + r] = d[4 * j + e];
    }
}
// Thread tid of NT (between the two cluster barriers): this block's slice of the tile, summed over
// the splits, stored into C (rows m0 .., columns n0 .., masked by m and n).
template <typename TC, int N, int BM, int NT>
__device__ __forceinline__ void add_split_sums(const float* sums, int tid, int split, int splits, TC* C, int64_t ldc,
                                               int n0, int m0, int n, int m, float alpha, float beta) {
  constexpr int LDS = sums_ld<BM>(), QUADS_PER_ROW = BM / 4, QUADS = N * QUADS_PER_ROW;
  constexpr int U = (QUADS / 2 + NT - 1) / NT;  // splits >= 2: at most half the quads
  const int q0 = QUADS * split / splits, q1 = QUADS * (split + 1) / splits;
  float4 acc[U];
  for (int s = 0; s < splits; ++s) {
    float4 v[U];
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const int qi = q0 + tid + i * NT;
      v[i] = qi < q1 ? detail::ld_shared_cluster_v4(sums + (qi / QUADS_PER_ROW) * LDS + (qi % QUADS_PER_ROW) * 4,
                                                     static_cast<uint32_t>(s))
                     : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int i = 0; i < U; ++i) {
      if (s == 0) acc[i] = v[i];
      else acc[i].x += v[i].x, acc[i].y += v[i].y, acc[i].z += v[i].z, acc[i].w += v[i].w;
    }
  }
#pragma unroll
  for (int i = 0; i < U; ++i) {
    const int qi = q0 + tid + i * NT;
    const int row = m0 + qi / QUADS_PER_ROW, col = n0 + (qi % QUADS_PER_ROW) * 4;
    if (qi >= q1 || row >= m) continue;
    const float v[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (col + e < n) detail::store_c(C, ldc, row, col + e, v[e], alpha, beta);
  }
}

// The k splits of `tiles` tiles (KT k tiles each) on `slots` blocks at once (rungs 26, 31, 32): 1
// where the tiles fill the slots, else as many whole splits as fit them, each at least
// MIN_KT_PER_SPLIT k tiles, at most MAX_SPLITS (one cluster).
inline int64_t split_count(int64_t tiles, int64_t KT, int64_t slots) {
  if (tiles >= slots) return 1;
  return std::max<int64_t>(1, std::min({slots / tiles, KT / MIN_KT_PER_SPLIT, MAX_SPLITS}));
}

// The most splits, up to `splits`, whose cluster (one block per split) fits one GPC for `kernel` at
// this block size (8 do on an H100 at one block per SM); 1 needs no cluster. `rung` names the caller.
inline int64_t fitting_splits(const void* kernel, int threads, int smem, int64_t splits, const char* rung) {
  for (; splits > 1; --splits) {
    try {
      detail::max_active_clusters(kernel, threads, smem, static_cast<int>(splits), rung);
      return splits;
    } catch (const Unsupported&) {
    }
  }
  return 1;
}

// Launches kernel<<<grid, block, 0, stream>>>(args...) as a programmatic dependent of the kernel
// launched before it on the stream: scheduled while that one runs (where SMs have room), its
// griddep_wait returns once that one has finished.
template <typename... P, typename... Q>
void launch_dependent(void (*kernel)(P...), dim3 grid, unsigned block, cudaStream_t stream, Q... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(block);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  RUNGS_CUDA(cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...));
}

// f(std::integral_constant<int, N>{}) with wgmma's N: m rounded up to 8, 16, 32, 64, else 128.
template <class F>
void with_n(int64_t m, F&& f) {
  if (m <= 8) f(std::integral_constant<int, 8>{});
  else if (m <= 16) f(std::integral_constant<int, 16>{});
  else if (m <= 32) f(std::integral_constant<int, 32>{});
  else if (m <= 64) f(std::integral_constant<int, 64>{});
  else f(std::integral_constant<int, 128>{});
}

}  // namespace rungs::sgemm::decode_wgmma
