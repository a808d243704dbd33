// Device and host helpers shared by the reduction rungs (one copy, never pasted into a rung):
//  * the per-type dispatch from Args to a template over the input type T, with the output written
//    through plain_t<T> (integers as uint64: int32 sums exact, int64 wraps modulo 2^64 without
//    signed-overflow UB; floats in their own type);
//  * the multi-pass driver of rungs 1-6 (one block reduces one chunk to one partial; the same
//    kernel runs again over the partials until one value remains) and the grid slicing that keeps
//    every launch within gridDim.x <= 2^31 - 1 for any n;
//  * the double-double accumulator DD (TwoSum) used by the accurate rung for doubles;
//  * merge / warp_sum / block_sum over any accumulator type, in a fixed order (reproducible);
//  * the 128-bit vector view of rungs 7-8 (scalar head up to 16-byte alignment, vectors, scalar
//    tail) and the final pass that combines per-block partials into *out.
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "reduce/reduce_rung.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace rungs::detail {

__host__ __device__ constexpr int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------------------------
// Types and the dispatch.

// The plain accumulator of input type T, which is also how the output is written:
// int32 and int64 -> uint64 (same bits as the int64 result; int32 values are sign-extended by
// static_cast, which is modulo 2^64), float -> float, double -> double.
template <typename T> struct PlainOf { using type = T; };
template <> struct PlainOf<int32_t> { using type = uint64_t; };
template <> struct PlainOf<int64_t> { using type = uint64_t; };
template <typename T> using plain_t = typename PlainOf<T>::type;

// The element type behind a pointer (for the generic lambdas of the rungs).
template <typename P> using elem_t = std::remove_cv_t<std::remove_pointer_t<P>>;

// Calls f(const T* in, plain_t<T>* out) with the typed pointers of a: T is int32_t, int64_t,
// float or double. The int64_t output is written through uint64_t* (signed/unsigned variants of
// one type may alias).
template <typename F>
void dispatch_sum(const reduce::Args& a, F&& f) {
  switch (a.dtype) {
    case DType::i32: f(static_cast<const int32_t*>(a.in), static_cast<uint64_t*>(a.out)); return;
    case DType::i64: f(static_cast<const int64_t*>(a.in), static_cast<uint64_t*>(a.out)); return;
    case DType::f32: f(static_cast<const float*>(a.in), static_cast<float*>(a.out)); return;
    case DType::f64: f(static_cast<const double*>(a.in), static_cast<double*>(a.out)); return;
  }
  throw Error("rungs::reduce_sum: unknown dtype");
}

// ---------------------------------------------------------------------------------------------
// Accumulators: plain arithmetic types and the double-double DD.

// A double-double value s + c: s is the plain (recursive, tree-ordered) sum of everything merged
// in, c the sum of the exact rounding errors of those additions (each found by TwoSum). Trivial
// (no constructors) so that it can live in __shared__ arrays.
struct DD {
  double s, c;
};

// TwoSum (Knuth): s + e == a + b exactly, s = fl(a + b), for any finite a, b (no ordering needed,
// unlike Fast2Sum). With an infinite or NaN operand e is NaN; finish() then drops c. No
// multiplications, so FMA contraction cannot touch it; nvcc does not reassociate adds.
__device__ __forceinline__ void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

template <typename Acc>
__device__ __forceinline__ Acc acc_zero() {
  if constexpr (std::is_same_v<Acc, DD>) {
    return DD{0.0, 0.0};
  } else {
    return Acc(0);
  }
}

// One input element as an accumulator (int32 -> uint64 sign-extends modulo 2^64).
template <typename Acc, typename T>
__device__ __forceinline__ Acc acc_from(T x) {
  if constexpr (std::is_same_v<Acc, DD>) {
    return DD{static_cast<double>(x), 0.0};
  } else {
    return static_cast<Acc>(x);
  }
}

// a + b for every accumulator (uint64 wraps; floats round once).
template <typename Acc>
__device__ __forceinline__ Acc merge(Acc a, Acc b) {
  return a + b;
}
// DD + DD: the high parts by TwoSum (their sum stays the plain sum), the error terms plainly.
__device__ __forceinline__ DD merge(DD a, DD b) {
  double s, e;
  two_sum(a.s, b.s, s, e);
  return DD{s, (a.c + b.c) + e};
}

// The accumulator as the output type. DD: s + c when s is finite; otherwise s alone, which is the
// plain IEEE sum's answer (NaN for any NaN or for +Inf with -Inf, +-Inf otherwise) while c holds
// the NaN of a TwoSum with an infinite operand. double -> float rounds once (the accurate f32 sum).
template <typename Out, typename Acc>
__device__ __forceinline__ Out finish(Acc a) {
  if constexpr (std::is_same_v<Acc, DD>) {
    static_assert(std::is_same_v<Out, double>, "a double-double finishes as a double");
    return isfinite(a.s) ? a.s + a.c : a.s;
  } else {
    return static_cast<Out>(a);
  }
}

// Loads that bypass L1 (ld.global.cg): for partials written by other blocks of the same kernel.
template <typename Acc>
__device__ __forceinline__ Acc load_l2(const Acc* p) {
  return __ldcg(p);
}
__device__ __forceinline__ DD load_l2(const DD* p) { return DD{__ldcg(&p->s), __ldcg(&p->c)}; }

// ---------------------------------------------------------------------------------------------
// Warp and block sums (fixed order: a shfl_down tree, so results are bitwise reproducible).

constexpr unsigned kFullMask = 0xffffffffu;

template <typename V>
__device__ __forceinline__ V shfl_down(V v, int delta) {
  return __shfl_down_sync(kFullMask, v, delta);  // int, uint64 (unsigned long), float, double
}
__device__ __forceinline__ DD shfl_down(DD v, int delta) {
  return DD{__shfl_down_sync(kFullMask, v.s, delta), __shfl_down_sync(kFullMask, v.c, delta)};
}

// The sum of v over the 32 lanes of a full warp, in lane 0 (other lanes: partial sums).
template <typename Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
#pragma unroll
  for (int delta = 16; delta > 0; delta >>= 1) v = merge(v, shfl_down(v, delta));
  return v;
}

// The sum of v over the NT threads of the block, valid in thread 0. warp_part: NT/32 slots of
// shared memory. All threads must call it (it has a __syncthreads). It ends without a barrier:
// __syncthreads() before warp_part is written again.
template <int NT, typename Acc>
__device__ __forceinline__ Acc block_sum(Acc v, Acc* warp_part) {
  static_assert(NT % 32 == 0 && NT >= 32 && NT <= 1024, "whole warps");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < NT / 32 ? warp_part[lane] : acc_zero<Acc>();
    v = warp_sum(v);
  }
  return v;
}

// The sum of partials[0, count) by one block of NT threads, in thread 0, in a fixed order: thread
// t merges t, t + NT, ... then block_sum. Reads through L2 (the partials may come from other
// blocks of the running kernel). Same barrier rules as block_sum.
template <int NT, typename Acc>
__device__ __forceinline__ Acc combine_partials(const Acc* partials, int count, Acc* warp_part) {
  Acc v = acc_zero<Acc>();
  for (int i = threadIdx.x; i < count; i += NT) v = merge(v, load_l2(partials + i));
  return block_sum<NT>(v, warp_part);
}

// The final pass (rung 7): one block of NT threads sums the per-block partials into *out.
template <int NT, typename Acc, typename Out>
__global__ void __launch_bounds__(NT) final_pass_kernel(const Acc* __restrict__ partials, int count,
                                                        Out* __restrict__ out) {
  __shared__ Acc warp_part[NT / 32];
  const Acc v = combine_partials<NT>(partials, count, warp_part);
  if (threadIdx.x == 0) *out = finish<Out>(v);
}

// ---------------------------------------------------------------------------------------------
// Rungs 1-6: the article's shape. One block reduces one chunk of per_block(count) elements to one
// partial; launch after launch over the partials until one value remains.

// Launches covering `blocks` thread blocks, at most 2^31 - 1 per launch (the gridDim.x limit):
// f(grid, first_block) per slice; kernels index their chunk as first_block + blockIdx.x (int64).
template <typename F>
void for_each_grid_slice(int64_t blocks, F&& f) {
  constexpr int64_t kMaxGrid = INT_MAX;
  for (int64_t b0 = 0; b0 < blocks; b0 += kMaxGrid) f(static_cast<unsigned>(std::min(kMaxGrid, blocks - b0)), b0);
}

// Reduces in[0, n) into *out with a kernel that turns each chunk into one partial.
//   per_block(count) -> int64_t: elements per block for a pass over count elements (>= 2).
//   launch(src, count, dst, grid, chunk0): launches the kernel for chunks chunk0 .. chunk0 + grid - 1
//     of src[0, count) (src is const T* in the first pass, const Acc* after), partial c -> dst[c].
// Passes: n -> p1 -> p2 -> ... -> 1, the last one writing out. Partials ping-pong between two
// Scratch buffers of p1 and p2 slots (pass k >= 3 writes p_k <= p_{k-2} slots over pass k-2's).
template <typename Acc, typename T, typename PerBlock, typename Launch>
void multi_pass(const T* in, int64_t n, Acc* out, cudaStream_t stream, PerBlock&& per_block, Launch&& launch) {
  auto pass = [&](auto src, int64_t count, Acc* dst) {
    for_each_grid_slice(div_up(count, per_block(count)),
                        [&](unsigned grid, int64_t chunk0) { launch(src, count, dst, grid, chunk0); });
  };
  const int64_t p1 = div_up(n, per_block(n));
  if (p1 == 1) {
    pass(in, n, out);
    return;
  }
  const int64_t p2 = div_up(p1, per_block(p1));
  Scratch tmp(static_cast<size_t>(p1 + p2) * sizeof(Acc), stream);
  Acc* buf[2] = {tmp.as<Acc>(), tmp.as<Acc>() + p1};
  pass(in, n, buf[0]);
  int64_t count = p1;
  int cur = 0;
  for (;;) {
    const int64_t next = div_up(count, per_block(count));
    Acc* dst = next == 1 ? out : buf[cur ^ 1];
    pass(static_cast<const Acc*>(buf[cur]), count, dst);
    if (next == 1) return;
    cur ^= 1;
    count = next;
  }
}

// ---------------------------------------------------------------------------------------------
// Rungs 7-8: 128-bit loads.

// The 16-byte vector of T: 4 int32, 2 int64, 4 float, 2 double, and its lanes as T.
template <typename T> struct Vec;
template <> struct Vec<int32_t> { using type = int4; static constexpr int N = 4; };
template <> struct Vec<int64_t> { using type = longlong2; static constexpr int N = 2; };
template <> struct Vec<float> { using type = float4; static constexpr int N = 4; };
template <> struct Vec<double> { using type = double2; static constexpr int N = 2; };

__device__ __forceinline__ void unpack(const int4& v, int32_t (&x)[4]) {
  x[0] = v.x; x[1] = v.y; x[2] = v.z; x[3] = v.w;
}
__device__ __forceinline__ void unpack(const longlong2& v, int64_t (&x)[2]) {
  x[0] = v.x; x[1] = v.y;
}
__device__ __forceinline__ void unpack(const float4& v, float (&x)[4]) {
  x[0] = v.x; x[1] = v.y; x[2] = v.z; x[3] = v.w;
}
__device__ __forceinline__ void unpack(const double2& v, double (&x)[2]) {
  x[0] = v.x; x[1] = v.y;
}

// Merges a[0, K) pairwise (a tree of depth ceil(log2 K)) into a[0] and returns it.
template <int K, typename Acc>
__device__ __forceinline__ Acc merge_tree(Acc (&a)[K]) {
#pragma unroll
  for (int w = 1; w < K; w *= 2) {
#pragma unroll
    for (int i = 0; i + w < K; i += 2 * w) a[i] = merge(a[i], a[i + w]);
  }
  return a[0];
}

// The lanes of one vector as an accumulator, merged pairwise.
template <typename Acc, typename T>
__device__ __forceinline__ Acc vec_to_acc(const typename Vec<T>::type& v) {
  T x[Vec<T>::N];
  unpack(v, x);
  Acc a[Vec<T>::N];
#pragma unroll
  for (int i = 0; i < Vec<T>::N; ++i) a[i] = acc_from<Acc>(x[i]);
  return merge_tree(a);
}

// in[0, n) as in[0, head) scalar (up to the first 16-byte boundary, < N elements), nvec vectors
// from in + head (16-byte aligned), then in[head + nvec * N, n) scalar (tail < N elements).
// Assumes `in` is aligned to sizeof(T) (any T* that may be dereferenced is).
struct VecSplit {
  int64_t head, nvec, tail;
};
template <typename T>
VecSplit vec_split(const T* in, int64_t n) {
  constexpr int N = Vec<T>::N;
  const auto mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(in) % 16);
  const int64_t head = std::min<int64_t>(n, mis == 0 ? 0 : (16 - mis) / static_cast<int64_t>(sizeof(T)));
  const int64_t nvec = (n - head) / N;
  return VecSplit{head, nvec, n - head - nvec * N};
}

}  // namespace rungs::detail
