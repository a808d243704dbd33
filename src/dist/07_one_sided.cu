// Rung 7, one_sided: the copy engines driven by the rung itself, one-sided, instead of by an NCCL
// collective per piece; bf16 and f16; needs NCCL 2.28 and its device API.
// Adds over 4 copy_engine: each rank copies its pieces straight into its peers' memory (to the peer's
// address in a symmetric window, which NCCL maps into every rank's address space; a kernel reads the
// addresses once with ncclGetPeerPointer), then writes a flag into the peer's window (a 4-byte copy
// after the data, on the same stream); the peer's stream waits for the flag (cuStreamWaitValue32)
// before it uses the piece. Rung 4's collectives synchronize every rank at every piece (~0.1 ms each
// beside the products); here a piece waits only for its own source, so pieces can be smaller (>= 8
// MiB, at most 4: 8 measured slower on 4 H100) and the transfer starts with the first. A piece's
// copies to the world-1 peers go out as one cudaMemcpyBatchAsync on one copy stream (copy engines
// preferred, sources read in stream order), as NCCL's copy-engine collectives issue theirs. State,
// copies and flags: peer_window.hpp. Still NCCL's: the split communicator, the windows (ncclMemAlloc,
// NCCL_WIN_COLL_SYMMETRIC), the addresses. Where the ranks are not one NVLink domain (ncclTeamLsa)
// there are no peer addresses and the calls run rung 4. No NVLink multicast.
//
// Flags, per rank, in a window of their own: ready[s], the last piece value source s has put here;
// done[d], the last call whose pieces destination d has finished with. Their values come from counters
// every rank advances alike (the calls are collective), compared cyclically (CU_STREAM_WAIT_VALUE_GEQ),
// so never reset. A rank puts into peer d only after d has acknowledged the previous call (done[d]).
//
// allgather_gemm: rank r pushes each piece of A_local to every peer's window at [source][m_local][k],
// then its flags; the own rows' product starts at once, each piece's other rows are multiplied once
// every source's flag for it is there, in rung 4's two strided-batched calls. gemm_reducescatter:
// rung 4's stripes of fp32 partials ([destination][rows][n], the own block straight into the window),
// each pushed to its destination's window at [source][rows][n] when done; the destination adds a
// stripe's world partials in rank order (rung 4's numerics) once every source's flag is there.
//
// Bounded by: the copy engines' time for world-1 shares of the gathered A (of the partials), plus the
// last piece's products (the first stripe's product and the last stripe's sum).
// Prediction (4 H200): allgather_gemm 0.80-0.85 ms against rung 4's 0.97, gemm_reducescatter 1.30-1.40
// against 2.02; measured (4 H100): 0.94-1.09 ms and 1.71-2.04 ms (rung 4 0.97 and 2.15).
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
