// rungs: GPU linear-algebra kernels as ladders of rungs, each verified against fp64
// and timed beside the vendor library. This is the whole public API.
//
// Conventions: device pointers, row-major storage (ld = row stride in elements),
// all work asynchronous on Options::stream like cuBLAS. Errors are exceptions:
// rungs::Error for bad arguments and CUDA/cuBLAS failures, rungs::Unsupported
// (a kind of Error) when the chosen variant cannot do what was asked.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rungs {

enum class Trans { N, T };
// allgather_gemm and gemm_reducescatter: the tensor-parallel products of rungs::dist
// (include/rungs/dist.hpp); their ladders are empty where the library was built without NCCL.
enum class Op { gemm, gemv, reduce, allgather_gemm, gemm_reducescatter };
// How a float gemm multiplies (Options::math; float inputs only):
//   fp32:   exact fp32 products on CUDA cores (the SGEMM ladder);
//   tf32:   tensor cores, each input rounded to tf32 (10-bit mantissa): about 1e-3 relative error;
//   tf32x3: tensor cores, each input split into a tf32 big part and a tf32 small part (both rounded
//           to nearest), three products (small x small dropped). Normwise error about 2^-22 (2.4e-7)
//           at any k from 32 up (1.3e-7 at k = 16): the tensor core's fp32 accumulation of each
//           32-deep stage keeps about 22 bits. cublasSgemm's error grows with k instead, so tf32x3
//           is more accurate than sgemm from k = 256 up at m = n >= 1024 (at 4096^3: 3.1e-7 against
//           1.15e-6) and up to 2.3x less accurate below k = 256 (k = 32: 2.4e-7 against 1.0e-7), and
//           at m = n = 128, where cuBLAS splits k, at every k measured (docs/gemm_tc.md).
enum class Math { fp32, tf32, tf32x3 };
// Element types of reduce_sum's input (for resolve_reduce_variant).
enum class DType { i32, i64, f32, f64 };

// CUDA graphs: gemm, gemv and reduce_sum may be captured on Options::stream (stream capture, any
// mode); the graph reads and writes the buffers when it runs, and temporary memory becomes the
// graph's own allocations. Two rungs cannot be replayed and throw Unsupported on a capturing stream
// before enqueueing anything: gemm's cpu_naive and gemv's const_x. (gemm_host is synchronous.)
// gemm's fused epilogue (Options::epilogue). With P = alpha * op(A) op(B) (fp8 scales applied):
//   not gated: C = act(P + bias) + beta * C
//   gated:     C = act(P[:, :n] + bias[:n]) * (P[:, n:2n] + bias[n:2n]) + beta * C   (C is m x n)
// op(B) then has 2n columns: the gate's n, then the up projection's n (ldb is checked against 2n
// columns with tb = N, against k with tb = T: B stored 2n x k). beta * C is the residual path;
// beta = 0 never reads C. bias: device memory, n values (2n when gated) of C's element type, float
// for an fp8 output (the overloads with __nv_fp8_e4m3* C and c_scales below); nullptr adds none.
// Every gemm overload takes it; `auto` applies any epilogue to any type, a named rung that cannot
// apply one throws rungs::Unsupported.
enum class Activation { none, relu, gelu, silu };  // gelu: the tanh approximation (torch's approximate="tanh")
struct Epilogue {
  const void* bias = nullptr;  // device, n values (2n when gated) of C's element type; float for fp8 output
  Activation act = Activation::none;
  bool gated = false;  // op(B) has 2n columns: the gate's n, then the up projection's n
};

struct Options {
  std::string variant = "auto";   // a rung's name from variants(op), or "auto"
  cudaStream_t stream = nullptr;  // all work goes on this stream; calls are asynchronous like cuBLAS
  Math math = Math::fp32;
  Epilogue epilogue{};            // gemm only: bias, activation, gated product (see Epilogue)
};

// min_sm = major*10+minor (90 for Hopper); 0 for rungs that run on the host.
struct VariantInfo {
  std::string name;
  std::string summary;
  int rung;
  int min_sm;
  bool baseline;
  // gemm: the element types and math modes the rung does, of "f32 tf32 tf32x3 f16 bf16 fp8"
  // (f32 = float with Math::fp32); other ladders: empty.
  std::string types{};
  // The rung this one builds on (it adds one idea to it): the one before it where the ladder is a
  // line; gemm's and the dist ladders' branches name theirs. Empty for a ladder's first rung and
  // for the vendor baseline.
  std::string parent{};
  // gemm's rungs on the tensor-core skeleton (docs/gemm_tc.md, "The skeleton"): the C++ types of
  // their four parts, Schedule, Mainloop, Epilogue and Accumulation, without namespaces (e.g.
  // "WholeTilesOf<256, 4>"). Empty for every other rung.
  std::vector<std::string> parts{};
  // gemm: the rung applies Options::epilogue and fp8 outputs (rungs that do not throw
  // rungs::Unsupported when given one; auto applies every epilogue).
  bool epilogue = false;
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

// Half and bfloat16 inputs and output, fp32 accumulation, alpha and beta in fp32, the same
// semantics as the float gemm (beta == 0: C not read). Options::math must be Math::fp32
// (it applies to float inputs only); any other value throws rungs::Error.
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda,
          const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
          const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc, const Options& opts = {});

// FP8 inputs (e4m3 or e5m2, either operand; sm_90 tensor cores), scaled, fp32 accumulation, bf16
// or float output: C (m x n) = alpha * sum_k (sa * op(A))(i,k) (sb * op(B))(k,j) + beta * C.
// The scales are device pointers of float:
//   Scaling::tensor:   a[0], b[0]
//   Scaling::outer:    a[m] (one per row of op(A)), b[n] (one per column of op(B))
//   Scaling::block128: a: m x ceil(k/128) row-major (1 x 128 blocks along k of each row of op(A));
//                      b: ceil(n/128) x ceil(k/128) row-major (128 x 128 blocks of op(B), n by k)
// Same argument checks and semantics as the other overloads (beta == 0: C not read; k == 0 or
// alpha == 0: C = beta * C); a null scale pointer, or a scale array shorter than the shape needs,
// is a rungs::Error naming it. Options::math must be Math::fp32. A rung that cannot do a type
// combination, a scaling or a transpose throws rungs::Unsupported.
enum class Scaling { tensor, outer, block128 };
struct Scales {
  const float* a = nullptr;
  const float* b = nullptr;
  Scaling kind = Scaling::tensor;
};
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, __nv_bfloat16* C, int64_t ldc,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e5m2* A, int64_t lda,
          const __nv_fp8_e5m2* B, int64_t ldb, const Scales& scales, float beta, float* C, int64_t ldc,
          const Options& opts = {});

// fp8 output, quantized per row and 128-column block (the layout Scaling::block128 reads for A):
// E is the epilogue's result (Options::epilogue, with beta = 0: beta must be 0; bias of float);
// c_scales: m x ceil(n/128) row-major floats, s = max |E| over the block / 448 (1 where the block
// is all zero; NaN where it holds a NaN), and C = E / s rounded to nearest e4m3. A chain of fp8
// products reads C and c_scales back as an fp8 A with Scaling::block128.
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A, int64_t lda,
          const __nv_bfloat16* B, int64_t ldb, __nv_fp8_e4m3* C, int64_t ldc, float* c_scales,
          const Options& opts = {});
void gemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_fp8_e4m3* A, int64_t lda,
          const __nv_fp8_e4m3* B, int64_t ldb, const Scales& scales, __nv_fp8_e4m3* C, int64_t ldc, float* c_scales,
          const Options& opts = {});

// The element type of a gemm call, for resolve_gemm_variant: f32 (float, with Options::math), f16,
// bf16, fp8 (any of the fp8 overloads above).
enum class GemmType { f32, f16, bf16, fp8 };

// The name `auto` resolves to for this problem on the current device (what gemm would run).
// For float, opts.math picks among the fp32, tf32 and tf32x3 rungs. lda / ldb (0: the stored row
// length) matter where a rung's fast path needs aligned rows (16-bit types on Hopper). scaling: the
// scales' layout of an fp8 call (Scales::kind; ignored for the other types).
std::string resolve_gemm_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const Options& opts = {},
                                 GemmType type = GemmType::f32, int64_t lda = 0, int64_t ldb = 0,
                                 Scaling scaling = Scaling::tensor);

// gemm with A, B and C in host memory (pageable or pinned), on the current device; returns when C
// holds the result. Same arguments and semantics as gemm; opts.variant and opts.math pick the
// device rung used on each block, opts.stream is not used (the call has streams of its own).
// The copies in, the multiplications and the copies out are pipelined over those streams, and
// pageable memory is staged through pinned buffers by host threads. Problems larger than device
// memory are streamed through in blocks. Each calling thread keeps its streams, device buffers,
// pinned buffers and staging threads for its next calls: gemm_host_release() gives back the
// calling thread's (on the current device); they are also given back when the thread exits.
// Safe to call from several host threads at once.
void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const Options& opts = {});
void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda,
               const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, const Options& opts = {});
void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A,
               int64_t lda, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
               const Options& opts = {});
void gemm_host_release();

// y = alpha * op(A) x + beta * y. A is stored row-major, m rows and n columns, row stride lda >= n.
// Trans::N: y has m elements, x has n.   Trans::T: y has n elements, x has m.
// incx, incy > 0 are element strides. BLAS semantics: beta == 0 means y is not read; an empty
// product (the dot length is 0) or alpha == 0 gives y = beta * y without reading A or x;
// an empty y is a no-op.
void gemv(Trans trans, int64_t m, int64_t n, float alpha, const float* A, int64_t lda, const float* x, int64_t incx,
          float beta, float* y, int64_t incy, const Options& opts = {});

// The name `auto` resolves to for this gemv on the current device.
std::string resolve_gemv_variant(Trans trans, int64_t m, int64_t n, const Options& opts = {});

// *out = sum of in[0..n). out is a device pointer; the call is asynchronous on opts.stream.
// n == 0 gives 0. The input is never modified. Temporary memory comes from a stream-ordered
// pool the library owns, so concurrent calls on different streams are safe.
//  * int32 is summed exactly in int64; int64 wraps modulo 2^64 (exact otherwise).
//  * float and double: NaN anywhere gives NaN; +Inf gives +Inf unless -Inf is also present (NaN).
//    The `auto` sum is bitwise reproducible (same device, same n) and accurate: error at most
//    1 ulp of the exact sum plus 2^-40 * sum|x| (float), 2^-69 * sum|x| (double).
void reduce_sum(const int32_t* in, int64_t n, int64_t* out, const Options& opts = {});
void reduce_sum(const int64_t* in, int64_t n, int64_t* out, const Options& opts = {});
void reduce_sum(const float* in, int64_t n, float* out, const Options& opts = {});
void reduce_sum(const double* in, int64_t n, double* out, const Options& opts = {});

// The name `auto` resolves to for a reduction of n elements of this type on the current device.
std::string resolve_reduce_variant(DType dtype, int64_t n, const Options& opts = {});

}  // namespace rungs
