// Rung 14, wgmma: Hopper warpgroup MMA (sm_90a) fed by the tensor memory accelerator, on the
// skeleton with its simplest schedule; f16, bf16 (any transpose) and tf32 (an m-contiguous A read
// through registers; tn copies A k-contiguous), operands TMA cannot read in place copied aligned.
// Adds over 13 mma_sync: wgmma.m64n256 from shared memory (no ldmatrix, no register fragments for
// A and B); TMA brings each 128-byte-wide operand box in its stored layout with the 128-byte swizzle
// wgmma reads without conflicts; a ring of 4 stages completed on mbarriers ("full": TMA bytes
// landed; "empty": both warpgroups released the slot). Its Schedule, Unspecialized (below): one
// 128 x 256 tile per block, no cluster, the grid all tiles at once, two warpgroups that both
// multiply (64 rows each), and no producer: thread 0 issues the first 4 stages' loads, then refills
// each slot itself as soon as both warpgroups released it. The rest is rung 15's parts
// (WholeTiles, DirectStore, InTensorCore).
// Bounded by: thread 0 waits for the slower warpgroup before each refill, stalling its own next
// MMAs; no persistent grid (a tail wave at most sizes); every block reads its own B (no multicast);
// C stored from registers.
// Prediction: within 0.95-1.05x of its own-kernel time (the same tiles, ring and stores); measured
// (H200, bf16): 0.98-1.00x at 2048-8192^3 (1.473 ms at 8192^3 against 1.46).
#include "gemm/15_wgmma_ws.cuh"

#include <cstdint>

namespace rungs::sgemm::ws {

// Schedule: RoundRobin's tile order with a grid of every cluster tile at once (one tile each), and
// the block's two warpgroups both consumers, thread 0 also loading.
struct Unspecialized : RoundRobin {
  static constexpr int THREADS = 128 * CONSUMERS;  // no producer warpgroup
  static constexpr int CLUSTER = 1;  // no cluster: thread 0 waits for its own block's consumers only
  template <int TBN>
  using Walk = WalkOf<TBN, CLUSTER>;
  static int64_t clusters(int64_t cluster_tiles, int) { return cluster_tiles; }
  template <class E>
  static constexpr bool exit_barrier = false;  // no peer block; every load it issued was consumed
  // The block's tile and k tile kt alone, as the mainloop's loads see a piece: one stage. The tile
  // is located once: each refill sits in thread 0's path between its warpgroup's MMAs.
  template <int CL>
  struct OneKTile {
    static constexpr int CLUSTER = CL;
    int m0, n0, kt;
    bool solo;
    __device__ __forceinline__ void locate(int, int& m0_, int& n0_, bool& solo_, int& kb, int& ke) const {
      m0_ = m0, n0_ = n0, solo_ = solo, kb = kt, ke = kt + 1;
    }
  };
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B>
  static __device__ __forceinline__ void block(const B& b) {
    static_assert(!M::pairs && !E::storers, "one k tile a stage; the consumers store C");
    constexpr int RING = M::RING;
    const int tid = b.tid, cw = b.wg;
    int m0 = 0, n0 = 0, kb = 0, ke = 0;
    bool solo = false;
    if (b.walk.count > 0) b.walk.locate(0, m0, n0, solo, kb, ke);  // the block's one tile (count 0 or 1)
    // Thread 0: k tile kb + i into ring position i (fill i), no wait (the slot's use before it,
    // fill i - RING, was released before this is called).
    auto load = [&](int i) {
      int it = i;
      const OneKTile<CLUSTER> one{m0, n0, kb + i, solo};
      M::template load<M, T, A_MN, B_MN>(one, 0, b.maps, b.smem, b.full, static_cast<int>(b.a.n), b.rank, it,
                                         [](int) {});
    };
    if (tid == 0)
      for (int i = 0; i < RING && kb + i < ke; ++i) load(i);
    int next = RING;  // thread 0's next fill
    // Consumer cw releases a slot; thread 0 then waits until both consumers have, and refills the
    // slot with the fill RING after the released one.
    auto release = [&](int slot) {
      if (tid % 128 == 0) detail::mbar_arrive(&b.empty[slot]);
      if (tid == 0 && kb + next < ke) {
        detail::mbar_wait(&b.empty[slot], ((next / RING) - 1) & 1);
        load(next++);
      }
    };
    consumer<S, M, E, Ac, T, A_MN, B_MN, C_T>(b, cw, release);
  }
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma {

using Parts = ws::Parts<ws::Unspecialized, ws::WholeTiles, ws::DirectStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma
