// The kernel of rungs 15 (wgmma_ws) and 17 (wgmma_tma_store), written once: a warp-specialized,
// persistent, clustered wgmma GEMM (sm_90a). What it does and what bounds it: the header comments
// of 15_wgmma_ws.cu (TMA_C = false: the consumers store C straight from registers) and
// 17_wgmma_tma_store.cu (TMA_C = true: through shared memory and TMA stores). Included by those
// two files only.
#pragma once

#include "detail/check.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "detail/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>
#include <string>

namespace rungs::sgemm::ws_kernel {


using detail::ceil_div;

constexpr int BM = 128, BN = 256, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CLUSTER = 2;  // blocks along m sharing B (1 measured 0.73-0.82x cuBLAS bf16, 2: 0.77-0.96x)
constexpr int ROW = 128;                                         // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KB
constexpr int C_BYTES = 16384;  // TMA_C: each consumer's C staging buffer (64 rows x 256 bytes)
template <bool TMA_C>
constexpr int smem_bytes() {
  return STAGES * STAGE_BYTES + (TMA_C ? CONSUMERS * C_BYTES : 0) + 1024 /* alignment */ + 2 * STAGES * 8 /* barriers */;
}
constexpr int BAND = 8;  // cluster rows per band of the tile order
static_assert(smem_bytes<true>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row
  return ROW / int(sizeof(T));
}

// The tiles of cluster-tile t: the cluster's pair of tile rows (2 * cm, 2 * cm + 1) and column tn.
__device__ __forceinline__ void cluster_tile(int t, int cluster_rows, int tiles_n, int& cm, int& tn) {
  detail::swizzle_tile(t, cluster_rows, tiles_n, BAND, cm, tn);
}

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
template <typename T, bool A_MN, bool B_MN, int CL, bool TMA_C>
__global__ void __launch_bounds__(THREADS, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, ArgsT<T> a, int tiles_m, int tiles_n, bool c_vec,
                    int64_t tma_cols) {
  constexpr int BK = bk<T>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  unsigned char* c_buf = smem + STAGES * STAGE_BYTES;  // TMA_C: the consumers' C buffers
  uint64_t* full = reinterpret_cast<uint64_t*>(c_buf + (TMA_C ? CONSUMERS * C_BYTES : 0));
  uint64_t* empty = full + STAGES;
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  detail::init_pipeline_barriers(full, empty, STAGES, CONSUMERS * CL);
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  const detail::ClusterWalk walk = detail::cluster_walk(tiles_m, tiles_n, CL);
  const int KT = static_cast<int>(ceil_div(a.k, BK));

  if (wg == 0) {
    detail::setmaxnreg_dec<40>();
    if (tid == 0) {
      int it = 0;  // k tiles issued by this block so far, over all its tiles: slot it % STAGES
      for (int t = walk.first; t < walk.count; t += walk.stride) {
        int cm, tn;
        cluster_tile(t, walk.rows, tiles_n, cm, tn);
        const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          // Use u = it / STAGES of slot s needs use u - 1 released by the consumers of both blocks.
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
          if constexpr (B_MN) {  // this block's BN / 64 / CL boxes of BK k-rows x 64 n
            constexpr int per = BN / 64 / CL;
            for (int j = int(rank) * per; j < int(rank + 1) * per; ++j)
              detail::tma_load_2d_multicast(sb + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar, all);
          } else {  // this block's BN / CL rows of n, k-contiguous
            detail::tma_load_2d_multicast(sb + rank * (B_BYTES / CL), &map_b, k0, n0 + int(rank) * (BN / CL), bar, all);
          }
        }
      }
    }
  } else {
    detail::setmaxnreg_inc<232>();
    const int cw = wg - 1;  // this consumer's 64 rows of the 128-row tile
    auto release = [&](int slot) {  // both blocks' producers may refill `slot`
      if (tid % 128 == 0)
        for (uint32_t c = 0; c < CL; ++c) detail::mbar_arrive_cluster(&empty[slot], c);
    };
    int it = 0;
    float d[128];
    for (int t = walk.first; t < walk.count; t += walk.stride) {
      int cm, tn;
      cluster_tile(t, walk.rows, tiles_n, cm, tn);
      const int m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN;
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        detail::mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned char* As = smem + s * STAGE_BYTES;
        const unsigned char* Bs = As + A_BYTES;
        detail::wgmma_fence();
        detail::wgmma_stage_64x256<T, A_MN, B_MN>(d, As, Bs, cw);
        detail::wgmma_commit();
        detail::wgmma_wait<1>();  // the MMAs of k tile it - 1 have retired: release its slot
        if (kt > 0) release((it - 1) % STAGES);
      }
      detail::wgmma_wait<0>();
      if (KT > 0) release((it - 1) % STAGES);

      if (TMA_C && n0 + BN <= tma_cols) {
        detail::store_acc_64x256_tma<T>(d, c_buf + cw * C_BYTES, &map_c, m0 + cw * 64, n0, a.alpha, 1 + cw);
      } else {
        detail::store_acc_64xn(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n),
                               a.alpha, a.beta, c_vec);
      }
    }
    if (TMA_C && tid % 128 == 0) detail::bulk_wait<0, false>();  // this consumer's C stores are done
  }
  detail::cluster_sync();  // no block leaves while its peer may still signal or write into it
}

template <typename T, bool A_MN, bool B_MN, int CL, bool TMA_C>
void launch(const ArgsT<T>& a, const char* name) {
  constexpr int BK = bk<T>(), E = int(sizeof(T));
  const CUtensorMap ma = A_MN ? detail::make_tensor_map_2d(a.A, detail::tma_type<T>(), E, a.k, a.m, a.lda, BK, 64)
                              : detail::make_tensor_map_2d(a.A, detail::tma_type<T>(), E, a.m, a.k, a.lda, BM, BK);
  const CUtensorMap mb = B_MN ? detail::make_tensor_map_2d(a.B, detail::tma_type<T>(), E, a.k, a.n, a.ldb, BK, 64)
                              : detail::make_tensor_map_2d(a.B, detail::tma_type<T>(), E, a.n, a.k, a.ldb, BN / CL, BK);
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported(std::string("rungs: ") + name + ": too many tiles for one launch");
  auto* kernel = &wgmma_ws_kernel<T, A_MN, B_MN, CL, TMA_C>;
  constexpr int SMEM_BYTES = smem_bytes<TMA_C>();
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int fit = detail::max_active_clusters(reinterpret_cast<const void*>(kernel), THREADS, SMEM_BYTES, CL, name);
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * E) == 0 && a.ldc % 2 == 0;
  // TMA stores need C's base and rows 16-byte aligned, and write alpha * AB only: beta != 0 (or an
  // unaligned C) takes the direct epilogue. They clip a row at the 16-byte chunk that holds column
  // n - 1, not at n (measured on the H100: n = 1, ldc = 16 wrote 7 elements of bf16 padding; also
  // triton-lang/triton#11583): where n * sizeof(T) is not a multiple of 16, only tiles whose 256
  // columns lie inside C use them (tma_cols = n), the last tile column stores directly.
  const bool tma_c = TMA_C && a.beta == 0.0f && reinterpret_cast<uintptr_t>(a.C) % 16 == 0 && (a.ldc * E) % 16 == 0;
  const int64_t tma_cols = !tma_c ? 0 : (a.n * E) % 16 == 0 ? INT64_MAX : a.n;
  const CUtensorMap mc = tma_c ? detail::make_tensor_map_2d(a.C, detail::tma_type<T>(), E, a.m, a.n, a.ldc, 64, 128 / E)
                               : CUtensorMap{};
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, SMEM_BYTES, CL, a.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, ma, mb, mc, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                c_vec, tma_cols));
  detail::check_launch(name);
}

template <bool TMA_C, typename T>
void run_any(const ArgsT<T>& user, const char* name) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    if constexpr (std::is_same_v<T, float>) {
      if constexpr (!decltype(ta)::value && decltype(tb)::value) {  // operands() made it nt
        launch<T, false, false, CLUSTER, TMA_C>(a, name);
      }
    } else {
      launch<T, decltype(ta)::value, !decltype(tb)::value, CLUSTER, TMA_C>(a, name);
    }
  });
}

}  // namespace rungs::sgemm::ws_kernel
