// Rung 26's parts (used by rungs 26 and 27; what they add and why: 26_decode_wgmma.cu): the block
// shape (BM rows of W: 128, or 256 at N = 64 and 128 where the rung asks for it; two consumer
// warpgroups and a producer warp), the TMA stages of W and A, the producer's and the consumers'
// step for one k tile with W either k-contiguous (nt) or n-contiguous (nn, wgmma's transpose bit),
// the tensor maps, the choice of wgmma's N and BM, and rung 27's programmatic second launch.
#pragma once

#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <type_traits>

namespace rungs::sgemm::decode_wgmma {

constexpr int ROW = 128;     // bytes per shared-memory row: one swizzle row, 64 16-bit elements
constexpr int BK = 64;       // k per stage
constexpr int THREADS = 288; // warpgroups 0 and 1 consume, warp 8 produces (one thread issues TMA)

// Rows of W per block: BM = 128 H. H = 1: each consumer warpgroup one m64 wgmma per k16. H = 2
// (N = 64 and 128 only): each warpgroup two m64 wgmmas on 128 rows of W. Every block reads its own
// N x 64 box of A per k tile from L2, as many bytes as W's 128 x 64 box at N = 128; the wider
// tile halves A's share of that traffic, at the price of half as many tiles (more splits or cut
// tiles, whose partial sums are as large as the tile): launch_shape chooses.
template <int H>
constexpr int bm() {
  return 128 * H;
}
template <int H>
constexpr int w_bytes() {
  return bm<H>() * ROW;  // 16 or 32 KB
}
template <int N, int H>
constexpr int stage_bytes() {
  return w_bytes<H>() + N * ROW;
}
template <int N, int H>
constexpr int stages() {  // as many as fit the 227 KB a Hopper block may have, at most 8
  constexpr int fit = (227 * 1024 - 1024 - 2 * 8 * 8) / stage_bytes<N, H>();
  return fit < 8 ? fit : 8;
}
template <int N, int H>
constexpr int smem_bytes() {
  return stages<N, H>() * stage_bytes<N, H>() + 1024 /* alignment */ + 2 * stages<N, H>() * 8 /* barriers */;
}

// The producer's step i of its block (the i-th k tile it loads, counted over the whole block):
// waits until the consumers released stage i % STAGES (its use i / STAGES - 1), then loads k tile
// kt of W's rows n0 .. n0 + BM - 1 and of A's N x 64 box at row m0 into it. W_MN == false (W n x k,
// tb == T): one BM x 64 box, BM rows of 128 bytes. W_MN (W stored k x n, tb == N): BM / 64 boxes
// of 64 k-rows x 64 n (8 KB each, box j holding W rows n0 + 64 j ..), the layout wgmma reads with
// its transpose bit.
template <int N, int H, bool W_MN>
__device__ __forceinline__ void produce_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               const CUtensorMap* map_w, const CUtensorMap* map_a, int kt, int n0,
                                               int m0) {
  constexpr int STAGES = stages<N, H>(), STAGE_BYTES = stage_bytes<N, H>();
  const int s = i % STAGES;
  if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);  // use i / STAGES - 1 released
  unsigned char* st = smem + s * STAGE_BYTES;
  const int k0 = kt * BK;
  detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
  if constexpr (W_MN) {
#pragma unroll
    for (int j = 0; j < bm<H>() / 64; ++j) detail::tma_load_2d(st + j * 64 * ROW, map_w, n0 + 64 * j, k0, &full[s]);
  } else {
    detail::tma_load_2d(st, map_w, k0, n0, &full[s]);
  }
  detail::tma_load_2d(st + w_bytes<H>(), map_a, k0, m0, &full[s]);
}

// A consumer warpgroup's step i: waits for stage i % STAGES, adds its BM / 2 rows of W times A^T
// (64 x N per m64 block h, k 64) into d[h], then releases stage i - 1, whose MMAs have retired
// (stage i's may still run: wgmma_wait<0> before reading d).
template <typename T, int N, int H, bool W_MN>
__device__ __forceinline__ void consume_k_tile(unsigned char* smem, uint64_t* full, uint64_t* empty, int i,
                                               float (&d)[H][N / 2], int wg, int tid) {
  constexpr int STAGES = stages<N, H>(), STAGE_BYTES = stage_bytes<N, H>();
  const int s = i % STAGES;
  detail::mbar_wait(&full[s], (i / STAGES) & 1);
  const unsigned char* Ws = smem + s * STAGE_BYTES;
  const unsigned char* As = Ws + w_bytes<H>();
  detail::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    const uint64_t da = detail::smem_desc(As + kk * 32, 16, 1024);  // A's N rows, K-major
#pragma unroll
    for (int h = 0; h < H; ++h) {
      // Row block wg * H + h of W (64 rows): K-major, k16 steps inside the 128-byte row; or
      // MN-major, its own 64 x 64 box, k16 steps of 16 rows (two 8-row swizzle atoms, SBO 1024).
      const unsigned char* Wb = Ws + (wg * H + h) * 64 * ROW;
      const uint64_t dw = W_MN ? detail::smem_desc(Wb + kk * 16 * ROW, 64 * ROW, 1024)
                               : detail::smem_desc(Wb + kk * 32, 16, 1024);
      detail::wgmma_narrow<T, W_MN ? 1 : 0, 0, N>(d[h], dw, da);
    }
  }
  detail::wgmma_commit();
  detail::wgmma_wait<1>();  // the MMAs of stage i - 1 have retired: its slot may be refilled
  if (i > 0 && tid % 128 == 0) detail::mbar_arrive(&empty[(i - 1) % STAGES]);
}

// W in BM x 64 boxes (n x k) or 64 x 64 boxes (k x n, W_MN), A (m x k) in N x 64 boxes, all with
// the 128-byte swizzle.
struct Maps {
  CUtensorMap w, a;
};
template <typename T, int N, int H, bool W_MN>
Maps make_maps(const ArgsT<T>& a) {
  constexpr int E = int(sizeof(T));
  const CUtensorMapDataType type = detail::tma_operand_type<T>();
  const CUtensorMap w = W_MN ? detail::make_tensor_map_2d(a.B, type, E, a.k, a.n, a.ldb, BK, 64)
                             : detail::make_tensor_map_2d(a.B, type, E, a.n, a.k, a.ldb, bm<H>(), BK);
  return {w, detail::make_tensor_map_2d(a.A, type, E, a.m, a.k, a.lda, N, BK)};
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
void launch_dependent(void (*kernel)(P...), dim3 grid, unsigned block, cudaStream_t stream, Q... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(block);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  RUNGS_CUDA(cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...));
}

// A must be m x k (ta == N, k-contiguous); W either n x k (tb == T) or k x n (tb == N, read
// through wgmma's transpose bit); both with rows TMA can address.
template <typename T>
bool tma_path(const ArgsT<T>& a) {
  return a.ta == Trans::N && pack::tma_ok(a.A, a.lda, 2) && pack::tma_ok(a.B, a.ldb, 2);
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

// f(std::integral_constant<int, N>{}, std::integral_constant<int, H>{}, std::bool_constant<W_MN>{}):
// N from m (with_n), W_MN = tb == N, and H = 2 where N >= 64 and wide(BM = 256 tiles) says so.
template <typename T, class Wide, class F>
void with_shape(const ArgsT<T>& a, Wide&& wide, F&& f) {
  with_n(a.m, [&](auto n) {
    constexpr int N = decltype(n)::value;
    auto layout = [&](auto h) {
      if (a.tb == Trans::N) f(n, h, std::true_type{});
      else f(n, h, std::false_type{});
    };
    if constexpr (N >= 64) {
      const int64_t wide_tiles = detail::ceil_div(a.n, int64_t(256)) * detail::ceil_div(a.m, int64_t(N));
      if (wide(wide_tiles)) return layout(std::integral_constant<int, 2>{});
    }
    layout(std::integral_constant<int, 1>{});
  });
}

}  // namespace rungs::sgemm::decode_wgmma
