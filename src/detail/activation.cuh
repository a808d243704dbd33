// The epilogue's elementwise functions in fp32, written once for every kernel that applies them
// (the plain epilogue, gemm/epilogue.cu; the skeleton's fused epilogue): the activations of
// rungs::Activation, the gated product, and the fp8 output's block scale.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>

namespace rungs::detail {

// act(x) in fp32. gelu: the tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// (torch's approximate="tanh"); silu: x / (1 + e^-x) (for x below about -88, e^-x is inf and the
// result -0, as torch's).
__host__ __device__ __forceinline__ float activate(float x, Activation act) {
  switch (act) {
    case Activation::relu: return x > 0.0f ? x : (x == x ? 0.0f : x);  // NaN stays NaN
    case Activation::gelu: return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case Activation::silu: return x / (1.0f + expf(-x));
    case Activation::none: break;
  }
  return x;
}

// act(x) in the fused epilogue's registers: silu and gelu both as x times a sigmoid (gelu's tanh
// form is 0.5 x (1 + tanh(y)) = x / (1 + e^-2y)), with the fast exponential and division (a few ulp
// of fp32, far below the 16-bit and fp8 outputs' rounding), and act chosen by selects, not branches:
// the fused part unrolls 128 outputs a thread, so each costs a handful of instructions and the
// kernel one copy of them.
__device__ __forceinline__ float activate_fast(float x, Activation act) {
  const float z = act == Activation::gelu ? 1.5957691216057308f * x * fmaf(0.044715f, x * x, 1.0f) : x;
  const float sig = __fdividef(x, 1.0f + __expf(-z));  // e^-z = inf: x * 0, as the limit
  const float relu = x > 0.0f ? x : (x == x ? 0.0f : x);
  return act == Activation::none ? x : act == Activation::relu ? relu : sig;
}

// The largest of a and b, NaN where either is NaN (fmaxf would drop it): a block's amax over
// values holding a NaN is NaN, so its scale and every one of its fp8 outputs are NaN, not a
// silently finite block.
__host__ __device__ __forceinline__ float max_nan(float a, float b) { return (b > a || b != b) ? b : a; }

// The e4m3 block scale of a block whose largest magnitude is amax: amax / 448 (e4m3's largest
// finite value), 1 for an all-zero block.
__host__ __device__ __forceinline__ float e4m3_block_scale(float amax) { return amax == 0.0f ? 1.0f : amax / 448.0f; }

}  // namespace rungs::detail
