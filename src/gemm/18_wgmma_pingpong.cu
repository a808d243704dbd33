// Rung 18, wgmma_pingpong: the skeleton with the ping-pong schedule (sm_90a); f16 and bf16, any
// transpose (operands TMA cannot read in place copied aligned, as in rung 15); tf32: Unsupported.
// Adds over 17 wgmma_tma_store: the Schedule PingPong (below). Each consumer warpgroup owns whole
// tiles and the two take the block's tiles in turn: consumer 0 runs the mainloop of the block's
// tiles 0, 2, 4..., consumer 1 of tiles 1, 3, 5... Only one consumer issues MMAs at a time (an
// mbarrier per consumer hands the turn on once a consumer has issued its tile's last k tile), so
// while one stores its tile the other keeps the tensor core busy: the epilogue is hidden instead
// of stalling both consumers. A consumer holds 128 x 128 fp32 sums at most (two m64n128 wgmmas per
// k16 into 128 registers), so the mainloop is rung 17's at that width: WholeTilesOf<128, 6>, six
// stages of 32 KB, each block loading half of B's 128 rows and multicasting it.
// Bounded by: feeding the tensor core from one warpgroup at a time, and a 128 x 128 tile's operand
// traffic (1.5x the shared-memory reads per MMA of rung 17's 128 x 256; ncu finds no unit saturated).
// Prediction: 1.02-1.05x cuBLAS at 4096^3 (the epilogue hidden); measured 0.80x bf16 on the H100:
// a miss, kept as the measured step (docs/gemm_tc.md).
#include "gemm/17_wgmma_tma_store.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// Schedule: RoundRobin's tiles in its order, each tile taken whole by one consumer, the two in turn.
struct PingPong : RoundRobin {
  static constexpr int SLOT_READERS = 1;  // a stage is read by the one consumer whose tile it holds
  static constexpr int BARRIERS = 2;      // turn[w]: consumer w may issue its next tile's MMAs
  static __device__ __forceinline__ void init_barriers(uint64_t* turn, int tid) {
    if (tid == 0) {
      detail::mbar_init(&turn[0], 1), detail::mbar_init(&turn[1], 1);
      detail::mbar_init_fence();
    }
  }
  // Rows 64 h .. 64 h + 63 of a consumer's 128 x 128 tile: registers 64 h .. 64 h + 63 of d.
  using Rows = float[64];
  static __device__ __forceinline__ Rows& rows(float (&d)[128], int h) { return *reinterpret_cast<Rows*>(d + 64 * h); }
  // One stage's MMAs of a consumer: all 128 rows of A (two 64-row halves) against N columns of B.
  template <typename T, bool A_MN, bool B_MN, int N>
  static __device__ __forceinline__ void stage(float (&d)[128], const unsigned char* As, const unsigned char* Bs,
                                               int) {
    detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(rows(d, 0), As, Bs, 0);
    detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(rows(d, 1), As, Bs, 1);
  }
  // The epilogue's in_mainloop hook, and the turn handed on once the tile's last k tile's MMAs are
  // issued: the other consumer's MMAs queue behind them.
  template <class Epi>
  struct HandOn {
    Epi& epi;
    uint64_t* turn;
    int cw, last;
    template <class Ctx>
    __device__ __forceinline__ void in_mainloop(const Ctx& x, int i) {
      epi.in_mainloop(x, i);
      if (i == last && x.tid % 128 == 0) detail::mbar_arrive(&turn[1 - cw]);
    }
  };
  template <class S, class M, class Ac, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx,
            class Release>
  static __device__ __forceinline__ void consume(const Walk& walk, const typename Problem<T>::Args& a,
                                                 const unsigned char* smem, uint64_t* full, uint64_t* turn, int cw,
                                                 Epi& epi, const Ctx& ctx, Release&& release) {
    static_assert(M::TILE_N == 128 && !M::pairs && !M::ragged, "whole 128 x 128 tiles (128 registers of sums)");
    static_assert(!Problem<T>::fp8 && !std::is_same_v<T, float>, "16-bit operands");
    int it = 0;  // the ring's stages before this consumer's next tile (the other consumer's count too)
    unsigned phase = 0;
    float d[128];
    for (int p = 0; p < walk.count; ++p) {
      int t = 0, kb = 0, ke = 0;
      walk.piece(p, t, kb, ke);
      if (p % CONSUMERS != cw) {  // the other consumer's tile: its stages pass this consumer by
        it += ke - kb;
        continue;
      }
      // The other consumer has issued its tile's MMAs (consumer 0 starts at once). This also keeps
      // the full barriers' parity waits within one phase: the stages before `it` have all landed.
      if (p > 0) {
        detail::mbar_wait(&turn[cw], phase);
        phase ^= 1;
      }
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      HandOn<Epi> hand{epi, turn, cw, ke - kb - 1};
      Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, a, smem, full, cw, it, hand, ctx, release);
      if (ke == kb && ctx.tid % 128 == 0) detail::mbar_arrive(&turn[1 - cw]);  // no k tiles, no MMAs
      epi.after_mainloop(ctx, ke - kb);
      auto store_tile = [&] {
        int m0, n0;
        bool solo;
        walk.tile(p, t, m0, n0, solo);
        epi.template store_rows<M::TILE_N>(ctx, rows(d, 0), m0, n0);
        epi.template store_rows<M::TILE_N>(ctx, rows(d, 1), m0 + 64, n0);
      };
      walk.finish(d, kb, ke, cw, store_tile);
    }
    Ac::after_tiles(cw, it);
  }
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_pingpong {

using Parts = ws::Parts<ws::PingPong, ws::WholeTilesOf<128, 6>, ws::TmaStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_pingpong"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_pingpong"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_pingpong
