// The host clock of gemm_host's own timing: CallInfo's breakdown of where a call's time went,
// and the one-second limit of a traced call's gate.
#pragma once

#include <chrono>

namespace rungs::host {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Adds the time of its scope to a counter (one of CallInfo's *_ms).
struct Timed {
  explicit Timed(double& acc) : acc_(acc), t0_(Clock::now()) {}
  ~Timed() { acc_ += ms_between(t0_, Clock::now()); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;
  double& acc_;
  Clock::time_point t0_;
};

}  // namespace rungs::host
