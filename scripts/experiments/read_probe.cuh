// Shared by read_floor.cu, tile_read.cu and tile_fit.cu: read_floor's contiguous reader (bulk_read),
// the device's buffers (setup), the timing of one launch as `rungs bench` times it (median_ms), the
// contiguous read of 2 GiB that the tiled probes divide by (reference_gbs) and the driver's tensor-map
// encoder (tensor_map_encoder).
#pragma once

#include "ck.hpp"
#include "detail/hopper.cuh"
#include "detail/read_kernel.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace read_probe {

using rungs::detail::mbar_expect_tx;
using rungs::detail::mbar_init;
using rungs::detail::mbar_init_fence;
using rungs::detail::mbar_wait;
using rungs::detail::smem_u32;
using rungs::detail::stream_read_kernel;

constexpr int kMaxStages = 16;

// Chunk c of the buffer goes to block c % gridDim.x; each block keeps `stages` chunks in flight.
__global__ void bulk_read(const char* __restrict__ p, size_t chunks, unsigned chunk, int stages, float* sink) {
  extern __shared__ __align__(128) unsigned char buf[];
  __shared__ uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
  mbar_init_fence();
  const size_t first = blockIdx.x, step = gridDim.x;
  auto issue = [&](size_t c, int s) {
    mbar_expect_tx(&full[s], chunk);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(buf + static_cast<size_t>(s) * chunk)),
                 "l"(p + c * chunk), "r"(chunk), "r"(smem_u32(&full[s]))
                 : "memory");
  };
  size_t issued = 0, done = 0;
  for (int s = 0; s < stages && first + issued * step < chunks; ++s, ++issued) issue(first + issued * step, s);
  float acc = 0.0f;
  while (done < issued) {
    const int s = static_cast<int>(done % stages);
    mbar_wait(&full[s], static_cast<unsigned>((done / stages) & 1));
    acc += reinterpret_cast<const float*>(buf + static_cast<size_t>(s) * chunk)[0];
    ++done;
    if (first + issued * step < chunks) {
      issue(first + issued * step, static_cast<int>(issued % stages));
      ++issued;
    }
  }
  if (acc == -1.0f) *sink = acc;
}

// The GPU's size and the buffers every probe here needs: `big` bytes to read (zeroed), a flush
// buffer of 4 x L2 (at least 256 MB) and a sink; bulk_read allowed 200 KB of shared memory.
struct Setup {
  cudaDeviceProp prop;
  int sms;
  size_t flush_bytes;
  char* p = nullptr;
  float4* flush = nullptr;
  float* sink = nullptr;
};
inline Setup setup(size_t big) {
  Setup s;
  CK(cudaGetDeviceProperties(&s.prop, 0));
  s.sms = s.prop.multiProcessorCount;
  s.flush_bytes = std::max<size_t>(size_t{4} * s.prop.l2CacheSize, size_t{256} << 20);
  CK(cudaMalloc(&s.p, big));
  CK(cudaMalloc(&s.flush, s.flush_bytes));
  CK(cudaMalloc(&s.sink, 4));
  CK(cudaMemset(s.p, 0, big));
  CK(cudaMemset(s.flush, 0, s.flush_bytes));
  CK(cudaFuncSetAttribute(bulk_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  return s;
}

// The median of 30 launches, each after an L2 flush (reading g's flush buffer), timed by CUDA events.
template <typename Launch>
double median_ms(Launch launch, const Setup& g) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> v;
  launch();
  for (int r = 0; r < 30; ++r) {
    stream_read_kernel<<<g.sms * 8, 256>>>(g.flush, g.flush_bytes / 16, g.sink);
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    v.push_back(ms);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The contiguous bulk read of g's whole buffer (`big` bytes) in GB/s, printed with the device's name:
// the denominator of the tiled probes' % columns.
inline double reference_gbs(const Setup& g, size_t big) {
  const double ms = median_ms([&] { bulk_read<<<g.sms, 32, 65536 * 3>>>(g.p, big / 65536, 65536, 3, g.sink); }, g);
  const double gbs = static_cast<double>(big) / (ms * 1e-3) / 1e9;
  std::printf("%s, %d SMs; contiguous bulk read of %zu MiB: %.0f GB/s (the %% column's denominator)\n", g.prop.name,
              g.sms, big >> 20, gbs);
  return gbs;
}

// cuTensorMapEncodeTiled, from the driver; the program exits where the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000,
                                      cudaEnableDefault, &q));
  if (!encode) {
    std::fprintf(stderr, "the driver has no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  return encode;
}

}  // namespace read_probe
