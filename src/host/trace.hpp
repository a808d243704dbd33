// Tuning::trace, an experiment hook: every copy and product of a call timed with CUDA events on its
// stream (CallInfo::trace; `rungs bench gemm_host --trace`). Events cost ~2 us each to issue, and a
// traced call is not replayed from a CUDA graph, so it runs a little slower than the others. With
// Tuning::trace off (every call but a test's or a probe's), the Tracer only runs the work it is given.
#pragma once

#include "core/errors.hpp"
#include "host/gemm_host.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace rungs::host {

class Tracer {
 public:
  explicit Tracer(const Tuning& tune) : on_(tune.trace) {}
  ~Tracer();  // the gate opened and its host function done before the flag goes; the events destroyed
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Before the call's first piece: the event the timeline counts from, on h2d. hold: a host function
  // holds h2d until open_gate(), so the GPU starts only once every piece has been issued and the
  // timeline shows the GPU's schedule as a graph replay runs it, not the host's issue rate (pinned
  // memory; staged memory needs the host during the run).
  void start(cudaStream_t h2d, bool hold);
  void open_gate() noexcept;
  // f's work on stream s between two timing events (the first after any waits issued before it),
  // described by what() only when tracing.
  template <typename W, typename F>
  void time(cudaStream_t s, char engine, double amount, W&& what, F&& f) {
    if (!on_) return f();
    cudaEvent_t b = timing_event(), e = timing_event();
    RUNGS_CUDA(cudaEventRecord(b, s));
    f();
    RUNGS_CUDA(cudaEventRecord(e, s));
    ops_.push_back({engine, what(), amount, b, e});
  }
  // Once the streams are done: the timed operations in issue order.
  std::vector<TraceOp> timeline() const;

 private:
  struct Op {
    char engine;
    std::string what;
    double amount;
    cudaEvent_t begin, end;
  };
  cudaEvent_t timing_event();

  bool on_;
  cudaStream_t held_ = nullptr;  // the stream the gate holds
  cudaEvent_t t0_ = nullptr;
  std::unique_ptr<std::atomic<bool>> gate_;
  std::vector<Op> ops_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace rungs::host
