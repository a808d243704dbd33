// The flow of one gemm_host call (flow.hpp): the jobs' schedules issued on the context's streams.
// What bounds it: the larger of bytes in / PCIe H2D, bytes out / PCIe D2H and the multiplication,
// plus the first pieces before any multiplication starts and the last block's trip back.
// docs/gemm_host.md has the floors, the schedule's simulation and the measurements.
#include "host/flow.hpp"

#include "core/errors.hpp"
#include "core/scratch.hpp"
#include "host/context.hpp"
#include "host/policy.hpp"
#include "host/trace.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace rungs::host {

namespace {

template <typename T>
class Flow {
 public:
  Flow(Context& cx, const Staging& staging, const FlowCall<T>& call, const Tuning& tune)
      : cx_(cx), staging_(staging), ta_(call.ta), tb_(call.tb), alpha_(call.alpha), beta_(call.beta),
        opts_(*call.opts), A_(call.a), B_(call.b), C_(call.c), tune_(tune), tracer_(tune),
        stager_(cx, staging_, C_, info_, tracer_) {}
  Flow(const Flow&) = delete;
  Flow& operator=(const Flow&) = delete;

  CallInfo run(const std::vector<Job>& jobs, double rate, int sms, Clock::time_point call_start,
               const std::string* capture_key) {
    CallInfo& info = info_;
    const auto t_issue = Clock::now();
    info.setup_ms = ms_between(call_start, t_issue);
    if (capture_key) cx_.graph.begin_capture(cx_.h2d, cx_.comp, cx_.d2h, cx_.ev_sync);
    info.jobs = static_cast<int64_t>(jobs.size());
    info.staged_a = A_.staged;
    info.staged_b = B_.staged;
    info.staged_c = C_.staged;
    info.host_threads = staging_.threads + staging_.unpack_threads;
    info.unpack_threads = staging_.unpack_threads;
    tracer_.start(cx_.h2d, !A_.staged && !B_.staged && !C_.staged);
    for (size_t j = 0; j < jobs.size(); ++j) {
      const Job& job = jobs[j];
      if (j > 0) between_jobs(jobs[j - 1], job);
      const bool reads_c = job.first_k && beta_ != 0.0f;
      const Plan plan = tune_.plan ? *tune_.plan
                                   : job_plan(job, reads_c, sizeof(T), ta_ == Trans::T, tb_ == Trans::T, rate, sms);
      if (j == 0) info.plan = plan;
      const Schedule s = make_schedule(job.rows.size(), job.cols.size(), job.k.size(), plan, reads_c);
      info.steps += static_cast<int64_t>(s.steps.size());
      run_job(job, s, reads_c);
    }
    if (capture_key) cx_.graph.end_capture(cx_.h2d, cx_.comp, cx_.d2h, cx_.ev_sync, cx_.ev_join, *capture_key);
    const auto t_wait = Clock::now();
    info.issue_ms = ms_between(t_issue, t_wait);
    tracer_.open_gate();
    stager_.drain();
    RUNGS_CUDA(cudaStreamSynchronize(cx_.d2h));
    RUNGS_CUDA(cudaStreamSynchronize(cx_.comp));
    RUNGS_CUDA(cudaStreamSynchronize(cx_.h2d));
    const auto t_end = Clock::now();
    info.wait_ms = ms_between(t_wait, t_end);
    info.total_ms = ms_between(call_start, t_end);
    info.trace = tracer_.timeline();
    return info;
  }

  // After a failure: nothing may still run or write into the user's memory when we return.
  void abandon() noexcept {
    stager_.stop_unpacking();
    tracer_.open_gate();
    cx_.graph.abandon_capture(cx_.h2d);
    for (cudaStream_t s : {cx_.h2d, cx_.comp, cx_.d2h}) quietly([&] { return cudaStreamSynchronize(s); });
    stager_.reset();
  }

 private:
  // The stored region of op(A)[rows, k], op(B)[k, cols], C[rows, cols].
  Region a_region(Range rows, Range k) const {
    return ta_ == Trans::N ? Region{rows.lo, k.lo, rows.size(), k.size()}
                           : Region{k.lo, rows.lo, k.size(), rows.size()};
  }
  Region b_region(Range k, Range cols) const {
    return tb_ == Trans::N ? Region{k.lo, cols.lo, k.size(), cols.size()}
                           : Region{cols.lo, k.lo, cols.size(), k.size()};
  }
  static Region c_region(Range rows, Range cols) { return {rows.lo, cols.lo, rows.size(), cols.size()}; }
  static Range shift(Range r, int64_t by) { return {r.lo + by, r.hi + by}; }
  std::string name(const Operand<T>& op) const { return &op == &A_ ? "A" : &op == &B_ ? "B" : "C"; }

  void window(Operand<T>& op, int which, Region r) {
    op.dev = static_cast<T*>(cx_.device(which, sizeof(T) * static_cast<size_t>(r.rows * r.cols)));
    op.dev_ld = r.cols;
    op.org_r = r.r0;
    op.org_c = r.c0;
  }

  void run_job(const Job& job, const Schedule& s, bool reads_c) {
    window(A_, 0, a_region(job.rows, job.k));
    window(B_, 1, b_region(job.k, job.cols));
    window(C_, 2, c_region(job.rows, job.cols));
    size_t next_event = 0;
    for (const Step& st : s.steps) {
      if (steps_done_++ == tune_.fail_at_step)
        throw Error("rungs::gemm_host: failure injected at step " + std::to_string(tune_.fail_at_step) + " (a test)");
      const Range rows = shift(st.piece.is_a ? s.piece_rows(st.piece) : Range{0, job.rows.size()}, job.rows.lo);
      const Range cols = shift(st.piece.is_a ? Range{0, job.cols.size()} : s.cols[st.piece.panel], job.cols.lo);
      const Range k = shift(s.chunks[st.piece.chunk], job.k.lo);
      if (st.upload_c && reads_c) upload(C_, c_region(rows, shift({0, job.cols.size()}, job.cols.lo)));
      if (st.piece.is_a) upload(A_, a_region(rows, k)); else upload(B_, b_region(k, cols));
      if (!st.products.empty()) {
        RUNGS_CUDA(cudaEventRecord(cx_.ev_up, cx_.h2d));
        RUNGS_CUDA(cudaStreamWaitEvent(cx_.comp, cx_.ev_up, 0));
        for (const Product& p : st.products) multiply(job, p);
        if (job.last_k && !st.finished.empty()) {
          cudaEvent_t done = cx_.event(next_event++);
          RUNGS_CUDA(cudaEventRecord(done, cx_.comp));
          for (const Product& f : st.finished)
            download(c_region(shift(f.rows, job.rows.lo), shift(f.cols, job.cols.lo)), done);
        }
      }
      stager_.service();
    }
  }

  void multiply(const Job& job, const Product& p) {
    const Range rows = shift(p.rows, job.rows.lo), cols = shift(p.cols, job.cols.lo), k = shift(p.k, job.k.lo);
    const Region ar = a_region(rows, k), br = b_region(k, cols);
    Options o;
    o.variant = opts_.variant;
    o.math = opts_.math;
    o.stream = cx_.comp;
    const float beta = p.first_k && job.first_k ? beta_ : 1.0f;
    Timed t(info_.gemm_calls_ms);
    tracer_.time(cx_.comp, 'K', double(rows.size()) * double(cols.size()) * double(k.size()),
                 [&] {
                   return "C" + span(rows, cols) + " k[" + std::to_string(k.lo) + ":" + std::to_string(k.hi) + "]";
                 },
                 [&] {
                   gemm(ta_, tb_, rows.size(), cols.size(), k.size(), alpha_, A_.dev_at(ar.r0, ar.c0), A_.dev_ld,
                        B_.dev_at(br.r0, br.c0), B_.dev_ld, beta, C_.dev_at(rows.lo, cols.lo), C_.dev_ld, o);
                 });
  }

  // The next job reuses the device buffers: its uploads wait for the last job's products, and
  // when it is another block of C, everything waits until that block has gone back.
  void between_jobs(const Job& prev, const Job& next) {
    RUNGS_CUDA(cudaEventRecord(cx_.ev_sync, cx_.comp));
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.h2d, cx_.ev_sync, 0));
    if (prev.rows == next.rows && prev.cols == next.cols) return;
    stager_.drain();
    RUNGS_CUDA(cudaEventRecord(cx_.ev_sync, cx_.d2h));
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.h2d, cx_.ev_sync, 0));
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.comp, cx_.ev_sync, 0));
  }

  void upload(const Operand<T>& op, const Region& r) {
    if (op.staged) return stager_.upload(op, name(op), r);
    const size_t sz = sizeof(T);
    Timed t(info_.copy_calls_ms);
    tracer_.time(cx_.h2d, 'H', double(sz) * r.rows * r.cols, [&] { return name(op) + span(r); }, [&] {
      copy_async(op.dev_at(r.r0, r.c0), op.dev_ld * sz, op.host_at(r.r0, r.c0), op.ld * sz, r.cols * sz, r.rows,
                 cudaMemcpyHostToDevice, cx_.h2d);
    });
  }

  // C[r] goes back once `after` (the products that finished it) has completed.
  void download(const Region& r, cudaEvent_t after) {
    if (C_.staged) return stager_.download(r, after);
    const size_t sz = sizeof(T);
    Timed t(info_.copy_calls_ms);
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.d2h, after, 0));
    tracer_.time(cx_.d2h, 'D', double(sz) * r.rows * r.cols, [&] { return "C" + span(r); }, [&] {
      copy_async(C_.host_at(r.r0, r.c0), C_.ld * sz, C_.dev_at(r.r0, r.c0), C_.dev_ld * sz, r.cols * sz, r.rows,
                 cudaMemcpyDeviceToHost, cx_.d2h);
    });
  }

  Context& cx_;
  const Staging staging_;
  Trans ta_, tb_;
  float alpha_, beta_;
  const Options& opts_;
  Operand<T> A_, B_, C_;
  const Tuning& tune_;
  int64_t steps_done_ = 0;  // Tuning::fail_at_step counts them
  CallInfo info_;
  Tracer tracer_;        // declared before stager_: a background unpack ends before the gate opens
  Stager<T> stager_;
};

}  // namespace

template <typename T>
CallInfo run_flow(Context& cx, const Staging& staging, const FlowCall<T>& call, const std::vector<Job>& jobs,
                  const Tuning& tune, Clock::time_point call_start, const std::string* capture_key) {
  Flow<T> flow(cx, staging, call, tune);
  try {
    return flow.run(jobs, multiply_rate(std::is_same_v<T, float>, call.opts->math), detail::sm_count(), call_start,
                    capture_key);
  } catch (...) {
    flow.abandon();
    throw;
  }
}

template CallInfo run_flow<float>(Context&, const Staging&, const FlowCall<float>&, const std::vector<Job>&,
                                  const Tuning&, Clock::time_point, const std::string*);
template CallInfo run_flow<__half>(Context&, const Staging&, const FlowCall<__half>&, const std::vector<Job>&,
                                   const Tuning&, Clock::time_point, const std::string*);
template CallInfo run_flow<__nv_bfloat16>(Context&, const Staging&, const FlowCall<__nv_bfloat16>&,
                                          const std::vector<Job>&, const Tuning&, Clock::time_point,
                                          const std::string*);

}  // namespace rungs::host
