// Rung 33, wgmma_fp8_narrow: rung 29's two-level accumulation on tiles of 128 x 128, where each
// consumer promotes a k tile's partial sum while the tensor core runs its next k tile's MMAs; fp8
// (e4m3 / e5m2, any pair), bf16 or float C, all three scalings.
// Adds over 29 wgmma_fp8_promote: the frame's tile narrowed to 128 columns (ws::Narrow: each
// consumer 64 x 128, its sums in 64 fp32 registers, B's stage 16 KB) and the Accumulation part
// PairedPromote (below). A consumer takes its k tiles in pairs: the first into partial sum pa, the
// second into pb (four wgmma.m64n128k32 each, from zero), then waits for the first alone
// (wgmma_wait<1>) and adds pa into its sums while the second's MMAs run, then waits for the second
// and adds pb. Rung 29 waits for each half k tile's MMAs before it adds them (two waits per k tile
// with nothing of its own in flight); here one wait in two has the consumer's next MMAs behind it.
// Two 64-register partial sums beside 64 registers of sums fit a consumer's 232 registers, where
// beside rung 29's 128 they do not. The pipeline is drained at each pair's end: ptxas serializes
// every wgmma of a kernel whose accumulators are read with a group in flight across a loop's back
// edge (C7514). An odd last k tile is multiplied and promoted alone. block128 scales: one column
// block of B per tile (n0 a multiple of 128), so s = a[row][kt] * b[n0 / 128][kt], two rows per
// thread, loaded before the stage's wait; tensor and outer in the epilogue, as in rung 28.
// Bounded by: half of the promotions exposed (a pair's second, at the drain), covered by the other
// consumer's MMAs when the two are out of step; B read from L2 twice as often per multiply-add as by
// the 128 x 256 tile (each B row now serves 128 rows of A), and A as often per stage as B (32 KB a
// stage: 16 KB of A, 16 KB of B, the same 4 stages).
// Prediction (e4m3 x e4m3 -> bf16, nt, interleaved with cuBLASLt): between rung 29 (0.80-0.83x
// rung 28's speed) and rung 28: ~0.88-0.93x rung 28, per-tensor ~1230-1300 TFLOP/s at 4096^3 and
// ~1330-1400 at 8192^3 (0.92-0.97x cuBLASLt), block128 ~0.95x of that. The normwise error is rung
// 29's (the same sums: one promotion per k tile, in k order). Not yet measured.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// Accumulation: the tensor core's partial sums of k tiles taken in pairs, the first promoted
// while the second's MMAs run (fp8 only; tiles 128 columns wide: Narrow<Parts, 128>).
struct PairedPromote {
  static constexpr bool promote = true;
  // The consumer's k loop over k tiles kb .. ke - 1 of the tile whose rows row0 .. row0 + 63 (this
  // consumer's) and columns n0 .. n0 + 127 it sums into d; `it`: the consumer's stage counter,
  // release(slot): both blocks' producers may refill the slot.
  template <typename T, class Args, class Release, int R>
  static __device__ __forceinline__ void k_loop(float (&d)[R], const Args& a, const unsigned char* smem,
                                                uint64_t* full, int& it, int kb, int ke, int row0, int n0, int cw,
                                                Release&& release) {
    static_assert(R == 64, "tiles of 128 columns (Narrow<Parts, 128>)");
    constexpr int STAGE = stage_bytes<2 * R>();
    using TA8 = typename Problem<T>::A;
    using TB8 = typename Problem<T>::B;
    const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4;
    const bool block = a.scales.kind == Scaling::block128;
    const int64_t kblocks = (a.k + 127) / 128;
    const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
    // This thread's two rows and the tile's column block, clamped into the arrays (a row or block
    // past m or n multiplies products that are never stored).
    const int r0 = min(row0 + 16 * w + g, m - 1), r1 = min(row0 + 16 * w + g + 8, m - 1);
    const int nb = min(n0 / 128, (n - 1) / 128);
    const float* __restrict__ sa0 = a.scales.a + r0 * kblocks;
    const float* __restrict__ sa1 = a.scales.a + r1 * kblocks;
    const float* __restrict__ sb = a.scales.b + nb * kblocks;
    // The scales of rows r0 and r1 for k tile kt (1 but for block128).
    auto scales = [&](int kt, float (&s)[2]) {
      s[0] = s[1] = 1.0f;
      if (block) {
        const float y = __ldg(sb + kt);
        s[0] = __ldg(sa0 + kt) * y, s[1] = __ldg(sa1 + kt) * y;
      }
    };
    // k tile u's MMAs into partial sum p (from zero) on the stage of counter value `at`.
    auto issue = [&](float (&p)[64], int at) {
      const int slot = at % STAGES;
      detail::mbar_wait(&full[slot], (at / STAGES) & 1);
      const unsigned char* As = smem + slot * STAGE;
      detail::wgmma_fence();
      detail::wgmma_stage_64x128_fp8<TA8, TB8>(p, As, As + A_BYTES, cw, false);
      detail::wgmma_commit();
    };
    // d += s * p: p[4j + e] is row 16w + g + 8(e / 2), column 8j + 2q + e % 2, which is d[4j + e].
    auto promote = [&](const float (&p)[64], const float (&s)[2]) {
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) d[4 * j + e] = fmaf(s[e / 2], p[4 * j + e], d[4 * j + e]);
    };
    float pa[64], pb[64];  // the pair's partial sums (the MMAs start them from zero)
#pragma unroll
    for (int i = 0; i < 64; ++i) pa[i] = 0.0f, pb[i] = 0.0f;
    int kt = kb;
    for (; kt + 1 < ke; kt += 2, it += 2) {
      float sa[2], sb2[2];
      scales(kt, sa);
      scales(kt + 1, sb2);
      issue(pa, it);
      issue(pb, it + 1);
      detail::wgmma_wait<1>();  // the first k tile's MMAs have retired; the second's run on
      release(it % STAGES);
      promote(pa, sa);
      detail::wgmma_wait<0>();
      release((it + 1) % STAGES);
      promote(pb, sb2);
    }
    if (kt < ke) {  // an odd last k tile, alone
      float s[2];
      scales(kt, s);
      issue(pa, it);
      detail::wgmma_wait<0>();
      release(it % STAGES);
      promote(pa, s);
      ++it;
    }
  }
  // After the consumer's last tile: nothing (the consumers do not wait for each other).
  static __device__ __forceinline__ void after_tiles(int, int) {}
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_fp8_narrow {

using Parts = ws::Narrow<ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::PairedPromote>, 128>;

void run_fp8(const ArgsF8& a) { ws::run_fp8<Parts>(a, "wgmma_fp8_narrow"); }

}  // namespace rungs::sgemm::wgmma_fp8_narrow
