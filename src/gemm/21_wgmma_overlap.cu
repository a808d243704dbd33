// Rung 21, wgmma_overlap: rung 17 (warp-specialized, persistent, clustered wgmma with the TMA-store
// epilogue, sm_90a) whose epilogue runs under the next tile's MMAs; f16 and bf16.
// Adds over 17 wgmma_tma_store: after a tile's last MMA each consumer only converts its 64 x 256
// accumulator to C's 16-bit type in registers (alpha applied, 64 words: detail::pack_acc) and goes
// straight on to the next tile. The shared-memory fill and the TMA stores of those words happen
// inside the next tile's mainloop, one 64 x 128 chunk after issuing the MMAs of each of its first
// two k tiles, while the tensor cores work on them (after the last tile, at the end). Rung 17's two
// consumers finish a tile together, so in its epilogue (two fills of 16 KB, each behind the
// previous chunk's TMA read of the buffer) the tensor cores have nothing to do.
// Why: ncu's stall sampling of rung 17 at 4096^3 bf16 (cac4f83, docs/gemm_tc.md): 59 % of all warp
// samples in the consumers' mainloop and 4 % in their epilogue, i.e. ~6 % of a consumer's time with
// no MMAs in flight; rung 17 is 0.98-0.99x cuBLAS there, 0.94-0.96x at 2048^3, level at 8192^3.
// Cost: 64 more registers per consumer thread while the MMAs run (d[128] + 64 words, within the
// 232 of setmaxnreg; no spills), and the fill's shared-memory writes beside the wgmma operand
// reads (rung 17's busiest unit is the shared-memory pipe, 88 % at 4096^3): +32 KB per tile against
// ~3 MB of operand traffic. tf32 (fp32 C, 128 words) does not fit beside the accumulators: rung 21
// does f16 and bf16 only.
// Prediction (H100, bf16): 4096^3 from 0.98-0.99x to 1.02-1.04x cuBLAS (3.88 tiles per block,
// each losing ~2-3 % of its MMA time to rung 17's epilogue); 8192^3 +1-2 %
// (twice the MMAs per tile); 2048^3 unchanged (one tile per block: nothing to hide it under).
// Measured (H100, 67889a9, same run as rung 17): a miss. Correct (50 GemmTc tests with rung
// 20's, memcheck and racecheck clean), but no faster: bf16 0.0296 / 0.1775 / 1.366 ms at
// 2048 / 4096 / 8192^3 against rung 17's 0.0291 / 0.1762 / 1.356, f16 0.0305 / 0.1806 / 1.479 against
// 0.0298 / 0.1797 / 1.417 (0.3-1 % slower; 8192 f16 within that row's 9 % spread).
// ncu (4096^3 bf16, one launch each, a897517): 290,402 elapsed cycles per SM for rung 17 and
// 291,824 for rung 21; the busiest pipe of both is the one ncu calls "Shared" (88.1 % / 87.7 %), which
// it says executes FP64 and tensor operations and is dominated by its tensor sub-pipeline: the tensor
// cores are busy 88 % of the time in both. The MMA work is 254 thousand cycles per SM on average (512
// tiles of 65.5 thousand over 132 SMs) and 262 thousand on the SMs that run 4 tiles, so ~28 thousand
// cycles per SM (~7 thousand per tile) are not MMAs, and taking the epilogue off the tensor cores'
// path left them where they were: they are not the epilogue (whose stall samples overlapped MMAs
// still in flight). Per-tile stamps (4096^3 bf16,
// docs/gemm_tc.md): rung 17's tile change costs ~3.2 thousand cycles, ~2.6 of them C's epilogue;
// here a tile change takes ~2.0 thousand, but each tile's MMAs take 66.5-67.7 thousand cycles
// against rung 17's ~65.0: the fill and stores beside the MMAs slow them by as much as they save.
// Kept on the ladder as the measured miss; `auto` never picks it.
// Bounded by: as rung 17, the tensor pipe at 88 % of elapsed cycles; C's epilogue, on or beside the
// MMAs' path, ~2.5 thousand cycles a tile.
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// Epilogue: TmaStore's, with the shared-memory fill and the TMA stores of a tile moved under the
// next tile's first two k tiles (16-bit C only).
struct Overlap {
  static constexpr bool buffers = true, tma = true, storers = false;
  template <typename T, bool C_T>
  struct Consumer : TmaStore::Consumer<T, C_T> {
    static_assert(sizeof(T) == 2 && !C_T, "C packed to 16 bits");
    // The last tile's C, alpha applied, two 16-bit elements a word (detail::pack_acc), still to go
    // out through the buffer and TMA at (pend_row, pend_col) while this tile's first MMAs run
    // (pend_row < 0: nothing pending). Its two chunks go in k tiles kb and kb + 1.
    uint32_t pk[64];
    int pend_row = -1, pend_col = 0;
    template <int C>
    __device__ __forceinline__ void emit(const ConsumerCtx<T>& x) {  // chunk C of pk into the buffer, then out by TMA
      constexpr int CHUNK = 256 / int(sizeof(T));
      detail::send_c_chunk<T>(x.buf, x.map_c, pend_row, pend_col + C * CHUNK, 1 + x.cw,
                              [&](uint32_t b) { detail::fill_c_chunk_packed<T, C>(pk, b); });
    }
    __device__ __forceinline__ void in_mainloop(const ConsumerCtx<T>& x, int i) {  // k tile kb + i's MMAs issued
      if (pend_row >= 0 && i == 0) emit<0>(x);
      if (pend_row >= 0 && i == 1) emit<1>(x);
    }
    __device__ __forceinline__ void after_mainloop(const ConsumerCtx<T>& x, int k_tiles) {  // what a short tile left
      if (pend_row >= 0 && k_tiles < 1) emit<0>(x);
      if (pend_row >= 0 && k_tiles < 2) emit<1>(x);
      pend_row = -1;
    }
    __device__ __forceinline__ void store(const ConsumerCtx<T>& c, const float (&d)[128], int m0, int n0) {
      if (n0 + BN <= c.tma_cols) {  // out under the next tile's MMAs (or after the last)
        detail::pack_acc<T>(d, pk, c.a.alpha);
        pend_row = m0 + c.cw * 64, pend_col = n0;
      } else {
        DirectStore::store<T, C_T>(d, c.a, m0, n0, c.cw, c.c_vec);
      }
    }
    __device__ __forceinline__ void finish(const ConsumerCtx<T>& c) {
      if (pend_row >= 0) emit<0>(c), emit<1>(c);  // the last tile's C
      TmaStore::Consumer<T, C_T>::finish(c);
    }
  };
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_overlap {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::Overlap>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_overlap"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_overlap"); }

}  // namespace rungs::sgemm::wgmma_overlap
