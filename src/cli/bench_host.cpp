// `rungs bench gemm_host`: the whole host-to-host flow of rungs::gemm_host (copies in, the
// multiplication, copies out), timed on the host clock beside the naive flow (copy in, gemm,
// copy out on one stream, device buffers allocated beforehand) in the same run, with the
// floor the hardware allows: max(bytes in / H2D, bytes out / D2H, the kernel alone), the plain
// copy bandwidths each way, and the first call in a fresh process (CUDA context start included).
#include "cli/bench_host.hpp"

#include "check/gemm_check.hpp"
#include "cli/buffers.hpp"
#include "cli/commands.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/timing.hpp"
#include "core/errors.hpp"
#include "host/gemm_host.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <tuple>
#include <sstream>

namespace rungs::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Host memory of one kind: pageable (new[]) or pinned (cudaMallocHost).
class HostBuf {
 public:
  HostBuf(size_t elems, bool pinned) : pinned_(pinned), bytes_(std::max<size_t>(elems, 1) * sizeof(float)) {
    if (pinned_) {
      RUNGS_CUDA(cudaMallocHost(&p_, bytes_));
    } else {
      p_ = new float[bytes_ / sizeof(float)];
    }
  }
  ~HostBuf() {
    if (pinned_) cudaFreeHost(p_);
    else delete[] static_cast<float*>(p_);
  }
  HostBuf(const HostBuf&) = delete;
  HostBuf& operator=(const HostBuf&) = delete;
  float* get() const { return static_cast<float*>(p_); }
  size_t bytes() const { return bytes_; }
  void fill(const std::vector<float>& v) { std::memcpy(p_, v.data(), v.size() * sizeof(float)); }

 private:
  bool pinned_;
  size_t bytes_;
  void* p_ = nullptr;
};

struct HostRow {
  check::GemmShape s;
  bool pinned = false;
  std::string variant, status = "ok", reason, plan;
  double flow_ms = 0, flow_min = 0, flow_max = 0, naive_ms = 0, kernel_ms = 0, floor_ms = 0;
  double h2d_gbs = 0, d2h_gbs = 0, pinned_h2d_gbs = 0, pinned_d2h_gbs = 0, first_call_ms = -1;
  double normwise = 0, naive_normwise = 0;
  int reps = 0;
  std::vector<host::TraceOp> trace;  // --trace: one more call's copies and products
  double trace_call_ms = 0;          // that call on the host clock
  std::vector<double> call_ms;       // --calls: each timed flow call (host clock)
  std::vector<host::CallInfo> calls; // --calls: what the library reported of each
};

std::string plan_name(const host::CallInfo& c) {
  std::ostringstream os;
  os << c.plan.row_panels << "x" << c.plan.col_panels;
  if (c.plan.kmajor_chunks > 0) os << " k" << c.plan.kmajor_chunks << "/" << c.plan.kmajor_fraction;
  if (c.plan.kmajor_chunks > 0 && c.plan.kmajor_row_panels > 0) os << " r" << c.plan.kmajor_row_panels;
  if (c.jobs > 1) os << " " << c.jobs << " blocks";
  return os.str();
}

// The first gemm_host call of a fresh process: this executable, run with --first-call.
double first_call_in_child(const Args& a, const std::string& argv0, const check::GemmShape& s, bool pinned) {
  std::ostringstream cmd;
  cmd << "'" << argv0 << "' bench gemm_host --first-call --m " << s.m << " --n " << s.n << " --k " << s.k
      << " --trans " << (s.ta == Trans::N ? "n" : "t") << (s.tb == Trans::N ? "n" : "t") << " --memory "
      << (pinned ? "pinned" : "pageable") << " --alpha " << s.alpha << " --beta " << s.beta << " --device "
      << a.device << " --seed " << a.seed;
  if (!a.variants.empty()) cmd << " --variant " << a.variants[0];
  if (a.host_threads) cmd << " --host-threads " << a.host_threads;
  cmd << " 2>/dev/null";
  FILE* p = popen(cmd.str().c_str(), "r");
  if (p == nullptr) return -1;
  char line[256] = {0};
  double ms = -1;
  while (std::fgets(line, sizeof line, p))
    if (std::sscanf(line, "first_call_ms %lf", &ms) == 1) break;
  pclose(p);
  return ms;
}

// Pinned H2D and D2H GB/s per (bytes in, bytes out): the floor's denominators, measured once per
// problem size and shared by its pinned and pageable rows.
using PinnedRates = std::map<std::pair<double, double>, std::pair<double, double>>;

HostRow bench_one(const Args& a, const std::string& argv0, const check::GemmShape& s, bool pinned, L2Flusher& flusher,
                  PinnedRates& pinned_rates, std::ostream& err) {
  HostRow r;
  r.s = s;
  r.pinned = pinned;
  Options opts;
  if (!a.variants.empty()) opts.variant = a.variants[0];
  r.variant = resolve_gemm_variant(s.ta, s.tb, s.m, s.n, s.k, opts);
  const check::GemmData d = check::make_gemm_data(s, a.seed);
  HostBuf A(d.A.size(), pinned), B(d.B.size(), pinned), C(d.C0.size(), pinned), C0(d.C0.size(), pinned);
  A.fill(d.A);
  B.fill(d.B);
  std::vector<float> c0 = d.C0;
  if (s.beta == 0.0f) std::fill(c0.begin(), c0.end(), std::nanf(""));
  C0.fill(c0);
  auto reset_c = [&] { std::memcpy(C.get(), C0.get(), c0.size() * sizeof(float)); };
  const bool reads_c = s.beta != 0.0f;
  const double in_bytes = 4.0 * (static_cast<double>(d.A.size()) + d.B.size() + (reads_c ? d.C0.size() : 0));
  const double out_bytes = 4.0 * static_cast<double>(s.m) * s.n;
  const int64_t rows = reference_rows(a, {s.m, s.n, s.k});
  const check::GemmReference ref = check::gemm_reference(s, d, rows, a.seed);

  // Correctness of the flow (C poisoned with NaN when beta == 0).
  reset_c();
  auto flow = [&] {
    gemm_host(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.get(), s.lda, B.get(), s.ldb, s.beta, C.get(), s.ldc, opts);
  };
  flow();
  r.plan = plan_name(host::last_call());
  const check::GemmErrors e = check::compare_gemm(s, ref, C.get());
  r.normwise = e.normwise;
  if (!e.pass) {
    r.status = "FAIL";
    r.reason = e.reason;
  }

  // The naive flow: plain copies in, gemm, copy out, one stream, buffers allocated beforehand.
  const Stream stream;
  const cudaStream_t st = stream.get();
  DeviceBuffer dA(A.bytes(), "the naive flow's A"), dB(B.bytes(), "the naive flow's B"),
      dC(C.bytes(), "the naive flow's C");
  Options dopts = opts;
  dopts.stream = st;
  // The device multiplication alone: inside the naive flow, and timed by itself below.
  auto kernel = [&] {
    gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, dA.as<float>(), s.lda, dB.as<float>(), s.ldb, s.beta, dC.as<float>(),
         s.ldc, dopts);
  };
  auto naive = [&] {
    RUNGS_CUDA(cudaMemcpyAsync(dA.as<float>(), A.get(), d.A.size() * 4, cudaMemcpyHostToDevice, st));
    RUNGS_CUDA(cudaMemcpyAsync(dB.as<float>(), B.get(), d.B.size() * 4, cudaMemcpyHostToDevice, st));
    if (reads_c) RUNGS_CUDA(cudaMemcpyAsync(dC.as<float>(), C.get(), d.C0.size() * 4, cudaMemcpyHostToDevice, st));
    kernel();
    RUNGS_CUDA(cudaMemcpyAsync(C.get(), dC.as<float>(), d.C0.size() * 4, cudaMemcpyDeviceToHost, st));
    RUNGS_CUDA(cudaStreamSynchronize(st));
  };
  reset_c();
  naive();
  r.naive_normwise = check::compare_gemm(s, ref, C.get()).normwise;

  // Steady state: warm-up, then flow and naive interleaved, host clock (C reset outside the timing).
  auto host_time = [&](const std::function<void()>& f) {
    reset_c();
    const auto t0 = Clock::now();
    f();
    return ms_since(t0);
  };
  const double one = host_time(flow);
  int reps = reps_for(one, a.reps);
  for (int i = 0; i < a.warmup && one < kSlowRunMs; ++i) {
    host_time(flow);
    host_time(naive);
  }
  std::vector<double> f_ms, n_ms;
  for (int i = 0; i < reps; ++i) {
    f_ms.push_back(host_time(flow));
    if (a.calls) r.call_ms.push_back(f_ms.back()), r.calls.push_back(host::last_call());
    n_ms.push_back(host_time(naive));
  }
  const Stats fs = summarize(f_ms), ns = summarize(n_ms);
  r.flow_ms = fs.median;
  r.flow_min = fs.min;
  r.flow_max = fs.max;
  r.naive_ms = ns.median;
  r.reps = reps;

  // The kernel alone (L2 flushed, events), and the plain copies each way.
  const Measurement km = measure(kernel, nullptr, reps, a.warmup, flusher, st, one);
  r.kernel_ms = summarize(km.rung_ms).median;
  auto copies = [&](bool pin, bool in) {
    HostBuf h(static_cast<size_t>((in ? in_bytes : out_bytes) / 4), pin);
    DeviceBuffer dv(h.bytes(), "the copy measurement");
    std::memset(h.get(), 0, h.bytes());
    auto once = [&] {
      RUNGS_CUDA(cudaMemcpyAsync(in ? dv.as<float>() : h.get(), in ? h.get() : dv.as<float>(), h.bytes(),
                                 in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st));
    };
    std::vector<double> ms;
    once();
    RUNGS_CUDA(cudaStreamSynchronize(st));
    for (int i = 0; i < std::max(5, std::min(reps, 20)); ++i) ms.push_back(time_once(once, st));
    return static_cast<double>(h.bytes()) / (summarize(ms).median * 1e6);
  };
  const auto key = std::make_pair(in_bytes, out_bytes);
  if (!pinned_rates.count(key)) pinned_rates[key] = {copies(true, true), copies(true, false)};
  std::tie(r.pinned_h2d_gbs, r.pinned_d2h_gbs) = pinned_rates[key];
  r.h2d_gbs = pinned ? r.pinned_h2d_gbs : copies(false, true);
  r.d2h_gbs = pinned ? r.pinned_d2h_gbs : copies(false, false);
  r.floor_ms = std::max({in_bytes / (r.pinned_h2d_gbs * 1e6), out_bytes / (r.pinned_d2h_gbs * 1e6), r.kernel_ms});
  if (a.trace) {  // one more call, every copy and product timed on its stream
    host::Tuning t = host::tuning();
    t.trace = true;
    host::set_tuning(t);
    reset_c();
    flow();
    t.trace = false;
    host::set_tuning(t);
    r.trace = host::last_call().trace;
    r.trace_call_ms = host::last_call().total_ms;
  }
  if (a.first_call) return r;
  r.first_call_ms = first_call_in_child(a, argv0, s, pinned);
  if (!a.quiet)
    err << "  " << s.m << "x" << s.n << "x" << s.k << " " << (pinned ? "pinned" : "pageable") << ": flow "
        << r.flow_ms << " ms, naive " << r.naive_ms << " ms" << std::endl;
  return r;
}

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// --calls: each timed call and where the calling thread spent it.
std::string format_calls(const HostRow& r) {
  std::ostringstream os;
  os << "timed calls of " << r.s.m << "x" << r.s.n << "x" << r.s.k << " " << (r.s.ta == Trans::N ? "n" : "t")
     << (r.s.tb == Trans::N ? "n" : "t") << " " << (r.pinned ? "pinned" : "pageable") << ", plan " << r.plan
     << " (ms; each after a naive flow and C's reset, as timed above):\n";
  const char* heads[] = {"call", "flow", "setup", "issue", "pack", "unpack", "gemm", "copy", "wait", "threads"};
  for (const char* h : heads) os << std::setw(9) << h;
  os << "\n";
  for (size_t i = 0; i < r.calls.size(); ++i) {
    const host::CallInfo& c = r.calls[i];
    os << std::setw(9) << i + 1 << std::setw(9) << fmt(r.call_ms[i], 3) << std::setw(9) << fmt(c.setup_ms, 3)
       << std::setw(9) << fmt(c.issue_ms, 3) << std::setw(9) << fmt(c.pack_ms, 3) << std::setw(9) << fmt(c.unpack_ms, 3)
       << std::setw(9) << fmt(c.gemm_calls_ms, 3) << std::setw(9) << fmt(c.copy_calls_ms, 3) << std::setw(9)
       << fmt(c.wait_ms, 3) << std::setw(6) << c.host_threads << "/" << c.unpack_threads << (c.graph ? " graph" : "")
       << "\n";
  }
  os << "(issue includes pack, unpack in turn, gemm and copy calls; a background unpack runs beside it and counts\n"
        "from its start until the caller saw it done; threads = staging threads / of them unpacking in the background)\n";
  return os.str();
}

// --trace: one call's timeline, and per engine its busy time and the gaps where it waited.
std::string format_trace(const HostRow& r) {
  std::ostringstream os;
  os << "timeline of one traced call: " << r.s.m << "x" << r.s.n << "x" << r.s.k << " "
     << (r.s.ta == Trans::N ? "n" : "t") << (r.s.tb == Trans::N ? "n" : "t") << " " << (r.pinned ? "pinned" : "pageable")
     << ", plan " << r.plan << ", " << fmt(r.trace_call_ms, 3) << " ms on the host clock; ms after the first piece's issue\n";
  os << "  engine  " << std::right << std::setw(9) << "start" << std::setw(9) << "end" << std::setw(8) << "ms"
     << std::setw(14) << "rate" << "  what\n";
  const char* names[] = {"H2D", "gemm", "D2H"};
  auto idx = [](char e) { return e == 'H' ? 0 : e == 'K' ? 1 : 2; };
  double busy[3] = {0, 0, 0}, gaps[3] = {0, 0, 0}, last_end[3] = {-1, -1, -1}, first[3] = {-1, -1, -1};
  double span_end = 0;
  for (const host::TraceOp& o : r.trace) {
    const int e = idx(o.engine);
    const double ms = o.end_ms - o.start_ms;
    const std::string rate = o.engine == 'K' ? fmt(2.0 * o.amount / (ms * 1e9), 1) + " TFLOP/s"
                                             : fmt(o.amount / (ms * 1e6), 1) + " GB/s";
    os << "  " << std::left << std::setw(6) << names[e] << std::right << std::setw(9) << fmt(o.start_ms, 3)
       << std::setw(9) << fmt(o.end_ms, 3) << std::setw(8) << fmt(ms, 3) << std::setw(14) << rate << "  " << o.what
       << "\n";
    busy[e] += ms;
    if (first[e] < 0) first[e] = o.start_ms;
    if (last_end[e] >= 0 && o.start_ms > last_end[e]) gaps[e] += o.start_ms - last_end[e];
    last_end[e] = std::max(last_end[e], o.end_ms);
    span_end = std::max(span_end, o.end_ms);
  }
  os << "  span " << fmt(span_end, 3) << " ms:";
  for (int e = 0; e < 3; ++e)
    if (first[e] >= 0)
      os << " " << names[e] << " busy " << fmt(busy[e], 3) << " (first at " << fmt(first[e], 3) << ", idle between "
         << fmt(gaps[e], 3) << ", done at " << fmt(last_end[e], 3) << ")" << (e < 2 ? ";" : "");
  os << "\n";
  return os.str();
}

std::string format_rows(Format f, const std::vector<HostRow>& rows, const Context& ctx, const Args& a) {
  const DeviceInfo& dev = ctx.device;
  std::ostringstream os;
  const char* cols[] = {"shape", "trans", "memory", "variant", "plan", "flow_ms", "flow_min_ms", "flow_max_ms",
                        "naive_ms", "speedup", "kernel_ms", "floor_ms", "x_floor", "h2d_gbs", "d2h_gbs",
                        "pinned_h2d_gbs", "pinned_d2h_gbs", "first_call_ms", "normwise", "naive_normwise", "reps",
                        "status", "reason"};
  auto values = [&](const HostRow& r) {
    std::vector<std::string> v = {std::to_string(r.s.m) + "x" + std::to_string(r.s.n) + "x" + std::to_string(r.s.k),
                                  std::string(r.s.ta == Trans::N ? "n" : "t") + (r.s.tb == Trans::N ? "n" : "t"),
                                  r.pinned ? "pinned" : "pageable",
                                  r.variant,
                                  r.plan,
                                  fmt(r.flow_ms, 4),
                                  fmt(r.flow_min, 4),
                                  fmt(r.flow_max, 4),
                                  fmt(r.naive_ms, 4),
                                  fmt(r.naive_ms / r.flow_ms, 2),
                                  fmt(r.kernel_ms, 4),
                                  fmt(r.floor_ms, 4),
                                  fmt(r.flow_ms / r.floor_ms, 2),
                                  fmt(r.h2d_gbs, 1),
                                  fmt(r.d2h_gbs, 1),
                                  fmt(r.pinned_h2d_gbs, 1),
                                  fmt(r.pinned_d2h_gbs, 1),
                                  r.first_call_ms < 0 ? "-" : fmt(r.first_call_ms, 1),
                                  fmt(r.normwise, 10),
                                  fmt(r.naive_normwise, 10),
                                  std::to_string(r.reps),
                                  r.status,
                                  r.reason};
    return v;
  };
  if (f == Format::csv) {
    for (size_t i = 0; i < std::size(cols); ++i) os << (i ? "," : "") << cols[i];
    os << "\n";
    for (const HostRow& r : rows) {
      const auto v = values(r);
      for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << '"' << v[i] << '"';
      os << "\n";
    }
    return os.str();
  }
  if (f == Format::json) {  // the main job's layout: the same context, one object per row, numbers as numbers
    os << "{\n  \"context\": " << format_json_context(ctx, "  ") << ",\n  \"benchmarks\": [";
    for (size_t j = 0; j < rows.size(); ++j) {
      const HostRow& r = rows[j];
      const auto v = values(r);
      os << (j ? "," : "") << "\n    {\"op\": \"gemm_host\", \"m\": " << r.s.m << ", \"n\": " << r.s.n << ", \"k\": " << r.s.k;
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string& c = cols[i];
        const bool text = c == "shape" || c == "trans" || c == "memory" || c == "variant" || c == "plan" ||
                          c == "status" || c == "reason";
        os << ", \"" << c << "\": ";
        if (text)
          os << '"' << json_escape(v[i]) << '"';
        else
          os << (v[i] == "-" || !std::isfinite(std::strtod(v[i].c_str(), nullptr)) ? std::string("null") : v[i]);
      }
      os << "}";
    }
    os << (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
    return os.str();
  }
  os << "gemm_host on " << dev.name << ": host-to-host flow, median of " << a.reps
     << " (host clock; naive = copy in, gemm, copy out on one stream, in the same run)\n";
  os << std::left << std::setw(16) << "shape" << std::setw(6) << "tr" << std::setw(9) << "memory" << std::setw(10)
     << "variant" << std::setw(16) << "plan" << std::right << std::setw(10) << "flow ms" << std::setw(10)
     << "naive ms" << std::setw(8) << "speedup" << std::setw(10) << "kernel" << std::setw(10) << "floor"
     << std::setw(8) << "x floor" << std::setw(9) << "H2D GB/s" << std::setw(9) << "D2H GB/s" << std::setw(11)
     << "1st call" << std::setw(11) << "error" << "  status\n";
  for (const HostRow& r : rows) {
    const auto v = values(r);
    os << std::left << std::setw(16) << v[0] << std::setw(6) << v[1] << std::setw(9) << v[2] << std::setw(10) << v[3]
       << std::setw(16) << v[4] << std::right << std::setw(10) << v[5] << std::setw(10) << v[8] << std::setw(8)
       << v[9] << std::setw(10) << v[10] << std::setw(10) << v[11] << std::setw(8) << v[12] << std::setw(9) << v[13]
       << std::setw(9) << v[14] << std::setw(11) << v[17] << std::setw(11) << fmt(r.normwise, 8) << "  " << r.status
       << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n";
  }
  os << "x floor = flow / max(bytes in / pinned H2D, bytes out / pinned D2H, kernel); H2D/D2H = plain copies of\n"
        "the bytes each way from this memory kind; 1st call = a fresh process's first gemm_host call, context start\n"
        "included (pinned: the pinned allocation too).\n";
  for (const HostRow& r : rows) {
    if (!r.calls.empty()) os << "\n" << format_calls(r);
    if (!r.trace.empty()) os << "\n" << format_trace(r);
  }
  return os.str();
}

// --first-call: this process's first CUDA work is the timed call.
int first_call(const Args& a, std::ostream& out) {
  if (a.shapes.size() != 1) throw CliError("--first-call times one shape: give --size N or --m, --n and --k");
  require_gpu(a.device);
  const check::GemmShape s = gemm_shape(a, {a.shapes[0], a.trans.empty() ? TransPair{} : a.trans[0]});
  const check::GemmData d = check::make_gemm_data(s, a.seed);
  const bool pinned = !a.memory.empty() && a.memory[0] == "pinned";
  Options opts;
  if (!a.variants.empty()) opts.variant = a.variants[0];
  const auto t0 = Clock::now();
  RUNGS_CUDA(cudaSetDevice(a.device));
  std::unique_ptr<HostBuf> A, B, C;
  A = std::make_unique<HostBuf>(d.A.size(), pinned);
  B = std::make_unique<HostBuf>(d.B.size(), pinned);
  C = std::make_unique<HostBuf>(d.C0.size(), pinned);
  const double alloc_ms = ms_since(t0);
  A->fill(d.A);
  B->fill(d.B);
  C->fill(d.C0);
  const auto t1 = Clock::now();
  gemm_host(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A->get(), s.lda, B->get(), s.ldb, s.beta, C->get(), s.ldc, opts);
  out << "first_call_ms " << alloc_ms + ms_since(t1) << "\n";
  return 0;
}

}  // namespace

host::Plan parse_plan(const std::string& t) {
  host::Plan p;
  const char* s = t.c_str();
  int used = 0;
  bool ok = std::sscanf(s, "%dx%d%n", &p.row_panels, &p.col_panels, &used) == 2;
  if (ok && s[used] == ':') {
    s += used, used = 0;
    ok = std::sscanf(s, ":k%d/%lf%n", &p.kmajor_chunks, &p.kmajor_fraction, &used) == 2;
    if (ok && s[used] == ':') {
      s += used, used = 0;
      ok = std::sscanf(s, ":r%d%n", &p.kmajor_row_panels, &used) == 1 && p.kmajor_row_panels >= 1;
    }
  }
  if (!ok || s[used] != '\0' || p.row_panels < 1 || p.col_panels < 1 || p.kmajor_chunks < 0 ||
      p.kmajor_fraction < 0 || p.kmajor_fraction >= 1)
    throw CliError("--plan: " + t + " is not RxC, RxC:kN/F or RxC:kN/F:rP (R, C, P >= 1; 0 <= F < 1)");
  return p;
}

int cmd_bench_host(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  host::Tuning t;  // the library's choices but for those the flags set
  t.graph = !a.no_graph;
  t.staging_threads = a.host_threads;
  if (!a.plan.empty()) t.plan = parse_plan(a.plan);
  host::set_tuning(t);
  if (a.first_call) return first_call(a, out);
  std::unique_ptr<std::ofstream> file;
  if (!a.output.empty()) {
    file = std::make_unique<std::ofstream>(a.output, std::ios::out | std::ios::trunc);
    if (!*file) throw CliError("--output " + a.output + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  require_gpu(a.device);
  Context ctx = make_context(a, argv0);
  ctx.device = query_device(a.device, false);
  ctx.has_device = true;
  ctx.baseline = "naive";  // the copy-multiply-copy flow on one stream, in the same run
  L2Flusher flusher(a.flush_l2, ctx.device.l2_bytes);
  std::vector<check::GemmShape> shapes;
  const std::vector<Shape> sizes = a.shapes.empty() ? std::vector<Shape>{{1024, 1024, 1024}, {4096, 4096, 4096},
                                                                         {8192, 8192, 8192}}
                                                    : a.shapes;
  const std::vector<TransPair> trans = a.trans.empty() ? std::vector<TransPair>{{}} : a.trans;
  const std::vector<std::string> mems = a.memory.empty() ? std::vector<std::string>{"pinned", "pageable"} : a.memory;
  std::vector<HostRow> rows;
  PinnedRates pinned_rates;
  for (const Shape& sh : sizes)
    for (const TransPair& t : trans)
      for (const std::string& mem : mems)
        rows.push_back(bench_one(a, argv0, gemm_shape(a, {sh, t}), mem == "pinned", flusher, pinned_rates, err));
  const std::string text = format_rows(a.format, rows, ctx, a);
  if (file) {
    *file << text;
    if (!*file) throw CliError("--output " + a.output + ": write failed");
    if (a.format != Format::table) out << format_rows(Format::table, rows, ctx, a);
  } else {
    out << text;
  }
  for (const HostRow& r : rows)
    if (r.status != "ok") return 1;
  return 0;
}

}  // namespace rungs::cli
