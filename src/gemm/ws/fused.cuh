// The fused epilogue, an Epilogue part of the skeleton (rungs.hpp, Epilogue; docs/epilogue.md):
// each consumer applies alpha, the bias, the activation, the gated product and beta * C to its
// accumulator in registers and stores C from them (as DirectStore does), or quantizes it to e4m3
// with a scale per row and 128-column block. The gated product's mainloop is HalvesOf<M>: a tile's
// 256 columns of B are 128 of the gate and the same 128 of the up projection, the cluster's two
// blocks loading one half each (the multicast share they load anyway), so one thread holds the gate
// and the up value of each of its output columns: columns 8j + 2q + e and 128 + 8j + 2q + e of the
// accumulator, registers 4j + 2h + e and 4(j + 16) + 2h + e. A block of 128 output columns of one
// row lies in the 4 lanes of a quad: its amax takes 2 shuffles.
#pragma once

#include "detail/activation.cuh"
#include "detail/gemm_tc.cuh"
#include "gemm/epilogue.hpp"
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
  void* C;            // C (m x n_out): the problem's C type, or e4m3 with fp8_out
  int64_t ldc;
  const void* bias;   // n_out values (2 n_out gated) of C's type, float with fp8_out; or null
  float* scales;      // fp8_out: m x ceil(n_out / 128)
  int n_out;
  float alpha, beta;  // beta: 0 with fp8_out
  Activation act;
  bool gated, fp8_out;
};

// Epilogue: the fused one (see the top of this file). Whole 128 x 256 tiles, C not transposed.
struct Fused {
  static constexpr bool buffers = false, tma = false, storers = false;
  using Params = FusedParams;
  template <typename T, bool C_T>
  struct Consumer {
    static_assert(!C_T, "the fused epilogue stores C as it is");
    template <class Ctx>
    __device__ __forceinline__ void in_mainloop(const Ctx&, int) {}
    template <class Ctx>
    __device__ __forceinline__ void after_mainloop(const Ctx&, int) {}
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx&) {}
    template <class Ctx, int R>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[R], int m0, int n0) {
      static_assert(R == 128, "64 x 256 accumulators");
      constexpr int J = R / 4, HALF = J / 2;  // 8-column groups; the gate's are the first HALF
      const Params& p = *static_cast<const Params*>(x.ep);
      const int t = x.tid % 128, lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
      const int r0 = m0 + 64 * x.cw + 16 * w + g, m = static_cast<int>(x.a.m), n = p.n_out;
      const int c0 = (p.gated ? n0 / 2 : n0) + 2 * q;  // this thread's first output column
      auto bias = [&](int c) {
        if (p.bias == nullptr) return 0.0f;
        return p.fp8_out ? static_cast<const float*>(p.bias)[c] : detail::to_f32(static_cast<const T*>(p.bias)[c]);
      };
      float v[R];
      if (p.gated) {
#pragma unroll
        for (int j = 0; j < HALF; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int c = c0 + 8 * j + i % 2;
            const bool in = c < n;
            const float gate = p.alpha * d[4 * j + i] + (in ? bias(c) : 0.0f);
            const float up = p.alpha * d[4 * (j + HALF) + i] + (in ? bias(n + c) : 0.0f);
            v[4 * j + i] = in ? detail::activate(gate, p.act) * up : 0.0f;
            v[4 * (j + HALF) + i] = 0.0f;  // no output column
          }
      } else {
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int c = c0 + 8 * j + i % 2;
            const bool in = c < n;
            v[4 * j + i] = in ? detail::activate(p.alpha * d[4 * j + i] + bias(c), p.act) : 0.0f;
          }
      }
      const int groups = p.gated ? HALF : J;  // the 8-column groups of output
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
          const float s = detail::e4m3_block_scale(amax);
          const int r = r0 + 8 * h, cb = c0 - 2 * q + 128 * b;  // the block's first column
          if (16 * b >= groups || r >= m || cb >= n) continue;
          if (q == 0) p.scales[static_cast<int64_t>(r) * blocks_n + cb / 128] = s;
#pragma unroll
          for (int j = 16 * b; j < 16 * b + 16; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int c = c0 + 8 * j + e;
              if (c < n) C[static_cast<int64_t>(r) * p.ldc + c] = __nv_fp8_e4m3(v[4 * j + 2 * h + e] / s);
            }
        }
    }
  };
};

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
  const FusedParams ep{c.C, c.ldc, c.epi.bias, c.c_scales, static_cast<int>(c.n), c.alpha, c.beta, c.epi.act,
                       c.epi.gated, c.c_type == EpiOut::e4m3};
  auto go = [&](auto t) {
    using T = decltype(t);
    const ArgsT<T> a{c.ta, c.tb,  c.m, c.np(), c.k, c.alpha, static_cast<const T*>(c.A), c.lda, static_cast<const T*>(c.B),
                     c.ldb, c.beta, static_cast<T*>(c.C), c.ldc, c.stream};
    if (c.epi.gated) run<PG>(a, name, ep);
    else run<P>(a, name, ep);
  };
  if (c.type == GemmType::f16) go(__half{});
  else go(__nv_bfloat16{});
}

}  // namespace rungs::sgemm::ws
