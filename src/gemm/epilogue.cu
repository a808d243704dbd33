// The epilogue as plain kernels (gemm/epilogue.hpp): one warp per row and 128-column block of C,
// lane l on columns l, l + 32, l + 64, l + 96 of the block (every load and store of a warp 32
// consecutive elements). An fp8 output's block scale is the warp's amax (NaN-propagating) over
// its 128 values: the scale array's layout is the warp's. Bounded by DRAM: P read once (twice the
// columns when gated), C written once (and read once with beta != 0).
#include "core/errors.hpp"
#include "detail/activation.cuh"
#include "detail/gemm_tile.cuh"
#include "gemm/epilogue.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

namespace rungs::sgemm::epilogue {

namespace {

constexpr int kBlock = 128;   // columns of one scale block (one warp)
constexpr int kWarps = 8;     // warps per thread block

struct Params {
  const void* P;
  int64_t ldp;
  const void* bias;
  void* C;
  int64_t ldc;
  float* scales;
  int64_t m, n, blocks_n;  // blocks_n = ceil(n / 128)
  float beta;
  Activation act;
  bool gated;
};

template <typename T>
__device__ __forceinline__ float load(const void* p, int64_t i) {
  return static_cast<float>(static_cast<const T*>(p)[i]);
}

template <typename TP, typename TB, typename TC>
__global__ void __launch_bounds__(32 * kWarps) epilogue_kernel(const Params a) {
  constexpr bool FP8 = std::is_same_v<TC, __nv_fp8_e4m3>;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = a.m * a.blocks_n, stride = int64_t(gridDim.x) * kWarps;
  for (int64_t w = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32; w < warps; w += stride) {
    const int64_t row = w / a.blocks_n, c0 = (w % a.blocks_n) * kBlock;
    TC* c_row = static_cast<TC*>(a.C) + row * a.ldc;
    float e[kBlock / 32];
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < kBlock / 32; ++i) {
      const int64_t c = c0 + lane + 32 * i;
      float v = 0.0f;
      if (c < a.n) {
        const int64_t p = row * a.ldp + c;
        float x = a.P != nullptr ? load<TP>(a.P, p) : 0.0f;
        if (a.bias != nullptr) x += load<TB>(a.bias, c);
        v = detail::activate(x, a.act);
        if (a.gated) {
          float u = a.P != nullptr ? load<TP>(a.P, p + a.n) : 0.0f;
          if (a.bias != nullptr) u += load<TB>(a.bias, a.n + c);
          v *= u;
        }
        if constexpr (!FP8) {
          if (a.beta != 0.0f) v += a.beta * static_cast<float>(c_row[c]);
          c_row[c] = TC(v);
        }
      }
      e[i] = v;
      amax = detail::max_nan(amax, fabsf(v));
    }
    if constexpr (FP8) {
#pragma unroll
      for (int o = 16; o > 0; o /= 2) amax = detail::max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, o));
      const float s = detail::e4m3_block_scale(amax);
#pragma unroll
      for (int i = 0; i < kBlock / 32; ++i) {
        const int64_t c = c0 + lane + 32 * i;
        if (c < a.n) c_row[c] = __nv_fp8_e4m3(e[i] / s);
      }
      if (lane == 0) a.scales[row * a.blocks_n + c0 / kBlock] = s;
    }
  }
}

template <typename TP, typename TB, typename TC>
void launch(const Params& a, cudaStream_t stream) {
  const int64_t blocks = detail::ceil_div(a.m * a.blocks_n, int64_t(kWarps));
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t(1) << 20));
  epilogue_kernel<TP, TB, TC><<<grid, 32 * kWarps, 0, stream>>>(a);
  RUNGS_LAUNCHED();
}

}  // namespace

void apply(const EpiCall& c, const void* P, EpiOut p_type, int64_t ldp) {
  if (c.m == 0 || c.n == 0) return;
  const Params a{P, ldp, c.epi.bias, c.C, c.ldc, c.c_scales, c.m, c.n, detail::ceil_div(c.n, int64_t(kBlock)),
                 c.beta, c.epi.act, c.epi.gated};
  auto bad = [&] { throw Error("rungs: epilogue: no plain kernel for this product and output type"); };
  switch (c.c_type) {
    case EpiOut::f32:
      if (p_type != EpiOut::f32) bad();
      return launch<float, float, float>(a, c.stream);
    case EpiOut::f16:
      if (p_type != EpiOut::f16) bad();
      return launch<__half, __half, __half>(a, c.stream);
    case EpiOut::bf16:
      if (p_type != EpiOut::bf16) bad();
      return launch<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16>(a, c.stream);
    case EpiOut::e4m3:
      if (p_type == EpiOut::bf16) return launch<__nv_bfloat16, float, __nv_fp8_e4m3>(a, c.stream);
      if (p_type == EpiOut::f32) return launch<float, float, __nv_fp8_e4m3>(a, c.stream);
      bad();
  }
}

}  // namespace rungs::sgemm::epilogue
