// Rung 34, decode_fp8_wide: rung 31's fp8 decode product in rung 33's orientation; fp8 (any e4m3 /
// e5m2 pair), bf16 or float C, all three scalings; m > 64: rungs::Unsupported (rung 31 runs them).
// W stored k x n, A stored k x m and rows TMA cannot address are copied K-major and aligned first
// (pack::operands_fp8), as rung 31's.
// Adds over 31 decode_fp8: A's rows take wgmma's 64-row side and W's rows its N, fitted so one wave of
// unsplit blocks covers n, as rung 33 does for f16 / bf16: N = 56 rows of W in one consumer warpgroup,
// or 64, 112, 224 or 256 in two (32, 56, 112 or 128 each, the same 64 rows of A), the narrowest whose
// tiles fit one block per SM (n = 7168: 56, n = 28672: 224; 128 blocks on 132 SMs, where rung 31 runs
// 112 blocks of 128 rows split twice and 224 in 1.7 waves). 128 fp8 of k a stage (W's N x 128-byte box
// and A's box), as many stages as fit (6 at N = 224, 14 at 56). Each stage's four m64nNk32 sum into a
// partial accumulator p, waited for, the stage released, then added into the fp32 sums d (rung 31's
// promotion every 128 products): d += p for tensor and outer, d += a[i][kt] b[j / 128][kt] p for
// block128 (a thread's two rows of A read their a, its columns' one or two 128-row blocks of W their
// b, a k tile ahead). Tensor and outer scales multiply d in the epilogue; the store is rung 33's. A's
// box is m rounded up to 8 rows tall (the rest of the 64 rows zeroed once).
// Bounded by: reading W once; each warpgroup's wait for its own MMAs every k tile (the other
// warpgroup's MMAs fill it where there are two; at N = 56, n = 7168, the tensor core idles while the
// one warpgroup adds).
// Prediction: 28672 x 8192, outer, 60.6-62.2 us at m = 1..64 against rung 31's 63.3-67.6 (H200);
// measured: 62.2-63.3 us (1.31-1.55x cuBLASLt), 13-16 % slower than rung 31 at 7168 x 8192.
// Own kernel: on the skeleton (rung 33's one-wave schedule with two column parts, WholeTilesOf<N,
// ring, 64, 64>, a promotion part) it ran 1.06-1.20x this kernel's time at m <= 16 and 1.06x at
// m = 64 (H200, interleaved, every scaling, both shapes; cuBLAS's own rows within 4 %): its A box is
// 64 rows, zero-filled past m by TMA, where this kernel loads m rounded up to 8 (one ncu launch at
// 1 x 7168 x 8192: 27.1 against 23.5 us). scripts/experiments/ws_before_after.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <cuda_fp8.h>

#include <algorithm>

namespace rungs::sgemm::decode_fp8_wide {

namespace {

using detail::ceil_div;

using decode_wgmma::ROW;  // bytes per shared-memory row: one swizzle row, 128 fp8
constexpr int BK = 128;   // k per stage
constexpr int MAX_STAGES = 16;

template <int NW>
constexpr int threads() {  // NW consumer warpgroups, then the producer warp
  return 128 * NW + 32;
}
template <int NB, int NW>
constexpr int stage_bytes() {
  return (NB * NW + 64) * ROW;  // W's N x 128-byte box, then A's 64 rows
}
template <int NB, int NW>
constexpr int stages() {
  constexpr int fit = (227 * 1024 - 1024 - 2 * MAX_STAGES * 8) / stage_bytes<NB, NW>();
  return fit < MAX_STAGES ? fit : MAX_STAGES;
}
template <int NB, int NW>
constexpr int smem_bytes() {
  return stages<NB, NW>() * stage_bytes<NB, NW>() + 1024 /* alignment */ + 2 * stages<NB, NW>() * 8 /* barriers */;
}

template <typename TC>
struct Params {
  int m, n, k;
  float alpha, beta;
  TC* C;
  int64_t ldc;
  Scales scales;
  int a_rows;  // A's box: m rounded up to 8
  bool vec;    // two-element stores of C are aligned
};

// Block x: W rows N x .. (warpgroup w: NB rows from n0 + NB w), A's rows 0 .. m - 1, all of k. TA: A's
// fp8 type (wgmma's A operand), TW: W's (wgmma's B).
template <typename TA, typename TW, typename TC, int NB, int NW>
__global__ void __launch_bounds__(threads<NW>(), 1)
    wide_fp8_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a,
                    Params<TC> a) {
  constexpr int STAGES = stages<NB, NW>(), STAGE_BYTES = stage_bytes<NB, NW>(), N = NB * NW;
  static_assert(STAGES >= 3, "a pipeline");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  // A's rows past its box are never loaded: zero them once in every stage (they feed only rows of C
  // that are not stored, but wgmma reads them).
  for (int s = 0; s < STAGES; ++s) {
    uint32_t* rows = reinterpret_cast<uint32_t*>(smem + s * STAGE_BYTES + N * ROW + a.a_rows * ROW);
    for (int i = tid; i < (64 - a.a_rows) * ROW / 4; i += threads<NW>()) rows[i] = 0u;
  }
  detail::fence_proxy_async_shared();
  detail::init_pipeline_barriers(full, empty, STAGES, NW);  // empty: every consumer warpgroup
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) * N, KT = static_cast<int>(ceil_div(int64_t(a.k), int64_t(BK)));

  if (wg == NW) {  // the producer warp
    if (tid == 128 * NW) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      const uint32_t bytes = static_cast<uint32_t>((N + a.a_rows) * ROW);
      for (int i = 0; i < KT; ++i) {
        const int s = i % STAGES;
        if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
        unsigned char* st = smem + s * STAGE_BYTES;
        detail::mbar_expect_tx(&full[s], bytes);  // out-of-range parts of a box count: zero-filled
        detail::tma_load_2d(st, &map_w, i * BK, n0, &full[s]);
        detail::tma_load_2d(st + N * ROW, &map_a, i * BK, 0, &full[s]);
      }
    }
    return;
  }

  // Accumulator element d[4j + e] of warp w, lane 4g + q: row 16w + g + 8(e / 2) of A (C's row),
  // column 8j + 2q + e % 2 of this warpgroup's NB rows of W (C's column c0 + ..).
  const int t = tid % 128, lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const int m = a.m, n = a.n, c0 = n0 + wg * NB, r0 = 16 * w + g;
  const bool block = a.scales.kind == Scaling::block128;
  const float* __restrict__ sa = a.scales.a;
  const float* __restrict__ sb = a.scales.b;
  // block128: this thread's two rows of A (clamped into the array: a row past m multiplies products
  // that are never stored) and the one or two 128-row blocks of b its columns fall in (lo: c0's
  // block; hi: the next, clamped), their k tile's scales loaded a k tile ahead.
  const int nb_blocks = static_cast<int>(ceil_div(int64_t(n), int64_t(128)));
  const int nb_lo = min(c0 / 128, nb_blocks - 1), nb_hi = min(nb_lo + 1, nb_blocks - 1);
  const int split_col = (nb_lo + 1) * 128 - c0;  // columns >= split_col of this warpgroup use hi
  const float* __restrict__ sa0 = sa + int64_t(min(r0, m - 1)) * KT;
  const float* __restrict__ sa1 = sa + int64_t(min(r0 + 8, m - 1)) * KT;
  const float* __restrict__ sb_lo = sb + int64_t(nb_lo) * KT;
  const float* __restrict__ sb_hi = sb + int64_t(nb_hi) * KT;
  float na0 = 0.0f, na1 = 0.0f, nlo = 0.0f, nhi = 0.0f;  // the next k tile's scales
  if (block && KT > 0) na0 = __ldg(sa0), na1 = __ldg(sa1), nlo = __ldg(sb_lo), nhi = __ldg(sb_hi);

  float d[NB / 2], p[NB / 2];
#pragma unroll
  for (int i = 0; i < NB / 2; ++i) d[i] = 0.0f, p[i] = 0.0f;
  for (int i = 0; i < KT; ++i) {
    const int s = i % STAGES;
    const float a0 = na0, a1 = na1, blo = nlo, bhi = nhi;
    if (block && i + 1 < KT)
      na0 = __ldg(sa0 + i + 1), na1 = __ldg(sa1 + i + 1), nlo = __ldg(sb_lo + i + 1), nhi = __ldg(sb_hi + i + 1);
    detail::mbar_wait(&full[s], (i / STAGES) & 1);
    const unsigned char* Ws = smem + s * STAGE_BYTES + wg * NB * ROW;
    const unsigned char* As = smem + s * STAGE_BYTES + N * ROW;
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk)  // k32 steps of 32 bytes inside the 128-byte rows, both K-major
      detail::wgmma<NB, TA, TW>(p, detail::smem_desc(As + kk * 32, 16, 1024),
                                detail::smem_desc(Ws + kk * 32, 16, 1024), kk > 0);
    detail::wgmma_commit();
    detail::wgmma_wait<0>();  // the partial sum is complete and the stage read
    if (t == 0) detail::mbar_arrive(&empty[s]);
    if (block) {
#pragma unroll
      for (int j = 0; j < NB / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = 8 * j + 2 * q + e % 2;
          const float b = c < split_col ? blo : bhi;
          d[4 * j + e] = fmaf((e < 2 ? a0 : a1) * b, p[4 * j + e], d[4 * j + e]);
        }
    } else {
#pragma unroll
      for (int j = 0; j < NB / 2; ++j) d[j] += p[j];
    }
  }

  // The scales that do not depend on k.
  if (a.scales.kind == Scaling::tensor) {
    const float sc = __ldg(sa) * __ldg(sb);
#pragma unroll
    for (int j = 0; j < NB / 2; ++j) d[j] *= sc;
  } else if (a.scales.kind == Scaling::outer) {
    const float x0 = r0 < m ? __ldg(sa + r0) : 0.0f, x1 = r0 + 8 < m ? __ldg(sa + r0 + 8) : 0.0f;
#pragma unroll
    for (int j = 0; j < NB / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = c0 + 8 * j + 2 * q + e % 2;
        d[4 * j + e] *= (e < 2 ? x0 : x1) * (col < n ? __ldg(sb + col) : 0.0f);
      }
  }
  detail::store_acc_64xn<TC, NB>(d, a.C, a.ldc, 0, c0, m, n, a.alpha, a.beta, a.vec);
}

template <typename TA, typename TW, typename TC, int NB, int NW>
void launch(const ArgsF8& a) {
  constexpr int SMEM = smem_bytes<NB, NW>(), N = NB * NW;
  const int a_rows = static_cast<int>(std::min<int64_t>(64, ceil_div(a.m, int64_t(8)) * 8));
  // W (n x k) in N x 128 boxes, A (m x k) in a_rows x 128 boxes, both bytes with the 128-byte
  // swizzle, L2 fills promoted to 64 bytes as rung 31's.
  constexpr CUtensorMapL2promotion PROMO = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  const CUtensorMap map_w =
      detail::make_tensor_map_2d(a.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, a.n, a.k, a.ldb, N, BK, PROMO);
  const CUtensorMap map_a =
      detail::make_tensor_map_2d(a.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, a.m, a.k, a.lda, a_rows, BK, PROMO);
  const bool vec = reinterpret_cast<uintptr_t>(a.C) % (2 * sizeof(TC)) == 0 && a.ldc % 2 == 0;
  const Params<TC> p{static_cast<int>(a.m), static_cast<int>(a.n), static_cast<int>(a.k), a.alpha, a.beta,
                     static_cast<TC*>(a.C), a.ldc, a.scales, a_rows, vec};
  auto* kernel = &wide_fp8_kernel<TA, TW, TC, NB, NW>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  kernel<<<static_cast<unsigned>(ceil_div(a.n, int64_t(N))), threads<NW>(), SMEM, a.stream>>>(map_w, map_a, p);
  detail::check_launch("decode_fp8_wide");
}

// f(NB, NW) for the narrowest block width N = NB NW whose tiles fit one block per SM: 56 (one
// warpgroup), 64, 112, 224, else 256 (two).
template <class F>
void with_width(int64_t n, int64_t sms, F&& f) {
  using std::integral_constant;
  auto fits = [&](int64_t w) { return ceil_div(n, w) <= sms; };
  if (fits(56)) f(integral_constant<int, 56>{}, integral_constant<int, 1>{});
  else if (fits(64)) f(integral_constant<int, 32>{}, integral_constant<int, 2>{});
  else if (fits(112)) f(integral_constant<int, 56>{}, integral_constant<int, 2>{});
  else if (fits(224)) f(integral_constant<int, 112>{}, integral_constant<int, 2>{});
  else f(integral_constant<int, 128>{}, integral_constant<int, 2>{});
}

}  // namespace

// Operands TMA cannot read in place, or not K-major, are copied K-major and aligned first
// (pack::operands_fp8).
void run_fp8(const ArgsF8& user) {
  if (user.m > 64) detail::unsupported("decode_fp8_wide", "m <= 64 (one consumer warpgroup of 64 rows)");
  detail::require_sm90a("decode_fp8_wide");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsF8 a = pack::operands_fp8(user, keep_a, keep_b);
  const int64_t sms = detail::sm_count();
  with_fp8_types(a, [&](auto a8, auto w8, auto c) {  // W is the product's B
    with_width(a.n, sms, [&](auto nb, auto nw) {
      launch<decltype(a8), decltype(w8), decltype(c), decltype(nb)::value, decltype(nw)::value>(a);
    });
  });
}

}  // namespace rungs::sgemm::decode_fp8_wide
