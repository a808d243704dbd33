// Rung 24, wgmma_inplace: rung 23 (ragged edges multiplied as wide as they are and balanced over the
// clusters, C that TMA cannot store written by the producer's idle warps; sm_90a) reading a
// k-contiguous A in place where TMA cannot address its rows; f16, bf16 and tf32 as rung 23.
// Adds over 23 wgmma_balanced, where A is stored m x k (ta == N; tf32: nt only, nn swaps A and B)
// with ld * size % 16 != 0 or its base not 16-byte aligned:
//  * no copy of A. Rungs 17-23 copy such an A into aligned scratch before the kernel: a read and a
//    write of all of A at DRAM speed, ~0.030 ms of rung 23's 0.254 at 4095 x 4097 x 4093 bf16 (twelfth
//    session). Here A's rows fall into P residue classes (P = 16 / gcd(ld * size, 16), 8 for an odd
//    16-bit ld): rows j, j + P, ... start 16-byte multiples apart, so each class is a matrix TMA can
//    read (base rounded down to 16 bytes, columns shifted by what that took off;
//    detail/residue.hpp). A tile's 128 rows come in P boxes of 128 / P rows, class after class.
//  * the rows of each tile's product come out in that order, so C's rows are put back by the
//    epilogue: the storer warps (beta == 0) and the direct stores (beta != 0) find each row's place
//    (detail::tile_row); TMA stores, which write rows in order, are not used then.
// k is untouched, so B is read as in rung 23 (and copied where TMA cannot read it: an n-contiguous
// B's rows are k, and a permuted k would have to match A's, whose k is contiguous).
// Prediction (bf16, H100): 4095 x 4097 x 4093 nn from rung 23's 0.254 ms to ~0.224 (A's copy gone;
// B's copy and C's storer path stay: 1.28x its 4096^3); nt, where B is copied too, the same gain;
// shapes whose A TMA can read: rung 23's kernel and speed (the maps are not used).
// Bound now: on unaligned rows, B's copy and C's storer path.
#include "gemm/wgmma_ws.cuh"

namespace rungs::sgemm::wgmma_inplace {

void run_f16(const ArgsH& a) { ws_kernel::run_any<true, false, true, false, true, true>(a, "wgmma_inplace"); }
void run_bf16(const ArgsBF& a) { ws_kernel::run_any<true, false, true, false, true, true>(a, "wgmma_inplace"); }
void run_tf32(const Args& a) { ws_kernel::run_any<true, false, true, false, true, true>(a, "wgmma_inplace"); }

}  // namespace rungs::sgemm::wgmma_inplace
