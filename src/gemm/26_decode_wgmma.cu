// Rung 26, decode_wgmma: decode-shaped products (few rows of activations m, a large weight W
// stored n x k, tb == T as PyTorch's Linear keeps it, or k x n, tb == N) on the tensor cores with
// the operands swapped.
// Adds over the rungs below: the wgmma rungs give m the 64-row side of each MMA, so at m = 1..128
// most of every instruction multiplies padding. This rung computes C^T (n x m) = W (n x k) * A^T:
// W's rows fill wgmma's 64-row side, m is its N (m rounded up to 8, 16, 32, 64 or 128:
// wgmma.m64nNk16, one kernel per N); m > 128 takes groups of 128 rows of A along the grid's y.
// A block covers BM rows of W (two consumer warpgroups of BM / 2) and all N rows of A; a producer
// warp streams W and N x 64 boxes of A (128-byte swizzle) by TMA through up to 8 mbarrier stages.
// W n x k (nt): BM x 64 boxes, k-contiguous like A. W k x n (nn): 64 x 64 boxes of k-rows, read
// in place by wgmma with its transpose bit (an MN-major A operand), no copy: the same bytes per
// stage, so nn streams as nt does. BM = 128 (8 stages, 7 at N = 128: 112-128 KB of W in flight per
// SM), or 256 at N = 64 and 128 where n gives half the SMs a whole 256-row tile (2 ceil(n / 256)
// groups >= SMs: n > 16640 at one group of A on 132 SMs): each warpgroup then runs two m64 wgmmas
// per k16 and the block reads A's box once per 256 rows of W instead of 128, halving the L2
// traffic of A, which at N = 128 is as large as W's (5 and 4 stages: 160 and 128 KB of W in
// flight). One block per SM. The epilogue writes C from the accumulators transposed (C[j][i] =
// d[i][j]), masked, alpha / beta per element, C unread when beta == 0.
// Fewer tile blocks than SMs (n = 7168: 56): k is split over gridDim.z (as many splits as whole
// multiples of the tiles fit the SMs, each at least 4 k tiles, at most 8, fewer where a cluster
// of them does not fit a GPC), and a tile's splits are one thread block cluster along z, so they
// run together. At the end each block leaves its fp32
// sums in its own shared memory (where its stages were), the cluster syncs, and block z adds
// slice z of the tile over the cluster's blocks in split order through distributed shared memory
// (ld.shared::cluster), applies alpha / beta and stores it: deterministic, one launch, no
// workspace, the partial sums never leave the SMs.
// Fallback inside the rung (slower, same answer): ta == T, or rows TMA cannot address (16-byte
// aligned base and ld * 2 % 16 == 0) run rung 14 (which itself falls back to rung 13 for
// unaligned rows).
// Bound now: reading W once from DRAM is the floor; the grid is whole tiles times
// whole splits, so SMs can idle (n = 7168 at m <= 128: 112 blocks on 132 SMs; n = 28672 at N >= 64:
// 112 256-row tiles); with splits, the sums' exchange through distributed shared memory after the
// last k tile ((splits - 1) / splits of a BM x N fp32 tile per block: 32 KB at N = 128); the A
// boxes re-read by every block from L2 (N x 128 bytes per 128 or 256 rows of W).
// Prediction (H100, against the first form of this rung: split sums through a global workspace
// and a second kernel): split shapes lose the second kernel, its launch and the sums' round trip
// through L2: 7168 x 8192 nt from 48.2-50.3 us (m = 1..32) to ~45-47 us, m = 64 / 128 from 52.3 /
// 56.8 to ~48-50 / ~51-53 us (A's L2 reads stay: BM = 128 there); 28672 x 8192 nt at m = 64 / 128
// from 90-92 % of DRAM to ~93-95 % (256-row tiles); nn at nt's speed (7168 x 8192: 83-85 us ->
// nt's; 28672 x 8192: 169-173 -> ~158-165 us).
// Measured (H100 SXM, f36fe0c, bf16, median of 20 interleaved with cuBLAS, % of the DRAM read
// bandwidth counting W + A + C): nt 7168 x 8192 46.1 / 46.1 / 46.1 / 46.9 / 47.6 / 51.7 us at
// m = 1 / 8 / 16 / 32 / 64 / 128 (82 / 82 / 83 / 82 / 81 / 76 %, 1.07 / 1.07 / 0.98 / 0.96 / 0.97 /
// 0.90x cuBLAS): the split shapes as predicted; 28672 x 8192 95 / 94 / 95 / 93 / 92 / 91 %
// (1.07 / 1.05 / 1.06 / 1.02 / 1.03 / 1.00x): m = 64 / 128 gained 1-2 points with 256-row tiles,
// short of the predicted 93-95; 8192 x 28672 95-96 % to m = 32, 94 / 92.5 % at 64 / 128 (1.04-1.08x).
// nn at nt's speed, as predicted: 7168 x 8192 84 / 83 / 83 / 77 % at m = 1 / 16 / 64 / 128 (0.86-1.04x
// cuBLAS, which reads k x n faster than n x k: 81-88 %), 28672 x 8192 92-94 % (0.98-1.01x). f16
// within 2 % of bf16. H200 (4.8 TB/s): nt 7168 x 8192 66-73 % (1.09-1.11x cuBLAS at m <= 16,
// 0.86-0.92x above), 28672 x 8192 85-87 % (0.94-1.02x), 8192 x 28672 85-91 % (1.01-1.07x).
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wgmma {

namespace {

using detail::ceil_div;

constexpr int MIN_KT_PER_SPLIT = 4;
constexpr int64_t MAX_SPLITS = 8;  // a tile's splits are one cluster: 8 blocks at most (portable size)
constexpr int MAX_GROUPS_Y = 65535;  // gridDim.y

// Block (x, y, z): W rows BM x .., A rows N (group0 + y) .., k tiles of split z. One split:
// C = alpha * acc + beta * C. Splits (gridDim.z > 1, one cluster of gridDim.z blocks along z per
// tile): each block leaves its fp32 sums in its own shared memory, and block z then adds slice z
// of the tile over the cluster's blocks, in split order, and stores it.
template <typename T, int N, int H, bool W_MN>
__global__ void __launch_bounds__(THREADS, 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                  int group0) {
  constexpr int STAGES = stages<N, H>(), STAGE_BYTES = stage_bytes<N, H>(), BM = bm<H>();
  constexpr int LDS = BM + 4;  // the sums in shared memory: N rows (of A) of BM floats, 4 more: no bank conflicts
  static_assert(smem_bytes<N, H>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  static_assert(STAGES >= 2, "a pipeline");
  static_assert(N * LDS * 4 <= STAGES * STAGE_BYTES, "the sums fit where the stages were");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * BM, m0 = (group0 + static_cast<int>(blockIdx.y)) * N;
  const int64_t KT = ceil_div(a.k, BK);
  const int split = static_cast<int>(blockIdx.z), splits = static_cast<int>(gridDim.z);
  const int kt0 = static_cast<int>(KT * split / splits), count = static_cast<int>(KT * (split + 1) / splits) - kt0;
  const int n = static_cast<int>(a.n), m = static_cast<int>(a.m);
  float* sums = reinterpret_cast<float*>(smem);  // splits: [row of A - m0][row of W - n0], ld LDS

  if (wg == 2) {  // the producer warp
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < count; ++i)
        produce_k_tile<N, H, W_MN>(smem, full, empty, i, &map_w, &map_a, kt0 + i, n0, m0);
    }
  } else {
    float d[H][N / 2];
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) d[h][i] = 0.0f;
    for (int i = 0; i < count; ++i) consume_k_tile<T, N, H, W_MN>(smem, full, empty, i, d, wg, tid);
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
      const int t = tid % 128, w = t / 32, g = (t % 32) / 4, q = t % 4;
#pragma unroll
      for (int h = 0; h < H; ++h)
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = (wg * H + h) * 64 + 16 * w + g + 8 * (e / 2), c = 8 * j + 2 * q + e % 2;
            sums[c * LDS + r] = d[h][4 * j + e];
          }
    }
  }
  if (splits == 1) return;
  __syncwarp();  // cluster_sync is .aligned: every warp converged

  // Every block of the cluster (the tile's splits) holds its sums. This block adds quads
  // [q0, q1) of the tile (four consecutive rows of W, i.e. columns of C, each) over the
  // cluster's blocks in split order (cluster rank s = split s), the same order every run. A
  // thread's quads (at most U) are loaded together per split, so each split costs one remote
  // latency.
  detail::cluster_sync();
  constexpr int QUADS_PER_ROW = BM / 4, QUADS = N * QUADS_PER_ROW;
  constexpr int U = (QUADS / 2 + THREADS - 1) / THREADS;  // splits >= 2: at most half the quads
  const int q0 = QUADS * split / splits, q1 = QUADS * (split + 1) / splits;
  float4 acc[U];
  for (int s = 0; s < splits; ++s) {
    float4 v[U];
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const int qi = q0 + tid + i * THREADS;
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
    const int qi = q0 + tid + i * THREADS;
    const int row = m0 + qi / QUADS_PER_ROW, col = n0 + (qi % QUADS_PER_ROW) * 4;
    if (qi >= q1 || row >= m) continue;
    const float v[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (col + e < n) detail::store_c(a.C, a.ldc, row, col + e, v[e], a.alpha, a.beta);
  }
  __syncwarp();
  detail::cluster_sync();  // no block leaves while the others still read its shared memory
}

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  constexpr int SMEM = smem_bytes<N, H>();
  const Maps maps = make_maps<T, N, H, W_MN>(a);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  int64_t splits = 1;
  if (tiles < sms) splits = std::max<int64_t>(1, std::min({sms / tiles, KT / MIN_KT_PER_SPLIT, MAX_SPLITS}));
  auto* kernel = &decode_kernel<T, N, H, W_MN>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  // A cluster of the splits must fit in one GPC at this block size (8 of them do on an H100); on a
  // GPU where it does not, fewer splits.
  while (splits > 1) {
    try {
      detail::max_active_clusters(reinterpret_cast<const void*>(kernel), THREADS, SMEM, static_cast<int>(splits),
                                  "decode_wgmma");
      break;
    } catch (const Unsupported&) {
      --splits;
    }
  }
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
    detail::check_launch("decode_wgmma");
  }
}

template <typename T>
void run16(const ArgsT<T>& a, void (*fallback)(const ArgsT<T>&)) {
  detail::require_sm90a("decode_wgmma");
  if (!tma_path(a)) return fallback(a);
  // 256-row tiles (N >= 64) where they alone give half the SMs a whole tile: no split then, or one
  // that keeps the partial sums small; shorter n keeps 128 rows (twice the tiles, half the splits).
  const int64_t sms = detail::sm_count();
  with_shape(a, [&](int64_t wide_tiles) { return 2 * wide_tiles >= sms; }, [&](auto n, auto h, auto w_mn) {
    launch<T, decltype(n)::value, decltype(h)::value, decltype(w_mn)::value>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a, wgmma::run_f16); }
void run_bf16(const ArgsBF& a) { run16(a, wgmma::run_bf16); }

}  // namespace rungs::sgemm::decode_wgmma
