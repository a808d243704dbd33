// Rung 8, own_last: rung 7's one-sided copies in the order of the peers, one peer per step (at step j
// every rank sends to rank r+j and receives from r-j), so each product covers one peer's whole block.
// Adds over 7 one_sided: that order, for both operations.
//
// gemm_reducescatter: the partial products in the order of their destinations, this rank's own block
// last. Rung 7 multiplies stripes across all destinations, so its last stripe's copies and sums follow
// the end of the product. Here rank r multiplies the block of rank r+1 first, piece by piece, each
// piece copied to its destination (rung 7's copies and flags, peer_window.hpp) while the next is
// multiplied, then the blocks of r+2, ..., r-1, and its own block last: by then the peers' partials
// of it have landed, and each own piece is summed while the next is multiplied. Only the last own
// piece's sum follows the product: a shifted all-to-all, the order of Flux and of PyTorch's
// fused_matmul_reduce_scatter. Numerics: rung 4's (fp32 partials added in rank order, one rounding).
//
// allgather_gemm: the mirror order. The own rows are multiplied first (they need no copy) while they
// go to rank r+1, then r+2, ...; the rows of r-1, r-2, ... are multiplied each as its block lands,
// one product of m_local rows per source. Rung 7's pieces of all sources, two batched calls each, are
// too small on 4 ranks (1024 x 2048 products of 64 tiles leave half of 132 SMs idle per wave).
//
// Bounded by: gemm_reducescatter, where the copies (world-1 blocks of fp32 partials) fit under the
// product, the product plus one piece's sum; else the copies, which start after the first piece of the
// first block and slow beside the products. allgather_gemm: the copies of world-1 blocks, then the
// last block's product.
// Prediction (H100): gemm_reducescatter on 4 ranks 1.30-1.40 ms against rung 7's 1.71-2.04; measured:
// 1.63-1.81 ms, the fastest rung with one rounding; allgather_gemm 0.79-0.86 ms as predicted.
#include "dist/peer_window.hpp"

#include <string>

namespace rungs::dist::detail::own_last {

namespace {

constexpr const char* kName = "own_last";

#ifdef RUNGS_PEER_WINDOW

// The all-gather's pieces per source: one, a whole block (4 H100, 2^38 multiply-adds per rank:
// 0.859 ms against 0.891-0.902 in 2 pieces and 1.011 in 4; 2 H100 1.475 against 1.515 in 2).
// force_pieces cuts more.
constexpr int kGatherMaxPieces = 1;

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  PeerWindow* const w = gather_window(a, kName);
  if (w == nullptr) return;
  PeerWindow& st = *w;
  const size_t row = static_cast<size_t>(a.k) * sizeof(T);
  const T* gathered = static_cast<const T*>(st.data);  // [source][m][k]
  const int pieces = pieces_of(a.m, a.k * static_cast<int64_t>(sizeof(T)), kMinPieceBytes, kGatherMaxPieces);
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(pieces);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute);
  Puts puts(st, f, a.stream, 0);
  wait_for_peers(st, call);
  // Step j: this rank's rows to rank r+j, piece by piece, each piece's flag to that peer alone.
  for (int j = 1; j < a.world; ++j) {
    const int d = (a.rank + j) % a.world;
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
      char* to = st.data_peer[d] + static_cast<size_t>(a.rank * a.m + lo) * row;
      if (a.lda == a.k) {
        Batch b;
        b.add(to, a.A + lo * a.lda, static_cast<size_t>(rows) * row);
        b.enqueue(st.put);
      } else {  // rows apart in A_local: a pitched copy
        RUNGS_CUDA(cudaMemcpy2DAsync(to, row, a.A + lo * a.lda, static_cast<size_t>(a.lda) * sizeof(T), row,
                                     static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, st.put));
      }
      piece_landed_at(st, d, base + static_cast<uint32_t>(p) + 1);
    }
  }
  // The own rows first (no copy to wait for), then the rows of r-1, r-2, ..., each piece as it lands.
  rank_product(a, a.m, a.A, a.lda, a.C + a.rank * a.m * a.ldc, comp);
  for (int j = 1; j < a.world; ++j) {
    const int s = (a.rank - j + a.world) % a.world;
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
      wait_flag(comp, st.ready(s), base + static_cast<uint32_t>(p) + 1);
      rank_product(a, rows, gathered + (s * a.m + lo) * a.k, a.k, a.C + (s * a.m + lo) * a.ldc, comp);
    }
  }
  end_call(st, puts, f, comp, call, a.stream);
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a) {
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  if (a.world == 1) return one_rank_reducescatter(a, kName);  // nothing to move
  if (mb == 0 || a.n == 0) return;  // C_local is empty
  const int pieces =
      pieces_of(mb, a.n * static_cast<int64_t>(sizeof(float)), kMinPieceBytes, kOwnLastMaxPieces);
  float* part = static_cast<float*>(a.ws->get(elems * sizeof(float)));  // [destination][mb][n], own unused
  PeerWindow& st = peer_window(*a.ws, a.comm, a.rank, a.world, elems * sizeof(float), a.stream, kName);
  if (!st.lsa) return rung4_reducescatter(a);
  float* got = static_cast<float*>(st.data);  // [source][mb][n]
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(pieces);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), epi = f.stream(kEpilogue);
  // Events: (j - 1) * pieces + p, destination r+j's piece p multiplied (j = 1..world-1); then
  // (world - 1) * pieces + p, the own piece p; the copy stream's two past those.
  const size_t P = static_cast<size_t>(pieces), own_ev = static_cast<size_t>(a.world - 1) * P;
  Puts puts(st, f, a.stream, own_ev + P);
  const int64_t blk = mb * a.n;
  for (int j = 1; j <= a.world; ++j) {
    const int d = (a.rank + j) % a.world;  // j == world: this rank's own block, last
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      float* out = (d == a.rank ? got : part) + d * blk + lo * a.n;
      partial_gemm(kName, rows, a.n, a.k, a.A + (d * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, false, out, a.n, 0, 1,
                   comp);
      f.record(static_cast<size_t>(j - 1) * P + static_cast<size_t>(p), comp);
    }
  }
  wait_for_peers(st, call);
  for (int j = 1; j < a.world; ++j) {
    const int d = (a.rank + j) % a.world;
    for (int p = 0; p < pieces; ++p) {
      const int64_t lo = piece_begin(mb, pieces, p), rows = piece_begin(mb, pieces, p + 1) - lo;
      f.wait(static_cast<size_t>(j - 1) * P + static_cast<size_t>(p), st.put);
      Batch b;
      b.add(st.data_peer[d] + sizeof(float) * static_cast<size_t>(a.rank * blk + lo * a.n), part + d * blk + lo * a.n,
            sizeof(float) * static_cast<size_t>(rows * a.n));
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

template <typename T>
void allgather_gemm(const ArgsT<T>&) {
  needs_nccl_2_28(kName, kNeedsDeviceApi);
}
template <typename T>
void gemm_reducescatter(const ArgsT<T>&) {
  needs_nccl_2_28(kName, kNeedsDeviceApi);
}

#endif

}  // namespace

void allgather_gemm_bf16(const ArgsBF& a) { allgather_gemm(a); }
void allgather_gemm_f16(const ArgsH& a) { allgather_gemm(a); }
void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }
void gemm_reducescatter_f16(const ArgsH& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::own_last
