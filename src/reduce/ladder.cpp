// The reduction ladder: the one list of rungs, in order, starting at rung 1 (article 002's
// order, then beyond it). The registry (variants), the dispatcher, the CLI, the tests and the
// plots all read it; adding a rung is one line here plus its file, whose prefix is its number.
#include "reduce/reduce_rung.hpp"

namespace rungs::reduce {

const std::vector<Rung>& ladder() {
  static const std::vector<Rung> rungs = {
      {"interleaved", "interleaved addressing, divergent branches (the classic first version)", 70, false, false,
       interleaved::run},
      {"sequential", "sequential addressing: whole warps stay active, no divergence (article 002)", 70, false, false,
       sequential::run},
      {"unroll8", "each thread first adds 8 elements from global memory", 70, false, false, unroll8::run},
      {"warp_unrolled", "last warp unrolled without __syncthreads, warp-synchronous done correctly (__syncwarp)", 70,
       false, false, warp_unrolled::run},
      {"templated", "fully unrolled, block size a template parameter (article 002's final version)", 70, false, false,
       templated::run},
      {"shuffle", "warp-shuffle reductions: no shared memory within a warp, one value per warp", 70, false, false,
       shuffle::run},
      {"vectorized", "128-bit loads, grid-stride loop over an SM-sized grid, several loads in flight", 70, false,
       false, vectorized::run},
      {"single_pass", "one launch: the last block combines the partials; compensated, reproducible float sums", 70,
       false, true, single_pass::run},
      {"cub", "cub::DeviceReduce::Sum: the vendor baseline", 70, true, false, cub::run},
  };
  return rungs;
}

}  // namespace rungs::reduce
