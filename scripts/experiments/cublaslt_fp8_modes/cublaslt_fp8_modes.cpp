// Which FP8 scalings does the installed cuBLASLt offer on this GPU, and in which order
// does it read the block scales? rung 11's fp8 entry (src/gemm/11_cublas.cpp) assumes the answers.
// 1. For each scale-mode pair (cuBLASLt's A = our B, its B = our A), each operand type pair and
//    each C type, whether cublasLtMatmulAlgoGetHeuristic returns an algorithm at 4096^3 in the
//    "TN" form (both operands k-major: our ta = N, tb = T), with a 32 MiB workspace; the tensor
//    scaling also in the other three transpose forms.
// 2. The block scales' order: a 256 x 256 x 640 product (ceil(k/128) = 5, not a multiple of 4) with
//    BLK128x128 on its A and VEC128 on its B, small-integer operands and power-of-two scales, compared
//    with host sums under each candidate order of the two scale arrays: the match (relative error
//    ~1e-7) is the order cuBLASLt reads. rung 11 assumes "VEC128 m-contiguous, BLK rows of
//    round_up(kb, 4)".
// Build and run on the device (no library build):
//   g++ -O2 -std=c++17 -I/usr/local/cuda/include scripts/experiments/cublaslt_fp8_modes/cublaslt_fp8_modes.cpp
//     -L/usr/local/cuda/lib64 -lcublasLt -lcudart -o cublaslt_fp8_modes && ./cublaslt_fp8_modes
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                \
  do {                                                                                       \
    auto e_ = (x);                                                                           \
    if (static_cast<int>(e_) != 0) {                                                         \
      std::printf("%s:%d %s failed (%d)\n", __FILE__, __LINE__, #x, static_cast<int>(e_));  \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

namespace {
const char* mode_name(int32_t m) {
  switch (m) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return "SCALAR_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return "OUTER_VEC_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return "VEC128_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return "BLK128x128_32F";
  }
  return "?";
}
const char* type_name(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8F_E4M3: return "e4m3";
    case CUDA_R_8F_E5M2: return "e5m2";
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_32F: return "f32";
    default: return "?";
  }
}

constexpr size_t kWs = size_t(32) << 20;

struct Problem {
  cublasOperation_t opa, opb;
  int32_t a_mode, b_mode;
  cudaDataType_t at, bt, ct;
  int m, n, k;  // cuBLASLt's: D is m x n column-major
  const void *a_scale, *b_scale;
};

// Sets up the descriptors; returns the heuristic's status and count, and the matmul's status when run.
struct Lt {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  cublasStatus_t hs = CUBLAS_STATUS_SUCCESS;
  Lt(cublasLtHandle_t h_, const Problem& p) : h(h_) {
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &p.opa, sizeof(p.opa)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &p.opb, sizeof(p.opb)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &p.a_mode, sizeof(p.a_mode)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &p.b_mode, sizeof(p.b_mode)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &p.a_scale, sizeof(p.a_scale)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p.b_scale, sizeof(p.b_scale)));
    const bool ta = p.opa == CUBLAS_OP_T, tb = p.opb == CUBLAS_OP_T;
    CK(cublasLtMatrixLayoutCreate(&la, p.at, ta ? p.k : p.m, ta ? p.m : p.k, ta ? p.k : p.m));
    CK(cublasLtMatrixLayoutCreate(&lb, p.bt, tb ? p.n : p.k, tb ? p.k : p.n, tb ? p.n : p.k));
    CK(cublasLtMatrixLayoutCreate(&lc, p.ct, p.m, p.n, p.m));
    CK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kWs;
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    hs = cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &heur, &found);
  }
  ~Lt() {
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(op);
  }
};

float e4m3(float v) { return static_cast<float>(__nv_fp8_e4m3(v)); }
}  // namespace

int main() {
  int dev = 0;
  cudaDeviceProp prop{};
  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s, sm_%d%d; cuBLASLt %zu (headers %d)\n", prop.name, prop.major, prop.minor, cublasLtGetVersion(),
              CUBLAS_VERSION);
  cublasLtHandle_t h;
  CK(cublasLtCreate(&h));

  // Scale arrays large enough for any mode at 4096^3 (the heuristic reads no values).
  void* dscale = nullptr;
  CK(cudaMalloc(&dscale, size_t(4096) * 64 * sizeof(float)));

  // 1. The heuristic's answers. Our scaling kind -> (its A mode, its B mode).
  struct Kind {
    const char* ours;
    int32_t a_mode, b_mode;
  };
  const Kind kinds[] = {
      {"tensor", CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F},
      {"outer", CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F},
      {"block128", CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
      {"(1x128 both)", CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
      {"(blocks swapped)", CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F},
      {"(128x128 both)", CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F},
  };
  const cudaDataType_t f8[] = {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2};
  const cudaDataType_t cts[] = {CUDA_R_16BF, CUDA_R_32F};
  std::printf("\n4096^3, TN (our ta = N, tb = T), 32 MiB workspace: algorithms the heuristic returns\n");
  std::printf("%-17s %-15s %-15s %-5s %-5s %-4s  %s\n", "our scaling", "its A mode", "its B mode", "its A", "its B",
              "C", "result");
  for (const Kind& kd : kinds)
    for (cudaDataType_t at : f8)
      for (cudaDataType_t bt : f8)
        for (cudaDataType_t ct : cts) {
          Lt lt(h, Problem{CUBLAS_OP_T, CUBLAS_OP_N, kd.a_mode, kd.b_mode, at, bt, ct, 4096, 4096, 4096, dscale, dscale});
          std::printf("%-17s %-15s %-15s %-5s %-5s %-4s  %s (status %d)\n", kd.ours, mode_name(kd.a_mode),
                      mode_name(kd.b_mode), type_name(at), type_name(bt), type_name(ct),
                      lt.hs == CUBLAS_STATUS_SUCCESS && lt.found > 0 ? "yes" : "no", static_cast<int>(lt.hs));
        }
  std::printf("\ntensor scaling, e4m3 x e4m3, bf16 C, the other transpose forms (its opA, opB)\n");
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};
  for (cublasOperation_t oa : ops)
    for (cublasOperation_t ob : ops) {
      Lt lt(h, Problem{oa, ob, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                       CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, 4096, 4096, 4096, dscale, dscale});
      std::printf("  %c%c: %s (status %d)\n", oa == CUBLAS_OP_T ? 'T' : 'N', ob == CUBLAS_OP_T ? 'T' : 'N',
                  lt.hs == CUBLAS_STATUS_SUCCESS && lt.found > 0 ? "yes" : "no", static_cast<int>(lt.hs));
    }

  // 2. The block scales' order. Ours: C (m x n, row-major) = sum_k sa(i, k/128) sb(j/128, k/128) A[i][k] B[j][k],
  // A m x k and B n x k row-major (its B and its A, both k-major); its D is n x m column-major = our C.
  const int m = 256, n = 256, k = 640, kb = (k + 127) / 128, nb = (n + 127) / 128, kb4 = (kb + 3) / 4 * 4;
  std::vector<float> A(size_t(m) * k), B(size_t(n) * k);
  std::vector<__nv_fp8_e4m3> A8(A.size()), B8(B.size());
  for (size_t i = 0; i < A.size(); ++i) A8[i] = __nv_fp8_e4m3(A[i] = e4m3(float(int(((i * 2654435761u) >> 28) % 5) - 2)));
  for (size_t i = 0; i < B.size(); ++i) B8[i] = __nv_fp8_e4m3(B[i] = e4m3(float(int(((i * 40503u + 7) >> 9) % 5) - 2)));
  // Every slot a power of two that depends on the slot, so each candidate order gives other sums.
  const size_t sa_len = size_t(m) * kb, sb_len = size_t(nb) * kb4 > size_t(kb) * nb ? size_t(nb) * kb4 : size_t(kb) * nb;
  std::vector<float> sa(sa_len), sb(sb_len);
  for (size_t i = 0; i < sa.size(); ++i) sa[i] = std::ldexp(1.0f, int((i * 7 + i / 3) % 5) - 2);
  for (size_t i = 0; i < sb.size(); ++i) sb[i] = std::ldexp(1.0f, int((i * 3 + 1) % 4) - 1);
  void *dA, *dB, *dC;
  void *dsa, *dsb;
  CK(cudaMalloc(&dA, A8.size()));
  CK(cudaMalloc(&dB, B8.size()));
  CK(cudaMalloc(&dC, size_t(m) * n * sizeof(float)));
  CK(cudaMalloc(&dsa, sa.size() * sizeof(float)));
  CK(cudaMalloc(&dsb, sb.size() * sizeof(float)));
  CK(cudaMemcpy(dA, A8.data(), A8.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B8.data(), B8.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dsa, sa.data(), sa.size() * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dsb, sb.data(), sb.size() * sizeof(float), cudaMemcpyHostToDevice));
  void* ws;
  CK(cudaMalloc(&ws, kWs));
  std::printf("\nblock scales' order: m = %d, n = %d, k = %d (ceil(k/128) = %d), its A BLK128x128, its B VEC128, f32 C\n",
              m, n, k, kb);
  Lt lt(h, Problem{CUBLAS_OP_T, CUBLAS_OP_N, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                   CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_32F, n, m, k, dsb, dsa});
  if (lt.hs != CUBLAS_STATUS_SUCCESS || lt.found == 0) {
    std::printf("  no algorithm (status %d): order not measured\n", static_cast<int>(lt.hs));
    return 0;
  }
  const float alpha = 1.0f, beta = 0.0f;
  CK(cublasLtMatmul(h, lt.op, &alpha, dB, lt.la, dA, lt.lb, &beta, dC, lt.lc, dC, lt.lc, &lt.heur.algo, ws, kWs, 0));
  std::vector<float> C(size_t(m) * n);
  CK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));  // D n x m col-major = C row-major
  struct Order {
    const char* name;
    int a_kind;  // 0: sa[q * m + i] (m contiguous), 1: sa[i * kb + q] (k blocks contiguous)
    int b_kind;  // 0: sb[p * kb4 + q], 1: sb[p * kb + q], 2: sb[q * nb + p] (n blocks contiguous)
  };
  const Order orders[] = {
      {"VEC128 m-contiguous, BLK rows of round_up(kb, 4)", 0, 0}, {"VEC128 m-contiguous, BLK rows of kb", 0, 1},
      {"VEC128 m-contiguous, BLK n-contiguous", 0, 2},          {"VEC128 k-contiguous, BLK rows of round_up(kb, 4)", 1, 0},
      {"VEC128 k-contiguous, BLK rows of kb", 1, 1},            {"VEC128 k-contiguous, BLK n-contiguous", 1, 2},
  };
  for (const Order& o : orders) {
    double worst = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (int kk = 0; kk < k; ++kk) {
          const int q = kk / 128, p = j / 128;
          const double s_a = o.a_kind == 0 ? sa[size_t(q) * m + i] : sa[size_t(i) * kb + q];
          const double s_b = o.b_kind == 0 ? sb[size_t(p) * kb4 + q] : o.b_kind == 1 ? sb[size_t(p) * kb + q] : sb[size_t(q) * nb + p];
          const double t = s_a * s_b * A[size_t(i) * k + kk] * B[size_t(j) * k + kk];
          ref += t;
          mag += std::fabs(t);
        }
        const double err = std::fabs(C[size_t(i) * n + j] - ref) / (mag > 0 ? mag : 1);
        if (err > worst) worst = err;
      }
    std::printf("  %-52s largest |C - ref| / sum|terms| = %.2e%s\n", o.name, worst, worst < 1e-5 ? "  <- match" : "");
  }
  return 0;
}
