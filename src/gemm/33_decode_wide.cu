// Rung 33, decode_wide: decode products in cuBLAS's orientation, C = A W^T, with W's tile fitted to one
// wave of unsplit blocks; f16 and bf16, sm_90a. W stored k x n: rungs::Unsupported (rung 26 reads it
// in place); A stored k x m and rows TMA cannot address are copied first, as rung 26's.
// Adds over 26 decode_wgmma: rung 26 gives W's rows the 64-row side, so its tiles are multiples of 64
// rows and n rarely divides into one per SM (n = 7168: 56 tiles split twice, the sums exchanged in a
// cluster; n = 28672 at m = 64 / 128: 112 tiles of 256 rows, 20 of 132 SMs idle). Here A's rows take
// the 64-row side (one consumer warpgroup per 64 rows of A: one at m <= 64, two at m <= 128; m > 128
// in groups of 128 along the grid's y) and W's rows wgmma's N, any multiple of 8 up to 256: the
// smallest of 32, 56, 64, 112, 128, 224 and 256 whose tiles fit one wave (n = 7168: 56, 8192: 64,
// 28672: 224; each 128 blocks on 132 SMs). Each block multiplies its N rows of W over the whole k (no
// split, no exchange) and stores its accumulators straight into C's rows (alpha / beta, masked; C
// unread when beta == 0). A producer warp streams W's N x 64 boxes and A's 64 NC x 64 boxes (128-byte
// swizzle, 64-byte L2 promotion) through 5-12 stages (140-200 KB in flight).
// Bounded by: reading W once, and A from L2: every block reads all of A's 64 NC rows per k tile, as
// many bytes as its N rows of W at N = 64 NC, so at m = 128 on 8192 x 28672 (N = 64) A's L2 traffic
// is twice W's; m <= 32 pads the 64-row side. Multicasting A's boxes in clusters along n, as cuBLAS
// does, measured slower (scripts/experiments/decode_wide/decode_wide.cu).
// Prediction: 28672 x 8192 at m = 64 1.04-1.05x rung 26's speed (H200); measured: 114.8-115.2 us against
// rung 26's 119.7-121.6 (1.01-1.02x cuBLAS); slower than rung 26 at m <= 32 and on 8192 x 28672.
// Own kernel: on the skeleton (rung 26's split schedule, one block a tile and the whole k, the product
// unswapped) it ran 1.04-1.06x this kernel's time at m = 128 (H200, interleaved; one ncu launch at
// 128 x 8192 x 28672: 145.8 against 138.9 us, the same k loop but for this kernel's unrolled by two).
// scripts/experiments/ws_before_after.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_wide {

namespace {

using detail::ceil_div;

constexpr int BK = 64;     // k per stage
using decode_wgmma::ROW;  // bytes per shared-memory row: one swizzle row, 64 16-bit elements

// NC consumer warpgroups (64 rows of A each), then the producer warp.
template <int NC>
constexpr int threads() {
  return 128 * NC + 32;
}
template <int N, int NC>
constexpr int stage_bytes() {
  return (N + 64 * NC) * ROW;  // W's N x 64 box, then A's 64 NC x 64 box
}
template <int N, int NC>
constexpr int stages() {  // as many as fit 227 KB, at most 12
  constexpr int fit = (227 * 1024 - 1024 - 2 * 12 * 8) / stage_bytes<N, NC>();
  return fit < 12 ? fit : 12;
}
template <int N, int NC>
constexpr int smem_bytes() {
  return stages<N, NC>() * stage_bytes<N, NC>() + 1024 /* alignment */ + 2 * stages<N, NC>() * 8 /* barriers */;
}

// Block (x, y): W rows N x .., A rows 64 NC (group0 + y) .., all of k.
template <typename T, int N, int NC>
__global__ void __launch_bounds__(threads<NC>(), 1)
    wide_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                int group0, bool vec) {
  constexpr int STAGES = stages<N, NC>(), STAGE_BYTES = stage_bytes<N, NC>();
  static_assert(STAGES >= 3, "a pipeline");
  static_assert(smem_bytes<N, NC>() <= 227 * 1024, "one block per SM");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, NC);  // empty: every consumer warpgroup
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * N, m0 = (group0 + static_cast<int>(blockIdx.y)) * 64 * NC;
  const int KT = static_cast<int>(ceil_div(a.k, int64_t(BK)));

  if (wg == NC) {  // the producer warp
    if (tid == 128 * NC) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < KT; ++i) {
        const int s = i % STAGES;
        if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
        unsigned char* st = smem + s * STAGE_BYTES;
        detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
        detail::tma_load_2d(st, &map_w, i * BK, n0, &full[s]);
        detail::tma_load_2d(st + N * ROW, &map_a, i * BK, m0, &full[s]);
      }
    }
    return;
  }
  // Consumer warpgroup wg: rows m0 + 64 wg .. of A times the tile's N rows of W.
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  for (int i = 0; i < KT; ++i) {
    const int s = i % STAGES;
    detail::mbar_wait(&full[s], (i / STAGES) & 1);
    const unsigned char* Ws = smem + s * STAGE_BYTES;
    const unsigned char* As = Ws + N * ROW + wg * 64 * ROW;
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)  // k16 steps inside the 128-byte rows, both operands K-major
      detail::wgmma<N, T, T>(d, detail::smem_desc(As + kk * 32, 16, 1024), detail::smem_desc(Ws + kk * 32, 16, 1024));
    detail::wgmma_commit();
    detail::wgmma_wait<1>();  // the MMAs of stage i - 1 have retired: its slot may be refilled
    if (i > 0 && tid % 128 == 0) detail::mbar_arrive(&empty[(i - 1) % STAGES]);
  }
  detail::wgmma_wait<0>();
  detail::store_acc_64xn<T, N>(d, a.C, a.ldc, m0 + wg * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n),
                               a.alpha, a.beta, vec);
}

template <typename T, int N, int NC>
void launch(const ArgsT<T>& a) {
  constexpr int E = int(sizeof(T)), SMEM = smem_bytes<N, NC>();
  const CUtensorMapDataType type = detail::tma_operand_type<T>();
  const CUtensorMap map_w =
      detail::make_tensor_map_2d(a.B, type, E, a.n, a.k, a.ldb, N, BK, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
  const CUtensorMap map_a =
      detail::make_tensor_map_2d(a.A, type, E, a.m, a.k, a.lda, 64 * NC, BK, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
  auto* kernel = &wide_kernel<T, N, NC>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  // Two-element stores of C where every pair (even column) is 4-byte aligned.
  const bool vec = reinterpret_cast<uintptr_t>(a.C) % 4 == 0 && a.ldc % 2 == 0;
  const int64_t tiles_n = ceil_div(a.n, int64_t(N)), groups = ceil_div(a.m, int64_t(64 * NC));
  constexpr int64_t MAX_Y = 65535;  // gridDim.y
  for (int64_t g0 = 0; g0 < groups; g0 += MAX_Y) {
    const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(std::min(MAX_Y, groups - g0)));
    kernel<<<grid, threads<NC>(), SMEM, a.stream>>>(map_w, map_a, a, static_cast<int>(g0), vec);
    detail::check_launch("decode_wide");
  }
}

// f(std::integral_constant<int, N>{}): the narrowest tile width whose tiles, times the groups of
// A, fit one block per SM; 256 where none does.
template <class F>
void with_width(int64_t n, int64_t groups, int64_t sms, F&& f) {
  auto fits = [&](int64_t w) { return ceil_div(n, w) * groups <= sms; };
  if (fits(32)) f(std::integral_constant<int, 32>{});
  else if (fits(56)) f(std::integral_constant<int, 56>{});
  else if (fits(64)) f(std::integral_constant<int, 64>{});
  else if (fits(112)) f(std::integral_constant<int, 112>{});
  else if (fits(128)) f(std::integral_constant<int, 128>{});
  else if (fits(224)) f(std::integral_constant<int, 224>{});
  else f(std::integral_constant<int, 256>{});
}

// W stored n x k only (tb == T); A stored k x m and rows TMA cannot address are copied first
// (pack::operands_a_k).
template <typename T>
void run16(const ArgsT<T>& user) {
  if (user.tb != Trans::T) detail::unsupported("decode_wide", "W (B) stored n x k, tb = T");
  detail::require_sm90a("decode_wide");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  const int64_t sms = detail::sm_count();
  auto go = [&](auto nc) {
    constexpr int NC = decltype(nc)::value;
    with_width(a.n, ceil_div(a.m, int64_t(64 * NC)), sms, [&](auto w) { launch<T, decltype(w)::value, NC>(a); });
  };
  if (a.m <= 64) go(std::integral_constant<int, 1>{});
  else go(std::integral_constant<int, 2>{});
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

}  // namespace rungs::sgemm::decode_wide
