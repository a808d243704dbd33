// The `auto` choice for gemm: a table measured with `rungs bench` on the lent GPU. Each entry
// carries the measurement that justified it; a device with no entry gets the top rung.
#include "gemm/tuning.hpp"

#include "detail/tensor_map.hpp"

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

std::string auto_variant(Trans, Trans, int64_t m, int64_t n, int64_t k, int sm, GemmType type, Math math,
                         bool rows_aligned) {
  // Tensor cores. f16, bf16, tf32 on the H100 (sm_90), aligned rows: cuBLAS beat every rung of
  // ours at every size (2026-11-23, nn, median of 20, L2 flushed; commit 13c207f's bench): bf16
  // at 2048/4096/8192^3 cuBLAS 629/771/767 TFLOP/s vs wgmma_ws 482/683/688 and wgmma 508/675/702;
  // f16 617/746/731 vs 476/661/696 and 502/650/683; tf32 (4096, 8192) 389/374 vs wgmma_ws
  // 300/318. Rows that are not 16-byte aligned (odd ld in f16/bf16): wgmma_ws copies them aligned
  // and then runs its TMA path, 2.6x cuBLAS at 4095x4097x4093 (bf16 416 vs 160 TFLOP/s, f16 409
  // vs 152): measured there only, so used from 2^35 multiply-adds up. Elsewhere (not measured)
  // the top rung that does the type. tf32x3: wmma is the only rung that does it.
  if (math == Math::tf32x3) return "wmma";
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (type != GemmType::f32 || math == Math::tf32) {
    const bool large = work >= 34359738368.0;  // 2^35
    if (sm == 90 && detail::built_for_sm90a() && type != GemmType::f32 && !rows_aligned && large) return "wgmma_ws";
    if (sm == 90) return "cublas";
    return sm >= 80 ? (type == GemmType::f32 ? "wmma" : "mma_sync") : "cublas";
  }
  for (const Entry& e : kTable)
    if (e.sm == sm && work >= e.min_mnk) return e.variant;
  // Not measured on this device: the top rung it can run.
  if (sm >= 80) return "warptile";
  if (sm >= 70) return "outer_product";
  return "cublas";
}

}  // namespace rungs::sgemm
