// Rung 6, narrow_copy_engine: what it adds over rung 5 (narrow_partials): rung 5's bf16 partials
// carried by rung 4's copy engines. The reduce-scatter is rung 4's (diff the two files): each
// stripe's partials multiplied into the symmetric window (one strided-batched cuBLAS call per
// stripe, [destination][rows][n]), sent by ncclAlltoAll on the split communicator, so NCCL 2.28
// moves them on copy engines and the products keep every SM, and added on the epilogue stream in
// rank order; only the partials are bf16 (rounded by the product, fp32 accumulation inside it),
// half of rung 4's bytes on the wire, in the window and in the sums' reads. gemm_reducescatter in
// bf16 only, as rung 5: f16 partials could overflow (65504) where their sum does not.
//
// Accuracy: each rank's partial is rounded once to bf16, the world partials are added in fp32 and
// the result rounded once: world + 1 roundings, at most (world + 1) half-units in the last place
// of the magnitude sum |alpha||A||B| + |beta||C|, against rung 5's 2 * world (its reduction rounds
// each partial sum) and rung 4's one. `auto` runs these partials in rung 8's order (rung 9), so this
// rung is asked for by name.
//
// Bounded by: the product on every SM plus the last stripe's all-to-all and sum, the all-to-all half
// of rung 4's; where the transfer is the longer part (4 ranks at 2^38 multiply-adds per rank, where
// rung 4's fp32 all-to-all took most of its time), the copy engines' bandwidth on half the bytes.
// Prediction: 4 H200, m = 16384, n = 8192, k_local = 2048: 1.0-1.1 ms against rung 5's 1.37;
// measured: 1.40-1.41 ms, level with rung 5 (2 H200: 1.58x rung 1 against rung 5's 1.37x).
#include "dist/dist_rung.hpp"

namespace rungs::dist::detail::narrow_copy_engine {

namespace {

constexpr const char* kName = "narrow_copy_engine";

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)

void gemm_reducescatter(const ArgsBF& a) {
  using T = __nv_bfloat16;
  const int64_t mb = a.m / a.world;  // rows of C_local: each rank's block
  const int stripes = pieces_of(mb, a.n * a.world * static_cast<int64_t>(sizeof(T)));
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  if (a.world == 1) {
    // Nothing to move: the one rank's partial, scaled.
    T* p = static_cast<T*>(a.ws->get(elems * sizeof(T)));
    partial_gemm(kName, a.m, a.n, a.k, a.A, a.lda, 0, a.B, a.ldb, p, a.n, 0, 1, a.stream);
    scale_into(a.m, a.n, a.alpha, p, a.n, a.beta, a.C, a.ldc, a.stream);
    return;
  }
  CeWindow& st = ce_window(*a.ws, a.comm, a.rank, 2 * elems * sizeof(T));
  T* sent = static_cast<T*>(st.buf);  // [stripe][destination][rows][n]
  T* got = sent + elems;              // [stripe][source][rows][n]
  Fork f(*a.ws, a.stream);
  const cudaStream_t comp = f.stream(kCompute), comm = f.stream(kComm), epi = f.stream(kEpilogue);
  for (int s = 0; s < stripes; ++s) {
    const int64_t lo = piece_begin(mb, stripes, s), rows = piece_begin(mb, stripes, s + 1) - lo;
    T* out = sent + a.world * lo * a.n;
    T* const in = got + a.world * lo * a.n;
    partial_gemm(kName, rows, a.n, a.k, a.A + lo * a.lda, a.lda, mb * a.lda, a.B, a.ldb, out, a.n, rows * a.n,
                 a.world, comp);
    f.order(2 * static_cast<size_t>(s), comp, comm);
    RUNGS_NCCL(ncclAlltoAll(out, in, static_cast<size_t>(rows * a.n), ncclBfloat16, st.comm, comm));
    f.order(2 * static_cast<size_t>(s) + 1, comm, epi);
    sum_into(rows, a.n, a.world, rows * a.n, a.alpha, in, a.n, a.beta, a.C + lo * a.ldc, a.ldc, epi);
  }
  f.join();
  RUNGS_CUDA(cudaEventRecord(st.last_use, a.stream));
}

#else

[[noreturn]] void gemm_reducescatter(const ArgsBF&) {
  needs_nccl_2_28(kName, "(copy-engine collectives on symmetric windows)");
}

#endif

}  // namespace

void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a); }

}  // namespace rungs::dist::detail::narrow_copy_engine
