// Rung 30, wgmma_fp8_overlap: rung 29's two-level accumulation with the two consumer warpgroups taking
// turns on the tensor core, half a k tile each, so that one promotes while the other's MMAs run; fp8
// (any e4m3 / e5m2 pair), bf16 or float C, all three scalings, copies as rung 28.
// Adds over 29 wgmma_fp8_promote: the Accumulation part OrderedPromote (Turns, below): rung 29's k loop
// with each half's MMAs issued in turn. Consumer 0 issues a half and hands the turn over (a named
// barrier: bar.arrive on the other's, bar.sync on its own); consumer 1 issues its same half and hands
// it back. One group then queues behind the other: consumer 0's finishes first and it promotes (64
// FMAs, ~100 cycles) while consumer 1's four m64n128k32 run (~256 tensor-core cycles) and issues its
// next half before they run dry; then the roles swap. In rung 29 both issue as the stage lands, their
// MMAs finish together and both promote while the tensor core idles.
// Turns: barrier 3 + cw is consumer cw's (its 128 threads bar.sync, the other's 128 bar.arrive).
// Consumer 0's first half-step takes no turn; both take as many half-steps, so consumer 1's last
// hand-over is left over and consumer 0 takes it after its last tile (after_tiles): no barrier is
// pending at exit. A consumer hands over right after issuing, so the other may start its next tile
// while this one stores. Registers and shared memory as rung 29; two barrier ids more.
// Not chosen: a second partial sum per consumer (two of n128 exceed the 232 registers; n64 reads A four
// times per k tile), a smaller tile (halves B's reuse), promoting every two k tiles (the tolerance).
// Bounded by: rung 29's bounds and the hand-overs. The turns order the issue, not the tensor core's
// work: where it does not run queued groups in issue order, this rung runs as rung 29.
// Prediction: ~0.92-0.97x rung 28's speed (~1.0x cuBLASLt per-tensor at 4096^3); measured: 0.86 /
// 0.85x cuBLASLt at 4096^3 / 8192^3 (H100), rung 29's speed: a miss, kept as the measured step.
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

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_fp8_overlap
