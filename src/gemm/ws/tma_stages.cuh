// The Mainloop parts' shared producer side: 128 x 256 tiles in stages of one 128-byte row of k
// (TMA, 128-byte swizzle), B shared by the cluster's two blocks (each loads its half and
// multicasts it). WholeTiles (15_wgmma_ws.cuh), Ragged (16_wgmma_narrow.cuh) and Paired
// (23_wgmma_balanced.cu) derive from TmaStages and say how wide a tile is multiplied (width: BN,
// or as wide as its columns), whether a narrow tile's stages hold two k tiles (two), and pick the
// consumer's loop width (multiply); the loads below and ws/k_loop.cuh's k loop serve all three.
#pragma once

#include "detail/gemm_tc.cuh"
#include "gemm/ws/k_loop.cuh"
#include "gemm/ws/parts.cuh"

#include <type_traits>

namespace rungs::sgemm::ws {

// The first column of op(B) of share r (SHARE columns) of the tile at column n0, and of its 64-column
// box j; HALVES (below): n / 2 + n0 / 2 for the second half, n0 / 2 for the first.
template <bool HALVES, int SHARE>
__device__ __forceinline__ int share_col(int n0, int n, int r) {
  if constexpr (HALVES) return r * (n / 2) + n0 / 2;
  else return n0 + r * SHARE;
}
template <bool HALVES>
__device__ __forceinline__ int box_col(int n0, int n, int j) {
  if constexpr (HALVES) return (j / 2) * (n / 2) + n0 / 2 + 64 * (j % 2);
  else return n0 + 64 * j;
}

// The producer's loads of piece p (one thread): each k tile's A (this block's rows) and B (the
// cluster's shared columns, each block loading its share and multicasting it), stage after stage
// through the ring; `it` counts the block's fills over all its pieces. HALVES (the gated product,
// ws/fused.cuh): a tile's 256 columns are 128 of op(B)'s first n / 2 (the gate) and the same 128 of
// its second n / 2 (the up projection), the cluster's block r loading half r.
template <class M, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased, bool HALVES = false>
__device__ __forceinline__ void load_piece(const Walk& walk, int p, const CUtensorMap& map_a, const CUtensorMap& map_b,
                                           const CUtensorMap& map_b64, unsigned char* smem, uint64_t* full, int n,
                                           uint32_t rank, int& it, WaitReleased&& wait_released) {
  // The mainloop's ring (RING stages of STAGE) and tile width (TN columns: TB bytes of B a k tile);
  // the schedule's clusters of CLUSTER blocks along m.
  constexpr int BK = bk<T>(), TN = M::TILE_N, RING = M::RING, STAGE = M::RING_STAGE_BYTES, TB = TN * ROW;
  constexpr int TM = M::TILE_M, TA = M::A_TILE_BYTES;  // the tile's rows, A's bytes a k tile
  static_assert(!M::pairs || TA == A_BYTES, "paired stages of 128-row tiles");
  constexpr int CLUSTER = Walk::CLUSTER;
  static_assert(!HALVES || (CLUSTER == 2 && TN == 256 && !M::ragged && !M::pairs), "halves: whole 256-column tiles");
  int m0, n0, kb, ke;
  bool solo;
  walk.locate(p, m0, n0, solo, kb, ke);
  // Only the B columns the tile multiplies (the same in both blocks of the cluster, but for a
  // short pair's).
  const int nb = M::width(n - n0);
  const bool two = M::two(nb, solo);
  const int b_bytes = two ? B_PAIR : B_MN ? nb / 64 * BK * ROW : (nb > TN / CLUSTER ? TB : TB / CLUSTER);
  for (int kt = kb; kt < ke; kt += two ? 2 : 1, ++it) {
    const int s = it % RING;
    wait_released(it);
    unsigned char* st = smem + s * STAGE;
    uint64_t* bar = &full[s];
    const int tiles = two && kt + 1 < ke ? 2 : 1;  // k tiles in this stage
    // A (own) + B from both blocks, per k tile
    detail::mbar_expect_tx(bar, tiles * (TA + (M::ragged ? b_bytes : TB)));
    for (int h = 0; h < tiles; ++h) {  // k tile kt + h: A at st + h TA, B after both A's
      const int k0 = (kt + h) * BK;
      unsigned char* sa = st + h * TA;
      if constexpr (A_MN) {  // boxes of BK k-rows x 128 bytes of m (64 16-bit, 32 tf32 elements)
        constexpr int MN_BOX = ROW / int(sizeof(T));
        for (int j = 0; j < TM / MN_BOX; ++j) detail::tma_load_2d(sa + j * BK * ROW, &map_a, m0 + MN_BOX * j, k0, bar);
      } else {
        detail::tma_load_2d(sa, &map_a, k0, m0, bar);
      }
      unsigned char* sb = st + (two ? 2 * TA + h * B_PAIR : TA);
      constexpr uint16_t all = (1u << CLUSTER) - 1;
      if (!B_MN && two) {  // 64 rows of n, k-contiguous, from block 0 to both
        if (rank == 0) detail::tma_load_2d_multicast(sb, &map_b64, k0, n0, bar, all);
      } else if (solo || CLUSTER == 1) {  // a short pair, or no cluster: all of its own B, no multicast
        if constexpr (B_MN) {
          for (int j = 0; j < TN / 64 && 64 * j < nb; ++j)
            detail::tma_load_2d(sb + j * BK * ROW, &map_b, box_col<HALVES>(n0, n, j), k0, bar);
        } else {
          for (int r = 0; r < CLUSTER && r * (TN / CLUSTER) < nb; ++r)
            detail::tma_load_2d(sb + r * (TB / CLUSTER), &map_b, k0, share_col<HALVES, TN / CLUSTER>(n0, n, r), bar);
        }
      } else if constexpr (B_MN) {  // this block's TN / 64 / CLUSTER boxes of BK k-rows x 64 n
        constexpr int per = TN / 64 / CLUSTER;
        for (int j = int(rank) * per; j < int(rank + 1) * per && 64 * j < nb; ++j)
          detail::tma_load_2d_multicast(sb + j * BK * ROW, &map_b, box_col<HALVES>(n0, n, j), k0, bar, all);
      } else if (!M::ragged || int(rank) * (TN / CLUSTER) < nb) {  // this block's TN / CLUSTER rows of n
        detail::tma_load_2d_multicast(sb + rank * (TB / CLUSTER), &map_b, k0, share_col<HALVES, TN / CLUSTER>(n0, n, int(rank)),
                                      bar, all);
      }
    }
  }
}

// The mainloops of 128 x TN tiles in a ring of RING_ stages, each one 128-byte row of k (TMA, 128-byte
// swizzle): WholeTiles, Ragged and Paired (128 x 256, 4 stages) and rung 18's 128 x 128 tiles share
// the tensor maps (A, B, and B in boxes of 64 rows for Paired), the loads above and the k loop of
// ws/k_loop.cuh (Self: the mainloop part itself).
template <int TN, int RING_, int FILL = 256, int TM = BM>
struct TmaStagesOf {
  static constexpr int TILE_M = TM, TILE_N = TN, RING = RING_;
  static constexpr int A_TILE_BYTES = TM * ROW, RING_STAGE_BYTES = A_TILE_BYTES + TN * ROW;
  static_assert(FILL == 64 || FILL == 128 || FILL == 256, "an L2 fill size TMA promotes to");
  static_assert(TM % 64 == 0 && TM <= 256, "whole 64-row blocks, one TMA box");
  static constexpr int ACC = TN / 2;  // accumulator registers per consumer thread (64 x TN fp32)
  struct Maps {
    CUtensorMap a, b, b64;  // b64: Paired's narrow tiles (B k-contiguous)
  };
  template <class Self, int CLUSTER, typename T, bool A_MN, bool B_MN>
  static Maps make_maps(const typename Problem<T>::Args& a) {
    using Pr = Problem<T>;
    constexpr int BK = bk<T>(), E_SIZE = int(sizeof(typename Pr::A));
    static_assert(sizeof(typename Pr::A) == sizeof(typename Pr::B), "A and B elements of one size");
    const auto type = detail::tma_operand_type<typename Pr::A>(), type_b = detail::tma_operand_type<typename Pr::B>();
    Maps m;
    constexpr CUtensorMapL2promotion fill = FILL == 64    ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                            : FILL == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                                          : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    m.a = A_MN ? detail::make_tensor_map_2d(a.A, type, E_SIZE, a.k, a.m, a.lda, BK, ROW / E_SIZE, fill)
               : detail::make_tensor_map_2d(a.A, type, E_SIZE, a.m, a.k, a.lda, TM, BK, fill);
    m.b = B_MN ? detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.k, a.n, a.ldb, BK, ROW / E_SIZE, fill)
               : detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.n, a.k, a.ldb, TN / CLUSTER, BK, fill);
    // Self::pairs, B k-contiguous: boxes of 64 rows of n for the narrow tiles' paired stages.
    m.b64 = Self::pairs && !B_MN ? detail::make_tensor_map_2d(a.B, type_b, E_SIZE, a.n, a.k, a.ldb, 64, BK, fill)
                                 : CUtensorMap{};
    return m;
  }
  // The maps the producer will read, fetched while the barriers are set up (thread 0).
  template <class Self, bool B_MN>
  static __device__ __forceinline__ void prefetch(const Maps& maps) {
    detail::tma_prefetch(&maps.a), detail::tma_prefetch(&maps.b);
    if (Self::pairs && !B_MN) detail::tma_prefetch(&maps.b64);
  }
  // The consumer's per-stage hook where the accumulation sums each stage apart (SumPerStage): the
  // stage's MMAs of consumer cw (the schedule's S::stage, or tf32's register form for an m-contiguous
  // A) into t, zeroed first: a fresh sum.
  template <class S, typename T, bool A_MN, bool B_MN>
  static __device__ __forceinline__ void sum_stage(float (&t)[ACC], const unsigned char* st, int cw) {
    clear_acc(t);
    if constexpr (std::is_same_v<T, float> && A_MN) {
      uint32_t f[16];
      detail::load_a_frags_mn_tf32(f, st, cw);
      detail::wgmma_fence();
      detail::wgmma_stage_64xn_rs<TN>(t, f, st + A_TILE_BYTES);
    } else {
      detail::wgmma_fence();
      S::template stage<T, A_MN, B_MN, TN>(t, st, st + A_TILE_BYTES, cw);
    }
  }
  template <class Self, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased>
  static __device__ __forceinline__ void load(const Walk& walk, int p, const Maps& maps, unsigned char* smem,
                                              uint64_t* full, int n, uint32_t rank, int& it,
                                              WaitReleased&& wait_released) {
    load_piece<Self, T, A_MN, B_MN>(walk, p, maps.a, maps.b, maps.b64, smem, full, n, rank, it, wait_released);
  }
};
using TmaStages = TmaStagesOf<BN, STAGES>;
static_assert(TmaStages::RING_STAGE_BYTES == STAGE_BYTES, "128 x 256 tiles: the stage of ws/parts.cuh");

}  // namespace rungs::sgemm::ws
