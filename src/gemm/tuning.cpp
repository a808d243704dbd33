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
  // Tensor cores. f16, bf16, tf32 on the H100 (sm_90): cuBLAS beat every rung of ours at every
  // size (2026-11-23, commit b1e20da, nn, median of 20, L2 flushed): bf16 at 2048/4096/8192^3
  // cuBLAS 632/793/801 TFLOP/s vs mma_sync 224/281/265 and wmma 27/29/32; f16 alike (621/773/766
  // vs 228/278/269); tf32 cuBLAS 340/402/411 vs wmma 9.5/9.8/10.2. Elsewhere (not measured) the
  // top rung that does the type. tf32x3: wmma is the only rung that does it (cuBLAS has no 3xTF32).
  if (math == Math::tf32x3) return "wmma";
  if (type != GemmType::f32 || math == Math::tf32) {
    if (sm == 90) return "cublas";
    return sm >= 80 ? (type == GemmType::f32 ? "wmma" : "mma_sync") : "cublas";
  }
  const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  for (const Entry& e : kTable)
    if (e.sm == sm && mnk >= e.min_mnk) return e.variant;
  // Not measured on this device: the top rung it can run.
  if (sm >= 80) return "warptile";
  if (sm >= 70) return "outer_product";
  return "cublas";
}

}  // namespace rungs::sgemm
