// The tensor-core skeleton's frame (rungs 14-23, 26-30, 32, 35-37): a clustered wgmma GEMM
// (sm_90a) in which, for most schedules, warpgroup 0 produces (one thread issues every TMA load) over
// a persistent grid and warpgroups 1 and 2 consume: 64 rows each of every 128-row tile (the
// Cooperative schedules), or whole tiles in turn (PingPong); rung 14's Unspecialized has no
// producer; the decode schedules (ws/split_k.cuh) a producer warp and a consumer warpgroup per 64
// rows. wgmma from shared memory, or with A through registers. A rung is the frame composed
// from four parts, `Parts<Schedule, Mainloop, Epilogue, Accumulation>` (their interfaces:
// ws/parts.cuh):
//  - Schedule: which tiles (and which k tiles of them) each cluster runs, in what order, and which
//      consumer multiplies what (ws/cooperative.cuh: both, every tile): RoundRobin (15_wgmma_ws.cuh),
//      StreamK (19_wgmma_streamk.cu), Balanced (22_wgmma_deal.cuh), PingPong (18_wgmma_pingpong.cu),
//      Unspecialized (14_wgmma.cu); for decode shapes SplitKOf (ws/split_k.cuh: rung 26, Resident
//      in 32_decode_resident.cu), StreamKRangesOf (27_decode_streamk.cu);
//  - Mainloop: how a tile's k tiles reach shared memory and how wide they are multiplied:
//      WholeTiles (15_wgmma_ws.cuh), Ragged (16_wgmma_narrow.cuh: the narrowest wgmma width that
//      holds the tile's columns), Paired (23_wgmma_balanced.cu: a narrow tile's k tiles two a
//      stage), on ws/tma_stages.cuh's loads and ws/k_loop.cuh's k loop; X3 (36_wgmma_x3.cuh:
//      3xTF32's split operands). It fixes the stage ring, the tile's width (WholeTilesOf<128, 6>:
//      rung 18's), the accumulator's registers and the tensor maps the kernel takes;
//  - Epilogue: how a consumer's 64 x 256 accumulator reaches C: DirectStore (15_wgmma_ws.cuh),
//      TmaStore (17_wgmma_tma_store.cuh), Overlap (21_wgmma_overlap.cu), Staged<TmaStore>
//      (20_wgmma_ragged.cuh: C that TMA cannot store written by the producer's idle warps);
//  - Accumulation, defaulted: where the k loop's sums live: InTensorCore (15_wgmma_ws.cuh),
//      Promote (29_wgmma_fp8_promote.cuh: fp8 partial sums promoted into fp32 registers every k
//      tile, block128 scales applied there), ScaledInTensorCore (28_wgmma_fp8.cuh: the k-independent
//      fp8 scales after the tensor core's sums), OrderedPromote (30_wgmma_fp8_overlap.cu: the two
//      consumers take turns on the tensor core), SumPerStage (35_wgmma_sums.cuh: each stage's products
//      summed apart and added in fp32).
// fp8 problems (rungs 28-30) run the same frame with the element type Fp8<TA8, TB8, TC>: the k
// loop's stage issues fp8 wgmmas, the accumulation applies the scales (ScaledInTensorCore,
// 28_wgmma_fp8.cuh; Promote, 29_wgmma_fp8_promote.cuh).
// The frame holds what every rung shares: the shared memory (the stage ring, the C buffers, the
// barriers), the barriers' set-up, the tile walk and the launch; the threads' roles are the
// schedule's (Schedule::block).
#pragma once

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/sync.cuh"
#include "detail/sm90/tma.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"
#include "gemm/ws/parts.cuh"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace rungs::sgemm::ws {

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
// tf32 (T = float): B_MN never; A_MN reads A through registers (wgmma's register form: the
// shared-memory form reads K-major operands only). C_T (tf32): the launch swapped the operands
// (C^T = B^T A^T, so that an n-contiguous B is this kernel's A_MN operand): the kernel's m x n
// result is C's transpose, stored as such.
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
__global__ void __launch_bounds__(P::Schedule::THREADS, P::Schedule::BLOCKS_PER_SM)
    wgmma_ws_kernel(const __grid_constant__ typename P::Mainloop::Maps maps, const __grid_constant__ CUtensorMap map_c,
                    typename Problem<T>::Args a, int tiles_m, int tiles_n, bool c_vec, int64_t tma_cols,
                    typename P::Schedule::Params sp,
                    const __grid_constant__ EpiParams<typename P::Epilogue> ep) {
  using S = typename P::Schedule;
  using M = typename P::Mainloop;
  using E = typename P::Epilogue;
  using Ac = typename P::Accumulation;
  constexpr int STAGES = M::RING, STAGE_BYTES = M::RING_STAGE_BYTES;  // the mainloop's stage ring
  constexpr bool TF32 = std::is_same_v<T, float>, FP8 = Problem<T>::fp8;
  static_assert(!(TF32 && B_MN), "tf32: B K-major");
  static_assert(!FP8 || !E::storers, "fp8: the consumers store C (mma_stage: K-major operands, whole tiles)");
  static_assert(!E::storers || S::whole_tiles, "the storer warps walk whole tiles only");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  unsigned char* c_buf = smem + STAGES * STAGE_BYTES;  // E::buffers: the consumers' C buffers
  uint64_t* full = reinterpret_cast<uint64_t*>(c_buf + (E::buffers ? CONSUMERS * C_BYTES : 0));
  uint64_t* empty = full + STAGES;
  // E::storers: consumer w's C buffer holds a chunk for its storer warp / is free again.
  uint64_t* c_full = empty + STAGES;
  uint64_t* c_empty = c_full + CONSUMERS;
  uint64_t* sched_bars = c_empty + CONSUMERS;  // the schedule's own (S::BARRIERS)
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  // The maps this block's TMA will read, fetched while the barriers are set up: the producer's,
  // and C's for the consumers' stores where they use it.
  if (tid == 0) M::template prefetch<M, B_MN>(maps);
  if (E::tma && tid == 128 && tma_cols > 0) detail::tma_prefetch(&map_c);
  detail::init_pipeline_barriers(full, empty, STAGES, S::SLOT_READERS * S::CLUSTER);
  S::init_barriers(sched_bars, tid);
  if constexpr (E::storers) E::init_barriers(c_full, c_empty, tid);
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  const typename S::template Walk<M::TILE_N> walk(sp, tiles_m, tiles_n, rank);

  const Block<T, P> b{maps, map_c, a,  smem, c_buf, full, empty, c_full, c_empty, sched_bars, walk, tma_cols, tid,
                      wg,   rank,  c_vec, std::is_same_v<EpiParams<E>, NoEpiParams> ? nullptr : &ep};
  S::template block<S, M, E, Ac, T, A_MN, B_MN, C_T>(b);
  // No block leaves while its peer may still signal or write into it: a cluster barrier, or the
  // schedule's own tail (the Cooperative producer's).
  if constexpr (S::template exit_barrier<E>) detail::cluster_sync();
}

template <class M, class E, class S>
constexpr int smem_bytes() {
  return M::RING * M::RING_STAGE_BYTES + (E::buffers ? CONSUMERS * C_BYTES : 0) + 1024 /* alignment */ +
         (2 * M::RING + 2 * CONSUMERS + S::BARRIERS) * 8 /* barriers */;
}

// One persistent cluster grid of the rung P over the problem a, its operands read through `maps`
// (the mainloop's, built by the caller).
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
void launch(const typename Problem<T>::Args& a, const typename P::Mainloop::Maps& maps, const char* name,
            const EpiParams<typename P::Epilogue>& ep = {}) {
  using S = typename P::Schedule;
  using M = typename P::Mainloop;
  using E = typename P::Epilogue;
  using Pr = Problem<T>;
  // C_SIZE: C's element bytes.
  constexpr int BK = bk<T>(), C_SIZE = int(sizeof(typename Pr::C));
  const int64_t tiles_m = ceil_div(a.m, M::TILE_M), tiles_n = ceil_div(a.n, M::TILE_N);
  const int64_t cluster_tiles = ceil_div(tiles_m, S::CLUSTER) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported(std::string("rungs: ") + name + ": too many tiles for one launch");
  auto* kernel = &wgmma_ws_kernel<T, A_MN, B_MN, C_T, P>;
  constexpr int SMEM_BYTES = smem_bytes<M, E, S>();
  static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int kt = static_cast<int>(ceil_div(a.k, static_cast<int64_t>(BK)));
  const ClusterShape shape =
      S::template shape<S>(reinterpret_cast<const void*>(kernel), SMEM_BYTES, cluster_tiles, kt, name);
  const int clusters = static_cast<int>(shape.clusters);
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * C_SIZE) == 0 && a.ldc % 2 == 0;
  // TMA stores need C's base and rows 16-byte aligned, and write alpha * AB only: beta != 0 (or an
  // unaligned C) takes the direct epilogue. They clip a row at the 16-byte chunk that holds column
  // n - 1, not at n (measured on the H100: n = 1, ldc = 16 wrote 7 elements of bf16 padding; also
  // triton-lang/triton#11583): where n * sizeof(T) is not a multiple of 16, only tiles whose 256
  // columns lie inside C use them (tma_cols = n), the last tile column stores directly.
  const bool tma_c = E::tma && a.beta == 0.0f && reinterpret_cast<uintptr_t>(a.C) % 16 == 0 && (a.ldc * C_SIZE) % 16 == 0;
  // C_T: C is n x m here (C's columns are this kernel's rows): the clipped dimension is m.
  const int64_t c_cols = C_T ? a.m : a.n, c_rows = C_T ? a.n : a.m;
  const int64_t tma_cols = !tma_c ? 0 : (c_cols * C_SIZE) % 16 == 0 ? INT64_MAX : c_cols;
  const CUtensorMap mc = tma_c ? detail::make_tensor_map_2d(a.C, detail::tma_type<typename Pr::C>(), C_SIZE, c_rows,
                                                            c_cols, a.ldc, 64, 128 / C_SIZE)
                               : CUtensorMap{};
  std::unique_ptr<detail::Scratch> ws, flags;  // freed on the stream after the kernel
  const Grid g{tiles_m, tiles_n, cluster_tiles, clusters, shape.blocks, kt, M::TILE_M, M::TILE_N, a.m, a.n,
               a.stream, &ws, &flags};
  const typename S::Params sp = S::plan(g);
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * shape.blocks), S::THREADS, SMEM_BYTES, shape.blocks,
                                a.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, maps, mc, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                c_vec, tma_cols, sp, ep));
  detail::check_launch(name);
  S::after_launch(a, sp, g, name);  // a second pass of the schedule's (its scratch still held)
#if defined(RUNGS_HANG_DEBUG)
  detail::hang_report<<<1, 1, 0, a.stream>>>();
#endif
}

// A TmaStages rung's launch: the maps of its operands, then the grid.
template <typename T, bool A_MN, bool B_MN, bool C_T, class P>
void launch(const typename Problem<T>::Args& a, const char* name, const EpiParams<typename P::Epilogue>& ep = {}) {
  using M = typename P::Mainloop;
  launch<T, A_MN, B_MN, C_T, P>(a, M::template make_maps<M, P::Schedule::CLUSTER, T, A_MN, B_MN>(a), name, ep);
}

// A rung's entry: operands TMA cannot read in place copied aligned (gemm/pack.hpp), then the
// kernel for the operands' layout. tf32 nn runs as C^T = B^T A^T (C_T).
template <class P, typename T>
void run(const ArgsT<T>& user, const char* name, const EpiParams<typename P::Epilogue>& ep = {}) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b, true);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    if constexpr (std::is_same_v<T, float>) {  // operands() left no tn: A or B (or both) K-major
      if constexpr (decltype(tb)::value) {  // B K-major: A K-major in shared memory, or MN-major through registers
        launch<T, decltype(ta)::value, false, false, P>(a, name, ep);
      } else if constexpr (!decltype(ta)::value) {  // nn: C^T = B^T A^T, B (n-contiguous) the A_MN operand
        ArgsT<T> s = a;
        s.m = a.n, s.n = a.m, s.A = a.B, s.lda = a.ldb, s.B = a.A, s.ldb = a.lda, s.ta = Trans::T, s.tb = Trans::T;
        launch<T, true, false, true, P>(s, name, ep);
      } else {  // tn: operands() copies A k-contiguous, so this is a bug, not a shape to skip
        throw Error(std::string("rungs: ") + name + ": tf32 tn reached the kernel uncopied");
      }
    } else {
      launch<T, decltype(ta)::value, !decltype(tb)::value, false, P>(a, name, ep);
    }
  });
}

// An fp8 rung's entry (rung 28): the operands made K-major and TMA-addressable (an aligned,
// transposed copy where they are not: gemm/pack.hpp), then the kernel for the operands' fp8 types
// and C's type. The caller has refused the scalings its epilogue does not apply.
template <class P>
void run_fp8(const ArgsF8& user, const char* name, const EpiParams<typename P::Epilogue>& ep = {}) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsF8 a = pack::operands_fp8(user, keep_a, keep_b);
  auto go = [&](auto a8, auto b8, auto c) {
    using TA8 = decltype(a8);
    using TB8 = decltype(b8);
    using TC = decltype(c);
    const ArgsFp8<TA8, TB8, TC> k{a.ta, a.tb, a.m, a.n, a.k, a.alpha,
                                  static_cast<const TA8*>(a.A), a.lda,
                                  static_cast<const TB8*>(a.B), a.ldb,
                                  a.beta, static_cast<TC*>(a.C), a.ldc, a.stream, a.scales};
    launch<Fp8<TA8, TB8, TC>, false, false, false, P>(k, name, ep);
  };
  with_fp8_types(a, go);
}

// A part's C++ type without namespaces ("WholeTilesOf<256, 4, 256, 128>", "Staged<TmaStore>"), and a rung's
// four (sgemm::Rung::parts, VariantInfo::parts).
template <class T>
std::string part_name() {
  int status = 0;
  char* d = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
  std::string s = status == 0 && d != nullptr ? d : typeid(T).name();
  std::free(d);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 23, "(anonymous namespace)::") == 0) {
      i += 23;
      continue;
    }
    size_t j = i;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    if (j > i && s.compare(j, 2, "::") == 0) {  // a qualifier
      i = j + 2;
    } else if (j > i) {
      out.append(s, i, j - i), i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}
template <class P>
std::vector<std::string> part_names() {
  return {part_name<typename P::Schedule>(), part_name<typename P::Mainloop>(), part_name<typename P::Epilogue>(),
          part_name<typename P::Accumulation>()};
}

}  // namespace rungs::sgemm::ws
