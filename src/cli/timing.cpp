#include "cli/timing.hpp"

#include "cli/device.hpp"
#include "core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace rungs::cli {

namespace {

// Events created once per measurement and destroyed on every path out.
class Events {
 public:
  explicit Events(size_t n) : ev_(n, nullptr) {
    for (auto& e : ev_) RUNGS_CUDA(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : ev_)
      if (e) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return ev_[i]; }

 private:
  std::vector<cudaEvent_t> ev_;
};

double elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  RUNGS_CUDA(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

}  // namespace

Stats summarize(std::vector<double> ms) {
  Stats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  s.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  s.min = ms.front();
  s.max = ms.back();
  return s;
}

int reps_for(double one_run_ms, int reps) {
  if (!(one_run_ms > kSlowRunMs)) return reps;
  const int fit = static_cast<int>(std::floor(kSlowBudgetMs / one_run_ms));
  return std::min(reps, std::max(kMinSlowReps, fit));
}

L2Flusher::L2Flusher(bool enabled, int64_t l2_bytes) {
  if (!enabled || l2_bytes <= 0) return;
  bytes_ = 2 * l2_bytes / 16 * 16;
  // One allocation: the buffer read by the flush, then its 4-byte sink.
  RUNGS_CUDA(cudaMalloc(&buf_, static_cast<size_t>(bytes_) + 16));
  sink_ = reinterpret_cast<float*>(static_cast<char*>(buf_) + bytes_);
  RUNGS_CUDA(cudaMemset(buf_, 0, static_cast<size_t>(bytes_) + 16));  // defined contents to read
}

L2Flusher::~L2Flusher() {
  if (buf_) cudaFree(buf_);
}

void L2Flusher::flush(cudaStream_t stream) {
  if (buf_) read_flush(buf_, static_cast<size_t>(bytes_), sink_, stream);
}

double time_once(const Launch& f, cudaStream_t stream) {
  Events ev(2);
  RUNGS_CUDA(cudaEventRecord(ev[0], stream));
  f();
  RUNGS_CUDA(cudaEventRecord(ev[1], stream));
  RUNGS_CUDA(cudaEventSynchronize(ev[1]));
  return elapsed(ev[0], ev[1]);
}

Measurement measure(const Launch& rung, const Launch* baseline, int reps, int warmup, L2Flusher& flusher,
                    cudaStream_t stream, double first_run_ms) {
  Measurement m;
  m.warm_ms = first_run_ms;
  if (warmup > 0) {
    m.warm_ms = time_once(rung, stream);
    m.warmup = 1;
  }
  const bool slow = m.warm_ms > kSlowRunMs;
  if (!slow)
    for (; m.warmup < warmup; ++m.warmup) rung();
  if (baseline)
    for (int i = 0; i < warmup; ++i) (*baseline)();
  m.reps = reps_for(m.warm_ms, reps);
  m.cut = m.reps < reps;

  const size_t per = baseline ? 4 : 2;
  Events ev(per * static_cast<size_t>(m.reps));
  for (int r = 0; r < m.reps; ++r) {
    const size_t e = per * static_cast<size_t>(r);
    flusher.flush(stream);
    RUNGS_CUDA(cudaEventRecord(ev[e], stream));
    rung();
    RUNGS_CUDA(cudaEventRecord(ev[e + 1], stream));
    if (baseline) {
      flusher.flush(stream);
      RUNGS_CUDA(cudaEventRecord(ev[e + 2], stream));
      (*baseline)();
      RUNGS_CUDA(cudaEventRecord(ev[e + 3], stream));
    }
  }
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  for (int r = 0; r < m.reps; ++r) {
    const size_t e = per * static_cast<size_t>(r);
    m.rung_ms.push_back(elapsed(ev[e], ev[e + 1]));
    if (baseline) m.base_ms.push_back(elapsed(ev[e + 2], ev[e + 3]));
  }
  return m;
}

}  // namespace rungs::cli
