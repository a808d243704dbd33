// rungs::gemm_host: C = alpha op(A) op(B) + beta C with A, B and C in host memory, the
// transfers hidden behind each other and behind the multiplication.
//
// Three streams of one per-thread context: h2d carries pieces of A and B (and C when beta != 0)
// in the order of host/schedule.hpp, comp multiplies each block of C once its two pieces are on
// the device (through rungs::gemm, so opts.variant picks the rung), d2h sends each finished block
// back. H2D and D2H use the two copy engines, so the three overlap. Host memory that is pinned
// is copied directly; pageable memory is packed into pinned slots by the context's worker
// threads while the DMA of the previous slot runs (and unpacked from slots on the way back).
// What bounds it: the larger of bytes in / PCIe H2D, bytes out / PCIe D2H and the multiplication,
// plus the first pieces before any multiplication starts and the last block's trip back.
// docs/gemm_host.md has the floors, the schedule's simulation and the measurements.
#include <rungs/rungs.hpp>

#include "core/errors.hpp"
#include "core/nvtx.hpp"
#include "core/scratch.hpp"
#include "host/gemm_host.hpp"
#include "host/schedule.hpp"
#include "host/stream_copy.hpp"
#include "host/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <type_traits>

namespace rungs {

namespace host {

namespace {

std::mutex g_tuning_mu;
Tuning g_tuning;
thread_local CallInfo t_last;

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
// Adds the time of its scope to a counter (CallInfo's breakdown).
struct Timed {
  explicit Timed(double& acc) : acc_(acc), t0_(Clock::now()) {}
  ~Timed() { acc_ += ms_between(t0_, Clock::now()); }
  double& acc_;
  Clock::time_point t0_;
};

constexpr size_t kSlotBytes = size_t{2} << 20;  // one pinned staging slot (a piece or part of one)
constexpr int kSlots = 8;                        // per direction
constexpr size_t kReserveBytes = size_t{512} << 20;  // device memory left to the context and cuBLAS
constexpr int kMaxUnpackThreads = 4;            // Context::unpack_pool's workers
constexpr double kPcieBytesPerS = 50e9;          // planning estimate only (PCIe 5 x16)
constexpr double kStepHostS = 20e-6;             // host time to issue one step (copies, events, gemm)

// Best effort: the destructor may run at thread or process exit.
template <typename F>
void quietly(F&& f) {
  if (f() != cudaSuccess) (void)cudaGetLastError();
}

// Streams, events, device buffers, pinned slots and staging threads of one host thread on one
// device. Created by the first call, kept for the next ones (steady state allocates nothing),
// given back by rungs::gemm_host_release() or when the thread exits.
class Context {
 public:
  explicit Context(int device) : device_(device) {
    RUNGS_CUDA(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
    RUNGS_CUDA(cudaStreamCreateWithFlags(&comp, cudaStreamNonBlocking));
    RUNGS_CUDA(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking));
    RUNGS_CUDA(cudaEventCreateWithFlags(&ev_up, cudaEventDisableTiming));
    RUNGS_CUDA(cudaEventCreateWithFlags(&ev_sync, cudaEventDisableTiming));
    RUNGS_CUDA(cudaEventCreateWithFlags(&ev_join, cudaEventDisableTiming));
    ensure_pool(0);
  }
  ~Context() {
    int cur = 0;
    const bool have_dev = cudaGetDevice(&cur) == cudaSuccess;
    quietly([&] { return cudaSetDevice(device_); });
    for (cudaStream_t s : {h2d, comp, d2h})
      if (s) quietly([&] { return cudaStreamSynchronize(s); });
    for (cudaStream_t s : {h2d, comp, d2h})
      if (s) quietly([&] { return cudaStreamDestroy(s); });
    for (cudaEvent_t e : events_) quietly([&] { return cudaEventDestroy(e); });
    drop_graph();
    for (cudaEvent_t e : {ev_up, ev_sync, ev_join})
      if (e) quietly([&] { return cudaEventDestroy(e); });
    free_slots();
    for (Buffer& b : dev_)
      if (b.p) quietly([&] { return cudaFree(b.p); });
    if (have_dev) quietly([&] { return cudaSetDevice(cur); });
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cudaStream_t h2d = nullptr, comp = nullptr, d2h = nullptr;
  cudaEvent_t ev_up = nullptr, ev_sync = nullptr, ev_join = nullptr;

  // Pinned-memory calls repeated with identical arguments replay a CUDA graph captured from the
  // second such call (one per context): the first call runs eagerly and leaves its key.
  std::string last_key, graph_key, no_graph_key;
  cudaGraphExec_t graph = nullptr;
  CallInfo graph_info;
  void forget_graph() {  // the graph only (the next identical call captures again)
    if (graph) quietly([&] { return cudaGraphExecDestroy(graph); });
    graph = nullptr;
    graph_key.clear();
  }
  void drop_graph() {  // and the last call's key
    forget_graph();
    last_key.clear();
  }

  // The i-th event of this call (created on first need, reused by later calls).
  cudaEvent_t event(size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      RUNGS_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events_.push_back(e);
    }
    return events_[i];
  }

  // Device buffer `which` (0 A, 1 B, 2 C) of at least `bytes`; grows by reallocating.
  void* device(int which, size_t bytes) {
    Buffer& b = dev_[which];
    if (b.bytes < bytes) {
      forget_graph();  // it copies into the old buffers
      if (b.p) RUNGS_CUDA(cudaFree(b.p));
      b.p = nullptr;
      b.bytes = 0;
      RUNGS_CUDA(cudaMalloc(&b.p, bytes));
      b.bytes = bytes;
    }
    return b.p;
  }
  size_t device_held() const { return dev_[0].bytes + dev_[1].bytes + dev_[2].bytes; }

  struct Slot {
    void* buf = nullptr;
    cudaEvent_t ev = nullptr;  // the last DMA that used the slot
  };
  std::vector<Slot> up, down;
  size_t slot_bytes = 0;
  void ensure_slots(size_t bytes) {
    if (slot_bytes == bytes && !up.empty()) return;
    free_slots();
    for (std::vector<Slot>* ring : {&up, &down})
      for (int i = 0; i < kSlots; ++i) {
        Slot s;
        RUNGS_CUDA(cudaEventCreateWithFlags(&s.ev, cudaEventDisableTiming));
        const cudaError_t e = cudaHostAlloc(&s.buf, bytes, cudaHostAllocDefault);
        if (e != cudaSuccess) {
          (void)cudaEventDestroy(s.ev);
          detail::throw_cuda(e, "cudaHostAlloc (gemm_host staging slot)", __FILE__, __LINE__);
        }
        ring->push_back(s);
      }
    slot_bytes = bytes;
  }
  WorkerPool& pool() { return *pool_; }
  WorkerPool& unpack_pool() { return *unpack_pool_; }  // made by set_unpack_spinning(n > 0)
  // The background unpackers of a call: the first n poll (the pool made by the first call that needs it).
  void set_unpack_spinning(int n) {
    if (n > 0 && !unpack_pool_) unpack_pool_ = std::make_unique<WorkerPool>(kMaxUnpackThreads);
    if (unpack_pool_) unpack_pool_->set_spinning(n > 0, n);
  }
  // The staging threads, the caller included: `threads`, or (0) the library's choice, one per core up
  // to 12. Staging is bound by the host's memory bandwidth, which more threads reach further while
  // the copy engines run (scripts/experiments/host_membw.cpp: memcpy beside both engines' DMA at
  // 45.6 / 60.5 / 60.7 GB/s with 8 / 12 / 16 threads on the H100's host, 25.4 / 46.0 / 52.4 on the
  // H200's; 16 staging threads measured no faster than 12, b38f3f2, docs/gemm_host.md). A call uses
  // them all only when it stages much (active_threads below).
  void ensure_pool(int threads) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int want = threads > 0 ? threads : static_cast<int>(std::min(12u, hw));
    if (!pool_ || pool_->threads() != want) {
      pool_.reset();  // its workers joined before the new ones start
      pool_ = std::make_unique<WorkerPool>(want - 1);
    }
  }
  // The threads a call stages with (the caller included; the others sleep through it): all of the
  // pool's for calls that stage 32 MiB or more, at most 8 below that, unless Tuning::staging_threads
  // says. Measured (`scripts/experiments/host_probe.cpp threads`, counts alternated call by call,
  // medians; H100's host / H200's): 4096^3 pageable 13.08, 12.78 / 11.68, 10.59 ms with 8 threads,
  // 11.74, 11.20 / 10.69, 10.23 with 12, 11.77, 10.70 / 10.91, 10.03 with 16; 1024^3 0.901, 0.983 /
  // 0.780, 0.786 ms with 8, 0.920, 1.005 / 0.807, 0.799 with 12, 0.951, 1.109 / 0.844, 0.837 with 16
  // (its pack no faster, the extra pollers in the way). With the slots packed by streaming stores
  // (e649662), 4096^3 with 8 / 12 / 16: 9.28 / 9.57 / 10.61 ms (H100's host), 6.68 / 6.02 / 6.37 (H200's).
  int active_threads(int forced, double staged_bytes) {
    if (forced > 0) return pool_->threads();
    return staged_bytes >= double(size_t{32} << 20) ? pool_->threads() : std::min(8, pool_->threads());
  }

 private:
  void free_slots() {
    for (std::vector<Slot>* ring : {&up, &down}) {
      for (Slot& s : *ring) {
        if (s.ev) quietly([&] { return cudaEventSynchronize(s.ev); });
        if (s.ev) quietly([&] { return cudaEventDestroy(s.ev); });
        if (s.buf) quietly([&] { return cudaFreeHost(s.buf); });
      }
      ring->clear();
    }
    slot_bytes = 0;
  }
  struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;
  };
  int device_;
  Buffer dev_[3];
  std::vector<cudaEvent_t> events_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<WorkerPool> unpack_pool_;  // C's blocks unpacked in the background (Staging::unpack_threads)
};

thread_local std::map<int, std::unique_ptr<Context>> t_contexts;

Context& context_for_current_device() {
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  std::unique_ptr<Context>& cx = t_contexts[dev];
  if (!cx) cx = std::make_unique<Context>(dev);
  return *cx;
}

// Pinned (page-locked or registered) host memory over the whole stored matrix: DMA reads it
// directly. Device memory is refused: gemm_host takes host pointers.
bool is_pinned(const char* fn, const char* arg, const void* p, size_t bytes) {
  auto kind = [&](const void* q) {
    cudaPointerAttributes at{};
    if (cudaPointerGetAttributes(&at, q) != cudaSuccess) {
      (void)cudaGetLastError();
      return cudaMemoryTypeUnregistered;
    }
    return at.type;
  };
  const cudaMemoryType first = kind(p);
  if (first == cudaMemoryTypeDevice)
    throw Error(std::string("rungs::") + fn + ": " + arg +
                " is device memory; gemm_host takes host pointers (rungs::gemm takes device pointers)");
  if (first != cudaMemoryTypeHost) return false;
  return kind(static_cast<const char*>(p) + (bytes - 1)) == cudaMemoryTypeHost;
}

// Rough rate of the multiplication, for planning only: 3/4 of the fp32 FMA peak. Cached per
// device: the clock-rate attribute cost ~0.5 ms of host time per query on the H100.
double compute_rate() {
  static std::mutex mu;
  static std::map<int, double> rates;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lk(mu);
  auto it = rates.find(dev);
  if (it != rates.end()) return it->second;
  int sms = 0, khz = 0;
  RUNGS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  RUNGS_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  return rates[dev] = 0.75 * sms * 128.0 * 2.0 * khz * 1e3;
}

// The multiplication's rate beside fp32 FMA (planning only): the tensor cores' dense peak is 8x
// (tf32) and 16x (f16, bf16) the fp32 one on sm_80/sm_90; 3xTF32 does three tf32 products.
template <typename T>
double rate_factor(Math math) {
  if (!std::is_same<T, float>::value) return 16.0;
  return math == Math::tf32 ? 8.0 : math == Math::tf32x3 ? 8.0 / 3.0 : 1.0;
}

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

// A 2D copy, or a 1D one when both sides are contiguous (the 2D path ran ~20 % slower even then).
void copy_async(void* dst, int64_t dpitch, const void* src, int64_t spitch, int64_t width, int64_t rows,
                cudaMemcpyKind kind, cudaStream_t s) {
  if (rows == 1 || (dpitch == width && spitch == width)) {
    RUNGS_CUDA(cudaMemcpyAsync(dst, src, static_cast<size_t>(width * rows), kind, s));
    return;
  }
  RUNGS_CUDA(cudaMemcpy2DAsync(dst, static_cast<size_t>(dpitch), src, static_cast<size_t>(spitch),
                               static_cast<size_t>(width), static_cast<size_t>(rows), kind, s));
}

// The most steps a job's schedule may have: issuing one costs the host ~20 us (copies, events,
// a gemm launch), so a problem whose transfers take T gets at most T / 20 us of them.
Plan fit_steps(Plan p, double transfer_s) {
  const int max_steps = std::max(4, static_cast<int>(transfer_s / kStepHostS));
  auto steps = [](const Plan& q) { return (q.kmajor_chunks + 1) * (q.row_panels + q.col_panels); };
  while (steps(p) > max_steps) {
    if (p.kmajor_chunks > 1) {
      p.kmajor_chunks = 1;
    } else if (p.kmajor_chunks == 1) {
      p.kmajor_chunks = 0;
      p.kmajor_fraction = 0;
    } else if (p.row_panels == 1 && p.col_panels == 1) {
      break;
    } else if (p.row_panels >= p.col_panels) {
      p.row_panels = std::max(1, p.row_panels / 2);
    } else {
      p.col_panels = std::max(1, p.col_panels / 2);
    }
  }
  return p;
}

// A rectangle of a stored matrix: rows [r0, r0 + rows), columns [c0, c0 + cols).
struct Region {
  int64_t r0 = 0, c0 = 0, rows = 0, cols = 0;
};

// One operand: the user's host matrix and the device window of the current job.
template <typename T>
struct Operand {
  T* host = nullptr;
  int64_t ld = 0;
  bool staged = false;  // pageable: through the pinned slots
  T* dev = nullptr;
  int64_t dev_ld = 0, org_r = 0, org_c = 0;  // the window's top-left in stored coordinates
  T* dev_at(int64_t r, int64_t c) const { return dev + (r - org_r) * dev_ld + (c - org_c); }
  T* host_at(int64_t r, int64_t c) const { return host + r * ld + c; }
};

// How one call stages pageable memory (Tuning and Context::active_threads decide).
struct Staging {
  int threads = 1;           // the caller included
  bool stream_pack = true;   // slots packed with streaming stores (Tuning::streaming_pack)
  bool stream_unpack = true; // C's blocks unpacked with streaming stores (Tuning::streaming_unpack)
  int unpack_threads = 0;    // >0: C's blocks unpacked in the background by this many threads
                             // (Context::unpack_pool) while the caller's group packs
};

template <typename T>
class Flow {
 public:
  Flow(Context& cx, Staging staging, Trans ta, Trans tb, float alpha, float beta, const Options& opts, Operand<T> a,
       Operand<T> b, Operand<T> c, bool trace)
      : cx_(cx), staging_(staging), ta_(ta), tb_(tb), alpha_(alpha), beta_(beta), opts_(opts), A_(a), B_(b), C_(c),
        trace_(trace) {
    for (size_t i = 0; i < cx_.down.size(); ++i) free_down_.push_back(static_cast<int>(i));
  }
  ~Flow() {
    stop_unpacking();
    if (gate_) {  // the host function must be done with the flag before it is freed
      open_gate();
      quietly([&] { return cudaStreamSynchronize(cx_.h2d); });
    }
    for (cudaEvent_t e : trace_events_) quietly([&] { return cudaEventDestroy(e); });
  }
  Flow(const Flow&) = delete;
  Flow& operator=(const Flow&) = delete;

  // capture: record the whole call as a CUDA graph (pinned memory, one job), keep it in the
  // context under `key` and launch it.
  void run(const std::vector<Job>& jobs, const std::optional<Plan>& forced, double rate, int sms,
           int64_t fail_at_step, Clock::time_point call_start, const std::string* capture_key) {
    CallInfo& info = info_;
    const auto t_issue = Clock::now();
    info.setup_ms = ms_between(call_start, t_issue);
    if (capture_key) {
      RUNGS_CUDA(cudaStreamBeginCapture(cx_.h2d, cudaStreamCaptureModeThreadLocal));
      capturing_ = true;
      RUNGS_CUDA(cudaEventRecord(cx_.ev_sync, cx_.h2d));  // fork the other two streams into the capture
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.comp, cx_.ev_sync, 0));
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.d2h, cx_.ev_sync, 0));
    }
    info.jobs = static_cast<int64_t>(jobs.size());
    info.staged_a = A_.staged;
    info.staged_b = B_.staged;
    info.staged_c = C_.staged;
    info.host_threads = staging_.threads + staging_.unpack_threads;
    info.unpack_threads = staging_.unpack_threads;
    if (trace_) {
      // Pinned memory: the GPU starts only once every piece has been issued (a host function
      // holds the H2D stream), so the timeline shows the GPU's schedule as a graph replay runs
      // it, not the host's issue rate. Staged memory needs the host during the run: no gate.
      if (!A_.staged && !B_.staged && !C_.staged) {
        gate_ = std::make_unique<std::atomic<bool>>(false);
        RUNGS_CUDA(cudaLaunchHostFunc(cx_.h2d, wait_for_gate, gate_.get()));
      }
      RUNGS_CUDA(cudaEventRecord(trace_t0_ = timing_event(), cx_.h2d));
    }
    for (size_t j = 0; j < jobs.size(); ++j) {
      const Job& job = jobs[j];
      if (j > 0) between_jobs(jobs[j - 1], job);
      const bool reads_c = job.first_k && beta_ != 0.0f;
      const double bytes_in =
          sizeof(T) * (static_cast<double>(job.rows.size()) * job.k.size() + double(job.k.size()) * job.cols.size() +
                       (reads_c ? double(job.rows.size()) * job.cols.size() : 0.0));
      const double transfer_s = bytes_in / kPcieBytesPerS;
      const double compute_s = 2.0 * job.rows.size() * double(job.cols.size()) * job.k.size() / rate;
      const Plan plan = forced ? *forced
                               : fit_steps(choose_plan(job.rows.size(), job.cols.size(), job.k.size(), compute_s,
                                                       transfer_s, ta_ == Trans::T, tb_ == Trans::T,
                                                       static_cast<int64_t>(2048 / sizeof(T)), sms),
                                           transfer_s);
      if (j == 0) info.plan = plan;
      const Schedule s = make_schedule(job.rows.size(), job.cols.size(), job.k.size(), plan, reads_c);
      info.steps += static_cast<int64_t>(s.steps.size());
      run_job(job, s, reads_c, fail_at_step);
    }
    if (capture_key) {  // join, end, instantiate, launch
      RUNGS_CUDA(cudaEventRecord(cx_.ev_sync, cx_.comp));
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.h2d, cx_.ev_sync, 0));
      RUNGS_CUDA(cudaEventRecord(cx_.ev_join, cx_.d2h));
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.h2d, cx_.ev_join, 0));
      cudaGraph_t g = nullptr;
      capturing_ = false;
      RUNGS_CUDA(cudaStreamEndCapture(cx_.h2d, &g));
      cudaGraphExec_t exec = nullptr;
      const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
      (void)cudaGraphDestroy(g);
      if (e != cudaSuccess) detail::throw_cuda(e, "cudaGraphInstantiate", __FILE__, __LINE__);
      cx_.graph = exec;
      cx_.graph_key = *capture_key;
      RUNGS_CUDA(cudaGraphLaunch(exec, cx_.h2d));
    }
    const auto t_wait = Clock::now();
    info.issue_ms = ms_between(t_issue, t_wait);
    open_gate();
    drain();
    RUNGS_CUDA(cudaStreamSynchronize(cx_.d2h));
    RUNGS_CUDA(cudaStreamSynchronize(cx_.comp));
    RUNGS_CUDA(cudaStreamSynchronize(cx_.h2d));
    const auto t_end = Clock::now();
    info.wait_ms = ms_between(t_wait, t_end);
    info.total_ms = ms_between(call_start, t_end);
    for (const Traced& op : traced_) {
      TraceOp o{op.engine, op.what, op.amount, 0, 0};
      float b = 0, e = 0;
      RUNGS_CUDA(cudaEventElapsedTime(&b, trace_t0_, op.begin));
      RUNGS_CUDA(cudaEventElapsedTime(&e, trace_t0_, op.end));
      o.start_ms = b, o.end_ms = e;
      info.trace.push_back(std::move(o));
    }
    t_last = info;
  }

  // After a failure: nothing may still run or write into the user's memory when we return.
  void abandon() noexcept {
    stop_unpacking();
    open_gate();
    if (capturing_) {
      cudaGraph_t g = nullptr;
      quietly([&] { return cudaStreamEndCapture(cx_.h2d, &g); });
      if (g) (void)cudaGraphDestroy(g);
      capturing_ = false;
    }
    for (cudaStream_t s : {cx_.h2d, cx_.comp, cx_.d2h}) quietly([&] { return cudaStreamSynchronize(s); });
    pending_.clear();
    inflight_.clear();
    free_down_.clear();
    for (size_t i = 0; i < cx_.down.size(); ++i) free_down_.push_back(static_cast<int>(i));
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

  void window(Operand<T>& op, int which, Region r) {
    op.dev = static_cast<T*>(cx_.device(which, sizeof(T) * static_cast<size_t>(r.rows * r.cols)));
    op.dev_ld = r.cols;
    op.org_r = r.r0;
    op.org_c = r.c0;
  }

  void run_job(const Job& job, const Schedule& s, bool reads_c, int64_t fail_at_step) {
    window(A_, 0, a_region(job.rows, job.k));
    window(B_, 1, b_region(job.k, job.cols));
    window(C_, 2, c_region(job.rows, job.cols));
    size_t next_event = 0;
    for (const Step& st : s.steps) {
      if (steps_done_++ == fail_at_step)
        throw Error("rungs::gemm_host: failure injected at step " + std::to_string(fail_at_step) + " (a test)");
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
      service();
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
    traced(cx_.comp, 'K', double(rows.size()) * double(cols.size()) * double(k.size()),
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
    drain();
    RUNGS_CUDA(cudaEventRecord(cx_.ev_sync, cx_.d2h));
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.h2d, cx_.ev_sync, 0));
    RUNGS_CUDA(cudaStreamWaitEvent(cx_.comp, cx_.ev_sync, 0));
  }

  // Sub-regions of r that fit one slot (rows first; a row longer than a slot is cut too).
  template <typename F>
  void for_chunks(const Region& r, F&& f) const {
    if (r.rows <= 0 || r.cols <= 0) return;
    const int64_t cap = static_cast<int64_t>(cx_.slot_bytes / sizeof(T));
    const int64_t cols = std::min(r.cols, cap), rows = std::max<int64_t>(1, cap / cols);
    for (int64_t c = 0; c < r.cols; c += cols)
      for (int64_t i = 0; i < r.rows; i += rows)
        f(Region{r.r0 + i, r.c0 + c, std::min(rows, r.rows - i), std::min(cols, r.cols - c)});
  }

  // rows x row_bytes from src (pitch sp) to dst (pitch dp) in `parts` parts of whole rows, with
  // streaming stores (stream_copy) or memcpy: part(i) copies the i-th.
  struct RowCopy {
    char* dst;
    const char* src;
    int64_t dp, sp, rows, row_bytes;
    int parts;
    bool streaming;
    void operator()(int part) const {
      const int64_t lo = rows * part / parts, hi = rows * (part + 1) / parts;
      auto copy = [&](char* d, const char* s_, size_t n) { streaming ? stream_copy(d, s_, n) : (void)std::memcpy(d, s_, n); };
      if (dp == row_bytes && sp == row_bytes) copy(dst + lo * dp, src + lo * sp, static_cast<size_t>((hi - lo) * row_bytes));
      else
        for (int64_t i = lo; i < hi; ++i) copy(dst + i * dp, src + i * sp, static_cast<size_t>(row_bytes));
      // This part's streaming stores visible before the DMA is issued (a slot) or the call returns (C):
      // they are not ordered by the pool's own release.
      if (streaming) stream_fence();
    }
  };
  // Below this a thread's start costs more than it saves: 2 MiB slots go out in parts of 128 KiB or
  // more, so up to 16 threads share one (the pool spins during a call: a part starts in well under
  // a microsecond).
  static RowCopy row_copy(char* dst, int64_t dp, const char* src, int64_t sp, int64_t rows, int64_t row_bytes,
                          bool streaming, int threads) {
    constexpr int64_t kPart = int64_t{128} << 10;
    const int parts = static_cast<int>(std::clamp<int64_t>(rows * row_bytes / kPart, 1, std::min<int64_t>(rows, threads)));
    return RowCopy{dst, src, dp, sp, rows, row_bytes, parts, streaming};
  }
  // The same copy split over the caller's staging threads, returning when it is done.
  void copy_rows(char* dst, int64_t dp, const char* src, int64_t sp, int64_t rows, int64_t row_bytes,
                 bool streaming) {
    const RowCopy c = row_copy(dst, dp, src, sp, rows, row_bytes, streaming, staging_.threads);
    cx_.pool().run(c.parts, c);
  }

  void upload(const Operand<T>& op, const Region& r) {
    const size_t sz = sizeof(T);
    if (!op.staged) {
      Timed t(info_.copy_calls_ms);
      traced(cx_.h2d, 'H', double(sz) * r.rows * r.cols, [&] { return name(op) + span(r); }, [&] {
        copy_async(op.dev_at(r.r0, r.c0), op.dev_ld * sz, op.host_at(r.r0, r.c0), op.ld * sz, r.cols * sz, r.rows,
                   cudaMemcpyHostToDevice, cx_.h2d);
      });
      return;
    }
    for_chunks(r, [&](const Region& q) {
      Context::Slot& s = cx_.up[up_next_++ % cx_.up.size()];
      for (;;) {  // the slot's previous DMA must have read it
        const cudaError_t e = cudaEventQuery(s.ev);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) detail::throw_cuda(e, "cudaEventQuery", __FILE__, __LINE__);
        if (!service()) std::this_thread::yield();
      }
      {
        Timed t(info_.pack_ms);
        copy_rows(static_cast<char*>(s.buf), q.cols * sz, reinterpret_cast<const char*>(op.host_at(q.r0, q.c0)),
                  op.ld * sz, q.rows, q.cols * sz, staging_.stream_pack);
      }
      traced(cx_.h2d, 'H', double(sz) * q.rows * q.cols, [&] { return name(op) + span(q) + " staged"; }, [&] {
        copy_async(op.dev_at(q.r0, q.c0), op.dev_ld * sz, s.buf, q.cols * sz, q.cols * sz, q.rows,
                   cudaMemcpyHostToDevice, cx_.h2d);
      });
      RUNGS_CUDA(cudaEventRecord(s.ev, cx_.h2d));
    });
  }

  // C[r] goes back once `after` (the products that finished it) has completed.
  void download(const Region& r, cudaEvent_t after) {
    const size_t sz = sizeof(T);
    if (!C_.staged) {
      Timed t(info_.copy_calls_ms);
      RUNGS_CUDA(cudaStreamWaitEvent(cx_.d2h, after, 0));
      traced(cx_.d2h, 'D', double(sz) * r.rows * r.cols, [&] { return "C" + span(r); }, [&] {
        copy_async(C_.host_at(r.r0, r.c0), C_.ld * sz, C_.dev_at(r.r0, r.c0), C_.dev_ld * sz, r.cols * sz, r.rows,
                   cudaMemcpyDeviceToHost, cx_.d2h);
      });
      return;
    }
    for_chunks(r, [&](const Region& q) { pending_.push_back({q, after, 0}); });
  }

  // Pageable C: unpack the slots whose DMA has finished, start DMAs into free slots. With
  // Staging::unpack_threads, a block is unpacked in the background (one at a time) while the caller
  // goes on packing; once nothing is left to pack (drain), by the caller's threads.
  // Returns whether anything moved.
  bool service() {
    bool moved = false;
    const size_t sz = sizeof(T);
    for (bool again = true; again;) {
      again = false;
      if (unpacking_ && (draining_ || cx_.unpack_pool().done())) {  // the background block: done, or waited for
        cx_.unpack_pool().finish();
        unpacking_ = false;
        info_.unpack_ms += ms_between(unpack_t0_, Clock::now());
        free_down_.push_back(unpacking_slot_);
        again = moved = true;
      }
      while (!inflight_.empty() && !unpacking_) {
        const Transfer& f = inflight_.front();
        Context::Slot& s = cx_.down[f.slot];
        const cudaError_t e = cudaEventQuery(s.ev);
        if (e == cudaErrorNotReady) break;
        if (e != cudaSuccess) detail::throw_cuda(e, "cudaEventQuery", __FILE__, __LINE__);
        char* dst = reinterpret_cast<char*>(C_.host_at(f.r.r0, f.r.c0));
        const char* src = static_cast<const char*>(s.buf);
        if (staging_.unpack_threads > 0 && !draining_) {
          const RowCopy c = row_copy(dst, C_.ld * sz, src, f.r.cols * sz, f.r.rows, f.r.cols * sz,
                                     staging_.stream_unpack, staging_.unpack_threads);
          unpack_t0_ = Clock::now();
          cx_.unpack_pool().start(c.parts, c);
          unpacking_ = true;
          unpacking_slot_ = f.slot;
        } else {
          Timed t(info_.unpack_ms);
          copy_rows(dst, C_.ld * sz, src, f.r.cols * sz, f.r.rows, f.r.cols * sz, staging_.stream_unpack);
          free_down_.push_back(f.slot);
        }
        inflight_.pop_front();
        again = moved = true;
      }
      while (!pending_.empty() && !free_down_.empty()) {
        Transfer t = pending_.front();
        pending_.pop_front();
        t.slot = free_down_.back();
        free_down_.pop_back();
        Context::Slot& s = cx_.down[t.slot];
        RUNGS_CUDA(cudaStreamWaitEvent(cx_.d2h, t.after, 0));
        traced(cx_.d2h, 'D', double(sz) * t.r.rows * t.r.cols, [&] { return "C" + span(t.r) + " staged"; }, [&] {
          copy_async(s.buf, t.r.cols * sz, C_.dev_at(t.r.r0, t.r.c0), C_.dev_ld * sz, t.r.cols * sz, t.r.rows,
                     cudaMemcpyDeviceToHost, cx_.d2h);
        });
        RUNGS_CUDA(cudaEventRecord(s.ev, cx_.d2h));
        inflight_.push_back(t);
        again = moved = true;
      }
    }
    return moved;
  }

  // Nothing is left to pack: the rest of C is unpacked by the caller's threads.
  void drain() {
    draining_ = true;
    while (!pending_.empty() || !inflight_.empty() || unpacking_)
      if (!service()) std::this_thread::yield();
    draining_ = false;
  }

  // A background unpack writes into the caller's C: it must end before the call does.
  void stop_unpacking() noexcept {
    if (!unpacking_) return;
    cx_.unpack_pool().finish();
    unpacking_ = false;
    free_down_.push_back(unpacking_slot_);
  }

  struct Transfer {
    Region r;
    cudaEvent_t after;
    int slot;
  };

  // Tuning::trace: f's work on stream s between two timing events (begin after any waits issued
  // before it), described by what() only when tracing.
  template <typename W, typename F>
  void traced(cudaStream_t s, char engine, double amount, W&& what, F&& f) {
    if (!trace_) return f();
    cudaEvent_t b = timing_event(), e = timing_event();
    RUNGS_CUDA(cudaEventRecord(b, s));
    f();
    RUNGS_CUDA(cudaEventRecord(e, s));
    traced_.push_back({engine, what(), amount, b, e});
  }
  // At most a second: a rung that synchronized while the gate was shut would otherwise hang the
  // call (the timeline is then the host's again, not wrong).
  static void CUDART_CB wait_for_gate(void* flag) {
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (!static_cast<std::atomic<bool>*>(flag)->load(std::memory_order_acquire) && Clock::now() < until)
      std::this_thread::yield();
  }
  void open_gate() noexcept {
    if (gate_) gate_->store(true, std::memory_order_release);
  }
  cudaEvent_t timing_event() {
    cudaEvent_t e = nullptr;
    RUNGS_CUDA(cudaEventCreate(&e));
    trace_events_.push_back(e);
    return e;
  }
  std::string name(const Operand<T>& op) const { return &op == &A_ ? "A" : &op == &B_ ? "B" : "C"; }
  static std::string span(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    return "[" + std::to_string(r0) + ":" + std::to_string(r1) + ", " + std::to_string(c0) + ":" + std::to_string(c1) +
           "]";
  }
  static std::string span(const Region& r) { return span(r.r0, r.r0 + r.rows, r.c0, r.c0 + r.cols); }
  static std::string span(Range rows, Range cols) { return span(rows.lo, rows.hi, cols.lo, cols.hi); }
  struct Traced {
    char engine;
    std::string what;
    double amount;
    cudaEvent_t begin, end;
  };

  Context& cx_;
  const Staging staging_;
  Trans ta_, tb_;
  float alpha_, beta_;
  const Options& opts_;
  Operand<T> A_, B_, C_;
  size_t up_next_ = 0;
  int64_t steps_done_ = 0;
  bool capturing_ = false;
  CallInfo info_;
  std::deque<Transfer> pending_, inflight_;
  std::vector<int> free_down_;
  bool draining_ = false;       // drain(): nothing left to pack
  bool unpacking_ = false;      // a block of C is being unpacked in the background into slot unpacking_slot_
  int unpacking_slot_ = -1;
  Clock::time_point unpack_t0_;
  bool trace_ = false;
  cudaEvent_t trace_t0_ = nullptr;
  std::unique_ptr<std::atomic<bool>> gate_;  // trace, pinned: holds the GPU until all is issued
  std::vector<Traced> traced_;
  std::vector<cudaEvent_t> trace_events_;
};

template <typename T>
void gemm_host_impl(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha, const T* A, int64_t lda,
                    const T* B, int64_t ldb, float beta, T* C, int64_t ldc, const Options& opts) {
  const auto call_start = Clock::now();
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
  cx.ensure_pool(tune.staging_threads);
  const size_t sz = sizeof(T);
  auto bytes = [&](int64_t rows, int64_t cols, int64_t ld) { return sz * static_cast<size_t>((rows - 1) * ld + cols); };
  Operand<T> a, b, c;
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
  if (tune.graph && !a.staged && !b.staged && !c.staged && tune.fail_at_step < 0 && !tune.trace) {
    std::ostringstream os;
    os << int(ta) << int(tb) << ' ' << m << ' ' << n << ' ' << k << ' ' << lda << ' ' << ldb << ' ' << ldc << ' '
       << A << ' ' << B << ' ' << C << ' ' << std::hexfloat << alpha << ' ' << beta << ' ' << opts.variant << ' '
       << int(opts.math) << ' ' << sizeof(T) << ' ' << tune.device_bytes;  // (a set budget splits the jobs)
    if (tune.plan)
      os << " plan " << tune.plan->row_panels << 'x' << tune.plan->col_panels << ':' << tune.plan->kmajor_chunks << '/'
         << tune.plan->kmajor_fraction << ':' << tune.plan->kmajor_row_panels;
    key = os.str();
    if (cx.graph && key == cx.graph_key) {
      const auto launch = Clock::now();
      RUNGS_CUDA(cudaGraphLaunch(cx.graph, cx.h2d));
      RUNGS_CUDA(cudaStreamSynchronize(cx.h2d));
      const auto done = Clock::now();
      t_last = cx.graph_info;
      t_last.graph = true;
      t_last.setup_ms = ms_between(call_start, launch);  // this call's: checks, key, lookup
      t_last.issue_ms = t_last.gemm_calls_ms = t_last.copy_calls_ms = 0;
      t_last.wait_ms = ms_between(launch, done);  // graph launch, the GPU's work, synchronization
      t_last.total_ms = ms_between(call_start, done);
      return;
    }
  }

  double budget;
  if (tune.device_bytes) {
    budget = static_cast<double>(tune.device_bytes);
  } else {
    size_t free_b = 0, total_b = 0;
    RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
    budget = static_cast<double>(free_b) + static_cast<double>(cx.device_held()) - static_cast<double>(kReserveBytes);
  }
  const std::vector<Job> jobs = make_jobs(m, n, k, std::max(0.0, budget) / static_cast<double>(sz));
  if (jobs.empty()) throw Error("rungs::gemm_host: not enough device memory for even a 32 x 32 block of C");
  if (jobs.size() != 1) key.clear();  // a call of several jobs is not captured
  const bool capture = !key.empty() && key == cx.last_key && key != cx.no_graph_key;
  if (capture && cx.graph) {
    quietly([&] { return cudaGraphExecDestroy(cx.graph); });
    cx.graph = nullptr;
    cx.graph_key.clear();
  }
  cx.last_key = key;

  Staging staging;
  auto attempt = [&](bool cap) {
    Flow<T> flow(cx, staging, ta, tb, alpha, beta, opts, a, b, c, tune.trace);
    try {
      flow.run(jobs, tune.plan, compute_rate() * rate_factor<T>(opts.math), detail::sm_count(), tune.fail_at_step,
               call_start, cap ? &key : nullptr);
    } catch (...) {
      flow.abandon();
      throw;
    }
  };
  // Bytes that go through the staging slots (pageable operands): what sets the threads used.
  const double staged = (a.staged ? double(bytes(a_rows, a_cols, lda)) : 0.0) +
                        (b.staged ? double(bytes(b_rows, b_cols, ldb)) : 0.0) +
                        (c.staged ? double(bytes(m, n, ldc)) * (beta != 0.0f ? 2.0 : 1.0) : 0.0);
  staging.threads = cx.active_threads(tune.staging_threads, staged);
  staging.stream_pack = tune.streaming_pack;
  staging.stream_unpack = tune.streaming_unpack;
  // A quarter of the threads unpack C in the background while the others pack, in calls that stage less
  // than 256 MiB. Measured (scripts/experiments/host_probe.cpp `async`, in turn / in the background
  // alternated call by call, medians; H100's host / H200's): 1024^3 pageable -11, -12 % / -7, -4 %;
  // 4096^3 -4, -7 % / -11, 0 %; but 8192^3 (768 MiB staged, bound by the host's memory bandwidth,
  // where three fewer threads pack) -4, +4 % / +14, +2 %.
  if (c.staged && staging.threads > 1) {
    const int u = tune.unpack_threads >= 0              ? tune.unpack_threads
                  : staged < double(size_t{256} << 20) ? std::max(1, staging.threads / 4)
                                                       : 0;
    staging.unpack_threads = std::clamp(u, 0, std::min(kMaxUnpackThreads, staging.threads - 1));
    staging.threads -= staging.unpack_threads;
  }
  cx.pool().set_spinning(true, staging.threads - 1);
  cx.set_unpack_spinning(staging.unpack_threads);
  try {
    if (capture) {
      try {
        attempt(true);
        cx.graph_info = t_last;
      } catch (const Error&) {  // not capturable (a rung that synchronizes, ...): run it as usual
        cx.drop_graph();
        cx.no_graph_key = key;
        attempt(false);
      }
    } else {
      attempt(false);
    }
  } catch (...) {
    cx.pool().set_spinning(false);
    cx.set_unpack_spinning(0);
    cx.drop_graph();
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

void gemm_host_release() {
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  host::t_contexts.erase(dev);
}

}  // namespace rungs
