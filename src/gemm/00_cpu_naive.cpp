// Rung 0, cpu_naive: article 004's serial CPU version, kept for the seed comparison
// ("CPU time" beside the GPU rungs). The operands are copied to the host, multiplied with
// i-j-k loops in float on one thread, and C is copied back; the call synchronizes its stream.
// Bounded by one CPU core: O(m n k) scalar work, 2-4 s at 1024^3 in the article.
// Not capturable into a CUDA graph (the host does the work between two synchronizations): on a
// capturing stream it throws rungs::Unsupported.
#include <rungs/reference.hpp>

#include "core/errors.hpp"
#include "gemm/gemm_rung.hpp"

#include <vector>

namespace rungs::sgemm::cpu_naive {

namespace {
// Copy a stored rows x cols matrix (row stride ld) from the device into a dense host buffer.
std::vector<float> fetch(const float* d, int64_t rows, int64_t cols, int64_t ld, cudaStream_t s) {
  std::vector<float> h(static_cast<size_t>(rows * cols));
  RUNGS_CUDA(cudaMemcpy2DAsync(h.data(), cols * sizeof(float), d, ld * sizeof(float), cols * sizeof(float), rows,
                               cudaMemcpyDeviceToHost, s));
  return h;
}
}  // namespace

void run(const Args& a) {
  detail::refuse_capture(a.stream, "cpu_naive", "the multiplication runs on the host between two synchronizations");
  // 2^31 multiply-adds take about a second or two on one core; beyond that a sweep would stall.
  if (static_cast<double>(a.m) * a.n * a.k > 2147483648.0)
    detail::unsupported("cpu_naive", "the serial CPU loop is limited to m*n*k <= 2^31");
  const int64_t ar = a.ta == Trans::N ? a.m : a.k, ac = a.ta == Trans::N ? a.k : a.m;
  const int64_t br = a.tb == Trans::N ? a.k : a.n, bc = a.tb == Trans::N ? a.n : a.k;
  std::vector<float> A = fetch(a.A, ar, ac, a.lda, a.stream);
  std::vector<float> B = fetch(a.B, br, bc, a.ldb, a.stream);
  std::vector<float> C = a.beta != 0.0f ? fetch(a.C, a.m, a.n, a.ldc, a.stream)
                                        : std::vector<float>(static_cast<size_t>(a.m * a.n));
  RUNGS_CUDA(cudaStreamSynchronize(a.stream));
  reference::gemm_naive_fp32(a.ta, a.tb, a.m, a.n, a.k, a.alpha, A.data(), ac, B.data(), bc, a.beta, C.data(), a.n);
  RUNGS_CUDA(cudaMemcpy2DAsync(a.C, a.ldc * sizeof(float), C.data(), a.n * sizeof(float), a.n * sizeof(float), a.m,
                               cudaMemcpyHostToDevice, a.stream));
  RUNGS_CUDA(cudaStreamSynchronize(a.stream));
}

}  // namespace rungs::sgemm::cpu_naive
