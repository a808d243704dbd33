// The contract between the reduce_sum dispatcher (reduce.cpp) and each rung of the reduction
// ladder. The list of rungs itself lives once, in ladder.cpp.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::reduce {

// The output type of each input type: int32 and int64 sum into int64.
template <typename T> struct SumOf { using type = T; };
template <> struct SumOf<int32_t> { using type = int64_t; };
template <typename T> using sum_t = typename SumOf<T>::type;

// One validated problem. The dispatcher guarantees before a rung sees it: n >= 1, in and out
// non-null. `in` may be misaligned for vector loads (in + 1 is a legal input) and n may be
// >= 2^31 (64-bit indexing where it is needed). The input must never be written.
//   i32: in is const int32_t*, out is int64_t* (exact)
//   i64: in is const int64_t*, out is int64_t* (wraps modulo 2^64: sum as uint64)
//   f32: in is const float*,   out is float*
//   f64: in is const double*,  out is double*
// Temporary device memory: detail::Scratch (stream-ordered, pool-backed), never a static buffer.
struct Args {
  DType dtype;
  const void* in;
  int64_t n;
  void* out;
  cudaStream_t stream;
};

using RunFn = void (*)(const Args&);

struct Rung {
  const char* name;
  const char* summary;
  int min_sm;     // major*10+minor
  bool baseline;  // the vendor library
  // For f32 and f64: the result is bitwise reproducible (same device and n) and within
  // 1 ulp of the exact sum + 2^-40 sum|x| (f32) / 2^-69 sum|x| (f64). Rungs without it sum
  // plainly in the input type (the article's kernels) and are checked against the plain bound.
  bool accurate;
  RunFn run;
};

// The ladder in order, starting at rung 1: rung number = index + 1 = the file prefix.
const std::vector<Rung>& ladder();

// One run() per rung, each defined in its own numbered file.
namespace interleaved { void run(const Args&); }      // 01_interleaved.cu
namespace sequential { void run(const Args&); }       // 02_sequential.cu
namespace unroll8 { void run(const Args&); }          // 03_unroll8.cu
namespace warp_unrolled { void run(const Args&); }    // 04_warp_unrolled.cu
namespace templated { void run(const Args&); }        // 05_templated.cu
namespace shuffle { void run(const Args&); }          // 06_shuffle.cu
namespace vectorized { void run(const Args&); }       // 07_vectorized.cu
namespace single_pass { void run(const Args&); }      // 08_single_pass.cu
namespace cub { void run(const Args&); }              // 09_cub.cu

// The `auto` choice (tuning.cpp): the rung that runs for n elements of dtype on this sm.
// For f32/f64 it must name an `accurate` rung.
std::string auto_variant(DType dtype, int64_t n, int sm);

}  // namespace rungs::reduce
