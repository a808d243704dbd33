// The help texts of `rungs` and of each command. Their flags come from flags() (cli/args.cpp), each
// listed in its group with its help text; the prose around them says what the commands do and how
// they measure.
#include "cli/args.hpp"

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace rungs::cli {

namespace {

const Command kCommandsInOrder[] = {Command::info,   Command::list, Command::bench,
                                    Command::verify, Command::tune, Command::profile};

const char* kSizeGrammar =
    "  LIST is comma-separated sizes and ranges (sizes are 1 .. 2^31-1):\n"
    "      4096  or  2^12           one size\n"
    "      1024:8192:x2             1024, 2048, 4096, 8192 (multiply by 2; a:b alone means a:b:x2)\n"
    "      1000:4000:+1000          1000, 2000, 3000, 4000 (add 1000)\n"
    "      512,1000,2^11:2^13       mixed\n";

const char* kOperations =
    "  gemm: C(m x n) = alpha * op(A)(m x k) * op(B)(k x n) + beta * C\n"
    "  gemv: y = alpha * op(A) x + beta * y, A is m x n (stored rows x columns)\n"
    "  reduce: the sum of n elements\n";

// bench gemm_host's flags for the experiment hooks, where this build does not add them.
#ifdef RUNGS_EXPERIMENTS
const char* kExperimentFlags = "";
#else
const char* kExperimentFlags =
    "  A build with -DRUNGS_EXPERIMENTS=ON adds --plan (a forced schedule) and --trace (one more call's\n"
    "  timeline).\n";
#endif

const char* kExit =
    "Exit status: 0 success; 1 a rung failed verification (a FAIL or ERROR row; the results are still\n"
    "written); 2 bad usage, no usable GPU, or shapes that do not fit in device memory; 3 a CUDA or cuBLAS\n"
    "failure. Errors are one line on stderr: \"rungs: error: ...\".\n";

constexpr size_t kHelpWidth = 102;  // the longest help line
constexpr size_t kHelpColumn = 23;  // where a flag's help text starts

// text wrapped at the help's width: lines of at most `width` characters, each "\n" a line break.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  for (const std::string& para : split(text, '\n')) {
    std::string line;
    std::istringstream words(para);
    for (std::string w; words >> w;) {
      if (!line.empty() && line.size() + 1 + w.size() > width) {
        lines.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : " ") + w;
    }
    lines.push_back(line);
  }
  return lines;
}

// "--size LIST", "--help, -h".
std::string flag_label(const Flag& f) {
  std::string label = f.name;
  if (label == "--help") label += ", -h";
  if (f.value) label += std::string(" ") + f.value;
  return label;
}

// A flag as command c's help lists it: its label, then its help text from column 23 (on the next
// line when the label is longer than that column leaves room for).
std::string flag_entry(const Flag& f, Command c) {
  const std::string label = flag_label(f);
  const char* text = f.other_help && (f.other_commands & command_bit(c)) ? f.other_help : f.help;
  std::string out = "  " + label;
  const std::string indent(kHelpColumn, ' ');
  if (out.size() < kHelpColumn) out += std::string(kHelpColumn - out.size(), ' ');
  else out += "\n" + indent;
  const std::vector<std::string> lines = wrap(text, kHelpWidth - kHelpColumn);
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? indent : "") + lines[i] + "\n";
  return out;
}

// The flags of `groups` that command c accepts, in the table's order.
std::string flag_lines(Command c, std::initializer_list<FlagGroup> groups) {
  std::string out;
  for (FlagGroup g : groups)
    for (const Flag& f : flags())
      if (f.group == g && (f.commands & command_bit(c))) out += flag_entry(f, c);
  return out;
}

// A titled section of command c's help: the title, then the flags of `groups` it accepts (nothing
// when it accepts none of them).
std::string flag_section(Command c, const char* title, std::initializer_list<FlagGroup> groups) {
  const std::string lines = flag_lines(c, groups);
  return lines.empty() ? "" : std::string(title) + "\n" + lines + "\n";
}

// The shapes section of command c's help: what the shapes mean, their flags, the LIST grammar.
std::string shape_section(Command c, const char* title) {
  return std::string(title) + "\n" + kOperations + flag_lines(c, {FlagGroup::shapes}) + kSizeGrammar + "\n";
}

// The top-level help's list of flags: per set of commands, the flags they accept (each command's
// --help describes them). The flags every problem-running command takes first, then those of some of
// them, then those of the others (info).
std::string flag_summary() {
  struct Line {
    unsigned commands;
    std::string op;
    std::vector<std::string> labels;
  };
  std::vector<Line> lines;
  auto add = [&](unsigned commands, const Flag& f) {
    const std::string op = f.only_op ? f.only_op : "";
    for (Line& l : lines)
      if (l.commands == commands && l.op == op) {
        l.labels.push_back(flag_label(f));
        return;
      }
    lines.push_back({commands, op, {flag_label(f)}});
  };
  for (int pass = 0; pass < 3; ++pass)
    for (const Flag& f : flags()) {
      if (f.group == FlagGroup::internal || f.store == nullptr) continue;  // internal flags and --help
      const unsigned shaped = f.commands & kProblemCommands, other = f.commands & ~kProblemCommands;
      if (pass == 0 && shaped == kProblemCommands) add(shaped, f);
      if (pass == 1 && shaped && shaped != kProblemCommands) add(shaped, f);
      if (pass == 2 && other) add(other, f);
    }
  std::string out;
  for (const Line& l : lines) {
    std::string line = " ";
    for (Command c : kCommandsInOrder)
      if (l.commands & command_bit(c)) line += std::string(line.size() > 1 ? ", " : " ") + command_name(c);
    if (!l.op.empty()) line += " " + l.op;
    line += ":";
    for (size_t i = 0; i < l.labels.size(); ++i) {
      const std::string item = l.labels[i] + (i + 1 < l.labels.size() ? "," : "");
      if (line.size() + 1 + item.size() > kHelpWidth) {
        out += line + "\n";
        line = "   ";
      }
      line += " " + item;
    }
    out += line + "\n";
  }
  return out;
}

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
        "            seed workloads of every ladder: gemm nn 1024..8192 in f32, bf16 and tf32x3, the decode\n"
        "            shapes (bf16 nt, m = 1..128 against three weight matrices), fp8 (e4m3, per-tensor\n"
        "            scales) nt 1024..8192 and the fp8 decode shapes (outer scales); SGEMV 2^12..2^15\n"
        "            squares and 2^20 x 64, 64 x 2^20, both transposes; reduce_sum of 2^24 and 2^28\n"
        "            elements, every dtype\n"
        "  verify    check rungs against the fp64 reference on fresh random data; exit 1 if any fails\n"
        "  tune      time every warptile tile configuration per size and mark the fastest\n"
        "  profile   Nsight Compute (ncu) on one launch of each rung: time, registers, occupancy, DRAM %,\n"
        "            L2 hit rate, bank conflicts, issue and pipe use, the top warp-stall reason\n"
        "\n"
        "Operations (ladders): gemm (SGEMM), gemv (SGEMV), reduce (reduce_sum). Without one, bench and\n"
        "verify run every ladder; profile needs one. bench also takes gemm_host (matrices in host memory),\n"
        "chain (a model's decode step as one graph of products), and allgather_gemm and\n"
        "gemm_reducescatter (rungs::dist: tensor-parallel gemm over NCCL, one GPU per rank; builds with\n"
        "NCCL only; `rungs bench` adds them where more than one GPU is visible).\n"
        "\n"
        "Flags, by the commands that take them (each command's --help describes them; --size, --m, --n,\n"
        "--k, --trans and --dtype need the operation named):\n"
     << flag_summary()
     << "\n"
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
        "                               operation: gemm nn 1024..8192 in f32, bf16, tf32x3 and the decode\n"
        "                               workload (below), fp8 nt 1024..8192 (--scaling's layout,\n"
        "                               tensor by default) and the fp8 decode workload (below, outer\n"
        "                               scales by default); gemv M = N = 2^12..2^15 and 2^20 x 64,\n"
        "                               64 x 2^20, n and t; reduce 2^24 and 2^28, every dtype\n"
        "  rungs bench OP [flags]       OP = gemm, gemv or reduce: its seed workloads unless shapes are given\n"
        "  rungs bench gemm_host [flags]  the host-to-host flow (rungs::gemm_host), see below\n"
        "  rungs bench chain [--model --m --dtype]  a decode step's products in one CUDA graph, see below\n"
        "  rungs bench allgather_gemm|gemm_reducescatter [--world N] [--m --n --k]  rungs::dist, see below\n"
        "\n"
     << "The decode workload: bf16, trans nt (W stored n x k), m = 1, 16, 64, 128 rows (a batch of tokens)\n"
        "against n x k = 7168 x 8192, 28672 x 8192 and 8192 x 28672; part of gemm's seed workloads when none\n"
        "of --size, --m, --n, --k, --trans and --dtype is given. Reading W sets the time: these rows show\n"
        "GB/s and % DRAM (see below). Without --variant, bench times only the rungs named decode_*, the\n"
        "Hopper tensor-core rungs (min_sm 90), the baseline and auto on it, to keep the default run short;\n"
        "verify checks every bf16 rung. The same shapes as ordinary cases, with every bf16 rung:\n"
        "  rungs bench gemm --dtype bf16 --m 1,16,64,128 --n 7168 --k 8192 --trans nt\n"
        "The fp8 decode workload (decode_fp8): the same batches against fp8 weights of 7168 x 8192 and\n"
        "28672 x 8192, e4m3 nt, outer scales (one per token, one per output channel) unless --scaling names\n"
        "others; the same rungs timed (those that take fp8).\n"
        "\n"
        "fp8 (--dtype fp8): e4m3 x e4m3 operands with float scales laid out as --scaling says (tensor,\n"
        "outer or block128; docs/fp8.md), a bf16 C. The cublas rung's cuBLASLt is the baseline\n"
        "(nt only: --trans nt); ours are wgmma_fp8 (tensor and outer scales), wgmma_fp8_promote and\n"
        "wgmma_fp8_overlap (all three) and, for m <= 128, decode_fp8 (all three); a rung without an fp8\n"
        "entry, or one that does not take the shape, reports unsupported. Memory-bound rows count A and B\n"
        "at 1 byte, C at 2 and the scales at 4.\n"
        "  rungs bench gemm --size 4096,8192 --dtype fp8 --scaling block128\n"
        "  rungs bench gemm --size 2048,4096,8192 --dtype fp8 --trans nt --variant wgmma_fp8_promote,wgmma_fp8_overlap\n"
        "  rungs bench gemm --dtype fp8 --scaling outer --m 1,16,64,128 --n 7168,28672 --k 8192 --trans nt\n"
        "\n"
     << shape_section(Command::bench, "Shapes (they need the operation named; row-major, tight ld):")
     << flag_section(Command::bench, "Rungs:", {FlagGroup::rungs})
     << flag_section(Command::bench, "Method:", {FlagGroup::timing, FlagGroup::data})
     << flag_section(Command::bench, "Output:", {FlagGroup::output})
     << "How it measures (per shape, i.e. m, n, k and trans):\n"
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
        "     bandwidth `rungs info` measures (once per run, before the first case; the JSON context's\n"
        "     dram_read_gbs). gemm rows are memory-bound where the arithmetic intensity 2*m*n*k / bytes\n"
        "     (bytes = A + B + C, C twice when beta != 0) is below the ridge point of the row's type = the\n"
        "     peak of its units (the fp32 peak, x16 for f16 and bf16, x8 for tf32 and tf32x3, as % peak\n"
        "     uses) / that DRAM read bandwidth. On an H100 bf16's is about 350 flop/byte: the decode shapes\n"
        "     (below 130) are memory-bound, 1024^3 in bf16 (341) sits at the ridge, the larger squares are\n"
        "     above it. Memory-bound rows show GB/s and % DRAM beside TFLOP/s: the gemm table has the two\n"
        "     columns when it holds such a row, filled for those rows only, and a note gives the ridge.\n"
        "  gemv is checked against fp64 on every output; reduce against an exact sum (integers exactly; the\n"
        "     accurate float rungs within 1 ulp + 2^-40 sum|x| for f32, 2^-69 sum|x| for f64; the others\n"
        "     within a plain sum's bound, src/check/reduce_check.hpp).\n"
        "  Progress goes to stderr: \"[gemm 12/48] warptile 4096x4096x4096 nn\".\n"
        "\n"
        "Table columns: rung (number and name); shape (m x n x k and trans); median, min, max (ms); reps;\n"
        "  TFLOP/s; % peak; GB/s and % DRAM (memory-bound rows, see above; gemv and reduce instead of\n"
        "  TFLOP/s and % peak); x <baseline>; error = ||C - Cref||_F / ||Cref||_F against fp64 on the checked\n"
        "  rows; check = pass, FAIL (outside the tolerances of src/check/gemm_check.hpp; still timed), SKIP,\n"
        "  or ERROR (the rung threw rungs::Error; the run goes on unless the CUDA context is lost).\n"
        "JSON benchmarks entries: name (\"gemm/warptile/4096x4096x4096/nn\"), run_name, run_type (iteration),\n"
        "  repetitions, iterations, real_time (the median), cpu_time (= real_time), time_unit (ms), min, max,\n"
        "  tflops,"
        " pct_peak, baseline, baseline_real_time, speedup_vs_baseline, error_normwise, error_max_rel,\n"
        "  bound_ratio, checked_rows, pass, status (ok|fail|skip|error), reason; SKIP and ERROR entries also\n"
        "  carry error_occurred and error_message as Google Benchmark writes them. Every timed entry has\n"
        "  bytes, bytes_per_second and pct_dram; gemm's also arithmetic_intensity and ridge_point (flop/byte)\n"
        "  and memory_bound; the decode workload's entries carry workload: \"decode\", fp8 entries scaling\n"
        "  (tensor, outer or block128). The context holds date,\n"
        "  host_name, executable, num_cpus, device, sm, sms, peak_tflops, dram_gbs, dram_read_gbs (the % DRAM\n"
        "  denominator), cuda_runtime, cuda_driver, cublas, git_commit (env RUNGS_GIT_COMMIT, else git\n"
        "  rev-parse), library_build_type and the method.\n"
        "\n"
        "gemm_host (matrices in host memory; default sizes 1024, 4096, 8192, nn, both memory kinds; the\n"
        "device rung of every block is --variant's one name, default auto):\n"
     << flag_lines(Command::bench, {FlagGroup::gemm_host}) << kExperimentFlags
     << "  Per shape and memory kind: one checked call (C poisoned), then --warmup and --reps calls of the\n"
        "  flow interleaved with the naive flow (cudaMemcpyAsync of A, B (and C when beta != 0), rungs::gemm,\n"
        "  cudaMemcpyAsync of C back, on one stream; device buffers allocated before timing), both on the\n"
        "  host clock, C reset outside the timed region. Also: the kernel alone (events, L2 flushed), plain\n"
        "  copies of the bytes each way (from pinned memory, and from the row's memory kind), the floor =\n"
        "  max(bytes in / pinned H2D, bytes out / pinned D2H, kernel) and x floor = flow / floor; and the\n"
        "  first call of a fresh process (this executable run again with --first-call: CUDA context start,\n"
        "  the library's set-up and the call; for pinned memory the pinned allocation too).\n"
        "\n"
        "chain (the linear layers of one decode step of a model, --m tokens, default 1, 16, 64; --dtype bf16\n"
        "(default) or fp8 with outer scales; W stored n x k, nt; --variant the rungs' entry, default auto):\n"
     << flag_lines(Command::bench, {FlagGroup::chain})
     << "  Every weight its own allocation; C of each bf16 product is the A of the next; the chain captured in\n"
        "  a CUDA graph, and the same products through the cublas rung in a second graph, the two replayed\n"
        "  interleaved (L2 flushed before each). One eager pass of each first checks the first layer's\n"
        "  products and the last at sampled elements against fp64. Reported: time, the bytes the chain must\n"
        "  move (weights, A, C) over it as % of the measured DRAM read rate, and x cublas. --format table\n"
        "  or json.\n"
        "\n"
        "allgather_gemm, gemm_reducescatter (rungs::dist; bf16; --m, --n, --k are each rank's call's sizes,\n"
        "default 2048x4096x8192 and 8192x4096x8192): one host thread and GPU per rank (--world, default every\n"
        "visible GPU), communicators from ncclCommInitAll. Per rung: the median over --reps of the slowest\n"
        "rank's time (events on each rank's stream, the ranks released together by a host barrier), TFLOP/s\n"
        "per GPU, the communication alone (rung 1's collective), the product alone (rungs::gemm of one rank's\n"
        "product) and overlap efficiency = max(comm, gemm) / time; then auto, naming the rung it ran. The\n"
        "results are not checked here (the GPU tests check every rung). --format table (default) or json\n"
        "(--output FILE: the main job's layout, the input of scripts/report.py). `rungs bench` with no\n"
        "operation adds both tables where more than one GPU is visible.\n"
        "\n"
        "Examples:\n"
        "  rungs bench\n"
        "  rungs bench gemm_host --size 1024,4096 --memory pinned\n"
        "  rungs bench chain --model llama3-8b --m 1,16,64 --dtype bf16,fp8\n"
        "  rungs bench allgather_gemm --world 2 --m 4096 --n 4096 --k 8192\n"
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
     << shape_section(Command::verify, "Shapes (they need the operation named; row-major, tight ld):")
     << flag_section(Command::verify, "Rungs:", {FlagGroup::rungs})
     << flag_section(Command::verify, "Data:", {FlagGroup::data})
     << flag_section(Command::verify, "Output:", {FlagGroup::output})
     << "Examples:\n"
        "  rungs verify\n"
        "  rungs verify gemm --m 1000 --n 777 --k 513 --trans all\n"
        "  rungs verify gemm --size 1:64:+1 --variant warptile --format csv\n"
        "  rungs verify gemm --m 1000 --n 777 --k 513 --dtype fp8 --scaling block128 --variant cublas\n"
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
     << shape_section(Command::tune, "Shapes (tune runs gemm; row-major, tight ld):")
     << flag_section(Command::tune, "Method:", {FlagGroup::timing, FlagGroup::data})
     << flag_section(Command::tune, "Output:", {FlagGroup::output})
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
     << shape_section(Command::profile, "Shapes (bench's flags; lists give several cases, a row per case and rung):")
     << flag_section(Command::profile, "Rungs:", {FlagGroup::rungs}) << "Profiler:\n"
     << flag_lines(Command::profile, {FlagGroup::profiler})
     << "  Reading the counters needs permission: ERR_NVGPUCTRPERM means the driver lets admin users only\n"
        "  (run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0;\n"
        "  https://developer.nvidia.com/ERR_NVGPUCTRPERM).\n"
        "\n"
     << flag_section(Command::profile, "Data:", {FlagGroup::data})
     << flag_section(Command::profile, "Output:", {FlagGroup::output})
     << "Examples:\n"
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
         "the theoretical one from the memory clock; the DRAM read bandwidth, MEASURED with a streaming-read\n"
         "kernel (bench's \"% DRAM\" denominator); the CUDA runtime, driver and cuBLAS versions.\n"
         "\n" +
         flag_lines(Command::info, {FlagGroup::data, FlagGroup::output}) + "\n" + kExit;
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
         "\n" +
         flag_lines(Command::list, {FlagGroup::output});
}

}  // namespace

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
