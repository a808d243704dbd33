// Rung 27, decode_streamk: rung 26 (decode shapes, C^T = W A^T on wgmma with m as N, W n x k or k x n
// streamed by TMA) with a stream-K schedule; f16 and bf16, sm_90a; copies as rung 26's.
// Adds over 26 decode_wgmma, in the Schedule, StreamKRangesOf (below): the work is the list of units
// (tile, k tile), u = tile * KT + kt (tile = group of A's rows * W's tiles + tile of BM rows of W, BM
// and the fills chosen as rung 26 chooses them), cut
// into P contiguous ranges as equal as integers allow, P = the SM count (fewer where a range would be
// under 4 k tiles), one persistent block per range. A range crosses tiles: the block sums each tile's
// segment in registers and the producer streams the whole range without a pause (its stage index and
// barrier phases run on), so every SM keeps 112-160 KB of W in flight to its end and all SMs get the
// same bytes (n = 7168: 132 blocks where rung 26 runs 112). A whole-tile segment is stored as rung 26
// stores it. A cut one (only a block's first and last can be) leaves its fp32 sums in one of the
// block's two workspace slots (2 P slots of BM x N floats: 17 MB at 128 x 128 on 132 SMs; none when
// no tile is cut), and a programmatic dependent launch (the schedule's after_launch), scheduled while
// the grid runs and waiting in
// griddepcontrol.wait, adds each cut tile's segments in k order and applies alpha / beta
// (deterministic, no atomics; BM N / 1024 blocks per cut tile, one 16-byte load per thread and
// segment, so the loads are independent, not a chain of L2 round trips).
// Bounded by: reading W once with equal shares (equal bytes need not be equal time: the slowest SM
// ends last, where rung 26's extra blocks go to whichever SM is free); the cut tiles' sums and the
// second pass after the grid; A's boxes re-read from L2, now at 132 k offsets.
// Prediction: the second pass as one round of loads, launched under the grid, removes most of the
// excess over rung 26; measured: halved, 3-8 us above rung 26 at 7168 x 8192 (H100), still slower than
// rung 26 at every decode shape.
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/stream_ranges.hpp"

#include <algorithm>
#include <memory>
#include <type_traits>

namespace rungs::sgemm::ws {

namespace decode_ranges {

// Blocks (j, ..): the tile holding the start of range j + 1, if that start cuts it and range j is the
// tile's first (so each cut tile is done once): C^T = alpha * (its segments' sums, in k order, i.e.
// in block order) + beta * C^T (beta == 0: C unread), in the kernel's orientation (rows m: W's,
// columns n: A's; tile = tile column * tiles_m + tile row, TM x TN). Launched as a programmatic
// dependent of the grid: it waits for that grid's partial sums. Block (j, y) adds quad y * 256 + t
// of the tile: 4 consecutive rows of W (columns of C), one 16-byte load per segment; every quad's
// loads are independent of the others', spread over TM TN / 1024 blocks per cut tile (a loop over
// the tile in one block would wait out an L2 latency per iteration: 64 at N = 128).
template <typename T, int TM, int TN>
__global__ void __launch_bounds__(256)
    add_segments(const float* __restrict__ part, ArgsT<T> a, detail::StreamRanges r, int tiles_m) {
  detail::griddep_wait();
  const int64_t KT = r.KT, j = blockIdx.x, cut = r.start(j + 1), tile = cut / KT;
  if (cut % KT == 0 || r.owner(tile * KT) != j) return;
  const int64_t b1 = r.owner((tile + 1) * KT - 1);
  const int m0 = static_cast<int>(tile % tiles_m) * TM, n0 = static_cast<int>(tile / tiles_m) * TN;
  // Block j's segment is its last (slot 2j + 1) unless its range starts at the tile's start; the
  // later blocks' segments are their first (slot 2b). A slot: [column - n0][row - m0], TM x TN.
  const int64_t first_slot = 2 * j + (r.start(j) < tile * KT ? 1 : 0);
  const int e = (static_cast<int>(blockIdx.y) * 256 + static_cast<int>(threadIdx.x)) * 4;
  const int col = n0 + e / TM, row = m0 + e % TM;
  if (col >= a.n || row >= a.m) return;
  float4 acc = __ldcg(reinterpret_cast<const float4*>(part + first_slot * (TM * TN) + e));
  for (int64_t b = j + 1; b <= b1; b += 4) {  // the later segments' loads 4 at a time, added in order
    float4 v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (b + i <= b1) v[i] = __ldcg(reinterpret_cast<const float4*>(part + 2 * (b + i) * (TM * TN) + e));
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (b + i <= b1) acc.x += v[i].x, acc.y += v[i].y, acc.z += v[i].z, acc.w += v[i].w;
  }
  const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)  // C^T's (row + i, col) is C's (col, row + i)
    if (row + i < a.m) detail::store_c(a.C, a.ldc, col, row + i, v[i], a.alpha, a.beta);
}

}  // namespace decode_ranges

// Schedule: SplitKOf's block roles (W consumer warpgroups, a producer warp) over P persistent blocks
// (the SM count, fewer where a range would be under 4 k tiles), block b walking units [units b / P,
// units (b + 1) / P) across tile boundaries: its pieces are its segments, one per tile it touches; a
// whole tile is stored, a cut segment's sums go to the block's slot for its first or last segment,
// and add_segments (after_launch) adds the cut tiles up.
template <int W>
struct StreamKRangesOf : SplitKOf<W> {
  using SplitKOf<W>::TILE_M;
  static constexpr int MIN_KT_PER_RANGE = 4;
  struct Params {
    detail::StreamRanges r;
    float* part = nullptr;  // 2 P slots of TILE_M x TILE_N floats where some range cuts a tile
  };
  template <class S>
  static ClusterShape shape(const void*, int, int64_t tiles, int kt, const char*) {
    const int64_t units = tiles * kt;
    return {std::max<int64_t>(1, std::min<int64_t>(detail::sm_count(), units / MIN_KT_PER_RANGE)), 1};
  }
  static Params plan(const Grid& g) {
    Params p{detail::StreamRanges{g.cluster_tiles * g.kt, g.clusters, g.kt}, nullptr};
    if (p.r.cuts()) {
      *g.keep_ws = std::make_unique<detail::Scratch>(
          static_cast<size_t>(2 * p.r.P) * static_cast<size_t>(g.tile_m) * static_cast<size_t>(g.tile_n) * sizeof(float),
          g.stream);
      p.part = (*g.keep_ws)->template as<float>();
    }
    return p;
  }
  // The second pass: every cut tile's segments added in k order, launched under the grid.
  template <class Args>
  static void after_launch(const Args& a, const Params& p, const Grid& g, const char* name) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(a.C)>>;
    if (p.part == nullptr) return;
    auto go = [&](auto tn) {
      constexpr int TN = decltype(tn)::value;
      static_assert(TILE_M * TN % 1024 == 0, "whole blocks of 256 quads");
      decode_wgmma::launch_dependent(&decode_ranges::add_segments<T, TILE_M, TN>,
                                     dim3(static_cast<unsigned>(p.r.P - 1), TILE_M * TN / 1024), 256, a.stream,
                                     static_cast<const float*>(p.part), a, p.r, static_cast<int>(g.tiles_m));
    };
    decode_wgmma::with_n(g.tile_n, go);
    detail::check_launch(name);
  }
  template <int TBN>
  struct Walk {
    static constexpr int CLUSTER = 1;  // the mainloop's loads read it
    Params sp;
    int count, tiles_m;
    __device__ __forceinline__ Walk(const Params& p, int tiles_m_, int, uint32_t) : sp(p), tiles_m(tiles_m_) {
      count = p.r.segments(blockIdx.x);
    }
    // Piece p: the block's p-th segment, tile t's k tiles kb .. ke - 1.
    __device__ __forceinline__ void piece(int p, int& t, int& kb, int& ke) const {
      int64_t tile;
      sp.r.segment(blockIdx.x, p, tile, kb, ke);
      t = static_cast<int>(tile);
    }
    __device__ __forceinline__ void tile(int, int t, int& m0, int& n0, bool& solo) const {
      m0 = (t % tiles_m) * TILE_M, n0 = (t / tiles_m) * TBN, solo = false;
    }
    __device__ __forceinline__ void locate(int p, int& m0, int& n0, bool& solo, int& kb, int& ke) const {
      int t;
      piece(p, t, kb, ke);
      tile(p, t, m0, n0, solo);
    }
  };
  template <class S, class M, class E, class Ac, typename T, bool A_MN, bool B_MN, bool C_T, class B>
  static __device__ __forceinline__ void block(const B& b) {
    if (b.walk.sp.part != nullptr) detail::griddep_launch_dependents();
    SplitKOf<W>::template roles<S, M, E, Ac, T, A_MN, B_MN, C_T>(b);
  }
  // Consumer cw's segments: each one's k loop, then the tile's store (a whole tile) or the sums into
  // the block's slot (a cut one: slot 2 b for its first segment, 2 b + 1 for its last).
  template <class S, class M, class Ac, typename T, bool A_MN, bool B_MN, class Walk, class Epi, class Ctx,
            class Release>
  static __device__ __forceinline__ void consume(const Walk& walk, const typename Problem<T>::Args& a,
                                                 const unsigned char* smem, uint64_t* full, uint64_t*, int cw,
                                                 Epi& epi, const Ctx& ctx, Release&& release) {
    constexpr int N = M::TILE_N;
    int it = 0;
    float d[M::ACC];
    for (int p = 0; p < walk.count; ++p) {
      int t, kb, ke, m0, n0;
      bool solo;
      walk.piece(p, t, kb, ke);
      clear_acc(d);
      Ac::template multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, a, smem, full, cw, it, epi, ctx, release);
      walk.tile(p, t, m0, n0, solo);
      if (ke - kb == walk.sp.r.KT) {
        epi.store(ctx, d, m0, n0);
      } else {
        float* slot = walk.sp.part + (2 * int64_t(blockIdx.x) + (p == 0 ? 0 : 1)) * (TILE_M * N);
        detail::store_acc_64xn_t<float, N>(d, slot, TILE_M, cw * 64, 0, TILE_M, N, 1.0f, 0.0f);
      }
    }
  }
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::decode_streamk {

namespace {

template <int N, int TM>
using Parts = ws::Parts<ws::StreamKRangesOf<TM / 64>, ws::WholeTilesOf<N, ws::split_k_ring<N, TM>(), 256, TM>,
                        ws::DirectStore>;

// C^T = W A^T (ws::transposed), tiles as rung 26 chooses them (ws::with_tile_rows: with 256-row
// tiles each range holds about a tile or more, and the cut tiles' partial sums stay a few per cent
// of W's bytes); L2 fills of 256 bytes.
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_streamk");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  const ArgsT<T> s = ws::transposed(a);
  decode_wgmma::with_n(a.m, [&](auto n) {
    constexpr int N = decltype(n)::value;
    ws::with_tile_rows<N>(a, [&](auto tm) {
      constexpr int TM = decltype(tm)::value;
      if (a.tb == Trans::N) ws::launch<T, true, false, true, Parts<N, TM>>(s, "decode_streamk");
      else ws::launch<T, false, false, true, Parts<N, TM>>(s, "decode_streamk");
    });
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

std::vector<std::string> parts() { return ws::part_names<Parts<128, 128>>(); }

}  // namespace rungs::sgemm::decode_streamk
