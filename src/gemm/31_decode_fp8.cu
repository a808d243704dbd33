// Rung 31, decode_fp8: rung 26's decode design for fp8 weights and activations (e4m3 or e5m2 each, any
// pair), bf16 or float C, all three scalings; m > 128: rungs::Unsupported. W stored k x n, A stored
// k x m and rows TMA cannot address are copied K-major and aligned first (pack::operands_fp8: wgmma
// reads 8-bit operands K-major only), a copy of W that costs more than the product at decode shapes.
// Adds over 26 decode_wgmma: wgmma.m64nNk32 (detail::wgmma_narrow_fp8, N = m rounded up as in rung 26,
// a kernel per N and type pair) and rung 29's promotion every k tile, in the transposed frame. A block:
// 128 rows of W in two consumer warpgroups, all N rows of A; the producer is a whole warpgroup so that
// setmaxnreg gives each consumer 232 registers (d and p take 128 at N = 128; 168 spills). A stage is a
// 128 x 128-byte box of W (128 fp8 of k) and an N x 128-byte box of A; 13 / 12 / 11 / 9 / 7 stages at
// N = 8 / 16 / 32 / 64 / 128 (208-112 KB of W in flight, one block per SM). Each stage's four m64nNk32
// sum into p (N / 2 registers), waited for, the stage released, then d += p (tensor, outer) or d +=
// a[i][kt] b[n0 / 128][kt] p (block128: the block's 128 rows of W are one block of b). At N >= 32 the
// k tile's N products a[i][kt] b are staged once per block in shared memory, a k tile ahead; at
// N <= 16 each thread loads its own (the staging's barrier costs more there). Tensor and outer scales
// multiply d before rung 26's transposed store; split-K in a cluster and the 64-byte L2 promotion as
// rung 26 (0-4 % faster than 256 on the H200).
// Bounded by: reading W once (a bare read of 58.7 MB reaches 85 % of DRAM on the H100, 72-78 % on the
// H200); the whole-tile grid (112 blocks at n = 7168, 1.7 waves at 28672); the split sums' exchange;
// each consumer's wait for its MMAs every k tile (~40 % of a k tile's DRAM time at N = 128, hidden).
// Prediction: 86-90 % of DRAM at 28672 x 8192, m <= 64 (H100, outer); measured: 86-90 %, 1.06-1.19x
// cuBLASLt's outer (82 %, 0.98x at m = 128).
// Own kernel: on the skeleton (rung 26's parts with a promotion part for the swapped product) it ran
// 1.02-1.04x this kernel's time at 7168 x 8192 and at m = 128 (H200, interleaved; one ncu launch at
// 128 x 28672 x 8192 tensor: 85.5 against 82.5 us). scripts/experiments/ws_before_after.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <cuda_fp8.h>

#include <algorithm>

namespace rungs::sgemm::decode_fp8 {

namespace {

using decode_wgmma::ROW;      // 128 bytes per shared-memory row
constexpr int BM = 128;             // rows of W per block
constexpr int W_BYTES = BM * ROW;  // a 128 x 128-byte box of W
using detail::ceil_div;

constexpr int BK = 128;       // k per stage: one 128-byte row of fp8
constexpr int THREADS = 384;  // warpgroups 0 and 1 consume, warpgroup 2 produces (one thread issues TMA)
constexpr int MAX_STAGES = 16;
constexpr int CONSUMERS = 256;  // the two consumer warpgroups' threads

template <int N>
constexpr int stage_bytes() {
  return W_BYTES + N * ROW;
}
template <int N>
constexpr int stages() {  // as many as fit the 227 KB a Hopper block may have, at most MAX_STAGES
  constexpr int fit = (227 * 1024 - 1024 - 2 * MAX_STAGES * 8) / stage_bytes<N>();
  return fit < MAX_STAGES ? fit : MAX_STAGES;
}
template <int N>
constexpr int smem_bytes() {
  return stages<N>() * stage_bytes<N>() + 1024 /* alignment */ + 2 * stages<N>() * 8 /* barriers */;
}

// The problem as the kernels see it (the operands travel in the tensor maps).
template <typename TC>
struct Params {
  int64_t m, n, k;
  float alpha, beta;
  TC* C;
  int64_t ldc;
  Scales scales;
};

// Block b = splits * x + z: W rows 128 x .., all rows of A (m <= N), k tiles of split z (the
// cluster of `splits` blocks along x, rank z). TW: W's fp8 type (wgmma's A operand), TA: A's
// (wgmma's B). One split: C = alpha * acc + beta * C; splits: the scaled fp32 sums meet in the
// cluster (decode_wgmma::add_split_sums).
template <typename TW, typename TA, typename TC, int N>
__global__ void __launch_bounds__(THREADS, 1)
    decode_fp8_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a,
                      Params<TC> a, int splits) {
  constexpr int STAGES = stages<N>(), STAGE_BYTES = stage_bytes<N>();
  static_assert(smem_bytes<N>() + 2 * N * 4 <= 227 * 1024, "with the staged scales, fits a Hopper block's 227 KB");
  static_assert(STAGES >= 2, "a pipeline");
  static_assert(N * decode_wgmma::sums_ld<BM>() * 4 <= STAGES * STAGE_BYTES, "the sums fit where the stages were");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int n0 = static_cast<int>(blockIdx.x) / splits * BM, split = static_cast<int>(blockIdx.x) % splits;
  const int64_t KT = ceil_div(a.k, BK);
  const int kt0 = static_cast<int>(KT * split / splits), count = static_cast<int>(KT * (split + 1) / splits) - kt0;

  if (wg == 2) {  // the producer: k tile kt0 + i into stage i % STAGES once its use i / STAGES - 1 is released
    detail::setmaxnreg_dec<40>();
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int i = 0; i < count; ++i) {
        const int s = i % STAGES;
        if (i >= STAGES) detail::mbar_wait(&empty[s], ((i / STAGES) + 1) & 1);
        unsigned char* st = smem + s * STAGE_BYTES;
        const int k0 = (kt0 + i) * BK;
        detail::mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-range parts of a box count: zero-filled
        detail::tma_load_2d(st, &map_w, k0, n0, &full[s]);
        detail::tma_load_2d(st + W_BYTES, &map_a, k0, 0, &full[s]);
      }
    }
    if (splits > 1) {  // the cluster barriers of the split sums (the consumers add them: 40 registers here)
      __syncwarp();
      detail::cluster_sync();
      detail::cluster_sync();
    }
    return;
  }

  detail::setmaxnreg_inc<232>();  // d and p: 128 registers at N = 128, beside the block128 scales
  // Accumulator element d[4j + e] of warp w, lane 4g + q: row 16w + g + 8(e / 2) of this
  // warpgroup's 64 rows of W, column 8j + 2q + e % 2 (a row of A).
  const int t = tid % 128, lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const int m = static_cast<int>(a.m), n = static_cast<int>(a.n);
  constexpr int J = N / 8;
  const bool block = a.scales.kind == Scaling::block128;
  const float* __restrict__ sa = a.scales.a;
  const float* __restrict__ sb = a.scales.b;
  const int KTi = static_cast<int>(KT);
  float d[N / 2], p[N / 2];  // the fp32 sums and the tensor core's partial sum of one k tile
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f, p[i] = 0.0f;
  // block128: the scale of each of this thread's rows of A (clamped into the array: a row past m
  // multiplies products that are never stored) times the tile's b (its 128 rows of W are one
  // 128-row block of b). N <= SCALES_IN_REGISTERS: each thread reads its N / 4 rows' scales into
  // registers before the stage's wait. Larger N: a thread would issue N / 4 loads a k tile, more
  // than the tile's DRAM time at N = 128, so the k tile's N scales are staged once per block in
  // shared memory instead: consumer thread tid < N loads row tid's a k tile ahead, both warpgroups
  // read their rows from there (two buffers, one barrier of the consumers a k tile).
  constexpr int SCALES_IN_REGISTERS = 16;
  constexpr bool STAGED = N > SCALES_IN_REGISTERS;
  __shared__ float a_scales[2][STAGED ? N : 1];
  const float* __restrict__ sa_row = sa + min(tid, m - 1) * KTi;  // read by tid < N only (STAGED)
  const float* __restrict__ sb_tile = sb + (n0 / BM) * KT;         // this tile's 128-row block of b
  float next = 0.0f;
  if (STAGED && block && tid < N && count > 0) next = __ldg(sa_row + kt0) * __ldg(sb_tile + kt0);
  for (int i = 0; i < count; ++i) {
    const int kt = kt0 + i, s = i % STAGES;
    float sc[STAGED ? 1 : 2 * J];
    if (block) {
      if constexpr (STAGED) {
        if (tid < N) a_scales[i & 1][tid] = next;
        detail::named_barrier(2, CONSUMERS);  // this tile's scales stored; all reads of i - 2's done
        if (tid < N && i + 1 < count) next = __ldg(sa_row + kt + 1) * __ldg(sb_tile + kt + 1);
      } else {
        const float b = __ldg(sb_tile + kt);
        const float* __restrict__ sak = sa + kt;  // row c of a at sak[c * KTi] (m <= 128: fits an int)
#pragma unroll
        for (int j = 0; j < J; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) sc[2 * j + e] = b * __ldg(sak + min(8 * j + 2 * q + e, m - 1) * KTi);
      }
    }
    detail::mbar_wait(&full[s], (i / STAGES) & 1);
    const unsigned char* Ws = smem + s * STAGE_BYTES;
    const unsigned char* As = Ws + W_BYTES;
    detail::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      // Both operands K-major: W's 64 rows of this warpgroup, A's N rows; k32 steps of 32 bytes.
      const uint64_t dw = detail::smem_desc(Ws + wg * 64 * ROW + kk * 32, 16, 1024);
      const uint64_t da = detail::smem_desc(As + kk * 32, 16, 1024);
      detail::wgmma<N, TW, TA>(p, dw, da, kk > 0);
    }
    detail::wgmma_commit();
    detail::wgmma_wait<0>();  // the partial sum is complete and the stage read
    if (t == 0) detail::mbar_arrive(&empty[s]);
    if (block) {
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x;
          if constexpr (STAGED) x = a_scales[i & 1][8 * j + 2 * q + e];
          else x = sc[2 * j + e];
          d[4 * j + e] = fmaf(x, p[4 * j + e], d[4 * j + e]);
          d[4 * j + 2 + e] = fmaf(x, p[4 * j + 2 + e], d[4 * j + 2 + e]);
        }
    } else {
#pragma unroll
      for (int i2 = 0; i2 < N / 2; ++i2) d[i2] += p[i2];
    }
  }

  // The scales that do not depend on k.
  const int r0 = n0 + wg * 64 + 16 * w + g;  // this thread's rows of W: r0, r0 + 8
  if (a.scales.kind == Scaling::tensor) {
    const float s = __ldg(sa) * __ldg(sb);
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[i] *= s;
  } else if (a.scales.kind == Scaling::outer) {
    const float b0 = r0 < n ? __ldg(sb + r0) : 0.0f, b1 = r0 + 8 < n ? __ldg(sb + r0 + 8) : 0.0f;
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = 8 * j + 2 * q + e;
        const float x = c < m ? __ldg(sa + c) : 0.0f;
        d[4 * j + e] *= x * b0, d[4 * j + 2 + e] *= x * b1;
      }
  }

  // d holds C^T's rows n0 + 64 wg .. (C's columns) and columns 0 .. N - 1 (C's rows).
  if (splits == 1) {
    detail::store_acc_64xn_t<TC, N>(d, a.C, a.ldc, n0 + wg * 64, 0, n, m, a.alpha, a.beta);
    return;
  }
  float* sums = reinterpret_cast<float*>(smem);  // where the stages were
  detail::named_barrier(1, CONSUMERS);           // both warpgroups' MMAs have read their last stage
  decode_wgmma::stash_sums<N, BM>(sums, d, wg * 64, t);
  __syncwarp();
  detail::cluster_sync();  // every block of the cluster (the tile's splits) holds its sums
  decode_wgmma::add_split_sums<TC, N, BM, CONSUMERS>(sums, tid, split, splits, a.C, a.ldc, n0, 0, n, m, a.alpha,
                                                      a.beta);
  __syncwarp();
  detail::cluster_sync();  // no block leaves while the others still read its shared memory
}

template <typename TW, typename TA, typename TC, int N>
void launch(const ArgsF8& a) {
  constexpr int SMEM = smem_bytes<N>();
  // W (n x k) in 128 x 128 boxes, A (m x k) in N x 128 boxes, both bytes with the 128-byte swizzle,
  // L2 fills promoted to 64 bytes (the header says why).
  constexpr CUtensorMapL2promotion PROMO = CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  const CUtensorMap map_w =
      detail::make_tensor_map_2d(a.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, a.n, a.k, a.ldb, BM, BK, PROMO);
  const CUtensorMap map_a =
      detail::make_tensor_map_2d(a.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, a.m, a.k, a.lda, N, BK, PROMO);
  const Params<TC> p{a.m, a.n, a.k, a.alpha, a.beta, static_cast<TC*>(a.C), a.ldc, a.scales};
  const int64_t tiles = ceil_div(a.n, BM), KT = ceil_div(a.k, BK), sms = detail::sm_count();
  auto* kernel = &decode_fp8_kernel<TW, TA, TC, N>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  // Fewer splits where a cluster of them does not fit one GPC.
  const int64_t splits = decode_wgmma::fitting_splits(reinterpret_cast<const void*>(kernel), THREADS, SMEM,
                                                      decode_wgmma::split_count(tiles, KT, sms), "decode_fp8");
  const auto blocks = static_cast<unsigned>(tiles * splits);
  if (splits == 1) {
    kernel<<<blocks, THREADS, SMEM, a.stream>>>(map_w, map_a, p, 1);
  } else {
    const detail::ClusterLaunch l(blocks, THREADS, SMEM, static_cast<int>(splits), a.stream);
    RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, map_w, map_a, p, static_cast<int>(splits)));
  }
  detail::check_launch("decode_fp8");
}

}  // namespace

void run_fp8(const ArgsF8& user) {
  if (user.m > 128) detail::unsupported("decode_fp8", "m <= 128");
  detail::require_sm90a("decode_fp8");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernels
  const ArgsF8 a = pack::operands_fp8(user, keep_a, keep_b);  // ta == N, tb == T, TMA-addressable
  with_fp8_types(a, [&](auto a8, auto w8, auto c) {  // W is the product's B
    decode_wgmma::with_n(a.m, [&](auto nn) {
      launch<decltype(w8), decltype(a8), decltype(c), decltype(nn)::value>(a);
    });
  });
}

}  // namespace rungs::sgemm::decode_fp8
