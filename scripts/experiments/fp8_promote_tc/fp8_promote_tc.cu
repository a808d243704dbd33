// How fast the tensor cores run fp8 wgmma with the promotion of rungs 29 and 30 in between, with
// no memory traffic (operands fixed in shared memory): what the promoting rungs' 0.83-0.88x of
// rung 28 is made of, and whether more consumer warpgroups would hide it.
// Rung 28 runs two consumer warpgroups, each m64n256k32 into one accumulator over all of k. Rung 29
// multiplies each 128-deep k tile in two n128 halves, each into a partial sum from zero, waits for
// it and adds it into fp32 sums (64 FFMA a thread a half): the tensor cores idle while both
// warpgroups wait and add, unless the two run out of step. The register file holds 2 consumers
// with 128-register sums (rung 29), or 3 consumers of a 192 x 128 tile with 64-register sums and
// a 64-register partial (65536 registers / 512 threads): while one consumer adds, the other two
// keep MMAs queued.
// Hypothesis: rung 29's pattern runs ~0.85 of rung 28's MACs per cycle (the measured gap), with
// two warpgroups started out of step as well (rung 30 found their MMAs finish together); three
// warpgroups of n128 with a promotion per k tile run >= 0.95 of the unpromoted rate. If three do
// not, more consumers cannot hide the promotion and a 192 x 128 rung is not worth building.
// Measured (H100, 759da6b): rung 28's pattern 4095 MAC per cycle per SM, rung 29's 3115 (76 %), rung
// 29's with warpgroup 1 started 300 cycles late 4095, two warpgroups of n128 promoted 3409 (83 %),
// three 4094, four (registers spilled) 2844. In rung 29 itself a delay of consumer 1 at each tile
// gave 3-5 % per-tensor and nothing in block128 (docs/gemm_tc.md, FP8).
// As compiled here every FFMA of a promotion run carries the yield flag (bit 45 of the control
// bits); rung 29's main loop carries it on every other one. With this binary patched to that
// alternation (sass_yield.py alt, fp8_yield.sh; H200) rung 29's pattern runs at 98.6 % and two
// warpgroups of n128 at 95.8 %: the 76 % above is this probe's codegen, not rung 29's.
// Each configuration: one block per SM on every SM, `ktiles` k tiles of 4 k32 steps per
// warpgroup, MACs per SM cycle against 4096 (dense fp8), the median of 5 launches.
// Not part of the library or its tests: `source scripts/experiments/lib.sh && run_cu fp8_promote_tc`.
#include "detail/sm90/mma_stage.cuh"
#include "../sm_rate.hpp"

#include <cuda_fp8.h>

#include <cstdio>

using namespace rungs::detail;
using E4 = __nv_fp8_e4m3;

enum Pattern {
  N256,            // rung 28: one n256 accumulator over all k, wait_group 1
  HALVES,          // two n128 accumulators over all k (A read twice), wait_group 1: no promotion
  HALVES_PROMOTE,  // rung 29: each n128 half into a partial from zero, wait_group 0, sums += s * partial
  ONE,             // one n128 accumulator over all k, wait_group 1 (a 64 x 128 tile a warpgroup)
  ONE_PROMOTE,     // one n128 partial a k tile, wait_group 0, sums += s * partial (DeepGEMM's form)
};

constexpr int A_BYTES = 64 * 128;  // one warpgroup's 64 rows of A, K-major, 128 B (128 fp8) per row

template <Pattern P> constexpr int width() { return (P == ONE || P == ONE_PROMOTE) ? 128 : 256; }

template <int WGS, Pattern P, int DELAY>
__global__ void __launch_bounds__(WGS * 128, 1) probe(int ktiles, long long* cycles, float* sink) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = smem_align_1024(raw);
  constexpr int NB = width<P>();
  constexpr int BYTES = WGS * A_BYTES + NB * 128;
  float* scales = reinterpret_cast<float*>(smem + BYTES);  // 64 block scales, as rung 29 reads them
  for (int i = threadIdx.x; i < BYTES / 16; i += blockDim.x) reinterpret_cast<int4*>(smem)[i] = make_int4(0, 0, 0, 0);
  if (threadIdx.x < 64) scales[threadIdx.x] = 1.0f + threadIdx.x / 64.0f;
  fence_proxy_async_shared();
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const unsigned char* A = smem + wg * A_BYTES;
  const unsigned char* B = smem + WGS * A_BYTES;
  constexpr int SUMS = NB / 2;                 // fp32 registers of the 64 x NB result
  constexpr int PART = P == N256 ? 128 : 64;  // registers each MMA writes
  float s[SUMS], d[PART], e[P == HALVES ? 64 : 1];  // e: the second half's accumulator (HALVES)
#pragma unroll
  for (int i = 0; i < SUMS; ++i) s[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < PART; ++i) d[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < int(sizeof(e) / sizeof(float)); ++i) e[i] = 0.0f;
  __syncthreads();
  const long long t0 = clock64();
  if (DELAY > 0 && (wg & 1)) {
    while (clock64() - t0 < DELAY) {
    }
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    if constexpr (P == N256) {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma<256, E4, E4>(d, smem_desc(A + kk * 32, 16, 1024), smem_desc(B + kk * 32, 16, 1024));
      wgmma_commit();
      wgmma_wait<1>();
    } else if constexpr (P == HALVES) {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma<128, E4, E4>(d, smem_desc(A + kk * 32, 16, 1024), smem_desc(B + kk * 32, 16, 1024));
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma<128, E4, E4>(e, smem_desc(A + kk * 32, 16, 1024), smem_desc(B + 128 * 128 + kk * 32, 16, 1024));
      wgmma_commit();
      wgmma_wait<1>();
    } else if constexpr (P == ONE) {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma<128, E4, E4>(d, smem_desc(A + kk * 32, 16, 1024), smem_desc(B + kk * 32, 16, 1024));
      wgmma_commit();
      wgmma_wait<1>();
    } else {
#pragma unroll
      for (int h = 0; h < NB / 128; ++h) {
        const float sc = scales[(kt * 2 + h) & 63];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          wgmma<128, E4, E4>(d, smem_desc(A + kk * 32, 16, 1024), smem_desc(B + h * 128 * 128 + kk * 32, 16, 1024),
                                kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < 64; ++i) s[h * 64 + i] += sc * d[i];
      }
    }
  }
  wgmma_wait<0>();
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < SUMS; ++i) acc += s[i];
#pragma unroll
  for (int i = 0; i < PART; ++i) acc += d[i];
#pragma unroll
  for (int i = 0; i < int(sizeof(e) / sizeof(float)); ++i) acc += e[i];
  if (acc != 0.0f) sink[threadIdx.x] = acc;  // zeros in, zeros out: never taken, but not provable
}

template <int WGS, Pattern P, int DELAY = 0>
void run(const char* what, int sms, int ktiles, long long* cycles, float* sink) {
  auto* k = &probe<WGS, P, DELAY>;
  const int smem = 1024 + WGS * A_BYTES + width<P>() * 128 + 256;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaFuncAttributes fa{};
  CK(cudaFuncGetAttributes(&fa, k));
  const double r = median_rate([&](int kt) { k<<<sms, WGS * 128, smem>>>(kt, cycles, sink); }, sms, ktiles, cycles,
                                double(WGS) * 64.0 * width<P>() * 128.0 * ktiles);
  std::printf("  %-58s %6.0f MAC/cycle/SM  %5.1f %% of 4096  (%d registers, %d B local)\n", what, r, 100.0 * r / 4096.0,
              fa.numRegs, static_cast<int>(fa.localSizeBytes));
}

int main() {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, dev));
  std::printf("fp8 wgmma (e4m3) with and without promotion, operands in shared memory, one block per SM on %d SMs (%s)\n",
              sms, p.name);
  long long* cycles = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&cycles, sizeof(long long) * sms));
  CK(cudaMalloc(&sink, sizeof(float) * 512));
  const int kt = 2048;
  run<2, N256>("2 WG, n256, no promotion (rung 28)", sms, kt, cycles, sink);
  run<2, HALVES>("2 WG, two n128 halves, no promotion", sms, kt, cycles, sink);
  run<2, HALVES_PROMOTE>("2 WG, two n128 halves, promoted (rung 29)", sms, kt, cycles, sink);
  run<2, HALVES_PROMOTE, 300>("2 WG, two n128 halves, promoted, WG 1 300 cycles late", sms, kt, cycles, sink);
  run<2, ONE>("2 WG, n128, no promotion (128 x 128 tile)", sms, kt, cycles, sink);
  run<2, ONE_PROMOTE>("2 WG, n128, promoted (128 x 128 tile)", sms, kt, cycles, sink);
  run<3, ONE>("3 WG, n128, no promotion (192 x 128 tile)", sms, kt, cycles, sink);
  run<3, ONE_PROMOTE>("3 WG, n128, promoted (192 x 128 tile)", sms, kt, cycles, sink);
  run<3, ONE_PROMOTE, 150>("3 WG, n128, promoted, odd WGs 150 cycles late", sms, kt, cycles, sink);
  run<4, ONE>("4 WG, n128, no promotion (256 x 128 tile)", sms, kt, cycles, sink);
  run<4, ONE_PROMOTE>("4 WG, n128, promoted (256 x 128 tile; registers tight)", sms, kt, cycles, sink);
  cudaFree(cycles);
  cudaFree(sink);
  return 0;
}
