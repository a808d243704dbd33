// Rung 11, cublas: cublasSgemm with the handle's default math (true fp32, no TF32), the
// vendor baseline every rung is timed against (article 004's v9). For the tensor-core ladder,
// cublasGemmEx with the matching type and compute mode: CUBLAS_COMPUTE_32F for f16 and bf16
// (fp32 accumulation, fp32 alpha/beta), CUBLAS_COMPUTE_32F_FAST_TF32 for float with Math::tf32.
// cuBLAS has no 3xTF32 mode for fp32 data, so tf32x3 is Unsupported here.
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the operands swap.
// Handles are per host thread and per device (core/cublas_handle.hpp).
//
// FP8 (run_fp8): cublasLtMatmul, fp32 accumulation (CUBLAS_COMPUTE_32F, FAST_ACCUM off: partial sums
// promoted to fp32), fp32 alpha and beta on the host, bf16 or fp32 C = D (C read only when beta != 0).
// With the operands swapped, cuBLASLt's A is our B (n x k row-major = k x n column-major, op T) and
// its B is our A (m x k row-major = k x m column-major, op N): its FP8 kernels take only that "TN"
// form (both operands k-major), so ours must be ta = N, tb = T. The scales swap with the operands:
//   tensor:   A_SCALE = our b[0], B_SCALE = our a[0]                     (SCALAR_32F)
//   outer:    A_SCALE = our b[n] (its M = our n), B_SCALE = our a[m]      (OUTER_VEC_32F)
//   block128: A_SCALE = our b, 128x128 blocks, ceil(n/128) x ceil(k/128) with the k blocks contiguous
//             (BLK128x128_32F; rows padded to a multiple of 4 floats, as cuBLASLt's 16-byte-aligned
//             rows want, by a 2D copy when ceil(k/128) % 4 != 0);
//             B_SCALE = our a, 1x128 blocks, wanted with the m index contiguous (VEC128_32F), so our
//             m x ceil(k/128) row-major array is transposed into scratch first (11_cublas_scales.cu).
// e5m2 x e5m2, other transposes, unaligned operands and combinations the heuristic has no algorithm
// for throw rungs::Unsupported.
//
// Epilogues (run_epi): the unfused chain a user of cuBLAS writes: the product into scratch in C's
// type (bf16 for an fp8 output; 2n columns when gated), then the epilogue as plain kernels
// (gemm/epilogue.cu): bias, activation, gated product, beta * C, fp8 quantization.
#include "core/errors.hpp"
#include "core/cublas_handle.hpp"
#include "core/scratch.hpp"
#include "gemm/epilogue.hpp"
#include "gemm/gemm_rung.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <climits>
#include <cstdint>
#include <string>

namespace rungs::sgemm::cublas {

using detail::unsupported;

namespace {
template <typename T>
void gemm_ex(const ArgsT<T>& a, cudaDataType_t type, cublasComputeType_t compute) {
  if (a.lda > INT_MAX || a.ldb > INT_MAX || a.ldc > INT_MAX) unsupported("cublas", "cuBLAS takes 32-bit leading dimensions");
  cublasHandle_t h = detail::cublas_handle(a.stream);
  const cublasOperation_t opa = a.ta == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = a.tb == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  RUNGS_CUBLAS(cublasGemmEx(h, opb, opa, static_cast<int>(a.n), static_cast<int>(a.m), static_cast<int>(a.k),
                            &a.alpha, a.B, type, static_cast<int>(a.ldb), a.A, type, static_cast<int>(a.lda), &a.beta,
                            a.C, type, static_cast<int>(a.ldc), compute, CUBLAS_GEMM_DEFAULT));
}
}  // namespace

void run_tf32(const Args& a) { gemm_ex(a, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32); }
void run_f16(const ArgsH& a) { gemm_ex(a, CUDA_R_16F, CUBLAS_COMPUTE_32F); }
void run_bf16(const ArgsBF& a) { gemm_ex(a, CUDA_R_16BF, CUBLAS_COMPUTE_32F); }

void run(const Args& a) {
  if (a.lda > INT_MAX || a.ldb > INT_MAX || a.ldc > INT_MAX) unsupported("cublas", "cuBLAS takes 32-bit leading dimensions");
  cublasHandle_t h = detail::cublas_handle(a.stream);
  const cublasOperation_t opa = a.ta == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opb = a.tb == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  RUNGS_CUBLAS(cublasSgemm(h, opb, opa, static_cast<int>(a.n), static_cast<int>(a.m), static_cast<int>(a.k), &a.alpha,
                           a.B, static_cast<int>(a.ldb), a.A, static_cast<int>(a.lda), &a.beta, a.C,
                           static_cast<int>(a.ldc)));
}

namespace {
// Owners of the cuBLASLt descriptors, so a throw between create and matmul leaks none.
struct MatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  MatmulDesc() { RUNGS_CUBLAS(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F)); }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(d); }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& v) {
    RUNGS_CUBLAS(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)));
  }
};
struct Layout {
  cublasLtMatrixLayout_t d = nullptr;
  Layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld) {
    RUNGS_CUBLAS(cublasLtMatrixLayoutCreate(&d, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(d); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
};
struct Preference {
  cublasLtMatmulPreference_t d = nullptr;
  Preference() { RUNGS_CUBLAS(cublasLtMatmulPreferenceCreate(&d)); }
  ~Preference() { cublasLtMatmulPreferenceDestroy(d); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
  template <typename T>
  void set(cublasLtMatmulPreferenceAttributes_t attr, const T& v) {
    RUNGS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(d, attr, &v, sizeof(v)));
  }
};

// The largest power of two (at most 256, the heuristic's default assumption) dividing the address.
uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

const char* scaling_name(Scaling s) {
  switch (s) {
    case Scaling::tensor: return "tensor";
    case Scaling::outer: return "outer";
    case Scaling::block128: return "block128";
  }
  return "?";
}

// cuBLASLt's workspace: what NVIDIA's samples and PyTorch give it on Hopper (split-K and
// stream-K algorithms use it). Stream-ordered scratch, so concurrent calls never share it.
constexpr size_t kLtWorkspace = size_t(32) << 20;
}  // namespace

void run_fp8(const ArgsF8& a) {
  // The rung's min_sm (75) is its fp32 path's; FP8 tensor cores start at sm_89 (Ada).
  if (detail::current_sm() < 89) unsupported("cublas", "cuBLASLt's FP8 products need sm_89 or newer");
  if (a.a_type == F8::e5m2 && a.b_type == F8::e5m2)
    unsupported("cublas", "cuBLASLt has no e5m2 x e5m2 FP8 product (one operand must be e4m3)");
  if (a.ta != Trans::N || a.tb != Trans::T)
    unsupported("cublas",
                "cuBLASLt's FP8 kernels take only k-major operands: ta = N and tb = T (row-major A m x k, B "
                "stored n x k; cuBLASLt's \"TN\" form)");
  if (a.lda % 16 != 0 || a.ldb % 16 != 0 || alignment(a.A) < 16 || alignment(a.B) < 16)
    unsupported("cublas", "cuBLASLt's FP8 kernels need 16-byte-aligned A and B with lda and ldb multiples of 16");

  const cudaDataType_t ta = a.a_type == F8::e4m3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2;
  const cudaDataType_t tb = a.b_type == F8::e4m3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2;
  const cudaDataType_t tc = a.c_type == F8Out::bf16 ? CUDA_R_16BF : CUDA_R_32F;

  // Scales in cuBLASLt's order (its A is our B, its B our A; see the top of this file).
  const void* lt_a_scale = a.scales.b;
  const void* lt_b_scale = a.scales.a;
  int32_t lt_a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, lt_b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  const int64_t kb = (a.k + 127) / 128, nb = (a.n + 127) / 128;
  const int64_t kb_pad = (kb + 3) / 4 * 4;  // BLK128x128 rows: a multiple of 4 floats (16 bytes)
  const bool transpose_a_scales = a.scales.kind == Scaling::block128;
  const bool pad_b_scales = a.scales.kind == Scaling::block128 && kb_pad != kb;
  switch (a.scales.kind) {
    case Scaling::tensor: break;
    case Scaling::outer:
      lt_a_mode = lt_b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      break;
    case Scaling::block128:
      lt_a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      lt_b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      break;
  }

  MatmulDesc op;
  const cublasOperation_t lt_opa = CUBLAS_OP_T, lt_opb = CUBLAS_OP_N;
  op.set(CUBLASLT_MATMUL_DESC_TRANSA, lt_opa);
  op.set(CUBLASLT_MATMUL_DESC_TRANSB, lt_opb);
  op.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, lt_a_mode);
  op.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, lt_b_mode);
  const int8_t fast_accum = 0;  // fp32 promotion of the partial sums (the default, said explicitly)
  op.set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum);
  // The caller's arrays for the heuristic; replaced below by the reordered copies where needed.
  op.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, lt_a_scale);
  op.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, lt_b_scale);

  // cuBLASLt column-major: A k x n (ld = our ldb), B k x m (ld = our lda), C = D n x m (ld = our ldc).
  Layout la(tb, a.k, a.n, a.ldb);
  Layout lb(ta, a.k, a.m, a.lda);
  Layout lc(tc, a.n, a.m, a.ldc);

  Preference pref;
  const uint64_t ws_bytes = kLtWorkspace;
  pref.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, ws_bytes);
  // The heuristic assumes 256-byte-aligned pointers unless told: tell it what these are.
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(a.B));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(a.A));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(a.C));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(a.C));

  cublasLtHandle_t h = detail::cublaslt_handle();
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, op.d, la.d, lb.d, lc.d, lc.d, pref.d, 1, &heur, &found);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0))
    unsupported("cublas", std::string("cuBLASLt offers no algorithm for ") + scaling_name(a.scales.kind) +
                              " scaling of these types, shape and alignments on this device");
  RUNGS_CUBLAS(hs);

  // The scale arrays cuBLASLt reads, reordered where ours differ (enqueued only once an algorithm exists).
  detail::Scratch a_scales(transpose_a_scales ? size_t(a.m * kb) * sizeof(float) : 0, a.stream);
  detail::Scratch b_scales(pad_b_scales ? size_t(nb * kb_pad) * sizeof(float) : 0, a.stream);
  if (transpose_a_scales) {
    transpose_scales(a.m, kb, a.scales.a, a_scales.as<float>(), a.stream);
    lt_b_scale = a_scales.get();
  }
  if (pad_b_scales) {
    RUNGS_CUDA(cudaMemcpy2DAsync(b_scales.get(), size_t(kb_pad) * sizeof(float), a.scales.b, size_t(kb) * sizeof(float),
                                 size_t(kb) * sizeof(float), size_t(nb), cudaMemcpyDeviceToDevice, a.stream));
    lt_a_scale = b_scales.get();
  }
  op.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, lt_a_scale);
  op.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, lt_b_scale);

  detail::Scratch ws(kLtWorkspace, a.stream);
  RUNGS_CUBLAS(cublasLtMatmul(h, op.d, &a.alpha, a.B, la.d, a.A, lb.d, &a.beta, a.C, lc.d, a.C, lc.d, &heur.algo,
                              ws.get(), kLtWorkspace, a.stream));
}

void run_epi(const EpiCall& c) {
  if (c.type == GemmType::f32 && c.math == Math::tf32x3)
    unsupported("cublas", "cuBLAS has no 3xTF32 mode for fp32 data");
  const int64_t np = c.np();
  const EpiOut pt = c.c_type == EpiOut::e4m3 ? EpiOut::bf16 : c.c_type;  // the product's type
  const bool reads_ab = c.reads_ab();
  detail::Scratch P(reads_ab ? static_cast<size_t>(c.m * np) * (pt == EpiOut::f32 ? 4 : 2) : 0, c.stream);
  if (reads_ab) {
    switch (c.type) {
      case GemmType::f32: {
        const Args a{c.ta, c.tb, c.m, np, c.k, c.alpha, static_cast<const float*>(c.A), c.lda,
                     static_cast<const float*>(c.B), c.ldb, 0.0f, P.as<float>(), np, c.stream};
        c.math == Math::tf32 ? run_tf32(a) : run(a);
        break;
      }
      case GemmType::f16:
        run_f16(ArgsH{c.ta, c.tb, c.m, np, c.k, c.alpha, static_cast<const __half*>(c.A), c.lda,
                      static_cast<const __half*>(c.B), c.ldb, 0.0f, P.as<__half>(), np, c.stream});
        break;
      case GemmType::bf16:
        run_bf16(ArgsBF{c.ta, c.tb, c.m, np, c.k, c.alpha, static_cast<const __nv_bfloat16*>(c.A), c.lda,
                        static_cast<const __nv_bfloat16*>(c.B), c.ldb, 0.0f, P.as<__nv_bfloat16>(), np, c.stream});
        break;
      case GemmType::fp8: {
        ArgsF8 a{};
        a.ta = c.ta, a.tb = c.tb, a.m = c.m, a.n = np, a.k = c.k, a.alpha = c.alpha;
        a.A = c.A, a.a_type = c.a_type, a.lda = c.lda, a.B = c.B, a.b_type = c.b_type, a.ldb = c.ldb;
        a.scales = c.scales, a.beta = 0.0f, a.C = P.get(), a.c_type = pt == EpiOut::f32 ? F8Out::f32 : F8Out::bf16;
        a.ldc = np, a.stream = c.stream;
        run_fp8(a);
        break;
      }
    }
  }
  epilogue::apply(c, reads_ab ? P.get() : nullptr, pt, np);
}

}  // namespace rungs::sgemm::cublas
