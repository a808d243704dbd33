// Rung 10, epilogue_sum: what it adds over rung 9 (narrow_own_last): where one peer's partial is
// to be added to the own product (2 ranks) and C is not read (beta = 0), the addition moves into
// the own product's epilogue. Each piece of the peer's bf16 partial, once landed, is copied into
// C_local by a copy engine (no SMs); the own piece's product then adds itself onto it in cuBLAS's
// epilogue (C = alpha * A B + alpha * C, fp32, one rounding). No sum kernel runs beside the
// products, and the own partial is neither stored nor read back. Elsewhere (3 or more ranks, or
// beta != 0) it runs rung 9, whose 2-rank schedule this is (the peer's block first, piece by piece,
// each piece copied to the peer while the next is multiplied; the own block last).
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

namespace rungs::dist::detail::epilogue_sum {

namespace {

constexpr const char* kName = "epilogue_sum";

#ifdef RUNGS_PEER_WINDOW

void gemm_reducescatter(const ArgsBF& a) {
  using P = __nv_bfloat16;  // the partials
  if (a.world != 2 || a.beta != 0.0f) return narrow_own_last::gemm_reducescatter_bf16(a);
  const int64_t mb = a.m / 2;  // rows of C_local: each rank's block
  if (mb == 0 || a.n == 0) return;  // C_local is empty
  const int pieces = pieces_of(mb, a.n * static_cast<int64_t>(sizeof(P)), kMinPieceBytes, kOwnLastMaxPieces);
  const int64_t blk = mb * a.n;
  P* part = static_cast<P*>(a.ws->get(static_cast<size_t>(blk) * sizeof(P)));  // the peer's block
  // The window as rung 9's ([source][mb][n]), so that the two share it as it is.
  PeerWindow& st = peer_window(*a.ws, a.comm, a.rank, a.world, 2 * static_cast<size_t>(blk) * sizeof(P), a.stream,
                               kName);
  if (!st.lsa) return narrow_copy_engine::gemm_reducescatter_bf16(a);
  const P* got = static_cast<const P*>(st.data);
  const int peer = 1 - a.rank;
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(pieces);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), epi = f.stream(kEpilogue);
  // Events: p, the peer's piece p multiplied; pieces + p, the peer's partial of this rank's piece p
  // in C_local; the copy stream's two past those.
  const size_t np = static_cast<size_t>(pieces);
  Puts puts(st, f, a.stream, 2 * np);
  // The peer's partial of each own piece into C_local as it lands, by a copy engine (enqueued
  // before the own products that wait for it).
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    wait_for_pieces(st, epi, base + static_cast<uint32_t>(p) + 1);
    RUNGS_CUDA(cudaMemcpy2DAsync(a.C + lo * a.ldc, static_cast<size_t>(a.ldc) * sizeof(P), got + peer * blk + lo * a.n,
                                 static_cast<size_t>(a.n) * sizeof(P), static_cast<size_t>(a.n) * sizeof(P),
                                 static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, epi));
    f.record(np + static_cast<size_t>(p), epi);
  }
  // The peer's block, piece by piece; then the own block, each piece added onto the peer's partial
  // in cuBLAS's epilogue: C_local = alpha * (A_own B + the peer's partial), one rounding.
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    partial_gemm(kName, rows, a.n, a.k, a.A + (peer * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, part + lo * a.n, a.n,
                 0, 1, comp);
    f.record(static_cast<size_t>(p), comp);
  }
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    f.wait(np + static_cast<size_t>(p), comp);
    batched_product(rows, a.n, a.k, a.alpha, a.A + (a.rank * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, a.alpha,
                    a.C + lo * a.ldc, a.ldc, 0, 1, comp);
  }
  // Each piece of the peer's block to its window as soon as it is multiplied.
  wait_for_peers(st, call);
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
    f.wait(static_cast<size_t>(p), st.put);
    Batch b;
    b.add(st.data_peer[peer] + sizeof(P) * static_cast<size_t>(a.rank * blk + lo * a.n), part + lo * a.n,
          sizeof(P) * static_cast<size_t>(rows * a.n));
    b.enqueue(st.put);
    piece_landed_at(st, peer, base + static_cast<uint32_t>(p) + 1);
  }
  end_call(st, puts, f, epi, call, a.stream);  // the window's last use: the copies on epi
}

#else

[[noreturn]] void gemm_reducescatter(const ArgsBF&) { needs_nccl_2_28(kName, kNeedsDeviceApi); }

#endif

}  // namespace

void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::epilogue_sum
