// Rung 33, wgmma_fp8_rs: rung 29's two-level accumulation with A read from shared memory once per
// k tile: each consumer loads its 64 x 128 fp8 of A into registers (16 words a thread) when the
// stage lands, and both 128-column halves multiply from there (wgmma.m64n128k32 with A in
// registers, B from shared memory); fp8 (e4m3 / e5m2, any pair), bf16 or float C, all three
// scalings.
// Adds over 29 wgmma_fp8_promote: the Accumulation part PromoteRS (below), rung 29's k loop with
// the A operand in registers. In rung 29 each half's four MMAs read A from shared memory, so a
// consumer reads its A twice per k tile: 48 KB per consumer and k tile (16 of A, 32 of B), ~94
// bytes per tensor-core cycle where rung 28's n256 MMAs read 40 KB (~78). Here A is read once (8 KB
// by 16 ld.shared.b32 a thread, conflict-free: load_a_frags_k_f32's words are the fp8 fragment's
// bytes) and the MMAs read only B: 40 KB per consumer and k tile, rung 28's traffic.
// Registers: d 128, the partial sum 64, A's fragments 16, four block128 scales and their pointers,
// within the 232 of setmaxnreg. The A words are overwritten only after both halves' MMAs have
// retired (wgmma_wait<0>), so no register is written under an MMA that reads it.
// Bounded by: what rung 29 leaves once A is read once, the consumers' wait for their own MMAs
// twice per k tile and the additions, covered only by the other consumer's MMAs.
// Prediction (H100, e4m3 -> bf16, nt, interleaved with cuBLASLt): if shared memory's bandwidth is
// what holds rung 29 at 0.80-0.83x rung 28, ~0.92-0.97x rung 28's speed for every scaling (per-tensor
// ~1290-1350 TFLOP/s at 4096^3); if the waits are, rung 29's speed. The sums are rung 29's, in
// the same order: the same C bit for bit.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// Accumulation: Promote's partial sums (29_wgmma_fp8_promote.cu) with A from registers (fp8 only).
struct PromoteRS {
  static constexpr bool promote = true;
  static constexpr int PROMOTE_EVERY = 1;  // k tiles per promotion, as Promote's
  // The consumer's k loop, as Promote::k_loop (the same arguments).
  template <typename T, class Args, class Release>
  static __device__ __forceinline__ void k_loop(float (&d)[128], const Args& a, const unsigned char* smem,
                                                uint64_t* full, int& it, int kb, int ke, int row0, int n0, int cw,
                                                Release&& release) {
    static_assert(PROMOTE_EVERY == 1, "one k tile per promotion (block128)");
    using TA8 = typename Problem<T>::A;
    using TB8 = typename Problem<T>::B;
    const int t = static_cast<int>(threadIdx.x % 128), w = t / 32, g = (t % 32) / 4;
    const bool block = a.scales.kind == Scaling::block128;
    const int64_t kblocks = (a.k + 127) / 128;
    const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
    // This thread's two rows and the tile's two column blocks, clamped into the arrays (a row or
    // block past m or n multiplies products that are never stored).
    const int r0 = min(row0 + 16 * w + g, m - 1), r1 = min(row0 + 16 * w + g + 8, m - 1);
    const int nb0 = min(n0 / 128, (n - 1) / 128), nb1 = min(n0 / 128 + 1, (n - 1) / 128);
    const float* __restrict__ sa0 = a.scales.a + r0 * kblocks;
    const float* __restrict__ sa1 = a.scales.a + r1 * kblocks;
    const float* __restrict__ sb0 = a.scales.b + nb0 * kblocks;
    const float* __restrict__ sb1 = a.scales.b + nb1 * kblocks;
    float part[64];  // one half's partial sum (the MMAs start it from zero)
#pragma unroll
    for (int i = 0; i < 64; ++i) part[i] = 0.0f;
    uint32_t af[16];  // this consumer's A of the k tile: k32 step kk in af[4kk .. 4kk + 3]
    for (int kt = kb; kt < ke; ++kt, ++it) {
      // s[half][h]: the scale of row h (r0, r1) in column block `half` for k block kt.
      float s[2][2] = {{1.0f, 1.0f}, {1.0f, 1.0f}};
      if (block) {
        const float x0 = __ldg(sa0 + kt), x1 = __ldg(sa1 + kt), y0 = __ldg(sb0 + kt), y1 = __ldg(sb1 + kt);
        s[0][0] = x0 * y0, s[0][1] = x1 * y0, s[1][0] = x0 * y1, s[1][1] = x1 * y1;
      }
      const int slot = it % STAGES;
      detail::mbar_wait(&full[slot], (it / STAGES) & 1);
      const unsigned char* As = smem + slot * STAGE_BYTES;
      const unsigned char* Bs = As + A_BYTES;
      detail::load_a_frags_k_f32(af, As, cw);  // rows 64 cw + 16w + g (+ 8), the k tile's 128 bytes
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        detail::wgmma_fence();  // A's words (and the partial sum) written before the MMAs read them
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const uint32_t f[4] = {af[4 * kk], af[4 * kk + 1], af[4 * kk + 2], af[4 * kk + 3]};
          const uint64_t db = detail::smem_desc(Bs + half * 128 * ROW + kk * 32, 16, 1024);
          detail::wgmma_128_fp8_rs<TA8, TB8>(part, f, db, kk > 0);
        }
        detail::wgmma_commit();
        detail::wgmma_wait<0>();
        if (half == 1) release(slot);  // both halves have read the stage
        // part[4j + e]: row 16w + g + 8 (e / 2), column 128 half + 8j + 2q + e % 2, which is
        // d[64 half + 4j + e] of the 64 x 256 sums.
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float& x = d[64 * half + 4 * j + e];
            x = fmaf(s[half][e / 2], part[4 * j + e], x);
          }
      }
    }
  }
  // After the consumer's last tile: nothing (the consumers do not wait for each other).
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_fp8_rs {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::PromoteRS>;

void run_fp8(const ArgsF8& a) { ws::run_fp8<Parts>(a, "wgmma_fp8_rs"); }

}  // namespace rungs::sgemm::wgmma_fp8_rs
