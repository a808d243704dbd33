// The floor under any overlap of a tensor-parallel product with its collective: the collective and
// the product launched together on two streams with no dependency between them (what no schedule of
// a dist rung can beat, since its products must also wait for their rows), beside each alone.
// One thread per GPU (ncclCommInitAll), random bf16 inputs, cuBLAS bf16 gemm (fp32 accumulation),
// medians of 20 after 3, the slowest rank's, ranks aligned by a host barrier before each repetition.
//   allgather:     comm = ncclAllGather of A_local (m_local x k, bf16), on copy engines (symmetric
//                  window of a CTAPolicy-zero split) or NCCL's kernels; gemm = (world m_local) x n x k.
//   reducescatter: comm = ncclReduceScatter of an m x n fp32 (or bf16) buffer by NCCL's kernels, or
//                  ncclAlltoAll of it on copy engines; gemm = m x n x k_local.
//
//   g++ -O2 -std=c++17 scripts/experiments/overlap_floor/overlap_floor.cpp -o overlap_floor -I/usr/local/cuda/include
//       -I$NCCL/include -L/usr/local/cuda/lib64 -lcublas -lcudart $NCCL/lib/libnccl.so.2 -lpthread
//       -Wl,-rpath,$NCCL/lib
//   NCCL_NVLS_ENABLE=0 ./overlap_floor WORLD allgather M_LOCAL N_LOCAL K
//   NCCL_NVLS_ENABLE=0 ./overlap_floor WORLD reducescatter M N K_LOCAL
//   (NCCL from the wheel: NCCL=$(python3 -c 'import nvidia.nccl as n; print(n.__path__[0])'))
#include "../nccl_probe.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace nccl_probe;

#define BK(x) do { cublasStatus_t b_ = (x); if (b_ != CUBLAS_STATUS_SUCCESS) { std::printf("%s: %d\n", #x, (int)b_); std::exit(1); } } while (0)

static void fill_random(__nv_bfloat16* d, size_t n, uint64_t seed) {
  std::vector<__nv_bfloat16> h(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    h[i] = __float2bfloat16(static_cast<float>(static_cast<int64_t>(x >> 40) - (1 << 23)) / (1 << 23));
  }
  CK(cudaMemcpy(d, h.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
}

int main(int argc, char** argv) {
  if (argc < 6) { std::printf("usage: overlap_floor WORLD allgather|reducescatter M N K\n"); return 1; }
  multicast_off();
  const int world = std::atoi(argv[1]);
  const bool ag = std::strcmp(argv[2], "allgather") == 0;
  const int64_t M = std::atoll(argv[3]), N = std::atoll(argv[4]), K = std::atoll(argv[5]);
  // The product each rank runs: rows x N x K.
  const int64_t rows = ag ? world * M : M;
  std::vector<ncclComm_t> comms = init_all(world);
  const char* names[] = {"gemm alone", "comm alone (NCCL kernels)", "both at once (NCCL kernels)",
                         "comm alone (copy engines)", "both at once (copy engines)",
                         "comm alone (kernels, bf16)", "both at once (kernels, bf16)"};
  const int modes = ag ? 5 : 7;
  constexpr int kReps = 20, kWarm = 3;
  std::vector<float> times(modes * world);
  Barrier bar(world);
  std::vector<std::thread> th;
  for (int r = 0; r < world; ++r) th.emplace_back([&, r] {
    CK(cudaSetDevice(r));
    cudaStream_t sg, sc;
    CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    int lo, hi;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&sc, cudaStreamNonBlocking, hi));
    cublasHandle_t h;
    BK(cublasCreate(&h));
    BK(cublasSetStream(h, sg));
    __nv_bfloat16 *A, *B, *C;
    CK(cudaMalloc(&A, rows * K * 2));
    CK(cudaMalloc(&B, K * N * 2));
    CK(cudaMalloc(&C, rows * N * 2));
    fill_random(A, rows * K, 2 * r + 1);
    fill_random(B, K * N, 2 * r + 2);
    // the collective's buffers: allgather M x K bf16 per rank into world x that; reducescatter an
    // M x N fp32 send buffer into M/world x N (the copy engines: an all-to-all of it).
    const size_t send = ag ? static_cast<size_t>(M) * K * 2 : static_cast<size_t>(M) * N * 4;
    const size_t recv = ag ? send * world : send;
    void *ksend, *krecv;
    CK(cudaMalloc(&ksend, send));
    CK(cudaMalloc(&krecv, recv));
    CK(cudaMemset(ksend, 0, send));
    CeWindow w = open_ce_window(comms[r], r, send + recv);
    const ncclComm_t ce = w.comm;
    char* wsend = static_cast<char*>(w.buf);
    char* wrecv = wsend + send;
    auto gemm = [&] {
      const float one = 1.0f, zero = 0.0f;  // row-major C = A B as column-major C^T = B^T A^T
      BK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, rows, K, &one, B, CUDA_R_16BF, N, A, CUDA_R_16BF, K, &zero, C,
                      CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    auto comm = [&](int kind) {  // 0 kernels, 1 copy engines, 2 kernels bf16 (reducescatter)
      if (ag) {
        if (kind == 0) NK(ncclAllGather(ksend, krecv, send / 2, ncclBfloat16, comms[r], sc));
        else NK(ncclAllGather(wrecv + r * send, wrecv, send / 2, ncclBfloat16, ce, sc));
      } else {
        if (kind == 0) NK(ncclReduceScatter(ksend, krecv, send / 4 / world, ncclFloat, ncclSum, comms[r], sc));
        else if (kind == 1) NK(ncclAlltoAll(wsend, wrecv, send / 4 / world, ncclFloat, ce, sc));
        else NK(ncclReduceScatter(ksend, krecv, send / 2 / world, ncclBfloat16, ncclSum, comms[r], sc));
      }
    };
    cudaEvent_t e0, e1, eg, ec;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&eg));
    CK(cudaEventCreate(&ec));
    for (int mode = 0; mode < modes; ++mode) {
      std::vector<float> t;
      for (int it = 0; it < kWarm + kReps; ++it) {
        CK(cudaDeviceSynchronize());
        bar.wait();
        CK(cudaEventRecord(e0, sg));
        CK(cudaStreamWaitEvent(sc, e0));
        const bool g = mode == 0 || mode == 2 || mode == 4 || mode == 6;
        const int kind = mode <= 2 ? 0 : mode <= 4 ? 1 : 2;
        if (mode != 0) comm(kind);  // the collective first: queued before the gemm fills the SMs
        if (g) gemm();
        CK(cudaEventRecord(ec, sc));
        CK(cudaStreamWaitEvent(sg, ec));
        CK(cudaEventRecord(e1, sg));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (it >= kWarm) t.push_back(ms);
      }
      times[mode * world + r] = median(t);
    }
    close_ce_window(w);
  });
  for (auto& t : th) t.join();
  int ver;
  NK(ncclGetVersion(&ver));
  std::printf("NCCL %d, %d ranks, %s, %s %lld x %lld x %lld per rank (gemm %lld x %lld x %lld), ms (slowest rank's median):\n",
              ver, world, ag ? "allgather (bf16 A)" : "reducescatter (fp32 partials)", ag ? "m_local n_local k" : "m n k_local",
              (long long)M, (long long)N, (long long)K, (long long)rows, (long long)N, (long long)K);
  std::vector<float> worst(modes, 0.f);
  for (int mode = 0; mode < modes; ++mode)
    for (int r = 0; r < world; ++r) worst[mode] = std::max(worst[mode], times[mode * world + r]);
  for (int mode = 0; mode < modes; ++mode) {
    std::printf("  %-30s %8.3f", names[mode], worst[mode]);
    if (mode == 2 || mode == 4 || mode == 6)
      std::printf("   / max(comm, gemm) = %.2f", worst[mode] / std::max(worst[0], worst[mode - 1]));
    std::printf("\n");
  }
  for (int r = 0; r < world; ++r) ncclCommDestroy(comms[r]);
  return 0;
}
