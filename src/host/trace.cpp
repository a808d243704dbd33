// Tuning::trace's timing of a call's copies and products (trace.hpp).
#include "host/trace.hpp"

#include "host/clock.hpp"
#include "host/context.hpp"

#include <thread>

namespace rungs::host {

namespace {

// At most a second: a rung that synchronized while the gate was shut would otherwise hang the
// call (the timeline is then the host's again, not wrong).
void CUDART_CB wait_for_gate(void* flag) {
  const auto until = Clock::now() + std::chrono::seconds(1);
  while (!static_cast<std::atomic<bool>*>(flag)->load(std::memory_order_acquire) && Clock::now() < until)
    std::this_thread::yield();
}

}  // namespace

Tracer::~Tracer() {
  if (gate_) {  // the host function must be done with the flag before it is freed
    open_gate();
    quietly([&] { return cudaStreamSynchronize(held_); });
  }
  for (cudaEvent_t e : events_) quietly([&] { return cudaEventDestroy(e); });
}

void Tracer::start(cudaStream_t h2d, bool hold) {
  if (!on_) return;
  if (hold) {
    gate_ = std::make_unique<std::atomic<bool>>(false);
    held_ = h2d;
    RUNGS_CUDA(cudaLaunchHostFunc(h2d, wait_for_gate, gate_.get()));
  }
  RUNGS_CUDA(cudaEventRecord(t0_ = timing_event(), h2d));
}

void Tracer::open_gate() noexcept {
  if (gate_) gate_->store(true, std::memory_order_release);
}

std::vector<TraceOp> Tracer::timeline() const {
  std::vector<TraceOp> out;
  for (const Op& op : ops_) {
    TraceOp o{op.engine, op.what, op.amount, 0, 0};
    float b = 0, e = 0;
    RUNGS_CUDA(cudaEventElapsedTime(&b, t0_, op.begin));
    RUNGS_CUDA(cudaEventElapsedTime(&e, t0_, op.end));
    o.start_ms = b, o.end_ms = e;
    out.push_back(std::move(o));
  }
  return out;
}

cudaEvent_t Tracer::timing_event() {
  cudaEvent_t e = nullptr;
  RUNGS_CUDA(cudaEventCreate(&e));
  events_.push_back(e);
  return e;
}

}  // namespace rungs::host
