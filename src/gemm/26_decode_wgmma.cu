// Rung 26, decode_wgmma: decode-shaped products (few rows of activations m, a large weight W
// stored n x k, tb == T as PyTorch's Linear keeps it) on the tensor cores with the operands swapped.
// Adds over the rungs below: the wgmma rungs give m the 64-row side of each MMA, so at m = 1..128
// most of every instruction multiplies padding. This rung computes C^T (n x m) = W (n x k) * A^T:
// W's rows fill wgmma's 64-row side, m is its N (m rounded up to 8, 16, 32, 64 or 128:
// wgmma.m64nNk16, one kernel per N); m > 128 takes groups of 128 rows of A along the grid's y.
// A block covers 128 rows of W (two consumer warpgroups of 64) and all N rows of A; a producer
// warp streams 128 x 64 boxes of W and N x 64 boxes of A (both k-contiguous, 128-byte swizzle) by
// TMA through up to 8 mbarrier stages (7 at N = 128): 112-128 KB of W in flight per SM, one block
// per SM. The epilogue writes C from the accumulators transposed (C[j][i] = d[i][j]), masked,
// alpha / beta per element, C unread when beta == 0. Fewer tile blocks than SMs (n = 7168: 56):
// k is split over gridDim.z (as many splits as whole multiples of the tiles fit the SMs, each at
// least 4 k tiles), fp32 partial sums go to a workspace and a second kernel adds them in split
// order (deterministic) and applies alpha / beta.
// Fallback inside the rung (slower, same answer): ta == T, tb == N, or rows TMA cannot address
// (16-byte aligned base and ld * 2 % 16 == 0) run rung 14 (which itself falls back to rung 13 for
// unaligned rows).
// Bound now (not measured): reading W once from DRAM is the floor; the grid is whole tiles times
// whole splits, so SMs can idle (n = 7168 at m <= 128: 112 blocks on 132 SMs); the split's partial
// sums go through DRAM/L2 and a second launch; the A boxes are re-read by every block from L2.
#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wgmma {

namespace {

using detail::ceil_div;

constexpr int BM = 128;      // rows of W (columns of C) per block: two consumer warpgroups of 64
constexpr int ROW = 128;     // bytes per shared-memory row: one swizzle row, 64 16-bit elements of k
constexpr int BK = 64;       // k per stage
constexpr int THREADS = 288; // warpgroups 0 and 1 consume, warp 8 produces (one thread issues TMA)
constexpr int W_BYTES = BM * ROW;  // 16 KB
constexpr int MIN_KT_PER_SPLIT = 4;
constexpr int MAX_GROUPS_Y = 65535;  // gridDim.y

template <int N>
constexpr int stage_bytes() {
  return W_BYTES + N * ROW;
}
template <int N>
constexpr int stages() {  // as many as fit the 227 KB a Hopper block may have, at most 8
  constexpr int fit = (227 * 1024 - 1024 - 2 * 8 * 8) / stage_bytes<N>();
  return fit < 8 ? fit : 8;
}
template <int N>
constexpr int smem_bytes() {
  return stages<N>() * stage_bytes<N>() + 1024 /* alignment */ + 2 * stages<N>() * 8 /* barriers */;
}

// Block (x, y, z): W rows 128x .., A rows N (group0 + y) .., k tiles of split z. part == nullptr:
// C = alpha * acc + beta * C; else the fp32 sums go to part[z][row of A][row of W] (ld n).
template <typename T, int N>
__global__ void __launch_bounds__(THREADS, 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                  float* part, int group0) {
  constexpr int STAGES = stages<N>(), STAGE_BYTES = stage_bytes<N>();
  static_assert(smem_bytes<N>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  static_assert(STAGES >= 2, "a pipeline");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * BM, m0 = (group0 + static_cast<int>(blockIdx.y)) * N;
  const int64_t KT = ceil_div(a.k, BK), split = blockIdx.z, splits = gridDim.z;
  const int kt0 = static_cast<int>(KT * split / splits), count = static_cast<int>(KT * (split + 1) / splits) - kt0;

  if (wg == 2) {  // the producer warp
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < count; ++i) {
        const int s = i % STAGES;
        if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
        unsigned char* st = smem + s * STAGE_BYTES;
        const int k0 = (kt0 + i) * BK;
        detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
        detail::tma_load_2d(st, &map_w, k0, n0, &full[s]);
        detail::tma_load_2d(st + W_BYTES, &map_a, k0, m0, &full[s]);
      }
    }
    return;
  }

  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  for (int i = 0; i < count; ++i) {
    const int s = i % STAGES;
    detail::mbar_wait(&full[s], (i / STAGES) & 1);
    const unsigned char* Ws = smem + s * STAGE_BYTES;
    const unsigned char* As = Ws + W_BYTES;
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      // Both operands K-major: W's 64 rows of this warpgroup, A's N rows; k16 steps inside the row.
      const uint64_t dw = detail::smem_desc(Ws + wg * 64 * ROW + kk * 32, 16, 1024);
      const uint64_t da = detail::smem_desc(As + kk * 32, 16, 1024);
      detail::wgmma_narrow<T, 0, 0, N>(d, dw, da);
    }
    detail::wgmma_commit();
    detail::wgmma_wait<1>();  // the MMAs of stage i - 1 have retired: its slot may be refilled
    if (i > 0 && tid % 128 == 0) detail::mbar_arrive(&empty[(i - 1) % STAGES]);
  }
  detail::wgmma_wait<0>();

  // d holds C^T's rows n0 + 64 wg .. (C's columns) and columns m0 .. (C's rows).
  const int n = static_cast<int>(a.n), m = static_cast<int>(a.m);
  if (part == nullptr)
    detail::store_acc_64xn_t<T, N>(d, a.C, a.ldc, n0 + wg * 64, m0, n, m, a.alpha, a.beta);
  else
    detail::store_acc_64xn_t<float, N>(d, part + split * a.m * a.n, a.n, n0 + wg * 64, m0, n, m, 1.0f, 0.0f);
}

// C = alpha * (sum over the splits of part, in split order) + beta * C (beta == 0: C unread).
template <typename T>
__global__ void __launch_bounds__(256) add_splits(const float* __restrict__ part, int splits, ArgsT<T> a) {
  const int64_t mn = a.m * a.n;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < mn; e += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    for (int s = 0; s < splits; ++s) acc += part[s * mn + e];
    detail::store_c(a.C, a.ldc, e / a.n, e % a.n, acc, a.alpha, a.beta);
  }
}

template <typename T, int N>
void launch(const ArgsT<T>& a) {
  constexpr int E = int(sizeof(T)), SMEM = smem_bytes<N>();
  const CUtensorMap mw = detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.n, a.k, a.ldb, BM, BK);
  const CUtensorMap ma = detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.m, a.k, a.lda, N, BK);
  const int64_t tiles_n = ceil_div(a.n, BM), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t tiles = tiles_n * groups, sms = detail::sm_count();
  int64_t splits = 1;
  if (tiles < sms) splits = std::max<int64_t>(1, std::min(sms / tiles, KT / MIN_KT_PER_SPLIT));
  // Partial sums: splits * m * n floats, where tiles * splits <= SMs bounds m * n by SMs * 128 * 128.
  detail::Scratch part(splits > 1 ? static_cast<size_t>(splits * a.m * a.n) * sizeof(float) : 0, a.stream);
  auto* kernel = &decode_kernel<T, N>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  for (int64_t g0 = 0; g0 < groups; g0 += MAX_GROUPS_Y) {
    const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(std::min<int64_t>(MAX_GROUPS_Y, groups - g0)),
                    static_cast<unsigned>(splits));
    kernel<<<grid, THREADS, SMEM, a.stream>>>(mw, ma, a, part.as<float>(), static_cast<int>(g0));
    detail::check_launch("decode_wgmma");
  }
  if (splits > 1) {
    const int64_t blocks = std::min<int64_t>(ceil_div(a.m * a.n, 256), 8 * sms);
    add_splits<T><<<static_cast<unsigned>(blocks), 256, 0, a.stream>>>(part.as<float>(), static_cast<int>(splits), a);
    detail::check_launch("decode_wgmma");
  }
}

template <typename T>
void run16(const ArgsT<T>& a, void (*fallback)(const ArgsT<T>&)) {
  detail::require_sm90a("decode_wgmma");
  // W must be n x k (tb == T) and A m x k (ta == N): both k-contiguous, as the kernel reads them.
  if (a.ta != Trans::N || a.tb != Trans::T || !pack::tma_ok(a.A, a.lda, 2) || !pack::tma_ok(a.B, a.ldb, 2))
    return fallback(a);
  if (a.m <= 8) launch<T, 8>(a);
  else if (a.m <= 16) launch<T, 16>(a);
  else if (a.m <= 32) launch<T, 32>(a);
  else if (a.m <= 64) launch<T, 64>(a);
  else launch<T, 128>(a);
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a, wgmma::run_f16); }
void run_bf16(const ArgsBF& a) { run16(a, wgmma::run_bf16); }

}  // namespace rungs::sgemm::decode_wgmma
