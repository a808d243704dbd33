// Rung 32, decode_resident: rung 26 (decode_wgmma) with every block of the grid resident at once.
// Adds over rung 26: two blocks per SM instead of one, each with the stages that fit half an SM's
// shared memory (6 / 6 / 5 / 4 / 3 at N = 8 / 16 / 32 / 64 / 128: the SM holds as many bytes of W
// in flight as rung 26's one block, or more), and the grid sized to the 2 x SMs slots. Rung 26's
// grid is whole tiles times whole splits against one slot per SM, so SMs idle where the count does
// not divide: n = 7168 gives 56 tiles of 128 rows, split twice, 112 blocks on 132 SMs; n = 28672
// gives 224 tiles, 1.7 waves, the second of 92 blocks. Here n = 7168 is split four times (224
// blocks), n = 28672 runs its 224 tiles in one wave: every SM streams W from the first cycle to
// the last, and as every block keeps the same bytes in flight, the blocks draw DRAM at the same
// rate and finish together, whatever their count per SM. Always 128-row tiles (rung 26's 256-row
// tiles' sums do not fit where two blocks' stages were). The kernel is rung 26's
// (26_decode_wgmma.cuh, at OCC = 2): `diff 26_decode_wgmma.cu 32_decode_resident.cu` shows the grid.
// Slower paths inside the rung (same answer): as rung 26's (A stored k x m, unaligned rows copied).
// Bound now: reading W once from DRAM; the 1.7 waves and idle SMs are gone, the sums' exchange
// of split tiles stays (four splits where rung 26 had two at n = 7168), and A's boxes are read by
// twice as many blocks from L2 at N = 64 / 128 (128-row tiles where rung 26 took 256).
// Prediction (bf16 nt, % of the DRAM read bandwidth with W + A + C): H100 7168 x 8192 at m <= 16
// from 45.1-45.6 us to 42-43 us (floor: one bare read of the 117 MB, 40.4 us), H200 from 34.5-35.2
// us to 31-32 us (floor 29.3); 28672 x 8192 at m = 1 / 16: H200 from 91 / 88 % to 94-96 %, H100 from
// 96 / 95 % to 97-98 %; m = 64 / 128 lose the 256-row tiles' halved A traffic: level with rung 26.
// Measured (H100 SXM, 4bdc263, `rungs bench gemm --workload decode --variant
// decode_wgmma,decode_resident`, bf16 nt, interleaved with cuBLAS): a win only where rung 26 ran a
// second wave. 28672 x 8192: 162.1 / 162.0 / 165.2 / 172.2 us at m = 1 / 16 / 64 / 128 against rung
// 26's 162.6 / 164.6 / 169.6 / 172.7 (94.7 / 95.0 / 93.9 / 90.9 % of DRAM against 94.5 / 93.5 / 91.4
// / 90.7). Where it doubles the splits it loses: 7168 x 8192 46.9-54.9 us against 46.0-51.0 (the
// sums of four splits instead of two, and half the bytes in flight on the 40 SMs with one block),
// 8192 x 28672 169-229 us against 159-169 (64 tiles split four times, 3-5 stages a block; m = 128:
// 3 stages and A read by 128-row tiles, 68.5 % of DRAM). H200 (acccc5b, --reps 30): level with rung 26
// at 28672 x 8192 (85.4-90.7 % against 85.5-89.9), 3-10 % slower at 7168 x 8192, 10-48 % at 8192 x
// 28672. `auto` does not take it: it wins nowhere by more than the spread between two runs.
#include "gemm/26_decode_wgmma.cuh"

#include "core/errors.hpp"

#include <algorithm>

namespace rungs::sgemm::decode_resident {

namespace {

using namespace decode_wgmma;
using detail::ceil_div;

constexpr int OCC = 2;  // blocks per SM

template <typename T, int N, int H, bool W_MN>
void launch(const ArgsT<T>& a) {
  const Maps maps = make_maps<T, N, H, W_MN>(a);
  const int64_t tiles_n = ceil_div(a.n, int64_t(bm<H>())), groups = ceil_div(a.m, N), KT = ceil_div(a.k, BK);
  // The slots: 2 per SM where the kernel's registers and shared memory allow it (they do on sm_90).
  constexpr int SMEM = smem_bytes<N, H, OCC>();
  auto* kernel = &decode_kernel<T, N, H, W_MN, OCC>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM);
  int per_sm = 0;
  RUNGS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, SMEM));
  const int64_t tiles = tiles_n * groups, slots = std::max(1, per_sm) * detail::sm_count();
  launch_grid<T, N, H, W_MN, OCC>(a, maps, tiles_n, groups, split_count(tiles, KT, slots), "decode_resident");
}

// A stored k x m (a transposed copy: A is the product's few rows) and rows TMA cannot address
// (an aligned copy) are made readable first (pack::operands_a_k).
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_resident");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  // 128-row tiles at every N.
  with_n(a.m, [&](auto n) {
    if (a.tb == Trans::N) launch<T, decltype(n)::value, 1, true>(a);
    else launch<T, decltype(n)::value, 1, false>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

}  // namespace rungs::sgemm::decode_resident
