// The Schedule base of the frame's rungs, Cooperative: the block's roles (a producer warpgroup and
// two consumer warpgroups, block) and the consumers' work on the tiles, both on every tile,
// consumer cw on its rows 64 cw .. 64 cw + 63, each stage read by both (a slot is free after
// CONSUMERS arrivals from each block of the cluster). PingPong (rung 18) keeps the roles and
// replaces the work; Unspecialized (rung 14) keeps the work and replaces the roles.
#pragma once

#include "gemm/ws/k_loop.cuh"
#include "gemm/ws/parts.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace rungs::sgemm::ws {

struct Cooperative {
  static constexpr int THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces, 1 and 2 consume
  static constexpr int BLOCKS_PER_SM = 1;  // resident blocks an SM holds (the kernel's launch bounds)
  static constexpr int CLUSTER = ws::CLUSTER;  // blocks of a cluster, along m, sharing B
  static constexpr int SLOT_READERS = CONSUMERS;  // a block's consumers that read and release each stage
  static constexpr int BARRIERS = 0;              // mbarriers of the schedule's own (none)
  static __device__ __forceinline__ void init_barriers(uint64_t*, int) {}
  // A persistent grid: as many clusters as fit at once, at most one per cluster tile.
  static int64_t clusters(int64_t cluster_tiles, int fit) { return std::min<int64_t>(cluster_tiles, fit); }
  // After the kernel's launch, on its stream: nothing (a schedule's second pass).
  template <class Args, class Params>
  static void after_launch(const Args&, const Params&, const Grid&, const char*) {}
  // The launch (S: the schedule itself): S::clusters of S::CLUSTER blocks each.
  template <class S>
  static ClusterShape shape(const void* kernel, int smem, int64_t cluster_tiles, int, const char* name) {
    const int fit = detail::max_active_clusters(kernel, S::THREADS, smem, S::CLUSTER, name);
    return {S::clusters(cluster_tiles, fit), S::CLUSTER};
  }
  // A cluster barrier at the kernel's end only with storer warps (their warpgroup spilled with the
  // producer's tail); otherwise the producer's tail keeps the block until nothing of the peer's can
  // reach it.
  template <class E>
  static constexpr bool exit_barrier = E::storers;
  // The block's roles: warpgroup 0 the producer (its thread 0 issues every load; with E::storers its
  // warps 1-3 store C), warpgroups 1 and 2 the consumers (consume, below).
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B>
  static __device__ __forceinline__ void block(const B& b) {
    constexpr bool TF32 = std::is_same_v<T, float>;
    constexpr int STAGES = M::RING;
    const int tid = b.tid, wg = b.wg;
    if (wg == 0) {
      detail::setmaxnreg_dec<S::wide_producer && !TF32 ? 56 : 40>();
      if (tid == 0) {
        int it = 0;  // k tiles issued by this block so far, over all its tiles: slot it % STAGES
        // Fill i (use i / STAGES of slot i % STAGES) needs the slot's use before it released by the
        // consumers of both blocks (the first STAGES fills need nothing).
        auto wait_released = [&](int i) {
          if (i >= STAGES) detail::mbar_wait(&b.empty[i % STAGES], ((i / STAGES) - 1) & 1);
        };
        for (int p = 0; p < b.walk.count; ++p)
          M::template load<M, T, A_MN, B_MN>(b.walk, p, b.maps, b.smem, b.full, static_cast<int>(b.a.n), b.rank, it,
                                             wait_released);
        if constexpr (!S::template exit_barrier<E>) {
          // The block may leave once every stage it filled has been released by the consumers of
          // both blocks: then no remote arrive or multicast into it is still on its way (CUTLASS's
          // producer tail, in place of a cluster barrier at the kernel's end).
          for (int j = 0; j < STAGES; ++j) wait_released(it + j);
        }
      } else if constexpr (E::storers) {
        E::template storer<T, C_T>(b.walk, b.a, b.tma_cols, b.c_buf, b.c_full, b.c_empty, tid);
      }
    } else {
      detail::setmaxnreg_inc<S::wide_producer && !TF32 ? 216 : 232>();
      const int cw = wg - 1;  // this consumer's share of the tiles: the schedule's (S::consume)
      auto release = [&](int slot) {  // every block's producer may refill `slot`
        if (tid % 128 == 0)
          for (uint32_t c = 0; c < S::CLUSTER; ++c) detail::mbar_arrive_cluster(&b.empty[slot], c);
      };
      consumer<S, M, E, Ac, T, A_MN, B_MN, C_T>(b, cw, release);
    }
  }
  // Consumer cw's role: its epilogue's state and view of the block, its pieces (S::consume), then
  // the epilogue's end. release(slot): the stage's slot may be refilled.
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B, class Release>
  static __device__ __forceinline__ void consumer(const B& b, int cw, Release&& release) {
    const ConsumerCtx<T> ctx{b.a,        &b.map_c, b.c_buf + cw * C_BYTES, &b.c_full[cw], &b.c_empty[cw],
                             b.tma_cols, cw,       b.tid,                  b.c_vec,      b.ep};
    typename E::template Consumer<typename Problem<T>::C, C_T> epi;
    S::template consume<S, M, Ac, T, A_MN, B_MN>(b.walk, b.a, b.smem, b.full, b.bars, cw, epi, ctx, release);
    epi.finish(ctx);
  }
  // One stage's MMAs of consumer cw: its 64 rows of A against the first N columns of B.
  // accumulate = false (fp8): the stage starts a fresh sum.
  template <typename T, bool A_MN, bool B_MN, int N, int R>
  static __device__ __forceinline__ void stage(float (&d)[R], const unsigned char* As, const unsigned char* Bs, int cw,
                                               bool accumulate = true) {
    mma_stage<T, A_MN, B_MN, N>(d, As, Bs, cw, accumulate);
  }
  // Consumer cw's part of every piece of the walk: the accumulation's k loop into d, then the
  // walk's finish, which stores the tile through the epilogue (or hands on a split tile's partial
  // sums). S: the schedule itself.
  template <class S, class M, class Ac, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx,
            class Release>
  static __device__ __forceinline__ void consume(const Walk& walk, const typename Problem<T>::Args& a,
                                                 const unsigned char* smem, uint64_t* full, uint64_t*, int cw,
                                                 Epi& epi, const Ctx& ctx, Release&& release) {
    int it = 0;
    float d[M::ACC];
    for (int p = 0; p < walk.count; ++p) {
      int t = 0, kb = 0, ke = 0;
      walk.piece(p, t, kb, ke);
#pragma unroll
      for (int i = 0; i < M::ACC; ++i) d[i] = 0.0f;
      Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, a, smem, full, cw, it, epi, ctx, release);
      epi.after_mainloop(ctx, ke - kb);
      auto store_tile = [&] {
        int m0, n0;  // (found only now: fewer registers held beside the accumulators)
        bool solo;
        walk.tile(p, t, m0, n0, solo);
        Ac::template scale<T>(d, a, m0 + 64 * cw, n0);
        epi.store(ctx, d, m0, n0);
      };
      walk.finish(d, kb, ke, cw, store_tile);
    }
    Ac::after_tiles(cw, it);
  }
};

}  // namespace rungs::sgemm::ws
