// Rung 2, chunked_overlap: what it adds over rung 1 (nccl_then_gemm): the transfer is cut into
// chunks on a communication stream and each chunk's product starts, on a compute stream, as soon
// as that chunk has landed (events between the streams, no host synchronization), so the product
// of what is already here hides the transfer of what is still coming.
//
// allgather_gemm: the chunks are the ranks' A_local. The rank's own rows need no transfer: their
// product (C rows [r*m, (r+1)*m) = A_local * B_r, straight from A_local) starts first, while
// world-1 pairwise exchanges run on the communication stream (step j: ncclSend of A_local to rank
// r+j and ncclRecv of rank r-j's rows into its slot of the workspace, one NCCL group per step), each
// followed by the product of the rows it brought. Every transfer is enqueued before the products,
// so NCCL's kernels are queued (at the greatest stream priority) before the gemms fill the SMs.
// Bound: world products of m rows instead of one of world*m rows (each gemm a world-th of the
// work), plus whatever of a step's transfer is not hidden: the first exchange hides under the own
// product, exchange j+1 under chunk j's product, as long as one chunk's product (gemm time / world)
// outlasts one exchange (all-gather time / (world-1)); then only the last chunk's product is exposed
// after the transfers. NCCL's kernels take SMs from the gemm while they run; a persistent gemm
// kernel (one block per SM) leaves none, and the transfer then waits for a product's end.
//
// gemm_reducescatter: the local product is cut into stripes of rows: stripe s holds, for every
// destination rank d, rows [d*m/world + lo_s, d*m/world + hi_s) (pieces_of: stripes of >= 8 MiB of
// fp32, at most 8). Each stripe's fp32 partial is one strided-batched cuBLAS call (batch = world,
// dist::detail::partial_gemm) into its slot of the workspace ([d][rows][n]); as soon as it is done
// the communication stream reduce-scatters it in place (ncclReduceScatter, fp32, as rung 1), and an
// epilogue stream writes those rows of C_local (alpha/beta and the one rounding, scale.cu). So the
// reduction of stripe s overlaps the product of stripe s+1. Bound: max(product, reduce-scatter)
// plus the last stripe's reduce-scatter and epilogue; the same fp32 partials, bytes and workspace
// (m x n fp32) as rung 1.
//
// Prediction (2 H100, bf16; issue 37 measured all-gather 560 us, product 1,430 us, one after the
// other 2,050 us at M = 16384, k = 8192, n_local = 4096): allgather_gemm about 1,500-1,600 us (the
// 560 us exchange under the own half's 715 us product, then the other half; the rest is two
// half-size gemms' lower efficiency and the SMs NCCL's kernels take), 1.3-1.4x faster than rung 1.
// gemm_reducescatter at m = 16384, k_local = 4096, n = 8192: product about 1,430 us (same flops),
// the fp32 reduce-scatter about 1,100 us (256 MiB each way at the all-gather's 240 GB/s: an
// estimate), rung 1 about 2,600 us; this rung about 1,650-1,800 us (the longer of the two plus one
// eighth of the reduce-scatter).
// Measured on 2 H200 joined by NVLink (dd3d148, `rungs bench allgather_gemm --world 2 --m 8192 --n
// 4096 --k 8192`, `rungs bench gemm_reducescatter --world 2 --m 16384 --n 8192 --k 4096`, medians
// of 20, the slowest rank's): allgather_gemm 1.389 ms against rung 1's 1.820 (1.31x), the
// all-gather alone 0.565 and the product alone 1.216 ms: 1.14x of the longer, overlap efficiency
// 0.88; gemm_reducescatter 2.094 ms against 2.642 (1.26x), the fp32 reduce-scatter alone 1.065 and
// the product 1.240 ms: efficiency 0.59, the reduce-scatter's kernels and the stripes' products
// sharing the SMs. A second run: 1.330 and 2.085 ms.
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
