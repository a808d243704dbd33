// The contract between the gemv dispatcher (gemv.cpp) and each rung of the SGEMV ladder.
// The list of rungs itself lives once, in ladder.cpp.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::sgemv {

// One validated problem. The dispatcher guarantees before a rung sees it:
//   1 <= m, n <= INT32_MAX (m * n may exceed 2^31: element offsets are 64-bit);
//   out_len() >= 1 and dot_len() >= 1; alpha != 0; A, x, y non-null; lda >= n;
//   incx, incy >= 1; beta == 0 means y must not be read (NaN in y must not leak).
// A is stored row-major, m rows of n columns, row stride lda.
//   Trans::N: y[i*incy] = alpha * sum_j A[i*lda + j] * x[j*incx] + beta * y[i*incy], i < m, j < n
//   Trans::T: y[j*incy] = alpha * sum_i A[i*lda + j] * x[i*incx] + beta * y[j*incy], j < n, i < m
// Pointers carry no alignment promise beyond 4 bytes: vector loads need a checked fast path.
struct Args {
  Trans trans;
  int64_t m, n;
  float alpha;
  const float* A;
  int64_t lda;
  const float* x;
  int64_t incx;
  float beta;
  float* y;
  int64_t incy;
  cudaStream_t stream;

  int64_t out_len() const { return trans == Trans::N ? m : n; }  // elements of y
  int64_t dot_len() const { return trans == Trans::N ? n : m; }  // elements of x
};

using RunFn = void (*)(const Args&);

struct Rung {
  const char* name;
  const char* summary;
  int min_sm;     // major*10+minor
  bool baseline;  // the vendor library
  RunFn run;
};

// The ladder in order, starting at rung 1: rung number = index + 1 = the file prefix.
const std::vector<Rung>& ladder();

// One run() per rung, each defined in its own numbered file. Every rung does both transposes.
namespace naive { void run(const Args&); }            // 01_naive.cu
namespace coalesced { void run(const Args&); }        // 02_coalesced.cu
namespace const_x { void run(const Args&); }          // 03_const_x.cu
namespace smem_x { void run(const Args&); }           // 04_smem_x.cu
namespace warp_row { void run(const Args&); }         // 05_warp_row.cu
namespace multi_row { void run(const Args&); }        // 06_multi_row.cu
namespace split_k { void run(const Args&); }          // 07_split_k.cu
namespace cublas { void run(const Args&); }           // 08_cublas.cpp

// y = beta * y over len elements of stride inc (beta == 0 writes zeros without reading y).
// Used for the empty product and alpha == 0.
void scale_y(int64_t len, float beta, float* y, int64_t inc, cudaStream_t stream);

// The `auto` choice (tuning.cpp): the rung that runs for this shape on a device of this sm.
std::string auto_variant(Trans trans, int64_t m, int64_t n, int sm);

}  // namespace rungs::sgemv
