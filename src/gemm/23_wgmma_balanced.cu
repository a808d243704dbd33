// Rung 23, wgmma_balanced: rung 22 whose narrow tiles cost what the deal assumes (sm_90a); f16, bf16
// and tf32 as rung 20.
// Adds over 22 wgmma_deal: Mainloop Paired (below): two k tiles per stage for a narrow tile (A, A',
// B, B': 16 + 16 + 8 + 8 KB; a k-contiguous B in boxes of 64 rows of n, tf32's register path too, each
// pair's k tiles steps of one loop). A narrow tile loads all of A for a quarter of the columns, so its
// time is its loads' latency, and twice the bytes in flight halve it: the clusters that run 3 full
// tiles and 2 narrow ones (4096 x 4104 on 66 clusters) finish with the 58 that run 4 full.
// Bounded by: on unaligned rows, the copies of A and B and C's storer path (~0.075 ms at 4095 x 4097
// x 4093); a narrow tile still costs ~0.35 of a full one (~0.57 on tf32's register path), and where
// one round does not fill the clusters (2048 x 2056 x 2048) half the narrow tiles sit beside full ones.
// Prediction: a narrow tile ~0.35 of a full one, bf16 4096 x 4104 x 4096 ~0.18 ms (1.03x its 4096^3);
// measured: 0.1792 ms, 1.02x (rung 20 0.2013, cuBLAS 0.1800; H100): held.
#include "gemm/22_wgmma_deal.cuh"

namespace rungs::sgemm::ws {

// Mainloop: Ragged, with a narrow tile's (64 columns, not solo) stages holding two k tiles each (A,
// A', B, B', 16 + 16 + 8 + 8 KB; tf32's register path too), so twice the bytes are in flight for a
// tile whose time is the latency of its loads. A k-contiguous B comes in boxes of 64 rows of n for
// them (map_b64). The frame's load_piece and multiply_piece read `pairs` and two().
struct Paired : Ragged {
  static constexpr bool pairs = true;
  __device__ __forceinline__ static bool two(int nb, bool solo) { return nb == 64 && !solo; }
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_balanced {

using Parts = ws::Parts<ws::Balanced, ws::Paired, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_balanced"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_balanced"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_balanced
