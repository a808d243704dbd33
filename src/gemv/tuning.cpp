// The `auto` choice for gemv: the rung that runs for a shape on a device of a given sm.
// Rung 7 (split_k) when there are too few outputs to fill the GPU and each dot product is long
// enough to split; rung 6 (multi_row) otherwise. Thresholds tuned on H100 (132 SMs), see
// docs/bench/h100.md; they match rung 7's own rule there (rung 7 runs rung 6 when rung 6 fills the GPU).
// Measured with a clean L2, median of 30 (us): N 1024 x 65536: multi_row 93, split_k 94 (the
// crossing); N 256 x 262144: 141 vs 94; T 65536 x 1024: 107 vs 93; T 4096^2: 26.4 vs 29.2;
// T 2048^2: 10.6 vs 12.0 (too small for the second pass to pay).
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv {

namespace {
// Trans::N: split_k when m < kSplitMaxRowsN (a warp per row leaves SMs short of warps) and
// n >= kSplitMinDotN (two slices of at least 4096 elements).
constexpr int64_t kSplitMaxRowsN = 1024;
constexpr int64_t kSplitMinDotN = 8192;
// Trans::T: split_k when n < kSplitMaxColsT (rung 6's 32-column strips would cover under 3/4 of the
// SMs) and m >= kSplitMinDotT (enough rows that the second pass is paid back).
constexpr int64_t kSplitMaxColsT = 3072;
constexpr int64_t kSplitMinDotT = 4096;
}  // namespace

std::string auto_variant(Trans trans, int64_t m, int64_t n, int /*sm: the thresholds hold for sm_90*/) {
  const bool split = trans == Trans::N ? (m < kSplitMaxRowsN && n >= kSplitMinDotN)
                                       : (n < kSplitMaxColsT && m >= kSplitMinDotT);
  return split ? "split_k" : "multi_row";
}

}  // namespace rungs::sgemv
