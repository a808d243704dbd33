// Three promoting consumers against two, in a real pipeline: the question fp8_promote_tc.cu leaves.
// With operands fixed in shared memory, rung 29's pattern (two consumers, 64 x 256 sums each, every
// k tile in two n128 halves, each waited for and added into the sums) runs the tensor cores at 76 %,
// and three consumers of a 192 x 128 tile (64 x 128 sums each, one n128 partial a k tile) at 100 %.
// Here both run as whole GEMMs, C (bf16, M x N) = A (M x K) B^T (B: N x K, both e4m3, k-major, as
// cuBLASLt's fp8 nt) with block128 scales, beside the same two tiles without promotion (one
// accumulator over all of k, scales ignored): TMA loads into a ring of stages (200 KB), one producer
// thread, non-persistent (one tile a block, a block per SM), direct bf16 stores. None of the frame's
// persistence, clusters or TMA-store epilogue, so the times compare with each other, not with the
// library's rungs.
// Hypothesis: the two-consumer promoting kernel runs at ~0.8x its unpromoted twin (rung 29 against
// rung 28: 0.80-0.93x), the three-consumer one at >= 0.95x of its twin; if so, a three-consumer
// promoting rung (the frame's tile shape a part) is worth building. The 192-row tiles cost
// 4096 / 192 = 21.3 tile rows (22 launched) and 704 tiles in 5.3 waves at 4096^3, 99 % at 8192^3.
// Measured (H200, e4m3 nt): promoted / not promoted time 1.18 / 1.26x with two consumers, 1.26 /
// 1.33x with three at 4096^3 / 8192^3; three promoted 0.83 / 0.91x the speed of two promoted
// (0.1655 / 1.1247 ms against 0.1368 / 1.0272). The hypothesis fails: no three-consumer rung.
// Each kernel's result is checked at 256 sampled elements against an fp64 sum of the dequantized
// products (the unpromoted ones without scales). Times: median of 20, interleaved, L2 flushed.
// Not part of the library or its tests: `source scripts/experiments/lib.sh && run_cu fp8_consumers`.
#include "detail/sm90/mma_stage.cuh"
#include "../ck.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace rungs::detail;
using E4 = __nv_fp8_e4m3;

template <int CONS, int BN>
struct Cfg {
  static constexpr int BM = 64 * CONS, A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE = A_BYTES + B_BYTES;
  static constexpr int STAGES = 200 * 1024 / STAGE;  // 4 of 48 KB (128 x 256), 5 of 40 KB (192 x 128)
  static constexpr int THREADS = 128 * (CONS + 1);
  static constexpr int SMEM = STAGES * STAGE + 1024 + 2 * STAGES * 8;
  // Registers after setmaxnreg: the producer gives its share to the consumers (65536 in all).
  static constexpr int PROD_REGS = 40, CONS_REGS = CONS == 2 ? 232 : 152;
  static_assert(128 * PROD_REGS + 128 * CONS * CONS_REGS <= 65536, "the register file");
};

template <int CONS, int BN, bool PROMOTE>
__global__ void __launch_bounds__(Cfg<CONS, BN>::THREADS, 1)
    gemm(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb, int M, int N, int K,
         const float* __restrict__ sa, const float* __restrict__ sb, __nv_bfloat16* __restrict__ C) {
  using G = Cfg<CONS, BN>;
  constexpr int H = BN / 128;  // n128 halves a consumer multiplies per k tile
  extern __shared__ unsigned char raw[];
  unsigned char* smem = smem_align_1024(raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + G::STAGES * G::STAGE);
  uint64_t* empty = full + G::STAGES;
  init_pipeline_barriers(full, empty, G::STAGES, CONS);
  __syncthreads();
  // Tiles in bands of 8 tile rows, column by column within a band (B reused from L2).
  const int tiles_m = (M + G::BM - 1) / G::BM, tiles_n = N / BN, KT = K / 128;
  int tm, tn;
  {
    const int per = 8 * tiles_n, b = static_cast<int>(blockIdx.x) / per, r = static_cast<int>(blockIdx.x) % per;
    const int rows = min(8, tiles_m - 8 * b);
    tm = 8 * b + r % rows, tn = r / rows;
  }
  const int wg = static_cast<int>(threadIdx.x) / 128;
  if (wg == 0) {
    setmaxnreg_dec<G::PROD_REGS>();
    if (threadIdx.x == 0) {
      tma_prefetch(&ma);
      tma_prefetch(&mb);
      for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % G::STAGES;
        if (kt >= G::STAGES) mbar_wait(&empty[s], ((kt / G::STAGES) - 1) & 1);
        mbar_expect_tx(&full[s], G::STAGE);
        unsigned char* st = smem + s * G::STAGE;
        tma_load_2d(st, &ma, kt * 128, tm * G::BM, &full[s]);
        tma_load_2d(st + G::A_BYTES, &mb, kt * 128, tn * BN, &full[s]);
      }
    }
    return;
  }
  setmaxnreg_inc<G::CONS_REGS>();
  const int c = wg - 1, t = static_cast<int>(threadIdx.x) % 128, w = t / 32, g = (t % 32) / 4, q = t % 4;
  const int row = tm * G::BM + 64 * c + 16 * w + g;  // this thread's rows: row, row + 8
  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
  if constexpr (PROMOTE) {
    const int r0 = min(row, M - 1), r1 = min(row + 8, M - 1), nb = tn * BN / 128;
    const float* sa0 = sa + static_cast<size_t>(r0) * KT;
    const float* sa1 = sa + static_cast<size_t>(r1) * KT;
    const float* sb0 = sb + static_cast<size_t>(nb) * KT;
    const float* sb1 = sb + static_cast<size_t>(nb + H - 1) * KT;
    float part[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) part[i] = 0.0f;
    float x0 = __ldg(sa0), x1 = __ldg(sa1), y0 = __ldg(sb0), y1 = __ldg(sb1);  // k tile 0's scales
    for (int kt = 0; kt < KT; ++kt) {
      const float s00 = x0 * y0, s01 = x1 * y0, s10 = x0 * y1, s11 = x1 * y1;
      if (kt + 1 < KT) x0 = __ldg(sa0 + kt + 1), x1 = __ldg(sa1 + kt + 1), y0 = __ldg(sb0 + kt + 1), y1 = __ldg(sb1 + kt + 1);
      const int s = kt % G::STAGES;
      mbar_wait(&full[s], (kt / G::STAGES) & 1);
      const unsigned char* As = smem + s * G::STAGE + c * 64 * 128;
      const unsigned char* Bs = smem + s * G::STAGE + G::A_BYTES;
#pragma unroll
      for (int h = 0; h < H; ++h) {
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          wgmma<128, E4, E4>(part, smem_desc(As + kk * 32, 16, 1024),
                                smem_desc(Bs + h * 128 * 128 + kk * 32, 16, 1024), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        if (h == H - 1 && t == 0) mbar_arrive(&empty[s]);
        const float lo = h == 0 ? s00 : s10, hi = h == 0 ? s01 : s11;
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[64 * h + 4 * j + e] = fmaf(e < 2 ? lo : hi, part[4 * j + e], acc[64 * h + 4 * j + e]);
      }
    }
  } else {
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % G::STAGES;
      mbar_wait(&full[s], (kt / G::STAGES) & 1);
      const unsigned char* As = smem + s * G::STAGE + c * 64 * 128;
      const unsigned char* Bs = smem + s * G::STAGE + G::A_BYTES;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint64_t da = smem_desc(As + kk * 32, 16, 1024), db = smem_desc(Bs + kk * 32, 16, 1024);
        if constexpr (BN == 256) wgmma<256, E4, E4>(acc, da, db);
        else wgmma<128, E4, E4>(acc, da, db);
      }
      wgmma_commit();
      wgmma_wait<1>();  // k tile kt - 1's MMAs have retired: its slot is free
      if (kt > 0 && t == 0) mbar_arrive(&empty[(kt - 1) % G::STAGES]);
    }
    wgmma_wait<0>();
  }
  // acc[4j + e]: row + 8 (e / 2), column 8j + 2q + e % 2 of this consumer's 64 x BN.
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h;
      if (r < M)
        *reinterpret_cast<__nv_bfloat162*>(C + static_cast<size_t>(r) * N + tn * BN + 8 * j + 2 * q) =
            __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
}

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
// The current size's tensor maps: A in boxes of 128 and 192 rows, B in boxes of 256 and 128 rows.
struct Maps {
  CUtensorMap a128, a192, b256, b128;
} maps;

// rows x cols bytes (cols contiguous), boxes of box_rows x 128 bytes, 128-byte swizzle, zero fill.
CUtensorMap map(const void* p, int rows, int cols, int box_rows) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols)};
  const cuuint32_t box[2] = {128, static_cast<cuuint32_t>(box_rows)}, elem[2] = {1, 1};
  const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(p), dims, strides, box, elem,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(r));
    std::exit(1);
  }
  return m;
}

struct Variant {
  const char* name;
  void (*launch)(int M, int N, int K, const E4* A, const E4* B, const float* sa, const float* sb,
                 __nv_bfloat16* C);
  bool promote;
};

template <int CONS, int BN, bool PROMOTE>
void launch(int M, int N, int K, const E4* A, const E4* B, const float* sa, const float* sb, __nv_bfloat16* C) {
  using G = Cfg<CONS, BN>;
  static bool once = false;
  auto* k = &gemm<CONS, BN, PROMOTE>;
  if (!once) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, G::SMEM));
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k));
    std::printf("  (%d consumers, 64 x %d each, %s: %d registers at launch, %d B local)\n", CONS, BN,
                PROMOTE ? "promoted" : "not promoted", fa.numRegs, static_cast<int>(fa.localSizeBytes));
    once = true;
  }
  (void)A, (void)B;
  const CUtensorMap& ma = G::BM == 128 ? maps.a128 : maps.a192;
  const CUtensorMap& mb = BN == 256 ? maps.b256 : maps.b128;
  const int tiles = (M + G::BM - 1) / G::BM * (N / BN);
  k<<<tiles, G::THREADS, G::SMEM>>>(ma, mb, M, N, K, sa, sb, C);
}

}  // namespace

int main() {
  cudaDriverEntryPointQueryResult qr;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000,
                                      cudaEnableDefault, &qr));
  if (!encode) return 1;
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("fp8 e4m3 nt, block128 scales, bf16 C: two and three consumers, with and without promotion (%s)\n",
              p.name);
  const Variant vs[] = {
      {"2 consumers, 128 x 256, not promoted (rung 28's tile)", launch<2, 256, false>, false},
      {"2 consumers, 128 x 256, promoted in halves (rung 29's)", launch<2, 256, true>, true},
      {"3 consumers, 192 x 128, not promoted", launch<3, 128, false>, false},
      {"3 consumers, 192 x 128, promoted", launch<3, 128, true>, true},
  };
  constexpr int NV = 4;
  const size_t flush_bytes = size_t{256} << 20;
  void* flush = nullptr;
  CK(cudaMalloc(&flush, flush_bytes));
  std::mt19937 rng(7);
  for (const int S : {4096, 8192}) {
    const int M = S, N = S, K = S, KT = K / 128;
    std::vector<E4> hA(static_cast<size_t>(M) * K), hB(static_cast<size_t>(N) * K);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f), us(0.5f, 1.5f);
    for (auto& x : hA) x = E4(u(rng));
    for (auto& x : hB) x = E4(u(rng));
    std::vector<float> hsa(static_cast<size_t>(M) * KT), hsb(static_cast<size_t>(N / 128) * KT);
    for (auto& x : hsa) x = us(rng);
    for (auto& x : hsb) x = us(rng);
    E4 *A = nullptr, *B = nullptr;
    float *sa = nullptr, *sb = nullptr;
    __nv_bfloat16* C = nullptr;
    CK(cudaMalloc(&A, hA.size()));
    CK(cudaMalloc(&B, hB.size()));
    CK(cudaMalloc(&sa, hsa.size() * 4));
    CK(cudaMalloc(&sb, hsb.size() * 4));
    CK(cudaMalloc(&C, static_cast<size_t>(M) * N * 2));
    CK(cudaMemcpy(A, hA.data(), hA.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), hB.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sa, hsa.data(), hsa.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sb, hsb.data(), hsb.size() * 4, cudaMemcpyHostToDevice));
    maps = {map(A, M, K, 128), map(A, M, K, 192), map(B, N, K, 256), map(B, N, K, 128)};
    std::printf("%d^3\n", S);
    // Check each kernel once: 256 sampled elements against fp64 sums.
    std::vector<__nv_bfloat16> hC(static_cast<size_t>(M) * N);
    for (const auto& v : vs) {
      CK(cudaMemset(C, 0xFF, static_cast<size_t>(M) * N * 2));  // NaN
      v.launch(M, N, K, A, B, sa, sb, C);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hC.data(), C, hC.size() * 2, cudaMemcpyDeviceToHost));
      double worst = 0.0;
      std::mt19937 pick(11);
      for (int i = 0; i < 256; ++i) {
        const int r = static_cast<int>(pick() % M), col = static_cast<int>(pick() % N);
        double ref = 0.0, mag = 0.0;
        for (int k = 0; k < K; ++k) {
          double x = double(float(hA[static_cast<size_t>(r) * K + k])) * double(float(hB[static_cast<size_t>(col) * K + k]));
          if (v.promote) x *= double(hsa[static_cast<size_t>(r) * KT + k / 128]) * double(hsb[static_cast<size_t>(col / 128) * KT + k / 128]);
          ref += x, mag += std::fabs(x);
        }
        const double got = double(__bfloat162float(hC[static_cast<size_t>(r) * N + col]));
        worst = std::max(worst, std::isfinite(got) ? std::fabs(got - ref) / mag : 1e30);
      }
      std::printf("  %-56s check: max |error| / sum |a b| = %.2e%s\n", v.name, worst, worst < 1e-2 ? "" : "  FAILED");
    }
    // Time: 20 repetitions, each running every kernel once from a rotating start, L2 flushed before each.
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<std::vector<float>> ms(NV);
    for (int rep = -2; rep < 20; ++rep)
      for (int j = 0; j < NV; ++j) {
        const int i = (j + (rep < 0 ? 0 : rep)) % NV;
        CK(cudaMemsetAsync(flush, rep & 0xFF, flush_bytes));
        CK(cudaEventRecord(e0));
        vs[i].launch(M, N, K, A, B, sa, sb, C);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t = 0.0f;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (rep >= 0) ms[i].push_back(t);
      }
    double med[NV];
    for (int i = 0; i < NV; ++i) {
      std::sort(ms[i].begin(), ms[i].end());
      med[i] = ms[i][ms[i].size() / 2];
      std::printf("  %-56s %8.4f ms  %6.0f TFLOP/s\n", vs[i].name, med[i], 2.0 * M * double(N) * K / (med[i] * 1e-3) / 1e12);
    }
    std::printf("  promoted / not promoted, time: 2 consumers %.2fx, 3 consumers %.2fx; 3 promoted against 2 promoted: %.2fx faster\n",
                med[1] / med[0], med[3] / med[2], med[1] / med[3]);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    cudaFree(A), cudaFree(B), cudaFree(sa), cudaFree(sb), cudaFree(C);
  }
  cudaFree(flush);
  return 0;
}
