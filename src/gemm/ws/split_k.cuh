// The decode rungs' schedule on the skeleton, SplitKOf<W, OCC> (rung 26; rung 32 at two blocks per
// SM): the product swapped (C^T = W A^T: W's rows on wgmma's 64-row side, m as the tile's width), one
// tile per cluster with its k tiles split over the cluster's blocks and the splits' fp32 sums added
// in split order through distributed shared memory (26_decode_wgmma.cuh: split_count, stash_sums,
// add_split_sums); and the ring such a tile's stages fill.
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/cooperative.cuh"

#include <algorithm>
#include <cstdint>

namespace rungs::sgemm::ws {

// Tiles of TM x N: the ring as deep as the shared memory of one of OCC blocks per SM holds (227 KB
// alone; 228 KB / OCC less the 1 KB the system keeps per block), at most MAX stages.
template <int N, int TM, int OCC = 1, int MAX = 8>
constexpr int split_k_ring() {
  constexpr int budget = decode_wgmma::smem_budget<OCC>();
  constexpr int stage = TM * ROW + N * ROW, fit = (budget - 1024 - 2 * MAX * 8 - 2 * CONSUMERS * 8) / stage;
  return fit < MAX ? fit : MAX;
}

// The decode product C = A W^T as the skeleton runs it, C^T = W A^T: W the kernel's A (K-major, or
// MN-major where W is stored k x n, tb == N), A (m x k, k-contiguous) its B, C^T its C (C_T).
template <typename T>
ArgsT<T> transposed(const ArgsT<T>& a) {
  ArgsT<T> s = a;
  s.m = a.n, s.n = a.m, s.A = a.B, s.lda = a.ldb, s.B = a.A, s.ldb = a.lda;
  s.ta = a.tb == Trans::T ? Trans::N : Trans::T, s.tb = Trans::T;
  return s;
}

// f(std::integral_constant<int, TM>{}): the decode rungs' tile rows of W at wgmma width N: 256 (four
// consumer warpgroups) where N >= 64 and 256-row tiles alone give half the SMs a whole tile (A's
// N x 64 box, as large as W's 128-row box at N = 128, is then read once per 256 rows of W), else
// 128 (twice the tiles, half the splits).
template <int N, typename T, class F>
void with_tile_rows(const ArgsT<T>& a, F&& f) {
  if constexpr (N >= 64) {
    if (2 * detail::ceil_div(a.n, int64_t(256)) * detail::ceil_div(a.m, int64_t(N)) >= detail::sm_count())
      return f(std::integral_constant<int, 256>{});
  }
  f(std::integral_constant<int, 128>{});
}

// Schedule: one tile of W row groups of 64 (the mainloop's TILE_M = 64 W) per cluster, its k tiles
// split over the cluster's blocks (a cluster of one where the tiles fill the slots: OCC blocks per
// SM); a consumer warpgroup per row group, a producer warp.
template <int W, int OCC = 1>
struct SplitKOf : Cooperative {
  static constexpr int BLOCKS_PER_SM = OCC;             // resident blocks an SM holds (launch bounds, stages)
  static constexpr int TILE_M = 64 * W;                 // the tile's rows (of W)
  static constexpr int WARPGROUPS = W;                  // the consumers
  static constexpr int THREADS = 128 * WARPGROUPS + 32;  // warpgroups 0 .. WARPGROUPS - 1 consume, the last warp produces
  static constexpr int SLOT_READERS = WARPGROUPS;       // every consumer reads every stage
  static constexpr int CLUSTER = 1;                     // no block shares B (a cluster holds the splits)
  static constexpr bool whole_tiles = false;            // a piece is a split of a tile
  template <class E>
  static constexpr bool exit_barrier = false;  // the split blocks' exchange ends with a cluster barrier
  struct Params {
    int kt = 0, splits = 1;
  };
  // Every tile at once, as many splits each as fill the slots (decode_wgmma::split_count: OCC per SM
  // where the kernel's registers and shared memory allow), fewer where a cluster of them does not fit
  // one GPC.
  template <class S>
  static ClusterShape shape(const void* kernel, int smem, int64_t tiles, int kt, const char* name) {
    int per_sm = 0;
    RUNGS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
    const int64_t splits = decode_wgmma::split_count(tiles, kt, int64_t(std::max(1, per_sm)) * detail::sm_count());
    return {tiles, static_cast<int>(decode_wgmma::fitting_splits(kernel, THREADS, smem, splits, name))};
  }
  static Params plan(const Grid& g) { return Params{g.kt, g.blocks}; }
  // Block x: tile x / splits (W's tiles first, then A's), its k tiles of split x % splits (the
  // block's rank in its cluster).
  template <int TBN>
  struct Walk {
    static constexpr int CLUSTER = SplitKOf::CLUSTER;  // the mainloop's loads read it
    int count, m0, n0, kb, ke, split, splits;
    __device__ __forceinline__ Walk(const Params& p, int tiles_m, int, uint32_t rank) {
      const int tile = static_cast<int>(blockIdx.x) / p.splits;
      split = static_cast<int>(rank), splits = p.splits;
      m0 = (tile % tiles_m) * TILE_M, n0 = (tile / tiles_m) * TBN;
      kb = static_cast<int>(int64_t(p.kt) * split / splits), ke = static_cast<int>(int64_t(p.kt) * (split + 1) / splits);
      count = 1;
    }
    __device__ __forceinline__ void piece(int, int& t, int& kb_, int& ke_) const { t = 0, kb_ = kb, ke_ = ke; }
    __device__ __forceinline__ void tile(int, int, int& m0_, int& n0_, bool& solo) const {
      m0_ = m0, n0_ = n0, solo = false;
    }
    __device__ __forceinline__ void locate(int, int& m0_, int& n0_, bool& solo, int& kb_, int& ke_) const {
      m0_ = m0, n0_ = n0, solo = false, kb_ = kb, ke_ = ke;
    }
  };
  // The threads' roles: the producer warp's thread loads the walk's pieces, stage after stage; the
  // consumers multiply them (S::consume).
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B>
  static __device__ __forceinline__ void roles(const B& b) {
    static_assert(!E::storers && !E::tma && !E::buffers, "C stored by the consumers from registers");
    static_assert(M::TILE_M == TILE_M, "the mainloop's tiles are the schedule's");
    constexpr int RING = M::RING;
    const int tid = b.tid;
    if (b.wg == WARPGROUPS) {
      if (tid == 128 * WARPGROUPS) {
        int it = 0;
        auto wait_released = [&](int i) {
          if (i >= RING) detail::mbar_wait(&b.empty[i % RING], ((i / RING) - 1) & 1);
        };
        for (int p = 0; p < b.walk.count; ++p)
          M::template load<M, T, A_MN, B_MN>(b.walk, p, b.maps, b.smem, b.full, static_cast<int>(b.a.n), b.rank, it,
                                             wait_released);
      }
    } else {
      auto release = [&](int slot) {
        if (tid % 128 == 0) detail::mbar_arrive(&b.empty[slot]);
      };
      consumer<S, M, E, Ac, T, A_MN, B_MN, C_T>(b, b.wg, release);
    }
  }
  // The block: the roles, then (splits) the sums the consumers left in shared memory added up by
  // every thread of the cluster's blocks, slice by slice.
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B>
  static __device__ __forceinline__ void block(const B& b) {
    constexpr int N = M::TILE_N;
    static_assert(N * decode_wgmma::sums_ld<TILE_M>() * 4 <= M::RING * M::RING_STAGE_BYTES, "the sums fit the stages");
    roles<S, M, E, Ac, T, A_MN, B_MN, C_T>(b);
    const int tid = b.tid;
    if (b.walk.splits == 1) return;
    __syncwarp();  // cluster_sync is .aligned: every warp converged
    detail::cluster_sync();  // every block of the cluster (the tile's splits) holds its sums
    decode_wgmma::add_split_sums<typename Problem<T>::C, N, TILE_M, THREADS>(
        reinterpret_cast<const float*>(b.smem), tid, b.walk.split, b.walk.splits, b.a.C, b.a.ldc, b.walk.m0,
        b.walk.n0, static_cast<int>(b.a.m), static_cast<int>(b.a.n), b.a.alpha, b.a.beta);
    __syncwarp();
    detail::cluster_sync();  // no block leaves while the others still read its shared memory
  }
  // Consumer cw's piece: the k loop, then the tile's store, or its (scaled) sums into shared memory.
  template <class S, class M, class Ac, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx,
            class Release>
  static __device__ __forceinline__ void consume(const Walk& walk, const typename Problem<T>::Args& a,
                                                 const unsigned char* smem, uint64_t* full, uint64_t*, int cw,
                                                 Epi& epi, const Ctx& ctx, Release&& release) {
    int it = 0;
    constexpr int N = M::TILE_N;
    float d[M::ACC];
    clear_acc(d);
    Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, 0, 0, walk.kb, walk.ke, a, smem, full, cw, it, epi, ctx,
                                               release);
    Ac::template scale<T>(d, a, walk.m0 + 64 * cw, walk.n0);  // fp8: the scales that do not depend on k
    if (walk.splits == 1) {
      epi.store(ctx, d, walk.m0, walk.n0);
      return;
    }
    detail::named_barrier(1, 128 * W);  // every consumer's MMAs have read their last stage
    decode_wgmma::stash_sums<N, TILE_M>(reinterpret_cast<float*>(const_cast<unsigned char*>(smem)), d, cw * 64,
                                        ctx.tid % 128);
  }
};

}  // namespace rungs::sgemm::ws
