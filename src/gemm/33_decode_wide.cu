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
// unread when beta == 0). A producer warp streams A's 64 NC x 64 boxes and W's N x 64 boxes (128-byte
// swizzle, 64-byte L2 promotion) through 5-12 stages (140-200 KB in flight). On the skeleton: rung
// 26's schedule with the product unswapped and one split, OneWaveOf<NC> (ws/split_k.cuh).
// Bounded by: reading W once, and A from L2: every block reads all of A's 64 NC rows per k tile, as
// many bytes as its N rows of W at N = 64 NC, so at m = 128 on 8192 x 28672 (N = 64) A's L2 traffic
// is twice W's; m <= 32 pads the 64-row side. Multicasting A's boxes in clusters along n, as cuBLAS
// does, measured slower (scripts/experiments/decode_wide/decode_wide.cu).
// Prediction: 28672 x 8192 at m = 64 1.04-1.05x rung 26's speed (H200); measured: 114.8-115.2 us against
// rung 26's 119.7-121.6 (1.01-1.02x cuBLAS); slower than rung 26 at m <= 32 and on 8192 x 28672.
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

#include "core/errors.hpp"

namespace rungs::sgemm::decode_wide {

namespace {

using detail::ceil_div;

template <int N, int NC>
using Parts = ws::Parts<ws::OneWaveOf<NC>, ws::WholeTilesOf<N, ws::split_k_ring<N, 64 * NC, 1, 12>(), 64, 64 * NC>,
                        ws::DirectStore>;

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
    with_width(a.n, ceil_div(a.m, int64_t(64 * NC)), sms, [&](auto w) {
      ws::launch<T, false, false, false, Parts<decltype(w)::value, NC>>(a, "decode_wide");
    });
  };
  if (a.m <= 64) go(std::integral_constant<int, 1>{});
  else go(std::integral_constant<int, 2>{});
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

std::vector<std::string> parts() { return ws::part_names<Parts<56, 1>>(); }

}  // namespace rungs::sgemm::decode_wide
