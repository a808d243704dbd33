// Rung 1, nccl_then_gemm: the collective, then the product, one after the other on the caller's
// stream: what users write today, and the baseline of the dist ladder. Its time is the
// communication's plus the product's; the later rungs hide one under the other.
//
// allgather_gemm: rank r's A_local goes into its slot of the gathered A in the workspace
// (world*m_local x k, tight rows); ncclAllGather fills the other slots (out of place from A_local
// when its rows are tight, else after a cudaMemcpy2DAsync into the slot, in place), then
// rungs::gemm with variant auto multiplies the gathered A by B_r. C is that gemm's result bit for
// bit: the test compares it with rungs::gemm of the gathered operands.
//
// gemm_reducescatter: each rank's partial product A_r * B_r is written in fp32 (cublasGemmEx,
// bf16/f16 inputs, fp32 output and accumulation: rungs::gemm writes 16-bit C only), the partials
// are summed by ncclReduceScatter in fp32 in place, and one kernel writes
// C_local = alpha * sum + beta * C_local with a single rounding to bf16/f16. Summing 16-bit
// partials instead would halve the bytes sent but round each partial (2^-9 relative for bf16) and
// every partial sum along NCCL's ring or tree again: the error grows with the world size and
// depends on NCCL's algorithm. fp32 partials give the error of one fp32 gemm over the whole k plus
// one final rounding, whatever the world size; the cost is 4 bytes per element of C sent instead
// of 2, and an m x n fp32 workspace.
#include "dist/dist_rung.hpp"

#include "core/cublas_handle.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <climits>

namespace rungs::dist::detail::nccl_then_gemm {

namespace {

template <typename T>
void allgather_gemm(const ArgsT<T>& a) {
  const size_t slot = static_cast<size_t>(a.m) * static_cast<size_t>(a.k);  // elements of one rank's A
  T* gathered = static_cast<T*>(a.ws->get(slot * static_cast<size_t>(a.world) * sizeof(T)));
  if (slot > 0) {
    if (a.lda == a.k) {
      RUNGS_NCCL(ncclAllGather(a.A, gathered, slot, nccl_type<T>(), a.comm, a.stream));
    } else {
      T* mine = gathered + static_cast<size_t>(a.rank) * slot;
      RUNGS_CUDA(cudaMemcpy2DAsync(mine, a.k * sizeof(T), a.A, a.lda * sizeof(T), a.k * sizeof(T), a.m,
                                   cudaMemcpyDeviceToDevice, a.stream));
      RUNGS_NCCL(ncclAllGather(mine, gathered, slot, nccl_type<T>(), a.comm, a.stream));
    }
  }
  Options o;
  o.stream = a.stream;
  gemm(Trans::N, Trans::N, a.world * a.m, a.n, a.k, a.alpha, gathered, std::max<int64_t>(a.k, 1), a.B, a.ldb, a.beta,
       a.C, a.ldc, o);
}

template <typename T>
void gemm_reducescatter(const ArgsT<T>& a, cudaDataType_t type) {
  if (a.m > INT_MAX || a.n > INT_MAX || a.k > INT_MAX || a.lda > INT_MAX || a.ldb > INT_MAX)
    rungs::detail::unsupported("nccl_then_gemm", "cuBLAS takes 32-bit sizes and leading dimensions");
  const size_t elems = static_cast<size_t>(a.m) * static_cast<size_t>(a.n);
  float* partial = static_cast<float*>(a.ws->get(elems * sizeof(float)));
  if (a.k == 0) {
    RUNGS_CUDA(cudaMemsetAsync(partial, 0, elems * sizeof(float), a.stream));
  } else {
    // Row-major P = A B is column-major P^T = B^T A^T: the operands swap.
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h = rungs::detail::cublas_handle(a.stream);
    RUNGS_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(a.n), static_cast<int>(a.m),
                              static_cast<int>(a.k), &one, a.B, type, static_cast<int>(a.ldb), a.A, type,
                              static_cast<int>(a.lda), &zero, partial, CUDA_R_32F, static_cast<int>(a.n),
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  const int64_t rows = a.m / a.world;
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(a.n);
  float* mine = partial + static_cast<size_t>(a.rank) * count;
  RUNGS_NCCL(ncclReduceScatter(partial, mine, count, ncclFloat32, ncclSum, a.comm, a.stream));
  scale_into(rows, a.n, a.alpha, mine, a.n, a.beta, a.C, a.ldc, a.stream);
}

}  // namespace

void allgather_gemm_bf16(const ArgsBF& a) { allgather_gemm(a); }
void allgather_gemm_f16(const ArgsH& a) { allgather_gemm(a); }
void gemm_reducescatter_bf16(const ArgsBF& a) { gemm_reducescatter(a, CUDA_R_16BF); }
void gemm_reducescatter_f16(const ArgsH& a) { gemm_reducescatter(a, CUDA_R_16F); }

}  // namespace rungs::dist::detail::nccl_then_gemm
