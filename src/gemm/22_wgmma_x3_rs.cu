// Rung 22, wgmma_x3_rs: 3xTF32 (float inputs, Math::tf32x3) with A split in registers (sm_90a).
// Adds over 16 wgmma_x3: A is not split by a copy. TMA brings A's fp32 tile as stored (A itself
// when TMA can read it, k- or m-contiguous; else one aligned copy in the same layout), each consumer
// loads its 64 x 32 fragment from shared memory (detail::load_a_frags_k_f32, or _mn_tf32 for an
// A stored k x m) and splits it into tf32
// big and small parts in registers (detail::split_tf32), and the three products take A from
// registers (wgmma's register form): hi*lo + lo*hi + hi*hi as in rung 16, each 32-deep stage summed
// apart on the tensor core and added to the fp32 accumulator off it. B is split by a copy as in
// rung 16. Why: at 8192^3 rung 16 is DRAM-bound (ncu 85b5619: 33 GB read for 1 GB of split
// operands, DRAM 84 % busy) and every stage moves four 16 KB parts through L2 per block (A hi,
// A lo, B hi, B lo; B multicast over the cluster's two blocks): 48 KB per block per 1536 tensor-core cycles, ~7 TB/s
// over 132 SMs at 1.75 GHz. Here a stage is A (16 KB) and B's two parts: 32 KB per block, two
// thirds; A's split copy (read 4 bytes, write 8 per element) is gone, and the stage's 48 KB let
// 4 stages fit where rung 16 had 3.
// Bounded by: the tensor cores' three products per k step (the tf32 peak / 3, ~165 TFLOP/s on the
// H100), each consumer's wait for its stage's products before the fp32 add (the other consumer
// covers it), and B's split copy (read once, written twice).
// Prediction (H100): 4096^3 from rung 16's 105 TFLOP/s (1.3 ms, of which
// A's split copy ~0.07 ms) to 110-115; 8192^3 from 91-98 to 100-110; error unchanged (the same
// split, products and order as rung 16), at or below cuBLAS sgemm's.
// Measured (H100, 517f0c9, docs/gemm_tc.md): correct (GemmTc tests, memcheck and racecheck
// clean), errors bit-identical to rung 16's (3.1e-7 / 2.6e-7 at 2048 x 2048 x
// 4096, cuBLAS sgemm 1.1e-6 / 8.5e-7). Beat the prediction: 96.4 / 122.0 / 126.4 TFLOP/s at 2048^3 /
// 4096^3 / 8192^3 (1.94 / 2.36 / 2.51x cuBLAS sgemm) against rung 16's 87.5 / 105.4 / 99.1 in the same
// run; 8192^3 steady (8.63-8.76 ms where rung 16 spreads over 10.3-13.1); 4096^3 nt 123.6;
// 4095 x 4097 x 4093 115.2 (0.94 of 4096^3's speed). tn / tt read A as stored (d2be6cf): 119.5 /
// 121.2 at 4096^3, 122.5 / 124.5 at 8192^3, where copying A k-contiguous ran 113.7 / 116.7 at 4096^3.
// Its mainloop and accumulation are rung 16's (wgmma_x3.cuh); the A part below is what this rung adds.
#include "gemm/wgmma_x3.cuh"

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

}  // namespace rungs::sgemm::wgmma_x3_rs
