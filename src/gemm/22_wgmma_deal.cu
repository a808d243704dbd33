// Rung 22, wgmma_deal: rung 20 with its ragged edges dealt over the clusters, a narrow last tile
// column (n % 256 in 1 .. 64) and a short last tile row (sm_90a); f16, bf16 and tf32 as rung 20.
// Adds over 20 wgmma_ragged: Schedule Balanced (22_wgmma_deal.cuh), by detail/narrow_deal.hpp.
//  - round-robin puts narrow tiles among full ones, so the longest cluster runs its full tiles plus
//    a narrow one. Here the narrow tiles go two each, last, to the clusters that run one full tile
//    fewer (4096 x 4104 on 66 clusters: 58 run 4 full tiles, 8 run 3 full and 2 narrow).
//  - a short last tile row (odd tile rows: a cluster pairs a tile with one wholly past m) has its
//    tiles paired side by side, each block loading its own B, where that takes a round off the
//    longest cluster (NarrowDeal::short_pays; elsewhere it costs: 2056 x 2048 x 2048 bf16, two rounds
//    either way, ran 0.0499 ms against rung 20's 0.0431).
// Bounded by: a narrow tile's time, ~0.66 of a full one (the latency of its A loads): two of them
// cost more than the full tile they replace (3 + 2 x 0.66 = 4.3 tile times against rung 20's
// 4 + 0.66 at 4096 x 4104). Rung 23 halves it.
// Prediction (bf16, H200): 4096 x 4104 x 4096 ~7 % under rung 20's time; shapes without a narrow
// column or a short row, rung 20's.
#include "gemm/22_wgmma_deal.cuh"

namespace rungs::sgemm::wgmma_deal {

using Parts = ws::Parts<ws::Balanced, ws::Ragged, ws::Staged<ws::TmaStore>>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_deal"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_deal"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_deal"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_deal
