// The frame of rungs 16 (wgmma_x3) and 22 (wgmma_x3_rs): 3xTF32 on a warp-specialized,
// persistent, clustered wgmma GEMM (sm_90a), 128 x 128 tiles dealt round-robin in banded order, B's
// tf32 parts multicast over the cluster, each 32-deep stage's three products (hi*lo + lo*hi + hi*hi)
// summed apart on the tensor core and added to the fp32 accumulator off it, C stored from registers.
// One part differs, the A part: how A reaches a stage and how the stage is multiplied. SplitCopies
// (here, rung 16): A's tf32 parts come split by a copy and are read from shared memory;
// SplitInRegisters (22_wgmma_x3_rs.cu): A's fp32 tile comes as stored (k x m too) and each consumer
// splits its fragments in registers (wgmma's register form for A). What each does and what bounds
// it: the header comments of 16_wgmma_x3.cu and 22_wgmma_x3_rs.cu.
#pragma once

#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/mma_stage.cuh"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>
#include <string>

namespace rungs::sgemm::x3_kernel {

using detail::ceil_div;

constexpr int BM = 128, BN = 128, BK = 32;  // BK: 32 floats = one 128-byte row
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CL = 2;                                           // blocks along m sharing B
constexpr int ROW = 128;                                        // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW;           // 16 KB each, per part
constexpr int BAND = 8;                                         // cluster rows per band of the tile order

// A stage: A's parts (hi and lo, or A as stored), then B's hi and lo parts.
// A stage: A's part(s) (the A part's A_PARTS tiles of 16 KB), then B's big and small parts.
template <class AP>
struct Layout {
  static constexpr int A_PARTS = AP::A_PARTS;
  static constexpr int A_HI = 0, A_LO = A_BYTES;  // (one part: A as stored at A_HI)
  static constexpr int B_HI = A_PARTS * A_BYTES, B_LO = B_HI + B_BYTES;
  static constexpr int STAGE_BYTES = A_PARTS * A_BYTES + 2 * B_BYTES;  // 64 KB / 48 KB
  static constexpr int STAGES = AP::STAGES;
  static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 /* alignment */ + 2 * STAGES * 8 /* barriers */;
  static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");
};

struct Maps {
  CUtensorMap a_hi, a_lo, b_hi, b_lo;  // one A part: a_hi maps A as stored, a_lo is unused
};

// Rung 16's A part: A split by a copy into tf32 big and small parts (pack::split_operands), both
// loaded by TMA and read by wgmma from shared memory. 3 stages of 64 KB.
struct SplitCopies {
  static constexpr int A_PARTS = 2, STAGES = 3;
  static constexpr bool a_in_registers = false;  // pack::split_operands splits A too
  template <bool A_MN, class L>
  static __device__ __forceinline__ void load_a(unsigned char* st, const Maps& maps, int m0, int k0, uint64_t* bar) {
    static_assert(!A_MN, "an m-contiguous A is read through registers only");
    detail::tma_load_2d(st + L::A_HI, &maps.a_hi, k0, m0, bar);
    detail::tma_load_2d(st + L::A_LO, &maps.a_lo, k0, m0, bar);
  }
  // The stage's three products into t, a fresh sum.
  template <bool A_MN, class L>
  static __device__ __forceinline__ void multiply(float (&t)[64], const unsigned char* st, int cw) {
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {  // k8 per wgmma, 32 bytes along the 128-byte row
      const int off = kk * 32;
      const uint64_t ah = detail::smem_desc(st + L::A_HI + cw * 64 * ROW + off, 16, 1024);
      const uint64_t al = detail::smem_desc(st + L::A_LO + cw * 64 * ROW + off, 16, 1024);
      const uint64_t bh = detail::smem_desc(st + L::B_HI + off, 16, 1024);
      const uint64_t bl = detail::smem_desc(st + L::B_LO + off, 16, 1024);
      detail::wgmma<128, float, float>(t, ah, bl, kk > 0);  // the small products first, into a fresh sum
      detail::wgmma<128, float, float>(t, al, bh, true);
      detail::wgmma<128, float, float>(t, ah, bh, true);
    }
  }
};

template <class AP, bool A_MN>
__global__ void __launch_bounds__(THREADS, 1)
    x3_kernel(const __grid_constant__ Maps maps, Args a, int tiles_m, int tiles_n, bool c_vec) {
  using L = Layout<AP>;
  constexpr int STAGES = L::STAGES, STAGE_BYTES = L::STAGE_BYTES;
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
          detail::mbar_expect_tx(bar, STAGE_BYTES);  // A's part(s) (own) + both halves of B's parts
          AP::template load_a<A_MN, L>(st, maps, m0, k0, bar);
          constexpr uint16_t all = (1u << CL) - 1;
          const int half = static_cast<int>(rank) * (BN / CL);  // this block's rows of n
          detail::tma_load_2d_multicast(st + L::B_HI + half * ROW, &maps.b_hi, k0, n0 + half, bar, all);
          detail::tma_load_2d_multicast(st + L::B_LO + half * ROW, &maps.b_lo, k0, n0 + half, bar, all);
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
        AP::template multiply<A_MN, L>(t, st, cw);
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

template <class AP, bool A_MN>
void launch(const Maps& maps, const Args& user, const char* name);

// Split the operands (A too unless the A part splits it in registers), build the maps, launch one
// persistent cluster grid.
template <class AP>
void run(const Args& user, const char* name) {
  constexpr bool A_RS = AP::a_in_registers;
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const pack::Split3 sp = pack::split_operands(user, keep_a, keep_b, A_RS);
  const auto f32 = detail::tma_type<float>();  // fp32 bits as stored (the parts are tf32 already)
  Maps maps;
  if (sp.a_mn) {  // A stored k x m, read as stored (A_RS only)
    maps.a_hi = detail::make_tensor_map_2d(sp.A_hi, f32, 4, user.k, user.m, sp.lda, BK, 32);
    maps.a_lo = maps.a_hi;
  } else {
    maps.a_hi = detail::make_tensor_map_2d(sp.A_hi, f32, 4, user.m, user.k, sp.lda, BM, BK);
    maps.a_lo = A_RS ? maps.a_hi : detail::make_tensor_map_2d(sp.A_lo, f32, 4, user.m, user.k, sp.lda, BM, BK);
  }
  maps.b_hi = detail::make_tensor_map_2d(sp.B_hi, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  maps.b_lo = detail::make_tensor_map_2d(sp.B_lo, f32, 4, user.n, user.k, sp.ldb, BN / CL, BK);
  if constexpr (A_RS) {
    if (sp.a_mn) return launch<AP, true>(maps, user, name);
  }
  launch<AP, false>(maps, user, name);
}

template <class AP, bool A_MN>
void launch(const Maps& maps, const Args& user, const char* name) {
  using L = Layout<AP>;
  const int64_t tiles_m = ceil_div(user.m, BM), tiles_n = ceil_div(user.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported(std::string("rungs: ") + name + ": too many tiles for one launch");
  const void* kernel = reinterpret_cast<const void*>(&x3_kernel<AP, A_MN>);
  detail::allow_dynamic_smem(kernel, L::SMEM_BYTES);
  const int fit = detail::max_active_clusters(kernel, THREADS, L::SMEM_BYTES, CL, name);
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(user.C) % 8 == 0 && user.ldc % 2 == 0;
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, L::SMEM_BYTES, CL, user.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, &x3_kernel<AP, A_MN>, maps, user, static_cast<int>(tiles_m),
                                static_cast<int>(tiles_n), c_vec));
  detail::check_launch(name);
}

}  // namespace rungs::sgemm::x3_kernel
