// The epilogue as plain kernels (gemm/epilogue.hpp): each thread takes 8 consecutive columns of a
// row (16-byte loads and stores where P's and C's rows allow them, else element by element), a warp
// 256 columns, half a warp one 128-column block: an fp8 output's block scale is the half warp's amax
// (NaN-propagating) over its 128 values. Bounded by DRAM: P read once (twice the columns when gated),
// C written once (and read once with beta != 0).
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

constexpr int kBlock = 128;   // columns of one scale block (half a warp)
constexpr int kVec = 8;       // columns of one thread
constexpr int kWarps = 8;     // warps per thread block
constexpr int kItems = 2;     // work items a thread (the loads of all of them in flight at once)

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
  bool vec_p, vec_c;  // P's (both halves') and C's rows take 16-byte accesses of 8 elements
};

template <typename T>
__device__ __forceinline__ float load(const void* p, int64_t i) {
  return static_cast<float>(static_cast<const T*>(p)[i]);
}

// v = 8 elements of a row from column c (all inside it): one 16-byte load for 16-bit T (two for
// float) where vec, else one load each.
template <typename T>
__device__ __forceinline__ void load8(const void* base, int64_t i, bool vec, float (&v)[kVec]) {
  const T* p = static_cast<const T*>(base) + i;
  if (vec) {
    constexpr int W = 16 / int(sizeof(T));  // elements per 16 bytes
    alignas(16) T t[kVec];
#pragma unroll
    for (int q = 0; q < kVec / W; ++q) reinterpret_cast<uint4*>(t)[q] = reinterpret_cast<const uint4*>(p)[q];
#pragma unroll
    for (int j = 0; j < kVec; ++j) v[j] = static_cast<float>(t[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) v[j] = static_cast<float>(p[j]);
  }
}
template <typename T>
__device__ __forceinline__ void store8(void* base, int64_t i, bool vec, const float (&v)[kVec]) {
  T* p = static_cast<T*>(base) + i;
  alignas(16) T t[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) t[j] = T(v[j]);
  if (vec) {
    if constexpr (sizeof(T) == 1) {
      *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(t);
    } else {
#pragma unroll
      for (int q = 0; q < int(sizeof(T)) * kVec / 16; ++q) reinterpret_cast<uint4*>(p)[q] = reinterpret_cast<const uint4*>(t)[q];
    }
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) p[j] = t[j];
  }
}

template <typename TP, typename TB, typename TC>
__global__ void __launch_bounds__(32 * kWarps) epilogue_kernel(const Params a) {
  constexpr bool FP8 = std::is_same_v<TC, __nv_fp8_e4m3>;
  // 16-bit and fp8 outputs: the fused part's fast activation (its few ulp of fp32 vanish in C's
  // rounding); an fp32 C keeps the precise expf and division.
  constexpr bool FAST = !std::is_same_v<TC, float>;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t groups = detail::ceil_div(a.n, int64_t(2 * kBlock));  // 256-column groups of a row
  const int64_t warps = a.m * groups, stride = int64_t(gridDim.x) * kWarps;
  // kItems work items (8 columns of a row) a thread: all their loads in flight before any math.
  for (int64_t w0 = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32; w0 < warps; w0 += kItems * stride) {
    float v[kItems][kVec], u[kItems][kVec], c0[kItems][kVec];
    int64_t row[kItems], c[kItems];
    bool live[kItems], whole[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t w = w0 + i * stride;
      live[i] = w < warps;  // warp-uniform
      row[i] = live[i] ? w / groups : 0;
      c[i] = (live[i] ? w % groups : 0) * 2 * kBlock + kVec * lane;  // this thread's first column
      whole[i] = live[i] && c[i] + kVec <= a.n;  // all 8 columns inside C
      const bool p = live[i] && a.P != nullptr;
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[i][j] = u[i][j] = c0[i][j] = 0.0f;
      if (whole[i]) {
        if (p) load8<TP>(a.P, row[i] * a.ldp + c[i], a.vec_p, v[i]);
        if (p && a.gated) load8<TP>(a.P, row[i] * a.ldp + a.n + c[i], a.vec_p, u[i]);
        if (!FP8 && a.beta != 0.0f) load8<TC>(a.C, row[i] * a.ldc + c[i], a.vec_c, c0[i]);
      } else if (live[i]) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          if (c[i] + j >= a.n) continue;
          if (p) v[i][j] = load<TP>(a.P, row[i] * a.ldp + c[i] + j);
          if (p && a.gated) u[i][j] = load<TP>(a.P, row[i] * a.ldp + a.n + c[i] + j);
          if (!FP8 && a.beta != 0.0f) c0[i][j] = load<TC>(a.C, row[i] * a.ldc + c[i] + j);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!live[i]) continue;
      float e[kVec], amax = 0.0f;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const bool in = c[i] + j < a.n;
        float x = v[i][j];
        if (a.bias != nullptr && in) x += load<TB>(a.bias, c[i] + j);
        float r = FAST ? detail::activate_fast(x, a.act) : detail::activate(x, a.act);
        if (a.gated) {
          float up = u[i][j];
          if (a.bias != nullptr && in) up += load<TB>(a.bias, a.n + c[i] + j);
          r *= up;
        }
        if (!FP8 && a.beta != 0.0f) r += a.beta * c0[i][j];
        e[j] = in ? r : 0.0f;
        amax = detail::max_nan(amax, fabsf(e[j]));
      }
      if constexpr (FP8) {  // the half warp's 128 columns
#pragma unroll
        for (int o = 8; o > 0; o /= 2) amax = detail::max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, o));
        const float s = detail::e4m3_block_scale(amax);
        const float inv = 1.0f / s;  // as the fused part: one division a block, not one an output
#pragma unroll
        for (int j = 0; j < kVec; ++j) e[j] *= inv;
        if (lane % 16 == 0 && c[i] < a.n) a.scales[row[i] * a.blocks_n + c[i] / kBlock] = s;
      }
      if (whole[i]) {
        store8<TC>(a.C, row[i] * a.ldc + c[i], a.vec_c, e);
      } else {
        TC* out = static_cast<TC*>(a.C) + row[i] * a.ldc;
        for (int j = 0; j < kVec && c[i] + j < a.n; ++j) out[c[i] + j] = TC(e[j]);
      }
    }
  }
}

template <typename TP, typename TB, typename TC>
void launch(const Params& a, cudaStream_t stream) {
  const int64_t warps = a.m * detail::ceil_div(a.n, int64_t(2 * kBlock));
  const int64_t blocks = detail::ceil_div(warps, int64_t(kWarps * kItems));
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t(1) << 20));
  epilogue_kernel<TP, TB, TC><<<grid, 32 * kWarps, 0, stream>>>(a);
  RUNGS_LAUNCHED();
}

}  // namespace

void apply(const EpiCall& c, const void* P, EpiOut p_type, int64_t ldp) {
  if (c.m == 0 || c.n == 0) return;
  // 16-byte accesses: the base and every row (and the up half, column n) on 16 bytes.
  auto vec = [&](const void* p, int64_t ld, int elem, int64_t cols_off) {
    return p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * elem) % 16 == 0 &&
           (cols_off * elem) % 16 == 0;
  };
  const int p_elem = p_type == EpiOut::f32 ? 4 : 2;
  const int c_elem = c.c_type == EpiOut::f32 ? 4 : c.c_type == EpiOut::e4m3 ? 1 : 2;
  const bool vec_p = vec(P, ldp, p_elem, c.epi.gated ? c.n : 0);
  const bool vec_c = c.c_type == EpiOut::e4m3 ? reinterpret_cast<uintptr_t>(c.C) % 8 == 0 && c.ldc % 8 == 0
                                              : vec(c.C, c.ldc, c_elem, 0);
  const Params a{P,    ldp,  c.epi.bias, c.C,         c.ldc, c.c_scales, c.m,  c.n, detail::ceil_div(c.n, int64_t(kBlock)),
                 c.beta, c.epi.act, c.epi.gated, vec_p, vec_c};
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
