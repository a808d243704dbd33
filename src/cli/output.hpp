// The writers: results (results.hpp) to a table, CSV or JSON. Pure functions returning
// strings, so the CPU tests feed them fake results.
#pragma once

#include "cli/results.hpp"

#include <rungs/rungs.hpp>

#include <string>
#include <utility>
#include <vector>

namespace rungs::cli {

// Bench: one table per operation, rows grouped by shape, notes (SKIP reasons, cut repetitions,
// sampled rows) below each table.
std::string format_bench_table(const Context& ctx, const std::vector<Result>& rows);
// Verify: per rung and shape, the error metrics and pass/FAIL/SKIP.
std::string format_verify_table(const Context& ctx, const std::vector<Result>& rows);
// Tune: one table per shape with the fastest passing configuration marked '*', then a summary.
std::string format_tune_table(const Context& ctx, const std::vector<Result>& rows);
// CSV: a header, then one row per result (the same columns for every command).
std::string format_csv(const std::vector<Result>& rows);
std::vector<std::string> csv_columns();
// JSON in Google Benchmark's layout: {"context": {...}, "benchmarks": [...]}.
// The context object alone (run, device, method), its closing brace at `indent`: gemm_host's JSON shares it.
std::string format_json_context(const Context& ctx, const std::string& indent);
std::string format_json(const Context& ctx, const std::vector<Result>& rows);
// The table, CSV or JSON for `command` (Format::table picks the command's table).
std::string format_results(Format f, const Context& ctx, const std::vector<Result>& rows);

// `rungs info` and `rungs list`.
std::string format_info(const DeviceInfo& d);
std::string format_list(const std::vector<std::pair<std::string, std::vector<VariantInfo>>>& ladders);

// Pieces, exposed for the tests.
std::string benchmark_name(const Result& r);  // "gemm/warptile/4096x4096x4096/nn"
std::string json_escape(const std::string& s);
std::string json_number(double v);            // null for NaN/Inf
std::string csv_field(const std::string& s);  // quoted when it holds , " or a newline
std::string fmt_ms(double ms);
std::string fmt_sci(double v);                // 1.23e-07

}  // namespace rungs::cli
