// What the commands measure, as plain structs: the writers (output.cpp) turn them into a
// table, CSV or JSON, and the tests feed them fake ones.
#pragma once

#include "cli/args.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rungs::cli {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm = 0;                   // compute capability major*10+minor
  int sms = 0;                  // streaming multiprocessors
  double sm_clock_mhz = 0;      // max SM clock
  double mem_clock_mhz = 0;     // peak memory clock (0 if the driver does not say)
  int bus_width_bits = 0;
  int64_t l2_bytes = 0;
  int64_t total_mem = 0, free_mem = 0;
  int fp32_lanes = 0;           // fp32 lanes per SM (per-architecture table)
  double peak_tflops = 0;       // sms * lanes * 2 * clock
  double dram_gbs = 0;          // measured (device-to-device copy, bytes read + written)
  double dram_read_gbs = 0;     // measured (a plain streaming-read kernel): the "% DRAM" denominator
  double launch_us = 0;         // an empty kernel launch, event-timed (median)
  double dram_gbs_theory = 0;   // 2 * memory clock * bus width / 8 (0 if unknown)
  std::string cuda_runtime, cuda_driver, cublas;
};

// The run's context (JSON "context", the table's header).
struct Context {
  std::string command;          // "bench", "verify", "tune"
  std::string date;             // ISO 8601 with offset
  std::string host_name, executable, command_line;
  int num_cpus = 0;
  std::string git_commit, build_type, rungs_version;
  DeviceInfo device;
  bool has_device = false;
  // The method, as run.
  int reps = 20, warmup = 3;
  bool flush_l2 = true;
  std::string baseline;         // "" = none; one ladder: its name; several: "gemm:cublas,reduce:cub"
  std::map<std::string, std::string> baselines;  // op -> baseline rung (empty: `baseline` for every op)
  std::string baseline_of(const std::string& op) const {
    if (baselines.empty()) return baseline;
    const auto it = baselines.find(op);
    return it == baselines.end() ? std::string() : it->second;
  }
  uint64_t seed = 0;
  float alpha = 1, beta = 0;
  std::string timing;           // how the rows were timed, where not the interleaved default
};

enum class Status { ok, fail, skip, error };
const char* status_name(Status s);  // "ok", "fail", "skip", "error"

// One measurement: a rung (or, for tune, a configuration) on one shape.
struct Result {
  std::string op = "gemm";
  std::string variant;          // rung name, or "warptile" for tune
  std::string config;           // tune: the configuration's name; else empty
  int rung = -1;                // rung number (tune: configuration index)
  bool is_baseline = false;
  Shape shape;
  TransPair trans;
  DType dtype = DType::f32;     // reduce: the input type
  check::GemmKind kind = check::GemmKind::f32;  // gemm: element type / math mode
  float alpha = 1, beta = 0;
  Status status = Status::ok;
  std::string reason;           // SKIP / FAIL / ERROR: why

  // Correctness run against fp64.
  bool checked = false;
  int64_t checked_rows = 0;     // rows of C compared (== m when all)
  double max_rel = 0, normwise = 0, normwise_tol = 0, bound_ratio = 0;
  int64_t bad = 0;

  // Timing (bench, tune).
  bool timed = false;
  int reps = 0, reps_requested = 0, warmup = 0;
  bool reps_cut = false;        // a warm-up run took > 1 s: repetitions cut to fit ~10 s
  double warm_ms = 0;           // that warm-up run
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double tflops = 0, pct_peak = 0;
  // The bytes the workload must move at least: gemm A + B + C (C twice when beta != 0); gemv A once
  // + x + y; reduce the input. Every timed row has them.
  double bytes = 0;
  double gbs = 0, pct_dram = 0; // bytes / median; % of the measured DRAM read bandwidth
  // gemm: flops / bytes, and the ridge point of the row's type = its assumed peak / the measured DRAM
  // read bandwidth (flop/byte; 0 where either is unknown). Below the ridge the shape is memory-bound:
  // the table shows its GB/s and % DRAM beside TFLOP/s.
  double intensity = 0, ridge = 0;
  bool memory_bound = false;
  std::string workload;         // the named seed workload the case belongs to ("decode"), else empty
  std::string scaling;          // gemm fp8: the scales' layout ("tensor", "outer", "block128"), else empty
  std::string epilogue;         // gemm: the epilogue ("bias+silu+gated+fp8", cli::epi_name), else empty
  std::string baseline;         // empty = none
  double baseline_median_ms = 0;
  double speedup = 0;           // baseline median / rung median (1 for the baseline itself)
  bool fastest = false;         // tune: the fastest passing configuration of its shape

  bool passed() const { return status == Status::ok; }
  // gemm 2mnk; gemv 2mn; reduce n (one add per element).
  double flops() const {
    if (op == "gemv") return 2.0 * static_cast<double>(shape.m) * shape.n;
    if (op == "reduce") return static_cast<double>(shape.n);
    return 2.0 * static_cast<double>(shape.m) * shape.n * shape.k;
  }
  bool bandwidth_bound() const { return op == "gemv" || op == "reduce"; }
  // The table shows GB/s and % DRAM for it: gemv and reduce always, gemm below its ridge point.
  bool shows_bandwidth() const { return bandwidth_bound() || memory_bound; }
};

}  // namespace rungs::cli
