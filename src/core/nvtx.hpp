// An NVTX range around each public entry point, named after the op and the rung that runs
// ("rungs::gemm/warptile", "rungs::reduce/single_pass"; for `auto`, the rung it resolved to), in
// the NVTX domain "rungs": an Nsight Systems timeline shows which rung ran.
//
// Cheap by design (scripts/experiments/nvtx_cost/nvtx_cost.cpp measures it). Without a tool attached, NVTX
// gives the domain a null handle and the range does nothing more than test it. With a tool, each
// name is registered once per thread (nvtxDomainRegisterStringA) and cached in a thread-local list,
// so a call takes no lock and builds no string; the range is pushed with nvtxDomainRangePushEx and
// popped with nvtxDomainRangePop.
#pragma once

namespace rungs::detail {

class NvtxRange {
 public:
  // op: "gemm", "gemv", "reduce" or "gemm_host" (a string literal: it is cached by address);
  // rung: the rung's name (copied on its first use).
  NvtxRange(const char* op, const char* rung) noexcept : pushed_(push(op, rung)) {}
  ~NvtxRange() {
    if (pushed_) pop();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  static bool push(const char* op, const char* rung) noexcept;  // false: no tool attached
  static void pop() noexcept;
  bool pushed_;
};

}  // namespace rungs::detail
