// rungs: GPU linear-algebra kernels as ladders of rungs, each verified against fp64
// and timed beside the vendor library. This is the whole public API.
//
// Conventions: device pointers, row-major storage (ld = row stride in elements),
// all work asynchronous on Options::stream like cuBLAS. Errors are exceptions:
// rungs::Error for bad arguments and CUDA/cuBLAS failures, rungs::Unsupported
// (a kind of Error) when the chosen variant cannot do what was asked.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rungs {

enum class Trans { N, T };
enum class Op { gemm, gemv, reduce };
// tf32 and tf32x3 arrive with the tensor-core ladder; until then asking for them throws rungs::Error.
enum class Math { fp32, tf32, tf32x3 };

struct Options {
  std::string variant = "auto";   // a rung's name from variants(op), or "auto"
  cudaStream_t stream = nullptr;  // all work goes on this stream; calls are asynchronous like cuBLAS
  Math math = Math::fp32;
};

// min_sm = major*10+minor (90 for Hopper); 0 for rungs that run on the host.
struct VariantInfo {
  std::string name;
  std::string summary;
  int rung;
  int min_sm;
  bool baseline;
};

// The rungs of one ladder, in ladder order, vendor baseline included ("cublas").
std::vector<VariantInfo> variants(Op op);

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The variant cannot do what was asked (a type, a math mode, a transpose, an architecture, a size).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C, row-major.
// BLAS semantics: beta == 0 means C is not read; m == 0 or n == 0 is a no-op;
// k == 0 (or alpha == 0) gives C = beta * C without reading A or B.
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const Options& opts = {});

// The name `auto` resolves to for this problem on the current device (what gemm would run).
std::string resolve_gemm_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const Options& opts = {});

}  // namespace rungs
