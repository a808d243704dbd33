// Rung 9, narrow_own_last: rung 6's bf16 partials in rung 8's reduce-scatter (diff the two files).
// Adds over 8 own_last: the partial products in the order of their destinations, each piece copied to
// its destination while the next is multiplied, the own block last and summed as it is multiplied,
// as rung 8; each partial rounded once to bf16 by the product (fp32 accumulation inside it) and the
// world partials added in rank order in fp32 with one final rounding, as rung 6. Half of rung 8's
// bytes on the copy engines, in the window and in the sums' reads. gemm_reducescatter in bf16 only,
// as rungs 5 and 6: f16 partials could overflow (65504) where their sum does not.
//
// Accuracy: rung 6's: world + 1 roundings, at most (world + 1) half-units in the last place of the
// magnitude sum |alpha||A||B| + |beta||C|, against rung 8's one and PyTorch's tensor-parallel
// layers' 2 * world (a bf16 matmul, then a bf16 reduce-scatter).
//
// Bounded by: where the world-1 blocks of bf16 partials fit under the product (2 ranks; 4 ranks at
// k_local >= 2048 on H100), the product plus one piece's sum, the copies' memory traffic beside the
// products; else the copies, which start after the first piece of the first block.
// Prediction (H100, 4 ranks, m = 16384, n = 8192, k_local = 2048): 0.95-1.05 ms against rung 8's
// 1.63-1.88; measured (4 H200): 0.93-0.97 ms (rung 8 1.45-1.67): auto's bf16 reduce-scatter.
#include "dist/peer_window.hpp"

#include <string>

namespace rungs::dist::detail::narrow_own_last {

namespace {

constexpr const char* kName = "narrow_own_last";

#ifdef RUNGS_PEER_WINDOW

void gemm_reducescatter(const ArgsBF& a) {
  using P = __nv_bfloat16;  // the partials
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  if (a.world == 1) {  // nothing to move: the one rank's bf16 partial, scaled (rung 6's)
    P* p = static_cast<P*>(a.ws->get(elems * sizeof(P)));
    partial_gemm(kName, a.m, a.n, a.k, a.A, a.lda, 0, a.B, a.ldb, p, a.n, 0, 1, a.stream);
    scale_into(a.m, a.n, a.alpha, p, a.n, a.beta, a.C, a.ldc, a.stream);
    return;
  }
  if (mb == 0 || a.n == 0) return;  // C_local is empty
  const int pieces = pieces_of(mb, a.n * static_cast<int64_t>(sizeof(P)), kMinPieceBytes, kOwnLastMaxPieces);
  P* part = static_cast<P*>(a.ws->get(elems * sizeof(P)));  // [destination][mb][n], own unused
  PeerWindow& st = peer_window(*a.ws, a.comm, a.rank, a.world, elems * sizeof(P), a.stream, kName);
  if (!st.lsa) return narrow_copy_engine::gemm_reducescatter_bf16(a);
  P* got = static_cast<P*>(st.data);  // [source][mb][n]
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(pieces);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), epi = f.stream(kEpilogue);
  // Events: (j - 1) * pieces + p, destination r+j's piece p multiplied (j = 1..world-1); then
  // (world - 1) * pieces + p, the own piece p; the copy stream's two past those.
  const size_t np = static_cast<size_t>(pieces), own_ev = static_cast<size_t>(a.world - 1) * np;
  Puts puts(st, f, a.stream, own_ev + np);
  const int64_t blk = mb * a.n;
  for (int j = 1; j <= a.world; ++j) {
    const int d = (a.rank + j) % a.world;  // j == world: this rank's own block, last
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      P* out = (d == a.rank ? got : part) + d * blk + lo * a.n;
      partial_gemm(kName, rows, a.n, a.k, a.A + (d * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, out, a.n, 0, 1, comp);
      f.record(static_cast<size_t>(j - 1) * np + static_cast<size_t>(p), comp);
    }
  }
  wait_for_peers(st, call);
  for (int j = 1; j < a.world; ++j) {
    const int d = (a.rank + j) % a.world;
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      f.wait(static_cast<size_t>(j - 1) * np + static_cast<size_t>(p), st.put);
      Batch b;
      b.add(st.data_peer[d] + sizeof(P) * static_cast<size_t>(a.rank * blk + lo * a.n), part + d * blk + lo * a.n,
            sizeof(P) * static_cast<size_t>(rows * a.n));
      b.enqueue(st.put);
      piece_landed_at(st, d, base + static_cast<uint32_t>(p) + 1);
    }
  }
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    f.wait(own_ev + static_cast<size_t>(p), epi);
    wait_for_pieces(st, epi, base + static_cast<uint32_t>(p) + 1);
    sum_into(rows, a.n, a.world, blk, a.alpha, got + lo * a.n, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  end_call(st, puts, f, epi, call, a.stream);
}

#else

[[noreturn]] void gemm_reducescatter(const ArgsBF&) { needs_nccl_2_28(kName, kNeedsDeviceApi); }

#endif

}  // namespace

void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::narrow_own_last
