// The SGEMV ladder: the one list of rungs, in order, starting at rung 1. The registry
// (variants), the dispatcher, the CLI, the tests and the plots all read it; adding a rung is
// one line here plus its file, whose prefix is the rung's number.
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv {

const std::vector<Rung>& ladder() {
  static const std::vector<Rung> rungs = {
      {"naive", "one thread per output element walking its row of A: a warp's loads are strided for Trans::N "
                "(article 000, algorithm 1)", 70, false, naive::run},
      {"coalesced", "one thread per output element, threads of a warp read consecutive addresses of A "
                    "(algorithm 2, without the host transpose)", 70, false, coalesced::run},
      {"const_x", "coalesced + x in constant memory, chunked through the 64 KiB limit (algorithm 3)", 70, false,
       const_x::run},
      {"smem_x", "coalesced + x staged through shared memory in tiles, any n (algorithm 4)", 70, false, smem_x::run},
      {"warp_row", "a warp per row (Trans::N) / float4 columns per thread (Trans::T), 128-bit loads, shuffle sums",
       70, false, warp_row::run},
      {"multi_row", "several rows per block, several independent 128-bit loads in flight, tuned block shapes", 70,
       false, multi_row::run},
      {"split_k", "split-K: the dot products split over blocks so short, wide problems fill the GPU; "
                  "deterministic second pass", 70, false, split_k::run},
      {"cublas", "cublasSgemv: the vendor baseline", 70, true, cublas::run},
  };
  return rungs;
}

}  // namespace rungs::sgemv
