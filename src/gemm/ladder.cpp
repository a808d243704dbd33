// The SGEMM ladder: the one list of rungs, in order. The registry (variants), the
// dispatcher, the CLI, the tests and the plots all read it; adding a rung is one line here
// plus its file. A rung's number is its index, and its file carries that number as prefix.
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm {

const std::vector<Rung>& ladder() {
  static const std::vector<Rung> rungs = {
      {"cpu_naive", "CPU, one thread, i-j-k loops, float accumulation (article 004's serial version)", 0, false,
       cpu_naive::run},
      {"naive", "one thread per C element; threadIdx.x walks rows, so a warp's loads are strided (article 004 v1)",
       70, false, naive::run},
      {"coalesced", "one thread per C element; threadIdx.x walks columns, so a warp reads B and writes C coalesced",
       70, false, coalesced::run},
      {"smem_tiling", "32x32 tiles of A and B staged in shared memory (article 001, article 004 v2)", 70, false,
       smem_tiling::run},
      {"blocktile_1d", "each thread computes 8 outputs of a column from shared memory (article 004 v3)", 70, false,
       blocktile_1d::run},
      {"blocktile_2d", "each thread computes an 8x8 tile; rearranged 1D thread index for loads (v3/v4)", 70, false,
       blocktile_2d::run},
      {"vectorized", "float4 global loads, A tile stored transposed in shared memory: no bank conflicts (v5/v6)",
       70, false, vectorized::run},
      {"outer_product", "register fragments from float4 shared loads, outer product per k step (v7)", 70, false,
       outer_product::run},
      {"double_buffer", "multi-stage cp.async pipeline: the next tiles load while this one computes (v8)", 80, false,
       double_buffer::run},
      {"warptile", "warp tiling, tuned tile shapes per size, block swizzle for L2 reuse", 80, false, warptile::run},
      {"kahan", "Kahan-compensated accumulation: fp32 error well below plain fp32 at large k (article 003)", 80,
       false, kahan::run},
      {"cublas", "cublasSgemm, default (true fp32) math: the vendor baseline (article 004 v9)", 75, true, cublas::run},
  };
  return rungs;
}

}  // namespace rungs::sgemm
