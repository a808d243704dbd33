// The `rungs` commands. bench, verify and tune share one loop over shapes (data, fp64
// reference and device buffers set up once per shape) and the timing method of timing.cpp.
#include "cli/commands.hpp"

#include "check/gemm_check.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/timing.hpp"
#include "detail/check.hpp"
#include "gemm/gemm_rung.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

namespace rungs::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Left free beside our buffers: the CUDA context's own allocations, cuBLAS's workspace.
constexpr double kReserveBytes = 512.0 * 1024.0 * 1024.0;

const char* const kOps[] = {"gemm", "gemv", "reduce"};

Op op_from_name(const std::string& name) {
  if (name == "gemv") return Op::gemv;
  if (name == "reduce") return Op::reduce;
  return Op::gemm;
}

std::string fmt_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

class Stream {
 public:
  Stream() { RUNGS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class DeviceFloats {
 public:
  DeviceFloats(size_t count, const std::string& what) : n_(count) {
    const cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&p_), std::max<size_t>(count, 1) * sizeof(float));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw CliError("not enough device memory for " + what + " (" + fmt_gib(count * 4.0) + ")");
    }
    if (err != cudaSuccess) detail::throw_cuda(err, "cudaMalloc", __FILE__, __LINE__);
  }
  ~DeviceFloats() {
    if (p_) cudaFree(p_);
  }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() const { return p_; }
  size_t bytes() const { return n_ * sizeof(float); }
  void upload(const std::vector<float>& h, cudaStream_t s) {
    RUNGS_CUDA(cudaMemcpyAsync(p_, h.data(), bytes(), cudaMemcpyHostToDevice, s));
  }

 private:
  float* p_ = nullptr;
  size_t n_ = 0;
};

// Everything a run needs, set up once per command.
struct Session {
  const Args& args;
  Context ctx;
  std::ostream& err;
  Stream stream;
  std::unique_ptr<L2Flusher> flusher;

  void progress(const std::string& line) const {
    if (!args.quiet) err << line << std::endl;
  }
};

std::vector<TransPair> trans_list(const Args& a) { return a.trans.empty() ? std::vector<TransPair>{{}} : a.trans; }
std::vector<Shape> shape_list(const Args& a) { return a.shapes.empty() ? default_shapes() : a.shapes; }

std::vector<std::string> ops_to_run(const Args& a) {
  if (!a.op.empty()) {
    if (variants(op_from_name(a.op)).empty())
      throw CliError("the " + a.op + " ladder has no rungs yet (see rungs list)");
    return {a.op};
  }
  std::vector<std::string> ops;
  for (const char* op : kOps)
    if (!variants(op_from_name(op)).empty()) ops.push_back(op);
  return ops;
}

check::GemmShape gemm_shape(const Args& a, const Shape& sh, TransPair t) {
  check::GemmShape s;
  s.ta = t.a;
  s.tb = t.b;
  s.m = sh.m;
  s.n = sh.n;
  s.k = sh.k;
  s.alpha = a.alpha;
  s.beta = a.beta;
  return check::normalized(s);
}

// Before allocating anything: does the largest shape fit in what the device has free?
void check_memory(const Args& a, const DeviceInfo& d, int64_t flush_bytes) {
  double worst = 0;
  std::string worst_name;
  for (const Shape& sh : shape_list(a))
    for (TransPair t : trans_list(a)) {
      const check::GemmShape s = gemm_shape(a, sh, t);
      const double bytes = 4.0 * (static_cast<double>(check::a_elems(s)) + static_cast<double>(check::b_elems(s)) +
                                  static_cast<double>(check::c_elems(s)));
      if (bytes > worst) {
        worst = bytes;
        worst_name = shape_name(sh) + " " + trans_name(t);
      }
    }
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const double need = worst + static_cast<double>(flush_bytes) + kReserveBytes;
  if (need > static_cast<double>(free_b))
    throw CliError("gemm " + worst_name + " does not fit in device memory: A, B and C need " + fmt_gib(worst) +
                   " (plus " + fmt_gib(static_cast<double>(flush_bytes) + kReserveBytes) +
                   " for the L2 flush buffer and the libraries) but " + fmt_gib(static_cast<double>(free_b)) +
                   " of " + fmt_gib(static_cast<double>(total_b)) + " is free on device " + std::to_string(d.index) +
                   " (" + d.name + ")");
}

std::string resolve_baseline(const Args& a, const std::vector<VariantInfo>& ladder, const DeviceInfo& d) {
  if (a.baseline == "none") return "";
  const std::vector<VariantInfo> b = select_variants(ladder, {a.baseline}, "gemm", "--baseline");
  if (b[0].min_sm > d.sm)
    throw CliError("--baseline " + b[0].name + " needs sm_" + std::to_string(b[0].min_sm) + "; this device is sm_" +
                   std::to_string(d.sm) + " (use --baseline none)");
  return b[0].name;
}

// One shape's data, reference and device buffers.
struct GemmCase {
  check::GemmShape s;
  Shape shape;
  TransPair trans;
  check::GemmData data;
  check::GemmReference ref;
  std::unique_ptr<DeviceFloats> A, B, C;
  std::vector<float> hostC;
  bool baseline_ok = false;
  std::string baseline_reason;
};

std::unique_ptr<GemmCase> prepare_case(Session& ses, const Shape& sh, TransPair t, const std::string& tag) {
  auto g = std::make_unique<GemmCase>();
  const Args& a = ses.args;
  g->s = gemm_shape(a, sh, t);
  g->shape = sh;
  g->trans = t;
  const int64_t rows = reference_rows(a, sh);
  ses.progress("[" + tag + "] " + shape_name(sh) + " " + trans_name(t) + ": random data, fp64 reference on " +
               (rows == 0 ? std::string("all rows") : std::to_string(rows) + " sampled rows"));
  g->data = check::make_gemm_data(g->s, a.seed);
  g->ref = check::gemm_reference(g->s, g->data, rows, a.seed);
  const std::string what = "gemm " + shape_name(sh) + " " + trans_name(t);
  g->A = std::make_unique<DeviceFloats>(g->data.A.size(), "A of " + what);
  g->B = std::make_unique<DeviceFloats>(g->data.B.size(), "B of " + what);
  g->C = std::make_unique<DeviceFloats>(g->data.C0.size(), "C of " + what);
  g->A->upload(g->data.A, ses.stream.get());
  g->B->upload(g->data.B, ses.stream.get());
  g->hostC.assign(g->data.C0.size(), 0.0f);
  RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  return g;
}

Launch gemm_launch(const GemmCase& g, const std::string& variant, cudaStream_t stream) {
  return [&g, variant, stream] {
    Options o;
    o.variant = variant;
    o.stream = stream;
    gemm(g.s.ta, g.s.tb, g.s.m, g.s.n, g.s.k, g.s.alpha, g.A->get(), g.s.lda, g.B->get(), g.s.ldb, g.s.beta,
         g.C->get(), g.s.ldc, o);
  };
}

// The baseline once on this shape: it warms the library up and tells whether it can run it.
void probe_baseline(Session& ses, GemmCase& g) {
  if (ses.ctx.baseline.empty()) return;
  try {
    gemm_launch(g, ses.ctx.baseline, ses.stream.get())();
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
    g.baseline_ok = true;
  } catch (const Unsupported& e) {
    g.baseline_ok = false;
    g.baseline_reason = e.what();
  }
}

Result new_result(const std::string& op, const GemmCase& g) {
  Result r;
  r.op = op;
  r.shape = g.shape;
  r.trans = g.trans;
  r.alpha = g.s.alpha;
  r.beta = g.s.beta;
  return r;
}

// The correctness run: C poisoned with NaN (C0 when beta != 0), one launch, C back, compared.
// Returns the launch's time.
double correctness_run(const Launch& f, GemmCase& g, Result& r, cudaStream_t stream) {
  if (g.s.beta == 0.0f)
    RUNGS_CUDA(cudaMemsetAsync(g.C->get(), 0xFF, g.C->bytes(), stream));
  else
    g.C->upload(g.data.C0, stream);
  const double ms = time_once(f, stream);
  RUNGS_CUDA(cudaMemcpyAsync(g.hostC.data(), g.C->get(), g.C->bytes(), cudaMemcpyDeviceToHost, stream));
  RUNGS_CUDA(cudaStreamSynchronize(stream));
  const check::GemmErrors e = check::compare_gemm(g.s, g.ref, g.hostC.data());
  r.checked = true;
  r.checked_rows = g.ref.rows.empty() ? g.s.m : static_cast<int64_t>(g.ref.rows.size());
  r.max_rel = e.max_rel;
  r.normwise = e.normwise;
  r.normwise_tol = check::normwise_tolerance(g.s.k);
  r.bound_ratio = e.bound_ratio;
  r.bad = e.bad;
  if (!e.pass) {
    r.status = Status::fail;
    std::string why = e.reason;
    while (!why.empty() && (why.back() == ' ' || why.back() == ';')) why.pop_back();
    r.reason = why.empty() ? "outside the tolerance" : why;
  }
  return ms;
}

void timed_run(Session& ses, const GemmCase& g, const Launch& f, Result& r, bool is_baseline, double first_ms) {
  const Args& a = ses.args;
  const std::string& base = ses.ctx.baseline;
  Launch base_launch;
  const bool interleave = !base.empty() && g.baseline_ok && !is_baseline;
  if (interleave) base_launch = gemm_launch(g, base, ses.stream.get());
  const Measurement m =
      measure(f, interleave ? &base_launch : nullptr, a.reps, a.warmup, *ses.flusher, ses.stream.get(), first_ms);
  const Stats st = summarize(m.rung_ms);
  r.timed = true;
  r.reps = m.reps;
  r.reps_requested = a.reps;
  r.warmup = m.warmup;
  r.reps_cut = m.cut;
  r.warm_ms = m.warm_ms;
  r.median_ms = st.median;
  r.min_ms = st.min;
  r.max_ms = st.max;
  r.tflops = st.median > 0 ? r.flops() / (st.median * 1e-3) / 1e12 : 0;
  r.pct_peak = ses.ctx.device.peak_tflops > 0 ? 100.0 * r.tflops / ses.ctx.device.peak_tflops : 0;
  if (is_baseline) {
    r.baseline = base;
    r.baseline_median_ms = st.median;
    r.speedup = 1.0;
  } else if (interleave) {
    const Stats b = summarize(m.base_ms);
    r.baseline = base;
    r.baseline_median_ms = b.median;
    r.speedup = st.median > 0 ? b.median / st.median : 0;
  }
}

// Runs body; Unsupported becomes SKIP, other library errors an ERROR row unless the CUDA
// context is broken (a sticky fault), which ends the run.
template <class F>
void guarded(Result& r, F&& body) {
  try {
    body();
  } catch (const Unsupported& e) {
    r.status = Status::skip;
    r.reason = e.what();
    r.timed = false;
  } catch (const Error& e) {
    const cudaError_t sync = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    if (sync != cudaSuccess) throw;
    r.status = Status::error;
    r.reason = e.what();
    r.timed = false;
  }
}

std::string strip_prefix(const std::string& reason, const std::string& name) {
  const std::string p = name + ": ";
  return reason.compare(0, p.size(), p) == 0 ? reason.substr(p.size()) : reason;
}

// bench (timed) and verify (not timed) on one ladder.
void run_ladder(Session& ses, const std::string& op, bool timed, std::vector<Result>& out) {
  const Args& a = ses.args;
  const std::vector<VariantInfo> ladder = variants(op_from_name(op));
  const std::vector<VariantInfo> chosen = select_variants(ladder, a.variants, op);
  const std::vector<Shape> shapes = shape_list(a);
  const std::vector<TransPair> trans = trans_list(a);
  const size_t total = shapes.size() * trans.size() * chosen.size();
  size_t done = 0;
  const int dev_sm = ses.ctx.device.sm;
  for (const Shape& sh : shapes)
    for (TransPair t : trans) {
      std::unique_ptr<GemmCase> g = prepare_case(ses, sh, t, op);
      if (timed) probe_baseline(ses, *g);
      for (const VariantInfo& v : chosen) {
        ++done;
        ses.progress("[" + op + " " + std::to_string(done) + "/" + std::to_string(total) + "] " + v.name + " " +
                     shape_name(sh) + " " + trans_name(t));
        Result r = new_result(op, *g);
        r.variant = v.name;
        r.rung = v.rung;
        r.is_baseline = !ses.ctx.baseline.empty() && v.name == ses.ctx.baseline;
        if (v.min_sm > dev_sm) {
          r.status = Status::skip;
          r.reason = "needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" + std::to_string(dev_sm);
          out.push_back(r);
          continue;
        }
        guarded(r, [&] {
          const Launch f = gemm_launch(*g, v.name, ses.stream.get());
          const double first_ms = correctness_run(f, *g, r, ses.stream.get());
          if (timed) timed_run(ses, *g, f, r, r.is_baseline, first_ms);
        });
        if (v.name == "auto") {  // say which rung auto chose for this shape
          try {
            r.variant = "auto=" + resolve_gemm_variant(t.a, t.b, sh.m, sh.n, sh.k);
          } catch (const Error&) {
          }
        }
        if (timed && !r.is_baseline && !ses.ctx.baseline.empty() && !g->baseline_ok && r.timed)
          r.reason += (r.reason.empty() ? "" : "; ") + std::string("no baseline on this shape: ") +
                      strip_prefix(g->baseline_reason, ses.ctx.baseline);
        r.reason = strip_prefix(r.reason, v.name);
        out.push_back(r);
      }
    }
}

void run_tune(Session& ses, std::vector<Result>& out) {
  const Args& a = ses.args;
  const std::vector<std::string> cfgs = sgemm::warptile::configs();
  if (cfgs.empty()) throw CliError("tune: the warptile rung has no configurations to time");
  for (const VariantInfo& v : variants(Op::gemm))
    if (v.name == "warptile" && v.min_sm > ses.ctx.device.sm)
      throw CliError("tune: warptile needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" +
                     std::to_string(ses.ctx.device.sm));
  const std::vector<Shape> shapes = shape_list(a);
  const std::vector<TransPair> trans = trans_list(a);
  const size_t total = shapes.size() * trans.size() * cfgs.size();
  size_t done = 0;
  for (const Shape& sh : shapes)
    for (TransPair t : trans) {
      std::unique_ptr<GemmCase> g = prepare_case(ses, sh, t, "tune");
      probe_baseline(ses, *g);
      const size_t first = out.size();
      for (size_t i = 0; i < cfgs.size(); ++i) {
        ++done;
        ses.progress("[tune " + std::to_string(done) + "/" + std::to_string(total) + "] " + cfgs[i] + " " +
                     shape_name(sh) + " " + trans_name(t));
        Result r = new_result("gemm", *g);
        r.variant = "warptile";
        r.config = cfgs[i];
        r.rung = static_cast<int>(i);
        const GemmCase& gc = *g;
        const cudaStream_t stream = ses.stream.get();
        const Launch f = [&gc, i, stream] {
          const sgemm::Args args{gc.s.ta, gc.s.tb,    gc.s.m,    gc.s.n,  gc.s.k,     gc.s.alpha, gc.A->get(),
                                 gc.s.lda, gc.B->get(), gc.s.ldb, gc.s.beta, gc.C->get(), gc.s.ldc,   stream};
          sgemm::warptile::run_config(i, args);
          RUNGS_CUDA(cudaPeekAtLastError());
        };
        guarded(r, [&] {
          const double first_ms = correctness_run(f, *g, r, stream);
          timed_run(ses, *g, f, r, false, first_ms);
        });
        r.reason = strip_prefix(r.reason, "warptile");
        out.push_back(r);
      }
      Result* best = nullptr;
      for (size_t i = first; i < out.size(); ++i)
        if (out[i].status == Status::ok && out[i].timed && (!best || out[i].median_ms < best->median_ms))
          best = &out[i];
      if (best) best->fastest = true;
    }
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

void write_results(const Args& a, const Context& ctx, const std::vector<Result>& rows, std::ostream& out,
                   std::ofstream* file, std::ostream& err) {
  const std::string text = format_results(a.format, ctx, rows);
  if (file == nullptr) {
    out << text;
    out.flush();
    return;
  }
  *file << text;
  file->flush();
  if (!*file) throw CliError("--output " + a.output + ": write failed");
  if (a.format != Format::table) out << format_results(Format::table, ctx, rows);
  out.flush();
  if (!a.quiet)
    err << "rungs: wrote " << rows.size() << " result" << (rows.size() == 1 ? "" : "s") << " (" << format_name(a.format)
        << ") to " << a.output << std::endl;
}

int cmd_run(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  // Everything that can be checked without the GPU first.
  const std::vector<std::string> ops = a.command == Command::tune ? std::vector<std::string>{"gemm"} : ops_to_run(a);
  for (const std::string& op : ops) {
    if (a.command != Command::tune) (void)select_variants(variants(op_from_name(op)), a.variants, op);
  }
  std::unique_ptr<std::ofstream> file;
  if (!a.output.empty()) {
    file = std::make_unique<std::ofstream>(a.output, std::ios::out | std::ios::trunc);
    if (!*file) throw CliError("--output " + a.output + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  require_gpu(a.device);
  const bool timed = a.command != Command::verify;
  Session ses{a, make_context(a, argv0), err, Stream(), nullptr};
  ses.ctx.device = query_device(a.device, timed);
  ses.ctx.has_device = true;
  if (timed) {
    ses.ctx.baseline = resolve_baseline(a, variants(Op::gemm), ses.ctx.device);
  } else {
    ses.ctx.baseline.clear();
  }
  const int64_t flush_bytes = timed && a.flush_l2 ? 2 * ses.ctx.device.l2_bytes : 0;
  check_memory(a, ses.ctx.device, flush_bytes);
  ses.flusher = std::make_unique<L2Flusher>(timed && a.flush_l2, ses.ctx.device.l2_bytes);
  if (timed && a.reps < kMinReportedReps && !a.quiet)
    err << "rungs: note: --reps " << a.reps << " is below " << kMinReportedReps
        << ", the project's minimum for reported numbers: a quick look only" << std::endl;

  std::vector<Result> rows;
  try {
    if (a.command == Command::tune)
      run_tune(ses, rows);
    else
      for (const std::string& op : ops) run_ladder(ses, op, timed, rows);
  } catch (...) {
    // A fatal error mid-run: what was measured so far still comes out, then the error.
    if (!rows.empty()) {
      err << "rungs: the run stopped early; the " << rows.size() << " result" << (rows.size() == 1 ? "" : "s")
          << " measured so far follow" << std::endl;
      write_results(a, ses.ctx, rows, out, file.get(), err);
    }
    throw;
  }
  write_results(a, ses.ctx, rows, out, file.get(), err);
  return exit_code(rows);
}

int cmd_info(const Args& a, std::ostream& out) {
  require_gpu(a.device);
  out << format_info(query_device(a.device, true));
  return 0;
}

int cmd_list(const Args& a, std::ostream& out) {
  std::vector<std::pair<std::string, std::vector<VariantInfo>>> ladders;
  for (const char* op : kOps)
    if (a.op.empty() || a.op == op) ladders.emplace_back(op, variants(op_from_name(op)));
  out << format_list(ladders);
  return 0;
}

}  // namespace

std::vector<VariantInfo> select_variants(const std::vector<VariantInfo>& ladder, const std::vector<std::string>& wanted,
                                         const std::string& op, const std::string& flag) {
  // "auto" (what the library runs by default) is measured beside the rungs, after them.
  const VariantInfo auto_row{"auto", "what variant = \"auto\" dispatches to for the shape", -1, 0, false};
  if (wanted.empty()) {
    std::vector<VariantInfo> all = ladder;
    if (!ladder.empty()) all.push_back(auto_row);
    return all;
  }
  std::vector<bool> take(ladder.size(), false);
  bool take_auto = false;
  for (const std::string& w : wanted) {
    if (w == "auto" && !ladder.empty()) {
      take_auto = true;
      continue;
    }
    const bool numeric = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    bool found = false;
    for (size_t i = 0; i < ladder.size(); ++i) {
      if (numeric ? (w.size() < 10 && std::stoi(w) == ladder[i].rung) : w == ladder[i].name) {
        take[i] = true;
        found = true;
      }
    }
    if (!found) {
      std::string known;
      for (const auto& v : ladder) known += (known.empty() ? "" : ", ") + v.name;
      throw CliError(flag + ": unknown " + op + " rung '" + w + "' (known: " + (known.empty() ? "none yet" : known) +
                     "; see rungs list " + op + ")");
    }
  }
  std::vector<VariantInfo> out;
  for (size_t i = 0; i < ladder.size(); ++i)
    if (take[i]) out.push_back(ladder[i]);
  if (take_auto) out.push_back(auto_row);
  return out;
}

int exit_code(const std::vector<Result>& rows) {
  for (const Result& r : rows)
    if (r.status == Status::fail || r.status == Status::error) return 1;
  return 0;
}

int run_main(const std::vector<std::string>& args, const std::string& argv0, std::ostream& out, std::ostream& err) {
  try {
    const Args a = parse_args(args);
    switch (a.command) {
      case Command::help:
      case Command::none: out << help_text(a.help_for); return 0;
      case Command::version: out << "rungs " << RUNGS_VERSION << "\n"; return 0;
      case Command::list: return cmd_list(a, out);
      case Command::info: return cmd_info(a, out);
      case Command::bench:
      case Command::verify:
      case Command::tune: return cmd_run(a, argv0, out, err);
    }
    return 0;
  } catch (const CliError& e) {
    err << "rungs: error: " << one_line(e.what()) << std::endl;
    return e.code();
  } catch (const Error& e) {
    // CUDA and cuBLAS failures exit 3; anything else the library rejects is a usage error.
    const std::string msg = e.what();
    const bool device_failure = msg.rfind("CUDA error", 0) == 0 || msg.rfind("cuBLAS error", 0) == 0;
    err << "rungs: error: " << one_line(msg) << std::endl;
    return device_failure ? 3 : 2;
  } catch (const std::bad_alloc&) {
    err << "rungs: error: out of host memory" << std::endl;
    return 3;
  } catch (const std::exception& e) {
    err << "rungs: error: " << one_line(e.what()) << std::endl;
    return 3;
  }
}

}  // namespace rungs::cli
