// Two machine probes for the bandwidth-bound ladders (gemv, reduce), independent of any rung:
// the DRAM read bandwidth a plain streaming-read kernel reaches (the "% DRAM" denominator)
// and the time of an empty kernel launch (the floor under every small problem); and the
// read pass that flushes the L2 before each timed launch (timing.hpp, L2Flusher).
#include "cli/device.hpp"
#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/read_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace rungs::cli {

namespace {

using detail::stream_read_kernel;

__global__ void empty_kernel() {}

// Spins for about `ns` nanoseconds of the GPU's global timer: work to queue the timed launch behind.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

struct Events {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  Events() {
    RUNGS_CUDA(cudaEventCreate(&e0));
    RUNGS_CUDA(cudaEventCreate(&e1));
  }
  ~Events() {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  double elapsed_ms() const {
    RUNGS_CUDA(cudaEventSynchronize(e1));
    float t = 0;
    RUNGS_CUDA(cudaEventElapsedTime(&t, e0, e1));
    return t;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

double measure_read_gbs() {
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  size_t bytes = size_t{2} << 30;
  if (bytes > free_b / 4) bytes = (free_b / 4) & ~size_t{0xFFFFF};
  if (bytes < (size_t{16} << 20)) return 0;
  void* buf = nullptr;
  float* sink = nullptr;
  RUNGS_CUDA(cudaMalloc(&buf, bytes));
  if (cudaMalloc(&sink, sizeof(float)) != cudaSuccess) {
    cudaFree(buf);
    throw Error("rungs info: cudaMalloc of 4 bytes failed");
  }
  double best = 0;
  try {
    RUNGS_CUDA(cudaMemset(buf, 0, bytes));
    int sms = 0, dev = 0;
    RUNGS_CUDA(cudaGetDevice(&dev));
    RUNGS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    Events ev;
    const size_t n4 = bytes / sizeof(float4);
    // A few grid shapes; the best median is the machine's read bandwidth.
    // (threads, blocks per SM): 1024 x 1 is the shape of the fastest reduction (reduce rung 8).
    const std::pair<int, int> shapes[] = {{256, 4}, {256, 8}, {256, 16}, {512, 2}, {1024, 1}};
    for (const auto& [threads, blocks_per_sm] : shapes) {
      const unsigned grid = static_cast<unsigned>(sms * blocks_per_sm);
      stream_read_kernel<<<grid, threads>>>(static_cast<const float4*>(buf), n4, sink);
      RUNGS_LAUNCHED();
      std::vector<double> ms;
      for (int r = 0; r < 9; ++r) {
        RUNGS_CUDA(cudaEventRecord(ev.e0));
        stream_read_kernel<<<grid, threads>>>(static_cast<const float4*>(buf), n4, sink);
        RUNGS_LAUNCHED();
        RUNGS_CUDA(cudaEventRecord(ev.e1));
        ms.push_back(ev.elapsed_ms());
      }
      const double med = median(ms);
      if (med > 0) best = std::max(best, static_cast<double>(bytes) / (med * 1e-3) / 1e9);
    }
  } catch (...) {
    cudaFree(buf);
    cudaFree(sink);
    throw;
  }
  cudaFree(buf);
  cudaFree(sink);
  return best;
}

double measure_launch_us() {
  Events ev;
  for (int i = 0; i < 10; ++i) empty_kernel<<<1, 32>>>();
  RUNGS_LAUNCHED();
  RUNGS_CUDA(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int r = 0; r < 101; ++r) {
    // The GPU is busy for 50 us while the host enqueues event, launch, event: the interval is
    // the GPU's own cost of a queued launch, as in `rungs bench` (whose stream always has work
    // queued: the L2 flush), not the host's latency to an idle GPU.
    spin_kernel<<<1, 32>>>(50000);
    RUNGS_CUDA(cudaEventRecord(ev.e0));
    empty_kernel<<<1, 32>>>();
    RUNGS_CUDA(cudaEventRecord(ev.e1));
    ms.push_back(ev.elapsed_ms());
  }
  RUNGS_LAUNCHED();
  return median(ms) * 1000.0;
}

void read_flush(const void* buf, size_t bytes, float* sink, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(detail::sm_count() * 8);
  stream_read_kernel<<<grid, 256, 0, stream>>>(static_cast<const float4*>(buf), bytes / sizeof(float4), sink);
  RUNGS_LAUNCHED();
}

}  // namespace rungs::cli
