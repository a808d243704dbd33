// The contract between the gemm dispatcher (gemm.cpp) and each rung of the SGEMM ladder.
// The list of rungs itself lives once, in ladder.cpp.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rungs::sgemm {

// One validated problem. The dispatcher guarantees before a rung sees it:
//   1 <= m, n, k <= INT32_MAX; alpha != 0; A, B, C non-null and the ld's valid;
//   beta == 0 means C must not be read. Row-major: op(A) is m x k, op(B) is k x n.
// Rungs index with int tile coordinates and 64-bit element offsets.
// T is the element type of A, B and C (float, __half, __nv_bfloat16); alpha and beta are float
// and the accumulation is fp32 for every T.
template <typename T>
struct ArgsT {
  Trans ta, tb;
  int64_t m, n, k;
  float alpha;
  const T* A;
  int64_t lda;
  const T* B;
  int64_t ldb;
  float beta;
  T* C;
  int64_t ldc;
  cudaStream_t stream;
};
using Args = ArgsT<float>;
using ArgsH = ArgsT<__half>;
using ArgsBF = ArgsT<__nv_bfloat16>;

using RunFn = void (*)(const Args&);
using RunFnH = void (*)(const ArgsH&);
using RunFnBF = void (*)(const ArgsBF&);

// FP8 problems: the eight public overloads (A and B each e4m3 or e5m2, C bf16 or float) arrive as
// one ArgsF8 with the types as tags, so a rung has one fp8 entry and switches inside on what it does
// (throwing rungs::Unsupported for the rest). The dispatcher guarantees what it does for ArgsT,
// and that both scale pointers are non-null and their arrays long enough for `scales.kind`.
enum class F8 : uint8_t { e4m3, e5m2 };
enum class F8Out : uint8_t { bf16, f32 };
struct ArgsF8 {
  Trans ta, tb;
  int64_t m, n, k;
  float alpha;
  const void* A;  // __nv_fp8_e4m3 or __nv_fp8_e5m2, as a_type says
  F8 a_type;
  int64_t lda;
  const void* B;
  F8 b_type;
  int64_t ldb;
  Scales scales;
  float beta;
  void* C;  // __nv_bfloat16 or float, as c_type says
  F8Out c_type;
  int64_t ldc;
  cudaStream_t stream;
};
using RunFnF8 = void (*)(const ArgsF8&);

// A gemm with an epilogue (Options::epilogue, or an fp8 output with its block scales), any input
// type, as one call. The dispatcher guarantees what it does for ArgsT and ArgsF8 (but alpha != 0
// and k > 0: with either, P = 0 and the epilogue still applies, A, B and the scales unread), and
// bias and c_scales long enough; with gated, op(B) has 2n columns (np()).
enum class EpiOut : uint8_t { f32, f16, bf16, e4m3 };  // C's type; e4m3 with c_scales
struct EpiCall {
  GemmType type;  // the inputs': f32 (with math), f16, bf16, fp8 (a_type, b_type, scales)
  Math math;
  Trans ta, tb;
  int64_t m, n, k;
  float alpha;
  const void* A;
  F8 a_type;
  int64_t lda;
  const void* B;
  F8 b_type;
  int64_t ldb;
  Scales scales;
  float beta;  // 0 with an e4m3 C
  void* C;
  EpiOut c_type;
  int64_t ldc;
  float* c_scales;  // e4m3 C: m x ceil(n / 128) block scales
  Epilogue epi;
  cudaStream_t stream;
  int64_t np() const { return epi.gated ? 2 * n : n; }  // the product's columns
  bool reads_ab() const { return k > 0 && alpha != 0.0f; }
};
using RunFnEpi = void (*)(const EpiCall&);
// The C++ types of a skeleton rung's Schedule, Mainloop, Epilogue and Accumulation.
using PartsFn = std::vector<std::string> (*)();

// f(a8, b8, c): the problem's types as tags, A's and B's (__nv_fp8_e4m3 or __nv_fp8_e5m2) and C's
// (__nv_bfloat16 or float), so an fp8 rung instantiates its kernels once per combination.
template <class F>
void with_fp8_types(const ArgsF8& a, F&& f) {
  auto with_c = [&](auto a8, auto b8) {
    if (a.c_type == F8Out::bf16) f(a8, b8, __nv_bfloat16{});
    else f(a8, b8, float{});
  };
  auto with_b = [&](auto a8) {
    if (a.b_type == F8::e4m3) with_c(a8, __nv_fp8_e4m3{});
    else with_c(a8, __nv_fp8_e5m2{});
  };
  if (a.a_type == F8::e4m3) with_b(__nv_fp8_e4m3{});
  else with_b(__nv_fp8_e5m2{});
}

// A rung says what it does by the entry points it fills: one per element type and math mode.
// A null entry means "not this rung": the dispatcher throws rungs::Unsupported naming what was
// asked. The CUDA-core rungs fill only `run`; the tensor-core rungs fill the others.
struct Rung {
  const char* name;
  const char* parent;  // the rung this one builds on ("" for the first rung and the vendor's)
  const char* summary;
  int min_sm;     // major*10+minor; 0 = runs on the host
  bool baseline;  // the vendor library
  RunFn run;                // float inputs, Math::fp32 (exact fp32 products)
  RunFn tf32 = nullptr;     // float inputs, Math::tf32 (inputs rounded to tf32, tensor cores)
  RunFn tf32x3 = nullptr;   // float inputs, Math::tf32x3 (big/small tf32 split, three products)
  RunFnH f16 = nullptr;     // __half inputs and output
  RunFnBF bf16 = nullptr;   // __nv_bfloat16 inputs and output
  RunFnF8 fp8 = nullptr;    // fp8 inputs (ArgsF8), scaled, bf16 or float output
  PartsFn parts = nullptr;  // a rung on the tensor-core skeleton: its parts' types (ws::part_names)
  RunFnEpi epi = nullptr;   // any input type with an epilogue (EpiCall)
};

// The ladder in order; index = rung number (file prefix).
const std::vector<Rung>& ladder();

// One run() per rung, each defined in its own numbered file.
namespace cpu_naive { void run(const Args&); }        // 00_cpu_naive.cpp
namespace naive { void run(const Args&); }            // 01_naive.cu
namespace coalesced { void run(const Args&); }        // 02_coalesced.cu
namespace smem_tiling { void run(const Args&); }      // 03_smem_tiling.cu
namespace blocktile_1d { void run(const Args&); }     // 04_blocktile_1d.cu
namespace blocktile_2d { void run(const Args&); }     // 05_blocktile_2d.cu
namespace vectorized { void run(const Args&); }       // 06_vectorized.cu
namespace outer_product { void run(const Args&); }    // 07_outer_product.cu
namespace double_buffer { void run(const Args&); }    // 08_double_buffer.cu
namespace warptile { void run(const Args&); }         // 09_warptile.cu
namespace kahan { void run(const Args&); }            // 10_kahan.cu
namespace cublas {                                    // 11_cublas.cpp
void run(const Args&);
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
void run_fp8(const ArgsF8&);  // cublasLtMatmul
// The product into scratch (C's type; bf16 for an fp8 output), then the epilogue as plain kernels
// (gemm/epilogue.hpp): the unfused chain.
void run_epi(const EpiCall&);
// dst (cols x rows) = transpose of src (rows x cols), both row-major floats, on `stream`: the 1x128
// block scales of A in cuBLASLt's order (11_cublas_scales.cu).
void transpose_scales(int64_t rows, int64_t cols, const float* src, float* dst, cudaStream_t stream);
}  // namespace cublas
// The tensor-core rungs: one entry point per type / math mode they do.
namespace wmma {                                      // 12_wmma.cu
void run_tf32(const Args&);
void run_tf32x3(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
}  // namespace wmma
namespace mma_sync {                                  // 13_mma_sync.cu
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
}  // namespace mma_sync
namespace wgmma {                                     // 14_wgmma.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma
namespace wgmma_ws {                                  // 15_wgmma_ws.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
void run_epi(const EpiCall&);  // f16 and bf16, the fused epilogue (ws/fused.cuh)
}  // namespace wgmma_ws
namespace wgmma_narrow {                              // 16_wgmma_narrow.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_narrow
namespace wgmma_tma_store {                           // 17_wgmma_tma_store.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
void run_epi(const EpiCall&);  // f16 and bf16, the fused epilogue through TMA stores (ws/fused.cuh)
}  // namespace wgmma_tma_store
namespace wgmma_pingpong {                            // 18_wgmma_pingpong.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_pingpong
namespace wgmma_streamk {                             // 19_wgmma_streamk.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_streamk
namespace wgmma_ragged {                              // 20_wgmma_ragged.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_ragged
namespace wgmma_overlap {                             // 21_wgmma_overlap.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
void run_epi(const EpiCall&);  // f16 and bf16, the fused epilogue under the next tile's MMAs
}  // namespace wgmma_overlap
namespace wgmma_deal {                                // 22_wgmma_deal.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_deal
namespace wgmma_balanced {                            // 23_wgmma_balanced.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_balanced
// The decode rungs: few rows of A (m <= 128) against a large W, CUDA cores.
namespace decode_rows {                               // 24_decode_rows.cu
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
}  // namespace decode_rows
namespace decode_splitk {                             // 25_decode_splitk.cu
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
}  // namespace decode_splitk
namespace decode_wgmma {                              // 26_decode_wgmma.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace decode_wgmma
namespace decode_streamk {                            // 27_decode_streamk.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace decode_streamk
// The fp8 rungs.
namespace wgmma_fp8 {                                 // 28_wgmma_fp8.cu (sm_90a)
void run_fp8(const ArgsF8&);
std::vector<std::string> parts();
}  // namespace wgmma_fp8
namespace wgmma_fp8_promote {                         // 29_wgmma_fp8_promote.cu (sm_90a)
void run_fp8(const ArgsF8&);
std::vector<std::string> parts();
}  // namespace wgmma_fp8_promote
namespace wgmma_fp8_overlap {                         // 30_wgmma_fp8_overlap.cu (sm_90a)
void run_fp8(const ArgsF8&);
std::vector<std::string> parts();
}  // namespace wgmma_fp8_overlap
namespace decode_fp8 {                                // 31_decode_fp8.cu (sm_90a)
void run_fp8(const ArgsF8&);  // m <= 128
}  // namespace decode_fp8
namespace decode_resident {                           // 32_decode_resident.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace decode_resident
namespace decode_wide {                               // 33_decode_wide.cu (sm_90a)
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
}  // namespace decode_wide
namespace decode_fp8_wide {                           // 34_decode_fp8_wide.cu (sm_90a)
void run_fp8(const ArgsF8&);  // m <= 64
}  // namespace decode_fp8_wide

// The per-stage sums and 3xTF32 on them.
namespace wgmma_sums {                                // 35_wgmma_sums.cu (sm_90a)
void run_tf32(const Args&);
void run_f16(const ArgsH&);
void run_bf16(const ArgsBF&);
std::vector<std::string> parts();
}  // namespace wgmma_sums
namespace wgmma_x3 {                                  // 36_wgmma_x3.cu (sm_90a)
void run_tf32x3(const Args&);
std::vector<std::string> parts();
}  // namespace wgmma_x3
namespace wgmma_x3_rs {                               // 37_wgmma_x3_rs.cu (sm_90a)
void run_tf32x3(const Args&);
std::vector<std::string> parts();
}  // namespace wgmma_x3_rs

// C = beta * C over m x n (beta == 0 writes zeros without reading C). Used for k == 0 / alpha == 0.
void scale_c(int64_t m, int64_t n, float beta, float* C, int64_t ldc, cudaStream_t stream);
void scale_c(int64_t m, int64_t n, float beta, __half* C, int64_t ldc, cudaStream_t stream);
void scale_c(int64_t m, int64_t n, float beta, __nv_bfloat16* C, int64_t ldc, cudaStream_t stream);

}  // namespace rungs::sgemm
