// How fast the tensor cores run chains of wgmma issued the way the Hopper rungs issue them, with
// no memory traffic (operands fixed in shared memory): the question rung 18 (wgmma_pingpong)
// left. Rung 17 runs two consumer warpgroups at once, each one chain of m64n256k16 into one
// accumulator; rung 18 runs one warpgroup at a time with two chains of m64n128k16 (rows 0-63 and
// 64-127 of its 128 x 128 tile). ncu put rung 18's tensor pipe at 69.5 % with no unit saturated.
// Hypothesis: a wgmma that accumulates into the registers of the one before it waits for that
// one's result, so the tensor cores stay busy only while the independent work in flight covers
// that latency: rung 17 has 2 x 128 cycles of independent work (two warpgroups' m64n256), rung
// 18 2 x 64 (one warpgroup's two m64n128). If so, config "1 WG, n128 x 2" runs near 70 % and
// "2 WG, n256 x 1" near 100 %; if not, both run near 100 % and the cause is elsewhere.
// Measured (H100, a5868ff): rung 18's pattern ran 2047 of 2048 MAC per cycle per SM, so chain latency
// is ruled out as rung 18's bound (docs/gemm_tc.md, src/gemm/18_wgmma_pingpong.cu).
// Each configuration: one block per SM, every warpgroup issuing `ktiles` groups of 4 k16 steps
// (one 64-deep k tile, as the rungs do) per chain, wgmma.commit_group after each group and
// wgmma.wait_group 1 (the rungs' pattern). Reports MACs per SM cycle against 2048 (dense bf16).
// Not part of the library or its tests: built and run by scripts/experiments/wgmma_probe/wgmma_probe.sh.
#include "detail/sm90/mma_stage.cuh"
#include "../sm_rate.hpp"

#include <cuda_bf16.h>

#include <cstdio>

using namespace rungs::detail;


template <int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db) {
  if constexpr (N == 256) wgmma<256, __nv_bfloat16, __nv_bfloat16>(d, da, db);
  else wgmma<128, __nv_bfloat16, __nv_bfloat16>(d, da, db);
}

constexpr int A_BYTES = 64 * 128;  // one warpgroup's 64 rows of A, K-major, 128 B per row

// WGS warpgroups, each CHAINS independent 64 x N accumulators; WAIT: wgmma.wait_group depth.
template <int WGS, int N, int CHAINS, int WAIT>
__global__ void __launch_bounds__(WGS * 128, 1) probe(int ktiles, long long* cycles, float* sink) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = smem_align_1024(raw);
  constexpr int BYTES = WGS * A_BYTES + N * 128;
  for (int i = threadIdx.x; i < BYTES / 16; i += blockDim.x) reinterpret_cast<int4*>(smem)[i] = make_int4(0, 0, 0, 0);
  fence_proxy_async_shared();  // the zeros, before the tensor cores read them
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const unsigned char* A = smem + wg * A_BYTES;
  const unsigned char* B = smem + WGS * A_BYTES;
  float d[CHAINS][N / 2];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[c][i] = 0.0f;
  __syncthreads();
  const long long t0 = clock64();
  for (int kt = 0; kt < ktiles; ++kt) {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint64_t da = smem_desc(A + kk * 32, 16, 1024), db = smem_desc(B + kk * 32, 16, 1024);
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) mma<N>(d[c], da, db);
    }
    wgmma_commit();
    wgmma_wait<WAIT>();
  }
  wgmma_wait<0>();
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[c][i];
  if (s != 0.0f) sink[threadIdx.x] = s;  // zeros in, zeros out: never taken, but not provable
}

template <int WGS, int N, int CHAINS, int WAIT>
void run(const char* what, int sms, int ktiles, long long* cycles, float* sink) {
  auto* k = &probe<WGS, N, CHAINS, WAIT>;
  const int smem = 1024 + WGS * A_BYTES + N * 128;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const double r = median_rate([&](int kt) { k<<<sms, WGS * 128, smem>>>(kt, cycles, sink); }, sms, ktiles, cycles,
                                double(WGS) * CHAINS * 64.0 * N * 16.0 * 4.0 * ktiles);
  std::printf("  %-44s %7.0f MAC/cycle/SM  %5.1f %% of 2048  (independent work in flight: %d x %d cycles)\n", what, r,
              100.0 * r / 2048.0, WGS * CHAINS, N / 2);
}

int main() {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, dev));
  std::printf("wgmma chains, bf16 m64nNk16, operands in shared memory, one block per SM on %d SMs (%s)\n", sms, p.name);
  long long* cycles = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&cycles, sizeof(long long) * sms));
  CK(cudaMalloc(&sink, sizeof(float) * 512));
  const int kt = 2048;
  run<1, 256, 1, 1>("1 WG, n256 x 1 chain, wait 1", sms, kt, cycles, sink);
  run<2, 256, 1, 1>("2 WG, n256 x 1 chain, wait 1 (rung 17)", sms, kt, cycles, sink);
  run<2, 256, 1, 0>("2 WG, n256 x 1 chain, wait 0", sms, kt, cycles, sink);
  run<3, 256, 1, 1>("3 WG, n256 x 1 chain, wait 1", sms, kt, cycles, sink);
  run<1, 128, 1, 1>("1 WG, n128 x 1 chain, wait 1", sms, kt, cycles, sink);
  run<1, 128, 2, 1>("1 WG, n128 x 2 chains, wait 1 (rung 18)", sms, kt, cycles, sink);
  run<1, 128, 2, 0>("1 WG, n128 x 2 chains, wait 0", sms, kt, cycles, sink);
  run<2, 128, 2, 1>("2 WG, n128 x 2 chains, wait 1", sms, kt, cycles, sink);
  cudaFree(cycles);
  cudaFree(sink);
  return 0;
}
