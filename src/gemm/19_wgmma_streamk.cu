// Rung 19, wgmma_streamk: rung 17 with a stream-K tail (sm_90a); f16, bf16 and tf32 as rung 17.
// Adds over 17 wgmma_tma_store: Schedule StreamK. A persistent grid of G clusters runs T cluster
// tiles in ceil(T / G) rounds, the last part-filled (4096^3 on the H100: 3.88 tiles' work in 4
// tiles' time). Here the first (floor(T / G) - 1) * G tiles run whole, and the k tiles of the rest
// (between G and 2G tiles) are cut into G equal contiguous ranges, one per cluster, so every cluster
// ends at the same time. A tile cut between two clusters: the later part's cluster stores its fp32
// partial sum to a workspace slot and sets a flag (release); the cluster holding the tile's first k
// tiles waits for the flag (acquire), adds the partial and stores C. Each tile's parts are always
// added in the same order, so results do not depend on timing. Workspace and flags come from the
// stream's scratch pool per call (64 KB per consumer, 16.5 MB on the H100). A cluster waits only for
// the next one, which delivers before it waits, so the clusters must be resident together: on a GPU
// shared with other kernels a waiting cluster could stall, as in any stream-K kernel.
// Bounded by: L2 reuse. In whole rounds every cluster is at the same k step, so A and B panels serve
// all of them from L2; the ranges start at G different k offsets and stream A and B with little reuse
// (4096^3 bf16: DRAM reads 279 MB against rung 17's 149, tf32 loses most). That reuse was worth more
// than the 3 % the rounds cost. Ranges that keep the clusters in k step might pay (more partial sums).
// Prediction: bf16 4096^3 0.99x -> ~1.01x cuBLAS, 8192^3 +2-3 %; measured: bf16 0.88-0.90x at 4096^3,
// 0.98-1.02x at 8192^3 (H100): a miss, kept as the measured step; `auto` never picks it.
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

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_streamk
