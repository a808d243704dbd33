// Rung 6, multi_row: block shapes sized from the problem, several rows per warp when rows are
// short, several 128-bit loads in flight per thread, and a T layout that fills the GPU.
// Trans::N: a row belongs to a group of G lanes (G = 4, 8, 16 or 32 from kRowShapes by n), so a
// warp runs 32 / G rows at once: n = 64 (16 float4) is 4 lanes x 4 float4, 8 rows per warp, no idle
// lane. Each lane issues U (4 to 16) float4 loads of A, and of x, before the first FMA (a register
// cap through __launch_bounds__ makes ptxas keep them together); group shuffle sum. Fast path: A
// 16-byte aligned and lda % 4 == 0; x is read as float4 when it is aligned with incx == 1 and as 4
// scalars otherwise. Anything else: 32-bit loads, U in flight, same layout.
// Trans::T: a block owns a strip of 4L columns (L lanes x 4 columns, L = 8, 16 or 32): a warp covers
// 32 / L rows x 4L columns per step (every row segment is >= 128 contiguous bytes), the block's W
// warps split the rows (W from m: about kRowsPerThread rows per thread, up to 32 warps), 8 rows in
// flight per thread, partials reduced by shuffles inside the warp and in warp order through shared
// memory. (L, block size) is the first pair whose grid is one wave (n = 4096: 128 blocks of 1024
// threads instead of rung 5's 32 blocks; 32768^2: 128-column strips in 512-thread blocks), because a
// grid of just over one wave ends with a few blocks running alone (+7% at 32768^2). Fast path: A
// aligned, lda % 4 == 0; misaligned A and the last, partial group of 4 columns take guarded 32-bit
// loads.
// Bounded by: bytes over DRAM bandwidth when out_len is large. H100, clean L2, median us (cuBLAS):
// N 4096^2 25.5 (29.6), 8192^2 90.2 (113), 32768^2 1383 (1407, 3.1 TB/s); T 4096^2 26.4 (26.8),
// 8192^2 90.3 (93.9); N 2^20 x 64 93.8 (147, 2.9 TB/s); T 64 x 2^20 93.0 (103). At 4096^2 (64 MiB)
// launch, ramp-up and the last loads are a sizable part of the 26 us. With few outputs (N with m in the
// hundreds, T with n up to a few thousand) there are too few rows or strips for 132 SMs: rung 7 splits
// the dot products.
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "core/scratch.hpp"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::multi_row {

namespace {

namespace g = detail::gemv;

// --- The tuning tables (tuned on an H100, docs/bench/h100.md). ---
// Trans::N: the first row whose max_n >= n is used.
struct RowShape {
  int64_t max_n;
  int group;       // lanes per row (power of two, 4..32)
  int unroll;      // float4 loads of A (and of x) in flight per lane
  int threads;     // per block (multiple of 32, <= kRowThreads)
  int min_blocks;  // __launch_bounds__ minimum resident blocks: caps registers at 64K / (threads * this).
                   // Without it ptxas keeps registers low by issuing each load just before its FMA
                   // (3 or 4 in flight whatever U is); with a cap it hoists all U loads of a batch.
};
constexpr int kRowThreads = 256;
constexpr RowShape kRowShapes[] = {
    {64, 4, 4, 256, 4},          // <= 16 float4 per row: 4 lanes x 4 float4, 64 rows per block
    {256, 8, 8, 256, 4},         // <= 64 float4: 8 lanes, <= 8 float4 each
    {1024, 16, 8, 256, 4},       // <= 256 float4: 16 lanes
    {INT64_MAX, 32, 16, 256, 2}, // long rows: a warp per row, 16 x 512 bytes of A in flight per warp
};

// Trans::T: the strip is 4L columns; the block has W warps (W from m, capped). The grid should be one
// wave (blocks <= SMs x resident blocks per SM, asked from the occupancy API): a grid of just over one
// wave ends with a few blocks running alone, a tail as long as a whole block. Narrow strips give more
// blocks, smaller blocks more of them resident.
constexpr int kColLanes[] = {8, 16, 32};
constexpr int kColUnroll = 8;           // rows in flight per thread
constexpr int64_t kRowsPerThread = 16;  // W = ceil(m / (rows per warp step * this)) warps, <= 32
constexpr int kColThreads = 1024;                   // the kernel's launch bound
constexpr int kColThreadCaps[] = {1024, 512, 256};  // block sizes tried, largest first

// --- Trans::N ---
template <int G, int U, int MIN_BLOCKS, bool VEC, bool VX>
__global__ void __launch_bounds__(kRowThreads, MIN_BLOCKS)
    rows_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  constexpr int kRowsPerWarp = 32 / G;
  const int lane = threadIdx.x % 32, gl = lane % G;
  const int64_t rows_per_block = static_cast<int64_t>(blockDim.x / 32) * kRowsPerWarp;
  const int64_t r = blockIdx.x * rows_per_block + (threadIdx.x / 32) * kRowsPerWarp + lane / G;
  float acc = 0.0f;
  if (r < m) {
    const float* a = A + r * lda;
    if constexpr (VEC) {
      const int64_t n4 = n / 4;
      acc = g::row_dot_vec<G, U, VX>(a, x, incx, 0, n4, gl);
      const int64_t j = 4 * n4 + gl;  // the last n % 4 < G elements
      if (j < n) acc = fmaf(a[j], x[j * incx], acc);
    } else {
      acc = g::row_dot_scalar<G, U>(a, x, incx, 0, n, gl);
    }
  }
  acc = g::group_sum<G>(acc);  // every lane gets here (rows past m carry 0)
  if (r < m && gl == 0) g::store_y(y, r, incy, acc, alpha, beta);
}

// --- Trans::T ---
template <int L, int U, bool VEC>
__global__ void __launch_bounds__(kColThreads)
    cols_kernel(int64_t m, int64_t n, float alpha, const float* __restrict__ A, int64_t lda,
                const float* __restrict__ x, int64_t incx, float beta, float* __restrict__ y, int64_t incy) {
  extern __shared__ float4 part4[];  // [warps][L]: each warp's column sums
  constexpr int kRowLanes = 32 / L;  // rows per warp step
  const int warps = blockDim.x / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int cl = lane % L;
  const int64_t c0 = blockIdx.x * static_cast<int64_t>(4 * L);
  const int64_t col = c0 + 4 * cl;
  const int64_t i0 = warp * kRowLanes + lane / L, step = static_cast<int64_t>(warps) * kRowLanes;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (col < n) {
    const int64_t left = n - col;
    if (VEC && left >= 4)
      acc = g::col_dot_vec<U>(A, lda, col, i0, m, step, x, incx);
    else  // misaligned A, or the last group of a ragged n
      acc = g::col_dot_scalar<VEC ? U / 2 : U>(A, lda, col, left < 4 ? static_cast<int>(left) : 4, i0, m, step, x,
                                               incx);
  }
  acc = g::sum_across_rows<L>(acc);
  if (lane < L) part4[warp * L + cl] = acc;
  __syncthreads();
  // The strip's 4L columns; a block of one or two warps (small m) has fewer than 4L threads.
  const float* part = reinterpret_cast<const float*>(part4);
  for (int t = threadIdx.x; t < 4 * L && c0 + t < n; t += blockDim.x) {
    float s = 0.0f;
    for (int w = 0; w < warps; ++w) s += part[w * 4 * L + t];  // fixed order: deterministic
    g::store_y(y, c0 + t, incy, s, alpha, beta);
  }
}

template <int I>
void launch_rows(const Args& a, int shape, bool vec, bool vx) {
  constexpr int kShapes = sizeof(kRowShapes) / sizeof(kRowShapes[0]);
  if constexpr (I < kShapes) {
    if (shape != I) return launch_rows<I + 1>(a, shape, vec, vx);
    constexpr RowShape s = kRowShapes[I];
    static_assert(s.threads % 32 == 0 && s.threads <= kRowThreads, "whole warps, within the launch bound");
    const int64_t rows_per_block = (s.threads / 32) * (32 / s.group);
    const unsigned blocks = static_cast<unsigned>(g::ceil_div(a.m, rows_per_block));  // <= 2^31 - 1
    constexpr int kUx = s.unroll < 4 ? s.unroll : 4;  // x as 4 scalars per float4: half the batch fits
    auto k = vec ? (vx ? rows_kernel<s.group, s.unroll, s.min_blocks, true, true>
                       : rows_kernel<s.group, kUx, s.min_blocks, true, false>)
                 : rows_kernel<s.group, s.unroll, s.min_blocks, false, false>;
    k<<<blocks, s.threads, 0, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta, a.y, a.incy);
  }
}

// Trans::T: launches cols_kernel<kColLanes[I]> (I = lanes_index), or, with dry_run, only returns how
// many of its blocks of `warps` warps are resident per SM.
template <int I>
int launch_cols(const Args& a, int lanes_index, int warps, bool vec, bool dry_run) {
  constexpr int kChoices = sizeof(kColLanes) / sizeof(kColLanes[0]);
  if constexpr (I < kChoices) {
    if (lanes_index != I) return launch_cols<I + 1>(a, lanes_index, warps, vec, dry_run);
    constexpr int L = kColLanes[I];
    static_assert(L >= 1 && L <= 32 && (L & (L - 1)) == 0, "L: a power of two up to 32");
    const size_t smem = static_cast<size_t>(warps) * L * sizeof(float4);
    auto k = vec ? cols_kernel<L, kColUnroll, true> : cols_kernel<L, kColUnroll, false>;
    if (dry_run) {
      int per_sm = 0;
      const detail::RelaxedCaptureMode relaxed;  // a call may come while its stream is captured
      RUNGS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, warps * 32, smem));
      return per_sm;
    }
    const unsigned blocks = static_cast<unsigned>(g::ceil_div(a.n, 4 * L));  // <= 2^29
    k<<<blocks, warps * 32, smem, a.stream>>>(a.m, a.n, a.alpha, a.A, a.lda, a.x, a.incx, a.beta, a.y, a.incy);
  }
  return 0;
}

int pick_row_shape(int64_t n) {
  constexpr int kShapes = sizeof(kRowShapes) / sizeof(kRowShapes[0]);
  for (int i = 0; i < kShapes; ++i)
    if (n <= kRowShapes[i].max_n) return i;
  return kShapes - 1;
}

}  // namespace

void run(const Args& a) {
  const bool vec = g::vec_a(a.A, a.lda);
  if (a.trans == Trans::N) {
    launch_rows<0>(a, pick_row_shape(a.n), vec, g::vec_x(a.x, a.incx));
  } else {
    // The first (block size cap, L) in kColThreadCaps x kColLanes order whose grid is one wave; if none
    // is, the widest strips in the largest blocks (many waves: the last one matters less).
    const int64_t sms = detail::sm_count();
    constexpr int kChoices = sizeof(kColLanes) / sizeof(kColLanes[0]);
    int pick = kChoices - 1, warps = 0;
    bool found = false;
    for (int cap : kColThreadCaps) {
      for (int i = 0; i < kChoices && !found; ++i) {
        const int64_t w = g::ceil_div(a.m, (32 / kColLanes[i]) * kRowsPerThread);
        const int wi = static_cast<int>(w < cap / 32 ? w : cap / 32);
        const int64_t per_sm = launch_cols<0>(a, i, wi, vec, true);
        if (g::ceil_div(a.n, 4 * kColLanes[i]) <= sms * per_sm) pick = i, warps = wi, found = true;
      }
      if (found) break;
    }
    if (!found) {
      const int64_t w = g::ceil_div(a.m, (32 / kColLanes[pick]) * kRowsPerThread);
      warps = static_cast<int>(w < kColThreadCaps[0] / 32 ? w : kColThreadCaps[0] / 32);
    }
    launch_cols<0>(a, pick, warps, vec, false);
  }
  RUNGS_LAUNCHED();
}

}  // namespace rungs::sgemv::multi_row
