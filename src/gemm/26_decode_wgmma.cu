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
// groups >= SMs: n > 16640 at one group of A on 132 SMs): each warpgroup then runs two m64 wgmmas per k16 and the block reads A's box once
// per 256 rows of W instead of 128, halving the L2 traffic of A, which at N = 128 is as large as
// W's (5 and 4 stages: 160 and 128 KB of W in flight). One block per SM. The epilogue writes C from
// the accumulators transposed (C[j][i] = d[i][j]), masked, alpha / beta per element, C unread when
// beta == 0. Fewer tile blocks than SMs (n = 7168: 56): k is split over gridDim.z (as many splits
// as whole multiples of the tiles fit the SMs, each at least 4 k tiles), fp32 partial sums go to
// a workspace and a second kernel adds them in split order (deterministic) and applies alpha /
// beta. The second kernel is a programmatic dependent launch: scheduled while the first runs
// (griddepcontrol.launch_dependents at its start), it waits in griddepcontrol.wait for the first
// grid's partial sums, so its launch latency overlaps the first kernel.
// Fallback inside the rung (slower, same answer): ta == T, or rows TMA cannot address (16-byte
// aligned base and ld * 2 % 16 == 0) run rung 14 (which itself falls back to rung 13 for
// unaligned rows).
// Bound now (not measured): reading W once from DRAM is the floor; the grid is whole tiles times
// whole splits, so SMs can idle (n = 7168 at m <= 128: 112 blocks on 132 SMs; n = 28672 at N >= 64:
// 112 256-row tiles); the split's partial sums (in L2) and the second pass, which runs after the
// first grid; the A boxes re-read by every block from L2 (N x 128 bytes per 128 or 256 rows of W).
// Prediction (H100): from the programmatic second launch (previous commit), split shapes lose
// the second launch's gap, 1-2 us (7168 x 8192 nt: 48-57 us -> ~46-55 us, most at small m). From
// the 256-row tiles: 28672 x 8192 nt at m = 64 / 128 from 90-92 % of DRAM to ~93-95 % (A's L2
// reads halved, 112 blocks instead of 1.7 waves of 224); from the nn path: nn at nt's speed
// (7168 x 8192: 83-85 us -> ~46-55 us; 28672 x 8192: 169-173 -> ~158-165 us).
// Measured: not yet.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"
#include "core/scratch.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wgmma {

namespace {

using detail::ceil_div;

constexpr int MIN_KT_PER_SPLIT = 4;
constexpr int MAX_GROUPS_Y = 65535;  // gridDim.y

// Block (x, y, z): W rows BM x .., A rows N (group0 + y) .., k tiles of split z. part == nullptr:
// C = alpha * acc + beta * C; else the fp32 sums go to part[z][row of A][row of W] (ld n), and the
// second pass, launched programmatically, may be scheduled at once.
template <typename T, int N, int H, bool W_MN>
__global__ void __launch_bounds__(THREADS, 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                  float* part, int group0) {
  constexpr int STAGES = stages<N, H>(), STAGE_BYTES = stage_bytes<N, H>();
  static_assert(smem_bytes<N, H>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  static_assert(STAGES >= 2, "a pipeline");
  extern __shared__ unsigned char smem_raw[];
  if (part != nullptr) griddep_launch_dependents();
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * bm<H>(), m0 = (group0 + static_cast<int>(blockIdx.y)) * N;
  const int64_t KT = ceil_div(a.k, BK), split = blockIdx.z, splits = gridDim.z;
  const int kt0 = static_cast<int>(KT * split / splits), count = static_cast<int>(KT * (split + 1) / splits) - kt0;

  if (wg == 2) {  // the producer warp
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < count; ++i)
        produce_k_tile<N, H, W_MN>(smem, full, empty, i, &map_w, &map_a, kt0 + i, n0, m0);
    }
    return;
  }

  float d[H][N / 2];
#pragma unroll
  for (int h = 0; h < H; ++h)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[h][i] = 0.0f;
  for (int i = 0; i < count; ++i) consume_k_tile<T, N, H, W_MN>(smem, full, empty, i, d, wg, tid);
  detail::wgmma_wait<0>();

  // d[h] holds C^T's rows n0 + 64 (H wg + h) .. (C's columns) and columns m0 .. (C's rows).
  const int n = static_cast<int>(a.n), m = static_cast<int>(a.m);
#pragma unroll
  for (int h = 0; h < H; ++h) {
    const int row0 = n0 + (wg * H + h) * 64;
    if (part == nullptr)
      detail::store_acc_64xn_t<T, N>(d[h], a.C, a.ldc, row0, m0, n, m, a.alpha, a.beta);
    else
      detail::store_acc_64xn_t<float, N>(d[h], part + split * a.m * a.n, a.n, row0, m0, n, m, 1.0f, 0.0f);
  }
}

// C = alpha * (sum over the splits of part, in split order) + beta * C (beta == 0: C unread).
// Launched as a programmatic dependent of decode_kernel: it waits for that grid's partial sums.
template <typename T>
__global__ void __launch_bounds__(256) add_splits(const float* __restrict__ part, int splits, ArgsT<T> a) {
  griddep_wait();
  const int64_t mn = a.m * a.n;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < mn; e += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    for (int s = 0; s < splits; ++s) acc += part[s * mn + e];
    detail::store_c(a.C, a.ldc, e / a.n, e % a.n, acc, a.alpha, a.beta);
  }
}

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  constexpr int SMEM = smem_bytes<N, H>();
  const Maps maps = make_maps<T, N, H, W_MN>(a);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  int64_t splits = 1;
  if (tiles < sms) splits = std::max<int64_t>(1, std::min(sms / tiles, KT / MIN_KT_PER_SPLIT));
  // Partial sums: splits * m * n floats, where tiles * splits <= SMs bounds m * n by SMs * 256 * 128.
  detail::Scratch part(splits > 1 ? static_cast<size_t>(splits * a.m * a.n) * sizeof(float) : 0, a.stream);
  auto* kernel = &decode_kernel<T, N, H, W_MN>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  for (int64_t g0 = 0; g0 < groups; g0 += MAX_GROUPS_Y) {
    const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(std::min<int64_t>(MAX_GROUPS_Y, groups - g0)),
                    static_cast<unsigned>(splits));
    kernel<<<grid, THREADS, SMEM, a.stream>>>(maps.w, maps.a, a, part.as<float>(), static_cast<int>(g0));
    detail::check_launch("decode_wgmma");
  }
  if (splits > 1) {
    const int64_t blocks = std::min<int64_t>(ceil_div(a.m * a.n, 256), 8 * sms);
    launch_dependent(&add_splits<T>, static_cast<unsigned>(blocks), 256, a.stream, part.as<float>(),
                     static_cast<int>(splits), a);
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
