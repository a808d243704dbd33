// Rung 7, one_sided: what it adds over rung 4 (copy_engine): the copy engines driven by the rung
// itself, one-sided, instead of by an NCCL collective per piece. Each rank copies its pieces
// straight into its peers' memory (cudaMemcpyAsync to the peer's address in a symmetric window,
// which NCCL maps into every rank's address space; a kernel reads the addresses once with
// ncclGetPeerPointer), then writes a flag into the peer's window (a 4-byte copy after the data, on
// the same stream); the peer's stream waits for the flag (cuStreamWaitValue32) before it uses the
// piece. No rank waits for all the others before a piece moves: rung 4's collectives synchronize
// every rank at every piece, about 0.1 ms each beside the products, which is why its all-gather
// moves 2 large pieces and its reduce-scatter's last stripe waits for the slowest rank. Here a
// piece waits only for its own source, so the pieces can be smaller than rung 4's (8 MiB or more,
// at most 4: 8 measured slower on 4 H100) and the transfer starts as soon as the first is ready.
// A piece's copies to the world-1 peers go out as one cudaMemcpyBatchAsync on one copy stream
// (copy engines preferred, sources read in stream order), as NCCL's copy-engine collectives issue
// theirs; a copy stream per peer measured level with it.
//
// The state, the copies and the flags live in peer_window.hpp (rung 8 builds on them too).
//
// Still NCCL: the communicator split once from the caller's, the windows allocated by ncclMemAlloc
// and registered with it (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC), the addresses NCCL's;
// only the copies and the flags are the rung's. Where the ranks are not all in one NVLink domain
// (ncclTeamLsa: one node, or one multi-node NVLink system) there are no peer addresses, and the
// calls run rung 4, whose collectives then use NCCL's kernels. No NVLink multicast.
//
// Flags, per rank, in a window of their own: ready[s], the last piece value source s has put here;
// done[d], the last call whose pieces destination d has finished with. Values come from counters
// that every rank advances alike (the calls are collective and their sizes agree) and are compared
// cyclically (CU_STREAM_WAIT_VALUE_GEQ), so they never need resetting. A rank puts into peer d only
// after d has acknowledged the previous call (done[d]), so a call never overwrites rows or
// partials that d's previous call still reads.
//
// allgather_gemm: the rows of each rank land in every peer's window at [source][m_local][k]; rank r
// pushes piece p of A_local (rows lo..hi) to every peer in one batch, then its flags. The
// product of the own rows starts at once from A_local; each piece's other rows are multiplied once
// every source's flag for it has arrived, in rung 4's two strided-batched calls (ranks below this
// one, ranks above). Bound: the copy engines' time for world-1 shares of the gathered A, plus the
// last piece's products; the products of the earlier pieces under the transfer.
//
// gemm_reducescatter: the fp32 partials of each stripe (rung 4's stripes) are computed into the
// workspace, [destination][rows][n], the own block straight into the window; each is pushed to
// its destination's window at [source][rows][n] as soon as the stripe is done, and the destination
// adds the world partials of a stripe in rank order (fp32, alpha, beta * C, one rounding: rung
// 4's numerics) as soon as every source's flag for it is there. Bound: the first stripe's
// product, the copy engines' time for world-1 shares of the partials, the last stripe's sum.
//
// Prediction (4 H200, random inputs; floor from overlap_floor.cpp: the copy-engine collective and
// the product at once, 0.764 ms for the all-gather shape, 1.182 for the reduce-scatter's):
// allgather_gemm m_local = 4096, n_local = 2048, k = 8192, rung 4's 0.968 ms to 0.80-0.85;
// gemm_reducescatter m = 16384, n = 8192, k_local = 2048, rung 4's 2.017 ms to 1.30-1.40 (the
// first stripe's product 0.1 ms, the partials' 384 MB out of each rank at the copy engines' ~325
// GB/s). 2 H200: allgather 1.54 to 1.50, reduce-scatter 2.07 to 1.70-1.80.
// Measured (H100, random inputs, the slowest rank's medians; docs/dist.md): 4 ranks, allgather_gemm
// 0.94-1.09 ms in 4 pieces (rung 4 0.97), gemm_reducescatter 1.71-2.04 (rung 4 2.15); 2 ranks 1.47-
// 1.53 (rung 4 1.56) and 2.02-2.05 (rung 4 2.16). The reduce-scatter stays well above the 1.17 ms
// at which the copy engines move the same partials beside the product (overlap_floor.cpp).
#include "dist/peer_window.hpp"

#include <string>

namespace rungs::dist::detail::one_sided {

namespace {

constexpr const char* kName = "one_sided";

#ifdef RUNGS_PEER_WINDOW

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  PeerWindow* const w = gather_window(a, kName);
  if (w == nullptr) return;
  PeerWindow& st = *w;
  const size_t row = static_cast<size_t>(a.k) * sizeof(T);
  const T* gathered = static_cast<const T*>(st.data);  // [source][m][k]
  const int pieces = pieces_of(a.m, a.world * a.k * static_cast<int64_t>(sizeof(T)), kMinPieceBytes, kOneSidedMaxPieces);
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(pieces);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute);
  Puts puts(st, f, a.stream, 0);
  wait_for_peers(st, call);
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
    Batch b;
    for (int j = 1; j < a.world; ++j) {
      char* to = st.data_peer[(a.rank + j) % a.world] + static_cast<size_t>(a.rank * a.m + lo) * row;
      if (a.lda == a.k)
        b.add(to, a.A + lo * a.lda, static_cast<size_t>(rows) * row);
      else  // rows apart in A_local: a pitched copy per peer (slower, one engine each)
        RUNGS_CUDA(cudaMemcpy2DAsync(to, row, a.A + lo * a.lda, static_cast<size_t>(a.lda) * sizeof(T), row,
                                     static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, st.put));
    }
    b.enqueue(st.put);
    piece_landed(st, base + static_cast<uint32_t>(p) + 1);
  }
  rank_product(a, a.m, a.A, a.lda, a.C + a.rank * a.m * a.ldc, comp);
  const int64_t sa = a.m * a.k, sc = a.m * a.ldc;
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
    wait_for_pieces(st, comp, base + static_cast<uint32_t>(p) + 1);
    // The other ranks' rows of the piece in two batched calls, as rung 4 (the ranks below, above).
    batched_product(rows, a.n, a.k, a.alpha, gathered + lo * a.k, a.k, sa, a.B, a.ldb, a.beta, a.C + lo * a.ldc,
                    a.ldc, sc, a.rank, comp);
    batched_product(rows, a.n, a.k, a.alpha, gathered + (a.rank + 1) * sa + lo * a.k, a.k, sa, a.B, a.ldb, a.beta,
                    a.C + ((a.rank + 1) * a.m + lo) * a.ldc, a.ldc, sc, a.world - a.rank - 1, comp);
  }
  end_call(st, puts, f, comp, call, a.stream);
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a) {
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  if (a.world == 1) return one_rank_reducescatter(a, kName);  // nothing to move
  if (mb == 0 || a.n == 0) return;  // C_local is empty
  const int stripes = pieces_of(mb, a.n * a.world * static_cast<int64_t>(sizeof(float)), kMinPieceBytes, kOneSidedMaxPieces);
  float* part = static_cast<float*>(a.ws->get(elems * sizeof(float)));  // [destination][mb][n], own unused
  PeerWindow& st = peer_window(*a.ws, a.comm, a.rank, a.world, elems * sizeof(float), a.stream, kName);
  if (!st.lsa) return rung4_reducescatter(a);
  float* got = static_cast<float*>(st.data);  // [source][mb][n]
  const uint32_t call = ++st.calls, base = st.pieces;
  st.pieces += static_cast<uint32_t>(stripes);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), epi = f.stream(kEpilogue);
  const size_t ev = static_cast<size_t>(stripes);  // events 0..stripes-1: the stripes' products
  Puts puts(st, f, a.stream, ev);
  const int64_t blk = mb * a.n;
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    // The destinations below this rank, its own block (into the window), the destinations above.
    partial_gemm(kName, rows, a.n, a.k, a.A + lo * a.lda, a.lda, mb * a.lda, a.B, a.ldb, false, part + lo * a.n, a.n,
                 blk, a.rank, comp);
    partial_gemm(kName, rows, a.n, a.k, a.A + (a.rank * mb + lo) * a.lda, a.lda, 0, a.B, a.ldb, false,
                 got + a.rank * blk + lo * a.n, a.n, 0, 1, comp);
    partial_gemm(kName, rows, a.n, a.k, a.A + ((a.rank + 1) * mb + lo) * a.lda, a.lda, mb * a.lda, a.B, a.ldb, false,
                 part + (a.rank + 1) * blk + lo * a.n, a.n, blk, a.world - a.rank - 1, comp);
    f.record(static_cast<size_t>(s), comp);
  }
  wait_for_peers(st, call);
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    f.wait(static_cast<size_t>(s), st.put);
    Batch b;
    for (int j = 1; j < a.world; ++j) {
      const int d = (a.rank + j) % a.world;
      b.add(st.data_peer[d] + sizeof(float) * static_cast<size_t>(a.rank * blk + lo * a.n), part + d * blk + lo * a.n,
            sizeof(float) * static_cast<size_t>(rows * a.n));
    }
    b.enqueue(st.put);
    piece_landed(st, base + static_cast<uint32_t>(s) + 1);
  }
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    f.wait(static_cast<size_t>(s), epi);
    wait_for_pieces(st, epi, base + static_cast<uint32_t>(s) + 1);
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

}  // namespace rungs::dist::detail::one_sided
