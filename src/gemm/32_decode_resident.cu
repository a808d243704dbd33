// Rung 32, decode_resident: rung 26 (decode_wgmma) with every block of the grid resident at once;
// f16 and bf16, sm_90a, layouts and copies as rung 26's.
// Adds over 26 decode_wgmma, in the Schedule, Resident (SplitKOf<2, 2>): two blocks per SM instead of
// one, each with the stages that fit half an SM (6 / 6 / 5 / 4 / 3 at N = 8 / 16 / 32 / 64 / 128: as
// many bytes of W in flight per SM as rung 26's one block, or more), and the splits sized to the 2 x
// SMs slots. Rung 26's whole tiles times whole splits against one slot per SM leave SMs idle where
// the count does not divide (n = 7168: 56 tiles split twice, 112 blocks on 132 SMs; n = 28672: 224
// tiles, 1.7 waves). Here n = 7168 is split four times (224 blocks) and n = 28672 runs in one wave:
// every SM streams W from the first cycle to the last, and as every block keeps the same bytes in
// flight, the blocks finish together whatever their count per SM. Always 128-row tiles (256-row
// tiles' sums do not fit where two blocks' stages were), L2 fills of 256 bytes.
// Bounded by: reading W once; the split sums' exchange (four splits where rung 26 has two at n =
// 7168); A's boxes read from L2 by twice as many blocks at N = 64 / 128 (128-row tiles).
// Prediction: 28672 x 8192 at m = 1 / 16 from 91 / 88 % of DRAM to 94-96 % (H200); measured: level
// with rung 26 (85-91 %; 0-3 % ahead on the H100), slower where it doubles the splits: auto skips it.
#include "gemm/15_wgmma_ws.cuh"
#include "gemm/26_decode_wgmma.cuh"
#include "gemm/ws/split_k.cuh"

namespace rungs::sgemm::ws {

// Schedule: rung 26's split-K tiles of 128 rows at two blocks per SM.
struct Resident : SplitKOf<2, 2> {};

}  // namespace rungs::sgemm::ws

namespace rungs::sgemm::decode_resident {

namespace {

template <int N>
using Parts = ws::Parts<ws::Resident, ws::WholeTilesOf<N, ws::split_k_ring<N, 128, 2>()>, ws::DirectStore>;

// C^T = W A^T as rung 26 runs it (the operands swapped), at every N on 128-row tiles.
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("decode_resident");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands_a_k(user, keep_a, keep_b);
  const ArgsT<T> s = ws::transposed(a);
  decode_wgmma::with_n(a.m, [&](auto n) {
    constexpr int N = decltype(n)::value;
    if (a.tb == Trans::N) ws::launch<T, true, false, true, Parts<N>>(s, "decode_resident");
    else ws::launch<T, false, false, true, Parts<N>>(s, "decode_resident");
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }

std::vector<std::string> parts() { return ws::part_names<Parts<128>>(); }

}  // namespace rungs::sgemm::decode_resident
