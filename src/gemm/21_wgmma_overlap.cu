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
// measured step; `auto` picks it only for the fused epilogue.
// Epilogues (run_epi): FusedOverlap below moves the fused math, not only the stores, under the next
// tile's MMAs; bias+silu 4096 x 28672 x 4096 bf16: 1.371 ms against rung 17's fused 1.411 (H200).
#include "gemm/17_wgmma_tma_store.cuh"
#include "gemm/ws/fused.cuh"

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

// Epilogue: FusedTmaStore's (ws/fused.cuh) with the fused math, the shared-memory fill and the TMA
// stores of a tile moved under the next tile's k tiles, as Overlap moves rung 17's. After a tile's
// last MMA each consumer only adds the bias to alpha times its accumulator and packs it to C's
// 16-bit type: accumulator columns 0-127 (gated: the gate) into its buffer, in the layout of C's
// boxes, 128-255 (gated: the up values) into 32 registers (all 64 words beside the accumulator would
// spill). Step s of the next tile's mainloop (after its k tile s's MMAs are issued) applies the
// activation and the gated product to output column groups 2s and 2s + 1 (16 columns), in place in
// the buffer or from the registers into the half of the buffer whose box has gone, and every fourth
// step sends a 64-column box by TMA. 16 steps a tile (8 gated); what a short tile leaves runs after
// its mainloop. fp8 output, beta != 0 and the columns TMA may not write take FusedTmaStore's path.
struct FusedOverlap {
  static constexpr bool buffers = true, tma = false, storers = false;
  using Params = FusedParams;
  template <typename T, bool C_T>
  struct Consumer : FusedTmaStore::Consumer<T, C_T> {
    using Base = FusedTmaStore::Consumer<T, C_T>;
    static_assert(sizeof(T) == 2, "C packed to 16 bits");
    static constexpr int STEPS = 16, GROUPS = 2;  // steps a tile (half that gated), 8-column groups a step
    uint32_t pk[32];  // the pending tile's words 2j + h for j = 16 .. 31 (word 2 (j - 16) + h)
    int pend_row = -1, pend_col = 0;  // its first row and output column (pend_row < 0: none)
    bool pend_gated = false;
    __device__ __forceinline__ int steps() const { return pend_gated ? STEPS / 2 : STEPS; }
    // Word (j, h) of this thread in the buffer: columns 8j + 2q and + 1 (mod 128) of row 16w + g + 8h.
    // `at`: this thread's word (0, 0) (slot0). An opaque value, so the compiler computes each address
    // where it is used instead of holding all 32 across the mainloop.
    static __device__ __forceinline__ uint32_t slot0(const unsigned char* buf, int tid) {
      const int t = tid % 128, lane = t % 32;
      uint32_t at = detail::smem_u32(buf) + static_cast<uint32_t>(detail::c_chunk_offset<T>(16 * (t / 32) + lane / 4, 2 * (lane % 4)));
      asm volatile("" : "+r"(at));
      return at;
    }
    // Word (j, h) from word (0, 0) at `at` (row r = 16w + g: chunk j % 8 of the 128-byte swizzle sits at
    // (j % 8) ^ (r % 8), and r % 8 = g is in `at`'s bits 4-6).
    static __device__ __forceinline__ uint32_t slot(uint32_t at, int j, int h) {
      return (at ^ static_cast<uint32_t>((j % 8) << 4)) + static_cast<uint32_t>((j % 16) / 8 * 8192 + h * 1024);
    }
    template <int S, class Ctx>
    __device__ __forceinline__ void step(const Ctx& x) {
      const Params& p = *Base::p_in(x);
      constexpr int PER_BOX = 8 / GROUPS, BOX = S / PER_BOX;  // the 64-column box this step fills part of
      const bool t0 = x.tid % 128 == 0;
      if constexpr (S % PER_BOX == 0 && BOX >= 2) {  // boxes 2 and 3 from registers over boxes 0 and 1
        if (t0) detail::bulk_wait<1, true>();          // box BOX - 2 has left the buffer
        detail::named_barrier(1 + x.cw, 128);
      }
      const uint32_t at0 = slot0(x.buf, x.tid);
#pragma unroll
      for (int j = GROUPS * S; j < GROUPS * S + GROUPS; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t at = slot(at0, j, h);
          const float2 v = detail::unpack2<T>(j < 16 ? detail::ld_shared<uint32_t>(at) : pk[2 * (j - 16) + h]);
          float r0 = detail::activate_fast(v.x, p.act), r1 = detail::activate_fast(v.y, p.act);
          if (pend_gated && j < 16) {  // the up values of these columns
            const float2 u = detail::unpack2<T>(pk[2 * j + h]);
            r0 *= u.x, r1 *= u.y;
          }
          detail::st_shared_b32(at, detail::pack2<T>(r0, r1));
        }
      if constexpr (S % PER_BOX == PER_BOX - 1) {
        detail::fence_proxy_async_shared();
        detail::named_barrier(1 + x.cw, 128);
        if (t0) {
          detail::tma_store_2d(&p.c_map, x.buf + (BOX % 2) * 8192, pend_col + 64 * BOX, pend_row);
          detail::bulk_commit();
        }
      }
    }
    template <int S = 0, class Ctx>
    __device__ __forceinline__ void step_at(const Ctx& x, int s) {  // step s of the pending tile, if it has one
      if constexpr (S < STEPS) {
        if (s != S) step_at<S + 1>(x, s);
        else if (S < STEPS / 2 || !pend_gated) step<S>(x);
      }
    }
    template <class Ctx>
    __device__ __forceinline__ void in_mainloop(const Ctx& x, int i) {  // k tile kb + i's MMAs issued
      if (pend_row >= 0) step_at(x, i);
    }
    template <class Ctx>
    __device__ __forceinline__ void after_mainloop(const Ctx& x, int k_tiles) {  // what a short tile left
      if (pend_row >= 0)
        for (int s = k_tiles; s < steps(); ++s) step_at(x, s);
      pend_row = -1;
    }
    template <class Ctx, int R>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[R], int m0, int n0) {
      const Params& p = *Base::p_in(x);
      const int col = p.gated ? n0 / 2 : n0, cols = p.gated ? 128 : 256;
      if (p.fp8_out || col + cols > p.tma_cols) {
        Base::store(x, d, m0, n0);
        // No tile pending: written here, the pending state is not live across that store (it would spill).
#pragma unroll
        for (int i = 0; i < 32; ++i) pk[i] = 0;
        pend_col = 0, pend_gated = false;
        return;
      }
      // Out under the next tile's MMAs (or after the last): alpha * d + bias (the up half's bias on
      // the up values), word 2j + h holding columns 8j + 2q and + 1 of row 16w + g + 8h.
      if (x.tid % 128 == 0) detail::bulk_wait<0, true>();  // the last tile's boxes have left the buffer
      detail::named_barrier(1 + x.cw, 128);
      const int q = x.tid % 4, n = p.n_out;
      const uint32_t at0 = slot0(x.buf, x.tid);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const bool up = p.gated && j >= 16;
        const int c = col + 8 * (up ? j - 16 : j) + 2 * q;
        const T* bias = static_cast<const T*>(p.bias) + (up ? n : 0);
        const float b0 = p.bias != nullptr && c < n ? detail::to_f32(bias[c]) : 0.0f;
        const float b1 = p.bias != nullptr && c + 1 < n ? detail::to_f32(bias[c + 1]) : 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t w = detail::pack2<T>(fmaf(p.alpha, d[4 * j + 2 * h], b0), fmaf(p.alpha, d[4 * j + 2 * h + 1], b1));
          if (j < 16) detail::st_shared_b32(slot(at0, j, h), w);
          else pk[2 * (j - 16) + h] = w;
        }
      }
      pend_row = m0 + 64 * x.cw, pend_col = col, pend_gated = p.gated;
    }
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx& x) {
      if (pend_row >= 0)
        for (int s = 0; s < steps(); ++s) step_at(x, s);  // the last tile's C
      Base::finish(x);
    }
  };
};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::wgmma_overlap {

using Parts = ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::Overlap>;

void run_f16(const ArgsH& a) { ws::run<Parts>(a, "wgmma_overlap"); }
void run_bf16(const ArgsBF& a) { ws::run<Parts>(a, "wgmma_overlap"); }

std::vector<std::string> parts() { return ws::part_names<Parts>(); }

// Epilogues: rung 17's fused epilogue with its math and stores under the next tile's MMAs
// (FusedOverlap above).
void run_epi(const EpiCall& c) {
  ws::run_fused<ws::Parts<ws::RoundRobin, ws::WholeTiles, ws::FusedOverlap>,
                ws::Parts<ws::RoundRobin, ws::HalvesOf<ws::WholeTiles>, ws::FusedOverlap>>(c, "wgmma_overlap");
}

}  // namespace rungs::sgemm::wgmma_overlap
