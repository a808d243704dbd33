// Rung 4, copy_engine: what it adds over rung 3 (ring): the transfer done by the GPUs' copy
// engines over NVLink instead of NCCL's kernels, so the product keeps every SM (rungs 2 and 3's
// NCCL kernels take SMs from it while they run, and wait for SMs behind a persistent gemm kernel).
// Still NCCL: a communicator split once from the caller's (ncclCommSplit, kept with the workspace)
// with CTAPolicy = NCCL_CTA_POLICY_ZERO, and the gathered rows landing in a buffer from
// ncclMemAlloc registered with it as a symmetric window (ncclCommWindowRegister,
// NCCL_WIN_COLL_SYMMETRIC); an ncclAllGather whose send and receive buffers are both in such a
// window is then done by copy engines (NCCL 2.28: all ranks in one NVLink domain, one node). Where
// NCCL cannot (no symmetric memory support: no CUMEM, ranks on several nodes), the same calls run
// NCCL's kernels and the result is the same. No NVLink multicast: with NCCL_NVLS_ENABLE=0 NCCL's
// copy-engine collectives synchronize the ranks with plain (unicast) flag writes.
//
// allgather_gemm: the rows are cut into pieces (pieces_of: >= 128 MiB gathered per piece, at most
// 8: each copy-engine collective costs about 0.1 ms beside the products); for each piece the rank
// copies its own rows into its place in the window and the split communicator gathers them in
// place (ncclAllGather) on the communication stream; the product of
// the own rows starts first, from A_local, on the compute stream, then each piece's other ranks'
// rows are multiplied as soon as that piece has landed (events), in strided-batched cuBLAS calls
// (the ranks below this one, then those above: one call each, so that a piece's products fill the
// SMs at 4 ranks and more, where one product per rank and piece left most of them idle). Bound: the
// product (pieces smaller than rung 2's chunks) and whatever of the last piece's gather is not
// hidden; the copy engines' NVLink bandwidth against the SM kernels' 240 GB/s; one extra local
// copy of A_local into the window (m_local x k, at memory speed). Workspace: world*m_local*k
// elements in the window, besides the generic workspace.
//
// gemm_reducescatter: copy engines move bytes, they do not add, so the reduction is split in two:
// the fp32 partials travel by an all-to-all (NCCL 2.28 runs ncclAlltoAll on copy engines under the
// same conditions as ncclAllGather) and a kernel adds them. Rung 2's stripes (>= 8 MiB of fp32 per
// stripe, at most 8) are multiplied into the window, one strided-batched cuBLAS call per stripe
// ([destination][rows][n]); each stripe goes out by ncclAlltoAll on the communication stream (the
// block of destination d to rank d, the own block copied in place), and on the epilogue stream the
// world partials of the rank's rows are added in rank order in fp32, scaled by alpha, beta * C
// added, one rounding: the numerics of rung 1 (fp32 partials, one rounding), the order of the sum
// fixed. Bound: the product on every SM plus the last stripe's all-to-all and sum; beside it, the
// sums' reads of world fp32 partials per element of C (memory traffic that the products share)
// and the copy engines' bandwidth against the product's time. Workspace: 2 m n floats in the
// window (the partials sent and received).
//
// Prediction (2 H100, bf16; issue 37 measured all-gather 560 us, product 1,430 us, one after the
// other 2,050 us at M = 16384, k = 8192, n_local = 4096): the product at full speed with the
// gather under its first half: about 1,450-1,550 us if the copy engines reach the SM kernels'
// bandwidth, more if they do not (the gather then shows past the own half's 715 us). Which path
// NCCL took shows with NCCL_DEBUG=INFO ("Init CE").
// Measured on 2 H200 (42c73ab; NCCL_DEBUG=INFO shows "Init CE" on every rank): 1.568 ms, 1.16x
// rung 1 and slower than rung 2's 1.357; on 4 H200 at 2^38 multiply-adds per rank the fastest
// rung, 1.222 ms against rung 1's 1.294 (the products take about 0.65 ms of it: the copy-engine
// gather is the bound).
// gemm_reducescatter, prediction (2 H100, m = 16384, n = 8192, k_local = 4096: product about
// 1.43 ms, 268 MB of fp32 partials out of each rank at 300-400 GB/s of copy engines, 0.7-0.9 ms
// under the product; the sums read 537 MB and write 134 MB per rank, about 0.25 ms of DRAM time
// beside the product): 1.50-1.65 ms, 1.05-1.15x the product, against rung 2's 1.70x. Measured on
// 2 H200 (product 1.24 ms): 1.884 ms, 1.52x the product, 1.12x faster than rung 2; on 4 H200 at
// 2^40 per rank 3.097 ms against rung 2's 3.526.
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
