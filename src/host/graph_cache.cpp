// The CUDA graph of a context's repeated calls (graph_cache.hpp): the call's key, capture,
// replay and forgetting.
#include "host/graph_cache.hpp"

#include "core/errors.hpp"
#include "host/context.hpp"

#include <sstream>

namespace rungs::host {

std::string call_key(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                     const void* A, const void* B, const void* C, float alpha, float beta, const Options& opts,
                     size_t elem_bytes, const Tuning& tune) {
  std::ostringstream os;
  os << int(ta) << int(tb) << ' ' << m << ' ' << n << ' ' << k << ' ' << lda << ' ' << ldb << ' ' << ldc << ' ' << A
     << ' ' << B << ' ' << C << ' ' << std::hexfloat << alpha << ' ' << beta << ' ' << opts.variant << ' '
     << int(opts.math) << ' ' << elem_bytes << ' ' << tune.device_bytes;
  if (tune.plan)
    os << " plan " << tune.plan->row_panels << 'x' << tune.plan->col_panels << ':' << tune.plan->kmajor_chunks << '/'
       << tune.plan->kmajor_fraction << ':' << tune.plan->kmajor_row_panels;
  return os.str();
}

void GraphCache::launch(cudaStream_t s) const { RUNGS_CUDA(cudaGraphLaunch(exec_, s)); }

bool GraphCache::capture_next(const std::string& key) {
  const bool capture = !key.empty() && key == last_key_ && key != refused_key_;
  if (capture) forget();
  last_key_ = key;
  return capture;
}

void GraphCache::begin_capture(cudaStream_t h2d, cudaStream_t comp, cudaStream_t d2h, cudaEvent_t fork) {
  RUNGS_CUDA(cudaStreamBeginCapture(h2d, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  RUNGS_CUDA(cudaEventRecord(fork, h2d));  // fork the other two streams into the capture
  RUNGS_CUDA(cudaStreamWaitEvent(comp, fork, 0));
  RUNGS_CUDA(cudaStreamWaitEvent(d2h, fork, 0));
}

void GraphCache::end_capture(cudaStream_t h2d, cudaStream_t comp, cudaStream_t d2h, cudaEvent_t ev_comp,
                             cudaEvent_t ev_d2h, const std::string& key) {
  RUNGS_CUDA(cudaEventRecord(ev_comp, comp));
  RUNGS_CUDA(cudaStreamWaitEvent(h2d, ev_comp, 0));
  RUNGS_CUDA(cudaEventRecord(ev_d2h, d2h));
  RUNGS_CUDA(cudaStreamWaitEvent(h2d, ev_d2h, 0));
  cudaGraph_t g = nullptr;
  capturing_ = false;
  RUNGS_CUDA(cudaStreamEndCapture(h2d, &g));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
  (void)cudaGraphDestroy(g);
  if (e != cudaSuccess) detail::throw_cuda(e, "cudaGraphInstantiate", __FILE__, __LINE__);
  exec_ = exec;
  key_ = key;
  RUNGS_CUDA(cudaGraphLaunch(exec, h2d));
}

void GraphCache::abandon_capture(cudaStream_t h2d) noexcept {
  if (!capturing_) return;
  cudaGraph_t g = nullptr;
  quietly([&] { return cudaStreamEndCapture(h2d, &g); });
  if (g) (void)cudaGraphDestroy(g);
  capturing_ = false;
}

void GraphCache::refuse(const std::string& key) {
  drop();
  refused_key_ = key;
}

void GraphCache::forget() {
  if (exec_) quietly([&] { return cudaGraphExecDestroy(exec_); });
  exec_ = nullptr;
  key_.clear();
}

void GraphCache::drop() {
  forget();
  last_key_.clear();
}

}  // namespace rungs::host
