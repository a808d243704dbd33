// Rung 34, decode_fp8_wide: rung 33's decode product in cuBLAS's orientation for fp8 weights and
// activations (e4m3 / e5m2, any pair), bf16 or float C, all three scalings; m > 64:
// rungs::Unsupported (rung 31 runs them). W stored k x n, A stored k x m and rows TMA cannot address
// are copied K-major and aligned first (pack::operands_fp8), as rung 31's.
// Adds over 33 decode_wide, in the Accumulation, PromoteNarrow (below): rung 31's promotion every k
// tile in this orientation. Each stage's four wgmma.m64nNk32 sum into a partial accumulator p, waited
// for, the stage released, then added into the fp32 sums d: d += p for tensor and outer, d += a[i][kt]
// b[j / 128][kt] p for block128 (a thread's two rows of A read their a, its columns' one or two
// 128-row blocks of W their b, a k tile ahead). Tensor and outer scales multiply d before the store.
// The rest is rung 33's on the skeleton, for A's 64 rows at most: OneWaveOf<1, COLS> (W's N rows of
// the tile the narrowest of 56 in one consumer warpgroup, or 64, 112, 224 or 256 in two, COLS = 2,
// 32 to 128 each, whose tiles fit one block per SM: n = 7168: 56, n = 28672: 224; 128 blocks on 132
// SMs, where rung 31 runs 112 blocks of 128 rows split twice and 224 in 1.7 waves), WholeTilesOf<N,
// ring, 64, 64> (128 fp8 of k a stage, as many stages as fit: 6 at N = 224, 14 at 56).
// Bounded by: reading W once; each warpgroup's wait for its own MMAs every k tile (the other
// warpgroup's MMAs fill it where there are two; at N = 56, n = 7168, the tensor core idles while the
// one warpgroup adds).
// Prediction: within 0.97-1.03x of its own kernel (the same tiles, stages and promotion; A's box 64
// rows zero-filled by TMA past m, where the own kernel loaded m rounded up to 8 and zeroed the rest).
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/28_wgmma_fp8.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

#include "core/errors.hpp"

#include <cuda_fp8.h>

namespace rungs::sgemm::ws {

// Accumulation (rung 34): the fp8 product's promotion at a consumer's width (2R columns of the tile,
// up to 128: the schedule's column part). A stage: the consumer's 64 rows of A times its columns into
// the partial sum p, waited for, the stage released, then promoted into d with the k tile's block128
// scales: a thread's rows r0 and r0 + 8 of A, and the 128-row block of W (the product's columns) its
// columns fall in, lo below split_col and hi from it.
struct PromoteNarrow {
  template <class M, class S, typename T, bool A_MN, bool B_MN, int R, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[R], const Walk& walk, int piece, int t, int kb, int ke,
                                                  const typename Problem<T>::Args& a, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi&, const Ctx& ctx,
                                                  Release&& release) {
    constexpr int N = M::TILE_N, RING = M::RING, STAGE = M::RING_STAGE_BYTES;
    static_assert(Problem<T>::fp8 && !A_MN && !B_MN, "fp8, both operands K-major");
    static_assert(2 * R <= 128, "a consumer's columns within two 128-column blocks");
    int m0, n0;
    bool solo;
    walk.tile(piece, t, m0, n0, solo);
    const int tt = ctx.tid % 128, w = tt / 32, g = (tt % 32) / 4, q = tt % 4;
    const int m = static_cast<int>(a.m), n = static_cast<int>(a.n), KT = static_cast<int>(ceil_div(a.k, int64_t(128)));
    const int r0 = m0 + S::row0(cw) + 16 * w + g, c0 = n0 + S::col0(cw, N);
    const bool block = a.scales.kind == Scaling::block128;
    // Clamped into the arrays: a row past m or a block past n multiplies products never stored.
    const int nb_blocks = static_cast<int>(ceil_div(int64_t(n), int64_t(128)));
    const int nb_lo = min(c0 / 128, nb_blocks - 1), nb_hi = min(nb_lo + 1, nb_blocks - 1);
    const int split_col = (nb_lo + 1) * 128 - c0;  // the consumer's columns >= split_col use hi
    const float* __restrict__ sa0 = a.scales.a + int64_t(min(r0, m - 1)) * KT;
    const float* __restrict__ sa1 = a.scales.a + int64_t(min(r0 + 8, m - 1)) * KT;
    const float* __restrict__ sb_lo = a.scales.b + int64_t(nb_lo) * KT;
    const float* __restrict__ sb_hi = a.scales.b + int64_t(nb_hi) * KT;
    float na0 = 0.0f, na1 = 0.0f, nlo = 0.0f, nhi = 0.0f;  // the next k tile's scales
    if (block && kb < ke) na0 = __ldg(sa0 + kb), na1 = __ldg(sa1 + kb), nlo = __ldg(sb_lo + kb), nhi = __ldg(sb_hi + kb);
    float p[R];
    clear_acc(p);
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int s = it % RING;
      const float a0 = na0, a1 = na1, blo = nlo, bhi = nhi;
      if (block && kt + 1 < ke)
        na0 = __ldg(sa0 + kt + 1), na1 = __ldg(sa1 + kt + 1), nlo = __ldg(sb_lo + kt + 1), nhi = __ldg(sb_hi + kt + 1);
      detail::mbar_wait(&full[s], (it / RING) & 1);
      const unsigned char* As = smem + s * STAGE;
      detail::wgmma_fence();
      S::template stage<T, false, false, N>(p, As, As + M::A_TILE_BYTES, cw, false);
      detail::wgmma_commit();
      detail::wgmma_wait<0>();  // the partial sum is complete and the stage read
      release(s);
      // p[4j + e]: row r0 + 8 (e / 2), the consumer's column 8j + 2q + e % 2.
      if (block) {
#pragma unroll
        for (int j = 0; j < R / 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = 8 * j + 2 * q + e % 2;
            const float b = c < split_col ? blo : bhi;
            d[4 * j + e] = fmaf((e < 2 ? a0 : a1) * b, p[4 * j + e], d[4 * j + e]);
          }
      } else {
#pragma unroll
        for (int j = 0; j < R; ++j) d[j] += p[j];
      }
    }
  }
  // Tensor and outer scales (block128's are applied above).
  template <typename T, int R>
  static __device__ __forceinline__ void scale(float (&d)[R], const typename Problem<T>::Args& a, int row0,
                                               int col0) {
    scale_acc_fp8(d, a, row0, col0);
  }
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::decode_fp8_wide {

namespace {

using detail::ceil_div;

// N rows of W a tile in COLS consumer warpgroups, A's 64 rows; up to 16 stages, 64-byte L2 fills.
template <int N, int COLS>
using Parts = ws::Parts<ws::OneWaveOf<1, COLS>, ws::WholeTilesOf<N, ws::split_k_ring<N, 64, 1, 16>(), 64, 64>,
                        ws::DirectStore, ws::PromoteNarrow>;

// f(N, COLS) for the narrowest tile width N whose tiles fit one block per SM: 56 (one warpgroup), 64,
// 112, 224, else 256 (two).
template <class F>
void with_width(int64_t n, int64_t sms, F&& f) {
  using std::integral_constant;
  auto fits = [&](int64_t w) { return ceil_div(n, w) <= sms; };
  if (fits(56)) f(integral_constant<int, 56>{}, integral_constant<int, 1>{});
  else if (fits(64)) f(integral_constant<int, 64>{}, integral_constant<int, 2>{});
  else if (fits(112)) f(integral_constant<int, 112>{}, integral_constant<int, 2>{});
  else if (fits(224)) f(integral_constant<int, 224>{}, integral_constant<int, 2>{});
  else f(integral_constant<int, 256>{}, integral_constant<int, 2>{});
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
    using TA8 = decltype(a8);
    using TW8 = decltype(w8);
    using TC = decltype(c);
    const ws::ArgsFp8<TA8, TW8, TC> k{a.ta, a.tb, a.m, a.n, a.k, a.alpha,
                                      static_cast<const TA8*>(a.A), a.lda,
                                      static_cast<const TW8*>(a.B), a.ldb,
                                      a.beta, static_cast<TC*>(a.C), a.ldc, a.stream, a.scales};
    with_width(a.n, sms, [&](auto nn, auto cols) {
      ws::launch<ws::Fp8<TA8, TW8, TC>, false, false, false, Parts<decltype(nn)::value, decltype(cols)::value>>(
          k, "decode_fp8_wide");
    });
  });
}

std::vector<std::string> parts() {
  return ws::part_names<Parts<224, 2>>();
}

}  // namespace rungs::sgemm::decode_fp8_wide
