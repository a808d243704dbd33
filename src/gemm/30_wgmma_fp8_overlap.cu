// Rung 30, wgmma_fp8_overlap: rung 29's two-level accumulation with the promotion hidden under the
// other consumer's MMAs: the two consumer warpgroups take turns on the tensor core, half a k tile
// each, so that while one adds its partial sum into its fp32 registers the tensor core multiplies
// the other's; fp8 (e4m3 / e5m2, any pair), bf16 or float C, all three scalings.
// Adds over 29 wgmma_fp8_promote: the Accumulation part OrderedPromote (below): rung 29's k loop
// (each k tile in two 128-column halves, four wgmma.m64n128k32 into a 64-register partial sum from
// zero, wgmma_wait<0>, d += s * partial) with each half's MMAs issued in turn: consumer 0 issues a
// half, hands the turn to consumer 1 (a named barrier: bar.arrive on the other's, bar.sync on its
// own), which issues its same half and hands it back. The tensor core then holds one consumer's
// group queued behind the other's: consumer 0's finishes first and it promotes (64 fmas, ~100
// cycles) while consumer 1's runs (four m64n128k32: 1 M multiply-adds, ~256 tensor-core cycles at
// fp8's 4096 per SM cycle), and issues its next half behind it before that runs dry; then the
// roles swap. In rung 29 both consumers issue as soon as the stage lands, their MMAs interleave
// and finish together, and both promote while the tensor core idles.
// Why this and not the alternatives: (a) software pipelining inside one consumer (issue the next
// half into a second partial sum, wgmma_wait<1>, then promote the previous) needs two partial sums
// beside the 128 registers of d: two of 64 (n128) do not fit the 232 a consumer has, two of 32
// (n64) do but read A four times per k tile (64 KB of shared memory per consumer and k tile, ~125
// bytes per tensor-core cycle of the 128 shared memory delivers), and a smaller tile (64 x 128 per
// consumer) halves the B reuse per stage and doubles the producer's and the epilogue's share.
// (c) promoting every two k tiles for tensor and outer: the fp8 tolerance (check/gemm_check.cpp)
// assumes at most 128 products summed in the tensor core between promotions, one k tile. (b),
// DeepGEMM's: its two math warpgroups each issue a k block's MMAs, wait and promote, relying on
// the other warpgroup's MMAs to cover the promotion; this rung makes that overlap deliberate by
// ordering the issue, with no register or shared memory added to rung 29.
// The turns: barrier 3 + cw is consumer cw's turn (256 threads: its 128 bar.sync, the other's 128
// bar.arrive). Consumer 0's first half-step takes no turn (it goes first); both consumers take the
// same number of half-steps (the same tiles, the same k tiles), so consumer 1's last hand-over is
// the one left unanswered, and consumer 0 takes it after its last tile (after_tiles), leaving no
// barrier pending at exit. The hand-over never waits on the epilogue: a consumer hands the turn on
// right after issuing, so the other may start its next tile's first half while this one stores.
// Register budget: rung 29's (d 128, the partial sum 64, four scales and the scale pointers, within
// the 232 of setmaxnreg); the turns add two barrier ids.
// Bounded by: the hand-overs (a bar.sync and a bar.arrive per half-step, under the other's MMAs),
// rung 29's A read twice per k tile (48 KB of shared memory per consumer and k tile where rung 28
// reads 40: ~94 against ~78 bytes per tensor-core cycle, under the 128 shared memory delivers), and
// the epilogue as in rung 28 (both consumers store a tile at about the same time; one half-step of
// the other's MMAs overlaps it). If the tensor core does not run two warpgroups' queued MMAs in the
// order they were issued, the turns order the issue but not the work, and this rung runs as 29.
// Prediction (e4m3 x e4m3 -> bf16, nt, interleaved with cuBLASLt): ~0.92-0.97x rung 28's speed for
// every scaling: per-tensor ~1290-1350 TFLOP/s at 4096^3 (0.97-1.02x cuBLASLt) and ~1370-1450 at
// 8192^3 (0.96-1.01x); outer the same; block128 ~0.95x of its per-tensor speed, ~1220-1290 TFLOP/s
// at 4096^3 (1.05-1.1x cuBLASLt's block128) and ~1300-1380 at 8192^3 (1.0-1.06x). Normwise error
// at k = 8192 rung 29's (the same sums in the same order: rung 29's C, bit for bit).
// Measured (H100 SXM, f36fe0c, e4m3 -> bf16 nt, median of 20 interleaved with cuBLASLt): per-tensor
// 1165 / 1259 TFLOP/s at 4096^3 / 8192^3 (0.86 / 0.85x cuBLASLt; rung 29 1164 / 1220), block128
// 1050 / 1124 (0.89 / 0.84x cuBLASLt's block128; rung 29 1026 / 1126); the normwise error rung 29's
// (1.05e-4 at k = 8192, cuBLASLt's). A miss: it runs as rung 29, the case the prediction named (the
// turns order the issue, not the work). Kept as the measured step that rules out overlap by issue
// order alone. Stricter turns, the turn handed over when 3 of a half-step's 4 MMAs are done (one
// consumer's MMAs alone on the tensor core), measured 4 % slower (1116 / 1213 TFLOP/s per-tensor):
// one warpgroup's n128 MMAs do not fill the tensor core by themselves
// (scripts/experiments/fp8_promote_probes.sh).
// Its k loop is rung 29's but for the turns (the descriptors formed once per tile, block128's next
// scales issued under the first half's MMAs): H200 block128 0.1213 / 0.9086 ms at 4096^3 / 8192^3
// against rung 29's 0.1191 / 0.8922, per-tensor 0.1123 / 0.8485 against 0.1088 / 0.8304 (26f8e50).
#include "gemm/29_wgmma_fp8_promote.cuh"

namespace rungs::sgemm::ws {

// Accumulation: Promote's partial sums (29_wgmma_fp8_promote.cuh), with the two consumers' MMAs
// issued in turns, half a k tile at a time (fp8 only): Turns, PromoteWith's order of issue.
struct Turns {
  // Named barriers 3 and 4: consumer cw's turn to issue is barrier TURN + cw (1 and 2 are the
  // TMA-store epilogue's, one per consumer).
  static constexpr int TURN = 3, PAIR = 2 * 128;
  // This consumer's turn: the other has issued its half-step before this one (consumer 0's very
  // first half-step goes first).
  static __device__ __forceinline__ void wait(int cw, int it, int half) {
    if (cw != 0 || it != 0 || half != 0) detail::named_barrier(TURN + cw, PAIR);
  }
  // Queued: the other's half-step may follow.
  static __device__ __forceinline__ void pass(int cw) { detail::named_barrier_arrive(TURN + (1 - cw), PAIR); }
  // After the consumer's last tile: consumer 0 takes consumer 1's last hand-over (it: this
  // consumer's k tiles over all its tiles; none, no hand-over either).
  static __device__ __forceinline__ void after_tiles(int cw, int it) {
    if (cw == 0 && it > 0) detail::named_barrier(TURN, PAIR);
  }
};
using OrderedPromote = PromoteWith<Turns>;

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_fp8_overlap {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::TmaStore, ws::OrderedPromote>;

void run_fp8(const ArgsF8& a) { ws::run_fp8<Parts>(a, "wgmma_fp8_overlap"); }

}  // namespace rungs::sgemm::wgmma_fp8_overlap
