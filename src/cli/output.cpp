// Writers for `rungs` results: aligned text tables, CSV and Google-Benchmark-style JSON.
#include "cli/output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace rungs::cli {

namespace {

std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Three significant digits or so, never an exponent for ordinary magnitudes.
std::string fmt_num(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  if (a >= 10) return printf_str("%.1f", v);
  if (a >= 1) return printf_str("%.2f", v);
  if (a >= 0.01) return printf_str("%.3f", v);
  if (a == 0) return "0";
  return printf_str("%.2g", v);
}

std::string fmt_ratio(double v) {
  if (!std::isfinite(v) || v <= 0) return "-";
  if (v >= 0.01) return printf_str("%.2f", v);
  return printf_str("%.2g", v);
}

std::string status_cell(const Result& r) {
  switch (r.status) {
    case Status::ok: return "pass";
    case Status::fail: return "FAIL";
    case Status::skip: return "SKIP";
    case Status::error: return "ERROR";
  }
  return "?";
}

std::string rung_cell(const Result& r) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%2d ", r.rung);
  return (r.rung >= 0 ? std::string(buf) : std::string()) + r.variant;
}

// The normwise error; NaN/Inf elements (an unwritten C stays NaN) do not enter that sum, so say so.
std::string error_cell(const Result& r) {
  if (!r.checked) return "-";
  if (r.bad > 0) return "non-finite";
  return fmt_sci(r.normwise);
}

// gemm rows name their type/math unless it is plain f32 (the SGEMM ladder).
std::string gemm_kind_suffix(const Result& r) {
  return r.op == "gemm" && r.kind != check::GemmKind::f32 ? std::string(" ") + check::gemm_kind_name(r.kind) : "";
}

std::string type_name(const Result& r) {
  return r.op == "gemm" ? check::gemm_kind_name(r.kind) : dtype_name(r.dtype);
}

std::string shape_cell(const Result& r) {
  if (r.op == "reduce") return std::string(dtype_name(r.dtype)) + " " + shape_name(r.op, r.shape);
  return shape_name(r.op, r.shape) + " " + trans_name(r.op, r.trans) + gemm_kind_suffix(r);
}

std::string rows_cell(const Result& r) {
  if (!r.checked) return "-";
  if (r.op != "gemm" || r.checked_rows >= r.shape.m) return "all";
  return std::to_string(r.checked_rows) + "/" + std::to_string(r.shape.m);
}

struct Col {
  std::string head;
  bool right;  // right-aligned (numbers)
};

class TextTable {
 public:
  explicit TextTable(std::vector<Col> cols) : cols_(std::move(cols)) {}
  void add(std::vector<std::string> cells) {
    cells.resize(cols_.size());
    rows_.push_back(std::move(cells));
  }
  void blank() { rows_.emplace_back(); }
  std::string render(const std::string& indent = "  ") const {
    std::vector<size_t> w(cols_.size());
    for (size_t c = 0; c < cols_.size(); ++c) w[c] = cols_[c].head.size();
    for (const auto& r : rows_)
      for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
    std::ostringstream os;
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = indent;
      for (size_t c = 0; c < cols_.size(); ++c) {
        const std::string& v = cells[c];
        const std::string pad(w[c] - v.size(), ' ');
        s += cols_[c].right ? pad + v : v + pad;
        if (c + 1 < cols_.size()) s += "  ";
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      os << s << "\n";
    };
    std::vector<std::string> head;
    for (const auto& c : cols_) head.push_back(c.head);
    line(head);
    size_t total = 0;
    for (size_t c = 0; c < w.size(); ++c) total += w[c] + (c + 1 < w.size() ? 2 : 0);
    os << indent << std::string(total, '-') << "\n";
    for (const auto& r : rows_) {
      if (r.empty()) {
        os << "\n";
        continue;
      }
      line(r);
    }
    return os.str();
  }

 private:
  std::vector<Col> cols_;
  std::vector<std::vector<std::string>> rows_;
};

std::string device_line(const Context& ctx) {
  if (!ctx.has_device) return "";
  const DeviceInfo& d = ctx.device;
  std::ostringstream os;
  os << d.name << " (sm_" << d.sm << ", " << d.sms << " SMs): fp32 peak " << fmt_num(d.peak_tflops) << " TFLOP/s";
  if (d.dram_read_gbs > 0)
    os << ", DRAM read " << printf_str("%.0f", d.dram_read_gbs) << " GB/s measured (the % DRAM denominator)";
  else if (d.dram_gbs > 0)
    os << ", DRAM " << printf_str("%.0f", d.dram_gbs) << " GB/s measured";
  if (d.launch_us > 0) os << ", empty launch " << printf_str("%.1f", d.launch_us) << " us";
  return os.str();
}

std::string method_line(const Context& ctx, const std::string& op) {
  std::ostringstream os;
  os << "median of " << ctx.reps << " timed repetitions";
  if (!ctx.baseline_of(op).empty()) os << " interleaved with " << ctx.baseline_of(op);
  os << ", " << ctx.warmup << " warm-up run" << (ctx.warmup == 1 ? "" : "s") << ", L2 "
     << (ctx.flush_l2 ? "flushed before each timed launch" : "not flushed (--flush-l2 off)") << ", seed " << ctx.seed;
  return os.str();
}

std::string strip_variant_prefix(const Result& r) {
  const std::string p = r.variant + ": ";
  if (r.reason.compare(0, p.size(), p) == 0) return r.reason.substr(p.size());
  return r.reason;
}

std::string who(const Result& r) {
  std::string s = r.config.empty() ? rung_cell(r) : r.config;
  while (!s.empty() && s[0] == ' ') s.erase(0, 1);
  return s + " at " + shape_cell(r);
}

// Notes below a table: cut repetitions, SKIP/FAIL reasons, sampled rows, too few repetitions.
std::string notes(const Context& ctx, const std::vector<const Result*>& rows, bool timing) {
  std::ostringstream os;
  for (const Result* r : rows) {
    if (r->reps_cut)
      os << "  * " << who(*r) << ": one warm-up run took " << printf_str("%.2f", r->warm_ms / 1000.0)
         << " s, so repetitions were cut to " << r->reps << " (about 10 s)\n";
  }
  for (const Result* r : rows) {
    if (r->status == Status::ok) continue;
    os << "  " << status_cell(*r) << " " << who(*r) << ": " << strip_variant_prefix(*r) << "\n";
  }
  // Which shapes were checked on sampled rows.
  std::map<int64_t, std::vector<std::string>> sampled;  // rows -> shapes
  std::set<std::string> seen;
  bool any_all = false;
  for (const Result* r : rows) {
    if (!r->checked) continue;
    if (r->checked_rows >= r->shape.m) {
      any_all = true;
      continue;
    }
    const std::string s = shape_cell(*r);
    if (seen.insert(std::to_string(r->checked_rows) + s).second) sampled[r->checked_rows].push_back(s);
  }
  const std::string op = rows.empty() ? std::string("gemm") : rows.front()->op;
  if (op == "gemv" && any_all) {
    os << "  error = ||y - yref||_2 / ||yref||_2 against the fp64 reference, all outputs checked\n";
  } else if (op == "reduce" && any_all) {
    os << "  error = |sum - exact| / |exact| against an exact CPU sum: integers must be exact; the accurate float\n"
          "  rungs must be within 1 ulp + 2^-40 sum|x| (f32) / 2^-69 sum|x| (f64), the others within a plain sum's bound\n";
  } else if (any_all || !sampled.empty()) {
    os << "  error = ||C - Cref||_F / ||Cref||_F against the fp64 reference";
    if (sampled.empty()) {
      os << ", all rows checked\n";
    } else {
      os << (any_all ? ", all rows checked except:" : ":") << "\n";
      for (const auto& kv : sampled) {
        os << "    " << kv.first << " random rows checked for";
        for (size_t i = 0; i < kv.second.size(); ++i) os << (i ? ", " : " ") << kv.second[i];
        os << "\n";
      }
    }
  }
  // x <baseline> divides by the baseline launches interleaved with the rung; where those ran more
  // than 3 % away from the baseline's own row (seen at 8192^3: cuBLAS up to 5 % slower
  // interleaved), say so and give the ratio against the row too.
  for (const Result* r : rows) {
    if (!r->timed || r->is_baseline || r->baseline.empty() || r->baseline_median_ms <= 0 || r->median_ms <= 0 ||
        ctx.baseline_of(r->op).empty())
      continue;
    for (const Result* b : rows) {
      if (!b->timed || !b->is_baseline || b->variant != r->baseline || b->op != r->op || !(b->shape == r->shape) ||
          !(b->trans == r->trans) || b->kind != r->kind || b->dtype != r->dtype || b->median_ms <= 0)
        continue;
      const double off = r->baseline_median_ms / b->median_ms - 1.0;
      if (std::fabs(off) > 0.03)
        os << "  * x " << r->baseline << " for " << who(*r) << ": the " << r->baseline
           << " launches interleaved with it took " << fmt_num(r->baseline_median_ms) << " ms (median), "
           << printf_str("%.1f", 100.0 * std::fabs(off)) << " % " << (off > 0 ? "slower" : "faster") << " than the "
           << r->baseline << " row's " << fmt_num(b->median_ms) << "; against the row: "
           << fmt_ratio(b->median_ms / r->median_ms) << "x\n";
      break;
    }
  }
  // gemm rows below the ridge point: what their GB/s and % DRAM are, and where the ridge is per type.
  std::map<std::string, double> ridges;  // type -> ridge point, flop/byte
  for (const Result* r : rows)
    if (r->op == "gemm" && r->timed && r->memory_bound) ridges.emplace(type_name(*r), r->ridge);
  if (!ridges.empty()) {
    os << "  GB/s and % DRAM are shown for the memory-bound rows: those whose arithmetic intensity 2mnk / bytes\n"
          "  is below the ridge point = the type's peak / the DRAM read bandwidth (";
    bool first = true;
    for (const auto& kv : ridges) {
      os << (first ? "" : ", ") << kv.first << " " << printf_str("%.0f", kv.second);
      first = false;
    }
    os << " flop/byte);\n  GB/s = (A + B + C bytes, C twice when beta != 0) / median; % DRAM of the "
       << printf_str("%.0f", ctx.device.dram_read_gbs) << " GB/s DRAM read measured\n";
  }
  for (const Result* r : rows)
    if (r->op == "gemm" && r->kind == check::GemmKind::tf32x3 && r->variant == "cublas") {
      os << "  tf32x3 rows: cublas is cublasSgemm in true fp32 (cuBLAS has no 3xTF32 mode): the accuracy\n"
            "  tf32x3 must match and the speed it must beat\n";
      break;
    }
  if (timing && ctx.reps < kMinReportedReps)
    os << "  note: " << ctx.reps << " timed repetitions (--reps " << ctx.reps << ") is below " << kMinReportedReps
       << ", the project's minimum for reported numbers: a quick look only\n";
  return os.str();
}

bool bandwidth_op(const std::string& op) { return op == "gemv" || op == "reduce"; }

// Which rate columns a table of `op` has: gemv and reduce GB/s and % DRAM; gemm TFLOP/s and % peak,
// then GB/s and % DRAM too when one of its rows is memory-bound (filled for those rows only).
struct RateCols {
  bool flops, bytes;
};
RateCols rate_cols(const std::string& op, const std::vector<const Result*>& rows) {
  if (bandwidth_op(op)) return {false, true};
  bool any = false;
  for (const Result* r : rows) any = any || (r->timed && r->memory_bound);
  return {true, any};
}

std::vector<Col> timing_cols(const Context& ctx, const std::string& first_head, const std::string& op, RateCols rc) {
  std::vector<Col> cols = {{first_head, false}, {"shape", false}, {"median ms", true}, {"min ms", true},
                           {"max ms", true},    {"reps", true}};
  if (rc.flops) {
    cols.push_back({"TFLOP/s", true});
    cols.push_back({"% peak", true});
  }
  if (rc.bytes) {
    cols.push_back({"GB/s", true});
    cols.push_back({"% DRAM", true});
  }
  if (!ctx.baseline_of(op).empty()) cols.push_back({"x " + ctx.baseline_of(op), true});
  cols.push_back({"error", true});
  cols.push_back({"check", false});
  return cols;
}

std::vector<std::string> timing_cells(const Context& ctx, const Result& r, const std::string& first, RateCols rc) {
  std::vector<std::string> c = {first, shape_cell(r)};
  if (r.timed) {
    c.push_back(fmt_ms(r.median_ms));
    c.push_back(fmt_ms(r.min_ms));
    c.push_back(fmt_ms(r.max_ms));
    c.push_back(std::to_string(r.reps) + (r.reps_cut ? "*" : ""));
    if (rc.flops) {
      c.push_back(fmt_num(r.tflops));
      c.push_back(fmt_num(r.pct_peak));
    }
    if (rc.bytes) {
      c.push_back(r.shows_bandwidth() ? fmt_num(r.gbs) : "-");
      c.push_back(r.shows_bandwidth() ? fmt_num(r.pct_dram) : "-");
    }
    if (!ctx.baseline_of(r.op).empty()) c.push_back(r.baseline.empty() ? "-" : fmt_ratio(r.speedup));
  } else {
    const int rates = 2 * (static_cast<int>(rc.flops) + static_cast<int>(rc.bytes));
    for (int i = 0; i < 4 + rates + (ctx.baseline_of(r.op).empty() ? 0 : 1); ++i) c.push_back("-");
  }
  c.push_back(error_cell(r));
  c.push_back(status_cell(r));
  return c;
}

std::vector<std::string> ops_in_order(const std::vector<Result>& rows) {
  std::vector<std::string> ops;
  for (const auto& r : rows)
    if (std::find(ops.begin(), ops.end(), r.op) == ops.end()) ops.push_back(r.op);
  return ops;
}

bool same_shape(const Result& a, const Result& b) {
  return a.shape == b.shape && a.trans == b.trans && a.dtype == b.dtype && a.kind == b.kind;
}

std::string op_title(const std::string& op, const Context& ctx) {
  std::ostringstream os;
  if (op == "gemm")
    os << "gemm: SGEMM fp32, row-major, C = alpha*op(A)*op(B) + beta*C, alpha " << printf_str("%g", ctx.alpha)
       << ", beta " << printf_str("%g", ctx.beta);
  else if (op == "gemv")
    os << "gemv: SGEMV fp32, row-major A (m x n), y = alpha*op(A)*x + beta*y, alpha " << printf_str("%g", ctx.alpha)
       << ", beta " << printf_str("%g", ctx.beta) << "; GB/s = (A + x + y bytes) / median";
  else if (op == "reduce")
    os << "reduce: reduce_sum, *out = sum of n elements (i32 -> i64, i64, f32, f64); GB/s = input bytes / median";
  else
    os << op;
  return os.str();
}

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string jstr(const std::string& s) { return "\"" + json_escape(s) + "\""; }
std::string jint(int64_t v) { return std::to_string(v); }
std::string jbool(bool b) { return b ? "true" : "false"; }

std::string render_object(const Fields& f, const std::string& indent) {
  std::ostringstream os;
  os << "{\n";
  for (size_t i = 0; i < f.size(); ++i)
    os << indent << "  " << jstr(f[i].first) << ": " << f[i].second << (i + 1 < f.size() ? "," : "") << "\n";
  os << indent << "}";
  return os.str();
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::fail: return "fail";
    case Status::skip: return "skip";
    case Status::error: return "error";
  }
  return "?";
}

std::string fmt_ms(double ms) {
  if (!std::isfinite(ms)) return "-";
  if (ms >= 1000) return printf_str("%.1f", ms);
  if (ms >= 100) return printf_str("%.2f", ms);
  if (ms >= 1) return printf_str("%.3f", ms);
  return printf_str("%.4f", ms);
}

std::string fmt_sci(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  return printf_str("%.2e", v);
}

std::string benchmark_name(const Result& r) {
  std::string s = r.op + "/" + r.variant;
  if (!r.config.empty()) s += "/" + r.config;
  if (r.op == "reduce") return s + "/" + dtype_name(r.dtype) + "/" + shape_name(r.op, r.shape);
  const std::string kind = r.op == "gemm" && r.kind != check::GemmKind::f32 ? std::string("/") + check::gemm_kind_name(r.kind) : "";
  return s + "/" + shape_name(r.op, r.shape) + "/" + trans_name(r.op, r.trans) + kind +
         (r.epilogue.empty() ? "" : "/" + r.epilogue);
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return printf_str("%.9g", v);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string format_bench_table(const Context& ctx, const std::vector<Result>& rows) {
  std::ostringstream os;
  bool first_op = true;
  for (const std::string& op : ops_in_order(rows)) {
    if (!first_op) os << "\n";
    first_op = false;
    os << op_title(op, ctx) << "\n";
    const std::string dev = device_line(ctx);
    if (!dev.empty()) os << dev << "\n";
    os << method_line(ctx, op) << "\n\n";
    std::vector<const Result*> mine;
    for (const auto& r : rows)
      if (r.op == op) mine.push_back(&r);
    const RateCols rc = rate_cols(op, mine);
    TextTable t(timing_cols(ctx, "rung", op, rc));
    for (size_t i = 0; i < mine.size(); ++i) {
      if (i > 0 && !same_shape(*mine[i - 1], *mine[i])) t.blank();
      t.add(timing_cells(ctx, *mine[i], rung_cell(*mine[i]), rc));
    }
    os << t.render();
    const std::string n = notes(ctx, mine, true);
    if (!n.empty()) os << "\n" << n;
  }
  return os.str();
}

std::string format_verify_table(const Context& ctx, const std::vector<Result>& rows) {
  std::ostringstream os;
  bool first_op = true;
  for (const std::string& op : ops_in_order(rows)) {
    if (!first_op) os << "\n";
    first_op = false;
    os << op_title(op, ctx) << ", seed " << ctx.seed << "\n";
    const std::string dev = device_line(ctx);
    if (!dev.empty()) os << dev << "\n";
    os << "\n";
    TextTable t({{"rung", false},
                 {"shape", false},
                 {"rows", true},
                 {"max rel err", true},
                 {"normwise", true},
                 {"tolerance", true},
                 {"bound ratio", true},
                 {"check", false}});
    std::vector<const Result*> mine;
    int pass = 0, fail = 0, skip = 0;
    for (const auto& r : rows) {
      if (r.op != op) continue;
      if (!mine.empty() && !same_shape(*mine.back(), r)) t.blank();
      mine.push_back(&r);
      (r.status == Status::ok ? pass : r.status == Status::skip ? skip : fail)++;
      if (r.checked)
        t.add({rung_cell(r), shape_cell(r), rows_cell(r), r.bad > 0 ? "non-finite" : fmt_sci(r.max_rel), error_cell(r),
               fmt_sci(r.normwise_tol), fmt_num(r.bound_ratio), status_cell(r)});
      else
        t.add({rung_cell(r), shape_cell(r), "-", "-", "-", "-", "-", status_cell(r)});
    }
    os << t.render();
    const std::string n = notes(ctx, mine, false);
    os << "\n" << n;
    os << "  " << pass << " passed, " << fail << " failed, " << skip << " skipped"
       << (op == "reduce" ? "; bound ratio = |sum - exact| / tolerance, <= 1 passes\n"
                          : "; bound ratio = max |c - ref| / ((k+2) u |alpha| |A||B| + ...), <= 1 is inside the "
                            "rigorous bound\n");
  }
  return os.str();
}

std::string format_tune_table(const Context& ctx, const std::vector<Result>& rows) {
  std::ostringstream os;
  const std::string dev = device_line(ctx);
  os << "tune gemm: warptile configurations";
  if (!dev.empty()) os << " on " << dev;
  os << "\n" << method_line(ctx, "gemm") << "\n";
  std::vector<const Result*> best;
  size_t i = 0;
  while (i < rows.size()) {
    size_t j = i;
    while (j < rows.size() && same_shape(rows[i], rows[j])) ++j;
    os << "\n" << shape_cell(rows[i]) << "\n";
    std::vector<const Result*> mine;
    for (size_t r = i; r < j; ++r) mine.push_back(&rows[r]);
    const RateCols rc = rate_cols("gemm", mine);
    TextTable t(timing_cols(ctx, "config", "gemm", rc));
    const Result* fastest = nullptr;
    for (size_t r = i; r < j; ++r) {
      char num[16];
      std::snprintf(num, sizeof num, "%2d ", rows[r].rung);
      t.add(timing_cells(ctx, rows[r], num + rows[r].config + (rows[r].fastest ? " *" : ""), rc));
      if (rows[r].fastest) fastest = &rows[r];
    }
    os << t.render();
    const std::string n = notes(ctx, mine, true);
    if (!n.empty()) os << "\n" << n;
    best.push_back(fastest);
    if (fastest == nullptr) best.back() = &rows[i];  // a placeholder: printed as "none"
    i = j;
  }
  if (!best.empty()) {
    os << "\nfastest passing configuration per shape (* above):\n";
    TextTable t({{"shape", false}, {"config", false}, {"median ms", true}, {"TFLOP/s", true}, {"x " + (ctx.baseline.empty() ? std::string("baseline") : ctx.baseline), true}});
    for (const Result* r : best) {
      if (!r->fastest)
        t.add({shape_cell(*r), "none passed", "-", "-", "-"});
      else
        t.add({shape_cell(*r), r->config, fmt_ms(r->median_ms), fmt_num(r->tflops),
               r->baseline.empty() ? "-" : fmt_ratio(r->speedup)});
    }
    os << t.render();
  }
  return os.str();
}

std::vector<std::string> csv_columns() {
  return {"name",          "op",        "rung",          "variant",        "config",
          "m",             "n",         "k",             "trans",          "alpha",
          "beta",          "status",    "pass",          "reps",           "reps_requested",
          "reps_cut",      "warmup",    "median_ms",     "min_ms",         "max_ms",
          "tflops",        "pct_peak",  "baseline",      "baseline_median_ms", "speedup_vs_baseline",
          "checked_rows",  "max_rel",   "error_normwise", "normwise_tolerance", "bound_ratio",
          "fastest",       "reason",    "dtype",         "bytes",          "gbs",
          "pct_dram",      "arithmetic_intensity",      "memory_bound",   "workload",       "scaling",
          "epilogue"};
}

std::string format_csv(const std::vector<Result>& rows) {
  std::ostringstream os;
  const std::vector<std::string> cols = csv_columns();
  for (size_t i = 0; i < cols.size(); ++i) os << (i ? "," : "") << cols[i];
  os << "\n";
  for (const Result& r : rows) {
    auto num = [](double v) { return std::isfinite(v) ? printf_str("%.9g", v) : std::string(); };
    const bool t = r.timed, c = r.checked;
    const std::vector<std::string> cells = {
        benchmark_name(r),
        r.op,
        r.rung >= 0 ? std::to_string(r.rung) : "",
        r.variant,
        r.config,
        std::to_string(r.shape.m),
        std::to_string(r.shape.n),
        std::to_string(r.shape.k),
        trans_name(r.op, r.trans),
        num(r.alpha),
        num(r.beta),
        status_name(r.status),
        r.status == Status::ok ? "true" : "false",
        t ? std::to_string(r.reps) : "",
        t ? std::to_string(r.reps_requested) : "",
        t ? (r.reps_cut ? "true" : "false") : "",
        t ? std::to_string(r.warmup) : "",
        t ? num(r.median_ms) : "",
        t ? num(r.min_ms) : "",
        t ? num(r.max_ms) : "",
        t ? num(r.tflops) : "",
        t ? num(r.pct_peak) : "",
        r.baseline,
        t && !r.baseline.empty() ? num(r.baseline_median_ms) : "",
        t && !r.baseline.empty() ? num(r.speedup) : "",
        c ? std::to_string(r.checked_rows) : "",
        c ? num(r.max_rel) : "",
        c ? num(r.normwise) : "",
        c ? num(r.normwise_tol) : "",
        c ? num(r.bound_ratio) : "",
        r.fastest ? "true" : "false",
        r.reason,
        type_name(r),
        t && r.bytes > 0 ? num(r.bytes) : "",
        t && r.bytes > 0 ? num(r.gbs) : "",
        t && r.bytes > 0 ? num(r.pct_dram) : "",
        t && r.op == "gemm" && r.bytes > 0 ? num(r.intensity) : "",
        t && r.op == "gemm" && r.bytes > 0 ? (r.memory_bound ? "true" : "false") : "",
        r.workload,
        r.scaling,
        r.epilogue,
    };
    for (size_t i = 0; i < cells.size(); ++i) os << (i ? "," : "") << csv_field(cells[i]);
    os << "\n";
  }
  return os.str();
}

std::string format_json_context(const Context& ctx, const std::string& indent) {
  const DeviceInfo& d = ctx.device;
  Fields c = {{"date", jstr(ctx.date)},
              {"host_name", jstr(ctx.host_name)},
              {"executable", jstr(ctx.executable)},
              {"command_line", jstr(ctx.command_line)},
              {"num_cpus", jint(ctx.num_cpus)},
              {"library_build_type", jstr(ctx.build_type)},
              {"rungs_version", jstr(ctx.rungs_version)},
              {"git_commit", jstr(ctx.git_commit)},
              {"command", jstr(ctx.command)}};
  if (ctx.has_device) {
    Fields dev = {{"device", jstr(d.name)},
                  {"device_index", jint(d.index)},
                  {"sm", jint(d.sm)},
                  {"sms", jint(d.sms)},
                  {"sm_clock_mhz", json_number(d.sm_clock_mhz)},
                  {"fp32_lanes_per_sm", jint(d.fp32_lanes)},
                  {"peak_tflops", json_number(d.peak_tflops)},
                  {"dram_gbs", d.dram_gbs > 0 ? json_number(d.dram_gbs) : std::string("null")},  // null: not measured (verify)
                  {"dram_gbs_theoretical", json_number(d.dram_gbs_theory)},
                  {"dram_read_gbs", d.dram_read_gbs > 0 ? json_number(d.dram_read_gbs) : std::string("null")},
                  {"empty_launch_us", d.launch_us > 0 ? json_number(d.launch_us) : std::string("null")},
                  {"l2_bytes", jint(d.l2_bytes)},
                  {"memory_bytes", jint(d.total_mem)},
                  {"cuda_runtime", jstr(d.cuda_runtime)},
                  {"cuda_driver", jstr(d.cuda_driver)},
                  {"cublas", jstr(d.cublas)}};
    c.insert(c.end(), dev.begin(), dev.end());
  }
  Fields method = {{"reps", jint(ctx.reps)},
                   {"warmup", jint(ctx.warmup)},
                   {"flush_l2", jbool(ctx.flush_l2)},
                   {"baseline", jstr(ctx.baseline.empty() ? "none" : ctx.baseline)},
                   {"seed", jint(static_cast<int64_t>(ctx.seed))},
                   {"alpha", json_number(ctx.alpha)},
                   {"beta", json_number(ctx.beta)},
                   {"timing", jstr(!ctx.timing.empty() ? ctx.timing
                                                       : "median of interleaved (flush L2, event, rung, event, flush "
                                                         "L2, event, baseline, event) x reps; cudaEventElapsedTime")}};
  // verify and profile time nothing: of the method, only the data's seed, alpha and beta.
  if (ctx.command != "verify" && ctx.command != "profile") c.insert(c.end(), method.begin(), method.end());
  else c.insert(c.end(), method.begin() + 4, method.end() - 1);

  return render_object(c, indent);
}

std::string format_json(const Context& ctx, const std::vector<Result>& rows) {
  std::ostringstream os;
  os << "{\n  \"context\": " << format_json_context(ctx, "  ") << ",\n  \"benchmarks\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Result& r = rows[i];
    const std::string name = benchmark_name(r);
    Fields b = {{"name", jstr(name)},
                {"run_name", jstr(name)},
                {"run_type", jstr("iteration")},
                {"family_index", jint(r.rung)},
                {"op", jstr(r.op)},
                {"rung", jint(r.rung)},
                {"variant", jstr(r.variant)}};
    if (!r.config.empty()) b.push_back({"config", jstr(r.config)});
    Fields shape = {{"m", jint(r.shape.m)},          {"n", jint(r.shape.n)},
                    {"k", jint(r.shape.k)},          {"trans", jstr(trans_name(r.op, r.trans))},
                    {"dtype", jstr(type_name(r))},
                    {"alpha", json_number(r.alpha)}, {"beta", json_number(r.beta)},
                    {"baseline_rung", jbool(r.is_baseline)}};
    b.insert(b.end(), shape.begin(), shape.end());
    if (!r.workload.empty()) b.push_back({"workload", jstr(r.workload)});
    if (!r.scaling.empty()) b.push_back({"scaling", jstr(r.scaling)});
    if (!r.epilogue.empty()) b.push_back({"epilogue", jstr(r.epilogue)});
    if (r.timed) {
      Fields t = {{"repetitions", jint(r.reps)},
                  {"repetitions_requested", jint(r.reps_requested)},
                  {"reps_cut", jbool(r.reps_cut)},
                  {"warmup", jint(r.warmup)},
                  {"threads", jint(1)},
                  {"iterations", jint(r.reps)},
                  {"real_time", json_number(r.median_ms)},
                  {"cpu_time", json_number(r.median_ms)},
                  {"time_unit", jstr("ms")},
                  {"min", json_number(r.min_ms)},
                  {"max", json_number(r.max_ms)},
                  {"tflops", json_number(r.tflops)},
                  {"pct_peak", json_number(r.pct_peak)}};
      b.insert(b.end(), t.begin(), t.end());
      if (r.bytes > 0) {
        b.push_back({"bytes", json_number(r.bytes)});
        b.push_back({"bytes_per_second", json_number(r.gbs * 1e9)});
        b.push_back({"pct_dram", json_number(r.pct_dram)});
      }
      if (r.op == "gemm" && r.bytes > 0) {
        b.push_back({"arithmetic_intensity", json_number(r.intensity)});
        b.push_back({"ridge_point", r.ridge > 0 ? json_number(r.ridge) : std::string("null")});
        b.push_back({"memory_bound", jbool(r.memory_bound)});
      }
      if (!r.baseline.empty()) {
        b.push_back({"baseline", jstr(r.baseline)});
        b.push_back({"baseline_real_time", json_number(r.baseline_median_ms)});
        b.push_back({"speedup_vs_baseline", json_number(r.speedup)});
      }
    }
    if (r.checked) {
      Fields e = {{"checked_rows", jint(r.checked_rows)},
                  {"error_max_rel", json_number(r.max_rel)},
                  {"error_normwise", json_number(r.normwise)},
                  {"normwise_tolerance", json_number(r.normwise_tol)},
                  {"bound_ratio", json_number(r.bound_ratio)}};
      b.insert(b.end(), e.begin(), e.end());
    }
    b.push_back({"pass", jbool(r.status == Status::ok)});
    b.push_back({"status", jstr(status_name(r.status))});
    if (!r.config.empty()) b.push_back({"fastest", jbool(r.fastest)});
    if (!r.reason.empty()) b.push_back({"reason", jstr(r.reason)});
    if (r.status == Status::skip || r.status == Status::error) {
      b.push_back({"error_occurred", jbool(true)});
      b.push_back({"error_message", jstr(r.reason)});
    }
    os << (i ? "," : "") << "\n    " << render_object(b, "    ");
  }
  os << (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return os.str();
}

std::string format_results(Format f, const Context& ctx, const std::vector<Result>& rows) {
  if (f == Format::csv) return format_csv(rows);
  if (f == Format::json) return format_json(ctx, rows);
  if (ctx.command == "verify") return format_verify_table(ctx, rows);
  if (ctx.command == "tune") return format_tune_table(ctx, rows);
  return format_bench_table(ctx, rows);
}

std::string format_info(const DeviceInfo& d) {
  std::ostringstream os;
  auto row = [&](const char* k, const std::string& v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-16s", k);
    os << buf << v << "\n";
  };
  const double gib = 1024.0 * 1024.0 * 1024.0;
  row("device", std::to_string(d.index) + ": " + d.name);
  row("compute", "sm_" + std::to_string(d.sm) + ", " + std::to_string(d.sms) + " SMs");
  row("SM clock", printf_str("%.0f MHz (max)", d.sm_clock_mhz));
  std::string mem = printf_str("%.1f GiB", d.total_mem / gib) + printf_str(" (%.1f GiB free)", d.free_mem / gib);
  if (d.mem_clock_mhz > 0)
    mem += printf_str(", %.0f MHz", d.mem_clock_mhz) + " x " + std::to_string(d.bus_width_bits) + "-bit bus";
  row("memory", mem);
  row("L2 cache", printf_str("%.1f MiB", d.l2_bytes / (1024.0 * 1024.0)) + " (the L2 flush clears 2x this)");
  row("fp32 peak", fmt_num(d.peak_tflops) + " TFLOP/s = " + std::to_string(d.sms) + " SMs x " +
                       std::to_string(d.fp32_lanes) + " fp32 lanes x 2 flop/FMA x " +
                       printf_str("%.3f GHz", d.sm_clock_mhz / 1000.0) + " (assumed for \"% peak\")");
  std::string bw = printf_str("%.0f GB/s measured", d.dram_gbs) +
                   " (device-to-device cudaMemcpyAsync, median, bytes read + written)";
  if (d.dram_gbs_theory > 0) bw += printf_str("; %.0f GB/s theoretical", d.dram_gbs_theory);
  row("DRAM bandwidth", bw);
  if (d.dram_read_gbs > 0)
    row("DRAM read", printf_str("%.0f GB/s measured", d.dram_read_gbs) +
                         " (a streaming-read kernel, median; bench's \"% DRAM\" denominator)");
  if (d.launch_us > 0)
    row("empty launch", printf_str("%.2f us", d.launch_us) + " (an empty kernel between two events, median)");
  row("CUDA runtime", d.cuda_runtime);
  row("CUDA driver", d.cuda_driver);
  row("cuBLAS", d.cublas);
  return os.str();
}

std::string format_list(const std::vector<std::pair<std::string, std::vector<VariantInfo>>>& ladders) {
  std::ostringstream os;
  bool first = true;
  for (const auto& [op, rungs] : ladders) {
    if (!first) os << "\n";
    first = false;
    if (rungs.empty()) {
      os << op << ": (none yet)\n";
      continue;
    }
    os << op << " (" << rungs.size() << " rungs):\n";
    TextTable t({{"#", true}, {"name", false}, {"min_sm", false}, {"baseline", false}, {"builds on", false},
                 {"summary", false}});
    for (const auto& v : rungs)
      t.add({std::to_string(v.rung), v.name, v.min_sm == 0 ? "0 (host)" : std::to_string(v.min_sm),
             v.baseline ? "yes" : "-", v.parent.empty() ? "-" : v.parent, v.summary});
    os << t.render();
    // The tensor-core skeleton's rungs, by their parts (docs/gemm_tc.md, "The skeleton").
    bool heading = false;
    for (const auto& v : rungs) {
      if (v.parts.size() != 4) continue;
      if (!heading) os << "\n" << op << " on the tensor-core skeleton: Schedule, Mainloop, Epilogue, Accumulation\n";
      heading = true;
      os << "  " << v.name << " (" << v.rung << "): " << v.parts[0] << ", " << v.parts[1] << ", " << v.parts[2] << ", "
         << v.parts[3] << "\n";
    }
  }
  return os.str();
}

}  // namespace rungs::cli
