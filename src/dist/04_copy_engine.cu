// Rung 4, copy_engine: the transfers done by the GPUs' copy engines over NVLink instead of NCCL's
// kernels, so the products keep every SM; needs NCCL 2.28.
// Adds over 3 ring (whose NCCL kernels, as rung 2's, take SMs from the product and wait behind a
// persistent gemm kernel): still NCCL, on a communicator split once from the caller's (ncclCommSplit,
// kept with the workspace) with CTAPolicy = NCCL_CTA_POLICY_ZERO, the data in buffers from ncclMemAlloc
// registered with it as a symmetric window (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC):
// ncclAllGather and ncclAlltoAll within such a window then run on copy engines (all ranks in one NVLink
// domain, one node; NCCL_DEBUG=INFO prints "Init CE"). Where NCCL cannot (no CUMEM, several nodes) the
// same calls run NCCL's kernels, with the same result. No NVLink multicast: with NCCL_NVLS_ENABLE=0
// the copy-engine collectives synchronize the ranks with plain (unicast) flag writes.
//
// allgather_gemm: the rows in pieces (pieces_of: >= 128 MiB gathered a piece, at most 8: each
// copy-engine collective costs about 0.1 ms beside the products); per piece the rank copies its own
// rows into its place in the window and the split communicator gathers them in place. The own rows'
// product starts first, from A_local; each piece's other rows are multiplied as soon as it has landed,
// in two strided-batched cuBLAS calls (the ranks below this one, then those above: one product per
// rank and piece left most SMs idle at 4 ranks). Workspace: world*m_local*k elements in the window.
//
// gemm_reducescatter: copy engines move bytes, they do not add. Rung 2's stripes of fp32 partials are
// multiplied into the window ([destination][rows][n], one strided-batched call a stripe), each sent by
// ncclAlltoAll (the own block copied in place), and on the epilogue stream the world partials of the
// rank's rows are added in rank order in fp32, alpha and beta * C applied, one rounding: rung 1's
// numerics, the order fixed. Workspace: 2 m n floats in the window (the partials sent and received).
//
// Bounded by: the product on every SM plus what of the last piece's gather (the last stripe's
// all-to-all and sum) is not hidden; the copy engines' NVLink bandwidth; the sums' reads of world fp32
// partials per element of C, beside the products.
// Prediction (2 GPUs): allgather_gemm ~1.35x rung 1, gemm_reducescatter 1.05-1.15x the product alone;
// measured (2 H200): 1.16x rung 1 (below rung 2) and 1.52x the product (1.12x faster than rung 2).
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail::copy_engine {

namespace {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)

constexpr const char* kName = "copy_engine";

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  if (a.world == 1 || a.k == 0) {
    // Nothing to move: one rank's own rows, or k == 0 (C = beta * C, A not read).
    rank_product(a, a.world * a.m, a.A, a.lda, a.C, a.stream);
    return;
  }
  CeWindow& st = ce_window(*a.ws, a.comm, a.rank, static_cast<size_t>(a.world) * static_cast<size_t>(a.m * a.k) * sizeof(T));
  T* gathered = static_cast<T*>(st.buf);
  const int pieces = pieces_of(a.m, a.world * a.k * static_cast<int64_t>(sizeof(T)), kMinCePieceBytes);
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm);
  // Piece p of every rank: rows [lo, lo+rows) of each A_local, at [world][rows][k] after the pieces
  // before it; the own rows go to their place, then one in-place gather per piece.
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
    T* stripe = gathered + a.world * lo * a.k;
    T* mine = stripe + a.rank * rows * a.k;
    RUNGS_CUDA(cudaMemcpy2DAsync(mine, a.k * sizeof(T), a.A + lo * a.lda, a.lda * sizeof(T), a.k * sizeof(T), rows,
                                 cudaMemcpyDeviceToDevice, comm));
    RUNGS_NCCL(ncclAllGather(mine, stripe, static_cast<size_t>(rows * a.k), nccl_type<T>(), st.comm, comm));
    f.record(static_cast<size_t>(p), comm);
  }
  rank_product(a, a.m, a.A, a.lda, a.C + a.rank * a.m * a.ldc, comp);
  for (int p = 0; p < pieces; ++p) {
    const int64_t lo = piece_begin(a.m, pieces, p), rows = piece_begin(a.m, pieces, p + 1) - lo;
    const T* stripe = gathered + a.world * lo * a.k;
    f.wait(static_cast<size_t>(p), comp);
    // The other ranks' rows of the piece in at most two batched calls (the ranks below this one,
    // then those above): world-1 small products would leave most SMs idle at 4 ranks and more.
    const int64_t sa = rows * a.k, sc = a.m * a.ldc;
    batched_product(rows, a.n, a.k, a.alpha, stripe, a.k, sa, a.B, a.ldb, a.beta, a.C + lo * a.ldc, a.ldc, sc,
                    a.rank, comp);
    batched_product(rows, a.n, a.k, a.alpha, stripe + (a.rank + 1) * sa, a.k, sa, a.B, a.ldb, a.beta,
                    a.C + ((a.rank + 1) * a.m + lo) * a.ldc, a.ldc, sc, a.world - a.rank - 1, comp);
  }
  f.join();
  RUNGS_CUDA(cudaEventRecord(st.last_use, a.stream));
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a) {
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const int stripes = pieces_of(mb, a.n * a.world * static_cast<int64_t>(sizeof(float)));
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  if (a.world == 1) return one_rank_reducescatter(a, kName);  // nothing to move
  CeWindow& st = ce_window(*a.ws, a.comm, a.rank, 2 * elems * sizeof(float));
  float* sent = static_cast<float*>(st.buf);  // [stripe][destination][rows][n]
  float* got = sent + elems;                   // [stripe][source][rows][n]
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm), epi = f.stream(kEpilogue);
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    float* out = sent + a.world * lo * a.n;
    float* const in = got + a.world * lo * a.n;
    partial_gemm(kName, rows, a.n, a.k, a.A + lo * a.lda, a.lda, mb * a.lda, a.B, a.ldb, false, out, a.n,
                 rows * a.n, a.world, comp);
    f.order(2 * static_cast<size_t>(s), comp, comm);
    RUNGS_NCCL(ncclAlltoAll(out, in, static_cast<size_t>(rows * a.n), ncclFloat32, st.comm, comm));
    f.order(2 * static_cast<size_t>(s) + 1, comm, epi);
    sum_into(rows, a.n, a.world, rows * a.n, a.alpha, in, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  f.join();
  RUNGS_CUDA(cudaEventRecord(st.last_use, a.stream));
}

#else

constexpr const char* kTooOld = "(copy-engine collectives on symmetric windows)";
template <typename T>
void allgather_gemm(const ArgsT<T>&) {
  needs_nccl_2_28("copy_engine", kTooOld);
}
template <typename T>
void gemm_reducescatter(const ArgsT<T>&) {
  needs_nccl_2_28("copy_engine", kTooOld);
}

#endif

}  // namespace

void allgather_gemm_bf16(const ArgsBF& a) { allgather_gemm(a); }
void allgather_gemm_f16(const ArgsH& a) { allgather_gemm(a); }
void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }
void gemm_reducescatter_f16(const ArgsH& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::copy_engine
