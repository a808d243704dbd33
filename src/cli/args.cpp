// The `rungs` argument parser and help texts (no CUDA calls: the CPU tests drive them).
#include "cli/args.hpp"

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

constexpr unsigned bit(Command c) { return 1u << static_cast<unsigned>(c); }
constexpr unsigned kRun = bit(Command::bench) | bit(Command::verify) | bit(Command::tune);
constexpr unsigned kTimed = bit(Command::bench) | bit(Command::tune);
constexpr unsigned kProfile = bit(Command::profile);
constexpr unsigned kShaped = kRun | kProfile;  // the problem's flags: shapes, data, device, output
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

const FlagInfo* find_flag(const std::string& name) {
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

const char* kSizeGrammar =
    "  LIST is comma-separated sizes and ranges (sizes are 1 .. 2^31-1):\n"
    "      4096  or  2^12           one size\n"
    "      1024:8192:x2             1024, 2048, 4096, 8192 (multiply by 2; a:b alone means a:b:x2)\n"
    "      1000:4000:+1000          1000, 2000, 3000, 4000 (add 1000)\n"
    "      512,1000,2^11:2^13       mixed\n";

const char* kShapeFlags =
    "Shapes (they need the operation named; fp32 row-major, tight ld):\n"
    "  gemm: C(m x n) = alpha * op(A)(m x k) * op(B)(k x n) + beta * C\n"
    "  --size LIST          square shapes m = n = k = each size. With --size, any of --m/--n/--k given\n"
    "                       fixes that dimension instead (--size 1024:8192:x2 --k 256)\n"
    "  --m LIST, --n LIST, --k LIST\n"
    "                       the dimensions; every combination is run. Without --size all three are needed\n"
    "  gemv: A is m x n (stored rows x columns); y = alpha * op(A) x + beta * y\n"
    "  --size LIST          square A;  --m LIST --n LIST: every combination\n"
    "  reduce: the sum of n elements\n"
    "  --n LIST (or --size) the lengths, up to 2^36 (2^31 and more take the 64-bit index paths)\n"
    "  --dtype LIST         i32, i64, f32, f64 or all (default all); i32 sums exactly into int64\n"
    "  gemm --dtype LIST    f32 (fp32 CUDA cores), tf32, tf32x3 (float inputs on tensor cores), f16, bf16\n"
    "                       or all (default f32; the seed shapes without --size add bf16 and tf32x3)\n";

const char* kTransFlags =
    "  --trans LIST         gemm: nn, nt, tn, tt (comma-separated) or all; default nn. The first letter is\n"
    "                       A's, the second B's: t = the operand is stored transposed.\n"
    "                       gemv: n (y = A x), t (y = A^T x) or all; default n (the seed workloads: both)\n"
    "  --alpha X            default 1\n";

const char* kDataFlags =
    "  --seed N             seed of the random inputs and of the sampled rows (default 42)\n"
    "  --check-rows N|all   rows of C checked against the fp64 reference (default: all rows when\n"
    "                       m*n*k <= 2^30, else 256 random rows; the output says which)\n"
    "  --device N           the CUDA device to use (default 0)\n";

const char* kTimingFlags =
    "  --reps N             timed repetitions (default 20). 20 or more is the method for reported numbers;\n"
    "                       fewer is allowed for quick looks and the output notes it\n"
    "  --warmup N           untimed runs before timing (default 3)\n"
    "  --flush-l2 on|off    flush the L2 before each timed launch (default on)\n"
    "  --baseline NAME      the rung timed beside every other (default auto: each ladder's vendor rung,\n"
    "                       cublas for gemm and gemv, cub for reduce; none = no baseline)\n";

const char* kOutputFlags =
    "Output:\n"
    "  --format table|csv|json\n"
    "                       default table. csv: one row per measurement, with a header. json: Google\n"
    "                       Benchmark's layout: {\"context\": {...}, \"benchmarks\": [...]}\n"
    "  --output FILE        write the output to FILE instead of stdout (with csv or json the table is\n"
    "                       still printed on stdout)\n"
    "  --quiet              no progress lines on stderr\n"
    "  --help, -h           this help\n";

const char* kExit =
    "Exit status: 0 success; 1 a rung failed verification (a FAIL or ERROR row; the results are still\n"
    "written); 2 bad usage, no usable GPU, or shapes that do not fit in device memory; 3 a CUDA or cuBLAS\n"
    "failure. Errors are one line on stderr: \"rungs: error: ...\".\n";

std::string top_help() {
  std::ostringstream os;
  os << "rungs " << RUNGS_VERSION
     << ": GPU linear-algebra kernels as ladders of rungs, each verified against fp64\n"
        "and timed beside the vendor library (cuBLAS, CUB).\n"
        "\n"
        "Usage:\n"
        "  rungs <command> [operation] [flags]\n"
        "  rungs <command> --help       everything about one command (rungs bench --help: the method)\n"
        "  rungs --version\n"
        "\n"
        "Commands:\n"
        "  info      the device: name, SMs, clocks, L2, the fp32 peak assumed for \"% peak\", the DRAM\n"
        "            bandwidth (measured), CUDA runtime, driver and cuBLAS versions\n"
        "  list      the rungs of each ladder: number, name, min_sm, baseline, summary (no GPU needed)\n"
        "  bench     time rungs beside the baseline, each checked against fp64. With no arguments: the\n"
        "            seed workloads of every ladder: SGEMM nn 1024..8192; SGEMV 2^12..2^15 squares and\n"
        "            2^20 x 64, 64 x 2^20, both transposes; reduce_sum of 2^24 and 2^28 elements, every dtype\n"
        "  verify    check rungs against the fp64 reference on fresh random data; exit 1 if any fails\n"
        "  tune      time every warptile tile configuration per size and mark the fastest\n"
        "  profile   Nsight Compute (ncu) on one launch of each rung: time, registers, occupancy, DRAM %,\n"
        "            L2 hit rate, bank conflicts, issue and pipe use, the top warp-stall reason\n"
        "\n"
        "Operations (ladders): gemm (SGEMM), gemv (SGEMV), reduce (reduce_sum). Without one, bench and\n"
        "verify run every ladder; profile needs one.\n"
        "\n"
        "Common flags (bench, verify, tune, profile; see each command's --help):\n"
        "  --size LIST, --m LIST, --n LIST, --k LIST, --trans LIST, --dtype LIST (these need the operation\n"
        "  named), --alpha X, --beta X, --seed N,\n"
        "  --check-rows N|all, --device N, --format table|csv|json, --output FILE, --quiet\n"
        "  bench and tune also: --reps N, --warmup N, --flush-l2 on|off, --baseline NAME\n"
        "  bench, verify and profile also: --variant LIST\n"
        "  profile also: --ncu PATH\n"
        "  info: --device N\n"
        "\n"
        "Examples:\n"
        "  rungs info\n"
        "  rungs list gemm\n"
        "  rungs bench                                         the seed workloads\n"
        "  rungs bench gemm --size 4096 --variant warptile,cublas\n"
        "  rungs bench gemm --size 1024:8192:x2 --trans nn,tn --format json --output bench.json\n"
        "  rungs bench gemm --m 4096 --n 4096 --k 4096 --reps 50\n"
        "  rungs verify gemm --m 1000 --n 777 --k 513 --trans all\n"
        "  rungs bench gemv --m 2^20 --n 64 --trans all\n"
        "  rungs bench reduce --n 2^24,2^28 --dtype f32,f64\n"
        "  rungs tune gemm --size 2048,4096\n"
        "  rungs profile gemm --size 4096 --variant warptile,cublas\n"
        "\n"
     << kExit;
  return os.str();
}

std::string bench_help() {
  std::ostringstream os;
  os << "rungs bench: time rungs beside the baseline (cuBLAS, CUB), each result checked against fp64 (or an\n"
        "exact sum for reduce)\n"
        "\n"
        "Usage:\n"
        "  rungs bench                  the seed workloads: every rung of every ladder, one table per\n"
        "                               operation: gemm nn 1024..8192; gemv M = N = 2^12..2^15 and\n"
        "                               2^20 x 64, 64 x 2^20, n and t; reduce 2^24 and 2^28, every dtype\n"
        "  rungs bench OP [flags]       OP = gemm, gemv or reduce: its seed workloads unless shapes are given\n"
        "  rungs bench gemm_host [flags]  the host-to-host flow (rungs::gemm_host), see below\n"
        "\n"
     << kShapeFlags << kSizeGrammar << kTransFlags
     << "  --beta X             default 0. With beta != 0 the timed runs accumulate into C (values grow;\n"
        "                       fine for timing); the correctness run starts from C0\n"
        "\n"
        "Rungs:\n"
        "  --variant LIST       all (default), or rung names or numbers, comma-separated (see rungs list)\n"
        "\n"
        "Method:\n"
     << kTimingFlags << kDataFlags << "\n"
     << kOutputFlags
     << "\n"
        "How it measures (per shape, i.e. m, n, k and trans):\n"
        "  1. Device buffers, handles and data are set up outside the timed region: random non-zero inputs\n"
        "     from check::make_gemm_data, uploaded once; the fp64 reference (check::gemm_reference, all or\n"
        "     sampled rows) is computed once and reused for every rung.\n"
        "  2. Per rung: one correctness run (C filled with NaN; C0 when beta != 0), C copied back and compared\n"
        "     with the reference (check::compare_gemm); then --warmup untimed runs; then --reps timed\n"
        "     repetitions interleaved with the baseline:\n"
        "         (flush L2, event, rung, event, flush L2, event, baseline, event) x reps\n"
        "     The L2 flush is a kernel that reads 2x the device's L2 size of another buffer, outside the\n"
        "     events: the L2 is left holding clean lines (a memset would leave dirty ones, written back\n"
        "     during the timed launch).\n"
        "  3. Each launch is timed with cudaEventElapsedTime; median, min and max over the repetitions.\n"
        "     TFLOP/s = 2*m*n*k / median; % peak is against the fp32 peak `rungs info` shows (SMs x fp32\n"
        "     lanes per SM x 2 x max SM clock). x <baseline> = baseline median / rung median, both from the\n"
        "     same interleaved loop (> 1 = faster than the baseline); the baseline's own row shows 1.00.\n"
        "     Where the interleaved baseline's median is more than 3 % off the baseline's own row (seen at\n"
        "     8192^3 on the H100: cuBLAS up to 5 % slower interleaved), a note gives the ratio to the row too.\n"
        "  4. A rung that cannot run the problem (rungs::Unsupported: cpu_naive beyond m*n*k = 2^31, a rung\n"
        "     that needs a newer GPU, ...) is a SKIP row with the reason. If one warm-up run takes more than\n"
        "     1 s, the repetitions are cut to what fits in about 10 s (at least 3) and the reps column\n"
        "     marks the row with '*' (a note below the table says why).\n"
        "  Every call goes through the public API: rungs::gemm / gemv / reduce_sum(..., Options{variant, stream}).\n"
        "  gemv and reduce are bandwidth-bound: their tables show GB/s = the bytes the operation must move\n"
        "     (gemv: A once + x + y; reduce: the input) / median, and % DRAM against the streaming-read\n"
        "     bandwidth `rungs info` measures. gemv is checked against fp64 on every output; reduce against\n"
        "     an exact sum (integers exactly; the accurate float rungs within 1 ulp + 2^-40 sum|x| for f32,\n"
        "     2^-69 sum|x| for f64; the others within a plain sum's bound, src/check/reduce_check.hpp).\n"
        "  Progress goes to stderr: \"[gemm 12/48] warptile 4096x4096x4096 nn\".\n"
        "\n"
        "Table columns: rung (number and name); shape (m x n x k and trans); median, min, max (ms); reps;\n"
        "  TFLOP/s; % peak; x <baseline>; error = ||C - Cref||_F / ||Cref||_F against fp64 on the checked\n"
        "  rows; check = pass, FAIL (outside the tolerances of src/check/gemm_check.hpp; still timed), SKIP,\n"
        "  or ERROR (the rung threw rungs::Error; the run goes on unless the CUDA context is lost).\n"
        "JSON benchmarks entries: name (\"gemm/warptile/4096x4096x4096/nn\"), run_name, run_type (iteration),\n"
        "  repetitions, iterations, real_time (the median), cpu_time (= real_time), time_unit (ms), min, max,\n"
        "  tflops,"
        " pct_peak, baseline, baseline_real_time, speedup_vs_baseline, error_normwise, error_max_rel,\n"
        "  bound_ratio, checked_rows, pass, status (ok|fail|skip|error), reason; SKIP and ERROR entries also\n"
        "  carry error_occurred and error_message as Google Benchmark writes them. The context holds date,\n"
        "  host_name, executable, num_cpus, device, sm, sms, peak_tflops, dram_gbs, cuda_runtime, cuda_driver,\n"
        "  cublas, git_commit (env RUNGS_GIT_COMMIT, else git rev-parse), library_build_type and the method.\n"
        "\n"
        "gemm_host (matrices in host memory; default sizes 1024, 4096, 8192, nn, both memory kinds):\n"
        "  --memory LIST        pinned, pageable or all (default all)\n"
        "  --variant NAME       the device rung used on each block (default auto)\n"
        "  --plan RxC[:kN/F[:rP]]  force the schedule (experiments): R row and C column panels, N chunks\n"
        "                       of k sent k-major first covering the fraction F of k, op(A)'s pieces of that\n"
        "                       first phase grouped into P taller ones (default: the library's)\n"
        "  --trace              after the table, per row: the timeline of one more call, every copy and product\n"
        "                       timed with CUDA events on its stream (start, end, rate), and each engine's busy\n"
        "                       time and idle gaps (events cost ~2 us each to issue and the call is not replayed\n"
        "                       from a CUDA graph: the traced call runs a little slower than the timed ones)\n"
        "  --calls              after the table, per row: each timed call's time and where the calling thread\n"
        "                       spent it (setup, packing and unpacking pageable memory, gemm and copy calls,\n"
        "                       the wait at the end), in the order they ran\n"
        "  --no-graph           issue every timed call's copies and products as they come (repeated calls on\n"
        "                       pinned memory otherwise replay a CUDA graph captured from the second one)\n"
        "  --host-threads N     threads that stage pageable memory, the caller included (default: one per\n"
        "                       core up to 12, at most 8 for calls that stage less than 32 MiB; experiments)\n"
        "  Per shape and memory kind: one checked call (C poisoned), then --warmup and --reps calls of the\n"
        "  flow interleaved with the naive flow (cudaMemcpyAsync of A, B (and C when beta != 0), rungs::gemm,\n"
        "  cudaMemcpyAsync of C back, on one stream; device buffers allocated before timing), both on the\n"
        "  host clock, C reset outside the timed region. Also: the kernel alone (events, L2 flushed), plain\n"
        "  copies of the bytes each way (from pinned memory, and from the row's memory kind), the floor =\n"
        "  max(bytes in / pinned H2D, bytes out / pinned D2H, kernel) and x floor = flow / floor; and the\n"
        "  first call of a fresh process (this executable run again with --first-call: CUDA context start,\n"
        "  the library's set-up and the call; for pinned memory the pinned allocation too).\n"
        "\n"
        "Examples:\n"
        "  rungs bench\n"
        "  rungs bench gemm_host --size 1024,4096 --memory pinned\n"
        "  rungs bench gemm --size 4096 --variant warptile,cublas --reps 50\n"
        "  rungs bench gemm --size 1024:8192:x2 --trans nn,tn --format json --output bench.json\n"
        "  rungs bench gemm --m 4096 --n 4096 --k 4096 --beta 1 --flush-l2 off\n"
        "  rungs bench gemm --size 2^10:2^14 --variant 9 --baseline none --format csv\n"
        "  rungs bench gemv --size 2^12:2^15 --trans all --variant multi_row,split_k,cublas\n"
        "  rungs bench reduce --n 2^24 --dtype i64 --variant 1,2,3,8,cub\n"
        "\n"
     << kExit;
  return os.str();
}

std::string verify_help() {
  std::ostringstream os;
  os << "rungs verify: check rungs against the fp64 reference on fresh random data\n"
        "\n"
        "Usage:\n"
        "  rungs verify [OP] [flags]    every ladder, or OP (gemm, gemv, reduce), at its seed workloads\n"
        "                               unless shapes are given\n"
        "\n"
        "Each selected rung runs once per shape on random non-zero inputs (check::make_gemm_data with --seed)\n"
        "into a C filled with NaN (C0 when beta != 0); the result is compared with the fp64 reference\n"
        "(check::gemm_reference) on all rows, or on 256 random rows when m*n*k > 2^30 (the output says so).\n"
        "Per rung it prints: the max relative error, the normwise error ||C - Cref||_F / ||Cref||_F and its\n"
        "tolerance, the bound ratio (max |c - ref| over the rigorous elementwise bound; <= 1 is inside it)\n"
        "and pass/FAIL. A rung that cannot run the problem (rungs::Unsupported) prints SKIP with the reason.\n"
        "Exit status 1 if any rung fails.\n"
        "\n"
     << kShapeFlags << kSizeGrammar << kTransFlags
     << "  --beta X             default 0\n"
        "\n"
        "Rungs:\n"
        "  --variant LIST       all (default), or rung names or numbers, comma-separated (see rungs list)\n"
        "\n"
        "Data:\n"
     << kDataFlags << "\n"
     << kOutputFlags << "\n"
     << "Examples:\n"
        "  rungs verify\n"
        "  rungs verify gemm --m 1000 --n 777 --k 513 --trans all\n"
        "  rungs verify gemm --size 1:64:+1 --variant warptile --format csv\n"
        "  rungs verify gemv --m 1:70:+1 --n 3,4097 --trans all\n"
        "  rungs verify reduce --n 1:100:+1,3000000000 --dtype all\n"
        "\n"
     << kExit;
  return os.str();
}

std::string tune_help() {
  std::ostringstream os;
  os << "rungs tune: time every tile configuration of the warptile rung\n"
        "\n"
        "Usage:\n"
        "  rungs tune [gemm] [flags]    the seed sizes (1024, 2048, 4096, 8192) unless --size or --m/--n/--k\n"
        "\n"
        "Each configuration of rungs::sgemm::warptile::configs() runs through run_config() with the bench\n"
        "method (see rungs bench --help): a correctness run against fp64, warm-up, then timed repetitions\n"
        "interleaved with the baseline, L2 flushed before each. One table per shape; the fastest passing\n"
        "configuration (lowest median) is marked '*', and a summary lists the fastest per shape, so the\n"
        "choice table in src/gemm/09_warptile.cu can be set from measurements.\n"
        "\n"
     << kShapeFlags << kSizeGrammar << kTransFlags << "  --beta X             default 0\n"
     << "\n"
        "Method:\n"
     << kTimingFlags << kDataFlags << "\n"
     << kOutputFlags << "\n"
     << "Examples:\n"
        "  rungs tune gemm --size 1024:8192:x2\n"
        "  rungs tune gemm --m 4096 --n 4096 --k 1024,4096 --format csv --output tune.csv\n"
        "\n"
     << kExit;
  return os.str();
}

std::string profile_help() {
  std::ostringstream os;
  os << "rungs profile: Nsight Compute (ncu) on one launch of each rung, one row per rung\n"
        "\n"
        "Usage:\n"
        "  rungs profile OP [flags]     OP = gemm, gemv or reduce. Without shapes, one representative case:\n"
        "                               gemm 4096 x 4096 x 4096 nn f32; gemv 16384 x 16384 n; reduce i64 2^24\n"
        "\n"
        "Per case and rung this executable runs again under ncu (with --profile-child, an internal flag): it\n"
        "builds the case's data and device buffers as bench does, runs the rung once unprofiled and checks it\n"
        "against fp64 (a rung that fails is a FAIL row, not profiled), then profiles ONE launch between\n"
        "cudaProfilerStart and cudaProfilerStop (ncu --profile-from-start off --clock-control none: clocks not\n"
        "locked; ncu flushes the caches before each replay pass). A rung may launch several kernels (split-k,\n"
        "cuBLAS): time sums them and kern counts them; the other columns are the main kernel's (the longest),\n"
        "bank conflicts excepted (summed). Rung 0, cpu_naive, runs on the host: a SKIP row; so is a rung the\n"
        "device or the case's type cannot run. Times are of one profiled launch: cite rungs bench's medians.\n"
        "\n"
        "Columns (ncu metrics; n/a = ncu did not report it: it leaves out metric names it does not know):\n"
        "  time         gpu__time_duration.sum over the rung's kernels;  kern  kernels launched\n"
        "  regs         launch__registers_per_thread\n"
        "  occ %        achieved occupancy, sm__warps_active.avg.pct_of_peak_sustained_active\n"
        "  DRAM %       dram__throughput.avg.pct_of_peak_sustained_elapsed\n"
        "  L2 hit %     lts__t_sector_hit_rate.pct\n"
        "  bank confl   shared-memory bank conflicts, l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum\n"
        "               + ..._op_st.sum, over all the rung's kernels\n"
        "  issue %      smsp__issue_active.avg.pct_of_peak_sustained_active\n"
        "  FMA %        sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active\n"
        "  tensor %     sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active (where ncu lacks it:\n"
        "               sm__pipe_tensor_op_hmma_cycles_active's)\n"
        "  top stall    the reason R with the largest smsp__average_warps_issue_stalled_R_per_issue_active.ratio\n"
        "               (warps stalled on R per issued instruction; \"selected\" left out), and that ratio\n"
        "  main kernel  the longest kernel's name, shortened (csv and json also give it in full)\n"
        "\n"
     << "Shapes (bench's flags; lists give several cases, a row per case and rung):\n"
        "  gemm    --size LIST (square), or --m LIST --n LIST --k LIST (with --size, those given fix that\n"
        "          dimension); --trans nn|nt|tn|tt|all (default nn); --dtype f32|tf32|tf32x3|f16|bf16|all\n"
        "          (default f32). Default shape 4096 x 4096 x 4096\n"
        "  gemv    --size LIST (square A), or --m LIST --n LIST (A is m x n); --trans n|t|all (default n).\n"
        "          Default 16384 x 16384\n"
        "  reduce  --n LIST (or --size), up to 2^36; --dtype i32|i64|f32|f64|all (default i64). Default 2^24\n"
        "  --alpha X, --beta X  default 1 and 0\n"
     << kSizeGrammar << "\n"
        "Rungs:\n"
        "  --variant LIST       default: every rung of OP that runs on the GPU and does the case's type, then\n"
        "                       auto; or rung names or numbers and auto, comma-separated (see rungs list)\n"
        "\n"
        "Profiler:\n"
        "  --ncu PATH           the ncu executable. Default: ncu on PATH, else ncu in the bin directory of\n"
        "                       the CUDA toolkit this build used ("
     << (std::string(RUNGS_CUDA_BIN_DIR).empty() ? std::string("unknown") : std::string(RUNGS_CUDA_BIN_DIR))
     << "), else\n"
        "                       /usr/local/cuda/bin/ncu, else the newest /opt/nvidia/nsight-compute/*/ncu\n"
        "  Reading the counters needs permission: ERR_NVGPUCTRPERM means the driver lets admin users only\n"
        "  (run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0;\n"
        "  https://developer.nvidia.com/ERR_NVGPUCTRPERM).\n"
        "\n"
        "Data:\n"
     << kDataFlags
     << "\n"
        "Output:\n"
        "  --format table|csv|json\n"
        "                       default table. csv: one row per case and rung, with a header. json:\n"
        "                       {\"context\": {...}, \"profiler\": {...}, \"profiles\": [...]}, the context as\n"
        "                       bench's; each profile also holds every stall reason's ratio\n"
        "  --output FILE        write the output to FILE instead of stdout (with csv or json the table is\n"
        "                       still printed on stdout)\n"
        "  --quiet              no progress lines on stderr\n"
        "  --help, -h           this help\n"
        "\n"
        "Examples:\n"
        "  rungs profile gemm --size 4096\n"
        "  rungs profile gemm --size 4096 --dtype bf16 --variant wgmma,wgmma_ws,wgmma_tma_store,cublas --format csv\n"
        "  rungs profile gemv --m 2^20 --n 64 --trans all\n"
        "  rungs profile reduce --n 2^28 --dtype f32,f64 --variant single_pass,cub\n"
        "\n"
        "Exit status: 0 success; 1 a rung failed verification (FAIL) or could not be profiled (ERROR); the\n"
        "other rows are still written; 2 bad usage, ncu not found, no usable GPU, ncu unable to read the\n"
        "counters, or a case that does not fit in device memory; 3 a CUDA failure. Errors are one line on\n"
        "stderr: \"rungs: error: ...\".\n";
  return os.str();
}

std::string info_help() {
  return "rungs info: the device and the numbers the benchmarks assume\n"
         "\n"
         "Usage:\n"
         "  rungs info [--device N]\n"
         "\n"
         "Prints: device name, compute capability, SM count, max SM clock, memory clock and bus width, L2\n"
         "size, memory; the fp32 peak assumed for \"% peak\" = SMs x fp32 lanes per SM (per-architecture\n"
         "table) x 2 (an FMA is two flops) x max SM clock; the DRAM bandwidth assumed, MEASURED with a\n"
         "large device-to-device cudaMemcpyAsync (median of several, counting bytes read + written) beside\n"
         "the theoretical one from the memory clock; the CUDA runtime, driver and cuBLAS versions.\n"
         "\n"
         "  --device N           the CUDA device (default 0)\n"
         "  --help, -h           this help\n"
         "\n" +
         std::string(kExit);
}

std::string list_help() {
  return "rungs list: the rungs of each ladder (no GPU needed)\n"
         "\n"
         "Usage:\n"
         "  rungs list [gemm|gemv|reduce]\n"
         "\n"
         "Per rung: number (its file prefix under src/gemm/), name (what --variant takes), min_sm (the\n"
         "oldest compute capability it runs on, major*10+minor; 0 = host), baseline (the vendor library)\n"
         "and a one-line summary. Ladders without rungs print \"(none yet)\".\n"
         "\n"
         "  --help, -h           this help\n";
}

}  // namespace

const std::vector<FlagInfo>& flags() {
  static const std::vector<FlagInfo> f = {
      {"--size", true, kShaped},
      {"--m", true, kShaped},
      {"--n", true, kShaped},
      {"--k", true, kShaped},
      {"--trans", true, kShaped},
      {"--dtype", true, kShaped},
      {"--alpha", true, kShaped},
      {"--beta", true, kShaped},
      {"--variant", true, bit(Command::bench) | bit(Command::verify) | kProfile},
      {"--baseline", true, kTimed},
      {"--reps", true, kTimed},
      {"--warmup", true, kTimed},
      {"--flush-l2", true, kTimed},
      {"--seed", true, kShaped},
      {"--check-rows", true, kShaped},
      {"--device", true, kShaped | bit(Command::info)},
      {"--format", true, kShaped},
      {"--output", true, kShaped},
      {"--quiet", false, kShaped},
      {"--memory", true, bit(Command::bench)},
      {"--first-call", false, bit(Command::bench)},
      {"--plan", true, bit(Command::bench)},
      {"--trace", false, bit(Command::bench)},
      {"--calls", false, bit(Command::bench)},
      {"--no-graph", false, bit(Command::bench)},
      {"--host-threads", true, bit(Command::bench)},
      {"--ncu", true, kProfile},
      {"--profile-child", false, kProfile},  // internal: the process ncu profiles (profile.cpp)
      {"--help", false, kAll},
  };
  return f;
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
  const GemmKind all[] = {GemmKind::f32, GemmKind::tf32, GemmKind::tf32x3, GemmKind::f16, GemmKind::bf16};
  for (const std::string& t : split(text, ',')) {
    bool found = t == "all";
    for (GemmKind d : all)
      if (t == "all" || t == check::gemm_kind_name(d)) add(d), found = true;
    if (!found) fail(flag + ": bad gemm type " + quoted(t) + " (f32, tf32, tf32x3, f16, bf16 or all)");
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
  const std::vector<GemmKind> kinds = !a.gemm_kinds.empty() ? a.gemm_kinds
                                      : a.shapes.empty()     ? std::vector<GemmKind>{GemmKind::f32, GemmKind::bf16,
                                                                                 GemmKind::tf32x3}
                                                             : std::vector<GemmKind>{GemmKind::f32};
  for (GemmKind kind : kinds)
    for (const Shape& s : shapes)
      for (TransPair t : trans) out.push_back({s, t, DType::f32, kind});
  return out;
}

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

  std::string size_text, m_text, n_text, k_text, trans_text, dtype_text;
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
      const FlagInfo* f = find_flag(name);
      if (f == nullptr)
        fail("unknown flag " + name + " for 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
      if (!(f->commands & bit(a.command)))
        fail("flag " + name + " does not apply to 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
      if (!f->takes_value) {
        if (inline_value) fail("flag " + name + " takes no value");
      } else if (!inline_value) {
        if (i + 1 >= argv.size()) fail("flag " + name + " needs a value (see rungs " + cmd + " --help)");
        value = argv[++i];
      }
      if (name == "--size") size_text = value;
      else if (name == "--m") m_text = value;
      else if (name == "--n") n_text = value;
      else if (name == "--k") k_text = value;
      else if (name == "--trans") trans_text = value;
      else if (name == "--dtype") dtype_text = value;
      else if (name == "--alpha") a.alpha = parse_float(value, name);
      else if (name == "--beta") a.beta = parse_float(value, name);
      else if (name == "--variant") {
        a.variants.clear();
        if (value != "all") {
          for (const std::string& v : split(value, ',')) {
            if (v.empty()) fail(name + ": empty rung name in " + quoted(value));
            a.variants.push_back(v);
          }
        }
      } else if (name == "--baseline") {
        if (value.empty()) fail(name + ": empty rung name");
        a.baseline = value;
      } else if (name == "--reps") {
        a.reps = static_cast<int>(parse_int(value, name, 1, 10000));
        a.reps_given = true;
      } else if (name == "--warmup") a.warmup = static_cast<int>(parse_int(value, name, 0, 10000));
      else if (name == "--flush-l2") {
        if (value == "on") a.flush_l2 = true;
        else if (value == "off") a.flush_l2 = false;
        else fail(name + ": " + quoted(value) + " is not on or off");
      } else if (name == "--seed") a.seed = parse_u64(value, name);
      else if (name == "--check-rows") a.check_rows = value == "all" ? 0 : parse_int(value, name, 1, kMaxDim);
      else if (name == "--device") a.device = static_cast<int>(parse_int(value, name, 0, 1023));
      else if (name == "--format") {
        if (value == "table") a.format = Format::table;
        else if (value == "csv") a.format = Format::csv;
        else if (value == "json") a.format = Format::json;
        else fail(name + ": " + quoted(value) + " is not table, csv or json");
      } else if (name == "--output") {
        if (value.empty()) fail(name + ": empty file name");
        a.output = value;
      } else if (name == "--quiet") a.quiet = true;
      else if (name == "--memory") {
        for (const std::string& v : split(value, ',')) {
          if (v == "all") a.memory = {"pinned", "pageable"};
          else if (v == "pinned" || v == "pageable") a.memory.push_back(v);
          else fail(name + ": " + quoted(v) + " is not pinned, pageable or all");
        }
      } else if (name == "--first-call") a.first_call = true;
      else if (name == "--plan") a.plan = value;
      else if (name == "--trace") a.trace = true;
      else if (name == "--calls") a.calls = true;
      else if (name == "--no-graph") a.no_graph = true;
      else if (name == "--host-threads") a.host_threads = static_cast<int>(parse_int(value, name, 1, 256));
      else if (name == "--ncu") {
        if (value.empty()) fail(name + ": empty path");
        a.ncu = value;
      } else if (name == "--profile-child") a.profile_child = true;
      continue;
    }
    // A positional argument: the operation.
    const bool takes_op = a.command == Command::list || a.command == Command::bench ||
                          a.command == Command::verify || a.command == Command::tune || a.command == Command::profile;
    if (!takes_op || positional_seen)
      fail("unexpected argument " + quoted(tok) + " for 'rungs " + cmd + "' (see rungs " + cmd + " --help)");
    bool known = tok == "gemm_host" && a.command == Command::bench;
    for (const char* op : kOps) known = known || tok == op;
    if (!known)
      fail("unknown operation " + quoted(tok) + " (operations: gemm, gemv, reduce; bench also takes gemm_host)");
    a.op = tok;
    positional_seen = true;
  }
  if (a.command == Command::profile && a.op.empty())
    fail("profile: name the operation (rungs profile gemm|gemv|reduce [flags]; see rungs profile --help)");

  if ((!a.memory.empty() || a.first_call || !a.plan.empty() || a.trace || a.calls || a.no_graph || a.host_threads) &&
      a.op != "gemm_host")
    fail(std::string(a.first_call       ? "--first-call"
                     : !a.plan.empty() ? "--plan"
                     : a.trace         ? "--trace"
                     : a.calls         ? "--calls"
                     : a.no_graph      ? "--no-graph"
                     : a.host_threads  ? "--host-threads"
                                       : "--memory") +
         " applies to rungs bench gemm_host only");
  if (a.trace && a.format != Format::table) fail("--trace prints a timeline after the table: use --format table");
  if (a.calls && a.format != Format::table) fail("--calls prints its list after the table: use --format table");
  if (a.command == Command::tune) {
    if (a.op.empty()) a.op = "gemm";
    if (a.op != "gemm") fail("tune: only gemm has tunable configurations (got " + a.op + ")");
    if (a.alpha == 0.0f) fail("tune: --alpha 0 does not run the kernels (C = beta*C); use a non-zero alpha");
  }

  // Flags whose meaning depends on the ladder need it named when they are not gemm's.
  const bool any_dim = !m_text.empty() || !n_text.empty() || !k_text.empty();
  const bool shaped = !size_text.empty() || any_dim || !trans_text.empty() || !dtype_text.empty();
  if (shaped && a.op.empty() && (a.command == Command::bench || a.command == Command::verify))
    fail("--size, --m, --n, --k, --trans and --dtype mean different things per ladder: name the operation "
         "(rungs " + cmd + " gemm|gemv|reduce ...)");
  const std::string op = a.op.empty() ? "gemm" : a.op;
  if (!dtype_text.empty()) {
    if (op == "gemm") {
      a.gemm_kinds = parse_gemm_kind_list(dtype_text, "--dtype");
    } else {
      a.dtypes = parse_dtype_list(dtype_text, "--dtype");
      if (op != "reduce" && !(a.dtypes.size() == 1 && a.dtypes[0] == DType::f32))
        fail("--dtype: " + op + " is fp32 only (--dtype applies to reduce and gemm)");
      if (op != "reduce") a.dtypes.clear();
    }
  }
  if (!trans_text.empty()) {
    if (op == "reduce") fail("--trans does not apply to reduce");
    a.trans = parse_trans_list(trans_text, "--trans", op);
  }

  if (op == "reduce") {
    // --n (or --size) lists the lengths.
    if (!m_text.empty() || !k_text.empty()) fail("reduce takes --n LIST (the lengths), not --m or --k");
    if (!size_text.empty() && !n_text.empty()) fail("reduce: give the lengths once, with --n or --size");
    const std::string& t = n_text.empty() ? size_text : n_text;
    if (!t.empty())
      for (int64_t v : parse_size_list(t, n_text.empty() ? "--size" : "--n", kMaxReduceN)) a.shapes.push_back({0, v, 0});
    return a;
  }
  if (op == "gemv") {
    // --size gives square A; --m and --n (together) give A's rows and columns.
    if (!k_text.empty()) fail("gemv takes --m and --n (A is m x n), not --k");
    if (!size_text.empty() || any_dim) {
      if (size_text.empty() && (m_text.empty() || n_text.empty()))
        fail(std::string("gemv: --m and --n go together (or give --size); missing ") + (m_text.empty() ? "--m" : "--n"));
      const std::vector<int64_t> sizes = size_text.empty() ? std::vector<int64_t>{0} : parse_size_list(size_text, "--size");
      const std::vector<int64_t> ms = m_text.empty() ? std::vector<int64_t>{} : parse_size_list(m_text, "--m");
      const std::vector<int64_t> ns = n_text.empty() ? std::vector<int64_t>{} : parse_size_list(n_text, "--n");
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
  if (!size_text.empty() || any_dim) {
    if (size_text.empty() && (m_text.empty() || n_text.empty() || k_text.empty())) {
      std::string missing;
      if (m_text.empty()) missing += " --m";
      if (n_text.empty()) missing += " --n";
      if (k_text.empty()) missing += " --k";
      fail("--m, --n and --k go together (or give --size); missing" + missing);
    }
    const std::vector<int64_t> sizes = size_text.empty() ? std::vector<int64_t>{0} : parse_size_list(size_text, "--size");
    const std::vector<int64_t> ms = m_text.empty() ? std::vector<int64_t>{} : parse_size_list(m_text, "--m");
    const std::vector<int64_t> ns = n_text.empty() ? std::vector<int64_t>{} : parse_size_list(n_text, "--n");
    const std::vector<int64_t> ks = k_text.empty() ? std::vector<int64_t>{} : parse_size_list(k_text, "--k");
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

std::string help_text(Command c) {
  switch (c) {
    case Command::info: return info_help();
    case Command::list: return list_help();
    case Command::bench: return bench_help();
    case Command::verify: return verify_help();
    case Command::tune: return tune_help();
    case Command::profile: return profile_help();
    default: return top_help();
  }
}

}  // namespace rungs::cli
