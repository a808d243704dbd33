// Rung 27, decode_streamk: rung 26 (decode shapes, C^T = W A^T on wgmma with m as N, W n x k or k x n
// streamed by TMA) with a stream-K schedule; f16 and bf16, sm_90a; copies as rung 26's.
// Adds over 26 decode_wgmma, in the Schedule: the work is the list of units (tile, k tile), u = tile
// * KT + kt (tile = group of A's rows * tiles_n + tile of BM rows of W, BM chosen as rung 26 does), cut
// into P contiguous ranges as equal as integers allow, P = the SM count (fewer where a range would be
// under 4 k tiles), one persistent block per range. A range crosses tiles: the block sums each tile's
// segment in registers and the producer streams the whole range without a pause (its stage index and
// barrier phases run on), so every SM keeps 112-160 KB of W in flight to its end and all SMs get the
// same bytes (n = 7168: 132 blocks where rung 26 runs 112). A whole-tile segment is stored as rung 26
// stores it. A cut one (only a block's first and last can be) leaves its fp32 sums in one of the
// block's two workspace slots (2 P slots of BM x N floats: 17 MB at 128 x 128 on 132 SMs; none when
// no tile is cut), and a programmatic dependent launch, scheduled while the grid runs and waiting in
// griddepcontrol.wait, adds each cut tile's segments in k order and applies alpha / beta
// (deterministic, no atomics; BM N / 1024 blocks per cut tile, one 16-byte load per thread and
// segment, so the loads are independent, not a chain of L2 round trips).
// Bounded by: reading W once with equal shares (equal bytes need not be equal time: the slowest SM
// ends last, where rung 26's extra blocks go to whichever SM is free); the cut tiles' sums and the
// second pass after the grid; A's boxes re-read from L2, now at 132 k offsets.
// Prediction: the second pass as one round of loads, launched under the grid, removes most of the
// excess over rung 26; measured: halved, 3-8 us above rung 26 at 7168 x 8192 (H100), still slower than
// rung 26 at every decode shape.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"
#include "core/scratch.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_streamk {

namespace {

using namespace decode_wgmma;
using detail::ceil_div;

constexpr int MIN_KT_PER_RANGE = 4;

// The block that owns unit u when `units` are cut into P ranges, range b = [units b / P,
// units (b + 1) / P): the last b whose range starts at or before u.
__host__ __device__ __forceinline__ int64_t owner(int64_t u, int64_t units, int64_t P) {
  return ((u + 1) * P - 1) / units;
}
__host__ __device__ __forceinline__ int64_t range_start(int64_t b, int64_t units, int64_t P) {
  return units * b / P;
}

// Block b walks units [start(b), start(b + 1)). A whole tile: C = alpha * acc + beta * C; a cut
// segment: its fp32 sums go to slot 2 b (the block's first segment) or 2 b + 1 (its last), laid
// out [row of A - m0][row of W - n0] (BM x N floats). With a cut tile, the second pass (launched
// programmatically) may be scheduled at once.
template <typename T, int N, int H, bool W_MN>
__global__ void __launch_bounds__(THREADS, 1)
    decode_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, ArgsT<T> a,
                  float* part, int64_t units, int tiles_n, int64_t KT) {
  constexpr int STAGES = stages<N, H>(), STAGE_BYTES = stage_bytes<N, H>(), BM = bm<H>();
  static_assert(smem_bytes<N, H>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");
  static_assert(STAGES >= 2, "a pipeline");
  extern __shared__ unsigned char smem_raw[];
  if (part != nullptr) detail::griddep_launch_dependents();
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  const int64_t b = blockIdx.x, P = gridDim.x;
  const int64_t u0 = range_start(b, units, P), u1 = range_start(b + 1, units, P);

  if (wg == 2) {  // the producer warp: the whole range, across tile boundaries
    if (tid == 256) {
      detail::tma_prefetch(&map_w);
      detail::tma_prefetch(&map_a);
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t tile = u / KT;
        const int n0 = static_cast<int>(tile % tiles_n) * BM, m0 = static_cast<int>(tile / tiles_n) * N;
        produce_k_tile<N, H, W_MN>(smem, full, empty, static_cast<int>(u - u0), &map_w, &map_a,
                                   static_cast<int>(u % KT), n0, m0);
      }
    }
    return;
  }

  const int n = static_cast<int>(a.n), m = static_cast<int>(a.m);
  float d[H][N / 2];
  for (int64_t u = u0; u < u1;) {  // one segment (the range's part of one tile) per pass
    const int64_t tile = u / KT, seg0 = u, seg1 = u1 < (tile + 1) * KT ? u1 : (tile + 1) * KT;
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
      for (int i = 0; i < N / 2; ++i) {
        d[h][i] = 0.0f;
        asm volatile("" : "+f"(d[h][i])::"memory");  // the zeros are set here, not moved among the wgmmas
      }
    for (; u < seg1; ++u) consume_k_tile<T, N, H, W_MN>(smem, full, empty, static_cast<int>(u - u0), d, wg, tid);
    detail::wgmma_wait<0>();

    // d[h] holds C^T's rows n0 + 64 (H wg + h) .. (C's columns) and columns m0 .. (C's rows).
    const int n0 = static_cast<int>(tile % tiles_n) * BM, m0 = static_cast<int>(tile / tiles_n) * N;
    if (seg1 - seg0 == KT) {
#pragma unroll
      for (int h = 0; h < H; ++h)
        detail::store_acc_64xn_t<T, N>(d[h], a.C, a.ldc, n0 + (wg * H + h) * 64, m0, n, m, a.alpha, a.beta);
    } else {
      float* slot = part + (2 * b + (seg0 == u0 ? 0 : 1)) * (BM * N);
#pragma unroll
      for (int h = 0; h < H; ++h)
        detail::store_acc_64xn_t<float, N>(d[h], slot, BM, (wg * H + h) * 64, 0, BM, N, 1.0f, 0.0f);
    }
  }
}

// Blocks (j, ..): the tile holding the start of range j + 1, if that start cuts it and range j is the
// tile's first (so each cut tile is done once): C = alpha * (its segments' sums, in k order, i.e.
// in block order) + beta * C (beta == 0: C unread). Launched as a programmatic dependent of
// decode_kernel: it waits for that grid's partial sums.
template <typename T, int N, int H>
__global__ void __launch_bounds__(256)
    add_segments(const float* __restrict__ part, ArgsT<T> a, int64_t units, int64_t P, int tiles_n, int64_t KT) {
  constexpr int BM = bm<H>();
  detail::griddep_wait();
  const int64_t j = blockIdx.x, cut = range_start(j + 1, units, P), tile = cut / KT;
  if (cut % KT == 0 || owner(tile * KT, units, P) != j) return;
  const int64_t b1 = owner((tile + 1) * KT - 1, units, P);
  const int n0 = static_cast<int>(tile % tiles_n) * BM, m0 = static_cast<int>(tile / tiles_n) * N;
  // Block j's segment is its last (slot 2j + 1) unless its range starts at the tile's start; the
  // later blocks' segments are their first (slot 2b).
  const int64_t first_slot = 2 * j + (range_start(j, units, P) < tile * KT ? 1 : 0);
  // Block (j, y) adds quad y * 256 + t of the tile: 4 consecutive rows of W (columns of C), one
  // 16-byte load per segment; every quad's loads are independent of the others', spread over
  // BM N / 1024 blocks per cut tile (a loop over the tile in one block would wait out an L2
  // latency per iteration: 64 at N = 128).
  const int e = (static_cast<int>(blockIdx.y) * 256 + static_cast<int>(threadIdx.x)) * 4;
  const int row = m0 + e / BM, col = n0 + e % BM;
  if (row >= a.m || col >= a.n) return;
  float4 acc = __ldcg(reinterpret_cast<const float4*>(part + first_slot * (BM * N) + e));
  for (int64_t b = j + 1; b <= b1; b += 4) {  // the later segments' loads 4 at a time, added in order
    float4 v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (b + i <= b1) v[i] = __ldcg(reinterpret_cast<const float4*>(part + 2 * (b + i) * (BM * N) + e));
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (b + i <= b1) acc.x += v[i].x, acc.y += v[i].y, acc.z += v[i].z, acc.w += v[i].w;
  }
  const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (col + i < a.n) detail::store_c(a.C, a.ldc, row, col + i, v[i], a.alpha, a.beta);
}

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  constexpr int SMEM = smem_bytes<N, H>(), BM = bm<H>();
  const Maps maps = make_maps<T, N, H, W_MN>(a);
  const int64_t tiles_n = ceil_div(a.n, BM), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  const int64_t units = tiles_n * groups * KT;
  const int64_t P = std::max<int64_t>(1, std::min<int64_t>(detail::sm_count(), units / MIN_KT_PER_RANGE));
  bool cut = false;  // does some range start inside a tile?
  for (int64_t b = 1; b < P; ++b) cut = cut || range_start(b, units, P) % KT != 0;
  detail::Scratch part(cut ? static_cast<size_t>(2 * P * BM * N) * sizeof(float) : 0, a.stream);
  auto* kernel = &decode_kernel<T, N, H, W_MN>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  kernel<<<static_cast<unsigned>(P), THREADS, SMEM, a.stream>>>(maps.w, maps.a, a, part.as<float>(), units,
                                                                 static_cast<int>(tiles_n), KT);
  detail::check_launch("decode_streamk");
  if (cut) {
    static_assert(BM * N % 1024 == 0, "whole blocks of 256 quads");
    launch_dependent(&add_segments<T, N, H>, dim3(static_cast<unsigned>(P - 1), BM * N / 1024), 256, a.stream,
                     part.as<float>(), a, units, P, static_cast<int>(tiles_n), KT);
    detail::check_launch("decode_streamk");
  }
}

// A stored k x m (a transposed copy: A is the product's few rows) and rows TMA cannot address
// (an aligned copy) are made readable first (pack::operands_a_k).
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_streamk");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  // 256-row tiles (N >= 64) where they give half the SMs a whole tile: each range then holds
  // about a tile or more, and the cut tiles' partial sums (BM x N floats each) stay a few per cent
  // of W's bytes; shorter n keeps 128 rows.
  const int64_t sms = detail::sm_count();
  with_shape(a, [&](int64_t wide_tiles) { return 2 * wide_tiles >= sms; }, [&](auto n, auto h, auto w_mn) {
    launch<T, decltype(n)::value, decltype(h)::value, decltype(w_mn)::value>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

}  // namespace rungs::sgemm::decode_streamk
