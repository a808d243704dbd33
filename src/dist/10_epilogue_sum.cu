// Rung 10, epilogue_sum: what it adds over rung 9 (narrow_own_last): where one peer's partial is
// to be added to the own product (2 ranks) and C is not read (beta = 0), the addition moves into
// the own product's epilogue. Each piece of the peer's bf16 partial, once landed, is copied into
// C_local by a copy engine (no SMs); the own piece's product then adds itself onto it in cuBLAS's
// epilogue (C = alpha * A B + alpha * C, fp32, one rounding). No sum kernel runs beside the
// products, and the own partial is neither stored nor read back. Elsewhere (3 or more ranks, or
// beta != 0) it is rung 9 (diff the two files).
//
// Accuracy: on 2 ranks with beta = 0, the peer's partial is rounded once to bf16 and the sum once:
// 2 roundings, against rung 9's 3 (world + 1) and rung 8's one. bf16 only, as rung 9.
//
// Bound: on 2 ranks the product in pieces, the peer's bf16 partial copied under the own block's
// product, and each own piece's local copy (64 MiB at 4096 rows x 8192, ~0.03 ms on a copy engine)
// before its product: the product's time plus the first own piece's wait, if its copy is late.
//
// Prediction (2 H200, random inputs, m = 16384, n = 8192, k_local = 4096; product 1.43 ms alone,
// rung 9's products alone in pieces ~1.47-1.50, rung 9 1.55-1.73 with the sums beside): 1.48-1.58
// ms, 1.03-1.10x the product. 3 or more ranks: rung 9's time.
#include "dist/peer_window.hpp"

#include <string>

namespace rungs::dist::detail::epilogue_sum {

namespace {

constexpr const char* kName = "epilogue_sum";

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
  // (world - 1) * pieces + p, the own piece p; the copy stream's two past those; then the own
  // piece p's share of the peer's partial copied into C_local (fused).
  const size_t np = static_cast<size_t>(pieces), own_ev = static_cast<size_t>(a.world - 1) * np;
  const size_t copied_ev = own_ev + np + 2;
  Puts puts(st, f, a.stream, own_ev + np);
  const int64_t blk = mb * a.n;
  // The sum in the own product's epilogue: one peer's partial to add, C not read.
  const bool fused = a.world == 2 && a.beta == 0.0f;
  const int peer = (a.rank + 1) % a.world;
  if (fused) {
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      wait_for_pieces(st, epi, base + static_cast<uint32_t>(p) + 1);
      RUNGS_CUDA(cudaMemcpy2DAsync(a.C + lo * a.ldc, static_cast<size_t>(a.ldc) * sizeof(P), got + peer * blk + lo * a.n,
                                   static_cast<size_t>(a.n) * sizeof(P), static_cast<size_t>(a.n) * sizeof(P),
                                   static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, epi));
      f.record(copied_ev + static_cast<size_t>(p), epi);
    }
  }
  for (int j = 1; j <= a.world; ++j) {
    const int d = (a.rank + j) % a.world;  // j == world: this rank's own block, last
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      if (fused && d == a.rank) {  // C_local = alpha * (own piece's product + the peer's partial)
        f.wait(copied_ev + static_cast<size_t>(p), comp);
        batched_product(rows, a.n, a.k, a.alpha, a.A + (d * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, a.alpha,
                        a.C + lo * a.ldc, a.ldc, 0, 1, comp);
        continue;
      }
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
  for (int p = 0; p < pieces && !fused; ++p) {
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

}  // namespace rungs::dist::detail::epilogue_sum
