// The `auto` choice for gemm: a table measured with `rungs bench` on the lent GPU. Each entry
// carries the measurement that justified it; a device with no entry gets the top rung.
#include "gemm/tuning.hpp"

#include <cstdint>

namespace rungs::sgemm {

namespace {

struct Entry {
  int sm;               // compute capability major*10+minor
  double min_mnk;       // applies when m*n*k >= this (entries are tried in order)
  const char* variant;
  // Why (median of 20, L2 flushed, interleaved with cuBLAS):
  const char* measured;
};

const Entry kTable[] = {
    {90, 0, "cublas",
     "H100 SXM, 2026-11-22: cuBLAS sgemm beat our best rung (warptile, best tile per size) at every size of the "
     "sweep: 1024^3 33 vs 29.2 TFLOP/s, 2048^3 49.8 vs 45.3, 4096^3 51.7 vs 47.3, 8192^3 51.6 vs 48.0 (nn; tn and "
     "nt alike). See docs/BENCHMARKS.md."},
};

}  // namespace

std::string auto_variant(Trans, Trans, int64_t m, int64_t n, int64_t k, int sm, GemmType type, Math math) {
  // Tensor cores (f16, bf16, tf32, tf32x3): not yet measured against each other on every size;
  // the top rung that does the type on this device.
  if (type != GemmType::f32 || math == Math::tf32) {
    if (sm == 90) return "wgmma";
    return sm >= 80 ? (type == GemmType::f32 ? "wmma" : "mma_sync") : "cublas";
  }
  if (math == Math::tf32x3) return "wmma";
  const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  for (const Entry& e : kTable)
    if (e.sm == sm && mnk >= e.min_mnk) return e.variant;
  // Not measured on this device: the top rung it can run.
  if (sm >= 80) return "warptile";
  if (sm >= 70) return "outer_product";
  return "cublas";
}

}  // namespace rungs::sgemm
