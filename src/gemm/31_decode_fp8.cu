// Rung 31, decode_fp8: rung 26's decode design for fp8 weights and activations (e4m3 or e5m2 each, any
// pair), bf16 or float C, all three scalings; m > 128: rungs::Unsupported. W stored k x n, A stored
// k x m and rows TMA cannot address are copied K-major and aligned first (pack::operands_fp8: wgmma
// reads 8-bit operands K-major only), a copy of W that costs more than the product at decode shapes.
// Adds over 26 decode_wgmma, in the Accumulation, PromoteSwapped (below): rung 29's promotion every k
// tile in the swapped product. Each stage's four wgmma.m64nNk32 (N = m rounded up as in rung 26, a
// kernel per N and type pair) sum into a partial accumulator p, waited for, the stage released, then
// d += p (tensor, outer) or d += a[i][kt] b[n0 / 128][kt] p (block128: the tile's 128 rows of W are
// one block of b). At N >= 32 the k tile's N products a[i][kt] b are staged once per block in shared
// memory, a k tile ahead; at N <= 16 each thread loads its own (the staging's barrier costs more
// there). Tensor and outer scales multiply d before the transposed store or the split sums. The
// rest is rung 26's on the skeleton: SplitKOf<2> (128 rows of W over two consumer warpgroups, a
// producer warp, split-K in a cluster), WholeTilesOf<N, ring, 64, 128> (a stage: W's 128 x 128-byte
// box, 128 fp8 of k, and A's N x 128-byte box; 13 / 12 / 11 / 9 / 7 stages at N = 8 / 16 / 32 / 64 /
// 128; 64-byte L2 fills), DirectStore's C^T store.
// Bounded by: reading W once (a bare read of 58.7 MB reaches 85 % of DRAM on the H100, 72-78 % on the
// H200); the whole-tile grid (112 blocks at n = 7168, 1.7 waves at 28672); the split sums' exchange;
// each consumer's wait for its MMAs every k tile (~40 % of a k tile's DRAM time at N = 128, hidden).
// Prediction: within 0.97-1.03x of its own kernel (the same tiles, ring, splits and promotion; 224
// registers a consumer thread under the 288-thread launch bounds where the own kernel's setmaxnreg
// gave 232).
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

#include "core/errors.hpp"

#include <cuda_fp8.h>

namespace rungs::sgemm::ws {

// Accumulation (rung 31): the promotion of the swapped fp8 product C^T = W A^T. The kernel's rows are
// W's, whose block128 scales (b) hold one per 128 rows and k tile; its columns are A's rows, one scale
// (a) each per k tile; tensor and outer scales likewise transposed. A consumer's stage: its 64 rows of
// W times the tile's N columns into the partial sum p, waited for, the stage released, then promoted
// into d with the k tile's scales.
struct PromoteSwapped {
  // block128 at N <= SCALES_IN_REGISTERS: each thread reads the scales of its N / 4 columns into
  // registers before the stage's wait. Larger N: the k tile's N products a[c][kt] b[kt] are staged
  // once per block in shared memory instead, consumer thread c < N loading column c's a k tile ahead
  // (two buffers, one barrier of the consumers a k tile): a thread's N / 4 loads a k tile would take
  // longer than the tile's DRAM time at N = 128.
  static constexpr int SCALES_IN_REGISTERS = 16;
  template <class M, class S, typename T, bool A_MN, bool B_MN, int R, class Walk, class Epi, class Ctx, class Release>
  static __device__ __forceinline__ void multiply(float (&d)[R], const Walk& walk, int piece, int t, int kb, int ke,
                                                  const typename Problem<T>::Args& a, const unsigned char* smem,
                                                  uint64_t* full, int cw, int& it, Epi&, const Ctx& ctx,
                                                  Release&& release) {
    using Pr = Problem<T>;
    constexpr int N = M::TILE_N, RING = M::RING, STAGE = M::RING_STAGE_BYTES, J = N / 8;
    constexpr int CONSUMER_THREADS = 2 * M::TILE_M;  // a warpgroup per 64 rows
    static_assert(Pr::fp8 && !A_MN && !B_MN, "fp8, both operands K-major");
    static_assert(R == N / 2 && M::TILE_M == 128, "a 128-row tile: one 128-row block of W's scales");
    constexpr bool STAGED = N > SCALES_IN_REGISTERS;
    static_assert(RING * STAGE + 1024 + (2 * RING + 2 * CONSUMERS + S::BARRIERS) * 8 + (STAGED ? 2 * N * 4 : 4) <=
                      227 * 1024,
                  "the ring and the staged scales fit a Hopper block's 227 KB");
    int m0, n0;
    bool solo;
    walk.tile(piece, t, m0, n0, solo);
    const int tid = ctx.tid, q = tid % 4;
    const int cols = static_cast<int>(a.n), KT = static_cast<int>(ceil_div(a.k, int64_t(128)));
    const bool block = a.scales.kind == Scaling::block128;
    const float* __restrict__ sa = a.scales.a;
    const float* __restrict__ sb_tile = a.scales.b + (m0 / 128) * KT;  // this tile's 128-row block of b
    // A column past n (a row of A past m) reads the last one's scale: its products are not stored.
    const float* __restrict__ sa_col = sa + min(n0 + tid, cols - 1) * KT;  // read by tid < N only (STAGED)
    __shared__ float staged[2][STAGED ? N : 1];
    float p[R];
    clear_acc(p);
    float next = 0.0f;
    if (STAGED && block && tid < N && kb < ke) next = __ldg(sa_col + kb) * __ldg(sb_tile + kb);
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int i = kt - kb, s = it % RING;
      float sc[STAGED ? 1 : 2 * J];
      if (block) {
        if constexpr (STAGED) {
          if (tid < N) staged[i & 1][tid] = next;
          detail::named_barrier(2, CONSUMER_THREADS);  // this k tile's scales stored; all reads of kt - 2's done
          if (tid < N && kt + 1 < ke) next = __ldg(sa_col + kt + 1) * __ldg(sb_tile + kt + 1);
        } else {
          const float b = __ldg(sb_tile + kt);
          const float* __restrict__ sak = sa + kt;  // column c's at sak[c * KT] (m <= 128: fits an int)
#pragma unroll
          for (int j = 0; j < J; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) sc[2 * j + e] = b * __ldg(sak + min(n0 + 8 * j + 2 * q + e, cols - 1) * KT);
        }
      }
      detail::mbar_wait(&full[s], (it / RING) & 1);
      const unsigned char* Ws = smem + s * STAGE;
      detail::wgmma_fence();
      S::template stage<T, false, false, N>(p, Ws, Ws + M::A_TILE_BYTES, cw, false);
      detail::wgmma_commit();
      detail::wgmma_wait<0>();  // the partial sum is complete and the stage read
      release(s);
      // p[4j + e]: row 16w + g + 8 (e / 2) of the consumer's 64, column 8j + 2q + e % 2.
      if (block) {
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float x;
            if constexpr (STAGED) x = staged[i & 1][8 * j + 2 * q + e];
            else x = sc[2 * j + e];
            d[4 * j + e] = fmaf(x, p[4 * j + e], d[4 * j + e]);
            d[4 * j + 2 + e] = fmaf(x, p[4 * j + 2 + e], d[4 * j + 2 + e]);
          }
      } else {
#pragma unroll
        for (int r = 0; r < R; ++r) d[r] += p[r];
      }
    }
  }
  // The scales that do not depend on k, on the consumer's rows row0 .. (W's) and the tile's columns
  // col0 .. (A's rows): tensor a[0] b[0]; outer b[row] a[col]. Rows past m, columns past n read none.
  template <typename T, int R>
  static __device__ __forceinline__ void scale(float (&d)[R], const typename Problem<T>::Args& a, int row0,
                                               int col0) {
    const float* __restrict__ sa = a.scales.a;
    const float* __restrict__ sb = a.scales.b;
    if (a.scales.kind == Scaling::tensor) {
      const float s = __ldg(sa) * __ldg(sb);
#pragma unroll
      for (int r = 0; r < R; ++r) d[r] *= s;
    } else if (a.scales.kind == Scaling::outer) {
      const int t = static_cast<int>(threadIdx.x % 128), w = t / 32, g = (t % 32) / 4, q = t % 4;
      const int rows = static_cast<int>(a.m), cols = static_cast<int>(a.n), r0 = row0 + 16 * w + g;
      const float b0 = r0 < rows ? __ldg(sb + r0) : 0.0f, b1 = r0 + 8 < rows ? __ldg(sb + r0 + 8) : 0.0f;
#pragma unroll
      for (int j = 0; j < R / 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = col0 + 8 * j + 2 * q + e;
          const float x = c < cols ? __ldg(sa + c) : 0.0f;
          d[4 * j + e] *= x * b0, d[4 * j + 2 + e] *= x * b1;
        }
    }
  }
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::decode_fp8 {

namespace {

template <int N>
using Parts = ws::Parts<ws::SplitKOf<2>, ws::WholeTilesOf<N, ws::split_k_ring<N, 128, 1, 16>(), 64, 128>,
                        ws::DirectStore, ws::PromoteSwapped>;

}  // namespace

void run_fp8(const ArgsF8& user) {
  if (user.m > 128) detail::unsupported("decode_fp8", "m <= 128");
  detail::require_sm90a("decode_fp8");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsF8 a = pack::operands_fp8(user, keep_a, keep_b);  // ta == N, tb == T, TMA-addressable
  with_fp8_types(a, [&](auto a8, auto w8, auto c) {  // W is the product's B
    using TA8 = decltype(a8);
    using TW8 = decltype(w8);
    using TC = decltype(c);
    // C^T = W A^T: W the kernel's A, A its B (both n x k / m x k, K-major), the scales as given.
    const ws::ArgsFp8<TW8, TA8, TC> s{Trans::N, Trans::T, a.n, a.m, a.k, a.alpha,
                                      static_cast<const TW8*>(a.B), a.ldb,
                                      static_cast<const TA8*>(a.A), a.lda,
                                      a.beta, static_cast<TC*>(a.C), a.ldc, a.stream, a.scales};
    decode_wgmma::with_n(a.m, [&](auto nn) {
      ws::launch<ws::Fp8<TW8, TA8, TC>, false, false, true, Parts<decltype(nn)::value>>(s, "decode_fp8");
    });
  });
}

std::vector<std::string> parts() {
  return ws::part_names<Parts<128>>();
}

}  // namespace rungs::sgemm::decode_fp8
