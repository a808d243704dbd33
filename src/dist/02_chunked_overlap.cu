// Rung 2, chunked_overlap: the transfer cut into chunks on a communication stream, each chunk's product
// started on a compute stream as soon as that chunk has landed (events between the streams, no host
// synchronization), so the product of what is here hides the transfer of what is still coming.
// Adds over 1 nccl_then_gemm: that overlap, for both operations.
//
// allgather_gemm: the chunks are the ranks' A_local. The own rows' product (C rows [r*m, (r+1)*m),
// straight from A_local) starts first, while world-1 pairwise exchanges run (step j: ncclSend of
// A_local to rank r+j, ncclRecv of rank r-j's rows into its workspace slot, one NCCL group a step),
// each followed by the product of the rows it brought. Every transfer is enqueued before the products,
// so NCCL's kernels (at the greatest stream priority) are queued before the gemms fill the SMs.
//
// gemm_reducescatter: the local product in stripes of rows: stripe s holds, for every destination d,
// rows [d*m/world + lo_s, d*m/world + hi_s) (pieces_of: >= 8 MiB of fp32, at most 8), one
// strided-batched cuBLAS call (batch = world, dist::detail::partial_gemm) into its slot of the
// workspace ([d][rows][n]); as soon as it is done the communication stream reduce-scatters it in place
// (fp32, as rung 1) and an epilogue stream writes those rows of C_local (alpha / beta, one rounding,
// scale.cu). The same fp32 partials, bytes and workspace (m x n fp32) as rung 1.
//
// Bounded by: allgather_gemm, world products of a world-th of the gemm each, plus the last chunk's
// product after the transfers (while a chunk's product outlasts one exchange); gemm_reducescatter,
// max(product, reduce-scatter) plus the last stripe's reduce-scatter and epilogue. NCCL's kernels take
// SMs from the products while they run; behind a persistent gemm (one block per SM) they wait.
// Prediction (2 GPUs): 1.3-1.4x rung 1 (allgather_gemm), ~1.5x (gemm_reducescatter); measured (2 H200):
// 1.31x and 1.26x, the reduce-scatter's kernels and the stripes' products sharing the SMs.
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail::chunked_overlap {

namespace {

constexpr const char* kName = "chunked_overlap";

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  if (a.world == 1 || a.k == 0) {
    // Nothing to move: one rank's own rows, or k == 0 (C = beta * C, A not read).
    rank_product(a, a.world * a.m, a.A, a.lda, a.C, a.stream);
    return;
  }
  const int64_t slot = a.m * a.k;  // elements of one rank's rows, tight
  T* gathered = static_cast<T*>(a.ws->get(static_cast<size_t>(slot) * a.world * sizeof(T)));
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm);
  // What this rank sends: A_local itself when its rows are tight, else a tight copy in its slot.
  const T* mine = a.A;
  if (a.lda != a.k) {
    T* own = gathered + a.rank * slot;
    RUNGS_CUDA(cudaMemcpy2DAsync(own, a.k * sizeof(T), a.A, a.lda * sizeof(T), a.k * sizeof(T), a.m,
                                 cudaMemcpyDeviceToDevice, comm));
    mine = own;
  }
  // The transfers first (step j's rows land by event j), then the products in arrival order.
  for (int j = 1; j < a.world; ++j) {
    const int to = (a.rank + j) % a.world, from = (a.rank - j + a.world) % a.world;
    Group g;
    RUNGS_NCCL(ncclSend(mine, static_cast<size_t>(slot), nccl_type<T>(), to, a.comm, comm));
    RUNGS_NCCL(ncclRecv(gathered + from * slot, static_cast<size_t>(slot), nccl_type<T>(), from, a.comm, comm));
    g.end();
    f.record(static_cast<size_t>(j), comm);
  }
  rank_product(a, a.m, a.A, a.lda, a.C + a.rank * a.m * a.ldc, comp);
  for (int j = 1; j < a.world; ++j) {
    const int from = (a.rank - j + a.world) % a.world;
    f.wait(static_cast<size_t>(j), comp);
    rank_product(a, a.m, gathered + from * slot, a.k, a.C + from * a.m * a.ldc, comp);
  }
  f.join();
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a) {
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const int stripes = pieces_of(mb, a.n * a.world * static_cast<int64_t>(sizeof(float)));
  float* partial = static_cast<float*>(a.ws->get(static_cast<size_t>(a.m) * a.n * sizeof(float)));
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm), epi = f.stream(kEpilogue);
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    // Stripe s's slot: [d][rows][n] for d < world, after the stripes before it.
    float* buf = partial + a.world * lo * a.n;
    partial_gemm(kName, rows, a.n, a.k, a.A + lo * a.lda, a.lda, mb * a.lda, a.B, a.ldb, false, buf, a.n,
                 rows * a.n, a.world, comp);
    f.order(2 * static_cast<size_t>(s), comp, comm);
    float* mine = buf + a.rank * rows * a.n;
    RUNGS_NCCL(ncclReduceScatter(buf, mine, static_cast<size_t>(rows * a.n), ncclFloat32, ncclSum, a.comm, comm));
    f.order(2 * static_cast<size_t>(s) + 1, comm, epi);
    scale_into(rows, a.n, a.alpha, mine, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  f.join();
}

}  // namespace

void allgather_gemm_bf16(const ArgsBF& a) { allgather_gemm(a); }
void allgather_gemm_f16(const ArgsH& a) { allgather_gemm(a); }
void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }
void gemm_reducescatter_f16(const ArgsH& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::chunked_overlap
