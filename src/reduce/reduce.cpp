// rungs::reduce_sum: argument checking, n == 0, variant lookup and the `auto` choice, for
// the four input types. Every rung is reached through here, the CLI and the tests included.
#include "core/errors.hpp"
#include "core/nvtx.hpp"
#include "reduce/reduce_rung.hpp"

#include <sstream>

namespace rungs {

namespace {

const reduce::Rung& find_reduce_rung(const std::string& name) {
  return detail::find_rung(reduce::ladder(), "reduce_sum", name);
}

template <typename T, typename S>
void dispatch(DType dtype, const T* in, int64_t n, S* out, const Options& opts) {
  if (opts.math != Math::fp32)
    throw Error("rungs::reduce_sum: math must be Math::fp32 (tf32 modes apply to the tensor-core gemm only)");
  detail::refuse_epilogue("reduce_sum", opts);
  if (n < 0) detail::fail_arg("reduce_sum", "n", n, ">= 0");
  if (out == nullptr) detail::fail_arg("reduce_sum", "out", "nullptr", "a device pointer");
  if (in == nullptr && n > 0) detail::fail_arg("reduce_sum", "in", "nullptr", "a device pointer (n > 0)");
  const std::string name = opts.variant == "auto" ? resolve_reduce_variant(dtype, n, opts) : opts.variant;
  const reduce::Rung& rung = find_reduce_rung(name);
  const detail::NvtxRange range("reduce", rung.name);  // "rungs::reduce/<rung>" on a profiler's timeline
  detail::require_sm("reduce_sum", rung.name, rung.min_sm);
  if (n == 0) {  // the empty sum: all-zero bits are 0 for every output type
    RUNGS_CUDA(cudaMemsetAsync(out, 0, sizeof(S), opts.stream));
    return;
  }
  const reduce::Args args{dtype, in, n, out, opts.stream};
  rung.run(args);
}

}  // namespace

std::string resolve_reduce_variant(DType dtype, int64_t n, const Options& opts) {
  if (opts.variant != "auto") return find_reduce_rung(opts.variant).name;
  return reduce::auto_variant(dtype, n, detail::current_sm());
}

void reduce_sum(const int32_t* in, int64_t n, int64_t* out, const Options& opts) {
  dispatch(DType::i32, in, n, out, opts);
}
void reduce_sum(const int64_t* in, int64_t n, int64_t* out, const Options& opts) {
  dispatch(DType::i64, in, n, out, opts);
}
void reduce_sum(const float* in, int64_t n, float* out, const Options& opts) { dispatch(DType::f32, in, n, out, opts); }
void reduce_sum(const double* in, int64_t n, double* out, const Options& opts) {
  dispatch(DType::f64, in, n, out, opts);
}

}  // namespace rungs
