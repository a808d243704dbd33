// The host's memory bandwidth, what bounds gemm_host from pageable memory (docs/gemm_host.md: beside
// the DMA a 16-core host copies at most ~30 GB/s of payload, so 1024^3 pageable cannot reach 0.30 ms,
// and more than 12 staging threads gain nothing). A pageable
// call moves each byte three times through host memory: the staging thread reads the caller's
// buffer and writes a pinned slot, and the copy engine reads the slot (C: the engine writes a
// slot, a thread reads it and writes the caller's C). So the pageable flow cannot beat
// 3 x bytes / (the host's memory bandwidth) whatever the GPU does. This measures, on 256 MiB
// buffers touched beforehand, medians of 7 (GB/s of bytes read + written):
//   memcpy T    T threads, each memcpy'ing its slice (what the staging threads do)
//   read T      T threads summing their slice (loads only)
//   write T     T threads memset'ing their slice (stores only)
//   memcpy T + DMA  the same memcpy while the copy engines move 2 GiB each way between pinned
//                   host memory and the device (longer than the memcpy: what a flow overlaps)
// Build and run on the GPU machine:
//   g++ -O2 -std=c++17 -I/usr/local/cuda/include scripts/experiments/host_membw/host_membw.cpp
//     -L/usr/local/cuda/lib64 -lcudart -lpthread -o host_membw && ./host_membw
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
static double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

template <typename F>
static double timed_threads(int t, F f) {
  std::vector<std::thread> th;
  const auto t0 = Clock::now();
  for (int i = 0; i < t; ++i) th.emplace_back(f, i);
  for (auto& x : th) x.join();
  return secs(t0);
}

int main() {
  const size_t bytes = size_t(256) << 20;
  char* src = static_cast<char*>(std::aligned_alloc(4096, bytes));
  char* dst = static_cast<char*>(std::aligned_alloc(4096, bytes));
  std::memset(src, 1, bytes), std::memset(dst, 2, bytes);
  void *pin_in, *pin_out, *dev_in, *dev_out;
  cudaMallocHost(&pin_in, bytes), cudaMallocHost(&pin_out, bytes);
  cudaMalloc(&dev_in, bytes), cudaMalloc(&dev_out, bytes);
  std::memset(pin_in, 3, bytes), std::memset(pin_out, 4, bytes);
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  volatile uint64_t sink = 0;
  std::printf("host memory, 256 MiB buffers, medians of 7, GB/s of bytes read + written\n");
  for (int t : {1, 2, 4, 8, 12, 16}) {
    const size_t per = bytes / t;
    auto run = [&](const char* name, double traffic, auto body, bool dma) {
      std::vector<double> v;
      for (int r = 0; r < 7; ++r) {
        if (dma)
          for (int j = 0; j < 8; ++j) {
            cudaMemcpyAsync(dev_in, pin_in, bytes, cudaMemcpyHostToDevice, s1);
            cudaMemcpyAsync(pin_out, dev_out, bytes, cudaMemcpyDeviceToHost, s2);
          }
        v.push_back(timed_threads(t, body));
        if (dma) cudaDeviceSynchronize();
      }
      std::sort(v.begin(), v.end());
      std::printf("%-8s %2d threads%s  %7.1f GB/s\n", name, t, dma ? " + DMA" : "      ", traffic / v[3] / 1e9);
    };
    auto copy = [&](int i) { std::memcpy(dst + i * per, src + i * per, per); };
    auto read = [&](int i) {
      const uint64_t* p = reinterpret_cast<const uint64_t*>(src + i * per);
      uint64_t acc = 0;
      for (size_t j = 0; j < per / 8; ++j) acc += p[j];
      sink = sink + acc;
    };
    auto write = [&](int i) { std::memset(dst + i * per, i, per); };
    run("memcpy", 2.0 * bytes, copy, false);
    run("read", 1.0 * bytes, read, false);
    run("write", 1.0 * bytes, write, false);
    run("memcpy", 2.0 * bytes, copy, true);
  }
  // The copy engines alone, for reference (pinned).
  for (int dir = 0; dir < 3; ++dir) {
    std::vector<double> v;
    for (int r = 0; r < 7; ++r) {
      const auto t0 = Clock::now();
      if (dir != 1) cudaMemcpyAsync(dev_in, pin_in, bytes, cudaMemcpyHostToDevice, s1);
      if (dir != 0) cudaMemcpyAsync(pin_out, dev_out, bytes, cudaMemcpyDeviceToHost, s2);
      cudaDeviceSynchronize();
      v.push_back(secs(t0));
    }
    std::sort(v.begin(), v.end());
    const char* names[] = {"DMA H2D alone", "DMA D2H alone", "DMA both ways"};
    std::printf("%-24s %7.1f GB/s (per direction)\n", names[dir], bytes / v[3] / 1e9);
  }
  return 0;
}
