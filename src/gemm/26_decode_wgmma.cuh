// Rung 26's parts (used by rungs 26 and 27; what they add and why: 26_decode_wgmma.cu): the block
// shape (128 rows of W, two consumer warpgroups and a producer warp), the TMA stages of W and A,
// the producer's and the consumers' step for one k tile, the tensor maps, the choice of wgmma's N
// from m, and the second pass's programmatic launch.
#pragma once

#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <type_traits>

namespace rungs::sgemm::decode_wgmma {

constexpr int BM = 128;      // rows of W (columns of C) per block: two consumer warpgroups of 64
constexpr int ROW = 128;     // bytes per shared-memory row: one swizzle row, 64 16-bit elements of k
constexpr int BK = 64;       // k per stage
constexpr int THREADS = 288; // warpgroups 0 and 1 consume, warp 8 produces (one thread issues TMA)
constexpr int W_BYTES = BM * ROW;  // 16 KB

template <int N>
constexpr int stage_bytes() {
  return W_BYTES + N * ROW;
}
template <int N>
constexpr int stages() {  // as many as fit the 227 KB a Hopper block may have, at most 8
  constexpr int fit = (227 * 1024 - 1024 - 2 * 8 * 8) / stage_bytes<N>();
  return fit < 8 ? fit : 8;
}
template <int N>
constexpr int smem_bytes() {
  return stages<N>() * stage_bytes<N>() + 1024 /* alignment */ + 2 * stages<N>() * 8 /* barriers */;
}

// The producer's step i of its block (the i-th k tile it loads, counted over the whole block):
// waits until the consumers released stage i % STAGES (its use i / STAGES - 1), then loads k tile
// kt of W's 128 x 64 box at row n0 and of A's N x 64 box at row m0 into it.
template <int N>
__device__ __forceinline__ void produce_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               const CUtensorMap* map_w, const CUtensorMap* map_a, int kt, int n0,
                                               int m0) {
  constexpr int STAGES = stages<N>(), STAGE_BYTES = stage_bytes<N>();
  const int s = i % STAGES;
  if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
  unsigned char* st = smem + s * STAGE_BYTES;
  const int k0 = kt * BK;
  detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
  detail::tma_load_2d(st, map_w, k0, n0, &full[s]);
  detail::tma_load_2d(st + W_BYTES, map_a, k0, m0, &full[s]);
}

// A consumer warpgroup's step i: waits for stage i % STAGES, adds its 64 rows of W times A^T
// (64 x N, k 64) into d, then releases stage i - 1, whose MMAs have retired (stage i's may still
// run: wgmma_wait<0> before reading d).
template <typename T, int N>
__device__ __forceinline__ void consume_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               float (&d)[N / 2], int wg, int tid) {
  constexpr int STAGES = stages<N>(), STAGE_BYTES = stage_bytes<N>();
  const int s = i % STAGES;
  detail::mbar_wait(&full[s], (i / STAGES) & 1);
  const unsigned char* Ws = smem + s * STAGE_BYTES;
  const unsigned char* As = Ws + W_BYTES;
  detail::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    // Both operands K-major: W's 64 rows of this warpgroup, A's N rows; k16 steps inside the row.
    const uint64_t dw = detail::smem_desc(Ws + wg * 64 * ROW + kk * 32, 16, 1024);
    const uint64_t da = detail::smem_desc(As + kk * 32, 16, 1024);
    detail::wgmma_narrow<T, 0, 0, N>(d, dw, da);
  }
  detail::wgmma_commit();
  detail::wgmma_wait<1>();  // the MMAs of stage i - 1 have retired: its slot may be refilled
  if (i > 0 && tid % 128 == 0) detail::mbar_arrive(&empty[(i - 1) % STAGES]);
}

// W (n x k) in 128 x 64 boxes and A (m x k) in N x 64 boxes, both with the 128-byte swizzle.
struct Maps {
  CUtensorMap w, a;
};
template <typename T, int N>
Maps make_maps(const ArgsT<T>& a) {
  constexpr int E = int(sizeof(T));
  return {detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.n, a.k, a.ldb, BM, BK),
          detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.m, a.k, a.lda, N, BK)};
}

// Every thread of a kernel whose results a programmatically launched kernel reads (the second
// pass): that kernel may be scheduled now; it waits (griddep_wait) until this grid has finished
// and its writes are visible.
__device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#else
  __trap();
#endif
}

// Launches kernel<<<grid, block, 0, stream>>>(args...) as a programmatic dependent of the kernel
// launched before it on the stream: scheduled while that one runs (where SMs have room), its
// griddep_wait returns once that one has finished.
template <typename... P, typename... Q>
void launch_dependent(void (*kernel)(P...), unsigned grid, unsigned block, cudaStream_t stream, Q... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  RUNGS_CUDA(cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...));
}

// W must be n x k (tb == T) and A m x k (ta == N): both k-contiguous, as the kernels read them,
// with rows TMA can address.
template <typename T>
bool tma_path(const ArgsT<T>& a) {
  return a.ta == Trans::N && a.tb == Trans::T && pack::tma_ok(a.A, a.lda, 2) && pack::tma_ok(a.B, a.ldb, 2);
}

// f(std::integral_constant<int, N>{}) with wgmma's N: m rounded up to 8, 16, 32, 64, else 128.
template <class F>
void with_n(int64_t m, F&& f) {
  if (m <= 8) f(std::integral_constant<int, 8>{});
  else if (m <= 16) f(std::integral_constant<int, 16>{});
  else if (m <= 32) f(std::integral_constant<int, 32>{});
  else if (m <= 64) f(std::integral_constant<int, 64>{});
  else f(std::integral_constant<int, 128>{});
}

}  // namespace rungs::sgemm::decode_wgmma
