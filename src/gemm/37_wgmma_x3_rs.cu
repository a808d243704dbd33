// Rung 37, wgmma_x3_rs: 3xTF32 (float inputs, Math::tf32x3) with A split in registers (sm_90a); B split
// by a copy as in rung 36; A read in place when TMA can (k- or m-contiguous), else one aligned copy.
// Adds over 36 wgmma_x3: Mainloop X3<SplitInRegisters> (below; the mainloop frame is 36_wgmma_x3.cuh's,
// SumPerStage 35_wgmma_sums.cuh's). TMA brings A's fp32 tile as stored; each consumer loads its 64 x 32 fragment
// (detail::load_a_frags_k_f32, or _mn_tf32 for A stored k x m), splits it into tf32 big and small
// parts (detail::split_tf32) and takes A from registers (wgmma's register form) for the three
// products, each 32-deep stage summed apart and added in fp32 as in rung 36.
// Why: rung 36 is DRAM-bound at 8192^3; a stage here is A (16 KB) and B's two parts, 48 KB instead of
// 64, so 4 stages fit where rung 36 has 3, and A's split copy (read 4 bytes, write 8) is gone. An A
// stored k x m is read as stored: faster than copying it k-contiguous (tn 4096^3: 119.5 against
// 113.7 TFLOP/s).
// Bounded by: the three products (the tf32 peak / 3, ~165 TFLOP/s on the H100), each consumer's wait
// for its stage's products before the fp32 add (the other consumer covers it), B's split copy.
// Prediction (H100): 4096^3 105 -> 110-115 TFLOP/s, 8192^3 91-98 -> 100-110, errors unchanged;
// measured: 122 / 126 TFLOP/s (2.36 / 2.51x cuBLAS sgemm), 8192^3 steady where rung 36 spreads,
// errors bit-identical to rung 36's: beat the prediction.
#include "gemm/36_wgmma_x3.cuh"

namespace rungs::sgemm::x3_kernel {

// A part: A's fp32 tile as stored (A_MN: k x m, in boxes of BK k-rows x 32 m), split in registers.
// 4 stages of 48 KB.
struct SplitInRegisters {
  static constexpr int A_PARTS = 1, STAGES = 4;
  static constexpr bool a_in_registers = true;  // pack::split_operands leaves A as stored
  template <bool A_MN, class L>
  static __device__ __forceinline__ void load_a(unsigned char* st, const Maps& maps, int m0, int k0, uint64_t* bar) {
    if constexpr (A_MN) {  // boxes of BK k-rows x 32 m (128 bytes), 4 KB each
      for (int j = 0; j < BM / 32; ++j) detail::tma_load_2d(st + L::A_HI + j * BK * ROW, &maps.a_hi, m0 + 32 * j, k0, bar);
    } else {
      detail::tma_load_2d(st + L::A_HI, &maps.a_hi, k0, m0, bar);
    }
  }
  // A's fragments of the stage, split in registers. No wgmma group of this consumer is in flight
  // here (SumPerStage waits for each stage's products), so writing them does not serialize the MMAs
  // (C7513).
  template <bool A_MN, class L>
  static __device__ __forceinline__ void multiply(float (&t)[64], const unsigned char* st, int cw) {
    uint32_t x[16], hi[16], lo[16];
    if constexpr (A_MN) detail::load_a_frags_mn_tf32(x, st + L::A_HI, cw);  // (fp32 bits as stored)
    else detail::load_a_frags_k_f32(x, st + L::A_HI, cw);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      float h, l;
      detail::split_tf32(__uint_as_float(x[i]), h, l);
      hi[i] = __float_as_uint(h), lo[i] = __float_as_uint(l);
    }
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {  // k8 per wgmma, 32 bytes along the 128-byte row
      const uint32_t(&ah)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&hi[4 * kk]);
      const uint32_t(&al)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&lo[4 * kk]);
      const uint64_t bh = detail::smem_desc(st + L::B_HI + kk * 32, 16, 1024);
      const uint64_t bl = detail::smem_desc(st + L::B_LO + kk * 32, 16, 1024);
      detail::wgmma_rs_tf32<128>(t, ah, bl, kk > 0);  // the small products first, into a fresh sum
      detail::wgmma_rs_tf32<128>(t, al, bh, true);
      detail::wgmma_rs_tf32<128>(t, ah, bh, true);
    }
  }
};

}  // namespace rungs::sgemm::x3_kernel

namespace rungs::sgemm::wgmma_x3_rs {

void run_tf32x3(const Args& a) { x3_kernel::run<x3_kernel::SplitInRegisters>(a, "wgmma_x3_rs"); }

std::vector<std::string> parts() { return ws::part_names<x3_kernel::Parts<x3_kernel::SplitInRegisters>>(); }

}  // namespace rungs::sgemm::wgmma_x3_rs
