// rungs::gemm_host: C = alpha op(A) op(B) + beta C with A, B and C in host memory, the transfers
// hidden behind each other and behind the multiplication. One call from start to end: the
// argument checks, C = beta C on the host when nothing is multiplied, then the replay of a CUDA
// graph for a repeated pinned call (host/graph_cache.hpp), or the jobs (a call that does not fit
// in device memory is cut into blocks of C) run by the flow (host/flow.hpp) with the staging and
// plans that host/policy.hpp chooses, in the calling thread's context (host/context.hpp). Also
// Tuning and the report of the last call (host/gemm_host.hpp).
#include <rungs/rungs.hpp>

#include "core/errors.hpp"
#include "core/nvtx.hpp"
#include "host/clock.hpp"
#include "host/context.hpp"
#include "host/flow.hpp"
#include "host/gemm_host.hpp"
#include "host/graph_cache.hpp"
#include "host/policy.hpp"
#include "host/schedule.hpp"
#include "host/staging.hpp"

#include <algorithm>
#include <mutex>
#include <type_traits>

namespace rungs {

namespace host {

namespace {

std::mutex g_tuning_mu;
Tuning g_tuning;
thread_local CallInfo t_last;

float to_float(float x) { return x; }
float to_float(__half x) { return __half2float(x); }
float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
T from_float(float x);
template <>
float from_float<float>(float x) { return x; }
template <>
__half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// A call an experiment hook is in (an injected failure, a traced call) is neither captured nor replayed.
bool hooked(const Tuning& tune) { return tune.fail_at_step >= 0 || tune.trace; }

template <typename T>
void gemm_host_impl(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const T* A, int64_t lda,
                    const T* B, int64_t ldb, float beta, T* C, int64_t ldc, const Options& opts) {
  const auto call_start = Clock::now();
  detail::refuse_epilogue("gemm_host", opts);
  detail::check_gemm_shape("gemm_host", ta, tb, m, n, k, lda, ldb, ldc);
  detail::check_gemm_pointers("gemm_host", "a host pointer", m, n, k, alpha, A, B, C);
  const int64_t a_rows = ta == Trans::N ? m : k, a_cols = ta == Trans::N ? k : m;
  const int64_t b_rows = tb == Trans::N ? k : n, b_cols = tb == Trans::N ? n : k;
  const bool empty = m == 0 || n == 0;
  const bool reads_ab = !empty && k > 0 && alpha != 0.0f;
  // The variant name and math mode: rungs::gemm checks them (an empty product runs nothing).
  Options probe = opts;
  probe.stream = nullptr;
  gemm(ta, tb, 0, 0, 0, alpha, static_cast<const T*>(nullptr), 1, static_cast<const T*>(nullptr), 1, beta,
       static_cast<T*>(nullptr), 1, probe);
  if (empty) return;
  // "rungs::gemm_host/<rung>" on a profiler's timeline: for auto, the rung it picks for the whole
  // problem (each block's rungs::gemm call opens its own range, named after the rung that block ran).
  constexpr GemmType type = std::is_same_v<T, float>    ? GemmType::f32
                            : std::is_same_v<T, __half> ? GemmType::f16
                                                        : GemmType::bf16;
  const std::string rung_name =
      opts.variant == "auto" ? resolve_gemm_variant(ta, tb, m, n, k, opts, type, lda, ldb) : opts.variant;
  const detail::NvtxRange range("gemm_host", rung_name.c_str());
  Context& cx = context_for_current_device();
  if (!reads_ab) {  // C = beta * C (beta == 0: C is not read), on the host threads
    const int parts = static_cast<int>(std::min<int64_t>(m, cx.pool().threads()));
    cx.pool().run(parts, [&](int part) {
      for (int64_t i = m * part / parts; i < m * (part + 1) / parts; ++i)
        for (int64_t j = 0; j < n; ++j)
          C[i * ldc + j] = from_float<T>(beta == 0.0f ? 0.0f : beta * to_float(C[i * ldc + j]));
    });
    t_last = CallInfo{};
    return;
  }
  const Tuning tune = tuning();
  cx.ensure_slots(tune.staging_bytes ? tune.staging_bytes : kSlotBytes);
  cx.ensure_pool(pool_threads(tune.staging_threads));
  const size_t sz = sizeof(T);
  auto bytes = [&](int64_t rows, int64_t cols, int64_t ld) { return sz * static_cast<size_t>((rows - 1) * ld + cols); };
  FlowCall<T> call;
  call.ta = ta;
  call.tb = tb;
  call.alpha = alpha;
  call.beta = beta;
  call.opts = &opts;
  Operand<T>& a = call.a;
  Operand<T>& b = call.b;
  Operand<T>& c = call.c;
  a.host = const_cast<T*>(A);
  a.ld = lda;
  a.staged = !is_pinned("gemm_host", "A", A, bytes(a_rows, a_cols, lda));
  b.host = const_cast<T*>(B);
  b.ld = ldb;
  b.staged = !is_pinned("gemm_host", "B", B, bytes(b_rows, b_cols, ldb));
  c.host = C;
  c.ld = ldc;
  c.staged = !is_pinned("gemm_host", "C", C, bytes(m, n, ldc));

  // Repeated identical calls on pinned memory: the second captures a graph, later ones replay it.
  // The replay is looked up first: it needs neither the device's free memory (cudaMemGetInfo, ~6 us
  // on the H100) nor the jobs, since the graph runs in the context's buffers of its capture (only
  // single-job calls are captured, below).
  std::string key;
  if (tune.graph && !a.staged && !b.staged && !c.staged && !hooked(tune)) {
    key = call_key(ta, tb, m, n, k, lda, ldb, ldc, A, B, C, alpha, beta, opts, sizeof(T), tune);
    if (cx.graph.has(key)) {
      const auto launch = Clock::now();
      cx.graph.launch(cx.h2d);
      RUNGS_CUDA(cudaStreamSynchronize(cx.h2d));
      const auto done = Clock::now();
      t_last = cx.graph.info;
      t_last.graph = true;
      t_last.setup_ms = ms_between(call_start, launch);  // this call's: checks, key, lookup
      t_last.issue_ms = t_last.gemm_calls_ms = t_last.copy_calls_ms = 0;
      t_last.wait_ms = ms_between(launch, done);  // graph launch, the GPU's work, synchronization
      t_last.total_ms = ms_between(call_start, done);
      return;
    }
  }

  const double budget = device_budget(tune, cx.device_held());
  const std::vector<Job> jobs = make_jobs(m, n, k, std::max(0.0, budget) / static_cast<double>(sz));
  if (jobs.empty()) throw Error("rungs::gemm_host: not enough device memory for even a 32 x 32 block of C");
  if (jobs.size() != 1) key.clear();  // a call of several jobs is not captured
  const bool capture = cx.graph.capture_next(key);

  // Bytes that go through the staging slots (pageable operands): what sets the threads used.
  const double staged = (a.staged ? double(bytes(a_rows, a_cols, lda)) : 0.0) +
                        (b.staged ? double(bytes(b_rows, b_cols, ldb)) : 0.0) +
                        (c.staged ? double(bytes(m, n, ldc)) * (beta != 0.0f ? 2.0 : 1.0) : 0.0);
  const Staging staging = choose_staging(tune, cx.pool().threads(), staged, c.staged);
  auto attempt = [&](bool cap) { t_last = run_flow(cx, staging, call, jobs, tune, call_start, cap ? &key : nullptr); };
  cx.pool().set_spinning(true, staging.threads - 1);
  cx.set_unpack_spinning(staging.unpack_threads);
  try {
    if (capture) {
      try {
        attempt(true);
        cx.graph.info = t_last;
      } catch (const Error&) {  // not capturable (a rung that synchronizes, ...): run it as usual
        cx.graph.refuse(key);
        attempt(false);
      }
    } else {
      attempt(false);
    }
  } catch (...) {
    cx.pool().set_spinning(false);
    cx.set_unpack_spinning(0);
    cx.graph.drop();
    throw;
  }
  cx.pool().set_spinning(false);
  cx.set_unpack_spinning(0);
}

}  // namespace

void set_tuning(const Tuning& t) {
  std::lock_guard<std::mutex> lk(g_tuning_mu);
  g_tuning = t;
}

Tuning tuning() {
  std::lock_guard<std::mutex> lk(g_tuning_mu);
  return g_tuning;
}

CallInfo last_call() { return t_last; }

}  // namespace host

void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const Options& opts) {
  host::gemm_host_impl(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __half* A, int64_t lda,
               const __half* B, int64_t ldb, float beta, __half* C, int64_t ldc, const Options& opts) {
  host::gemm_host_impl(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm_host(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const __nv_bfloat16* A,
               int64_t lda, const __nv_bfloat16* B, int64_t ldb, float beta, __nv_bfloat16* C, int64_t ldc,
               const Options& opts) {
  host::gemm_host_impl(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opts);
}

void gemm_host_release() { host::release_context_for_current_device(); }

}  // namespace rungs
