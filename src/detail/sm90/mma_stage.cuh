// One pipeline stage's wgmmas for one consumer warpgroup (sm_90a), over the TMA rungs' stage
// layout (128-byte rows, the 128-byte swizzle): a 64-row slice of A against the stage's B, for
// 16-bit and tf32 operands (either major where the type allows), fp8 (K-major), and tf32 with A
// from registers (its fragments loaded here from an m- or k-contiguous tile).
#pragma once

#include "detail/sm90/store.cuh"
#include "detail/sm90/wgmma.cuh"

#include <cstdint>
#include <type_traits>

namespace rungs::detail {

// One stage of the TMA rungs' shared-memory layout (128-byte swizzle, one 128-byte row of k per
// stage: 64 16-bit or 32 tf32 elements), issued by warpgroup `half` for its 64 rows of A against
// all 256 columns of B, k16 (k8 for tf32) per wgmma.
//   A K-major: BM rows of 128 B; this warpgroup's rows start at half * 64 rows, k steps move
//     inside the row. A MN-major: boxes of 64 m x BK k-rows, this warpgroup's is box `half`,
//     k steps move by KI rows of 128 B.
//   B K-major: 256 rows of 128 B. B MN-major: 4 boxes of 64 n x BK k-rows (LBO = one box).
// N < 256: only the first N columns of B (its first N rows, or N / 64 boxes) and the first N / 2
// registers of d.
template <typename T, bool A_MN, bool B_MN, int N = 256, int R>
__device__ __forceinline__ void wgmma_stage_64xn(float (&d)[R], const unsigned char* As, const unsigned char* Bs,
                                                 int half) {
  static_assert(R >= N / 2, "d holds the 64 x N accumulator");
  constexpr int ROW = 128, BK = ROW / int(sizeof(T)), KI = std::is_same_v<T, float> ? 8 : 16;
#pragma unroll
  for (int kk = 0; kk < BK / KI; ++kk) {
    const uint64_t da = A_MN ? smem_desc(As + half * BK * ROW + kk * KI * ROW, BK * ROW, 1024)
                             : smem_desc(As + half * 64 * ROW + kk * KI * int(sizeof(T)), 16, 1024);
    const uint64_t db = B_MN ? smem_desc(Bs + kk * KI * ROW, BK * ROW, 1024)
                             : smem_desc(Bs + kk * KI * int(sizeof(T)), 16, 1024);
    wgmma<N, T, T, A_MN, B_MN>(d, da, db);
  }
}

// One stage of fp8 operands (both K-major, one 128-byte row of k = 128 elements per stage, the
// 128-byte swizzle) for warpgroup `half`'s 64 rows of A against the first N columns of B: four
// m64nNk32, each k step 32 bytes into the rows (as wgmma_stage_64xn's K-major case).
// accumulate = false: the stage's first MMA starts a fresh sum (the rest add to it).
template <typename TA8, typename TB8, int N = 256, int R>
__device__ __forceinline__ void wgmma_stage_64xn_fp8(float (&d)[R], const unsigned char* As, const unsigned char* Bs,
                                                     int half, bool accumulate = true) {
  static_assert(R >= N / 2, "d holds the 64 x N accumulator");
  constexpr int ROW = 128, KI = 32;
#pragma unroll
  for (int kk = 0; kk < ROW / KI; ++kk) {
    const uint64_t da = smem_desc(As + half * 64 * ROW + kk * KI, 16, 1024);
    const uint64_t db = smem_desc(Bs + kk * KI, 16, 1024);
    wgmma<N, TA8, TB8>(d, da, db, accumulate || kk > 0);
  }
}

// The same for 128 columns of B, from descriptors (smem_desc, K-major, 128-byte swizzle) of this
// warpgroup's first row of A and of the first of the 128 rows of B at the stage's k step 0: a k step
// of 32 bytes adds 2 to their start address (16-byte units). d holds the 64 x 128 product (64
// registers) in the m64n128 layout.
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_stage_64x128_fp8(float (&d)[R], uint64_t da, uint64_t db,
                                                       bool accumulate = true) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma<128, TA8, TB8>(d, da + 2 * kk, db + 2 * kk, accumulate || kk > 0);
}

// tf32 with A from registers, for an A stored MN-major (a stage of it: boxes of BK = 32 k-rows x
// 32 m-elements, 128-byte swizzle, this warpgroup's 64 rows in boxes 2 half and 2 half + 1).
// a[4 kk + e]: this thread's fragment of k8 step kk, element e at row 16w + g + 8(e % 2), k 8kk + q
// + 4(e / 2) (warp w, lane 4g + q: the m16n8k8 tf32 A layout, a warp per 16 rows). Shared-memory
// reads: 2-way bank conflicts (rows g and g + 4 land in the same 16-byte chunk for k q and q ^ 1),
// 16 per thread per stage against the 1024 tensor-core cycles of the stage's four m64n256k8.
__device__ __forceinline__ void load_a_frags_mn_tf32(uint32_t (&a)[16], const unsigned char* As, int half) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const uint32_t box = smem_u32(As) + static_cast<uint32_t>((2 * half + w / 2) * 4096);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * (w % 2) + g + 8 * (e % 2), k = 8 * kk + q + 4 * (e / 2);
      a[4 * kk + e] = ld_shared<uint32_t>(box + static_cast<uint32_t>(swizzle128_offset(k, 4 * row)));
    }
}

// The same fragments from a K-major A tile (BM rows of 128 bytes, 32 floats of k each, 128-byte
// swizzle, as TMA writes it): rows 64 * half + 16w + g (+ 8), k 8kk + q (+ 4). A warp's 32 loads
// of one word fall in 8 rows (8 different swizzled chunks) x 4 words: no bank conflicts. The words
// are as stored (fp32 bits: the caller rounds or splits them).
__device__ __forceinline__ void load_a_frags_k_f32(uint32_t (&a)[16], const unsigned char* As, int half) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const uint32_t base = smem_u32(As);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 64 * half + 16 * w + g + 8 * (e % 2), k = 8 * kk + q + 4 * (e / 2);
      a[4 * kk + e] = ld_shared<uint32_t>(base + static_cast<uint32_t>(swizzle128_offset(row, 4 * k)));
    }
}

// One stage as wgmma_stage_64xn, tf32 with A from registers (load_a_frags_mn_tf32) and B K-major.
// `a` must stay untouched until the wgmma group issued here has retired.
template <int N = 256, int R>
__device__ __forceinline__ void wgmma_stage_64xn_rs(float (&d)[R], const uint32_t (&a)[16], const unsigned char* Bs) {
  static_assert(N == 256 || N == 128 || N == 64, "n256, n128 or n64");
  static_assert(R >= N / 2, "d holds the 64 x N accumulator");
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint32_t (&f)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&a[4 * kk]);
    const uint64_t db = smem_desc(Bs + kk * 8 * 4, 16, 1024);
    wgmma_rs_tf32<N>(d, f, db);
  }
}

}  // namespace rungs::detail
