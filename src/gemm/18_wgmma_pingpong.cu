// Rung 18, wgmma_pingpong: rung 17's pieces (TMA producer warpgroup, persistent grid of clusters
// of 2 multicasting B, TMA-store epilogue) in a ping-pong schedule (sm_90a); f16 and bf16, any
// transpose (unaligned operands copied aligned as in rung 15). tf32: not here (Unsupported).
// Adds over 17 wgmma_tma_store: each consumer warpgroup owns whole 128 x 128 tiles (two
// wgmma.m64n128 per k16, 128 accumulator registers) and the two take a block's tiles in turn:
// consumer 0 runs the mainloop of the block's tiles 0, 2, 4..., consumer 1 of tiles 1, 3, 5...
// Only one consumer issues MMAs at a time (an mbarrier per consumer hands the turn over right
// after a consumer has issued its last k tile), so while one stores its tile the other keeps the
// tensor cores busy: the epilogue is hidden instead of stalling both. The producer fills one ring
// of 6 stages of 32 KB (A 128 x 64, B 128 x 64) in the blocks' tile order; each consumer's 16 KB
// C buffer stages its tile in two 64-row pieces.
// Prediction: 4096^3 bf16 from rung 17's 0.99x to 1.02-1.05x cuBLAS
// (its 4 % of warp samples in the epilogue go, the tensor cores stay busy across tiles), 2048^3
// from 0.96 to ~1.0; a miss if its 1.5x operand traffic per MMA from L2 binds.
// Measured on the H100 (75caa5e, interleaved with cuBLAS): a miss. bf16 0.83 / 0.80 / 0.80x at
// 2048 / 4096 / 8192^3 (514 / 633 / 583 TFLOP/s; rung 17 in the same run 0.95 / 0.99 / 1.01x), f16
// 0.82 / 0.80 / 0.80x. Correct at every tested shape, memcheck and racecheck clean.
// Not L2 bytes alone: clusters of 2 x 2 tiles (A multicast along n as well: rung 17's L2 bytes per
// MMA) measured worse, 0.61 / 0.73 / 0.77x (ee1259b; clusters of 4 cost other things): not kept.
// Not shared memory either: an account of its bandwidth (128 B
// per SM cycle; an m64nNk16 wgmma with both operands in shared memory reads B at 64 B/cycle at
// full tensor rate whatever N is, A at 4096 / N, and the TMA fills write 4096 (1 / BM + 1 / BN):
// rung 17 128 B/cycle, this rung 160, so at most 0.80) matched the measured ratio, but ncu
// (4096^3 bf16, 6f94199) found no saturated unit: tensor pipe 69.5 % of elapsed cycles (the
// busiest), L2 76 %, DRAM 29 %; rung 17 beside it: shared-memory pipe 88 %, L2 60 %.
// Nor the chain of dependent wgmmas: scripts/experiments/wgmma_probe.cu (a5868ff) runs one
// warpgroup's two m64n128 chains with wait 1, as here, at 2047 of 2048 MAC per cycle per SM.
// Bound, then, by feeding the tensor cores from one warpgroup at a time (the producer, and the
// hand-over between the consumers): not pinned down (docs/gemm_tc.md). Kept as the measured
// miss it is.
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/mma_stage.cuh"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>

namespace rungs::sgemm::wgmma_pingpong {

namespace {

using detail::ceil_div;

constexpr int BM = 128, BN = 128, STAGES = 6;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CL = 2;                                           // blocks along m sharing B
constexpr int ROW = 128;                                        // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 16 KB
constexpr int C_BYTES = 16384;  // each consumer's C buffer: 64 rows x 256 bytes
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + CONSUMERS * C_BYTES + 1024 /* alignment */ +
                           (2 * STAGES + CONSUMERS) * 8 /* barriers */;
constexpr int BAND = 8;  // cluster rows per band of the tile order
static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row
  return ROW / int(sizeof(T));
}

template <typename T, int TA, int TB>
__device__ __forceinline__ void wgmma_128(float (&d)[64], uint64_t da, uint64_t db) {
  detail::wgmma<128, T, T, TA == 1, TB == 1>(d, da, db);
}

// One stage for a consumer's 128 x 128 tile: per k16, rows 0-63 and 64-127 of A (d0, d1) against
// the 128 columns of B. Layouts as rung 15's (detail::wgmma_stage_64xn): A K-major 128 rows of
// 128 B, or MN-major boxes of 64 m x BK k-rows (box h = rows 64h..); B K-major 128 rows of 128 B,
// or MN-major 2 boxes of 64 n x BK k-rows (LBO = one box).
template <typename T, bool A_MN, bool B_MN>
__device__ __forceinline__ void stage_128x128(float (&d0)[64], float (&d1)[64], const unsigned char* As,
                                              const unsigned char* Bs) {
  constexpr int BK = bk<T>(), KI = 16, E = int(sizeof(T));
#pragma unroll
  for (int kk = 0; kk < BK / KI; ++kk) {
    const uint64_t db = B_MN ? detail::smem_desc(Bs + kk * KI * ROW, BK * ROW, 1024)
                             : detail::smem_desc(Bs + kk * KI * E, 16, 1024);
    const uint64_t da0 = A_MN ? detail::smem_desc(As + kk * KI * ROW, BK * ROW, 1024)
                              : detail::smem_desc(As + kk * KI * E, 16, 1024);
    const uint64_t da1 = A_MN ? detail::smem_desc(As + BK * ROW + kk * KI * ROW, BK * ROW, 1024)
                              : detail::smem_desc(As + 64 * ROW + kk * KI * E, 16, 1024);
    wgmma_128<T, A_MN ? 1 : 0, B_MN ? 1 : 0>(d0, da0, db);
    wgmma_128<T, A_MN ? 1 : 0, B_MN ? 1 : 0>(d1, da1, db);
  }
}

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
template <typename T, bool A_MN, bool B_MN>
__global__ void __launch_bounds__(THREADS, 1)
    pingpong_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, ArgsT<T> a, int tiles_m, int tiles_n, bool c_vec,
                    int64_t tma_cols) {
  constexpr int BK = bk<T>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  unsigned char* c_buf = smem + STAGES * STAGE_BYTES;
  uint64_t* full = reinterpret_cast<uint64_t*>(c_buf + CONSUMERS * C_BYTES);
  uint64_t* empty = full + STAGES;
  uint64_t* turn = empty + STAGES;  // turn[w]: consumer w may issue its next tile's MMAs
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  // A slot is read by one consumer per block: empty counts one arrival from each block.
  detail::init_pipeline_barriers(full, empty, STAGES, CL);
  if (tid == 0) {
    detail::mbar_init(&turn[0], 1), detail::mbar_init(&turn[1], 1);
    detail::mbar_init_fence();
  }
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  const detail::ClusterWalk walk = detail::cluster_walk(tiles_m, tiles_n, CL);
  const int KT = static_cast<int>(ceil_div(a.k, BK));

  if (wg == 0) {
    detail::setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0;  // k tiles issued by this block so far, over its tiles in order: slot it % STAGES
      for (int t = walk.first; t < walk.count; t += walk.stride) {
        int cm, tn;
        detail::swizzle_tile(t, walk.rows, tiles_n, BAND, cm, tn);
        const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) detail::mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
          unsigned char* st = smem + s * STAGE_BYTES;
          uint64_t* bar = &full[s];
          const int k0 = kt * BK;
          detail::mbar_expect_tx(bar, STAGE_BYTES);  // A (own) + both halves of B
          if constexpr (A_MN) {  // boxes of BK k-rows x 64 m
            for (int j = 0; j < BM / 64; ++j) detail::tma_load_2d(st + j * BK * ROW, &map_a, m0 + 64 * j, k0, bar);
          } else {
            detail::tma_load_2d(st, &map_a, k0, m0, bar);
          }
          unsigned char* sb = st + A_BYTES;
          constexpr uint16_t all = (1u << CL) - 1;
          if constexpr (B_MN) {  // this block's box of BK k-rows x 64 n (BN / 64 / CL = 1)
            detail::tma_load_2d_multicast(sb + rank * BK * ROW, &map_b, n0 + 64 * int(rank), k0, bar, all);
          } else {  // this block's BN / CL rows of n, k-contiguous
            detail::tma_load_2d_multicast(sb + rank * (B_BYTES / CL), &map_b, k0, n0 + int(rank) * (BN / CL), bar, all);
          }
        }
      }
    }
  } else {
    detail::setmaxnreg_inc<232>();
    const int w = wg - 1;  // this consumer takes the block's tiles w, w + 2, ...
    const bool leader = tid % 128 == 0;
    auto release = [&](int slot) {  // both blocks' producers may refill `slot`
      if (leader)
        for (uint32_t c = 0; c < CL; ++c) detail::mbar_arrive_cluster(&empty[slot], c);
    };
    unsigned turn_phase = 0;
    float d0[64], d1[64];
    for (int j = w;; j += 2) {
      const int t = walk.first + j * walk.stride;
      if (t >= walk.count) break;
      int cm, tn;
      detail::swizzle_tile(t, walk.rows, tiles_n, BAND, cm, tn);
      const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
      if (j > 0) {  // the other consumer has issued its tile's MMAs (consumer 0 starts at once)
        detail::mbar_wait(&turn[w], turn_phase);
        turn_phase ^= 1;
      }
#pragma unroll
      for (int i = 0; i < 64; ++i) d0[i] = 0.0f, d1[i] = 0.0f;
      int it = j * KT;  // every tile has KT k tiles: this tile's first slot use
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        detail::mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned char* As = smem + s * STAGE_BYTES;
        detail::wgmma_fence();
        stage_128x128<T, A_MN, B_MN>(d0, d1, As, As + A_BYTES);
        detail::wgmma_commit();
        detail::wgmma_wait<1>();  // the MMAs of k tile it - 1 have retired: release its slot
        if (kt > 0) release((it - 1) % STAGES);
      }
      if (leader) detail::mbar_arrive(&turn[1 - w]);  // all MMAs issued: the other consumer's turn
      detail::wgmma_wait<0>();
      if (KT > 0) release((it - 1) % STAGES);
      if (n0 + BN <= tma_cols) {
        unsigned char* buf = c_buf + w * C_BYTES;
        detail::store_acc_64x256_tma<T, BN>(d0, buf, &map_c, m0, n0, a.alpha, 1 + w);
        detail::store_acc_64x256_tma<T, BN>(d1, buf, &map_c, m0 + 64, n0, a.alpha, 1 + w);
      } else {
        const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
        detail::store_acc_64xn<T, BN>(d0, a.C, a.ldc, m0, n0, m, n, a.alpha, a.beta, c_vec);
        detail::store_acc_64xn<T, BN>(d1, a.C, a.ldc, m0 + 64, n0, m, n, a.alpha, a.beta, c_vec);
      }
    }
    if (leader) detail::bulk_wait<0, false>();  // this consumer's C stores are done
  }
  detail::cluster_sync();  // no block leaves while its peer may still signal or write into it
}

template <typename T, bool A_MN, bool B_MN>
void launch(const ArgsT<T>& a) {
  constexpr int BK = bk<T>(), E = int(sizeof(T));
  const CUtensorMap ma = A_MN ? detail::make_tensor_map_2d(a.A, detail::tma_type<T>(), E, a.k, a.m, a.lda, BK, 64)
                              : detail::make_tensor_map_2d(a.A, detail::tma_type<T>(), E, a.m, a.k, a.lda, BM, BK);
  const CUtensorMap mb = B_MN ? detail::make_tensor_map_2d(a.B, detail::tma_type<T>(), E, a.k, a.n, a.ldb, BK, 64)
                              : detail::make_tensor_map_2d(a.B, detail::tma_type<T>(), E, a.n, a.k, a.ldb, BN / CL, BK);
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX / 2) throw Unsupported("rungs: wgmma_pingpong: too many tiles for one launch");
  auto* kernel = &pingpong_kernel<T, A_MN, B_MN>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int fit =
      detail::max_active_clusters(reinterpret_cast<const void*>(kernel), THREADS, SMEM_BYTES, CL, "wgmma_pingpong");
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * E) == 0 && a.ldc % 2 == 0;
  // TMA stores as rung 17 (gemm/wgmma_ws.cuh): beta == 0, C 16-byte aligned, and only tiles whose
  // columns lie inside C unless n's row bytes are a multiple of 16 (TMA clips columns at 16 bytes).
  const bool tma_c = a.beta == 0.0f && reinterpret_cast<uintptr_t>(a.C) % 16 == 0 && (a.ldc * E) % 16 == 0;
  const int64_t tma_cols = !tma_c ? 0 : (a.n * E) % 16 == 0 ? INT64_MAX : a.n;
  const CUtensorMap mc = tma_c ? detail::make_tensor_map_2d(a.C, detail::tma_type<T>(), E, a.m, a.n, a.ldc, 64, 128 / E)
                               : CUtensorMap{};
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, SMEM_BYTES, CL, a.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, ma, mb, mc, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                c_vec, tma_cols));
  detail::check_launch("wgmma_pingpong");
}

template <typename T>
void run_any(const ArgsT<T>& user) {
  detail::require_sm90a("wgmma_pingpong");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b);
  detail::dispatch_trans(a.ta, a.tb,
                         [&](auto ta, auto tb) { launch<T, decltype(ta)::value, !decltype(tb)::value>(a); });
}

}  // namespace

void run_f16(const ArgsH& a) { run_any(a); }
void run_bf16(const ArgsBF& a) { run_any(a); }

}  // namespace rungs::sgemm::wgmma_pingpong
