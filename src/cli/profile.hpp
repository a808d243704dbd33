// `rungs profile`: Nsight Compute (ncu) on one launch of each rung of a ladder, one row per rung
// and case. The parent process runs this executable again under ncu per (case, rung), in a
// hidden mode (--profile-child) that builds the case as bench does, checks one unprofiled launch
// against fp64 and profiles one launch between cudaProfilerStart and cudaProfilerStop; the parent
// reads ncu's CSV (--page raw) and aggregates the rung's kernels. The parsing, the aggregation,
// the writers and the search for ncu are pure functions, exposed for the CPU tests.
#pragma once

#include "cli/args.hpp"
#include "cli/results.hpp"

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace rungs::cli {

// The command (both the parent and, with a.profile_child, the profiled child).
int cmd_profile(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err);

// The cases a profile covers: the given shapes, transposes and types, each left out at its
// default: gemm 4096^3, nn, f32; gemv 16384 x 16384, n; reduce 2^24, i64.
std::vector<Case> profile_cases(const Args& a);

// The child's command line (without the program name) for `variant` on case c: the case's flags
// (one shape, transpose and type), --alpha, --beta, --seed, --check-rows, --device, --variant,
// --quiet and --profile-child. Parsed back, profile_cases gives exactly c.
std::vector<std::string> profile_child_args(const Args& a, const Case& c, const std::string& variant);

// The metrics asked of ncu, and the warp-stall reasons R of
// smsp__average_warps_issue_stalled_R_per_issue_active.ratio among them.
const std::vector<std::string>& profile_metrics();
const std::vector<std::string>& stall_reasons();
std::string stall_metric(const std::string& reason);

// One kernel of ncu's CSV: its name, launch shape and every numeric column by its header
// (times in ns whatever unit the units row gives).
struct NcuKernel {
  std::string name, block, grid;
  std::map<std::string, double> values;
  double get(const std::string& metric) const;  // NaN when the column is absent or not a number
};

// ncu's log file (--csv --page raw --log-file): ==PROF==/==WARNING==/==ERROR== lines, a header
// row (first field "ID"), a units row, then one row per profiled kernel.
struct NcuLog {
  std::vector<NcuKernel> kernels;
  std::vector<std::string> errors;  // the ==ERROR== lines, as written
  bool has_header = false;
};
NcuLog parse_ncu_log(const std::string& text);
// One CSV record: fields split on commas outside double quotes, quotes removed ("" is a quote).
std::vector<std::string> parse_csv_record(const std::string& line);
// "475,808" -> 475808, "93.91" -> 93.91; "", "n/a" or anything else not a number -> NaN.
double parse_ncu_number(const std::string& text);
// "void unnamed>::warptile_kernel<unnamed>::Tile<64, 64>, 1, 0>(detail::GemmParams)" ->
// "warptile_kernel", "void pack::<unnamed>::copy_rows_kernel<float>(const T1 *)" -> "pack::copy_rows_kernel":
// no return type, parameters, template arguments or anonymous namespaces; the last two names; at
// most 40 characters (37 and "...").
std::string short_kernel_name(const std::string& full);

// A rung's kernels aggregated: time summed, kernels counted, bank conflicts summed over all;
// the rest from the main kernel (the longest). NaN = ncu did not report it.
struct ProfileStats {
  int kernels = 0;
  double time_ns;
  std::string main_kernel;  // in full
  std::string block, grid;
  double registers, occupancy_pct, dram_pct, l2_hit_pct, bank_conflicts, issue_pct, fma_pct, tensor_pct;
  std::string tensor_metric;                          // the metric tensor_pct came from ("" = none)
  std::vector<std::pair<std::string, double>> stalls;  // reason -> ratio, those ncu reported
  std::string top_stall;                              // the largest, "selected" left out ("" = none)
  double top_stall_ratio;
  ProfileStats();
};
ProfileStats aggregate_kernels(const std::vector<NcuKernel>& kernels);

// One row: a rung on a case.
struct ProfileRow {
  std::string op;
  Case the_case;
  std::string variant;  // as selected ("auto" for auto)
  int rung = -1;
  std::string ran;      // auto: the rung it resolved to
  Status status = Status::ok;
  std::string reason;   // SKIP / FAIL / ERROR: why; ok: ncu's errors about some of the kernels, if any
  ProfileStats stats;
};

struct ProfilerInfo {
  std::string ncu_path, ncu_version;
};

std::string format_profile_table(const Context& ctx, const ProfilerInfo& p, const std::vector<ProfileRow>& rows);
std::string format_profile_csv(const std::vector<ProfileRow>& rows);
std::string format_profile_json(const Context& ctx, const ProfilerInfo& p, const std::vector<ProfileRow>& rows);

// Where ncu is: `given` (--ncu; a bare name is looked up on path_env) or else "ncu" on path_env,
// then each of `candidates` in turn. Throws CliError (code 2) naming where it looked.
std::string locate_ncu(const std::string& given, const std::string& path_env, const std::vector<std::string>& candidates);
// The fallbacks after PATH: <the CUDA toolkit's bin dir at build time>/ncu, /usr/local/cuda/bin/ncu,
// the newest /opt/nvidia/nsight-compute/*/ncu (by version order), without duplicates.
std::vector<std::string> default_ncu_candidates();

}  // namespace rungs::cli
