// Rung 16, wgmma_narrow: rung 15 whose narrow tiles multiply only the columns they have (sm_90a);
// f16, bf16 and tf32 as rung 15.
// Adds over 15 wgmma_ws: Mainloop Ragged (16_wgmma_narrow.cuh). A tile with at most 64 (128) columns
// left issues wgmma m64n64 (m64n128) and loads only those columns of B; rung 15 multiplies and loads
// all 256 whatever n leaves. At 4096 x 4104 x 4096 (17 tile columns, the last 8 wide) the last column
// costs its A loads and a quarter of the MMAs.
// Bounded by: rung 15's direct stores (the tensor cores idle while a tile's C is written); the narrow
// tiles still take a round of their own beside the full ones (5 rounds at 4096 x 4104 where 4096^3
// runs 4). Rungs 20 and 23 build on it.
// Prediction (bf16, H200): at 4096 x 4104 x 4096 about 7 % under rung 15's time (the narrow round at
// ~0.66 of a full one); at multiples of 256, rung 15's time.
#include "gemm/16_wgmma_narrow.cuh"

namespace rungs::sgemm::wgmma_narrow {

using Parts = ws::Parts<ws::RoundRobin, ws::Ragged, ws::DirectStore>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_narrow"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_narrow"); }
void run_tf32(const Args& a) { ws::run<Parts>(a, "wgmma_narrow"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_narrow
