// The fused epilogues, Epilogue parts of the skeleton (rungs.hpp, Epilogue; docs/epilogue.md):
// each consumer applies alpha, the bias, the activation, the gated product and beta * C to its
// accumulator in registers, then stores C from them (Fused, as DirectStore does; FusedTmaStore, as
// TmaStore does: through its shared buffer and TMA stores left in flight, where beta = 0 and C is
// 16-bit and TMA-aligned), or quantizes it to e4m3 with a scale per row and 128-column block (stored
// directly). The gated product's mainloop is HalvesOf<M>: a tile's 256 columns of B are 128 of the
// gate and the same 128 of the up projection, the cluster's two blocks loading one half each (the
// multicast share they load anyway), so one thread holds the gate and the up value of each of its
// output columns: columns 8j + 2q + e and 128 + 8j + 2q + e of the accumulator, registers 4j + 2h + e
// and 4(j + 16) + 2h + e; the tile's 128 output columns are then the first 64 registers, laid out as a
// 64 x 128 accumulator. A block of 128 output columns of one row lies in the 4 lanes of a quad: its
// amax takes 2 shuffles. C's tensor map is the part's own (Params), as C has n_out columns where the
// product has 2 n_out: the frame is not told.
#pragma once

#include "detail/activation.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/store.cuh"
#include "gemm/epilogue.hpp"
#include "gemm/pack.hpp"
#include "gemm/wgmma_ws.cuh"
#include "gemm/ws/tma_stages.cuh"

#include <cuda_fp8.h>

namespace rungs::sgemm::ws {

// Mainloop M with the gated product's B: tile column n0 covers op(B)'s columns n0 / 2 .. + 127 and
// n / 2 + n0 / 2 .. + 127 (n: op(B)'s 2 n_out columns), the first through block 0 of the cluster,
// the second through block 1.
template <class M>
struct HalvesOf : M {
  template <class Self, typename T, bool A_MN, bool B_MN, class Walk, class WaitReleased>
  static __device__ __forceinline__ void load(const Walk& walk, int p, const typename M::Maps& maps, unsigned char* smem,
                                              uint64_t* full, int n, uint32_t rank, int& it,
                                              WaitReleased&& wait_released) {
    load_piece<Self, T, A_MN, B_MN, Walk, WaitReleased&, true>(walk, p, maps.a, maps.b, maps.b64, smem, full, n, rank,
                                                               it, wait_released);
  }
};

struct FusedParams {
  CUtensorMap c_map;  // FusedTmaStore: C (m x n_out) in boxes of 64 rows x 128 bytes, where tma_cols > 0
  void* C;            // C (m x n_out): the problem's C type, or e4m3 with fp8_out
  int64_t ldc;
  int64_t tma_cols;   // FusedTmaStore: tiles whose columns end at or below it go out by TMA (0: none do)
  const void* bias;   // n_out values (2 n_out gated) of C's type, float with fp8_out; or null
  float* scales;      // fp8_out: m x ceil(n_out / 128)
  int n_out;
  float alpha, beta;  // beta: 0 with fp8_out
  Activation act;
  bool gated, fp8_out;
};
// Epilogue: the fused ones (see the top of this file). Whole 128 x 256 tiles, C not transposed. TMA:
// C through the consumer's shared buffer (the frame sets up the buffers, not C's map: tma stays false).
template <bool TMA>
struct FusedOf {
  static constexpr bool buffers = TMA, tma = false, storers = false;
  using Params = FusedParams;
  template <typename T, bool C_T>
  struct Consumer {
    static_assert(!C_T, "the fused epilogue stores C as it is");
    template <class Ctx>
    __device__ __forceinline__ void in_mainloop(const Ctx&, int) {}
    template <class Ctx>
    __device__ __forceinline__ void after_mainloop(const Ctx&, int) {}
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx& x) {
      if (TMA && x.tid % 128 == 0) detail::bulk_wait<0, false>();  // this consumer's C stores are done
    }
    template <class Ctx>
    static __device__ __forceinline__ const Params* p_in(const Ctx& x) { return static_cast<const Params*>(x.ep); }
    template <class Ctx, int R>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[R], int m0, int n0) {
      const Params p = *p_in(x);  // in registers: C's stores cannot alias it
      store_as(x, p, d, m0, n0);
    }
    template <class Ctx, int R>
    __device__ __forceinline__ void store_as(const Ctx& x, const Params& p, const float (&d)[R], int m0, int n0) {
      static_assert(R == 128, "64 x 256 accumulators");
      constexpr int J = R / 4, HALF = J / 2;  // 8-column groups; the gate's are the first HALF
      const int t = x.tid % 128, lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
      const int r0 = m0 + 64 * x.cw + 16 * w + g, m = static_cast<int>(x.a.m), n = p.n_out;
      const int c0 = (p.gated ? n0 / 2 : n0) + 2 * q;  // this thread's first output column
      auto bias_at = [&](int i) {  // bias[i]: i < n_out, or n_out + c for the up half
        return p.fp8_out ? static_cast<const float*>(p.bias)[i] : detail::to_f32(static_cast<const T*>(p.bias)[i]);
      };
      auto bias = [&](int c) { return p.bias != nullptr && c < n ? bias_at(c) : 0.0f; };
      auto up_bias = [&](int c) { return p.bias != nullptr && c < n ? bias_at(n + c) : 0.0f; };
      float v[R];
      if (p.gated) {
#pragma unroll
        for (int j = 0; j < HALF; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int c = c0 + 8 * j + e;
            const float bg = bias(c), bu = up_bias(c);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int i = 2 * h + e;
              const float gate = fmaf(p.alpha, d[4 * j + i], bg), up = fmaf(p.alpha, d[4 * (j + HALF) + i], bu);
              v[4 * j + i] = detail::activate_fast(gate, p.act) * up;
              v[4 * (j + HALF) + i] = 0.0f;  // no output column
            }
          }
      } else {
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float b = bias(c0 + 8 * j + e);
#pragma unroll
            for (int h = 0; h < 2; ++h)
              v[4 * j + 2 * h + e] = detail::activate_fast(fmaf(p.alpha, d[4 * j + 2 * h + e], b), p.act);
          }
      }
      const int groups = p.gated ? HALF : J;  // the 8-column groups of output
      if constexpr (TMA) {
        const int row0 = m0 + 64 * x.cw;
        if (p.gated && n0 / 2 + 128 <= p.tma_cols) {
          detail::store_acc_64x256_tma<T, 128>(reinterpret_cast<const float(&)[64]>(v), x.buf, &p_in(x)->c_map, row0,
                                               n0 / 2, 1.0f, 1 + x.cw);
          return;
        }
        if (!p.gated && n0 + 256 <= p.tma_cols) {
          detail::store_acc_64x256_tma<T, 256>(v, x.buf, &p_in(x)->c_map, row0, n0, 1.0f, 1 + x.cw);
          return;
        }
      }
      if (!p.fp8_out) {
        T* C = static_cast<T*>(p.C);
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = r0 + 8 * h, c = c0 + 8 * j;
            if (j < groups && r < m && c < n)
              detail::store_c_pair(C, p.ldc, r, c, v[4 * j + 2 * h], v[4 * j + 2 * h + 1], 1.0f, p.beta, c + 1 < n,
                                   x.c_vec);
          }
        return;
      }
      // fp8: per row (h) and 128-column block (b: 16 groups), the amax over the quad's lanes.
      const int blocks_n = (n + 127) / 128;
      __nv_fp8_e4m3* C = static_cast<__nv_fp8_e4m3*>(p.C);
#pragma unroll
      for (int b = 0; b < 2; ++b)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float amax = 0.0f;
#pragma unroll
          for (int j = 16 * b; j < 16 * b + 16; ++j)
            amax = detail::max_nan(amax, detail::max_nan(fabsf(v[4 * j + 2 * h]), fabsf(v[4 * j + 2 * h + 1])));
          amax = detail::max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
          amax = detail::max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
          const float s = detail::e4m3_block_scale(amax), inv = 1.0f / s;
          const int r = r0 + 8 * h, cb = c0 - 2 * q + 128 * b;  // the block's first column
          if (16 * b >= groups || r >= m || cb >= n) continue;
          if (q == 0) p.scales[static_cast<int64_t>(r) * blocks_n + cb / 128] = s;
#pragma unroll
          for (int j = 16 * b; j < 16 * b + 16; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int c = c0 + 8 * j + e;
              if (c < n) C[static_cast<int64_t>(r) * p.ldc + c] = __nv_fp8_e4m3(v[4 * j + 2 * h + e] * inv);
            }
        }
    }
  };
};

using Fused = FusedOf<false>;
using FusedTmaStore = FusedOf<true>;

// A rung's epilogue entry on the fused part: P (whole tiles, Fused) and PG (the same over
// HalvesOf<its mainloop>) run f16 and bf16 products; the empty product (k == 0 or alpha == 0) is
// the epilogue's plain kernel on P = 0.
template <class P, class PG>
void run_fused(const EpiCall& c, const char* name) {
  if (c.type != GemmType::f16 && c.type != GemmType::bf16)
    detail::unsupported(name, "applies epilogues to f16 and bf16 products (auto: every type)");
  if (!c.reads_ab()) {
    epilogue::apply(c, nullptr, c.type == GemmType::f16 ? EpiOut::f16 : EpiOut::bf16, 0);
    return;
  }
  auto go = [&](auto t) {
    using T = decltype(t);
    FusedParams ep{CUtensorMap{}, c.C,         c.ldc,      0,        c.epi.bias,  c.c_scales,
                   static_cast<int>(c.n), c.alpha, c.beta, c.epi.act, c.epi.gated, c.c_type == EpiOut::e4m3};
    // FusedTmaStore: C's map where TMA may store it (as the frame decides for TmaStore): 16-bit C,
    // beta = 0, base and rows 16-byte aligned; where n_out * 2 bytes is no multiple of 16, TMA would
    // clip the last tile column into the ld padding, so that column stores directly.
    if (P::Epilogue::buffers && !ep.fp8_out && c.beta == 0.0f && reinterpret_cast<uintptr_t>(c.C) % 16 == 0 &&
        (c.ldc * 2) % 16 == 0) {
      ep.c_map = detail::make_tensor_map_2d(c.C, detail::tma_type<T>(), 2, c.m, c.n, c.ldc, 64, 64);
      ep.tma_cols = (c.n * 2) % 16 == 0 ? INT64_MAX : c.n;
    }
    ArgsT<T> a{c.ta, c.tb,  c.m, c.np(), c.k, c.alpha, static_cast<const T*>(c.A), c.lda, static_cast<const T*>(c.B),
               c.ldb, c.beta, static_cast<T*>(c.C), c.ldc, c.stream};
    // The up half of a B stored k x 2n starts at column n: TMA boxes of an n-contiguous B start at
    // multiples of 64 columns only where n is one, so other n read B from a k-contiguous copy.
    std::unique_ptr<detail::Scratch> keep_b;
    if (c.epi.gated && c.tb == Trans::N && c.n % 64 != 0) {
      const int64_t ldb = pack::aligned_ld(c.k, int(sizeof(T)));
      keep_b = std::make_unique<detail::Scratch>(size_t(a.n) * size_t(ldb) * sizeof(T), c.stream);
      pack::copy_transposed(a.B, a.ldb, a.k, a.n, keep_b->as<T>(), ldb, c.stream);
      a.B = keep_b->as<T>(), a.ldb = ldb, a.tb = Trans::T;
    }
    if (c.epi.gated) run<PG>(a, name, ep);
    else run<P>(a, name, ep);
  };
  if (c.type == GemmType::f16) go(__half{});
  else go(__nv_bfloat16{});
}

}  // namespace rungs::sgemm::ws
