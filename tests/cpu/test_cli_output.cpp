// The `rungs` writers on fake results: table columns, CSV shape, JSON structure and keys;
// and the pure pieces of the device and timing modules.
#include "cli/commands.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/timing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace rungs::cli {
namespace {

// A strict JSON syntax check (RFC 8259 grammar), collecting every object key it meets.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }
  std::multiset<std::string> keys;

 private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool lit(const char* w) {
    const std::string t(w);
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  bool str(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    std::string v;
    while (i_ < s_.size() && s_[i_] != '"') {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size() || std::string("\"\\/bfnrtu").find(s_[i_]) == std::string::npos) return false;
        if (s_[i_] == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return false;
          i_ += 4;
        }
      }
      v += s_[i_++];
    }
    if (i_ >= s_.size()) return false;
    ++i_;
    if (out) *out = v;
    return true;
  }
  bool number() {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    if (s_[i_] == '0') ++i_;
    else while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    return i_ > start;
  }
  bool value() {
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        ws();
        std::string k;
        if (!str(&k)) return false;
        keys.insert(k);
        ws();
        if (i_ >= s_.size() || s_[i_++] != ':') return false;
        if (!value()) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
        return false;
      }
    }
    if (c == '[') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        if (!value()) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == '"') return str(nullptr);
    if (lit("true") || lit("false") || lit("null")) return true;
    return number();
  }
  const std::string s_;
  size_t i_ = 0;
};

Context fake_context(const std::string& command = "bench") {
  Context c;
  c.command = command;
  c.date = "2025-01-02T03:04:05+00:00";
  c.host_name = "host \"one\"";
  c.executable = "./build/rungs";
  c.command_line = "rungs bench";
  c.num_cpus = 16;
  c.git_commit = "abc1234";
  c.build_type = "release";
  c.rungs_version = "0.1.0";
  c.has_device = true;
  c.device.name = "NVIDIA H100 80GB HBM3";
  c.device.sm = 90;
  c.device.sms = 132;
  c.device.sm_clock_mhz = 1980;
  c.device.fp32_lanes = 128;
  c.device.peak_tflops = 66.9;
  c.device.dram_gbs = 2950;
  c.device.l2_bytes = 50 << 20;
  c.device.cuda_runtime = "13.0";
  c.device.cuda_driver = "13.0";
  c.device.cublas = "13.0.0";
  c.baseline = "cublas";
  return c;
}

Result timed(const std::string& name, int rung, Shape s, double ms, double base_ms) {
  Result r;
  r.variant = name;
  r.rung = rung;
  r.shape = s;
  r.checked = true;
  r.checked_rows = s.m;
  r.normwise = 1.5e-7;
  r.max_rel = 2e-5;
  r.normwise_tol = 1e-6;
  r.bound_ratio = 0.02;
  r.timed = true;
  r.reps = r.reps_requested = 20;
  r.warmup = 3;
  r.median_ms = ms;
  r.min_ms = ms * 0.9;
  r.max_ms = ms * 1.2;
  r.tflops = r.flops() / (ms * 1e-3) / 1e12;
  r.pct_peak = 100 * r.tflops / 66.9;
  r.baseline = "cublas";
  r.baseline_median_ms = base_ms;
  r.speedup = base_ms / ms;
  return r;
}

std::vector<Result> fake_results() {
  const Shape big{4096, 4096, 4096}, small{1024, 1024, 1024};
  std::vector<Result> rows;
  Result slow = timed("cpu_naive", 0, small, 2500, 0.2);
  slow.reps = 3;
  slow.reps_cut = true;
  slow.warm_ms = 2480;
  slow.warmup = 1;
  rows.push_back(slow);
  rows.push_back(timed("warptile", 9, small, 0.05, 0.045));
  Result base = timed("cublas", 11, small, 0.045, 0.045);
  base.is_baseline = true;
  base.speedup = 1.0;
  rows.push_back(base);
  Result skip;
  skip.variant = "cpu_naive";
  skip.rung = 0;
  skip.shape = big;
  skip.status = Status::skip;
  skip.reason = "the serial CPU loop is limited to m*n*k <= 2^31";
  rows.push_back(skip);
  Result w = timed("warptile", 9, big, 2.5, 2.2);
  w.checked_rows = 256;
  rows.push_back(w);
  Result bad = timed("kahan", 10, big, 3.0, 2.2);
  bad.checked_rows = 256;
  bad.status = Status::fail;
  bad.reason = "normwise error 1e-3 > tolerance 1e-6, \"quoted\"";
  bad.normwise = std::numeric_limits<double>::quiet_NaN();
  rows.push_back(bad);
  return rows;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Splits one CSV line, honouring quotes.
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool q = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (q) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') q = false;
      else out.back() += c;
    } else if (c == '"') {
      q = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TEST(CliOutput, BenchTableHasEveryColumnAndNote) {
  const std::string t = format_bench_table(fake_context(), fake_results());
  std::istringstream is(t);
  std::string line, header;
  while (std::getline(is, line))
    if (line.find("median ms") != std::string::npos) header = line;
  ASSERT_FALSE(header.empty()) << t;
  const std::vector<std::string> cols = {"rung",  "shape",   "median ms", "min ms", "max ms", "reps",
                                         "TFLOP/s", "% peak", "x cublas",  "error",  "check"};
  size_t pos = 0;
  for (const auto& c : cols) {
    const size_t p = header.find(c, pos);
    ASSERT_NE(p, std::string::npos) << "column " << c << " missing or out of order in: " << header;
    pos = p + c.size();
  }
  EXPECT_NE(t.find(" 9 warptile"), std::string::npos);
  EXPECT_NE(t.find("4096x4096x4096 nn"), std::string::npos);
  EXPECT_NE(t.find("3*"), std::string::npos) << "cut repetitions are marked";
  EXPECT_NE(t.find("cut to 3"), std::string::npos);
  EXPECT_NE(t.find("SKIP"), std::string::npos);
  EXPECT_NE(t.find("limited to m*n*k <= 2^31"), std::string::npos) << "SKIP prints its reason";
  EXPECT_NE(t.find("FAIL"), std::string::npos);
  EXPECT_NE(t.find("256 random rows"), std::string::npos) << "sampled rows are said";
  EXPECT_NE(t.find("0.90"), std::string::npos) << "baseline median 0.045 / rung median 0.05";
  EXPECT_NE(t.find("1.00"), std::string::npos) << "the baseline's own ratio";
  EXPECT_NE(t.find("NVIDIA H100"), std::string::npos);
  EXPECT_EQ(t.find("below 20"), std::string::npos) << "no quick-look note at 20 reps";
  Context quick = fake_context();
  quick.reps = 5;
  EXPECT_NE(format_bench_table(quick, fake_results()).find("below 20"), std::string::npos);
  Context nobase = fake_context();
  nobase.baseline.clear();
  EXPECT_EQ(format_bench_table(nobase, fake_results()).find("x cublas"), std::string::npos);
}

// x cublas is against the cuBLAS launches interleaved with the rung; when those drift more than
// 3 % from cuBLAS's own row (as at 8192^3 on the H100), the table says so and gives both ratios.
TEST(CliOutput, InterleavedBaselineDriftIsNoted) {
  const Shape big{8192, 8192, 8192};
  std::vector<Result> rows;
  Result base = timed("cublas", 11, big, 1.437, 1.437);
  base.is_baseline = true;
  base.speedup = 1.0;
  rows.push_back(base);
  rows.push_back(timed("wgmma_tma_store", 17, big, 1.468, 1.509));  // interleaved cuBLAS 5 % slower
  rows.push_back(timed("wgmma_streamk", 19, big, 1.45, 1.45));      // within 3 %: no note
  const std::string t = format_bench_table(fake_context(), rows);
  EXPECT_NE(t.find("1.03"), std::string::npos) << "x cublas stays the interleaved ratio: " << t;
  EXPECT_EQ(count(t, "launches interleaved with it"), 1u) << t;
  EXPECT_NE(t.find("17 wgmma_tma_store at 8192x8192x8192 nn"), std::string::npos) << t;
  EXPECT_NE(t.find("5.0 % slower than the cublas row's 1.44; against the row: 0.98x"), std::string::npos) << t;
}

TEST(CliOutput, OneTablePerOperation) {
  std::vector<Result> rows = fake_results();
  Result other = rows[1];
  other.op = "gemv";
  rows.push_back(other);
  const std::string t = format_bench_table(fake_context(), rows);
  EXPECT_EQ(count(t, "median ms"), 2u);
  EXPECT_NE(t.find("\ngemv"), std::string::npos);
}

TEST(CliOutput, VerifyTable) {
  const std::string t = format_verify_table(fake_context("verify"), fake_results());
  for (const char* c : {"rung", "shape", "rows", "max rel err", "normwise", "tolerance", "bound ratio", "check"})
    EXPECT_NE(t.find(c), std::string::npos) << c;
  EXPECT_NE(t.find("256/4096"), std::string::npos);
  EXPECT_NE(t.find("all"), std::string::npos);
  EXPECT_NE(t.find("4 passed, 1 failed, 1 skipped"), std::string::npos) << t;
}

TEST(CliOutput, TuneTableMarksTheFastest) {
  std::vector<Result> rows;
  for (int i = 0; i < 3; ++i) {
    Result r = timed("warptile", i, {2048, 2048, 2048}, 1.0 + i, 1.1);
    r.config = "cfg" + std::to_string(i);
    r.fastest = i == 0;
    rows.push_back(r);
  }
  const std::string t = format_tune_table(fake_context("tune"), rows);
  EXPECT_NE(t.find("cfg0 *"), std::string::npos) << t;
  EXPECT_EQ(t.find("cfg1 *"), std::string::npos);
  EXPECT_NE(t.find("fastest passing configuration per shape"), std::string::npos);
  EXPECT_EQ(benchmark_name(rows[0]), "gemm/warptile/cfg0/2048x2048x2048/nn");
}

TEST(CliOutput, CsvOneRowPerMeasurementWithHeader) {
  const std::vector<Result> rows = fake_results();
  const std::string csv = format_csv(rows);
  std::istringstream is(csv);
  std::string line;
  std::vector<std::vector<std::string>> lines;
  while (std::getline(is, line)) lines.push_back(csv_split(line));
  ASSERT_EQ(lines.size(), rows.size() + 1);
  EXPECT_EQ(lines[0], csv_columns());
  for (const auto& l : lines) EXPECT_EQ(l.size(), csv_columns().size());
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < lines[0].size(); ++i)
      if (lines[0][i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  for (const char* c : {"name", "m", "n", "k", "trans", "median_ms", "min_ms", "max_ms", "tflops", "pct_peak",
                        "speedup_vs_baseline", "error_normwise", "pass", "status", "reps"})
    (void)col(c);
  EXPECT_EQ(lines[2][col("name")], "gemm/warptile/1024x1024x1024/nn");
  EXPECT_EQ(lines[2][col("median_ms")], "0.05");
  EXPECT_EQ(lines[1][col("reps")], "3");
  EXPECT_EQ(lines[1][col("reps_cut")], "true");
  EXPECT_EQ(lines[4][col("status")], "skip");
  EXPECT_EQ(lines[4][col("median_ms")], "");
  EXPECT_EQ(lines[6][col("reason")], "normwise error 1e-3 > tolerance 1e-6, \"quoted\"");
  EXPECT_EQ(lines[6][col("pass")], "false");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
  EXPECT_EQ(csv_field("plain"), "plain");
}

TEST(CliOutput, JsonFollowsGoogleBenchmarkLayout) {
  const std::vector<Result> rows = fake_results();
  const std::string j = format_json(fake_context(), rows);
  JsonChecker chk(j);
  ASSERT_TRUE(chk.valid()) << j;
  EXPECT_EQ(j.find("{\n  \"context\": {"), 0u);
  for (const char* k : {"context", "benchmarks", "date", "host_name", "executable", "num_cpus", "device", "sm", "sms",
                        "peak_tflops", "dram_gbs", "cuda_runtime", "cuda_driver", "cublas", "git_commit",
                        "library_build_type"})
    EXPECT_EQ(chk.keys.count(k), 1u) << k;
  for (const char* k : {"name", "run_name", "run_type", "pass", "status"}) EXPECT_EQ(chk.keys.count(k), rows.size()) << k;
  const size_t timed_rows = rows.size() - 1;  // the SKIP row has no times
  for (const char* k : {"repetitions", "real_time", "time_unit", "min", "max", "tflops", "pct_peak",
                        "speedup_vs_baseline"})
    EXPECT_EQ(chk.keys.count(k), timed_rows) << k;
  EXPECT_EQ(chk.keys.count("error_normwise"), timed_rows);
  EXPECT_NE(j.find("\"name\": \"gemm/warptile/4096x4096x4096/nn\""), std::string::npos);
  EXPECT_NE(j.find("\"run_type\": \"iteration\""), std::string::npos);
  EXPECT_NE(j.find("\"time_unit\": \"ms\""), std::string::npos);
  EXPECT_NE(j.find("\"real_time\": 2.5,"), std::string::npos) << "real_time is the median";
  EXPECT_NE(j.find("\"error_normwise\": null"), std::string::npos) << "NaN becomes null";
  EXPECT_NE(j.find("\"error_occurred\": true"), std::string::npos) << "SKIP rows as Google Benchmark errors";
  EXPECT_NE(j.find("host \\\"one\\\""), std::string::npos) << "strings escaped";
  JsonChecker empty(format_json(fake_context(), {}));
  EXPECT_TRUE(empty.valid());
  Context nodev = fake_context();
  nodev.has_device = false;
  JsonChecker nd(format_json(nodev, rows));
  EXPECT_TRUE(nd.valid());
  EXPECT_EQ(nd.keys.count("peak_tflops"), 0u);
}

// Tensor-core gemm rows name their type/math everywhere: table shape cell, CSV/JSON name and dtype.
TEST(CliOutput, GemmKindIsNamedInEveryFormat) {
  Result r = timed("wmma", 12, {2048, 2048, 2048}, 1.3, 0.0);
  r.kind = check::GemmKind::tf32x3;
  Result b = timed("mma_sync", 13, {2048, 2048, 2048}, 0.075, 0.027);
  b.kind = check::GemmKind::bf16;
  const std::vector<Result> rows = {r, b};
  const std::string t = format_results(Format::table, fake_context(), rows);
  EXPECT_NE(t.find("2048x2048x2048 nn tf32x3"), std::string::npos) << t;
  EXPECT_NE(t.find("2048x2048x2048 nn bf16"), std::string::npos) << t;
  const std::string j = format_json(fake_context(), rows);
  EXPECT_NE(j.find("\"name\": \"gemm/wmma/2048x2048x2048/nn/tf32x3\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"dtype\": \"bf16\""), std::string::npos) << j;
  const std::string csv = format_csv(rows);
  EXPECT_NE(csv.find("gemm/mma_sync/2048x2048x2048/nn/bf16"), std::string::npos) << csv;
  // A plain fp32 row keeps its old name (no kind suffix).
  EXPECT_NE(format_csv({timed("warptile", 9, {64, 64, 64}, 1, 1)}).find("gemm/warptile/64x64x64/nn,"), std::string::npos);
}

TEST(CliOutput, JsonPieces) {
  EXPECT_EQ(json_number(std::nan("")), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(2.5), "2.5");
  EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  JsonChecker bad("{\"a\": [1, 2}");
  EXPECT_FALSE(bad.valid());
}

TEST(CliOutput, FormatResultsPicksTheWriter) {
  const auto rows = fake_results();
  EXPECT_EQ(format_results(Format::csv, fake_context(), rows).rfind("name,op,", 0), 0u);
  EXPECT_EQ(format_results(Format::json, fake_context(), rows).rfind("{", 0), 0u);
  EXPECT_NE(format_results(Format::table, fake_context("verify"), rows).find("bound ratio"), std::string::npos);
  EXPECT_NE(format_results(Format::table, fake_context("bench"), rows).find("median ms"), std::string::npos);
}

// gemm rows below the ridge point (the decode shapes): GB/s and % DRAM beside TFLOP/s, in every format.
TEST(CliOutput, MemoryBoundGemmRowsShowBandwidth) {
  DeviceInfo d = fake_context().device;
  d.dram_read_gbs = 3000;
  const Shape decode{128, 7168, 8192}, square{4096, 4096, 4096};
  const double decode_bytes = 2.0 * (128.0 * 8192 + 8192.0 * 7168 + 128.0 * 7168);
  Result r = timed("decode_rows", 24, decode, 0.05, 0.055);
  r.kind = check::GemmKind::bf16;
  r.trans = {Trans::N, Trans::T};
  r.workload = kDecodeWorkload;
  set_rates(r, decode_bytes, d);
  EXPECT_NEAR(r.intensity, 2.0 * 128 * 7168 * 8192 / decode_bytes, 1e-9);
  EXPECT_NEAR(r.ridge, 66.9 * 16 * 1e12 / 3000e9, 1e-6);  // bf16: the tensor-core peak
  EXPECT_TRUE(r.memory_bound);
  EXPECT_NEAR(r.gbs, decode_bytes / 0.05e-3 / 1e9, 1e-6);
  EXPECT_NEAR(r.pct_dram, 100.0 * r.gbs / 3000, 1e-9);
  EXPECT_NEAR(r.tflops, 2.0 * 128 * 7168 * 8192 / 0.05e-3 / 1e12, 1e-9);
  Result big = timed("wgmma_ws", 15, square, 0.2, 0.21);
  big.kind = check::GemmKind::bf16;
  set_rates(big, 2.0 * 3 * 4096 * 4096, d);
  EXPECT_FALSE(big.memory_bound);
  EXPECT_GT(big.gbs, 0) << "every gemm row carries its bytes";
  Result unknown = r;
  set_rates(unknown, decode_bytes, fake_context().device);  // no DRAM read measured: no ridge point
  EXPECT_EQ(unknown.ridge, 0);
  EXPECT_FALSE(unknown.memory_bound);

  Context ctx = fake_context();
  ctx.device = d;
  const std::vector<Result> rows = {big, r};
  const std::string t = format_bench_table(ctx, rows);
  std::istringstream is(t);
  std::string line, header, decode_line, square_line;
  while (std::getline(is, line)) {
    if (line.find("median ms") != std::string::npos) header = line;
    if (line.find("128x7168x8192 nt bf16") != std::string::npos) decode_line = line;
    if (line.find("4096x4096x4096 nn bf16") != std::string::npos) square_line = line;
  }
  size_t pos = 0;
  for (const char* c : {"TFLOP/s", "% peak", "GB/s", "% DRAM", "x cublas"}) {
    const size_t p = header.find(c, pos);
    ASSERT_NE(p, std::string::npos) << c << " in: " << header;
    pos = p;
  }
  char gbs[32];
  std::snprintf(gbs, sizeof gbs, "%.1f", r.gbs);
  EXPECT_NE(decode_line.find(gbs), std::string::npos) << decode_line;
  EXPECT_EQ(count(square_line, " - "), 2u) << "no GB/s above the ridge point: " << square_line;
  EXPECT_NE(t.find("below the ridge point"), std::string::npos) << t;
  EXPECT_NE(t.find("bf16 357 flop/byte"), std::string::npos) << t;
  EXPECT_NE(t.find("3000 GB/s DRAM read measured"), std::string::npos) << t;
  // Without a memory-bound row, the gemm table keeps its columns.
  const std::string plain = format_bench_table(ctx, {big});
  const size_t head = plain.find("median ms");
  ASSERT_NE(head, std::string::npos);
  EXPECT_EQ(plain.substr(head, plain.find('\n', head) - head).find("GB/s"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("ridge point"), std::string::npos) << plain;

  const std::string j = format_json(ctx, rows);
  JsonChecker chk(j);
  ASSERT_TRUE(chk.valid()) << j;
  for (const char* k : {"bytes", "bytes_per_second", "pct_dram", "arithmetic_intensity", "ridge_point", "memory_bound"})
    EXPECT_EQ(chk.keys.count(k), 2u) << k;
  EXPECT_EQ(chk.keys.count("workload"), 1u);
  EXPECT_EQ(chk.keys.count("dram_read_gbs"), 1u);
  EXPECT_NE(j.find("\"workload\": \"decode\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"memory_bound\": true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"dram_read_gbs\": 3000"), std::string::npos) << j;
  EXPECT_NE(j.find("\"name\": \"gemm/decode_rows/128x7168x8192/nt/bf16\""), std::string::npos) << j;

  const std::string csv = format_csv(rows);
  std::istringstream cs(csv);
  std::vector<std::vector<std::string>> lines;
  while (std::getline(cs, line)) lines.push_back(csv_split(line));
  ASSERT_EQ(lines.size(), 3u);
  const std::vector<std::string> cols = csv_columns();
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  EXPECT_EQ(lines[2][col("memory_bound")], "true");
  EXPECT_EQ(lines[1][col("memory_bound")], "false");
  EXPECT_EQ(lines[2][col("workload")], "decode");
  EXPECT_FALSE(lines[2][col("gbs")].empty());
}

// fp8 rows carry their scales' layout (JSON "scaling", the CSV column); other rows leave it out.
TEST(CliOutput, Fp8RowsNameTheirScaling) {
  Result f = timed("wgmma_fp8_promote", 29, Shape{4096, 4096, 4096}, 0.12, 0.13);
  f.kind = check::GemmKind::fp8;
  f.trans = {Trans::N, Trans::T};
  f.scaling = "block128";
  const std::vector<Result> rows = {timed("cublas", 11, Shape{4096, 4096, 4096}, 0.1, 0.11), f};
  const std::string j = format_json(fake_context(), rows);
  JsonChecker chk(j);
  ASSERT_TRUE(chk.valid()) << j;
  EXPECT_EQ(chk.keys.count("scaling"), 1u);
  EXPECT_NE(j.find("\"scaling\": \"block128\""), std::string::npos) << j;
  const std::vector<std::string> cols = csv_columns();
  const size_t at = static_cast<size_t>(std::find(cols.begin(), cols.end(), "scaling") - cols.begin());
  ASSERT_LT(at, cols.size());
  std::istringstream cs(format_csv(rows));
  std::string line;
  std::vector<std::vector<std::string>> lines;
  while (std::getline(cs, line)) lines.push_back(csv_split(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1][at], "");
  EXPECT_EQ(lines[2][at], "block128");
}

TEST(CliOutput, InfoAndList) {
  DeviceInfo d = fake_context().device;
  d.dram_gbs_theory = 3350;
  const std::string info = format_info(d);
  for (const char* s : {"NVIDIA H100", "sm_90", "132 SMs", "1980 MHz", "L2", "66.9 TFLOP/s", "128 fp32 lanes",
                        "2950 GB/s measured", "3350 GB/s theoretical", "CUDA runtime", "CUDA driver", "cuBLAS"})
    EXPECT_NE(info.find(s), std::string::npos) << s;
  VariantInfo ws{"wgmma_ws", "frame", 15, 90, false, "f16 bf16", "wgmma",
                 {"RoundRobin", "WholeTilesOf<256, 4, 256, 128>", "DirectStore", "InTensorCore"}};
  const std::string list = format_list(
      {{"gemm", {{"cpu_naive", "host loop", 0, 0, false}, {"cublas", "vendor", 1, 75, true}, ws}}, {"gemv", {}}});
  for (const char* s : {"#", "name", "min_sm", "baseline", "builds on", "summary", "cpu_naive", "host loop", "0 (host)",
                        "75", "yes", "gemv: (none yet)", "gemm on the tensor-core skeleton",
                        "wgmma_ws (15): RoundRobin, WholeTilesOf<256, 4, 256, 128>, DirectStore, InTensorCore"})
    EXPECT_NE(list.find(s), std::string::npos) << s;
  // The parts' lines do not start with a number: scripts read the table's rows by their first field.
  EXPECT_EQ(list.find("\n15 wgmma_ws"), std::string::npos);
}

TEST(CliDevice, PeakTable) {
  EXPECT_EQ(fp32_lanes_per_sm(90), 128);
  EXPECT_EQ(fp32_lanes_per_sm(100), 128);
  EXPECT_EQ(fp32_lanes_per_sm(120), 128);
  EXPECT_EQ(fp32_lanes_per_sm(89), 128);
  EXPECT_EQ(fp32_lanes_per_sm(86), 128);
  EXPECT_EQ(fp32_lanes_per_sm(80), 64);  // A100: 19.5 TFLOP/s = 108 x 64 x 2 x 1.41 GHz
  EXPECT_EQ(fp32_lanes_per_sm(70), 64);
  EXPECT_EQ(fp32_lanes_per_sm(75), 64);
  EXPECT_NEAR(peak_tflops(132, 128, 1980), 66.9, 0.01);  // H100 SXM
  EXPECT_NEAR(peak_tflops(108, 64, 1410), 19.5, 0.01);   // A100
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12080), "12.8");
  const std::string date = iso_date_now();
  EXPECT_EQ(date.size(), 25u) << date;  // 2025-01-02T03:04:05+00:00
  EXPECT_EQ(date[10], 'T');
  EXPECT_EQ(date[22], ':');
}

TEST(CliTiming, MedianMinMax) {
  Stats s = summarize({3, 1, 2});
  EXPECT_EQ(s.median, 2);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 3);
  s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.median, 2.5);
  s = summarize({});
  EXPECT_EQ(s.median, 0);
}

TEST(CliTiming, SlowRunsCutRepetitions) {
  EXPECT_EQ(reps_for(500, 20), 20);
  EXPECT_EQ(reps_for(1000, 20), 20);   // "more than 1 s"
  EXPECT_EQ(reps_for(2000, 20), 5);    // 10 s / 2 s
  EXPECT_EQ(reps_for(3500, 20), 3);    // at least 3
  EXPECT_EQ(reps_for(60000, 20), 3);
  EXPECT_EQ(reps_for(2000, 4), 4);     // never above the request
  EXPECT_EQ(reps_for(2000, 2), 2);
}

}  // namespace
}  // namespace rungs::cli
