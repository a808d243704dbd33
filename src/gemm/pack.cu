// Operand packing for the TMA rungs (gemm/pack.hpp).
#include "gemm/pack.hpp"

#include "core/errors.hpp"
#include "detail/gemm_tc.cuh"
#include "detail/gemm_tile.cuh"

#include <algorithm>

namespace rungs::sgemm::pack {

namespace {

// The value stored for x: x itself, or (lo != nullptr, float only) the 3xTF32 split: hi = tf32(x)
// goes to dst, lo = tf32(x - hi) to the same place in lo.
template <typename T>
__device__ __forceinline__ T maybe_tf32(T x, bool round) {
  if constexpr (std::is_same_v<T, float>) return round ? detail::to_tf32(x) : x;
  else return x;
}
template <typename T>
__device__ __forceinline__ T lo_part(T x, T hi) {
  if constexpr (std::is_same_v<T, float>) return detail::to_tf32(x - hi);
  else return T{};
}

// One thread per 16 bytes of a destination row: V scalar loads (a warp's loads are contiguous,
// whatever the source alignment), one 16-byte store (two when splitting). Rows walk grid.y with
// a stride.
template <typename T>
__global__ void copy_rows_kernel(const T* __restrict__ src, int64_t ld_src, int64_t rows, int64_t cols,
                                 T* __restrict__ dst, int64_t ld_dst, T* __restrict__ lo) {
  constexpr int V = 16 / int(sizeof(T));
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (c0 >= cols) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* s = src + r * ld_src + c0;
    const int64_t o = r * ld_dst + c0;
    if (c0 + V <= cols) {
      union {
        uint4 u;
        T e[V];
      } v, w;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const T x = s[i];
        v.e[i] = maybe_tf32(x, lo != nullptr);
        w.e[i] = lo_part(x, v.e[i]);
      }
      *reinterpret_cast<uint4*>(dst + o) = v.u;
      if (lo) *reinterpret_cast<uint4*>(lo + o) = w.u;
    } else {
      for (int64_t i = 0; c0 + i < cols; ++i) {
        const T x = s[i], hi = maybe_tf32(x, lo != nullptr);
        dst[o + i] = hi;
        if (lo) lo[o + i] = lo_part(x, hi);
      }
    }
  }
}

// 32 x 32 tiles through shared memory (one padding column: no bank conflicts).
template <typename T>
__global__ void copy_transposed_kernel(const T* __restrict__ src, int64_t ld_src, int64_t rows, int64_t cols,
                                       T* __restrict__ dst, int64_t ld_dst, T* __restrict__ lo) {
  __shared__ T tile[32][33];
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32, c0 = static_cast<int64_t>(blockIdx.x) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * ld_src + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;  // dst row c, column r
    if (r < rows && c < cols) {
      const T x = tile[threadIdx.x][i], hi = maybe_tf32(x, lo != nullptr);
      dst[c * ld_dst + r] = hi;
      if (lo) lo[c * ld_dst + r] = lo_part(x, hi);
    }
  }
}

}  // namespace

int64_t aligned_ld(int64_t cols, int elem) {
  const int64_t per = 16 / elem;
  return std::max<int64_t>(per, (cols + per - 1) / per * per);
}

bool tma_ok(const void* p, int64_t ld, int elem) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * elem) % 16 == 0;
}

template <typename T>
void copy_rows(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst,
               cudaStream_t stream, T* lo) {
  if (rows == 0 || cols == 0) return;
  constexpr int V = 16 / int(sizeof(T)), THREADS = 256;
  const int64_t bx = (cols + int64_t(V) * THREADS - 1) / (int64_t(V) * THREADS);
  if (bx > INT32_MAX) throw Unsupported("rungs: operand rows too long to pack (" + std::to_string(cols) + ")");
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
  copy_rows_kernel<T><<<grid, THREADS, 0, stream>>>(src, ld_src, rows, cols, dst, ld_dst, lo);
  detail::check_launch("pack");
}

template <typename T>
void copy_transposed(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst,
                     cudaStream_t stream, T* lo) {
  if (rows == 0 || cols == 0) return;
  const int64_t bx = (cols + 31) / 32, by = (rows + 31) / 32;
  if (bx > INT32_MAX || by > 65535)
    throw Unsupported("rungs: operand too large to transpose-pack (" + std::to_string(rows) + " x " +
                      std::to_string(cols) + ")");
  copy_transposed_kernel<T><<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), dim3(32, 8), 0, stream>>>(
      src, ld_src, rows, cols, dst, ld_dst, lo);
  detail::check_launch("pack");
}

namespace {

// One operand stored rows x cols with stride ld: replaced by a copy in `keep` with an aligned
// stride, transposed (to cols x rows) when `transpose`, copied as is when `copy`, else left alone.
template <typename T>
void prepare(const T*& p, int64_t& ld, int64_t rows, int64_t cols, bool transpose, bool copy,
             std::unique_ptr<detail::Scratch>& keep, cudaStream_t stream) {
  if (!transpose && !copy) return;
  constexpr int E = int(sizeof(T));
  const int64_t out_rows = transpose ? cols : rows, out_ld = aligned_ld(transpose ? rows : cols, E);
  keep = std::make_unique<detail::Scratch>(size_t(out_rows) * out_ld * E, stream);
  if (transpose) copy_transposed(p, ld, rows, cols, keep->as<T>(), out_ld, stream);
  else copy_rows(p, ld, rows, cols, keep->as<T>(), out_ld, stream);
  p = keep->as<T>(), ld = out_ld;
}

}  // namespace

template <typename T>
ArgsT<T> operands(ArgsT<T> a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b,
                  bool one_mn) {
  constexpr int E = int(sizeof(T));
  constexpr bool tf32 = std::is_same_v<T, float>;
  const bool at = a.ta == Trans::T, bt = a.tb == Trans::T;
  // tf32: which operands are made k-contiguous (transposed), see the header.
  const bool move_a = tf32 && at && (!one_mn || !bt), move_b = tf32 && !bt && !one_mn;
  // A stored m x k (N) or k x m (T); B stored k x n (N) or n x k (T).
  prepare(a.A, a.lda, at ? a.k : a.m, at ? a.m : a.k, move_a, !tma_ok(a.A, a.lda, E), keep_a, a.stream);
  prepare(a.B, a.ldb, bt ? a.n : a.k, bt ? a.k : a.n, move_b, !tma_ok(a.B, a.ldb, E), keep_b, a.stream);
  if (move_a) a.ta = Trans::N;
  if (move_b) a.tb = Trans::T;
  return a;
}

ArgsF8 operands_fp8(ArgsF8 a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b) {
  const bool at = a.ta == Trans::T, bt = a.tb == Trans::T;
  const uint8_t* pa = static_cast<const uint8_t*>(a.A);
  const uint8_t* pb = static_cast<const uint8_t*>(a.B);
  // A stored m x k (N) or k x m (T): transposed when T. B stored k x n (N) or n x k (T): transposed when N.
  prepare(pa, a.lda, at ? a.k : a.m, at ? a.m : a.k, at, !tma_ok(pa, a.lda, 1), keep_a, a.stream);
  prepare(pb, a.ldb, bt ? a.n : a.k, bt ? a.k : a.n, !bt, !tma_ok(pb, a.ldb, 1), keep_b, a.stream);
  a.A = pa, a.B = pb, a.ta = Trans::N, a.tb = Trans::T;
  return a;
}

Split3 split_operands(const Args& a, std::unique_ptr<detail::Scratch>& keep_a,
                      std::unique_ptr<detail::Scratch>& keep_b, bool a_raw) {
  constexpr int E = 4;
  Split3 out;
  out.lda = aligned_ld(a.k, E), out.ldb = aligned_ld(a.k, E);
  const size_t a_part = size_t(a.m) * out.lda, b_part = size_t(a.n) * out.ldb;
  if (a_raw) {
    const bool at = a.ta == Trans::T;
    out.A_hi = a.A, out.lda = a.lda, out.a_mn = at;
    prepare(out.A_hi, out.lda, at ? a.k : a.m, at ? a.m : a.k, false, !tma_ok(a.A, a.lda, E), keep_a, a.stream);
  } else {
    keep_a = std::make_unique<detail::Scratch>(2 * a_part * E, a.stream);
    float* ah = keep_a->as<float>();
    out.A_hi = ah, out.A_lo = ah + a_part;
    if (a.ta == Trans::N)  // A stored m x k: rows as they are
      copy_rows(a.A, a.lda, a.m, a.k, ah, out.lda, a.stream, ah + a_part);
    else  // A stored k x m
      copy_transposed(a.A, a.lda, a.k, a.m, ah, out.lda, a.stream, ah + a_part);
  }
  keep_b = std::make_unique<detail::Scratch>(2 * b_part * E, a.stream);
  float* bh = keep_b->as<float>();
  out.B_hi = bh, out.B_lo = bh + b_part;
  if (a.tb == Trans::T)  // B stored n x k
    copy_rows(a.B, a.ldb, a.n, a.k, bh, out.ldb, a.stream, bh + b_part);
  else  // B stored k x n
    copy_transposed(a.B, a.ldb, a.k, a.n, bh, out.ldb, a.stream, bh + b_part);
  return out;
}

template <typename T>
ArgsT<T> operands_a_k(ArgsT<T> a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b) {
  constexpr int E = int(sizeof(T));
  const bool at = a.ta == Trans::T, bt = a.tb == Trans::T;
  prepare(a.A, a.lda, at ? a.k : a.m, at ? a.m : a.k, at, !tma_ok(a.A, a.lda, E), keep_a, a.stream);
  prepare(a.B, a.ldb, bt ? a.n : a.k, bt ? a.k : a.n, false, !tma_ok(a.B, a.ldb, E), keep_b, a.stream);
  a.ta = Trans::N;
  return a;
}

#define RUNGS_PACK(T)                                                                                     \
  template void copy_rows<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t, cudaStream_t, T*);           \
  template void copy_transposed<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t, cudaStream_t, T*);       \
  template ArgsT<T> operands<T>(ArgsT<T>, std::unique_ptr<detail::Scratch>&, std::unique_ptr<detail::Scratch>&, bool);
RUNGS_PACK(float)
RUNGS_PACK(__half)
RUNGS_PACK(__nv_bfloat16)
#undef RUNGS_PACK
template ArgsT<__half> operands_a_k<__half>(ArgsT<__half>, std::unique_ptr<detail::Scratch>&,
                                            std::unique_ptr<detail::Scratch>&);
template ArgsT<__nv_bfloat16> operands_a_k<__nv_bfloat16>(ArgsT<__nv_bfloat16>, std::unique_ptr<detail::Scratch>&,
                                                          std::unique_ptr<detail::Scratch>&);
template void copy_rows<uint8_t>(const uint8_t*, int64_t, int64_t, int64_t, uint8_t*, int64_t, cudaStream_t, uint8_t*);
template void copy_transposed<uint8_t>(const uint8_t*, int64_t, int64_t, int64_t, uint8_t*, int64_t, cudaStream_t,
                                       uint8_t*);

}  // namespace rungs::sgemm::pack
