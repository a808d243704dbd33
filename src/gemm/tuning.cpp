#include "gemm/tuning.hpp"

namespace rungs::sgemm {

// Measured with `rungs bench` on the lent GPU: see docs/BENCHMARKS.md.
std::string auto_variant(Trans, Trans, int64_t, int64_t, int64_t, int sm) {
  if (sm >= 80) return "warptile";
  if (sm >= 70) return "outer_product";
  return "cublas";
}

}  // namespace rungs::sgemm
