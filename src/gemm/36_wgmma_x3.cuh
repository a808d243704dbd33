// Rung 36's part, the 3xTF32 mainloop (used by rungs 36 wgmma_x3 and 37 wgmma_x3_rs), on rung 35's
// other parts: 128 x 128 tiles dealt round-robin in banded order (RoundRobin), each 32-deep stage's
// three products (hi*lo + lo*hi + hi*hi) summed apart on the tensor core and added to the fp32
// accumulator off it (SumPerStage, 35_wgmma_sums.cuh), C stored from registers (DirectStore). The
// mainloop X3<APart> brings B's tf32 parts multicast over the cluster and differs between the two
// rungs in its A part: how A reaches a stage and how the stage is multiplied. SplitCopies (here, rung
// 36): A's tf32 parts come split by a copy and are read from shared memory; SplitInRegisters
// (37_wgmma_x3_rs.cu): A's fp32 tile comes as stored (k x m too) and each consumer splits its
// fragments in registers (wgmma's register form for A). What each does and what bounds it: the
// header comments of 36_wgmma_x3.cu and 37_wgmma_x3_rs.cu.
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"
#include "gemm/35_wgmma_sums.cuh"

#include <memory>
#include <string>

namespace rungs::sgemm::x3_kernel {

using detail::ceil_div;

// The frame's BM, CLUSTER and ROW; tiles 128 columns wide (the accumulator d and a stage's fresh
// sum t, 64 registers each, beside the A part's fragments).
constexpr int BM = ws::BM, BN = 128, BK = 32;  // BK: 32 floats = one 128-byte row
constexpr int CL = ws::CLUSTER;                // blocks along m sharing B
constexpr int ROW = ws::ROW;                   // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW;  // 16 KB each, per part

// A stage: A's part(s) (the A part's A_PARTS tiles of 16 KB), then B's big and small parts.
template <class AP>
struct Layout {
  static constexpr int A_PARTS = AP::A_PARTS;
  static constexpr int A_HI = 0, A_LO = A_BYTES;  // (one part: A as stored at A_HI)
  static constexpr int B_HI = A_PARTS * A_BYTES, B_LO = B_HI + B_BYTES;
  static constexpr int STAGE_BYTES = A_PARTS * A_BYTES + 2 * B_BYTES;  // 64 KB / 48 KB
  static constexpr int STAGES = AP::STAGES;
};

struct Maps {
  CUtensorMap a_hi, a_lo, b_hi, b_lo;  // one A part: a_hi maps A as stored, a_lo is unused
};

// Rung 36's A part: A split by a copy into tf32 big and small parts (pack::split_operands), both
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

// Mainloop: the stages of the A part AP (its A tiles, then B's big and small parts, multicast over
// the cluster), one k tile of 32 a stage; stage(t, ...) issues the stage's three products.
template <class AP>
struct X3 {
  using L = Layout<AP>;
  static constexpr int TILE_M = BM, TILE_N = BN, RING = L::STAGES, RING_STAGE_BYTES = L::STAGE_BYTES;
  static constexpr int ACC = 64;  // accumulator registers per consumer thread (64 x 128 fp32)
  using Maps = x3_kernel::Maps;
  template <class Self, bool B_MN>
  static __device__ __forceinline__ void prefetch(const Maps& maps) {
    detail::tma_prefetch(&maps.a_hi), detail::tma_prefetch(&maps.b_hi), detail::tma_prefetch(&maps.b_lo);
    if (AP::A_PARTS == 2) detail::tma_prefetch(&maps.a_lo);
  }
  template <class Self, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased>
  static __device__ __forceinline__ void load(const Walk& walk, int p, const Maps& maps, unsigned char* smem,
                                              uint64_t* full, int, uint32_t rank, int& it,
                                              WaitReleased&& wait_released) {
    int m0, n0, kb, ke;
    bool solo;
    walk.locate(p, m0, n0, solo, kb, ke);
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int s = it % RING;
      wait_released(it);
      unsigned char* st = smem + s * RING_STAGE_BYTES;
      uint64_t* bar = &full[s];
      const int k0 = kt * BK;
      detail::mbar_expect_tx(bar, RING_STAGE_BYTES);  // A's part(s) (own) + both halves of B's parts
      AP::template load_a<A_MN, L>(st, maps, m0, k0, bar);
      constexpr uint16_t all = (1u << CL) - 1;
      const int half = static_cast<int>(rank) * (BN / CL);  // this block's rows of n
      detail::tma_load_2d_multicast(st + L::B_HI + half * ROW, &maps.b_hi, k0, n0 + half, bar, all);
      detail::tma_load_2d_multicast(st + L::B_LO + half * ROW, &maps.b_lo, k0, n0 + half, bar, all);
    }
  }
  // The consumer's per-stage hook (SumPerStage): the stage's three products into t, a fresh sum.
  template <class S, typename T, bool A_MN, bool B_MN>
  static __device__ __forceinline__ void sum_stage(float (&t)[ACC], const unsigned char* st, int cw) {
    AP::template multiply<A_MN, L>(t, st, cw);
  }
};

template <class AP>
using Parts = ws::Parts<ws::RoundRobin, X3<AP>, ws::DirectStore, ws::SumPerStage>;

// Split the operands (A too unless the A part splits it in registers), build the maps, launch one
// persistent cluster grid of the frame.
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
    if (sp.a_mn) return ws::launch<float, true, false, false, Parts<AP>>(user, maps, name);
  }
  ws::launch<float, false, false, false, Parts<AP>>(user, maps, name);
}

}  // namespace rungs::sgemm::x3_kernel
