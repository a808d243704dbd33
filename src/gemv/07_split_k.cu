// Rung 7, split_k: few outputs with long dot products are split over many blocks, partials in scratch,
// then a deterministic second pass.
// With few outputs rung 6 runs out of work: N with m = 64 is 8 blocks, T with n = 64 is 2 strips, on
// 132 SMs. Here each dot product is cut into S slices, as many as one wave of resident blocks holds
// (S = resident units / unsplit units, asked from the occupancy API; more than one wave ends with a
// nearly empty one, which showed as +15% on an H100):
//   Trans::N: a work unit is one warp on one (row, column slice), rung 6's long-row loop (float4 of A
//   and of x, 8 in flight per lane), shuffle sum, lane 0 writes the partial. Units are numbered
//   slice-major, so the 8 warps of a block take 8 rows of the same slice and share its x through L1.
//   Any m works (no warp idles because m is small). Slices are multiples of 4 elements, so float4 stays
//   aligned; the last slice carries the n % 4 tail.
//   Trans::T: a 256-thread block on one (strip of 4L columns, row slice), rung 6's T layout (L = 8, 16 or
//   32 lanes across the strip, the rest of the warp and the 8 warps down the rows, 8 rows in flight per
//   thread), warp shuffles then shared memory in warp order. Blocks are numbered slice-major, so
//   neighbouring blocks read neighbouring strips of the same rows (whole rows when n is small: n = 64
//   is one 64-column strip).
// Partials go to a stream-ordered scratch buffer part[o * S + s]; the second kernel gives each output
// one warp, lane l sums s = l, l + 32, ... in order, a shuffle butterfly adds the lanes, lane 0 applies
// alpha/beta. The result depends on S, which depends only on the shape and the device: same bits
// every run. No atomics. On sm_90 the second kernel is a programmatic dependent launch: it is
// launched while the first runs and waits (griddepcontrol.wait) for its results, which hid 1 to 2 us.
// When rung 6 alone fills the GPU (N: m >= 8 rows per SM; T: 32-column strips for 3/4 of the SMs) or
// the dot products are too short to split, the call is rung 6, unchanged: one launch.
// Bounded by: bytes over DRAM bandwidth plus the second pass (2 to 3 us). H100, clean L2: N 64 x 2^20 in
// 97 us (2.8 TB/s; rung 6 877 us, cuBLAS 99), T 2^20 x 64 in 96 us (2.8 TB/s; rung 6 953 us, cuBLAS 104).
#include "core/errors.hpp"
#include "detail/gemv_kernels.cuh"
#include "core/scratch.hpp"
#include "gemv/gemv_rung.hpp"

namespace rungs::sgemv::split_k {

namespace {

namespace g = detail::gemv;

// Tuned on an H100 (docs/bench/h100.md).
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kUnroll = 8;                  // float4 loads of A in flight per lane (4 when x is strided)
constexpr int kMinBlocksN = 4;              // rows_split_kernel's __launch_bounds__ minimum: <= 64 registers,
                                            // so that ptxas hoists all the loads of a batch (see rung 6)
constexpr int64_t kWaves = 1;               // split into about this many full waves of resident blocks
constexpr int64_t kMinSliceN = 4096;        // Trans::N: elements per slice, at least (16 float4 per lane)
constexpr int64_t kMinRowsPerThreadT = 16;  // Trans::T: rows per slice, at least this many per thread
constexpr bool kDependentLaunch = true;     // sm_90+: launch the second kernel programmatically
// When rung 6 alone fills the GPU, it runs instead (a split then only adds the second pass):
constexpr int64_t kRung6RowsPerSm = 8;      // Trans::N: m >= 8 rows per SM (1056 on an H100)
constexpr int64_t kRung6StripsPerSm4 = 3;   // Trans::T: 32-column strips >= 3/4 of the SMs (n >= 3168)

__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_prerequisite() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// part[r * S + s] = sum over columns [s * slice, min(n, (s + 1) * slice)) of row r.
// Unit u = s * m + r, one per warp.
template <bool VEC, bool VX>
__global__ void __launch_bounds__(kThreads, kMinBlocksN)
    rows_split_kernel(int64_t m, int64_t n, int64_t slice, int S, const float* __restrict__ A, int64_t lda,
                      const float* __restrict__ x, int64_t incx, float* __restrict__ part) {
  allow_dependent_launch();
  const int lane = threadIdx.x % 32;
  const int64_t unit = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
  if (unit >= m * S) return;  // the whole warp leaves together
  const int s = static_cast<int>(unit / m);
  const int64_t r = unit - s * m;
  const int64_t j0 = s * slice;
  const int64_t j1 = j0 + slice < n ? j0 + slice : n;
  const float* a = A + r * lda;
  float acc;
  if constexpr (VEC) {
    const int64_t q0 = j0 / 4, q1 = j1 / 4;  // j0 % 4 == 0; j1 % 4 != 0 only in the last slice
    acc = g::row_dot_vec<32, VX ? kUnroll : kUnroll / 2, VX>(a, x, incx, q0, q1, lane);
    const int64_t j = 4 * q1 + lane;
    if (j < j1) acc = fmaf(a[j], x[j * incx], acc);
  } else {
    acc = g::row_dot_scalar<32, kUnroll>(a, x, incx, j0, j1, lane);
  }
  acc = g::warp_sum(acc);
  if (lane == 0) part[r * S + s] = acc;
}

// part[c * S + s] = sum over rows [s * slice, min(m, (s + 1) * slice)) of column c, for the 4L columns of
// strip b % strips, slice b / strips (block b).
template <int L, bool VEC>
__global__ void __launch_bounds__(kThreads)
    cols_split_kernel(int64_t m, int64_t n, int64_t slice, int S, int64_t strips, const float* __restrict__ A,
                      int64_t lda, const float* __restrict__ x, int64_t incx, float* __restrict__ part) {
  allow_dependent_launch();
  __shared__ __align__(16) float4 part4[kWarps][L];
  constexpr int kRowLanes = 32 / L;  // rows per warp step
  constexpr int64_t kStep = kWarps * kRowLanes;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int cl = lane % L;
  const int s = static_cast<int>(blockIdx.x / strips);
  const int64_t strip = blockIdx.x - s * strips;
  const int64_t c0 = strip * (4 * L), col = c0 + 4 * cl;
  const int64_t r0 = s * slice;
  const int64_t r1 = r0 + slice < m ? r0 + slice : m;
  const int64_t i0 = r0 + warp * kRowLanes + lane / L;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (col < n) {
    const int64_t left = n - col;
    if (VEC && left >= 4)
      acc = g::col_dot_vec<kUnroll>(A, lda, col, i0, r1, kStep, x, incx);
    else
      acc = g::col_dot_scalar<VEC ? kUnroll / 2 : kUnroll>(A, lda, col, left < 4 ? static_cast<int>(left) : 4, i0, r1,
                                                           kStep, x, incx);
  }
  acc = g::sum_across_rows<L>(acc);
  if (lane < L) part4[warp][cl] = acc;
  __syncthreads();
  const int t = threadIdx.x;
  if (t < 4 * L && c0 + t < n) {
    const float* p = reinterpret_cast<const float*>(&part4[0][0]);
    float v = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) v += p[w * 4 * L + t];
    part[(c0 + t) * S + s] = v;
  }
}

// y[o] = alpha * sum_s part[o * S + s] + beta * y[o]: a warp per output, sums in a fixed order.
__global__ void __launch_bounds__(kThreads)
    finish_kernel(int64_t out_len, int S, const float* __restrict__ part, float alpha, float beta,
                  float* __restrict__ y, int64_t incy) {
  wait_for_prerequisite();  // the partials are complete and visible (a no-op without a dependent launch)
  const int lane = threadIdx.x % 32;
  const int64_t o = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
  if (o >= out_len) return;  // the whole warp leaves together
  const float* p = part + o * S;
  float v = 0.0f;
  for (int s = lane; s < S; s += 32) v += p[s];
  v = g::warp_sum(v);
  if (lane == 0) g::store_y(y, o, incy, v, alpha, beta);
}

// Trans::T: lanes across a strip, from n (narrow problems get whole rows in one strip).
int strip_lanes(int64_t n) {
  const int64_t n4 = g::ceil_div(n, 4);
  return n4 <= 8 ? 8 : n4 <= 16 ? 16 : 32;
}

// Blocks of kThreads of Kernel resident on one SM (its registers decide), asked once per kernel.
template <auto Kernel>
int64_t resident_blocks() {
  static const int64_t per_sm = [] {
    int b = 0;
    const detail::RelaxedCaptureMode relaxed;  // the first call may come while its stream is captured
    RUNGS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kThreads, 0));
    return static_cast<int64_t>(b > 0 ? b : 1);
  }();
  return per_sm;
}

template <int L>
void launch_cols(const Args& a, int64_t slice, int S, int64_t strips, bool vec, float* part) {
  const unsigned blocks = static_cast<unsigned>(strips * S);
  auto k = vec ? cols_split_kernel<L, true> : cols_split_kernel<L, false>;
  k<<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, slice, S, strips, a.A, a.lda, a.x, a.incx, part);
}

// The split: S slices of `slice` elements (N: columns, T: rows); S == 1 means no split.
struct Split {
  int64_t S = 1, slice = 0;
};

Split plan_rows(const Args& a, int64_t sms, bool vec, bool vx) {
  // Units are warps; without a split there are m of them. Fill kWaves waves, no more.
  const int64_t per_sm = vec ? (vx ? resident_blocks<rows_split_kernel<true, true>>()
                                   : resident_blocks<rows_split_kernel<true, false>>())
                             : resident_blocks<rows_split_kernel<false, false>>();
  const int64_t capacity = kWaves * sms * per_sm * kWarps;
  Split p;
  p.S = capacity / a.m;
  const int64_t most = a.n / kMinSliceN;
  if (p.S > most) p.S = most;
  if (p.S > 1) {
    p.slice = 4 * g::ceil_div(g::ceil_div(a.n, p.S), 4);  // a multiple of 4: float4 stays aligned
    p.S = g::ceil_div(a.n, p.slice);                       // no empty slice
  }
  return p;
}

Split plan_cols(const Args& a, int64_t sms, int lanes, int64_t strips, bool vec) {
  // Units are blocks, one per (strip, slice); without a split, one per strip.
  const int64_t per_sm = lanes == 8    ? (vec ? resident_blocks<cols_split_kernel<8, true>>()
                                               : resident_blocks<cols_split_kernel<8, false>>())
                         : lanes == 16 ? (vec ? resident_blocks<cols_split_kernel<16, true>>()
                                              : resident_blocks<cols_split_kernel<16, false>>())
                                       : (vec ? resident_blocks<cols_split_kernel<32, true>>()
                                              : resident_blocks<cols_split_kernel<32, false>>());
  const int64_t capacity = kWaves * sms * per_sm;
  Split p;
  p.S = capacity / strips;
  const int64_t most = a.m / (kWarps * (32 / lanes) * kMinRowsPerThreadT);
  if (p.S > most) p.S = most;
  if (p.S > 1) {
    p.slice = g::ceil_div(a.m, p.S);
    p.S = g::ceil_div(a.m, p.slice);
  }
  return p;
}

}  // namespace

void run(const Args& a) {
  const int64_t sms = detail::sm_count();
  const bool vec = g::vec_a(a.A, a.lda), vx = g::vec_x(a.x, a.incx);
  const int lanes = strip_lanes(a.n);
  const int64_t strips = g::ceil_div(a.n, 4 * lanes);
  const bool rung6_fills = a.trans == Trans::N ? a.m >= kRung6RowsPerSm * sms
                                               : 4 * g::ceil_div(a.n, 32) >= kRung6StripsPerSm4 * sms;
  Split p;
  if (!rung6_fills) p = a.trans == Trans::N ? plan_rows(a, sms, vec, vx) : plan_cols(a, sms, lanes, strips, vec);
  if (p.S <= 1) {
    multi_row::run(a);  // enough outputs to fill the GPU, or dot products too short to split: rung 6
    return;
  }
  const int64_t S = p.S, slice = p.slice;
  const int64_t out_len = a.out_len();
  detail::Scratch scratch(static_cast<size_t>(out_len * S) * sizeof(float), a.stream);
  float* part = scratch.as<float>();
  const int s32 = static_cast<int>(S);  // S <= the warps of one wave: small
  if (a.trans == Trans::N) {
    const unsigned blocks = static_cast<unsigned>(g::ceil_div(a.m * S, kWarps));
    auto k = vec ? (vx ? rows_split_kernel<true, true> : rows_split_kernel<true, false>)
                 : rows_split_kernel<false, false>;
    k<<<blocks, kThreads, 0, a.stream>>>(a.m, a.n, slice, s32, a.A, a.lda, a.x, a.incx, part);
  } else if (lanes == 8) {
    launch_cols<8>(a, slice, s32, strips, vec, part);
  } else if (lanes == 16) {
    launch_cols<16>(a, slice, s32, strips, vec, part);
  } else {
    launch_cols<32>(a, slice, s32, strips, vec, part);
  }
  RUNGS_LAUNCHED();

  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(g::ceil_div(out_len, kWarps)));
  cfg.blockDim = dim3(kThreads);
  cfg.stream = a.stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  if (kDependentLaunch && detail::current_sm() >= 90) {
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  const float* cpart = part;
  RUNGS_CUDA(cudaLaunchKernelEx(&cfg, finish_kernel, out_len, s32, cpart, a.alpha, a.beta, a.y, a.incy));
}

}  // namespace rungs::sgemv::split_k
