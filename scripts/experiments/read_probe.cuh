// Shared by read_floor.cu, tile_read.cu, tile_fit.cu and decode_grid.cu: read_floor's contiguous
// reader (bulk_read), the decode rungs' tiled read by one thread (tiled_read), the device's buffers
// (setup), the timing of one launch as `rungs bench` times it (median_ms), the contiguous read of 2
// GiB that the tiled probes divide by (reference_gbs), the driver's tensor-map encoder
// (tensor_map_encoder) and a bf16 map in the decode rungs' boxes (bf16_map).
#pragma once

#include "ck.hpp"
#include "detail/sm90/mma_stage.cuh"
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
using rungs::detail::tma_load_2d;

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

// W read as the decode rungs read it, without the MMAs: block b reads tile b / splits (rows
// T (b / splits) ..) over its split's k boxes, T x 64 each, through `stages` slots; with a_rows > 0
// each slot also holds an a_rows x 64 box of map_a (rows 0 .., the same box for every block: L2
// hits after the first block), as a rung reads A per k tile. One thread waits for each slot and
// refills it at once. HINT: W's loads carry no L2 cache hint (0), evict_first (1) or evict_last (2).
template <int HINT = 0>
__global__ void tiled_read(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap map_a, int T,
                           int a_rows, int kboxes, int splits, int stages, float* sink) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char* buf = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
  mbar_init_fence();
  const unsigned w_bytes = (static_cast<unsigned>(T) * 128u + 1023u) & ~1023u, a_bytes = a_rows * 128u;
  const unsigned slot = (w_bytes + a_bytes + 1023u) & ~1023u;
  const int t = blockIdx.x / splits, z = blockIdx.x % splits;
  const int j0 = kboxes * z / splits, j1 = kboxes * (z + 1) / splits;
  uint64_t policy = 0;
  if (HINT == 1) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  if (HINT == 2) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  auto issue = [&](int j, int s) {
    unsigned char* st = buf + static_cast<size_t>(s) * slot;
    mbar_expect_tx(&full[s], static_cast<unsigned>(T) * 128u + a_bytes);
    if (HINT == 0) {
      tma_load_2d(st, &map, j * 64, t * T, &full[s]);
    } else {
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
          " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(st)),
          "l"(&map), "r"(j * 64), "r"(t * T), "r"(smem_u32(&full[s])), "l"(policy)
          : "memory");
    }
    if (a_rows > 0) tma_load_2d(st + w_bytes, &map_a, j * 64, 0, &full[s]);
  };
  int issued = j0, done = j0;
  for (int s = 0; s < stages && issued < j1; ++s, ++issued) issue(issued, s);
  float acc = 0.0f;
  while (done < j1) {
    const int i = done - j0, s = i % stages;
    mbar_wait(&full[s], static_cast<unsigned>((i / stages) & 1));
    acc += reinterpret_cast<const float*>(buf + static_cast<size_t>(s) * slot)[0];
    ++done;
    if (issued < j1) {
      issue(issued, (issued - j0) % stages);
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

// A tensor map of a row-major bf16 matrix (rows x cols) in box_rows x 64 boxes with the 128-byte
// swizzle, the decode rungs' box, L2 fills promoted to `promotion` (256 bytes unless given); false
// where the driver refuses it.
inline bool bf16_map(PFN_cuTensorMapEncodeTiled_v12000 encode, void* base, int rows, int cols, int box_rows,
                     CUtensorMap* map, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estr[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace read_probe
