// Rung 21, wgmma_overlap: rung 17 whose epilogue runs under the next tile's MMAs (sm_90a); f16 and
// bf16 only (tf32's fp32 C, 128 words, does not fit beside the accumulators).
// Adds over 17 wgmma_tma_store: Epilogue Overlap. After a tile's last MMA each consumer only packs its
// 64 x 256 accumulator to C's 16-bit type in registers (alpha applied, 64 words: detail::pack_acc)
// and goes on to the next tile; the shared-memory fill and TMA stores of those words run inside the
// next tile's mainloop, one 64 x 128 chunk after issuing each of its first two k tiles' MMAs (after
// the last tile, at the end). Cost: 64 more registers per consumer thread (within setmaxnreg's 232,
// no spills) and the fill's shared-memory writes beside the wgmma operand reads.
// Why: rung 17's two consumers finish a tile together, so during its epilogue the tensor cores have
// nothing to do (4 % of the consumers' stall samples at 4096^3 bf16, against 59 % in the mainloop).
// Bounded by: as rung 17, the tensor pipe at 88 % of elapsed cycles. The tile change shrinks from
// ~3.2 to ~2.0 thousand cycles, but each tile's MMAs grow from ~65.0 to 66.5-67.7 thousand (H100):
// the fill and stores beside the MMAs slow them by as much as they save.
// Prediction: bf16 4096^3 0.98-0.99x -> 1.02-1.04x cuBLAS, 8192^3 +1-2 %; measured: 0.3-1 % slower
// than rung 17 at 2048-8192^3 (bf16 4096^3 0.1775 against 0.1762 ms; H100): a miss, kept as the
// measured step; `auto` never picks it.
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

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

}  // namespace rungs::sgemm::wgmma_overlap
