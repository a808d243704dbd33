// `rungs profile`: Nsight Compute on one launch of each rung (see profile.hpp). The parent never
// touches the GPU before the first profiled child has run: a missing ncu is reported first (the
// cause a user can fix without a GPU), then whatever the child or ncu says (no GPU, no permission
// to read the counters), then the rows.
#include "cli/profile.hpp"

#include "check/gemm_check.hpp"
#include "cli/buffers.hpp"
#include "cli/commands.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/workload.hpp"
#include "core/errors.hpp"

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>

#ifndef RUNGS_CUDA_BIN_DIR
#define RUNGS_CUDA_BIN_DIR ""
#endif

namespace rungs::cli {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The child's one line of result on stdout: "<tag>ok <rung>", "<tag>skip <why>", "<tag>fail <why>",
// "<tag>error <why>" or "<tag>fatal <why>" (fatal: the whole run stops, e.g. no GPU).
const char* const kChildTag = "rungs-profile-child: ";
const char* const kTime = "gpu__time_duration.sum";
const char* const kRegs = "launch__registers_per_thread";
const char* const kOcc = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* const kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kL2Hit = "lts__t_sector_hit_rate.pct";
const char* const kBankLd = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
const char* const kBankSt = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
const char* const kIssue = "smsp__issue_active.avg.pct_of_peak_sustained_active";
const char* const kFma = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
const char* const kTensor = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
// Asked too: where ncu lacks kTensor (it leaves out names it does not know), the HMMA pipe's.
const char* const kTensorHmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
// ncu's options besides --log-file and --metrics (the JSON's "profiler" object repeats them).
const char* const kNcuOptions =
    "--csv --page raw --print-units base --clock-control none --profile-from-start off";

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

std::string printf_num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Single quotes for /bin/sh.
std::string sh_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string search_path(const std::string& name, const std::string& path_env) {
  for (const std::string& dir : split(path_env, ':')) {
    const std::string p = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(p)) return p;
  }
  return "";
}

// A time unit of ncu's units row, as nanoseconds; 1 for anything else.
double unit_scale(const std::string& unit) {
  if (unit == "us" || unit == "usecond") return 1e3;
  if (unit == "ms" || unit == "msecond") return 1e6;
  if (unit == "s" || unit == "second") return 1e9;
  return 1.0;
}

bool is_host_rung(const VariantInfo& v) { return v.name != "auto" && v.min_sm <= 0; }

// gemm rungs list the types they do; the other ladders do every case.
bool does_kind(const std::string& op, const VariantInfo& v, const Case& c) {
  if (op != "gemm" || v.name == "auto") return true;
  return (" " + v.types + " ").find(std::string(" ") + check::gemm_kind_name(c.kind) + " ") != std::string::npos;
}

std::string strip_prefix(const std::string& reason, const std::string& name) {
  const std::string p = name + ": ";
  return reason.compare(0, p.size(), p) == 0 ? reason.substr(p.size()) : reason;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// ---------------------------------------------------------------------------------------------
// The child: one case, one rung, one profiled launch.

int run_child(const Args& a, std::ostream& out, std::ostream& err) {
  auto say = [&](const std::string& status, const std::string& detail) {
    out << kChildTag << status << " " << one_line(detail) << std::endl;
  };
  std::string name;
  try {
    const std::vector<Case> cases = profile_cases(a);
    if (cases.size() != 1 || a.variants.size() != 1)
      throw CliError("--profile-child is rungs profile's internal flag: it takes one case and one --variant");
    const VariantInfo v = select_variants(variants(op_from_name(a.op)), a.variants, a.op).at(0);
    name = v.name;
    if (is_host_rung(v)) {
      say("skip", "runs on the host: no kernel to profile");
      return 4;
    }
    require_gpu(a.device);
    const DeviceInfo d = query_device(a.device, false);  // no timed probes
    if (v.min_sm > d.sm) {
      say("skip", "needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" + std::to_string(d.sm));
      return 4;
    }
    const std::unique_ptr<Workload> w = new_workload(a, a.op, cases[0], err);
    const Stream stream;
    const Launch f = w->launch(v.name, stream.get());
    Result r = w->new_result();
    (void)w->correctness_run(f, v.name, r, stream.get());  // unprofiled: before cudaProfilerStart
    if (r.status == Status::fail) {
      say("fail", "failed verification, not profiled: " + strip_prefix(r.reason, v.name));
      return 1;
    }
    RUNGS_CUDA(cudaProfilerStart());
    f();
    RUNGS_CUDA(cudaStreamSynchronize(stream.get()));
    RUNGS_CUDA(cudaProfilerStop());
    say("ok", v.name == "auto" ? w->resolve_auto() : v.name);
    return 0;
  } catch (const Unsupported& e) {
    say("skip", strip_prefix(e.what(), name));
    return 4;
  } catch (const CliError& e) {
    say("fatal", e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    say("error", "out of host memory");
    return 3;
  } catch (const std::exception& e) {
    say("error", strip_prefix(e.what(), name));
    return 3;
  }
}

// ---------------------------------------------------------------------------------------------
// The parent: ncu per (case, rung).

// A private temporary directory, removed with what ncu wrote in it.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t != nullptr && *t != '\0' ? t : "/tmp") + "/rungs-profile-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      throw CliError("cannot create a temporary directory for ncu's log (" + tmpl + "): " + std::strerror(errno));
    path_ = buf.data();
  }
  ~TempDir() {
    ::unlink(file("ncu.log").c_str());
    ::rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Runs a shell command; its stdout and stderr (2>&1 in cmd) and its wait status.
std::string run_command(const std::string& cmd, int& status) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) throw CliError(std::string("cannot run ncu (popen: ") + std::strerror(errno) + ")", 3);
  std::string text;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  status = ::pclose(p);
  return text;
}

std::string ncu_version(const std::string& ncu) {
  int status = 0;
  const std::string text = run_command(sh_quote(ncu) + " --version 2>&1", status);
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    const size_t v = line.find("Version ");  // "Version 2025.3.0.0 (build 36273991) (public-release)"
    if (v != std::string::npos) {
      const std::string rest = trim(line.substr(v + 8));
      return rest.substr(0, rest.find(' '));
    }
  }
  return "unknown";
}

std::string self_executable(const std::string& argv0) {
  char buf[PATH_MAX + 1] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", buf, PATH_MAX);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

std::string fmt_flag_float(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string describe_status(int status) {
  if (status == -1) return "could not be waited for";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// What one ncu run gave.
struct ChildRun {
  std::string status, detail;  // from the child's line; status "" = no line
  std::string last_output;     // the last line of other output (ncu's or the child's)
  int wait_status = 0;
  NcuLog log;
  bool log_written = false;
};

ChildRun run_under_ncu(const std::string& ncu, const std::string& self, const std::vector<std::string>& child_args) {
  const TempDir dir;
  const std::string log_path = dir.file("ncu.log");
  std::string cmd = sh_quote(ncu) + " " + kNcuOptions + " --log-file " + sh_quote(log_path) + " --metrics " +
                    join(profile_metrics(), ",") + " " + sh_quote(self);
  for (const std::string& s : child_args) cmd += " " + sh_quote(s);
  cmd += " 2>&1";
  ChildRun run;
  const std::string text = run_command(cmd, run.wait_status);
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    const size_t tag = line.find(kChildTag);
    if (tag != std::string::npos) {
      const std::string rest = line.substr(tag + std::strlen(kChildTag));
      const size_t sp = rest.find(' ');
      run.status = rest.substr(0, sp);
      run.detail = sp == std::string::npos ? std::string() : trim(rest.substr(sp + 1));
    } else if (!trim(line).empty()) {
      run.last_output = trim(line);
    }
  }
  const std::string log_text = read_file(log_path);
  run.log_written = !trim(log_text).empty();
  run.log = parse_ncu_log(log_text);
  return run;
}

bool benign_error(const std::string& e) { return e.find("The application returned an error code") != std::string::npos; }

std::string first_real_error(const NcuLog& log) {
  for (const std::string& e : log.errors)
    if (!benign_error(e)) return e;
  return "";
}

// Turns one ncu run into the row, or throws CliError for what ends the whole run.
void interpret(const ChildRun& run, const std::string& rung_label, ProfileRow& row) {
  for (const std::string& e : run.log.errors)
    if (e.find("ERR_NVGPUCTRPERM") != std::string::npos)
      throw CliError("ncu could not profile " + rung_label + ": " + trim(e) +
                     " (ERR_NVGPUCTRPERM: the driver lets only admin users read the GPU performance counters; "
                     "run as root or see https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
  if (run.status == "fatal") throw CliError(run.detail.empty() ? "the profiled process stopped (" + describe_status(run.wait_status) + ")" : run.detail);
  if (run.status == "skip") {
    row.status = Status::skip;
    row.reason = run.detail;
    return;
  }
  if (run.status == "fail") {
    row.status = Status::fail;
    row.reason = run.detail;
    return;
  }
  if (run.status == "error") {
    row.status = Status::error;
    row.reason = run.detail;
    return;
  }
  const std::string ncu_error = first_real_error(run.log);
  if (run.status == "ok") {
    row.ran = row.variant == "auto" ? run.detail : "";
    if (run.log.kernels.empty()) {
      if (!ncu_error.empty()) throw CliError("ncu could not profile " + rung_label + ": " + trim(ncu_error));
      row.status = Status::error;
      row.reason = "ncu recorded no kernel in the profiled launch";
      return;
    }
    row.stats = aggregate_kernels(run.log.kernels);
    if (!ncu_error.empty()) row.reason = "ncu: " + trim(ncu_error);
    return;
  }
  // No result line: ncu did not start the child, or the child died.
  if (!ncu_error.empty()) throw CliError("ncu could not profile " + rung_label + ": " + trim(ncu_error));
  if (!run.log_written)
    throw CliError("ncu failed (" + describe_status(run.wait_status) + ")" +
                   (run.last_output.empty() ? std::string() : ": " + run.last_output));
  row.status = Status::error;
  row.reason = "the profiled process ended without a result (" + describe_status(run.wait_status) + ")" +
               (run.last_output.empty() ? std::string() : ": " + run.last_output);
}

std::string rung_cell(const ProfileRow& r) {
  if (r.rung >= 0) {
    std::string n = std::to_string(r.rung);
    if (n.size() < 2) n = " " + n;
    return n + " " + r.variant;
  }
  return "   " + r.variant + (r.ran.empty() ? "" : "=" + r.ran);
}

std::string fmt_time(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  if (ns < 1e3) return printf_num("%.0f ns", ns);
  if (ns < 1e6) return printf_num("%.1f us", ns / 1e3);
  return printf_num("%.3f ms", ns / 1e6);
}

std::string fmt_or_na(double v, const char* f) { return std::isfinite(v) ? printf_num(f, v) : "n/a"; }

std::string fmt_ratio(double v) { return v >= 10 ? printf_num("%.1f", v) : printf_num("%.2f", v); }

std::string stall_cell(const ProfileStats& s) {
  if (s.top_stall.empty()) return "n/a";
  return s.top_stall + " " + fmt_ratio(s.top_stall_ratio);
}

std::string csv_num(double v, const char* f) { return std::isfinite(v) ? printf_num(f, v) : ""; }

std::string json_str(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string kind_name(const ProfileRow& r) {
  return r.op == "gemm" ? check::gemm_kind_name(r.the_case.kind) : r.op == "reduce" ? dtype_name(r.the_case.dtype) : "f32";
}

std::string row_name(const ProfileRow& r) {
  Result x;
  x.op = r.op;
  x.variant = r.variant;
  x.shape = r.the_case.shape;
  x.trans = r.the_case.trans;
  x.dtype = r.the_case.dtype;
  x.kind = r.the_case.kind;
  return benchmark_name(x);
}

const char* status_word(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::fail: return "FAIL";
    case Status::skip: return "SKIP";
    case Status::error: return "ERROR";
  }
  return "?";
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<Case> profile_cases(const Args& a) {
  Args d = a;
  if (a.op == "reduce") {
    if (d.shapes.empty()) d.shapes = {{0, int64_t{1} << 24, 0}};
    if (d.dtypes.empty()) d.dtypes = {DType::i64};
  } else if (a.op == "gemv") {
    if (d.shapes.empty()) d.shapes = {{16384, 16384, 0}};
    if (d.trans.empty()) d.trans = {{Trans::N, Trans::N}};
  } else {
    if (d.shapes.empty()) d.shapes = {{4096, 4096, 4096}};
    if (d.trans.empty()) d.trans = {{Trans::N, Trans::N}};
    if (d.gemm_kinds.empty()) d.gemm_kinds = {check::GemmKind::f32};
  }
  return cases_for(d, a.op.empty() ? "gemm" : a.op);
}

const std::vector<std::string>& stall_reasons() {
  static const std::vector<std::string> r = {
      "barrier",         "branch_resolving", "dispatch_stall",     "drain",   "gmma",          "imc_miss",
      "lg_throttle",     "long_scoreboard",  "math_pipe_throttle", "membar",  "mio_throttle",  "misc",
      "no_instruction",  "not_selected",     "selected",           "short_scoreboard", "sleeping", "tex_throttle",
      "wait"};
  return r;
}

std::string stall_metric(const std::string& reason) {
  return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

const std::vector<std::string>& profile_metrics() {
  static const std::vector<std::string> m = [] {
    std::vector<std::string> v = {kTime,  kRegs,  kOcc, kDram,   kL2Hit,     kBankLd,
                                  kBankSt, kIssue, kFma, kTensor, kTensorHmma};
    for (const std::string& r : stall_reasons()) v.push_back(stall_metric(r));
    return v;
  }();
  return m;
}

double NcuKernel::get(const std::string& metric) const {
  const auto it = values.find(metric);
  return it == values.end() ? kNaN : it->second;
}

std::vector<std::string> parse_csv_record(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r' && c != '\n') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

double parse_ncu_number(const std::string& text) {
  std::string s;
  for (char c : trim(text))
    if (c != ',') s += c;
  if (s.empty()) return kNaN;
  const char c0 = s[0];
  if (!((c0 >= '0' && c0 <= '9') || c0 == '-' || c0 == '+' || c0 == '.')) return kNaN;  // no "nan", "inf"
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return kNaN;
  return v;
}

NcuLog parse_ncu_log(const std::string& text) {
  NcuLog log;
  std::vector<std::string> header, units;
  bool units_next = false;
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("==", 0) == 0) {
      if (line.rfind("==ERROR==", 0) == 0) log.errors.push_back(line);
      continue;
    }
    if (trim(line).empty() || line[0] != '"') continue;
    std::vector<std::string> f = parse_csv_record(line);
    if (!log.has_header) {
      if (f[0] == "ID") {
        header = std::move(f);
        log.has_header = true;
        units_next = true;
      }
      continue;
    }
    if (f.size() != header.size()) continue;
    if (units_next) {
      units_next = false;
      if (f[0].empty()) {  // the units row: "", "", ..., "nsecond", "%", ...
        units = std::move(f);
        continue;
      }
    }
    NcuKernel k;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      if (h == "Kernel Name") k.name = f[i];
      else if (h == "Block Size") k.block = f[i];
      else if (h == "Grid Size") k.grid = f[i];
      else {
        const double v = parse_ncu_number(f[i]);
        if (std::isfinite(v)) k.values[h] = v * (i < units.size() ? unit_scale(units[i]) : 1.0);
      }
    }
    log.kernels.push_back(std::move(k));
  }
  return log;
}

std::string short_kernel_name(const std::string& full) {
  std::string s = trim(full);
  // Anonymous namespaces: ncu writes "<unnamed>::", but drops the '<' where the name or a template
  // argument starts with it ("void unnamed>::warptile_kernel<unnamed>::Tile<64, ...>, 1, 0>(...)").
  auto erase_all = [&s](const std::string& what, const std::string& with) {
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p)) s.replace(p, what.size(), with);
  };
  erase_all("(anonymous namespace)::", "");
  erase_all("::<unnamed>::", "::");
  if (s.rfind("<unnamed>::", 0) == 0) s.erase(0, 11);
  erase_all(" <unnamed>::", " ");
  erase_all("unnamed>::", "");
  // The parameter list: the first '(' outside template arguments.
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>' && depth > 0) --depth;
    else if (s[i] == '(' && depth == 0) {
      s.erase(i);
      break;
    }
  }
  // Template arguments.
  std::string t;
  depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (depth == 0) t += c;
  }
  // The return type ("void", "enable_if::type"): the name is the last word.
  t = trim(t);
  const size_t space = t.rfind(' ');
  if (space != std::string::npos) t = t.substr(space + 1);
  // The last two names.
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t p = t.find("::"); p != std::string::npos; p = t.find("::", from)) {
    parts.push_back(t.substr(from, p - from));
    from = p + 2;
  }
  parts.push_back(t.substr(from));
  std::string out = parts.size() >= 2 && !parts[parts.size() - 2].empty() ? parts[parts.size() - 2] + "::" + parts.back()
                                                                          : parts.back();
  if (out.size() > 40) out = out.substr(0, 37) + "...";
  return out.empty() ? trim(full).substr(0, 40) : out;
}

ProfileStats::ProfileStats()
    : time_ns(kNaN),
      registers(kNaN),
      occupancy_pct(kNaN),
      dram_pct(kNaN),
      l2_hit_pct(kNaN),
      bank_conflicts(kNaN),
      issue_pct(kNaN),
      fma_pct(kNaN),
      tensor_pct(kNaN),
      top_stall_ratio(kNaN) {}

ProfileStats aggregate_kernels(const std::vector<NcuKernel>& kernels) {
  ProfileStats s;
  s.kernels = static_cast<int>(kernels.size());
  if (kernels.empty()) return s;
  const NcuKernel* main = &kernels[0];
  double longest = -1, total = 0, banks = 0;
  bool any_time = false, any_bank = false;
  for (const NcuKernel& k : kernels) {
    const double t = k.get(kTime);
    if (std::isfinite(t)) {
      total += t;
      any_time = true;
      if (t > longest) {
        longest = t;
        main = &k;
      }
    }
    for (const char* m : {kBankLd, kBankSt}) {
      const double b = k.get(m);
      if (std::isfinite(b)) {
        banks += b;
        any_bank = true;
      }
    }
  }
  s.time_ns = any_time ? total : kNaN;
  s.bank_conflicts = any_bank ? banks : kNaN;
  s.main_kernel = main->name;
  s.block = main->block;
  s.grid = main->grid;
  s.registers = main->get(kRegs);
  s.occupancy_pct = main->get(kOcc);
  s.dram_pct = main->get(kDram);
  s.l2_hit_pct = main->get(kL2Hit);
  s.issue_pct = main->get(kIssue);
  s.fma_pct = main->get(kFma);
  for (const char* m : {kTensor, kTensorHmma}) {
    s.tensor_pct = main->get(m);
    if (std::isfinite(s.tensor_pct)) {
      s.tensor_metric = m;
      break;
    }
  }
  for (const std::string& r : stall_reasons()) {
    const double v = main->get(stall_metric(r));
    if (!std::isfinite(v)) continue;
    s.stalls.emplace_back(r, v);
    if (r != "selected" && v > 0 && (s.top_stall.empty() || v > s.top_stall_ratio)) {
      s.top_stall = r;
      s.top_stall_ratio = v;
    }
  }
  return s;
}

std::string format_profile_table(const Context& ctx, const ProfilerInfo& p, const std::vector<ProfileRow>& rows) {
  std::ostringstream os;
  const std::string op = rows.empty() ? std::string("?") : rows[0].op;
  os << "profile: " << op << ", one launch per rung under Nsight Compute " << p.ncu_version
     << " (clocks not locked, caches flushed)\n";
  if (ctx.has_device)
    os << ctx.device.name << " (sm_" << ctx.device.sm << ", " << ctx.device.sms << " SMs), device " << ctx.device.index;
  else
    os << "device (not queried)";
  os << "; rungs " << ctx.rungs_version << ", commit " << ctx.git_commit << "; " << ctx.command_line << "\n";

  const std::vector<std::string> head = {"rung",  "time",  "kern",    "regs",      "occ %", "DRAM %",     "L2 hit %",
                                         "bank confl", "issue %", "FMA %", "tensor %", "top stall", "main kernel"};
  const std::vector<bool> right = {false, true, true, true, true, true, true, true, true, true, true, false, false};
  std::vector<std::vector<std::string>> cells;  // empty vector = a case heading (index in titles)
  std::vector<std::string> titles;
  std::string last_case;
  for (const ProfileRow& r : rows) {
    const std::string cn = case_name(r.op, r.the_case);
    if (cn != last_case) {
      titles.push_back(r.op + " " + cn);
      cells.emplace_back();
      last_case = cn;
    }
    std::vector<std::string> c = {rung_cell(r)};
    if (r.status != Status::ok) {
      c.push_back(status_word(r.status));
      c.resize(head.size());
    } else {
      const ProfileStats& s = r.stats;
      c.push_back(fmt_time(s.time_ns));
      c.push_back(std::to_string(s.kernels));
      c.push_back(fmt_or_na(s.registers, "%.0f"));
      c.push_back(fmt_or_na(s.occupancy_pct, "%.1f"));
      c.push_back(fmt_or_na(s.dram_pct, "%.1f"));
      c.push_back(fmt_or_na(s.l2_hit_pct, "%.1f"));
      c.push_back(fmt_or_na(s.bank_conflicts, "%.0f"));
      c.push_back(fmt_or_na(s.issue_pct, "%.1f"));
      c.push_back(fmt_or_na(s.fma_pct, "%.1f"));
      c.push_back(fmt_or_na(s.tensor_pct, "%.1f"));
      c.push_back(stall_cell(s));
      c.push_back(short_kernel_name(s.main_kernel));
    }
    cells.push_back(std::move(c));
  }
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s = "  ";
    for (size_t i = 0; i < head.size(); ++i) {
      const std::string pad(w[i] - c[i].size(), ' ');
      s += right[i] ? pad + c[i] : c[i] + pad;
      if (i + 1 < head.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    os << s << "\n";
  };
  size_t title = 0;
  for (const auto& c : cells) {
    if (c.empty()) {
      os << "\n" << titles[title++] << "\n";
      line(head);
      continue;
    }
    line(c);
  }
  std::ostringstream notes;
  for (const ProfileRow& r : rows) {
    if (r.reason.empty()) continue;
    std::string who = rung_cell(r);
    while (!who.empty() && who[0] == ' ') who.erase(0, 1);
    notes << "  " << who << " at " << case_name(r.op, r.the_case) << ": "
          << (r.status == Status::ok ? std::string() : std::string(status_word(r.status)) + ": ") << r.reason << "\n";
  }
  for (const ProfileRow& r : rows)
    if (r.status == Status::ok && r.stats.tensor_metric == kTensorHmma) {
      notes << "  tensor %: sm__pipe_tensor_op_hmma_cycles_active (this ncu reports no sm__pipe_tensor_cycles_active)\n";
      break;
    }
  os << "\n";
  if (!notes.str().empty()) os << "Notes:\n" << notes.str();
  os << "time: the rung's kernels (kern of them) in one profiled launch; cite rungs bench's medians. The other\n"
        "columns are of the main (longest) kernel, bank conflicts excepted (all kernels'). top stall: warps stalled\n"
        "on that reason per issued instruction (\"selected\" left out). n/a: ncu did not report the metric.\n";
  return os.str();
}

std::string format_profile_csv(const std::vector<ProfileRow>& rows) {
  std::ostringstream os;
  os << "name,op,rung,variant,ran,m,n,k,trans,dtype,status,time_us,kernels,registers,occupancy_pct,dram_pct,"
        "l2_hit_pct,bank_conflicts,issue_pct,fma_pct,tensor_pct,tensor_metric,top_stall,top_stall_ratio,main_kernel,"
        "block,grid,main_kernel_full,reason\n";
  for (const ProfileRow& r : rows) {
    const ProfileStats& s = r.stats;
    const bool ok = r.status == Status::ok;
    const Shape& sh = r.the_case.shape;
    std::vector<std::string> f = {row_name(r),
                                  r.op,
                                  r.rung >= 0 ? std::to_string(r.rung) : "",
                                  r.variant,
                                  r.ran,
                                  std::to_string(sh.m),
                                  std::to_string(sh.n),
                                  std::to_string(sh.k),
                                  trans_name(r.op, r.the_case.trans),
                                  kind_name(r),
                                  status_name(r.status),
                                  ok ? csv_num(s.time_ns / 1e3, "%.3f") : "",
                                  ok ? std::to_string(s.kernels) : "",
                                  csv_num(s.registers, "%.0f"),
                                  csv_num(s.occupancy_pct, "%.2f"),
                                  csv_num(s.dram_pct, "%.2f"),
                                  csv_num(s.l2_hit_pct, "%.2f"),
                                  csv_num(s.bank_conflicts, "%.0f"),
                                  csv_num(s.issue_pct, "%.2f"),
                                  csv_num(s.fma_pct, "%.2f"),
                                  csv_num(s.tensor_pct, "%.2f"),
                                  s.tensor_metric,
                                  s.top_stall,
                                  csv_num(s.top_stall_ratio, "%.3f"),
                                  ok ? short_kernel_name(s.main_kernel) : "",
                                  s.block,
                                  s.grid,
                                  s.main_kernel,
                                  r.reason};
    for (size_t i = 0; i < f.size(); ++i) os << (i ? "," : "") << csv_field(f[i]);
    os << "\n";
  }
  return os.str();
}

std::string format_profile_json(const Context& ctx, const ProfilerInfo& p, const std::vector<ProfileRow>& rows) {
  std::ostringstream os;
  os << "{\n  \"context\": " << format_json_context(ctx, "  ") << ",\n";
  os << "  \"profiler\": {\n    \"ncu\": " << json_str(p.ncu_path) << ",\n    \"ncu_version\": " << json_str(p.ncu_version)
     << ",\n    \"options\": " << json_str(kNcuOptions) << ",\n    \"metrics\": [";
  const std::vector<std::string>& m = profile_metrics();
  for (size_t i = 0; i < m.size(); ++i) os << (i ? ", " : "") << json_str(m[i]);
  os << "]\n  },\n  \"profiles\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProfileRow& r = rows[i];
    const ProfileStats& s = r.stats;
    const bool ok = r.status == Status::ok;
    std::vector<std::pair<std::string, std::string>> f = {
        {"name", json_str(row_name(r))},
        {"op", json_str(r.op)},
        {"rung", std::to_string(r.rung)},
        {"variant", json_str(r.variant)},
        {"ran", json_str(r.ran.empty() ? r.variant : r.ran)},
        {"m", std::to_string(r.the_case.shape.m)},
        {"n", std::to_string(r.the_case.shape.n)},
        {"k", std::to_string(r.the_case.shape.k)},
        {"trans", json_str(trans_name(r.op, r.the_case.trans))},
        {"dtype", json_str(kind_name(r))},
        {"status", json_str(status_name(r.status))},
        {"reason", json_str(r.reason)}};
    if (ok) {
      std::string stalls = "{";
      for (size_t j = 0; j < s.stalls.size(); ++j)
        stalls += (j ? ", " : "") + json_str(s.stalls[j].first) + ": " + json_number(s.stalls[j].second);
      stalls += "}";
      const std::vector<std::pair<std::string, std::string>> g = {
          {"time_ns", json_number(s.time_ns)},
          {"kernels", std::to_string(s.kernels)},
          {"main_kernel", json_str(short_kernel_name(s.main_kernel))},
          {"main_kernel_full", json_str(s.main_kernel)},
          {"block", json_str(s.block)},
          {"grid", json_str(s.grid)},
          {"registers_per_thread", json_number(s.registers)},
          {"occupancy_pct", json_number(s.occupancy_pct)},
          {"dram_pct", json_number(s.dram_pct)},
          {"l2_hit_pct", json_number(s.l2_hit_pct)},
          {"bank_conflicts", json_number(s.bank_conflicts)},
          {"issue_pct", json_number(s.issue_pct)},
          {"fma_pct", json_number(s.fma_pct)},
          {"tensor_pct", json_number(s.tensor_pct)},
          {"tensor_metric", s.tensor_metric.empty() ? std::string("null") : json_str(s.tensor_metric)},
          {"top_stall", s.top_stall.empty() ? std::string("null") : json_str(s.top_stall)},
          {"top_stall_ratio", json_number(s.top_stall_ratio)},
          {"stalls", stalls}};
      f.insert(f.end(), g.begin(), g.end());
    }
    os << (i ? ",\n" : "\n") << "    {\n";
    for (size_t j = 0; j < f.size(); ++j)
      os << "      " << json_str(f[j].first) << ": " << f[j].second << (j + 1 < f.size() ? "," : "") << "\n";
    os << "    }";
  }
  os << (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return os.str();
}

std::vector<std::string> default_ncu_candidates() {
  std::vector<std::string> c;
  auto add = [&](const std::string& p) {
    if (!p.empty() && std::find(c.begin(), c.end(), p) == c.end()) c.push_back(p);
  };
  const std::string bin = RUNGS_CUDA_BIN_DIR;
  if (!bin.empty()) add(bin + "/ncu");
  add("/usr/local/cuda/bin/ncu");
  glob_t g{};
  if (::glob("/opt/nvidia/nsight-compute/*/ncu", 0, nullptr, &g) == 0) {
    std::vector<std::string> found(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    std::sort(found.begin(), found.end(),
              [](const std::string& x, const std::string& y) { return ::strverscmp(x.c_str(), y.c_str()) < 0; });
    if (!found.empty()) add(found.back());
  }
  ::globfree(&g);
  add("/opt/nvidia/nsight-compute/*/ncu");  // (named in the error when nothing is there)
  return c;
}

std::string locate_ncu(const std::string& given, const std::string& path_env, const std::vector<std::string>& candidates) {
  if (!given.empty()) {
    if (given.find('/') != std::string::npos) {
      if (is_executable_file(given)) return given;
      throw CliError("--ncu " + given + ": no such executable file");
    }
    const std::string p = search_path(given, path_env);
    if (!p.empty()) return p;
    throw CliError("--ncu " + given + ": not found on PATH");
  }
  const std::string on_path = search_path("ncu", path_env);
  if (!on_path.empty()) return on_path;
  for (const std::string& c : candidates)
    if (c.find('*') == std::string::npos && is_executable_file(c)) return c;
  std::vector<std::string> looked = {"ncu on PATH"};
  looked.insert(looked.end(), candidates.begin(), candidates.end());
  throw CliError("ncu (Nsight Compute) not found: looked for " + join(looked, ", ") +
                 "; install Nsight Compute or give --ncu PATH");
}

int cmd_profile(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  if (a.profile_child) return run_child(a, out, err);
  // Everything that can be checked without ncu or the GPU first.
  const std::vector<VariantInfo> ladder = variants(op_from_name(a.op));
  if (ladder.empty()) throw CliError("the " + a.op + " ladder has no rungs yet (see rungs list)");
  const std::vector<VariantInfo> chosen = select_variants(ladder, a.variants, a.op);
  const std::vector<Case> cases = profile_cases(a);
  ProfilerInfo prof;
  const char* path_env = std::getenv("PATH");
  prof.ncu_path = locate_ncu(a.ncu, path_env != nullptr ? path_env : "", default_ncu_candidates());
  std::unique_ptr<std::ofstream> file;
  if (!a.output.empty()) {
    file = std::make_unique<std::ofstream>(a.output, std::ios::out | std::ios::trunc);
    if (!*file) throw CliError("--output " + a.output + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  prof.ncu_version = ncu_version(prof.ncu_path);
  const std::string self = self_executable(argv0);
  Context ctx = make_context(a, argv0);

  // The rows: rungs that do not do a case's type are left out unless named (then SKIP), as in bench.
  std::vector<std::pair<const Case*, const VariantInfo*>> todo;
  for (const Case& c : cases)
    for (const VariantInfo& v : chosen)
      if (!a.variants.empty() || does_kind(a.op, v, c)) todo.emplace_back(&c, &v);

  std::vector<ProfileRow> rows;
  auto write = [&] {
    const std::string text = a.format == Format::csv    ? format_profile_csv(rows)
                             : a.format == Format::json ? format_profile_json(ctx, prof, rows)
                                                        : format_profile_table(ctx, prof, rows);
    if (!file) {
      out << text;
      out.flush();
      return;
    }
    *file << text;
    file->flush();
    if (!*file) throw CliError("--output " + a.output + ": write failed");
    if (a.format != Format::table) out << format_profile_table(ctx, prof, rows);
    out.flush();
    if (!a.quiet)
      err << "rungs: wrote " << rows.size() << " profile" << (rows.size() == 1 ? "" : "s") << " ("
          << format_name(a.format) << ") to " << a.output << std::endl;
  };
  int device_sm = 0;  // known once a child has run on the GPU
  try {
    for (size_t i = 0; i < todo.size(); ++i) {
      const Case& c = *todo[i].first;
      const VariantInfo& v = *todo[i].second;
      ProfileRow row;
      row.op = a.op;
      row.the_case = c;
      row.variant = v.name;
      row.rung = v.rung;
      if (is_host_rung(v)) {
        row.status = Status::skip;
        row.reason = "runs on the host: no kernel to profile";
      } else if (!does_kind(a.op, v, c)) {
        row.status = Status::skip;
        row.reason = std::string("does not do ") + check::gemm_kind_name(c.kind) + " (it does: " + v.types + ")";
      } else if (device_sm > 0 && v.min_sm > device_sm) {
        row.status = Status::skip;
        row.reason = "needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" + std::to_string(device_sm);
      } else {
        if (!a.quiet)
          err << "[profile " << i + 1 << "/" << todo.size() << "] " << v.name << " " << case_name(a.op, c) << std::endl;
        const ChildRun run = run_under_ncu(prof.ncu_path, self, profile_child_args(a, c, v.name));
        interpret(run, v.name + " (" + a.op + " " + case_name(a.op, c) + ")", row);
        if (!ctx.has_device) {  // a child ran on the GPU: the header's device
          try {
            require_gpu(a.device);
            ctx.device = query_device(a.device, false);
            ctx.has_device = true;
            device_sm = ctx.device.sm;
          } catch (const std::exception&) {
          }
        }
      }
      if (row.status != Status::ok) row.reason = strip_prefix(row.reason, v.name);
      rows.push_back(row);
    }
  } catch (...) {
    if (!rows.empty()) {
      err << "rungs: the run stopped early; the " << rows.size() << " row" << (rows.size() == 1 ? "" : "s")
          << " profiled so far follow" << std::endl;
      write();
    }
    throw;
  }
  write();
  for (const ProfileRow& r : rows)
    if (r.status == Status::fail || r.status == Status::error) return 1;
  return 0;
}

std::vector<std::string> profile_child_args(const Args& a, const Case& c, const std::string& variant) {
  std::vector<std::string> v = {"profile", a.op};
  const Shape& s = c.shape;
  if (a.op == "reduce") {
    v.insert(v.end(), {"--n", std::to_string(s.n), "--dtype", dtype_name(c.dtype)});
  } else if (a.op == "gemv") {
    v.insert(v.end(), {"--m", std::to_string(s.m), "--n", std::to_string(s.n), "--trans", trans_name("gemv", c.trans)});
  } else {
    v.insert(v.end(), {"--m", std::to_string(s.m), "--n", std::to_string(s.n), "--k", std::to_string(s.k), "--trans",
                       trans_name(c.trans), "--dtype", check::gemm_kind_name(c.kind)});
  }
  v.insert(v.end(), {"--alpha=" + fmt_flag_float(a.alpha), "--beta=" + fmt_flag_float(a.beta), "--seed",
                     std::to_string(a.seed)});
  if (a.check_rows >= 0) v.insert(v.end(), {"--check-rows", a.check_rows == 0 ? "all" : std::to_string(a.check_rows)});
  v.insert(v.end(), {"--device", std::to_string(a.device), "--variant", variant, "--quiet", "--profile-child"});
  return v;
}

}  // namespace rungs::cli
