// C = A B on the GPU with rungs: row-major, any shape. A and B hold ones, so every element of C is k.
#include <rungs/rungs.hpp>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

int main() {
  const int64_t m = 1000, n = 777, k = 513;  // no multiple of anything needed
  std::vector<float> hA(m * k, 1.0f), hB(k * n, 1.0f), hC(m * n);
  float *A, *B, *C;
  if (cudaMalloc(&A, hA.size() * 4) || cudaMalloc(&B, hB.size() * 4) || cudaMalloc(&C, hC.size() * 4))
    return std::puts("no usable CUDA device"), 1;
  cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice);
  rungs::gemm(rungs::Trans::N, rungs::Trans::N, m, n, k, 1.0f, A, k, B, n, 0.0f, C, n);  // throws rungs::Error
  cudaMemcpy(hC.data(), C, hC.size() * 4, cudaMemcpyDeviceToHost);
  std::printf("C[0] = %g, C[last] = %g (expected %lld); auto ran %s\n", hC[0], hC.back(), (long long)k,
              rungs::resolve_gemm_variant(rungs::Trans::N, rungs::Trans::N, m, n, k).c_str());
  return hC[0] == k && hC.back() == k ? 0 : 1;
}
