// Rung 26's parts (used by rungs 26, 27 and 32; what they add and why: 26_decode_wgmma.cu): the block
// shape (BM rows of W: 128, or 256 at N = 64 and 128 where the rung asks for it; two consumer
// warpgroups and a producer warp), the TMA stages of W and A, the producer's and the consumers'
// step for one k tile with W either k-contiguous (nt) or n-contiguous (nn, wgmma's transpose bit),
// rung 26's kernel (at one or two blocks per SM), the tensor maps, the choice of wgmma's N and BM,
// and rung 27's programmatic second launch.
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

constexpr int ROW = 128;     // bytes per shared-memory row: one swizzle row, 64 16-bit elements
constexpr int BK = 64;       // k per stage
constexpr int THREADS = 288; // warpgroups 0 and 1 consume, warp 8 produces (one thread issues TMA)

// Rows of W per block: BM = 128 H. H = 1: each consumer warpgroup one m64 wgmma per k16. H = 2
// (N = 64 and 128 only): each warpgroup two m64 wgmmas on 128 rows of W. Every block reads its own
// N x 64 box of A per k tile from L2, as many bytes as W's 128 x 64 box at N = 128; the wider
// tile halves A's share of that traffic, at the price of half as many tiles (more splits or cut
// tiles, whose partial sums are as large as the tile): launch_shape chooses.
template <int H>
constexpr int bm() {
  return 128 * H;
}
template <int H>
constexpr int w_bytes() {
  return bm<H>() * ROW;  // 16 or 32 KB
}
template <int N, int H>
constexpr int stage_bytes() {
  return w_bytes<H>() + N * ROW;
}
// The dynamic shared memory a block may have with OCC blocks per SM: 227 KB alone (rung 26); two
// blocks share the SM's 228 KB, each with 1 KB the system reserves (rung 32: 113 KB).
template <int OCC>
constexpr int smem_budget() {
  return OCC == 1 ? 227 * 1024 : 228 * 1024 / OCC - 1024;
}
template <int N, int H, int OCC = 1>
constexpr int stages() {  // as many as fit the budget, at most 8
  constexpr int fit = (smem_budget<OCC>() - 1024 - 2 * 8 * 8) / stage_bytes<N, H>();
  return fit < 8 ? fit : 8;
}
template <int N, int H, int OCC = 1>
constexpr int smem_bytes() {
  return stages<N, H, OCC>() * stage_bytes<N, H>() + 1024 /* alignment */ + 2 * stages<N, H, OCC>() * 8 /* barriers */;
}

// The producer's step i of its block (the i-th k tile it loads, counted over the whole block):
// waits until the consumers released stage i % STAGES (its use i / STAGES - 1), then loads k tile
// kt of W's rows n0 .. n0 + BM - 1 and of A's N x 64 box at row m0 into it. W_MN == false (W n x k,
// tb == T): one BM x 64 box, BM rows of 128 bytes. W_MN (W stored k x n, tb == N): BM / 64 boxes
// of 64 k-rows x 64 n (8 KB each, box j holding W rows n0 + 64 j ..), the layout wgmma reads with
// its transpose bit.
template <int N, int H, bool W_MN, int OCC = 1>
__device__ __forceinline__ void produce_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               const CUtensorMap* map_w, const CUtensorMap* map_a, int kt, int n0,
                                               int m0) {
  constexpr int STAGES = stages<N, H, OCC>(), STAGE_BYTES = stage_bytes<N, H>();
  const int s = i % STAGES;
  if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
  unsigned char* st = smem + s * STAGE_BYTES;
  const int k0 = kt * BK;
  detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
  if constexpr (W_MN) {
#pragma unroll
    for (int j = 0; j < bm<H>() / 64; ++j) detail::tma_load_2d(st + j * 64 * ROW, map_w, n0 + 64 * j, k0, &full[s]);
  } else {
    detail::tma_load_2d(st, map_w, k0, n0, &full[s]);
  }
  detail::tma_load_2d(st + w_bytes<H>(), map_a, k0, m0, &full[s]);
}

// A consumer warpgroup's step i: waits for stage i % STAGES, adds its BM / 2 rows of W times A^T
// (64 x N per m64 block h, k 64) into d[h], then releases stage i - 1, whose MMAs have retired
// (stage i's may still run: wgmma_wait<0> before reading d).
template <typename T, int N, int H, bool W_MN, int OCC = 1>
__device__ __forceinline__ void consume_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               float (&d)[H][N / 2], int wg, int tid) {
  constexpr int STAGES = stages<N, H, OCC>(), STAGE_BYTES = stage_bytes<N, H>();
  const int s = i % STAGES;
  detail::mbar_wait(&full[s], (i / STAGES) & 1);
  const unsigned char* Ws = smem + s * STAGE_BYTES;
  const unsigned char* As = Ws + w_bytes<H>();
  detail::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    const uint64_t da = detail::smem_desc(As + kk * 32, 16, 1024);  // A's N rows, K-major
#pragma unroll
    for (int h = 0; h < H; ++h) {
      // Row block wg * H + h of W (64 rows): K-major, k16 steps inside the 128-byte row; or
      // MN-major, its own 64 x 64 box, k16 steps of 16 rows (two 8-row swizzle atoms, SBO 1024).
      const unsigned char* Wb = Ws + (wg * H + h) * 64 * ROW;
      const uint64_t dw = W_MN ? detail::smem_desc(Wb + kk * 16 * ROW, 64 * ROW, 1024)
                               : detail::smem_desc(Wb + kk * 32, 16, 1024);
      detail::wgmma<N, T, T, W_MN, false>(d[h], dw, da);
    }
  }
  detail::wgmma_commit();
  detail::wgmma_wait<1>();  // the MMAs of stage i - 1 have retired: its slot may be refilled
  if (i > 0 && tid % 128 == 0) detail::mbar_arrive(&empty[(i - 1) % STAGES]);
}

// Rungs 26 and 32's grid: splits of at least 4 k tiles, at most 8 (a tile's splits are one
// cluster: 8 blocks at most, the portable size), groups of N rows of A along y.
constexpr int MIN_KT_PER_SPLIT = 4;
constexpr int64_t MAX_SPLITS = 8;
constexpr int MAX_GROUPS_Y = 65535;  // gridDim.y

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

// Rung 26's kernel (rung 32 runs it at OCC = 2 blocks per SM, with the stages that fit half an
// SM's shared memory). Block (x, y, z): W rows BM x .., A rows N (group0 + y) .., k tiles of split
// z. One split: C = alpha * acc + beta * C. Splits (gridDim.z > 1, one cluster of gridDim.z blocks along z per
// tile): each block leaves its fp32 sums in its own shared memory, and block z then adds slice z
// of the tile over the cluster's blocks, in split order, and stores it.
template <typename T, int N, int H, bool W_MN, int OCC>
__global__ void __launch_bounds__(THREADS, OCC)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                  int group0) {
  constexpr int STAGES = stages<N, H, OCC>(), STAGE_BYTES = stage_bytes<N, H>(), BM = bm<H>();
  static_assert(smem_bytes<N, H, OCC>() <= smem_budget<OCC>(), "OCC blocks fit an SM's shared memory");
  static_assert(STAGES >= 2, "a pipeline");
  static_assert(N * sums_ld<BM>() * 4 <= STAGES * STAGE_BYTES, "the sums fit where the stages were");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * BM, m0 = (group0 + static_cast<int>(blockIdx.y)) * N;
  const int64_t KT = detail::ceil_div(a.k, int64_t(BK));
  const int split = static_cast<int>(blockIdx.z), splits = static_cast<int>(gridDim.z);
  const int kt0 = static_cast<int>(KT * split / splits), count = static_cast<int>(KT * (split + 1) / splits) - kt0;
  const int n = static_cast<int>(a.n), m = static_cast<int>(a.m);
  float* sums = reinterpret_cast<float*>(smem);  // splits: [row of A - m0][row of W - n0] (stash_sums)

  if (wg == 2) {  // the producer warp
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < count; ++i)
        produce_k_tile<N, H, W_MN, OCC>(smem, full, empty, i, &map_w, &map_a, kt0 + i, n0, m0);
    }
  } else {
    float d[H][N / 2];
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) d[h][i] = 0.0f;
    for (int i = 0; i < count; ++i) consume_k_tile<T, N, H, W_MN, OCC>(smem, full, empty, i, d, wg, tid);
    detail::wgmma_wait<0>();

    // d[h] holds C^T's rows n0 + 64 (H wg + h) .. (C's columns) and columns m0 .. (C's rows):
    // accumulator element (r, c) of warp w, lane 4g + q, d[h][4j + e]: r = 16w + g + 8(e / 2),
    // c = 8j + 2q + e % 2.
    if (splits == 1) {
#pragma unroll
      for (int h = 0; h < H; ++h)
        detail::store_acc_64xn_t<T, N>(d[h], a.C, a.ldc, n0 + (wg * H + h) * 64, m0, n, m, a.alpha, a.beta);
    } else {
      detail::named_barrier(1, 256);  // both warpgroups' MMAs have read their last stage
#pragma unroll
      for (int h = 0; h < H; ++h) stash_sums<N, BM>(sums, d[h], (wg * H + h) * 64, tid % 128);
    }
  }
  if (splits == 1) return;
  __syncwarp();  // cluster_sync is .aligned: every warp converged

  detail::cluster_sync();  // every block of the cluster (the tile's splits) holds its sums
  add_split_sums<T, N, BM, THREADS>(sums, tid, split, splits, a.C, a.ldc, n0, m0, n, m, a.alpha, a.beta);
  __syncwarp();
  detail::cluster_sync();  // no block leaves while the others still read its shared memory
}

// W in BM x 64 boxes (n x k) or 64 x 64 boxes (k x n, W_MN), A (m x k) in N x 64 boxes, all with
// the 128-byte swizzle; L2 fills promoted to `promotion` (rung 26 asks for 64 bytes where W comes
// n x k in 128-row boxes: 26_decode_wgmma.cu says why).
struct Maps {
  CUtensorMap w, a;
};
template <typename T, int N, int H, bool W_MN>
Maps make_maps(const ArgsT<T>& a, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  constexpr int E = int(sizeof(T));
  const CUtensorMapDataType type = detail::tma_operand_type<T>();
  const CUtensorMap w = W_MN ? detail::make_tensor_map_2d(a.B, type, E, a.k, a.n, a.ldb, BK, 64, promotion)
                             : detail::make_tensor_map_2d(a.B, type, E, a.n, a.k, a.ldb, bm<H>(), BK, promotion);
  return {w, detail::make_tensor_map_2d(a.A, type, E, a.m, a.k, a.lda, N, BK, promotion)};
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

// Launches rung 26's kernel at OCC blocks per SM on tiles_n x groups tiles of `splits` k slices
// each (the splits of a tile one cluster along z); fewer splits where a cluster of them does not
// fit one GPC at this block size (8 do on an H100). `rung` names the caller in errors.
template <typename T, int N, int H, bool W_MN, int OCC>
void launch_grid(const ArgsT<T>& a, const Maps& maps, int64_t tiles_n, int64_t groups, int64_t splits,
                 const char* rung) {
  constexpr int SMEM = smem_bytes<N, H, OCC>();
  auto* kernel = &decode_kernel<T, N, H, W_MN, OCC>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  splits = fitting_splits(reinterpret_cast<const void*>(kernel), THREADS, SMEM, splits, rung);
  for (int64_t g0 = 0; g0 < groups; g0 += MAX_GROUPS_Y) {
    const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(std::min<int64_t>(MAX_GROUPS_Y, groups - g0)),
                    static_cast<unsigned>(splits));
    if (splits == 1) {
      kernel<<<grid, THREADS, SMEM, a.stream>>>(maps.w, maps.a, a, static_cast<int>(g0));
    } else {  // clusters of the splits of one tile, along z
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = grid;
      cfg.blockDim = dim3(THREADS);
      cfg.dynamicSmemBytes = SMEM;
      cfg.stream = a.stream;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 1, attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = static_cast<unsigned>(splits);
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      RUNGS_CUDA(cudaLaunchKernelEx(&cfg, kernel, maps.w, maps.a, a, static_cast<int>(g0)));
    }
    detail::check_launch(rung);
  }
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

// f(std::integral_constant<int, N>{}, std::integral_constant<int, H>{}, std::bool_constant<W_MN>{}):
// N from m (with_n), W_MN = tb == N, and H = 2 where N >= 64 and wide(BM = 256 tiles) says so.
template <typename T, class Wide, class F>
void with_shape(const ArgsT<T>& a, Wide&& wide, F&& f) {
  with_n(a.m, [&](auto n) {
    constexpr int N = decltype(n)::value;
    auto layout = [&](auto h) {
      if (a.tb == Trans::N) f(n, h, std::true_type{});
      else f(n, h, std::false_type{});
    };
    if constexpr (N >= 64) {
      const int64_t wide_tiles = detail::ceil_div(a.n, int64_t(256)) * detail::ceil_div(a.m, int64_t(N));
      if (wide(wide_tiles)) return layout(std::integral_constant<int, 2>{});
    }
    layout(std::integral_constant<int, 1>{});
  });
}

}  // namespace rungs::sgemm::decode_wgmma
