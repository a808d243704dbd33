// Does gemv's `auto` lose to its own multi_row rung at 2^20 x 64, Trans::N? The two run the same
// kernel (auto resolves to multi_row there), so any gap must come from how they are timed. This
// times them the way an outside harness does (three input sets rotated, a non-blocking stream,
// cublasSgemv interleaved, median of 50 after 20 warm-ups) in both orders, with and without the L2
// flushed between launches. Build and run on the device (after scripts/gpu.sh build):
//   g++ -O2 -std=c++17 -Iinclude -I/usr/local/cuda/include scripts/experiments/gemv_auto_order/gemv_auto_order.cpp
//     build-gpu/librungs.a -L/usr/local/cuda/lib64 -lcublas -lcublasLt -lcudart -lcuda -lpthread -ldl
//     -o build-gpu/gemv_auto_order && build-gpu/gemv_auto_order
#include <rungs/rungs.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                    \
  do {                                                                                           \
    auto e_ = (x);                                                                               \
    if (static_cast<int>(e_) != 0) {                                                             \
      std::printf("%s:%d %s failed (%d)\n", __FILE__, __LINE__, #x, static_cast<int>(e_));        \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

int main() {
  const int64_t m = int64_t{1} << 20, n = 64;
  constexpr int kSets = 3, kWarm = 20, kReps = 50;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h;
  CK(cublasCreate(&h));
  CK(cublasSetStream(h, s));
  std::vector<float> host(static_cast<size_t>(m * n));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& v : host) v = u(rng);
  float *A[kSets], *x[kSets], *y[kSets];
  for (int i = 0; i < kSets; ++i) {
    CK(cudaMalloc(reinterpret_cast<void**>(&A[i]), host.size() * 4));
    CK(cudaMalloc(reinterpret_cast<void**>(&x[i]), n * 4));
    CK(cudaMalloc(reinterpret_cast<void**>(&y[i]), m * 4));
    CK(cudaMemcpy(A[i], host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(x[i], host.data(), n * 4, cudaMemcpyHostToDevice));
  }
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  char* flush = nullptr;
  CK(cudaMalloc(reinterpret_cast<void**>(&flush), 2 * static_cast<size_t>(l2)));
  const float one = 1.f, zero = 0.f;
  auto call = [&](const std::string& v, int set) {
    if (v == "cublas") {  // row-major m x n, Trans::N = column-major n x m, op T
      CK(cublasSgemv(h, CUBLAS_OP_T, static_cast<int>(n), static_cast<int>(m), &one, A[set], static_cast<int>(n), x[set],
                     1, &zero, y[set], 1));
      return;
    }
    rungs::Options o;
    o.variant = v;
    o.stream = s;
    rungs::gemv(rungs::Trans::N, m, n, 1.f, A[set], n, x[set], 1, 0.f, y[set], 1, o);
  };
  std::printf("auto resolves to %s\n", rungs::resolve_gemv_variant(rungs::Trans::N, m, n).c_str());
  cudaEvent_t ev[4][2];
  for (auto& p : ev) {
    CK(cudaEventCreate(&p[0]));
    CK(cudaEventCreate(&p[1]));
  }
  const std::vector<std::vector<std::string>> orders = {
      {"cublas", "auto", "multi_row"}, {"cublas", "multi_row", "auto"}, {"auto", "multi_row", "cublas"}};
  for (bool flushed : {false, true}) {
    for (const auto& order : orders) {
      std::vector<std::vector<float>> t(order.size());
      for (int r = 0; r < kWarm + kReps; ++r) {
        const int set = r % kSets;
        for (size_t i = 0; i < order.size(); ++i) {
          if (flushed) CK(cudaMemsetAsync(flush, r & 0xff, 2 * static_cast<size_t>(l2), s));
          CK(cudaEventRecord(ev[i][0], s));
          call(order[i], set);
          CK(cudaEventRecord(ev[i][1], s));
        }
        CK(cudaStreamSynchronize(s));
        if (r < kWarm) continue;
        for (size_t i = 0; i < order.size(); ++i) {
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, ev[i][0], ev[i][1]));
          t[i].push_back(ms);
        }
      }
      std::printf("L2 %-8s", flushed ? "flushed" : "as left");
      for (size_t i = 0; i < order.size(); ++i) {
        std::sort(t[i].begin(), t[i].end());
        std::printf("  %d. %-9s %.4f ms", static_cast<int>(i + 1), order[i].c_str(), t[i][t[i].size() / 2]);
      }
      std::printf("\n");
    }
  }
  return 0;
}
