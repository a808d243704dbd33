// The skeleton's vocabulary: the tile and stage-ring constants, the element types a rung runs
// (Problem), a rung as its four parts (Parts), what a schedule is given to plan (Grid) and what an
// epilogue sees of its block (ConsumerCtx). What each part provides the frame (wgmma_ws.cuh):
//  - Schedule: whole_tiles, wide_producer, rs_in_flight, CLUSTER (blocks of a cluster along m,
//    sharing B); on the host shape<S>(kernel, smem, cluster_tiles, kt, name), the grid's clusters
//    and the blocks of each (CLUSTER, or split-K's splits), then Params and plan(Grid), and
//    after_launch(args, params, grid, name) (a second pass on the stream);
//    Walk<TILE_N>(params, tiles_m, tiles_n, rank) on the device: count pieces, piece(p, t, kb, ke),
//    locate(p, m0, n0, solo, kb, ke), tile(p, t, m0, n0, solo) and finish(d, kb, ke, cw, store),
//    which stores a finished tile (or adds a split tile's partial sums), and CLUSTER (the mainloop's
//    loads read it from the walk). The kernel is the schedule:
//    THREADS a block, clusters(cluster_tiles, fit) in the grid, exit_barrier<E> (a cluster barrier
//    at the kernel's end), BLOCKS_PER_SM (its launch bounds), and block<S, M, E, Ac, T, A_MN, B_MN,
//    C_T>(Block) the threads' roles;
//    SLOT_READERS (a block's consumers that release each stage), BARRIERS (mbarriers of its own, set
//    up by init_barriers(bars, tid)), stage<T, A_MN, B_MN, N>(d, As, Bs, cw) (one stage's MMAs of a
//    consumer) and consume<S, M, Ac, T, A_MN, B_MN>(walk, args, smem, full, bars, cw, epi, ctx,
//    release) (a consumer's pieces): ws/cooperative.cuh's (a producer warpgroup, both consumers on
//    every tile), PingPong's (18_wgmma_pingpong.cu).
//  - Mainloop: TILE_M x TILE_N tiles (A_TILE_BYTES of A a k tile), RING stages of
//    RING_STAGE_BYTES, ACC accumulator registers per consumer
//    thread; Maps (its tensor maps) from make_maps<Self, CLUSTER, T, A_MN, B_MN>(args) on the host;
//    prefetch<Self, B_MN>(maps), and load<Self, T, A_MN, B_MN>(walk, p, maps, smem, full, n, rank,
//    it, wait_released): the producer thread's loads of piece p; sum_stage<S, T, A_MN, B_MN>(t, stage,
//    cw), a consumer's MMAs of one stage into a fresh sum (SumPerStage's hook). The TMA stage
//    mainloops (ws/tma_stages.cuh) add width, two and multiply, which ws/k_loop.cuh's k loop reads.
//  - Accumulation: multiply<M, S, T, A_MN, B_MN>(d, walk, p, t, kb, ke, args, smem, full, cw, it,
//    epi, ctx, release), the consumer's k loop of piece p; scale<T>(d, args, row0, col0) before a
//    tile's store; after_tiles(cw, it) after the consumer's last tile.
//  - Epilogue: buffers, tma, storers (what the frame sets up for it: C buffers in shared memory, a
//    tensor map of C, hand-over barriers and the storer warps' loop, init_barriers and storer);
//    Consumer<TC, C_T> with in_mainloop(ctx, i), after_mainloop(ctx, k_tiles), store(ctx, d, m0,
//    n0) (consumer cw's 64 rows of the tile), store_rows<N>(ctx, d, row0, n0) (any 64 rows, N
//    columns: DirectStore and TmaStore) and finish(ctx); optionally Params, its kernel parameters
//    (EpiParams<E>; ctx.ep points at them): the fused epilogue's (ws/fused.cuh).
#pragma once

#include "core/scratch.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/sm90/tma.cuh"
#include "gemm/gemm_rung.hpp"

#include <cuda_fp8.h>

#include <memory>
#include <type_traits>

namespace rungs::sgemm::ws {

using detail::ceil_div;

constexpr int BM = 128, BN = 256, STAGES = 4;
constexpr int CONSUMERS = 2;  // consumer warpgroups (the schedule says what each multiplies)
constexpr int CLUSTER = 2;  // the schedules' cluster: blocks along m sharing B (1 measured 0.73-0.82x
                            // cuBLAS bf16 with a producer warpgroup, 2: 0.77-0.96x)
constexpr int ROW = 128;                                         // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KB
constexpr int C_BYTES = 16384;  // each consumer's C staging buffer (64 rows x 256 bytes), where used
constexpr int B_PAIR = 64 * ROW;  // Mainloop::pairs: B of one k tile of a tile 64 columns wide
constexpr int BAND = 8;  // cluster rows per band of the tile order

// The frame's element type T: float (tf32), __half, __nv_bfloat16 (A, B and C all of T), or an
// fp8 problem, Fp8<TA8, TB8, TC> (rung 28): A and B fp8 (e4m3 or e5m2 each), C bf16 or float.
// Problem<T> says which is which, and the kernel's arguments: ArgsT<T>, or ArgsFp8 (ArgsT's fields
// typed, plus the scales).
template <typename TA8, typename TB8, typename TC>
struct Fp8 {};
template <typename TA8, typename TB8, typename TC>
struct ArgsFp8 {
  Trans ta, tb;
  int64_t m, n, k;
  float alpha;
  const TA8* A;
  int64_t lda;
  const TB8* B;
  int64_t ldb;
  float beta;
  TC* C;
  int64_t ldc;
  cudaStream_t stream;
  Scales scales;
};
template <typename T>
struct Problem {
  using A = T;
  using B = T;
  using C = T;
  using Args = ArgsT<T>;
  static constexpr bool fp8 = false;
};
template <typename TA8, typename TB8, typename TC>
struct Problem<Fp8<TA8, TB8, TC>> {
  using A = TA8;
  using B = TB8;
  using C = TC;
  using Args = ArgsFp8<TA8, TB8, TC>;
  static constexpr bool fp8 = true;
};

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row (128 fp8 elements)
  return ROW / int(sizeof(typename Problem<T>::A));
}

struct InTensorCore;

// A rung: the frame composed from its parts (see the top of this file).
template <class S, class M, class E, class A = InTensorCore>
struct Parts {
  using Schedule = S;
  using Mainloop = M;
  using Epilogue = E;
  using Accumulation = A;
};

// A launch's clusters (Schedule::shape): how many, and the blocks of each (along x).
struct ClusterShape {
  int64_t clusters;
  int blocks;
};

// What a schedule's host side is given to plan a launch.
struct Grid {
  int64_t tiles_m, tiles_n, cluster_tiles;
  int clusters;  // in the grid (the persistent schedules': those resident at once)
  int blocks;    // blocks per cluster (Schedule::shape's)
  int kt;        // k tiles per tile
  int tile_m, tile_n;  // a tile's rows and columns (the mainloop's)
  int64_t m, n;
  cudaStream_t stream;
  std::unique_ptr<detail::Scratch>*keep_ws, *keep_flags;  // scratch a schedule needs, freed after the kernel
};

// A consumer's view of its block, for the epilogue parts.
template <typename T>
struct ConsumerCtx {
  const typename Problem<T>::Args& a;
  const CUtensorMap* map_c;
  unsigned char* buf;  // this consumer's C buffer (parts with buffers)
  uint64_t *c_full, *c_empty;  // this consumer's hand-over barriers (parts with storers)
  int64_t tma_cols;  // columns C's TMA stores may write (0: none)
  int cw, tid;
  bool c_vec;
  const void* ep = nullptr;  // the epilogue's parameters (EpiParams<E>, in the kernel's parameter space)
};

// What the frame hands a schedule's block roles (Schedule::block): the kernel's parameters, the
// block's shared memory (the stage ring, the C buffers, the barriers) and its walk.
template <typename T, class P>
struct Block {
  using Walk = typename P::Schedule::template Walk<P::Mainloop::TILE_N>;
  const typename P::Mainloop::Maps& maps;
  const CUtensorMap& map_c;
  const typename Problem<T>::Args& a;
  unsigned char *smem, *c_buf;
  uint64_t *full, *empty, *c_full, *c_empty, *bars;
  const Walk& walk;
  int64_t tma_cols;
  int tid, wg;  // this thread, its warpgroup
  uint32_t rank;
  bool c_vec;
  const void* ep;  // the epilogue's parameters (EpiParams<E>)
};

// An epilogue part's kernel parameters: its Params where it has some (a fused epilogue's bias,
// activation, output), else none.
struct NoEpiParams {};
template <class E, class = void>
struct EpiParamsOf {
  using type = NoEpiParams;
};
template <class E>
struct EpiParamsOf<E, std::void_t<typename E::Params>> {
  using type = typename E::Params;
};
template <class E>
using EpiParams = typename EpiParamsOf<E>::type;

}  // namespace rungs::sgemm::ws
