// Rung 16, wgmma_x3: 3xTF32 (float inputs, Math::tf32x3) on rung 15's structure (sm_90a): fp32-level
// accuracy from tf32 tensor cores.
// Adds over 15 wgmma_ws: each operand split once per call into a tf32 big part and a tf32 small
// part (x = hi + lo + O(2^-22 |x|); gemm/pack.cu split_operands, k-contiguous, both parts in
// scratch), and three products per k step, hi*lo + lo*hi + hi*hi (lo*lo, ~2^-22 relative, left
// out). The tensor core's fp32 accumulation truncates (round toward zero: docs/gemm_tc.md, "What
// 3xTF32 taught"), so a sum over all of k on the tensor core is biased: each stage (32 of k) is
// summed apart on the tensor core (the first wgmma of the stage starts a fresh accumulator), the
// small products first, and reaches the fp32 accumulator through an ordinary round-to-nearest add.
// Tiles 128 x 128 (each consumer 64 x 128: 64 accumulator registers and 64 for the stage sum),
// 3 stages of four 16 KB operand tiles (A hi, A lo, B hi, B lo), clusters of 2 multicasting B.
// Bound now: the three products are the tensor-core work (the tf32 peak / 3 = ~165 TFLOP/s on the
// H100); each consumer waits for its stage's products before the add, so the two consumers must
// cover each other's waits; the split copies read A and B and write twice their size.
// Prediction: 95-120 TFLOP/s at 4096-8192 (about a third of rung 15's tf32 300-330), error at or
// below cuBLAS sgemm's: a stage sums 12 truncating k8 products whose partial sums average ~0.6 of
// the stage's, so on positive data the bias is ~12 * 0.6 * 2^-24 / 2 = 2-3e-7 of the result
// (coherent over stages), where the wmma fix (one truncation per k8 for hi*hi) measured 5e-7 in
// the CPU model.
// Measured on the H100 (a5861b6, docs/gemm_tc.md): right on its first run (every GemmTc test,
// memcheck and racecheck clean). 4096^3: 104.8 TFLOP/s = 2.03x cuBLAS sgemm (51.7), error 3.1e-7
// against sgemm's 1.15e-6; 8192^3: 90-96 TFLOP/s (1.79x; min 10.4 ms = 106), error 3.7e-7 vs
// 1.62e-6; 2048 x 2048 x 4096 (GemmAccuracy): 3.1e-7 zero-mean, 2.6e-7 positive data (sgemm 1.1e-6,
// 8.5e-7). At 8192 ncu shows it DRAM-bound: 33 GB read for 1 GB of split operands (L2 hit rate
// 41 %, DRAM 84 % busy): the hi and lo copies double the bytes of every panel, and the tiles in
// flight no longer share them in L2. Next: split in shared memory (read fp32 once). Done for A by
// rung 22 (wgmma_x3_rs: A read once and split in registers): 122 / 126 TFLOP/s at 4096 / 8192^3.
#include "detail/check.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "detail/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>

namespace rungs::sgemm::wgmma_x3 {

namespace {

using detail::ceil_div;

constexpr int BM = 128, BN = 128, STAGES = 3, BK = 32;  // BK: 32 floats = one 128-byte row
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CL = 2;                                           // blocks along m sharing B
constexpr int ROW = 128;                                        // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW;           // 16 KB each, per part
constexpr int A_HI = 0, A_LO = A_BYTES, B_HI = 2 * A_BYTES, B_LO = 2 * A_BYTES + B_BYTES;  // stage layout
constexpr int STAGE_BYTES = 2 * (A_BYTES + B_BYTES);                                          // 64 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 /* alignment */ + 2 * STAGES * 8 /* barriers */;
constexpr int BAND = 8;  // cluster rows per band of the tile order
static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");

struct Maps {
  CUtensorMap a_hi, a_lo, b_hi, b_lo;
};

__global__ void __launch_bounds__(THREADS, 1)
    wgmma_x3_kernel(const __grid_constant__ Maps maps, Args a, int tiles_m, int tiles_n, bool c_vec) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  detail::init_pipeline_barriers(full, empty, STAGES, CONSUMERS * CL);
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  const detail::ClusterWalk walk = detail::cluster_walk(tiles_m, tiles_n, CL);
  const int KT = static_cast<int>(ceil_div(a.k, BK));

  if (wg == 0) {
    detail::setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0;  // k tiles issued by this block so far: slot it % STAGES
      for (int t = walk.first; t < walk.count; t += walk.stride) {
        int cm, tn;
        detail::swizzle_tile(t, walk.rows, tiles_n, BAND, cm, tn);
        const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) detail::mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
          unsigned char* st = smem + s * STAGE_BYTES;
          uint64_t* bar = &full[s];
          const int k0 = kt * BK;
          detail::mbar_expect_tx(bar, STAGE_BYTES);  // A parts (own) + both halves of the B parts
          detail::tma_load_2d(st + A_HI, &maps.a_hi, k0, m0, bar);
          detail::tma_load_2d(st + A_LO, &maps.a_lo, k0, m0, bar);
          constexpr uint16_t all = (1u << CL) - 1;
          const int half = static_cast<int>(rank) * (BN / CL);  // this block's rows of n
          detail::tma_load_2d_multicast(st + B_HI + half * ROW, &maps.b_hi, k0, n0 + half, bar, all);
          detail::tma_load_2d_multicast(st + B_LO + half * ROW, &maps.b_lo, k0, n0 + half, bar, all);
        }
      }
    }
  } else {
    detail::setmaxnreg_inc<232>();
    const int cw = wg - 1;  // this consumer's 64 rows of the 128-row tile
    auto release = [&](int slot) {
      if (tid % 128 == 0)
        for (uint32_t c = 0; c < CL; ++c) detail::mbar_arrive_cluster(&empty[slot], c);
    };
    int it = 0;
    float d[64], t[64];
    for (int tile = walk.first; tile < walk.count; tile += walk.stride) {
      int cm, tn;
      detail::swizzle_tile(tile, walk.rows, tiles_n, BAND, cm, tn);
      const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
#pragma unroll
      for (int i = 0; i < 64; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        detail::mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned char* st = smem + s * STAGE_BYTES;
        detail::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {  // k8 per wgmma, 32 bytes along the 128-byte row
          const int off = kk * 32;
          const uint64_t ah = detail::smem_desc(st + A_HI + cw * 64 * ROW + off, 16, 1024);
          const uint64_t al = detail::smem_desc(st + A_LO + cw * 64 * ROW + off, 16, 1024);
          const uint64_t bh = detail::smem_desc(st + B_HI + off, 16, 1024);
          const uint64_t bl = detail::smem_desc(st + B_LO + off, 16, 1024);
          detail::wgmma_128_tf32(t, ah, bl, kk > 0);  // the small products first, into a fresh sum
          detail::wgmma_128_tf32(t, al, bh, true);
          detail::wgmma_128_tf32(t, ah, bh, true);
        }
        detail::wgmma_commit();
        detail::wgmma_wait<0>();
        release(s);
#pragma unroll
        for (int i = 0; i < 64; ++i) d[i] += t[i];  // round to nearest, off the tensor core
      }
      detail::store_acc_64xn<float, 128>(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m),
                                         static_cast<int>(a.n), a.alpha, a.beta, c_vec);
    }
  }
  detail::cluster_sync();  // no block leaves while its peer may still signal or write into it
}

}  // namespace

void run_tf32x3(const Args& user) {
  detail::require_sm90a("wgmma_x3");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const pack::Split3 sp = pack::split_operands(user, keep_a, keep_b);
  const auto f32 = detail::tma_type<float>();
  Maps maps;
  maps.a_hi = detail::make_tensor_map_2d(sp.A_hi, f32, 4, user.m, user.k, sp.lda, BM, BK);
  maps.a_lo = detail::make_tensor_map_2d(sp.A_lo, f32, 4, user.m, user.k, sp.lda, BM, BK);
  maps.b_hi = detail::make_tensor_map_2d(sp.B_hi, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  maps.b_lo = detail::make_tensor_map_2d(sp.B_lo, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  const int64_t tiles_m = ceil_div(user.m, BM), tiles_n = ceil_div(user.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported("rungs: wgmma_x3: too many tiles for one launch");
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(&wgmma_x3_kernel), SMEM_BYTES);
  const int fit = detail::max_active_clusters(reinterpret_cast<const void*>(&wgmma_x3_kernel), THREADS, SMEM_BYTES,
                                              CL, "wgmma_x3");
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(user.C) % 8 == 0 && user.ldc % 2 == 0;
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, SMEM_BYTES, CL, user.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, &wgmma_x3_kernel, maps, user, static_cast<int>(tiles_m),
                                static_cast<int>(tiles_n), c_vec));
  detail::check_launch("wgmma_x3");
}

}  // namespace rungs::sgemm::wgmma_x3
