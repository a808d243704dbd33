// How fast rungs 7 and 8's one-sided copies move bytes against NCCL's copy-engine all-to-all, alone
// (nothing else running): each rank sends bytes/world to every peer, into the peer's part of a
// symmetric window (ncclMemAlloc + ncclCommWindowRegister on a communicator split with CTAPolicy =
// NCCL_CTA_POLICY_ZERO; the peers' addresses read by a kernel with ncclGetPeerPointer):
//   alltoall        ncclAlltoAll in the window (NCCL 2.28 runs it on copy engines: the reference)
//   batch           one cudaMemcpyBatchAsync of the world-1 copies (rung 7's per piece)
//   streams         one cudaMemcpyAsync per peer, each on its own stream
//   batch x4        the copies in 4 batches, a quarter each (rung 7's pieces)
//   chunks 8 MiB    one batch of 8 MiB chunks, round-robin over the peers
//   one peer a time one copy after another on one stream, peer r+1 first (rung 8's order)
// One thread per GPU (ncclCommInitAll), the ranks aligned by a one-int all-reduce before each rep;
// medians of 20 after 3, the slowest rank's; "out GB/s": the bytes leaving each rank over the time.
//
//   nvcc -std=c++17 -O2 -arch=sm_90a scripts/experiments/put_probe/put_probe.cu -o put_probe -I$NCCL/include
//       $NCCL/lib/libnccl.so.2 -Xlinker -rpath,$NCCL/lib
//   NCCL_NVLS_ENABLE=0 ./put_probe WORLD MIB...   (MIB: each rank's bytes, all peers together)
#include "../nccl_probe.hpp"

#include <cuda_runtime.h>
#include <nccl.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

using namespace nccl_probe;

__global__ void peer_bases(ncclWindow_t w, int world, unsigned long long* out) {
  for (int p = static_cast<int>(threadIdx.x); p < world; p += static_cast<int>(blockDim.x))
    out[p] = reinterpret_cast<unsigned long long>(ncclGetPeerPointer(w, 0, p));
}

void batch(std::vector<void*>& dst, std::vector<const void*>& src, std::vector<size_t>& n, cudaStream_t s) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t first = 0;
  CK(cudaMemcpyBatchAsync(dst.data(), src.data(), n.data(), dst.size(), &attr, &first, 1, s));
  dst.clear(), src.clear(), n.clear();
}

int main(int argc, char** argv) {
  if (argc < 3) { std::printf("usage: put_probe WORLD MIB...\n"); return 1; }
  multicast_off();
  const int world = std::atoi(argv[1]);
  const std::vector<size_t> sizes = sizes_mib(argc, argv, 2, 4096);
  const size_t most = *std::max_element(sizes.begin(), sizes.end());
  std::vector<ncclComm_t> comms = init_all(world);
  const char* modes[] = {"alltoall (NCCL, copy engines)", "batch", "streams", "batch x4", "chunks 8 MiB",
                         "one peer a time"};
  constexpr int kModes = 6, kReps = 20, kWarm = 3;
  std::vector<float> times(kModes * sizes.size() * world);
  std::vector<std::thread> th;
  for (int r = 0; r < world; ++r) th.emplace_back([&, r] {
    CK(cudaSetDevice(r));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaStream_t> side(world);
    for (auto& x : side) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    CeWindow w = open_ce_window(comms[r], r, 2 * most);  // [send: most][receive: most]
    unsigned long long* dp;
    CK(cudaMalloc(&dp, sizeof(unsigned long long) * world));
    peer_bases<<<1, 128>>>(w.win, world, dp);
    std::vector<unsigned long long> peer(world);
    CK(cudaMemcpy(peer.data(), dp, sizeof(unsigned long long) * world, cudaMemcpyDeviceToHost));
    int* one;
    CK(cudaMalloc(&one, sizeof(int)));
    CK(cudaMemset(one, 0, sizeof(int)));
    cudaEvent_t e0, e1, ej;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&ej, cudaEventDisableTiming));
    char* send = static_cast<char*>(w.buf);
    std::vector<void*> dst;
    std::vector<const void*> src;
    std::vector<size_t> n;
    for (int mode = 0; mode < kModes; ++mode)
      for (size_t si = 0; si < sizes.size(); ++si) {
        const size_t per = sizes[si] / world / 4096 * 4096;  // to each peer
        // rank r's bytes for peer d: send + d * per; they land at peer d's receive part + r * per
        auto to = [&](int d, size_t off) { return reinterpret_cast<char*>(peer[d]) + most + r * per + off; };
        std::vector<float> t;
        for (int it = 0; it < kWarm + kReps; ++it) {
          NK(ncclAllReduce(one, one, 1, ncclInt, ncclSum, comms[r], s));
          CK(cudaStreamSynchronize(s));
          CK(cudaEventRecord(e0, s));
          switch (mode) {
            case 0: NK(ncclAlltoAll(send, send + most, per, ncclInt8, w.comm, s)); break;
            case 1:
              for (int j = 1; j < world; ++j) {
                const int d = (r + j) % world;
                dst.push_back(to(d, 0)), src.push_back(send + d * per), n.push_back(per);
              }
              batch(dst, src, n, s);
              break;
            case 2:
              CK(cudaEventRecord(ej, s));
              for (int j = 1; j < world; ++j) {
                const int d = (r + j) % world;
                CK(cudaStreamWaitEvent(side[j], ej, 0));
                CK(cudaMemcpyAsync(to(d, 0), send + d * per, per, cudaMemcpyDeviceToDevice, side[j]));
              }
              for (int j = 1; j < world; ++j) {
                CK(cudaEventRecord(ej, side[j]));
                CK(cudaStreamWaitEvent(s, ej, 0));
              }
              break;
            case 3:
              for (int q = 0; q < 4; ++q) {
                const size_t lo = per * q / 4 / 4096 * 4096, hi = per * (q + 1) / 4 / 4096 * 4096;
                for (int j = 1; j < world; ++j) {
                  const int d = (r + j) % world;
                  dst.push_back(to(d, lo)), src.push_back(send + d * per + lo), n.push_back(hi - lo);
                }
                batch(dst, src, n, s);
              }
              break;
            case 4: {
              const size_t chunk = size_t{8} << 20;
              for (size_t off = 0; off < per; off += chunk)
                for (int j = 1; j < world; ++j) {
                  const int d = (r + j) % world;
                  dst.push_back(to(d, off)), src.push_back(send + d * per + off), n.push_back(std::min(chunk, per - off));
                }
              batch(dst, src, n, s);
              break;
            }
            case 5:
              for (int j = 1; j < world; ++j) {
                const int d = (r + j) % world;
                CK(cudaMemcpyAsync(to(d, 0), send + d * per, per, cudaMemcpyDeviceToDevice, s));
              }
              break;
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
    CK(cudaFree(dp));
    CK(cudaFree(one));
  });
  for (auto& x : th) x.join();
  int v = 0;
  NK(ncclGetVersion(&v));
  std::printf("NCCL %d, %d ranks; each rank sends bytes/world to every peer; ms (slowest rank's median), out GB/s\n", v,
              world);
  for (size_t si = 0; si < sizes.size(); ++si)
    for (int mode = 0; mode < kModes; ++mode) {
      float worst = 0;
      for (int r = 0; r < world; ++r) worst = std::max(worst, times[(mode * sizes.size() + si) * world + r]);
      const double out = static_cast<double>(sizes[si] / world / 4096 * 4096) * (world - 1);
      std::printf("  %7.1f MiB  %-32s %8.3f ms %7.0f GB/s\n", sizes[si] / 1048576.0, modes[mode], worst,
                  out / (worst * 1e-3) / 1e9);
    }
  for (auto c : comms) NK(ncclCommDestroy(c));
  return 0;
}
