// The `rungs` argument parser (no CUDA calls: the CPU tests drive it) and flags(), the one
// description of every flag: the parse loop stores each through its entry, and every --help
// (cli/help.cpp) lists them from it.
#include "cli/args.hpp"

#include <algorithm>
#include <initializer_list>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <sstream>

#ifndef RUNGS_CUDA_BIN_DIR
#define RUNGS_CUDA_BIN_DIR ""
#endif

namespace rungs::cli {

namespace {

constexpr unsigned bit(Command c) { return command_bit(c); }
constexpr unsigned kTimed = bit(Command::bench) | bit(Command::tune);
constexpr unsigned kProfile = bit(Command::profile);
constexpr unsigned kShaped = kProblemCommands;  // the problem's flags: shapes, data, device, output
constexpr unsigned kAll = ~0u;
constexpr int64_t kMaxDim = INT32_MAX;
constexpr size_t kMaxListItems = 4096;

struct CommandName {
  const char* name;
  Command cmd;
};
const CommandName kCommands[] = {{"info", Command::info},     {"list", Command::list}, {"bench", Command::bench},
                                 {"verify", Command::verify}, {"tune", Command::tune}, {"profile", Command::profile}};

const char* const kOps[] = {"gemm", "gemv", "reduce"};
const char* const kDistOps[] = {"allgather_gemm", "gemm_reducescatter"};

[[noreturn]] void fail(const std::string& msg) { throw CliError(msg, 2); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

int64_t parse_int(const std::string& text, const std::string& flag, int64_t lo, int64_t hi) {
  if (text.empty()) fail(flag + ": empty value");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE)
    fail(flag + ": " + quoted(text) + " is not an integer");
  if (v < lo || v > hi)
    fail(flag + ": " + text + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
  return v;
}

uint64_t parse_u64(const std::string& text, const std::string& flag) {
  if (text.empty() || text[0] == '-') fail(flag + ": " + quoted(text) + " is not a non-negative integer");
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE)
    fail(flag + ": " + quoted(text) + " is not a non-negative integer");
  return v;
}

float parse_float(const std::string& text, const std::string& flag) {
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    fail(flag + ": " + quoted(text) + " is not a finite number");
  return v;
}

const Flag* find_flag(const std::string& name) {
  for (const auto& f : flags())
    if (name == f.name) return &f;
  return nullptr;
}

Command find_command(const std::string& name) {
  for (const auto& c : kCommands)
    if (name == c.name) return c.cmd;
  return Command::none;
}

std::string commands_list() {
  std::string s;
  for (const auto& c : kCommands) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

bool is_help(const std::string& t) { return t == "--help" || t == "-h"; }

// Expands one list item: a size or a range a:b[:xF|:+S].
void expand_item(const std::string& item, const std::string& flag, int64_t max, std::vector<int64_t>& out) {
  const std::vector<std::string> parts = split(item, ':');
  if (parts.size() == 1) {
    out.push_back(parse_size(item, flag, max));
    return;
  }
  if (parts.size() > 3) fail(flag + ": bad range " + quoted(item) + " (use a:b, a:b:xF or a:b:+S)");
  const int64_t a = parse_size(parts[0], flag, max), b = parse_size(parts[1], flag, max);
  if (b < a) fail(flag + ": bad range " + quoted(item) + ": the end is below the start");
  bool mul = true;
  int64_t step = 2;
  if (parts.size() == 3) {
    const std::string& st = parts[2];
    if (st.size() < 2 || (st[0] != 'x' && st[0] != '*' && st[0] != '+'))
      fail(flag + ": bad step " + quoted(st) + " in " + quoted(item) + " (use xF to multiply or +S to add)");
    mul = st[0] != '+';
    step = parse_int(st.substr(1), flag + " (step of " + item + ")", mul ? 2 : 1, max);
  }
  for (int64_t v = a; v <= b; v = (mul ? (v > max / step ? max + 1 : v * step) : v + step)) {
    if (out.size() >= kMaxListItems) fail(flag + ": more than " + std::to_string(kMaxListItems) + " sizes");
    out.push_back(v);
  }
}

}  // namespace

// The parser's state while it reads the flags.
struct ParseState {
  Args& a;
  // The shape flags' texts: what they mean depends on the operation, known once every token is read.
  std::string size, m, n, k, trans, dtype;
};

namespace {

// Stores for the table below: a flag's value, checked, into Args (or ParseState).
template <std::string ParseState::*text>
void store_text(ParseState& p, const Flag&, const std::string& v) {
  p.*text = v;
}
template <bool Args::*field>
void store_switch(ParseState& p, const Flag&, const std::string&) {
  p.a.*field = true;
}
template <float Args::*field>
void store_float(ParseState& p, const Flag& f, const std::string& v) {
  p.a.*field = parse_float(v, f.name);
}
// v, refused when empty: "--output: empty file name".
const std::string& non_empty(const std::string& v, const Flag& f, const char* what) {
  if (v.empty()) fail(std::string(f.name) + ": empty " + what);
  return v;
}

const char* const kNcuHelp =
    sizeof(RUNGS_CUDA_BIN_DIR) > 1
        ? "the ncu executable. Default: ncu on PATH, else ncu in the bin directory of the CUDA toolkit this "
          "build used (" RUNGS_CUDA_BIN_DIR "), else /usr/local/cuda/bin/ncu, else the newest "
          "/opt/nvidia/nsight-compute/*/ncu"
        : "the ncu executable. Default: ncu on PATH, else ncu in the bin directory of the CUDA toolkit this "
          "build used (unknown), else /usr/local/cuda/bin/ncu, else the newest /opt/nvidia/nsight-compute/*/ncu";

}  // namespace

const std::vector<Flag>& flags() {
  using G = FlagGroup;
  static const std::vector<Flag> f = {
      // Shapes.
      {"--size", "LIST", kShaped, G::shapes,
       "gemm: square shapes, m = n = k = each size; any of --m, --n, --k given beside it fixes that dimension "
       "instead (--size 1024:8192:x2 --k 256). gemv: square A. reduce: the lengths (as --n)",
       store_text<&ParseState::size>},
      {"--m", "LIST", kShaped, G::shapes,
       "gemm: the rows of C; gemv: the rows of A. Every combination of the lists given runs. Without --size "
       "gemm needs --m, --n and --k together, gemv --m and --n",
       store_text<&ParseState::m>},
      {"--n", "LIST", kShaped, G::shapes,
       "gemm: the columns of C; gemv: the columns of A; reduce: the lengths, up to 2^36 (2^31 and more take "
       "the 64-bit index paths)",
       store_text<&ParseState::n>},
      {"--k", "LIST", kShaped, G::shapes,
       "gemm: the inner dimension, op(A)'s columns and op(B)'s rows.\n"
       "allgather_gemm: --m, --n, --k are each rank's m_local, n_local, k; gemm_reducescatter: m (a multiple "
       "of the world size), n, k_local",
       store_text<&ParseState::k>},
      {"--trans", "LIST", kShaped, G::shapes,
       "gemm: nn, nt, tn, tt (comma-separated) or all; default nn. The first letter is A's, the second B's: "
       "t = the operand is stored transposed.\n"
       "gemv: n (y = A x), t (y = A^T x) or all; default n (the seed workloads: both)",
       store_text<&ParseState::trans>},
      {"--dtype", "LIST", kShaped, G::shapes,
       "gemm: f32 (fp32 CUDA cores), tf32, tf32x3 (float inputs on tensor cores), f16, bf16, fp8 (e4m3 x e4m3 "
       "with scales, bf16 C; named only, not in all) or all (default f32; the seed shapes without --size add "
       "bf16 and tf32x3).\n"
       "reduce: i32, i64, f32, f64 or all (default all); i32 sums exactly into int64. gemv: f32 only",
       store_text<&ParseState::dtype>, nullptr, nullptr, kProfile,
       "gemm: f32 (fp32 CUDA cores), tf32, tf32x3 (float inputs on tensor cores), f16, bf16, fp8 (e4m3 x e4m3 "
       "with scales, bf16 C; named only, not in all) or all (default f32).\n"
       "reduce: i32, i64, f32, f64 or all (default i64); i32 sums exactly into int64. gemv: f32 only"},
      {"--workload", "LIST", bit(Command::bench) | bit(Command::verify), G::shapes,
       "gemm without shape flags: the parts of the seed workload to run: f32, bf16, tf32x3 (the square seed "
       "sizes, nn), decode (bf16 nt, m = 1, 16, 64, 128 against the three decode weights), fp8 (the seed sizes, "
       "nt), decode_fp8 (e4m3 nt, outer scales unless --scaling, m = 1, 16, 64, 128 against 7168 x 8192 and "
       "28672 x 8192) or all (default all)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         for (const std::string& w : split(v, ',')) {
           if (w == "all") p.a.workloads = {"f32", "bf16", "tf32x3", "decode", "fp8", "decode_fp8"};
           else if (w == "f32" || w == "bf16" || w == "tf32x3" || w == "decode" || w == "fp8" || w == "decode_fp8")
             p.a.workloads.push_back(w);
           else fail(std::string(f.name) + ": " + quoted(w) + " is not f32, bf16, tf32x3, decode, fp8, decode_fp8 or all");
         }
       },
       "gemm"},
      {"--world", "N", bit(Command::bench), G::shapes,
       "allgather_gemm, gemm_reducescatter: the ranks, one host thread and one GPU each (default: every "
       "visible GPU)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.world = static_cast<int>(parse_int(v, f.name, 1, 1024));
       }},
      {"--pieces", "N", bit(Command::bench), G::shapes,
       "allgather_gemm, gemm_reducescatter: cut the pipelined rungs' transfers into N pieces instead of the "
       "rule's (to measure the rule; the same N for every shape and rung)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.pieces = static_cast<int>(parse_int(v, f.name, 1, 64));
       }},
      {"--scaling", "tensor|outer|block128", kShaped, G::shapes,
       "gemm --dtype fp8: the scales' layout (default tensor; the decode_fp8 workload's default outer): one scale "
       "per operand, one per row of op(A) and column of op(B), or one per 1 x 128 block of A along k and per "
       "128 x 128 block of B",
       [](ParseState& p, const Flag& f, const std::string& v) {
         if (v == "tensor") p.a.scaling = Scaling::tensor;
         else if (v == "outer") p.a.scaling = Scaling::outer;
         else if (v == "block128") p.a.scaling = Scaling::block128;
         else fail(std::string(f.name) + ": " + quoted(v) + " is not tensor, outer or block128");
         p.a.scaling_given = true;
       },
       "gemm"},
      {"--epilogue", "LIST", bit(Command::bench) | bit(Command::verify), G::shapes,
       "gemm: the epilogue every case applies (rungs::Epilogue), any of bias and one activation of relu, gelu, "
       "silu (e.g. bias,silu); rungs that apply no epilogue are skipped, the cublas row is the unfused chain "
       "(the product, then plain kernels)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         for (const std::string& w : split(v, ',')) {
           Activation act = Activation::none;
           if (w == "bias") p.a.epi.bias = true;
           else if (w == "relu") act = Activation::relu;
           else if (w == "gelu") act = Activation::gelu;
           else if (w == "silu") act = Activation::silu;
           else fail(std::string(f.name) + ": " + quoted(w) + " is not bias, relu, gelu or silu");
           if (act != Activation::none && p.a.epi.act != Activation::none)
             fail(std::string(f.name) + ": one activation at most (got two in " + quoted(v) + ")");
           if (act != Activation::none) p.a.epi.act = act;
         }
         p.a.epi.on = true;
       },
       "gemm"},
      {"--gated", nullptr, bit(Command::bench) | bit(Command::verify), G::shapes,
       "gemm: the gated product act(P[:, :n] + bias) * (P[:, n:] + bias): B has 2n columns (--n is C's)",
       [](ParseState& p, const Flag&, const std::string&) { p.a.epi.gated = p.a.epi.on = true; }, "gemm"},
      {"--out", "fp8", bit(Command::bench) | bit(Command::verify), G::shapes,
       "gemm: C in e4m3 with a scale per row and 128-column block (bf16 or fp8 inputs)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         if (v != "fp8") fail(std::string(f.name) + ": " + quoted(v) + " is not fp8");
         p.a.epi.fp8_out = p.a.epi.on = true;
       },
       "gemm"},
      {"--alpha", "X", kShaped, G::shapes, "default 1", store_float<&Args::alpha>},
      {"--beta", "X", kShaped, G::shapes,
       "default 0. With beta != 0 repeated runs accumulate into C (values grow; fine for timing); the "
       "correctness run starts from C0",
       store_float<&Args::beta>},
      // Rungs.
      {"--variant", "LIST", bit(Command::bench) | bit(Command::verify) | kProfile, G::rungs,
       "all (default), or rung names or numbers, comma-separated (see rungs list)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.variants.clear();
         if (v == "all") return;
         for (const std::string& name : split(v, ',')) {
           if (name.empty()) fail(std::string(f.name) + ": empty rung name in " + quoted(v));
           p.a.variants.push_back(name);
         }
       },
       nullptr, nullptr, kProfile,
       "default: every rung of OP that runs on the GPU and does the case's type, then auto; or rung names or "
       "numbers and auto, comma-separated (see rungs list)"},
      // Timing.
      {"--reps", "N", kTimed, G::timing,
       "timed repetitions (default 20). 20 or more is the method for reported numbers; fewer is allowed for "
       "quick looks and the output notes it",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.reps = static_cast<int>(parse_int(v, f.name, 1, 10000));
         p.a.reps_given = true;
       }},
      {"--warmup", "N", kTimed, G::timing, "untimed runs before timing (default 3)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.warmup = static_cast<int>(parse_int(v, f.name, 0, 10000));
       }},
      {"--flush-l2", "on|off", kTimed, G::timing, "flush the L2 before each timed launch (default on)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         if (v != "on" && v != "off") fail(std::string(f.name) + ": " + quoted(v) + " is not on or off");
         p.a.flush_l2 = v == "on";
       }},
      {"--baseline", "NAME", kTimed, G::timing,
       "the rung timed beside every other (default auto: each ladder's vendor rung, cublas for gemm and gemv, "
       "cub for reduce; none = no baseline)",
       [](ParseState& p, const Flag& f, const std::string& v) { p.a.baseline = non_empty(v, f, "rung name"); }},
      // Data.
      {"--seed", "N", kShaped, G::data, "seed of the random inputs and of the sampled rows (default 42)",
       [](ParseState& p, const Flag& f, const std::string& v) { p.a.seed = parse_u64(v, f.name); }},
      {"--check-rows", "N|all", kShaped, G::data,
       "rows of C checked against the fp64 reference (default: all rows when m*n*k <= 2^30, else 256 random "
       "rows; the output says which)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.check_rows = v == "all" ? 0 : parse_int(v, f.name, 1, kMaxDim);
       }},
      {"--device", "N", kShaped | bit(Command::info), G::data, "the CUDA device to use (default 0)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.device = static_cast<int>(parse_int(v, f.name, 0, 1023));
       }},
      // Output.
      {"--format", "table|csv|json", kShaped, G::output,
       "default table. csv: one row per measurement, with a header. json: Google Benchmark's layout: "
       "{\"context\": {...}, \"benchmarks\": [...]}",
       [](ParseState& p, const Flag& f, const std::string& v) {
         if (v == "table") p.a.format = Format::table;
         else if (v == "csv") p.a.format = Format::csv;
         else if (v == "json") p.a.format = Format::json;
         else fail(std::string(f.name) + ": " + quoted(v) + " is not table, csv or json");
       },
       nullptr, nullptr, kProfile,
       "default table. csv: one row per case and rung, with a header. json: {\"context\": {...}, "
       "\"profiler\": {...}, \"profiles\": [...]}, the context as bench's; each profile also holds every "
       "stall reason's ratio"},
      {"--output", "FILE", kShaped, G::output,
       "write the output to FILE instead of stdout (with csv or json the table is still printed on stdout)",
       [](ParseState& p, const Flag& f, const std::string& v) { p.a.output = non_empty(v, f, "file name"); }},
      {"--quiet", nullptr, kShaped, G::output, "no progress lines on stderr", store_switch<&Args::quiet>},
      {"--help", nullptr, kAll, G::output, "this help", nullptr},
      // bench chain.
      {"--model", "LIST", bit(Command::bench), G::chain,
       "llama3-8b (32 layers and lm_head: 129 products, 15.0 GB of bf16 weights), llama3-70b (8 of its 80 layers "
       "and lm_head: 33 products, 15.8 GB) or all (default llama3-8b)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         for (const std::string& w : split(v, ',')) {
           if (w == "all") p.a.models = {"llama3-8b", "llama3-70b"};
           else if (w == "llama3-8b" || w == "llama3-70b") p.a.models.push_back(w);
           else fail(std::string(f.name) + ": " + quoted(w) + " is not llama3-8b, llama3-70b or all");
         }
       },
       "chain"},
      // bench gemm_host.
      {"--memory", "LIST", bit(Command::bench), G::gemm_host, "pinned, pageable or all (default all)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         for (const std::string& kind : split(v, ',')) {
           if (kind == "all") p.a.memory = {"pinned", "pageable"};
           else if (kind == "pinned" || kind == "pageable") p.a.memory.push_back(kind);
           else fail(std::string(f.name) + ": " + quoted(kind) + " is not pinned, pageable or all");
         }
       },
       "gemm_host"},
      {"--calls", nullptr, bit(Command::bench), G::gemm_host,
       "after the table, per row: each timed call's time and where the calling thread spent it (setup, "
       "packing and unpacking pageable memory, gemm and copy calls, the wait at the end), in the order they ran",
       store_switch<&Args::calls>, "gemm_host", "prints its list after the table"},
      {"--no-graph", nullptr, bit(Command::bench), G::gemm_host,
       "issue every timed call's copies and products as they come (repeated calls on pinned memory otherwise "
       "replay a CUDA graph captured from the second one)",
       store_switch<&Args::no_graph>, "gemm_host"},
      {"--host-threads", "N", bit(Command::bench), G::gemm_host,
       "threads that stage pageable memory, the caller included (default: one per core up to 12, at most 8 "
       "for calls that stage less than 32 MiB)",
       [](ParseState& p, const Flag& f, const std::string& v) {
         p.a.host_threads = static_cast<int>(parse_int(v, f.name, 1, 256));
       },
       "gemm_host"},
#ifdef RUNGS_EXPERIMENTS
      // The experiment hooks' flags.
      {"--plan", "RxC[:kN/F[:rP]]", bit(Command::bench), G::gemm_host,
       "force the schedule: R row and C column panels, N chunks of k sent k-major first "
       "covering the fraction F of k, op(A)'s pieces of that first phase grouped into P taller ones "
       "(default: the library's)",
       [](ParseState& p, const Flag&, const std::string& v) { p.a.plan = v; }, "gemm_host"},
      {"--trace", nullptr, bit(Command::bench), G::gemm_host,
       "after the table, per row: the timeline of one more call, every copy and product timed with CUDA "
       "events on its stream (start, end, rate), and each engine's busy time and idle gaps (events cost ~2 us "
       "each to issue and the call is not replayed from a CUDA graph: the traced call runs a little slower "
       "than the timed ones)",
       store_switch<&Args::trace>, "gemm_host", "prints a timeline after the table"},
#endif
      // Profiler.
      {"--ncu", "PATH", kProfile, G::profiler, kNcuHelp,
       [](ParseState& p, const Flag& f, const std::string& v) { p.a.ncu = non_empty(v, f, "path"); }},
      // Internal: the commands run this executable again with them.
      {"--first-call", nullptr, bit(Command::bench), G::internal,
       "time this process's first gemm_host call (bench gemm_host's child process)",
       store_switch<&Args::first_call>, "gemm_host"},
      {"--profile-child", nullptr, kProfile, G::internal, "be the process ncu profiles (profile's child process)",
       store_switch<&Args::profile_child>},
  };
  return f;
}

bool is_dist_op(const std::string& op) {
  for (const char* d : kDistOps)
    if (op == d) return true;
  return false;
}

std::string trans_name(TransPair t) {
  return std::string(1, t.a == Trans::N ? 'n' : 't') + (t.b == Trans::N ? 'n' : 't');
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

const char* command_name(Command c) {
  for (const auto& x : kCommands)
    if (x.cmd == c) return x.name;
  return c == Command::help ? "help" : c == Command::version ? "version" : "";
}

const char* format_name(Format f) { return f == Format::csv ? "csv" : f == Format::json ? "json" : "table"; }

std::vector<Shape> default_shapes() { return {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}}; }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

int64_t parse_size(const std::string& text, const std::string& flag, int64_t max) {
  const size_t caret = text.find('^');
  if (caret != std::string::npos) {
    if (text.substr(0, caret) != "2") fail(flag + ": bad size " + quoted(text) + " (powers are written 2^E)");
    int max_e = 0;
    while (max_e < 62 && (int64_t{1} << (max_e + 1)) <= max) ++max_e;
    const int64_t e = parse_int(text.substr(caret + 1), flag + " (exponent of " + text + ")", 0, max_e);
    return int64_t{1} << e;
  }
  for (char c : text)
    if (c < '0' || c > '9') fail(flag + ": bad size " + quoted(text) + " (a positive integer or 2^E)");
  return parse_int(text, flag, 1, max);
}

std::vector<int64_t> parse_size_list(const std::string& text, const std::string& flag, int64_t max) {
  if (text.empty()) fail(flag + ": empty size list");
  std::vector<int64_t> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) fail(flag + ": empty item in " + quoted(text));
    expand_item(item, flag, max, out);
  }
  return out;
}

std::vector<DType> parse_dtype_list(const std::string& text, const std::string& flag) {
  std::vector<DType> out;
  auto add = [&](DType d) {
    for (DType x : out)
      if (x == d) return;
    out.push_back(d);
  };
  for (const std::string& t : split(text, ',')) {
    if (t == "all") {
      for (DType d : {DType::i32, DType::i64, DType::f32, DType::f64}) add(d);
    } else if (t == "i32") add(DType::i32);
    else if (t == "i64") add(DType::i64);
    else if (t == "f32") add(DType::f32);
    else if (t == "f64") add(DType::f64);
    else fail(flag + ": bad type " + quoted(t) + " (i32, i64, f32, f64 or all)");
  }
  return out;
}

std::vector<check::GemmKind> parse_gemm_kind_list(const std::string& text, const std::string& flag) {
  using check::GemmKind;
  std::vector<GemmKind> out;
  auto add = [&](GemmKind d) {
    for (GemmKind x : out)
      if (x == d) return;
    out.push_back(d);
  };
  // fp8 is named only, not part of all: its operands, scales and transposes (nt for cuBLASLt) differ from the
  // other kinds' (the seed set adds fp8 nt by itself).
  const GemmKind all[] = {GemmKind::f32, GemmKind::tf32, GemmKind::tf32x3, GemmKind::f16, GemmKind::bf16};
  for (const std::string& t : split(text, ',')) {
    bool found = t == "all";
    for (GemmKind d : all)
      if (t == "all" || t == check::gemm_kind_name(d)) add(d), found = true;
    if (t == check::gemm_kind_name(GemmKind::fp8)) add(GemmKind::fp8), found = true;
    if (!found) fail(flag + ": bad gemm type " + quoted(t) + " (f32, tf32, tf32x3, f16, bf16, fp8 or all)");
  }
  return out;
}

std::string shape_name(const std::string& op, const Shape& s) {
  if (op == "gemv") return std::to_string(s.m) + "x" + std::to_string(s.n);
  if (op == "reduce") return std::to_string(s.n);
  return shape_name(s);
}

std::string trans_name(const std::string& op, TransPair t) {
  if (op == "gemv") return t.a == Trans::N ? "n" : "t";
  if (op == "reduce") return "";
  return trans_name(t);
}

std::vector<Case> cases_for(const Args& a, const std::string& op) {
  std::vector<Case> out;
  if (op == "reduce") {
    if (a.shapes.empty() && a.dtypes.empty()) {  // the seed workloads, every dtype at both sizes
      for (int64_t n : {int64_t{1} << 24, int64_t{1} << 28})
        for (DType d : {DType::i64, DType::i32, DType::f32, DType::f64}) out.push_back({{0, n, 0}, {}, d});
      return out;
    }
    const std::vector<Shape> shapes =
        a.shapes.empty() ? std::vector<Shape>{{0, int64_t{1} << 24, 0}, {0, int64_t{1} << 28, 0}} : a.shapes;
    const std::vector<DType> dtypes =
        a.dtypes.empty() ? std::vector<DType>{DType::i64, DType::i32, DType::f32, DType::f64} : a.dtypes;
    for (const Shape& s : shapes)
      for (DType d : dtypes) out.push_back({s, {}, d});
    return out;
  }
  if (op == "gemv") {
    const std::vector<TransPair> both = {{Trans::N, Trans::N}, {Trans::T, Trans::N}};
    if (a.shapes.empty()) {
      const std::vector<TransPair> trans = a.trans.empty() ? both : a.trans;
      for (int64_t e = 12; e <= 15; ++e)
        for (TransPair t : trans) out.push_back({{int64_t{1} << e, int64_t{1} << e, 0}, t, DType::f32});
      for (const Shape& s : {Shape{int64_t{1} << 20, 64, 0}, Shape{64, int64_t{1} << 20, 0}})
        for (TransPair t : trans) out.push_back({s, t, DType::f32});
      return out;
    }
    const std::vector<TransPair> trans = a.trans.empty() ? std::vector<TransPair>{{}} : a.trans;
    for (const Shape& s : a.shapes)
      for (TransPair t : trans) out.push_back({s, t, DType::f32});
    return out;
  }
  using check::GemmKind;
  const std::vector<Shape> shapes = a.shapes.empty() ? default_shapes() : a.shapes;
  const std::vector<TransPair> trans = a.trans.empty() ? std::vector<TransPair>{{}} : a.trans;
  // The seed workloads add the tensor-core kinds that matter most: bf16 and fp32-accurate tf32x3.
  // The seed's parts (--workload; all of them by default).
  auto part = [&](const char* w) {
    return a.workloads.empty() || std::find(a.workloads.begin(), a.workloads.end(), w) != a.workloads.end();
  };
  std::vector<GemmKind> kinds = a.gemm_kinds;
  if (kinds.empty() && !a.shapes.empty()) kinds = {GemmKind::f32};
  if (kinds.empty()) {
    if (part("f32")) kinds.push_back(GemmKind::f32);
    if (part("bf16")) kinds.push_back(GemmKind::bf16);
    if (part("tf32x3")) kinds.push_back(GemmKind::tf32x3);
  }
  for (GemmKind kind : kinds) {
    if (a.epi.fp8_out && kind != GemmKind::bf16 && kind != GemmKind::fp8) continue;  // fp8 outputs: bf16, fp8 in
    for (const Shape& s : shapes)
      for (TransPair t : trans) out.push_back({s, t, DType::f32, kind, "", a.scaling, a.epi});
  }
  // The whole seed set (bench, verify) adds the decode workload. tune times warptile's fp32
  // configurations only.
  const bool whole_seed = a.shapes.empty() && a.trans.empty() && a.gemm_kinds.empty();
  if (whole_seed && (a.command == Command::bench || a.command == Command::verify)) {
    if (part("decode"))
      for (const Shape& s : decode_shapes())
        out.push_back({s, {Trans::N, Trans::T}, DType::f32, GemmKind::bf16, kDecodeWorkload, Scaling::tensor, a.epi});
    // fp8 at the seed sizes, nt (the form cuBLASLt's fp8 kernels take), --scaling's layout.
    if (part("fp8"))
      for (const Shape& s : default_shapes())
        out.push_back({s, {Trans::N, Trans::T}, DType::f32, GemmKind::fp8, "", a.scaling, a.epi});
    // fp8 weights at decode shapes, with the per-token / per-channel scales serving stacks keep.
    if (part(kDecodeFp8Workload))
      for (const Shape& s : decode_fp8_shapes())
        out.push_back({s, {Trans::N, Trans::T}, DType::f32, GemmKind::fp8, kDecodeFp8Workload,
                       a.scaling_given ? a.scaling : Scaling::outer, a.epi});
  }
  return out;
}

namespace {
// A batch of m = 1, 16, 64, 128 tokens against each weight matrix (n x k) in turn.
std::vector<Shape> batches_against(std::initializer_list<Shape> weights) {
  std::vector<Shape> out;
  for (const Shape& w : weights)
    for (int64_t m : {1, 16, 64, 128}) out.push_back({m, w.n, w.k});
  return out;
}
}  // namespace

std::vector<Shape> decode_shapes() { return batches_against({{0, 7168, 8192}, {0, 28672, 8192}, {0, 8192, 28672}}); }

std::vector<Shape> decode_fp8_shapes() { return batches_against({{0, 7168, 8192}, {0, 28672, 8192}}); }

std::vector<TransPair> parse_trans_list(const std::string& text, const std::string& flag, const std::string& op) {
  std::vector<TransPair> out;
  const bool gemv = op == "gemv";
  for (const std::string& raw : split(text, ',')) {
    std::string t;
    for (char c : raw) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (t == "all") {
      for (Trans a : {Trans::N, Trans::T}) {
        if (gemv) {
          out.push_back({a, Trans::N});
          continue;
        }
        for (Trans b : {Trans::N, Trans::T}) out.push_back({a, b});
      }
      continue;
    }
    if (gemv) {
      if (t != "n" && t != "t") fail(flag + ": bad transpose " + quoted(raw) + " for gemv (n, t or all)");
      out.push_back({t == "n" ? Trans::N : Trans::T, Trans::N});
      continue;
    }
    if (t.size() != 2 || (t[0] != 'n' && t[0] != 't') || (t[1] != 'n' && t[1] != 't'))
      fail(flag + ": bad transpose " + quoted(raw) + " (nn, nt, tn, tt or all)");
    out.push_back({t[0] == 'n' ? Trans::N : Trans::T, t[1] == 'n' ? Trans::N : Trans::T});
  }
  return out;
}

int64_t reference_rows(const Args& a, const Shape& s) {
  int64_t rows = a.check_rows;
  if (rows < 0) rows = static_cast<double>(s.m) * s.n * s.k > kSampleAbove ? kDefaultCheckRows : 0;
  return rows >= s.m ? 0 : rows;
}

Args parse_args(const std::vector<std::string>& argv) {
  Args a;
  a.argv = argv;
  if (argv.empty()) {
    a.command = Command::help;
    return a;
  }
  const std::string& first = argv[0];
  if (is_help(first) || first == "help") {
    a.command = Command::help;
    if (first == "help" && argv.size() > 1) {
      a.help_for = find_command(argv[1]);
      if (a.help_for == Command::none)
        fail("unknown command " + quoted(argv[1]) + " (commands: " + commands_list() + ")");
    }
    return a;
  }
  if (first == "--version" || first == "version") {
    a.command = Command::version;
    return a;
  }
  a.command = find_command(first);
  if (a.command == Command::none) {
    if (!first.empty() && first[0] == '-')
      fail("unknown flag " + quoted(first) + " before the command (usage: rungs <command> [flags]; see rungs --help)");
    fail("unknown command " + quoted(first) + " (commands: " + commands_list() + "; see rungs --help)");
  }
  const std::string cmd = command_name(a.command);
  for (size_t i = 1; i < argv.size(); ++i) {
    if (is_help(argv[i])) {
      a.help_for = a.command;
      a.command = Command::help;
      return a;
    }
  }

  ParseState st{a, {}, {}, {}, {}, {}, {}};
  std::vector<const Flag*> given;  // in command-line order
  bool positional_seen = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& tok = argv[i];
    if (tok.size() > 1 && tok[0] == '-' && !(tok[1] >= '0' && tok[1] <= '9')) {
      std::string name = tok, value;
      bool inline_value = false;
      const size_t eq = tok.find('=');
      if (eq != std::string::npos) {
        name = tok.substr(0, eq);
        value = tok.substr(eq + 1);
        inline_value = true;
      }
      const Flag* f = find_flag(name);
      if (f == nullptr)
        fail("unknown flag " + name + " for 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
      if (!(f->commands & bit(a.command)))
        fail("flag " + name + " does not apply to 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
      if (f->value == nullptr) {
        if (inline_value) fail("flag " + name + " takes no value");
      } else if (!inline_value) {
        if (i + 1 >= argv.size()) fail("flag " + name + " needs a value (see rungs " + cmd + " --help)");
        value = argv[++i];
      }
      f->store(st, *f, value);
      given.push_back(f);
      continue;
    }
    // A positional argument: the operation.
    const bool takes_op = a.command == Command::list || a.command == Command::bench ||
                          a.command == Command::verify || a.command == Command::tune || a.command == Command::profile;
    if (!takes_op || positional_seen)
      fail("unexpected argument " + quoted(tok) + " for 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
    bool known = (tok == "gemm_host" || tok == "chain") && a.command == Command::bench;
    for (const char* op : kOps) known = known || tok == op;
    if (is_dist_op(tok)) {
      if (a.command != Command::bench && a.command != Command::list)
        fail(std::string(command_name(a.command)) + ": " + tok + " is timed by rungs bench and checked by the GPU "
             "tests (rungs bench " + tok + " ...)");
      known = true;
    }
    if (!known)
      fail("unknown operation " + quoted(tok) +
           " (operations: gemm, gemv, reduce; bench also takes gemm_host, chain, allgather_gemm and "
           "gemm_reducescatter)");
    a.op = tok;
    positional_seen = true;
  }
  if (a.command == Command::profile && a.op.empty())
    fail("profile: name the operation (rungs profile gemm|gemv|reduce [flags]; see rungs profile --help)");

  for (const Flag* f : given)
    if (f->only_op && a.op != f->only_op)
      fail(std::string(f->name) + " applies to rungs " + cmd + " " + f->only_op + " only");
  for (const Flag* f : given)
    if (f->after_table && a.format != Format::table)
      fail(std::string(f->name) + " " + f->after_table + ": use --format table");
  if (a.world != 0 && !is_dist_op(a.op))
    fail("--world applies to rungs bench allgather_gemm|gemm_reducescatter only");
  if (a.pieces != 0 && !is_dist_op(a.op))
    fail("--pieces applies to rungs bench allgather_gemm|gemm_reducescatter only");
  if (is_dist_op(a.op)) {
    if (!st.trans.empty()) fail("--trans does not apply to " + a.op + " (A and B are stored as they are multiplied)");
    if (!st.dtype.empty()) fail("--dtype does not apply to " + a.op + " (bench times bf16)");
  }
  if (a.op == "chain") {  // the model sets each product's n and k (W stored n x k, nt); --m the batch
    if (!st.size.empty() || !st.n.empty() || !st.k.empty() || !st.trans.empty() || !a.workloads.empty() || a.epi.on)
      fail("bench chain takes --model, --m and --dtype: the model gives each product's n and k (nt)");
    if (!st.m.empty())
      for (int64_t m : parse_size_list(st.m, "--m", 4096)) a.shapes.push_back({m, 0, 0});
    if (!st.dtype.empty())
      for (check::GemmKind kind : parse_gemm_kind_list(st.dtype, "--dtype")) {
        if (kind != check::GemmKind::bf16 && kind != check::GemmKind::fp8)
          fail(std::string("--dtype: bench chain times bf16 or fp8 (got ") + check::gemm_kind_name(kind) + ")");
        a.gemm_kinds.push_back(kind);
      }
    return a;
  }
  if (a.command == Command::tune) {
    if (a.op.empty()) a.op = "gemm";
    if (a.op != "gemm") fail("tune: only gemm has tunable configurations (got " + a.op + ")");
    if (a.alpha == 0.0f) fail("tune: --alpha 0 does not run the kernels (C = beta*C); use a non-zero alpha");
  }

  // Flags whose meaning depends on the ladder need it named when they are not gemm's.
  const bool any_dim = !st.m.empty() || !st.n.empty() || !st.k.empty();
  const bool shaped = !st.size.empty() || any_dim || !st.trans.empty() || !st.dtype.empty();
  if (!a.workloads.empty() && shaped)
    fail("--workload picks parts of the seed workload: it goes without --size, --m, --n, --k, --trans and --dtype");
  if (shaped && a.op.empty() && (a.command == Command::bench || a.command == Command::verify))
    fail("--size, --m, --n, --k, --trans and --dtype mean different things per ladder: name the operation "
         "(rungs " + cmd + " gemm|gemv|reduce ...)");
  const std::string op = a.op.empty() ? "gemm" : a.op;
  if (!st.dtype.empty()) {
    if (op == "gemm") {
      a.gemm_kinds = parse_gemm_kind_list(st.dtype, "--dtype");
      if (a.command == Command::tune)
        for (check::GemmKind kind : a.gemm_kinds)
          if (kind == check::GemmKind::fp8) fail("tune: --dtype fp8 has no tunable configurations");
    } else {
      a.dtypes = parse_dtype_list(st.dtype, "--dtype");
      if (op != "reduce" && !(a.dtypes.size() == 1 && a.dtypes[0] == DType::f32))
        fail("--dtype: " + op + " is fp32 only (--dtype applies to reduce and gemm)");
      if (op != "reduce") a.dtypes.clear();
    }
  }
  if (a.scaling_given) {
    bool fp8 = false;
    for (check::GemmKind kind : a.gemm_kinds) fp8 = fp8 || kind == check::GemmKind::fp8;
    for (const char* w : {"fp8", kDecodeFp8Workload})
      fp8 = fp8 || std::find(a.workloads.begin(), a.workloads.end(), w) != a.workloads.end();
    if (!fp8) fail("--scaling applies to --dtype fp8 (or --workload fp8, decode_fp8) only");
  }
  if (a.epi.on) {
    if (op != "gemm") fail("--epilogue, --gated and --out apply to gemm only");
    if (a.epi.fp8_out && a.beta != 0.0f) fail("--out fp8: C is quantized from the epilogue's result alone (--beta 0)");
    if (a.epi.fp8_out)
      for (check::GemmKind kind : a.gemm_kinds)
        if (kind != check::GemmKind::bf16 && kind != check::GemmKind::fp8)
          fail(std::string("--out fp8 takes bf16 or fp8 inputs (got --dtype ") + check::gemm_kind_name(kind) + ")");
  }
  if (!st.trans.empty()) {
    if (op == "reduce") fail("--trans does not apply to reduce");
    a.trans = parse_trans_list(st.trans, "--trans", op);
  }

  if (op == "reduce") {
    // --n (or --size) lists the lengths.
    if (!st.m.empty() || !st.k.empty()) fail("reduce takes --n LIST (the lengths), not --m or --k");
    if (!st.size.empty() && !st.n.empty()) fail("reduce: give the lengths once, with --n or --size");
    const std::string& t = st.n.empty() ? st.size : st.n;
    if (!t.empty())
      for (int64_t v : parse_size_list(t, st.n.empty() ? "--size" : "--n", kMaxReduceN)) a.shapes.push_back({0, v, 0});
    return a;
  }
  if (op == "gemv") {
    // --size gives square A; --m and --n (together) give A's rows and columns.
    if (!st.k.empty()) fail("gemv takes --m and --n (A is m x n), not --k");
    if (!st.size.empty() || any_dim) {
      if (st.size.empty() && (st.m.empty() || st.n.empty()))
        fail(std::string("gemv: --m and --n go together (or give --size); missing ") + (st.m.empty() ? "--m" : "--n"));
      const std::vector<int64_t> sizes = st.size.empty() ? std::vector<int64_t>{0} : parse_size_list(st.size, "--size");
      const std::vector<int64_t> ms = st.m.empty() ? std::vector<int64_t>{} : parse_size_list(st.m, "--m");
      const std::vector<int64_t> ns = st.n.empty() ? std::vector<int64_t>{} : parse_size_list(st.n, "--n");
      for (int64_t sz : sizes)
        for (int64_t m : ms.empty() ? std::vector<int64_t>{sz} : ms)
          for (int64_t n : ns.empty() ? std::vector<int64_t>{sz} : ns) {
            if (a.shapes.size() >= kMaxListItems) fail("more than " + std::to_string(kMaxListItems) + " shapes");
            a.shapes.push_back({m, n, 0});
          }
    }
    return a;
  }

  // gemm. --size gives square shapes; --m/--n/--k lists fix dimensions; every combination runs.
  if (!st.size.empty() || any_dim) {
    if (st.size.empty() && (st.m.empty() || st.n.empty() || st.k.empty())) {
      std::string missing;
      if (st.m.empty()) missing += " --m";
      if (st.n.empty()) missing += " --n";
      if (st.k.empty()) missing += " --k";
      fail("--m, --n and --k go together (or give --size); missing" + missing);
    }
    const std::vector<int64_t> sizes = st.size.empty() ? std::vector<int64_t>{0} : parse_size_list(st.size, "--size");
    const std::vector<int64_t> ms = st.m.empty() ? std::vector<int64_t>{} : parse_size_list(st.m, "--m");
    const std::vector<int64_t> ns = st.n.empty() ? std::vector<int64_t>{} : parse_size_list(st.n, "--n");
    const std::vector<int64_t> ks = st.k.empty() ? std::vector<int64_t>{} : parse_size_list(st.k, "--k");
    for (int64_t s : sizes) {
      const std::vector<int64_t> m1 = ms.empty() ? std::vector<int64_t>{s} : ms;
      const std::vector<int64_t> n1 = ns.empty() ? std::vector<int64_t>{s} : ns;
      const std::vector<int64_t> k1 = ks.empty() ? std::vector<int64_t>{s} : ks;
      for (int64_t m : m1)
        for (int64_t n : n1)
          for (int64_t k : k1) {
            if (a.shapes.size() >= kMaxListItems) fail("more than " + std::to_string(kMaxListItems) + " shapes");
            a.shapes.push_back({m, n, k});
          }
    }
  }
  return a;
}

std::string epi_name(const EpiFlags& e) {
  if (!e.on) return "";
  std::string s;
  auto add = [&](const char* w) { s += (s.empty() ? "" : "+") + std::string(w); };
  if (e.bias) add("bias");
  if (e.act == Activation::relu) add("relu");
  if (e.act == Activation::gelu) add("gelu");
  if (e.act == Activation::silu) add("silu");
  if (e.gated) add("gated");
  if (e.fp8_out) add("fp8");
  return s;
}

}  // namespace rungs::cli
