// The flow of one gemm_host call on a context's three streams: for each job, the pieces of op(A)
// and op(B) (and C when beta != 0) go to the device in the order of host/schedule.hpp on the H2D
// stream; each block of C is multiplied once its two pieces are there (rungs::gemm on the compute
// stream, so opts.variant picks the rung); each finished block goes back on the D2H stream. H2D and
// D2H use the two copy engines, so the three overlap. Pinned memory is copied directly, pageable
// memory through the pinned slots (host/staging.hpp).
#pragma once

#include <rungs/rungs.hpp>

#include "host/clock.hpp"
#include "host/gemm_host.hpp"
#include "host/schedule.hpp"
#include "host/staging.hpp"

#include <string>
#include <vector>

namespace rungs::host {

class Context;

// The call as the flow sees it.
template <typename T>
struct FlowCall {
  Trans ta = Trans::N, tb = Trans::N;
  float alpha = 1.0f, beta = 0.0f;
  const Options* opts = nullptr;
  Operand<T> a, b, c;
};

// Runs the call's jobs and returns what it did, once C is in the caller's memory. capture_key:
// the whole call is recorded as a CUDA graph, kept in cx.graph under that key and launched
// (pinned memory, one job). tune: the call's Tuning (a forced plan, tracing, an injected failure).
// A failure throws once nothing the call issued still runs or writes into the caller's memory.
template <typename T>
CallInfo run_flow(Context& cx, const Staging& staging, const FlowCall<T>& call, const std::vector<Job>& jobs,
                  const Tuning& tune, Clock::time_point call_start, const std::string* capture_key);

}  // namespace rungs::host
