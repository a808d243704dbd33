// How fast NCCL moves the dist rungs' bytes on copy engines against its kernels, alone (nothing
// else running): ncclAlltoAll and ncclAllGather between buffers of a symmetric window on a
// communicator split with CTAPolicy = NCCL_CTA_POLICY_ZERO (NCCL 2.28 runs them on copy engines,
// rungs 4 and 6), the same calls on plain buffers of the parent communicator (NCCL's kernels), and
// ncclReduceScatter in bf16 (rung 5's). One thread per GPU, ncclCommInitAll; medians of 20 calls
// after 3, the slowest rank's; "out GB/s" = the bytes that leave each rank over the time.
//
//   g++ -O2 -std=c++17 scripts/experiments/ce_probe/ce_probe.cpp -o ce_probe -I/usr/local/cuda/include
//       -I$NCCL/include -L/usr/local/cuda/lib64 -lcudart $NCCL/lib/libnccl.so.2 -lpthread -Wl,-rpath,$NCCL/lib
//   NCCL_NVLS_ENABLE=0 ./ce_probe WORLD MIB...   (MIB: each rank's send buffer; NCCL from the wheel:
//   NCCL=$(python3 -c 'import nvidia.nccl as n; print(n.__path__[0])'))
#include "../nccl_probe.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace nccl_probe;

int main(int argc, char** argv) {
  if (argc < 3) { std::printf("usage: ce_probe WORLD MIB...\n"); return 1; }
  multicast_off();
  const int world = std::atoi(argv[1]);
  const std::vector<size_t> sizes = sizes_mib(argc, argv, 2, 256);
  const size_t most = *std::max_element(sizes.begin(), sizes.end());
  std::vector<ncclComm_t> comms = init_all(world);
  const char* modes[] = {"alltoall copy engines", "alltoall kernels", "allgather copy engines", "allgather kernels",
                         "reducescatter bf16 kernels"};
  constexpr int kModes = 5, kReps = 20, kWarm = 3;
  // times[mode][size][rank]
  std::vector<float> times(kModes * sizes.size() * world);
  std::vector<std::thread> th;
  for (int r = 0; r < world; ++r) th.emplace_back([&, r] {
    CK(cudaSetDevice(r));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // allgather's receive buffer is world x the send buffer
    CeWindow w = open_ce_window(comms[r], r, most + most * world);
    const ncclComm_t ce = w.comm;
    void *a, *b;
    CK(cudaMalloc(&a, most));
    CK(cudaMalloc(&b, most * world));
    CK(cudaMemset(a, 0, most));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    char* wsend = static_cast<char*>(w.buf);
    char* wrecv = wsend + most;
    for (int mode = 0; mode < kModes; ++mode)
      for (size_t si = 0; si < sizes.size(); ++si) {
        const size_t bytes = sizes[si];
        std::vector<float> t;
        for (int it = 0; it < kWarm + kReps; ++it) {
          CK(cudaEventRecord(e0, s));
          switch (mode) {
            case 0: NK(ncclAlltoAll(wsend, wrecv, bytes / 2 / world, ncclBfloat16, ce, s)); break;
            case 1: NK(ncclAlltoAll(a, b, bytes / 2 / world, ncclBfloat16, comms[r], s)); break;
            case 2: NK(ncclAllGather(wrecv + r * bytes, wrecv, bytes / 2, ncclBfloat16, ce, s)); break;
            case 3: NK(ncclAllGather(a, b, bytes / 2, ncclBfloat16, comms[r], s)); break;
            case 4: NK(ncclReduceScatter(a, b, bytes / 2 / world, ncclBfloat16, ncclSum, comms[r], s)); break;
          }
          CK(cudaEventRecord(e1, s));
          CK(cudaEventSynchronize(e1));
          float ms;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          if (it >= kWarm) t.push_back(ms);
        }
        times[(mode * sizes.size() + si) * world + r] = median(t);
      }
    close_ce_window(w);
  });
  for (auto& t : th) t.join();
  int ver;
  NK(ncclGetVersion(&ver));
  std::printf("NCCL %d, %d ranks; out GB/s = the bytes leaving each rank / time (allgather: the send buffer x (world-1))\n",
              ver, world);
  for (int mode = 0; mode < kModes; ++mode)
    for (size_t si = 0; si < sizes.size(); ++si) {
      float worst = 0;
      for (int r = 0; r < world; ++r) worst = std::max(worst, times[(mode * sizes.size() + si) * world + r]);
      const double out = mode == 2 || mode == 3 ? static_cast<double>(sizes[si]) * (world - 1)
                                                 : static_cast<double>(sizes[si]) * (world - 1) / world;
      std::printf("%-28s send %8.1f MiB  %8.3f ms  out %6.1f GB/s\n", modes[mode], sizes[si] / 1048576.0, worst,
                  out / worst / 1e6);
    }
  for (int r = 0; r < world; ++r) ncclCommDestroy(comms[r]);
  return 0;
}
