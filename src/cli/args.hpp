// `rungs` command line: the parsed arguments as a plain struct, the parser and the help
// texts. Pure functions (no CUDA calls), so the CPU tests drive them directly.
#pragma once

#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"
#include "check/reduce_check.hpp"

#include <cstdint>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rungs::cli {

// A failure the user can fix or must know about; main prints "rungs: error: <what>" and
// exits with `code` (2 for usage errors, no GPU, not enough device memory).
class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& what, int code = 2) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

enum class Command { none, help, version, info, list, bench, verify, tune, profile };
enum class Format { table, csv, json };

// gemm: m x n x k. gemv: m x n (A's stored rows and columns), k = 0. reduce: n elements, m = k = 0.
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
};

struct TransPair {
  Trans a = Trans::N, b = Trans::N;
  bool operator==(const TransPair& o) const { return a == o.a && b == o.b; }
};

std::string trans_name(TransPair t);  // "nn", "nt", "tn", "tt"
std::string shape_name(const Shape& s);  // "4096x4096x4096"
// Per operation: gemm "4096x4096x4096" / "nn"; gemv "4096x4096" / "n" (only the first letter
// counts); reduce "16777216" / "" (no transpose).
std::string shape_name(const std::string& op, const Shape& s);
std::string trans_name(const std::string& op, TransPair t);
using check::dtype_bytes;  // check/reduce_check.hpp
using check::dtype_name;
const char* command_name(Command c);
const char* format_name(Format f);

// The seed workloads (`rungs bench` with no sizes): square 1024, 2048, 4096, 8192.
std::vector<Shape> default_shapes();

// Above this m*n*k the fp64 reference is computed on sampled rows (kDefaultCheckRows of them).
constexpr double kSampleAbove = 1073741824.0;  // 2^30
constexpr int64_t kDefaultCheckRows = 256;
// The project's method: reported numbers use at least this many repetitions.
constexpr int kMinReportedReps = 20;

// gemm --epilogue, --gated, --out fp8: the epilogue every case of the run applies (rungs.hpp,
// Epilogue; an e4m3 C with block scales).
struct EpiFlags {
  bool on = false;  // any of the three given
  bool bias = false;
  Activation act = Activation::none;
  bool gated = false;
  bool fp8_out = false;
};
// "bias+silu+gated+fp8": the epilogue as rows, tables and the JSON name it ("" when off).
std::string epi_name(const EpiFlags& e);

struct Args {
  Command command = Command::none;
  Command help_for = Command::none;  // command == help: whose help (none = the top-level one)
  std::string op;                    // "gemm", "gemv", "reduce"; empty = every ladder
  std::vector<Shape> shapes;         // empty = the seed workloads
  std::vector<std::string> variants; // empty = all rungs
  std::vector<TransPair> trans;      // empty = {nn} (gemm), {n} (gemv); gemv uses trans.a only
  std::vector<DType> dtypes;         // reduce: empty = the seed workloads' (every dtype)
  std::vector<check::GemmKind> gemm_kinds;  // gemm --dtype: empty = f32 (with the seed shapes: f32, bf16, tf32x3)
  std::vector<std::string> workloads;       // gemm --workload: parts of the seed (empty = all of it)
  Scaling scaling = Scaling::tensor;        // gemm --dtype fp8: the scales' layout (--scaling)
  bool scaling_given = false;
  EpiFlags epi;                             // gemm --epilogue, --gated, --out
  float alpha = 1.0f, beta = 0.0f;
  int reps = 20, warmup = 3;
  bool reps_given = false;
  bool flush_l2 = true;
  uint64_t seed = 42;
  Format format = Format::table;
  std::string output;                // empty = stdout
  std::string baseline = "auto";     // auto = each ladder's vendor rung; "none" = no baseline
  int64_t check_rows = -1;           // -1 = auto (all rows up to 2^30 multiply-adds, else 256); 0 = all
  int device = 0;
  bool quiet = false;
  std::vector<std::string> memory;   // bench gemm_host: "pinned", "pageable"; empty = both
  bool first_call = false;           // bench gemm_host: time this process's first call (internal)
  std::string plan;                  // bench gemm_host: force the schedule, "RxC[:kN/F[:rP]]" (--plan)
  bool trace = false;                // bench gemm_host: print one traced call's timeline per row (--trace)
  bool calls = false;                // bench gemm_host: print each timed call's host-side breakdown per row
  bool no_graph = false;             // bench gemm_host: issue every call eagerly (no CUDA graph replay)
  int host_threads = 0;              // bench gemm_host: staging threads, the caller included (0 = the library's)
  int world = 0;                     // bench allgather_gemm / gemm_reducescatter: ranks (0 = every visible GPU)
  int pieces = 0;                    // bench allgather_gemm / gemm_reducescatter: forced pieces (0 = the rule)
  std::vector<std::string> models;   // bench chain: the models whose decode chain runs (empty = llama3-8b)
  std::string ncu;                   // profile: the ncu executable (empty = search for it)
  bool profile_child = false;        // profile: this process is the one ncu profiles (internal)
  std::vector<std::string> argv;     // the command line as given (for the JSON context)
};

// One problem of one ladder: shape, transpose (gemm, gemv) and element type (reduce).
struct Case {
  Shape shape;
  TransPair trans;
  DType dtype = DType::f32;
  check::GemmKind kind = check::GemmKind::f32;  // gemm: element type / math mode
  std::string workload{};                       // a named seed workload ("decode"), else empty
  Scaling scaling = Scaling::tensor;            // gemm fp8: the scales' layout
  EpiFlags epi{};                               // gemm: the epilogue (--epilogue, --gated, --out)
};
// The problems a run covers for `op`: the given shapes x transposes x dtypes, or the op's
// seed workloads: gemm 1024..8192 nn in f32, bf16 and tf32x3, then the decode workload
// (decode_shapes(), bf16 nt), fp8 e4m3 at 1024..8192 nt and the fp8 decode workload
// (decode_fp8_shapes(), e4m3 nt, outer scales unless --scaling) (bench and verify, when none of
// --size, --m, --n, --k, --trans, --dtype is given); gemv article 000's sweep M = N = 2^12..2^15 with both transposes plus the
// skinny 2^20 x 64 and 64 x 2^20; reduce article 002's int64 2^24 and 2^28, each for every dtype.
std::vector<Case> cases_for(const Args& a, const std::string& op);
// The gemm decode workload: a batch of m = 1, 16, 64, 128 tokens against the weight matrices of
// one transformer layer, W stored n x k (trans nt): n x k = 7168 x 8192, 28672 x 8192, 8192 x 28672.
// Memory-bound: the time is reading W.
// --scaling's word for a layout: "tensor", "outer", "block128".
inline const char* scaling_name(Scaling s) {
  return s == Scaling::outer ? "outer" : s == Scaling::block128 ? "block128" : "tensor";
}
constexpr const char* kDecodeWorkload = "decode";
std::vector<Shape> decode_shapes();
// The fp8 decode workload: the same batches against fp8 weights of 7168 x 8192 and 28672 x 8192.
constexpr const char* kDecodeFp8Workload = "decode_fp8";
std::vector<Shape> decode_fp8_shapes();
// Reduction lengths may exceed 2^31 (64-bit indexing is part of the ladder); matrix dimensions may not.
constexpr int64_t kMaxReduceN = int64_t{1} << 36;

// argv without the program name. Throws CliError (code 2) naming the bad flag or value.
// Any --help / -h makes it a help request for the command it follows.
Args parse_args(const std::vector<std::string>& argv);

// Value grammars, exposed for the tests. `flag` names the flag in error messages.
//   size:  1024 | 2^12                          (1 .. 2^31-1)
//   list:  item[,item...], item = size | range
//   range: a:b[:xF | :+S]  from a to b inclusive, multiplying by F (default x2) or adding S
int64_t parse_size(const std::string& text, const std::string& flag, int64_t max = INT32_MAX);
std::vector<int64_t> parse_size_list(const std::string& text, const std::string& flag, int64_t max = INT32_MAX);
// gemm: nn, nt, tn, tt, all; gemv: n, t, all (TransPair.b = N).
std::vector<TransPair> parse_trans_list(const std::string& text, const std::string& flag, const std::string& op);
std::vector<DType> parse_dtype_list(const std::string& text, const std::string& flag);
// gemm's --dtype: f32, tf32, tf32x3, f16, bf16 or all.
std::vector<check::GemmKind> parse_gemm_kind_list(const std::string& text, const std::string& flag);
std::vector<std::string> split(const std::string& text, char sep);

// The rows of C the fp64 reference checks for a shape, as given to check::gemm_reference
// (0 = all rows).
int64_t reference_rows(const Args& a, const Shape& s);

// Help texts (cli/help.cpp): the top-level one for Command::none / help.
std::string help_text(Command c);

// The tensor-parallel operations of rungs::dist: `rungs bench` and `rungs list` take them.
bool is_dist_op(const std::string& op);

// A command's bit in Flag::commands.
constexpr unsigned command_bit(Command c) { return 1u << static_cast<unsigned>(c); }
// The commands that run problems: they share the shape, data and output flags.
constexpr unsigned kProblemCommands = command_bit(Command::bench) | command_bit(Command::verify) |
                                      command_bit(Command::tune) | command_bit(Command::profile);

// Every flag of the command line, described once: flags() drives parse_args, every command's
// --help and the top-level summary.
enum class FlagGroup { shapes, rungs, timing, data, output, gemm_host, chain, profiler, internal };
struct ParseState;  // the parser's state while it reads the flags (args.cpp)
struct Flag {
  const char* name;     // "--size"
  const char* value;    // its value as the help writes it ("LIST", "N"); nullptr: a switch
  unsigned commands;    // command_bit() of each command that accepts it
  FlagGroup group;      // where a command's --help lists it (internal: nowhere)
  const char* help;     // the help text, wrapped to the help's width ("\n" starts a new line)
  void (*store)(ParseState&, const Flag&, const std::string& value);  // nullptr: --help (read first)
  const char* only_op = nullptr;      // the one operation it applies to, if any ("gemm_host")
  const char* after_table = nullptr;  // what it prints after the table (so it needs --format table)
  unsigned other_commands = 0;        // commands whose --help says other_help instead of help
  const char* other_help = nullptr;
};
const std::vector<Flag>& flags();

}  // namespace rungs::cli
