// Rung 22, wgmma_x3_rs: 3xTF32 (float inputs, Math::tf32x3) with A split in registers (sm_90a).
// Adds over 16 wgmma_x3: A is not split by a copy. TMA brings A's fp32 tile as stored (A itself
// when it is k-contiguous and TMA can read it; else one aligned k-contiguous copy), each consumer
// loads its 64 x 32 fragment from shared memory (detail::load_a_frags_k_f32) and splits it into tf32
// big and small parts in registers (detail::split_tf32), and the three products take A from
// registers (wgmma's register form): hi*lo + lo*hi + hi*hi as in rung 16, each 32-deep stage summed
// apart on the tensor core and added to the fp32 accumulator off it. B is split by a copy as before.
// Why: at 8192^3 rung 16 is DRAM-bound (ncu: 33 GB read for 1 GB of split operands, DRAM 84 %
// busy) and every stage moves four 16 KB parts through L2 per block (A hi, A lo, B hi, B lo; B
// multicast over the cluster's two blocks): 48 KB per block per 1536 tensor-core cycles, ~7 TB/s
// over 132 SMs at 1.75 GHz. Here a stage is A (16 KB) and B's two parts: 32 KB per block, two
// thirds; A's split copy (read 4 bytes, write 8 per element) is gone, and the stage's 48 KB let
// 4 stages fit where rung 16 had 3.
// Bound now: the tensor cores' three products per k step (the tf32 peak / 3, ~165 TFLOP/s on the
// H100), each consumer's wait for its stage's products before the fp32 add (the other consumer
// covers it), and B's split copy (read once, written twice).
// Prediction (before its first run; H100): 4096^3 from rung 16's 105 TFLOP/s (1.3 ms, of which
// A's split copy ~0.07 ms) to 110-115; 8192^3 from 91-98 to 100-110; error unchanged (the same
// split, products and order as rung 16), at or below cuBLAS sgemm's.
// Measured (H100, eleventh session, docs/BENCHMARKS.md): right at its first run (GemmTc tests,
// memcheck and racecheck clean), errors bit-identical to rung 16's (3.1e-7 / 2.6e-7 at 2048 x 2048 x
// 4096, cuBLAS sgemm 1.1e-6 / 8.5e-7). Beat the prediction: 96.4 / 122.0 / 126.4 TFLOP/s at 2048^3 /
// 4096^3 / 8192^3 (1.94 / 2.36 / 2.51x cuBLAS sgemm) against rung 16's 87.5 / 105.4 / 99.1 in the same
// run; 8192^3 now steady (8.63-8.76 ms where rung 16 spread over 10.3-13.1); 4096^3 nt 123.6, tt
// 116.7, tn 113.7 (A copied transposed); 4095 x 4097 x 4093 115.2 (0.94 of 4096^3's speed).
#include "detail/check.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "detail/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>

namespace rungs::sgemm::wgmma_x3_rs {

namespace {

using detail::ceil_div;

constexpr int BM = 128, BN = 128, STAGES = 4, BK = 32;  // BK: 32 floats = one 128-byte row
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CL = 2;                                           // blocks along m sharing B
constexpr int ROW = 128;                                        // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW;           // 16 KB each, per part
constexpr int A_X = 0, B_HI = A_BYTES, B_LO = A_BYTES + B_BYTES;  // stage layout: A as stored, B's parts
constexpr int STAGE_BYTES = A_BYTES + 2 * B_BYTES;                // 48 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 /* alignment */ + 2 * STAGES * 8 /* barriers */;
constexpr int BAND = 8;  // cluster rows per band of the tile order
static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");

struct Maps {
  CUtensorMap a, b_hi, b_lo;
};

__global__ void __launch_bounds__(THREADS, 1)
    wgmma_x3_rs_kernel(const __grid_constant__ Maps maps, Args a, int tiles_m, int tiles_n, bool c_vec) {
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
          detail::mbar_expect_tx(bar, STAGE_BYTES);  // A (own) + both halves of B's parts
          detail::tma_load_2d(st + A_X, &maps.a, k0, m0, bar);
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
        // A's fragments of the stage, split in registers. No wgmma group of this consumer is in
        // flight here (the wait below), so writing them does not serialize the MMAs (C7513).
        uint32_t x[16], hi[16], lo[16];
        detail::load_a_frags_k_f32(x, st + A_X, cw);
#pragma unroll
        for (int i = 0; i < 16; ++i) {
          float h, l;
          detail::split_tf32(__uint_as_float(x[i]), h, l);
          hi[i] = __float_as_uint(h), lo[i] = __float_as_uint(l);
        }
        detail::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {  // k8 per wgmma, 32 bytes along the 128-byte row
          const int off = kk * 32;
          const uint32_t(&ah)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&hi[4 * kk]);
          const uint32_t(&al)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&lo[4 * kk]);
          const uint64_t bh = detail::smem_desc(st + B_HI + off, 16, 1024);
          const uint64_t bl = detail::smem_desc(st + B_LO + off, 16, 1024);
          detail::wgmma_128_tf32_rs(t, ah, bl, kk > 0);  // the small products first, into a fresh sum
          detail::wgmma_128_tf32_rs(t, al, bh);
          detail::wgmma_128_tf32_rs(t, ah, bh);
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
  detail::require_sm90a("wgmma_x3_rs");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const pack::Split3 sp = pack::split_operands(user, keep_a, keep_b, /*a_raw=*/true);
  const auto f32 = detail::tma_type<float>();  // fp32 as stored: A is split in registers, B already was
  Maps maps;
  maps.a = detail::make_tensor_map_2d(sp.A_hi, f32, 4, user.m, user.k, sp.lda, BM, BK);
  maps.b_hi = detail::make_tensor_map_2d(sp.B_hi, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  maps.b_lo = detail::make_tensor_map_2d(sp.B_lo, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  const int64_t tiles_m = ceil_div(user.m, BM), tiles_n = ceil_div(user.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported("rungs: wgmma_x3_rs: too many tiles for one launch");
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(&wgmma_x3_rs_kernel), SMEM_BYTES);
  const int fit = detail::max_active_clusters(reinterpret_cast<const void*>(&wgmma_x3_rs_kernel), THREADS,
                                              SMEM_BYTES, CL, "wgmma_x3_rs");
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(user.C) % 8 == 0 && user.ldc % 2 == 0;
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, SMEM_BYTES, CL, user.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, &wgmma_x3_rs_kernel, maps, user, static_cast<int>(tiles_m),
                                static_cast<int>(tiles_n), c_vec));
  detail::check_launch("wgmma_x3_rs");
}

}  // namespace rungs::sgemm::wgmma_x3_rs
