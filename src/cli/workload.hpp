// One case of one ladder (host data, the fp64 reference, device buffers) and how to launch a
// variant on it: bench, verify and tune drive every ladder through this interface
// (commands.cpp), and profile's child process builds one the same way (profile.cpp).
#pragma once

#include "cli/args.hpp"
#include "cli/results.hpp"
#include "cli/timing.hpp"

#include <cuda_runtime_api.h>

#include <memory>
#include <ostream>
#include <string>

namespace rungs::cli {

class Workload {
 public:
  Workload(const Args& a, std::string op, const Case& c) : args_(a), op_(std::move(op)), case_(c) {}
  virtual ~Workload() = default;
  const std::string& op() const { return op_; }
  const Case& the_case() const { return case_; }
  virtual Launch launch(const std::string& variant, cudaStream_t stream) const = 0;
  // The output poisoned (or set to its beta input), one timed launch, the output copied back
  // and compared with the reference; r gets the error measures. Returns the launch's time.
  virtual double correctness_run(const Launch& f, const std::string& variant, Result& r, cudaStream_t stream) = 0;
  virtual std::string resolve_auto() const = 0;
  // The bytes the operation must move at least (the "GB/s" numerator).
  virtual double bytes() const = 0;
  Result new_result() const {
    Result r;
    r.op = op_;
    r.shape = case_.shape;
    r.trans = case_.trans;
    r.dtype = case_.dtype;
    r.kind = case_.kind;
    r.workload = case_.workload;
    if (case_.kind == check::GemmKind::fp8) r.scaling = scaling_name(case_.scaling);
    r.epilogue = epi_name(case_.epi);
    r.alpha = args_.alpha;
    r.beta = args_.beta;
    return r;
  }
  bool baseline_ok = false;
  std::string baseline_reason;

 protected:
  static void fail_with(Result& r, const std::string& reason) {
    r.status = Status::fail;
    std::string why = reason;
    while (!why.empty() && (why.back() == ' ' || why.back() == ';')) why.pop_back();
    r.reason = why.empty() ? "outside the tolerance" : why;
  }
  const Args& args_;  // the caller's: it must outlive the workload
  std::string op_;
  Case case_;
};

// The workload of one case of `op` ("gemm", "gemv", "reduce") as bench builds it: random data
// (a.seed), the reference, device buffers uploaded (on a stream of its own, synchronized before it
// returns). Progress lines go to err unless a.quiet. Needs the GPU (the current device).
std::unique_ptr<Workload> new_workload(const Args& a, const std::string& op, const Case& c, std::ostream& err);

}  // namespace rungs::cli
