// Operand packing for the TMA rungs (gemm/pack.hpp).
#include "gemm/pack.hpp"

#include "detail/check.hpp"
#include "detail/gemm_tc.cuh"
#include "detail/gemm_tile.cuh"

#include <algorithm>

namespace rungs::sgemm::pack {

namespace {

// x, or (round, float only) x rounded to tf32.
template <typename T>
__device__ __forceinline__ T maybe_tf32(T x, bool round) {
  if constexpr (std::is_same_v<T, float>) return round ? detail::to_tf32(x) : x;
  else return x;
}

// One thread per 16 bytes of a destination row: V scalar loads (a warp's loads are contiguous,
// whatever the source alignment), one 16-byte store. Rows walk grid.y with a stride.
template <typename T>
__global__ void copy_rows_kernel(const T* __restrict__ src, int64_t ld_src, int64_t rows, int64_t cols,
                                 T* __restrict__ dst, int64_t ld_dst, bool round) {
  constexpr int V = 16 / int(sizeof(T));
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (c0 >= cols) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* s = src + r * ld_src + c0;
    T* d = dst + r * ld_dst + c0;
    if (c0 + V <= cols) {
      union {
        uint4 u;
        T e[V];
      } v;
#pragma unroll
      for (int i = 0; i < V; ++i) v.e[i] = maybe_tf32(s[i], round);
      *reinterpret_cast<uint4*>(d) = v.u;
    } else {
      for (int64_t i = 0; c0 + i < cols; ++i) d[i] = maybe_tf32(s[i], round);
    }
  }
}

// 32 x 32 tiles through shared memory (one padding column: no bank conflicts).
template <typename T>
__global__ void copy_transposed_kernel(const T* __restrict__ src, int64_t ld_src, int64_t rows, int64_t cols,
                                       T* __restrict__ dst, int64_t ld_dst, bool round) {
  __shared__ T tile[32][33];
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32, c0 = static_cast<int64_t>(blockIdx.x) * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = maybe_tf32(src[r * ld_src + c], round);
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;  // dst row c, column r
    if (r < rows && c < cols) dst[c * ld_dst + r] = tile[threadIdx.x][i];
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
               cudaStream_t stream, bool round_tf32) {
  if (rows == 0 || cols == 0) return;
  constexpr int V = 16 / int(sizeof(T)), THREADS = 256;
  const int64_t bx = (cols + int64_t(V) * THREADS - 1) / (int64_t(V) * THREADS);
  if (bx > INT32_MAX) throw Unsupported("rungs: operand rows too long to pack (" + std::to_string(cols) + ")");
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
  copy_rows_kernel<T><<<grid, THREADS, 0, stream>>>(src, ld_src, rows, cols, dst, ld_dst, round_tf32);
  detail::check_launch("pack");
}

template <typename T>
void copy_transposed(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst,
                     cudaStream_t stream, bool round_tf32) {
  if (rows == 0 || cols == 0) return;
  const int64_t bx = (cols + 31) / 32, by = (rows + 31) / 32;
  if (bx > INT32_MAX || by > 65535)
    throw Unsupported("rungs: operand too large to transpose-pack (" + std::to_string(rows) + " x " +
                      std::to_string(cols) + ")");
  copy_transposed_kernel<T><<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), dim3(32, 8), 0, stream>>>(
      src, ld_src, rows, cols, dst, ld_dst, round_tf32);
  detail::check_launch("pack");
}

namespace {

// One operand stored rows x cols with stride ld: replaced by a copy in `keep` with an aligned
// stride, transposed (to cols x rows) when `transpose`, copied as is when `copy`, else left alone.
template <typename T>
void prepare(const T*& p, int64_t& ld, int64_t rows, int64_t cols, bool transpose, bool copy, bool round,
             std::unique_ptr<detail::Scratch>& keep, cudaStream_t stream) {
  if (!transpose && !copy) return;
  constexpr int E = int(sizeof(T));
  const int64_t out_rows = transpose ? cols : rows, out_ld = aligned_ld(transpose ? rows : cols, E);
  keep = std::make_unique<detail::Scratch>(size_t(out_rows) * out_ld * E, stream);
  if (transpose) copy_transposed(p, ld, rows, cols, keep->as<T>(), out_ld, stream, round);
  else copy_rows(p, ld, rows, cols, keep->as<T>(), out_ld, stream, round);
  p = keep->as<T>(), ld = out_ld;
}

}  // namespace

template <typename T>
ArgsT<T> operands(ArgsT<T> a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b) {
  constexpr int E = int(sizeof(T));
  constexpr bool tf32 = std::is_same_v<T, float>;  // copied always: k-contiguous and rounded
  const bool at = a.ta == Trans::T, bt = a.tb == Trans::T;
  // A stored m x k (N) or k x m (T); B stored k x n (N) or n x k (T).
  prepare(a.A, a.lda, at ? a.k : a.m, at ? a.m : a.k, tf32 && at, tf32 || !tma_ok(a.A, a.lda, E), tf32, keep_a,
          a.stream);
  prepare(a.B, a.ldb, bt ? a.n : a.k, bt ? a.k : a.n, tf32 && !bt, tf32 || !tma_ok(a.B, a.ldb, E), tf32, keep_b,
          a.stream);
  if (tf32) a.ta = Trans::N, a.tb = Trans::T;
  return a;
}

#define RUNGS_PACK(T)                                                                                     \
  template void copy_rows<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t, cudaStream_t, bool);       \
  template void copy_transposed<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t, cudaStream_t, bool); \
  template ArgsT<T> operands<T>(ArgsT<T>, std::unique_ptr<detail::Scratch>&, std::unique_ptr<detail::Scratch>&);
RUNGS_PACK(float)
RUNGS_PACK(__half)
RUNGS_PACK(__nv_bfloat16)
#undef RUNGS_PACK

}  // namespace rungs::sgemm::pack
