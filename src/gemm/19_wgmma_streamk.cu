// Rung 19, wgmma_streamk: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) with a stream-K tail; f16, bf16 and tf32 as rung 17.
// Adds over 17 wgmma_tma_store: the tiles no longer come in whole waves. A persistent grid of G
// clusters (66 on the H100) runs T cluster tiles in ceil(T / G) rounds, the last one part-filled:
// at 4096^3 (256 cluster tiles of 2 x 128 x 256) 3.88 tiles' work takes 4 tiles' time, at 8192^3
// 15.52 takes 16. Here the first (floor(T / G) - 1) * G tiles run whole as in rung 17, and the k tiles
// of the rest (between G and 2G tiles) are cut into G equal contiguous ranges, one per cluster, so
// every cluster finishes at the same time. A tile cut between two clusters: the later part's
// cluster (for which it is the first piece of its range) stores its fp32 partial sum to a
// workspace slot and sets a flag (release); the cluster with the tile's first k tiles (the last
// piece of its range) waits for the flag (acquire), adds the partial and stores C as rung 17 does.
// Results do not depend on timing (each tile's parts are always added in the same order). The
// workspace (64 KB per consumer warpgroup, 16.5 MB on the H100) and flags come from the stream's
// scratch pool, per call. A cluster waits only for the next one, which delivers before it waits
// for anything, and the last never waits; so it needs the clusters resident together (the grid
// is sized to what fits). On a GPU shared with other kernels that leave only some clusters
// resident, a waiting cluster whose successor is not scheduled could stall (as any stream-K
// kernel); auto never picks this rung.
// Prediction: the rounds' loss goes (3 % of the time at 4096^3 and at
// 8192^3), less the partial sums' traffic (~2 thousand cycles each way per cut tile, against a
// tile's 65 / 131 thousand): 4096^3 bf16 from 0.99x to ~1.01x cuBLAS, 8192^3 +2-3 % (1.03-1.06x),
// 2048^3 unchanged (64 tiles fit in one round: stream-K is not used).
// Measured on the H100 (interleaved with cuBLAS): a miss. bf16 0.93 / 0.88-0.90 / 0.98-1.02x at
// 2048 / 4096 / 8192^3 (6f94199, a18c328; rung 17 beside it 0.93-0.94 / 0.98-0.99 / 1.01x), f16
// 0.91-0.92 / 0.88-0.91 / 1.02-1.03x, tf32 (6f94199) 0.62 / 0.58 / 0.85x against rung 17's 0.63 /
// 0.78 / 0.88x. Correct at every tested shape (GemmTc.StreamKTails cuts tiles), memcheck and
// racecheck clean.
// Why (ncu, 4096^3 bf16, 6f94199): DRAM reads 279 MB against rung 17's 149 MB, L2 hit rate 65.8 %
// against 75.1 %. In whole rounds every cluster is at the same k step of its tile, so the A and
// B panels of that step serve all of them from L2; the stream-K ranges start at 66 different k
// offsets, so the 48 % of the time spent in them at 4096^3 streams A and B (64 MB, more than the
// 50 MB L2) with little reuse, and tf32's doubled bytes lose most. What the rounds cost (3 %) is
// less than what that reuse was worth. At 8192^3 the split is 10 % of the time and it is level.
// Not used by auto. What might work: ranges that keep the clusters in k-step (each tile of the
// tail cut at the same k), at the price of more partial sums.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// Schedule: cluster tiles 0 .. dp_tiles - 1 are whole pieces of work, dealt round-robin as in
// RoundRobin; the k tiles of the rest, `units` in all in tile order, are cut into one contiguous
// range per cluster (cluster c: units * c / G .. units * (c + 1) / G of G). A range that starts
// inside a tile leaves that tile's partial sum in the workspace (one 64 x 256 fp32 slot per
// cluster, block and consumer) and sets its flag; the cluster whose range holds the tile's first
// k tile (it ends its range there) adds the partials of the cluster after it, then stores the
// tile. With G < tiles < 2 G in the split, a range is longer than a tile: a tile is cut at most
// once, and its rest belongs to the next cluster.
struct StreamK : Cooperative {
  static constexpr bool whole_tiles = false, wide_producer = false;
  // tf32 register path: no wgmma group in flight across stages (with one, the partial-sum code spills).
  static constexpr int rs_in_flight = 0;
  struct Params {
    int dp_tiles = 0;
    int kt = 0;           // k tiles per tile
    int64_t units = 0;    // < 2^31 (else no stream-K)
    float* ws = nullptr;  // partial sums: slot (cluster * CLUSTER + rank) * CONSUMERS + consumer, 64 x 256 each
    int* flags = nullptr;  // one per slot, zero before the launch, 1 once its slot holds a partial
  };
  // With W = tiles / clusters full waves and a part-filled last one, the last two waves' tiles
  // (W - 1 of them run whole) are shared out by k, so every cluster ends at the same time.
  static Params plan(const Grid& g) {
    Params sk;
    sk.dp_tiles = static_cast<int>(g.cluster_tiles);
    sk.kt = g.kt;
    const int64_t last_two = g.cluster_tiles - (g.cluster_tiles / g.clusters - 1) * g.clusters;
    if (g.cluster_tiles > g.clusters && g.cluster_tiles % g.clusters != 0 && sk.kt >= 2 &&
        last_two * sk.kt <= INT32_MAX) {
      sk.dp_tiles = static_cast<int>((g.cluster_tiles / g.clusters - 1) * g.clusters);
      sk.units = (g.cluster_tiles - sk.dp_tiles) * sk.kt;
      const size_t slots = static_cast<size_t>(g.clusters) * CLUSTER * CONSUMERS;
      *g.keep_ws = std::make_unique<detail::Scratch>(slots * 64 * BN * sizeof(float), g.stream);
      *g.keep_flags = std::make_unique<detail::Scratch>(slots * sizeof(int), g.stream, true);
      sk.ws = (*g.keep_ws)->as<float>(), sk.flags = (*g.keep_flags)->as<int>();
    }
    return sk;
  }
  // This cluster's pieces of work: piece p < count is cluster tile t, k tiles kb .. ke - 1. A
  // counted loop with the piece computed from p (a loop driven by a next() that keeps state made
  // the compiler leave the epilogue's loop rolled and the accumulators in local memory).
  template <int TBN>
  struct Walk : BandedTiles<TBN> {
    static_assert(TBN == BN, "partial sums of 64 x BN");
    using BandedTiles<TBN>::walk;
    using BandedTiles<TBN>::rank;
    Params sk;
    int count, dp;    // dp of the count pieces are whole tiles first, first + stride, ...
    int t0, k0, end;  // then the stream-K range: tile t0 from k tile k0 on, to k tile `end` counted from t0
    __device__ __forceinline__ Walk(const Params& p, int tiles_m, int tiles_n_, uint32_t rank_)
        : BandedTiles<TBN>(tiles_m, tiles_n_, rank_), sk(p) {
      const int first = walk.first, clusters = walk.stride;
      dp = first < sk.dp_tiles ? (sk.dp_tiles - first + clusters - 1) / clusters : 0;
      count = dp;
      const int kt = max(sk.kt, 1);
      const int u0 = static_cast<int>(sk.units * first / clusters);
      const int u1 = static_cast<int>(sk.units * (first + 1) / clusters);
      t0 = sk.dp_tiles + u0 / kt, k0 = u0 % kt, end = k0 + (u1 - u0);
      count += u1 > u0 ? (end - 1) / kt + 1 : 0;
    }
    __device__ __forceinline__ void piece(int p, int& t, int& kb, int& ke) const {
      if (p < dp) {
        t = walk.first + p * walk.stride, kb = 0, ke = sk.kt;
      } else {
        const int i = p - dp;  // the range's i-th tile
        t = t0 + i, kb = i == 0 ? k0 : 0, ke = min(sk.kt, end - i * sk.kt);
      }
    }
    __device__ __forceinline__ void locate(int p, int& m0, int& n0, bool& solo, int& kb, int& ke) const {
      int t;
      piece(p, t, kb, ke);
      this->tile(p, t, m0, n0, solo);
    }
    // A consumer's 64 x 256 partial sum to / from its workspace slot: float4 i of thread t at
    // i * 128 + t (each warp moves 512 contiguous bytes per instruction), through L2 only.
    static __device__ __forceinline__ void save_partial(const float (&d)[128], float* slot) {
      float4* p = reinterpret_cast<float4*>(slot) + threadIdx.x % 128;
#pragma unroll
      for (int i = 0; i < 32; ++i) __stcg(p + i * 128, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
    }
    // Loads in groups of 8 float4 (32 registers): all 32 at once would not fit beside d.
    static __device__ __forceinline__ void add_partial(float (&d)[128], const float* slot) {
      const float4* p = reinterpret_cast<const float4*>(slot) + threadIdx.x % 128;
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        float4 v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = __ldcg(p + (8 * g + i) * 128);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          float* x = &d[4 * (8 * g + i)];
          x[0] += v[i].x, x[1] += v[i].y, x[2] += v[i].z, x[3] += v[i].w;
        }
        asm volatile("" ::: "memory");  // the next group's loads stay after these adds
      }
    }
    template <class Store>
    __device__ __forceinline__ void finish(float (&d)[128], int kb, int ke, int cw, Store&& store_tile) const {
      const int tid = threadIdx.x;
      const int slot = (walk.first * CLUSTER + static_cast<int>(rank)) * CONSUMERS + cw;
      if (kb > 0) {  // a later part of the tile: leave the partial sum to the tile's owner
        save_partial(d, sk.ws + static_cast<size_t>(slot) * (64 * BN));
        detail::named_barrier(1 + cw, 128);  // the warpgroup's writes, before its flag
        if (tid % 128 == 0) detail::st_release_gpu(&sk.flags[slot], 1);
      } else if (ke < sk.kt) {  // the tile's first part ends this range: the next cluster has the rest
        const int other = slot + CLUSTER * CONSUMERS;
        if (tid % 128 == 0)
          while (detail::ld_acquire_gpu(&sk.flags[other]) == 0) __nanosleep(32);
        detail::named_barrier(1 + cw, 128);  // every thread reads after the flag was seen
        add_partial(d, sk.ws + static_cast<size_t>(other) * (64 * BN));
        store_tile();  // (in each branch: a merge after the add made the compiler hold two d's)
      } else {
        store_tile();
      }
    }
  };
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_streamk {

using Parts = ws::Parts<ws::StreamK, ws::WholeTiles, ws::TmaStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_streamk"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_streamk"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_streamk"); }

}  // namespace rungs::sgemm::wgmma_streamk
