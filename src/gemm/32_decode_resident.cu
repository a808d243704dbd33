// Rung 32, decode_resident: rung 26 (decode_wgmma) with every block of the grid resident at once;
// f16 and bf16, sm_90a, layouts and copies as rung 26's.
// Adds over 26 decode_wgmma, in the Schedule: two blocks per SM instead of one, each with the stages
// that fit half an SM (6 / 6 / 5 / 4 / 3 at N = 8 / 16 / 32 / 64 / 128: as many bytes of W in flight
// per SM as rung 26's one block, or more), and the grid sized to the 2 x SMs slots. Rung 26's whole
// tiles times whole splits against one slot per SM leave SMs idle where the count does not divide
// (n = 7168: 56 tiles split twice, 112 blocks on 132 SMs; n = 28672: 224 tiles, 1.7 waves). Here n =
// 7168 is split four times (224 blocks) and n = 28672 runs in one wave: every SM streams W from the
// first cycle to the last, and as every block keeps the same bytes in flight, the blocks finish
// together whatever their count per SM. Always 128-row tiles (rung 26's 256-row tiles' sums do not fit
// where two blocks' stages were). The kernel is rung 26's (26_decode_wgmma.cuh, at OCC = 2):
// `diff 26_decode_wgmma.cu 32_decode_resident.cu` shows the grid.
// Bounded by: reading W once; the split sums' exchange (four splits where rung 26 has two at n =
// 7168); A's boxes read from L2 by twice as many blocks at N = 64 / 128 (128-row tiles).
// Prediction: 28672 x 8192 at m = 1 / 16 from 91 / 88 % of DRAM to 94-96 % (H200); measured: level
// with rung 26 (85-91 %; 0-3 % ahead on the H100), slower where it doubles the splits: auto skips it.
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
