// cuBLASLt's other fp32 algorithms for gemm_host's panel products (docs/gemm_host.md: the best is
// 1.11x cublasSgemm on 256 x 1024 x 1024, 1.00-1.01x on larger pieces; not built).
// gemm_host multiplies its pieces with rungs::gemm (cuBLAS's default choice for fp32); the traces
// show those products slower than one whole product (4096^3: 512 x 4096 x 1024 pieces at 37-41
// TFLOP/s against 51.7; 1024^3: 256 x 1024 x 1024 at 17-23 against 33). Does another algorithm
// that cuBLASLt's heuristic offers (split-K, other tiles; exact fp32, CUBLAS_COMPUTE_32F) run
// them faster? For each row-major m x n x k (C = A B as the flow calls it, i.e. column-major
// C^T = B^T A^T): cublasSgemm, then every algorithm of the heuristic's list, median of 30 launches
// each (operands resident in L2 or not, as in the flow: not flushed), and the largest difference
// from cublasSgemm's C. Build and run on the device:
//   g++ -O2 -std=c++17 -I/usr/local/cuda/include scripts/experiments/lt_probe/lt_probe.cpp
//     -L/usr/local/cuda/lib64 -lcublasLt -lcublas -lcudart -o lt_probe && ./lt_probe
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                         \
  do {                                                                                \
    auto e_ = (x);                                                                    \
    if (static_cast<int>(e_) != 0) {                                                  \
      std::printf("%s:%d %s failed (%d)\n", __FILE__, __LINE__, #x, static_cast<int>(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

template <typename F>
static double median_ms(cudaStream_t s, F&& f, int reps = 30) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a, s));
    f();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float x = 0;
    CK(cudaEventElapsedTime(&x, a, b));
    t.push_back(x);
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const long shapes[][3] = {{256, 1024, 1024}, {1024, 1024, 1024}, {512, 4096, 1024},
                            {512, 4096, 2048}, {4096, 4096, 1024}, {4096, 4096, 4096}};
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h;
  CK(cublasCreate(&h));
  CK(cublasSetStream(h, s));
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t ws_bytes = 64 << 20;
  void* ws = nullptr;
  CK(cudaMalloc(&ws, ws_bytes));
  for (auto& sh : shapes) {
    const long m = sh[0], n = sh[1], k = sh[2];
    float *A, *B, *C, *C0;
    CK(cudaMalloc(reinterpret_cast<void**>(&A), m * k * 4));
    CK(cudaMalloc(reinterpret_cast<void**>(&B), k * n * 4));
    CK(cudaMalloc(reinterpret_cast<void**>(&C), m * n * 4));
    CK(cudaMalloc(reinterpret_cast<void**>(&C0), m * n * 4));
    std::vector<float> h_a(m * k), h_b(k * n);
    for (auto& v : h_a) v = static_cast<float>(std::rand()) / RAND_MAX - 0.5f;
    for (auto& v : h_b) v = static_cast<float>(std::rand()) / RAND_MAX - 0.5f;
    CK(cudaMemcpy(A, h_a.data(), m * k * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, h_b.data(), k * n * 4, cudaMemcpyHostToDevice));
    const float one = 1, zero = 0;
    const double flop = 2.0 * m * n * k;
    // Row-major C (m x n) = A (m x k) B (k x n)  <=>  column-major C^T (n x m) = B^T (n x k) A^T (k x m).
    auto sgemm = [&] { CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C0, n)); };
    const double t0 = median_ms(s, sgemm);
    std::printf("%ld x %ld x %ld: cublasSgemm %.4f ms (%.1f TFLOP/s)\n", m, n, k, t0, flop / t0 / 1e9);
    std::vector<float> ref(m * n), got(m * n);
    CK(cudaMemcpy(ref.data(), C0, m * n * 4, cudaMemcpyDeviceToHost));

    cublasLtMatmulDesc_t desc;
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, k, n));  // B^T as the first operand
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, m, k));  // A^T
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, n));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[64];
    int got_n = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 64, res, &got_n));
    double best = 1e30;
    int best_i = -1;
    for (int i = 0; i < got_n; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      auto run = [&] {
        CK(cublasLtMatmul(lt, desc, &one, B, la, A, lb, &zero, C, lc, C, lc, &res[i].algo, ws, ws_bytes, s));
      };
      CK(cudaMemsetAsync(C, 0xff, m * n * 4, s));
      run();
      CK(cudaMemcpy(got.data(), C, m * n * 4, cudaMemcpyDeviceToHost));
      double diff = 0;
      for (long j = 0; j < m * n; ++j) diff = std::max(diff, static_cast<double>(std::fabs(got[j] - ref[j])));
      const double t = median_ms(s, run);
      int tile = 0, splitk = 0, red = 0, stages = 0;
      size_t w = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
      std::printf("  algo %2d: %.4f ms (%.1f TFLOP/s, x%.2f sgemm) tile %d splitK %d red %d stages %d ws %zu max|diff| %.2g\n", i,
                  t, flop / t / 1e9, t0 / t, tile, splitk, red, stages, res[i].workspaceSize, diff);
      if (t < best) best = t, best_i = i;
    }
    std::printf("  best: algo %d, %.4f ms, x%.2f cublasSgemm\n", best_i, best, t0 / best);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(C0);
  }
  return 0;
}
