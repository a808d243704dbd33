// Rung 5, narrow_partials: rung 2's gemm_reducescatter (the same stripes, streams and events) with
// each stripe's partial products leaving cuBLAS rounded to bf16 (fp32 accumulation inside the product)
// and reduce-scattered in bf16. bf16 only: f16 partials could overflow (65504) where their sum does
// not, so f16 stays on rungs 1-3.
// Adds over 2 chunked_overlap: half of rung 2's fp32 bytes on the wire, in the workspace and in the
// product's stores. With alpha = 1, beta = 0 and C_local's rows tight (ldc == n) the reduce-scatter
// writes C_local itself and the epilogue is gone; otherwise the epilogue applies alpha and beta to the
// bf16 sums as rung 2 does.
//
// The price is rounding: rung 2 rounds once (the fp32 sum, to bf16, in the epilogue); this rung
// rounds each rank's partial, each of the world-1 additions of the reduction (NCCL adds bf16 in fp32
// and stores bf16) and, off the direct path, the epilogue: at most 2*world half-units in the last
// place of the magnitude sum |alpha||A||B| + |beta||C|, against one. That is what PyTorch's
// tensor-parallel layers do (bf16 matmul, then a bf16 reduce-scatter); `auto`'s bf16 partials are
// rung 9's (summed in fp32), so this rung is asked for by name.
//
// Bounded by: max(product, bf16 reduce-scatter) plus the last stripe's reduce-scatter, as rung 2, with
// the reduce-scatter half as long (at m = 16384, n = 8192, k_local = 4096 on 2 GPUs the product
// outlasts it), and the SMs NCCL's kernels take from the stripes' products.
// Prediction: 1.3-1.5x rung 2 (2 H200); measured: 1.22x rung 2, 1.54x rung 1: the stripes' products
// stretch by ~0.4 ms (of 1.23) beside NCCL's kernels.
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail::narrow_partials {

namespace {

constexpr const char* kName = "narrow_partials";

void gemm_reducescatter(const ArgsBF& a) {
  using T = __nv_bfloat16;
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const int stripes = pieces_of(mb, a.n * a.world * static_cast<int64_t>(sizeof(T)));
  T* partial = static_cast<T*>(a.ws->get(static_cast<size_t>(a.m) * a.n * sizeof(T)));
  // The reduce-scatter's sums are C_local's values when nothing is scaled and its rows are tight.
  const bool direct = a.alpha == 1.0f && a.beta == 0.0f && a.ldc == a.n;
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm), epi = f.stream(kEpilogue);
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    // Stripe s's slot: [d][rows][n] for d < world, after the stripes before it.
    T* buf = partial + a.world * lo * a.n;
    partial_gemm(kName, rows, a.n, a.k, a.A + lo * a.lda, a.lda, mb * a.lda, a.B, a.ldb, buf, a.n, rows * a.n,
                 a.world, comp);
    f.order(2 * static_cast<size_t>(s), comp, comm);
    T* sums = direct ? a.C + lo * a.ldc : buf + a.rank * rows * a.n;
    RUNGS_NCCL(ncclReduceScatter(buf, sums, static_cast<size_t>(rows * a.n), ncclBfloat16, ncclSum, a.comm, comm));
    if (direct) continue;
    f.order(2 * static_cast<size_t>(s) + 1, comm, epi);
    scale_into(rows, a.n, a.alpha, sums, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  f.join();
}

}  // namespace

void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::narrow_partials
