// `rungs profile` without a GPU: its arguments, ncu's CSV (a real log in tests/data), the
// aggregation and writers, the search for ncu, and the parent's paths through run_main with a fake
// ncu (a shell script) standing in for Nsight Compute.
#include "cli/args.hpp"
#include "cli_errors.hpp"
#include "cli/commands.hpp"
#include "cli/profile.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rungs::cli {
namespace {

const char* const kSample = RUNGS_SOURCE_DIR "/tests/data/ncu_raw_h200.csv";
const char* const kPermLine =
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
    "the target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// A directory of its own under the test's temp dir, removed with its files.
class Scratch {
 public:
  Scratch() {
    std::string t = ::testing::TempDir() + "rungs-profile-test-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    EXPECT_NE(::mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }
  ~Scratch() {
    for (const std::string& f : files_) ::unlink(f.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string write(const std::string& name, const std::string& text, bool executable = false) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    if (executable) ::chmod(p.c_str(), 0755);
    files_.push_back(p);
    return p;
  }
  std::string path(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return dir_ + "/" + name;
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

// A stand-in for ncu: answers --version, finds --log-file among its arguments, runs `body` (sh)
// with $log set, and never runs the program it is given.
std::string fake_ncu(Scratch& s, const std::string& body) {
  return s.write("ncu",
                 "#!/bin/sh\n"
                 "if [ \"$1\" = \"--version\" ]; then echo 'Version 2099.1.0.0 (fake)'; exit 0; fi\n"
                 "log=''\n"
                 "while [ $# -gt 0 ]; do\n"
                 "  if [ \"$1\" = \"--log-file\" ]; then log=\"$2\"; shift; fi\n"
                 "  shift\n"
                 "done\n" +
                     body,
                 true);
}

// ---------------------------------------------------------------------------------------------
// Arguments.

TEST(ProfileArgs, OperationAndDefaultCases) {
  const Args g = parse_args({"profile", "gemm"});
  EXPECT_EQ(g.command, Command::profile);
  EXPECT_EQ(g.op, "gemm");
  EXPECT_FALSE(g.profile_child);
  const std::vector<Case> gc = profile_cases(g);
  ASSERT_EQ(gc.size(), 1u);
  EXPECT_EQ(gc[0].shape, (Shape{4096, 4096, 4096}));
  EXPECT_EQ(trans_name(gc[0].trans), "nn");
  EXPECT_EQ(gc[0].kind, check::GemmKind::f32);

  const std::vector<Case> vc = profile_cases(parse_args({"profile", "gemv"}));
  ASSERT_EQ(vc.size(), 1u);
  EXPECT_EQ(vc[0].shape, (Shape{16384, 16384, 0}));
  EXPECT_EQ(vc[0].trans.a, Trans::N);

  const std::vector<Case> rc = profile_cases(parse_args({"profile", "reduce"}));
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].shape.n, int64_t{1} << 24);
  EXPECT_EQ(rc[0].dtype, DType::i64);
}

TEST(ProfileArgs, ShapeFlagsAreBenchs) {
  const Args a = parse_args({"profile", "gemm", "--size", "1024,2048", "--trans", "nn,tn", "--dtype", "bf16",
                             "--variant", "wgmma,cublas,auto", "--format", "csv", "--output", "p.csv", "--ncu",
                             "/opt/ncu", "--device", "1", "--seed", "7", "--quiet"});
  EXPECT_EQ(a.variants, (std::vector<std::string>{"wgmma", "cublas", "auto"}));
  EXPECT_EQ(a.format, Format::csv);
  EXPECT_EQ(a.output, "p.csv");
  EXPECT_EQ(a.ncu, "/opt/ncu");
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.seed, 7u);
  const std::vector<Case> c = profile_cases(a);
  ASSERT_EQ(c.size(), 4u);  // shapes x transposes
  for (const Case& x : c) EXPECT_EQ(x.kind, check::GemmKind::bf16);
  EXPECT_EQ(c[1].shape, (Shape{1024, 1024, 1024}));
  EXPECT_EQ(trans_name(c[1].trans), "tn");

  EXPECT_EQ(profile_cases(parse_args({"profile", "gemm", "--m", "100", "--n", "200", "--k", "300"}))[0].shape,
            (Shape{100, 200, 300}));
  const std::vector<Case> g = profile_cases(parse_args({"profile", "gemv", "--m", "2^20", "--n", "64", "--trans", "all"}));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1].trans.a, Trans::T);
  EXPECT_EQ(profile_cases(parse_args({"profile", "reduce", "--n", "2^28"}))[0].dtype, DType::i64);
  EXPECT_EQ(profile_cases(parse_args({"profile", "reduce", "--dtype", "all"})).size(), 4u);
  EXPECT_EQ(profile_cases(parse_args({"profile", "gemm", "--dtype", "all"})).size(), 5u);
  EXPECT_TRUE(parse_args({"profile", "gemm", "--variant", "all"}).variants.empty());
}

TEST(ProfileArgs, ErrorsNameTheProblem) {
  struct Bad {
    std::vector<std::string> argv;
    const char* must_name;
  };
  const std::vector<Bad> cases = {
      {{"profile"}, "name the operation"},
      {{"profile", "--size", "4096"}, "name the operation"},
      {{"profile", "gemm_host"}, "gemm_host"},
      {{"profile", "matmul"}, "matmul"},
      {{"profile", "gemm", "gemv"}, "gemv"},
      {{"profile", "gemm", "--bogus"}, "--bogus"},
      {{"profile", "gemm", "--reps", "5"}, "--reps"},
      {{"profile", "gemm", "--warmup", "1"}, "--warmup"},
      {{"profile", "gemm", "--baseline", "cublas"}, "--baseline"},
      {{"profile", "gemm", "--flush-l2", "off"}, "--flush-l2"},
      {{"profile", "gemm", "--memory", "pinned"}, "--memory"},
      {{"profile", "gemm", "--trace"}, "--trace"},
      {{"profile", "gemm", "--ncu"}, "--ncu"},
      {{"profile", "gemm", "--ncu", ""}, "--ncu"},
      {{"profile", "gemm", "--ncu="}, "--ncu"},
      {{"profile", "gemm", "--format", "xml"}, "--format"},
      {{"profile", "gemm", "--size", "0"}, "--size"},
      {{"profile", "gemv", "--k", "8"}, "--k"},
      {{"profile", "reduce", "--trans", "nn"}, "--trans"},
      {{"profile", "gemm", "--dtype", "f64"}, "--dtype"},
      {{"profile", "gemm", "--profile-child=1"}, "--profile-child"},
      {{"bench", "gemm", "--ncu", "/x"}, "--ncu"},
      {{"verify", "gemm", "--profile-child"}, "--profile-child"},
  };
  for (const Bad& c : cases) {
    const std::string e = parse_error(c.argv);
    EXPECT_NE(e.find(c.must_name), std::string::npos) << c.argv.back() << " gave: '" << e << "'";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(ProfileArgs, HelpNamesEveryFlagAndTheExamples) {
  EXPECT_EQ(parse_args({"profile", "gemm", "--help"}).help_for, Command::profile);
  EXPECT_EQ(parse_args({"help", "profile"}).help_for, Command::profile);
  const std::string h = help_text(Command::profile);
  for (const Flag& f : flags()) {
    if (f.commands & (1u << static_cast<unsigned>(Command::profile))) {
      EXPECT_NE(h.find(f.name), std::string::npos) << f.name << " is missing from rungs profile --help";
    }
  }
  EXPECT_NE(h.find("rungs profile gemm --size 4096\n"), std::string::npos);
  EXPECT_NE(h.find("rungs profile gemm --size 4096 --dtype bf16 --variant wgmma,wgmma_ws,wgmma_tma_store,cublas "
                   "--format csv"),
            std::string::npos);
  EXPECT_NE(h.find("ERR_NVGPUCTRPERM"), std::string::npos);
  for (const std::string& line : split(h, '\n')) EXPECT_LE(line.size(), 110u) << line;
  const std::string top = help_text(Command::none);
  EXPECT_NE(top.find("  profile   "), std::string::npos);
  EXPECT_NE(top.find("--ncu PATH"), std::string::npos);
}

// The child gets exactly the parent's case back, with the run's alpha, beta, seed and check rows.
TEST(ProfileArgs, ChildArgumentsRoundTrip) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"profile", "gemm", "--m", "100,7", "--n", "3", "--k", "9", "--trans", "all",
                                 "--dtype", "tf32x3,f16", "--alpha", "-1.25", "--beta", "0.1", "--seed", "99",
                                 "--check-rows", "all"},
        {"profile", "gemv", "--size", "1000", "--trans", "t", "--check-rows", "17", "--device", "3"},
        {"profile", "reduce", "--n", "3,2^33", "--dtype", "i32,f64"}}) {
    const Args a = parse_args(argv);
    for (const Case& c : profile_cases(a)) {
      const std::vector<std::string> child = profile_child_args(a, c, "auto");
      const Args b = parse_args(child);
      EXPECT_TRUE(b.profile_child);
      EXPECT_TRUE(b.quiet);
      EXPECT_EQ(b.op, a.op);
      EXPECT_EQ(b.variants, (std::vector<std::string>{"auto"}));
      EXPECT_EQ(b.alpha, a.alpha);
      EXPECT_EQ(b.beta, a.beta);
      EXPECT_EQ(b.seed, a.seed);
      EXPECT_EQ(b.check_rows, a.check_rows);
      EXPECT_EQ(b.device, a.device);
      const std::vector<Case> back = profile_cases(b);
      ASSERT_EQ(back.size(), 1u) << argv[1];
      EXPECT_EQ(back[0].shape, c.shape);
      EXPECT_EQ(back[0].trans, c.trans);
      EXPECT_EQ(back[0].dtype, c.dtype);
      EXPECT_EQ(back[0].kind, c.kind);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ncu's CSV.

TEST(NcuCsv, RecordsAndNumbers) {
  EXPECT_EQ(parse_csv_record(R"("a","b, c","","d ""q"" e")"),
            (std::vector<std::string>{"a", "b, c", "", "d \"q\" e"}));
  EXPECT_EQ(parse_csv_record("\"x\"\r"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(parse_ncu_number("475,808"), 475808.0);
  EXPECT_EQ(parse_ncu_number("17,246,980,768"), 17246980768.0);
  EXPECT_DOUBLE_EQ(parse_ncu_number("93.91"), 93.91);
  EXPECT_EQ(parse_ncu_number("0"), 0.0);
  EXPECT_EQ(parse_ncu_number("-3.5"), -3.5);
  for (const char* bad : {"", "n/a", "PolicySpread", "(256, 1, 1)", "1.5x", "nan", "inf", "all"})
    EXPECT_TRUE(std::isnan(parse_ncu_number(bad))) << bad;
}

TEST(NcuCsv, ParsesTheH200Sample) {
  const std::string text = read_all(kSample);
  ASSERT_FALSE(text.empty()) << kSample;
  const NcuLog log = parse_ncu_log(text);
  EXPECT_TRUE(log.has_header);
  EXPECT_TRUE(log.errors.empty());
  ASSERT_EQ(log.kernels.size(), 3u);
  const NcuKernel& k = log.kernels[1];
  EXPECT_EQ(k.name, "unnamed>::read_kernel(const float4 *, unsigned long, float *)");
  EXPECT_EQ(k.block, "(256, 1, 1)");
  EXPECT_EQ(k.grid, "(528, 1, 1)");
  EXPECT_EQ(k.get("gpu__time_duration.sum"), 477408.0);  // "477,408" ns
  EXPECT_EQ(k.get("launch__registers_per_thread"), 32.0);
  EXPECT_DOUBLE_EQ(k.get("lts__t_sector_hit_rate.pct"), 1.02);
  EXPECT_EQ(k.get("launch__occupancy_per_block_size"), 3670.0);
  EXPECT_EQ(k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 0.0);
  EXPECT_TRUE(std::isnan(k.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")));  // not reported
  EXPECT_TRUE(std::isnan(k.get(stall_metric("gmma"))));
  EXPECT_TRUE(std::isnan(k.get("Kernel Name")));
  // Every metric profile asks for, but the two this ncu left out, is in the sample.
  for (const std::string& m : profile_metrics()) {
    if (m != stall_metric("gmma") && m != "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active") {
      EXPECT_FALSE(std::isnan(log.kernels[0].get(m))) << m;
    }
  }
}

TEST(NcuCsv, AggregatesTheRungsKernels) {
  const ProfileStats s = aggregate_kernels(parse_ncu_log(read_all(kSample)).kernels);
  EXPECT_EQ(s.kernels, 3);
  EXPECT_DOUBLE_EQ(s.time_ns, 475808.0 + 477408.0 + 475200.0);
  // The main kernel is the longest, the second: its metrics, not the first's.
  EXPECT_DOUBLE_EQ(s.occupancy_pct, 49.28);
  EXPECT_DOUBLE_EQ(s.dram_pct, 93.59);
  EXPECT_DOUBLE_EQ(s.l2_hit_pct, 1.02);
  EXPECT_DOUBLE_EQ(s.issue_pct, 7.76);
  EXPECT_DOUBLE_EQ(s.fma_pct, 4.38);
  EXPECT_EQ(s.registers, 32.0);
  EXPECT_EQ(s.bank_conflicts, 0.0);
  EXPECT_EQ(s.tensor_pct, 0.0);  // from the hmma pipe: sm__pipe_tensor_cycles_active is not in this log
  EXPECT_EQ(s.tensor_metric, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(s.top_stall, "long_scoreboard");
  EXPECT_DOUBLE_EQ(s.top_stall_ratio, 99.66);
  EXPECT_EQ(s.stalls.size(), stall_reasons().size() - 1);  // no gmma
  EXPECT_EQ(s.block, "(256, 1, 1)");
  EXPECT_EQ(short_kernel_name(s.main_kernel), "read_kernel");

  // Summed bank conflicts, the largest stall but "selected", missing metrics as NaN.
  NcuKernel a, b;
  a.name = "a";
  a.values = {{"gpu__time_duration.sum", 10},
              {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 5},
              {stall_metric("selected"), 9},
              {stall_metric("barrier"), 2}};
  b.name = "b";
  b.values = {{"gpu__time_duration.sum", 30},
              {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 7},
              {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 61.5},
              {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 3},
              {stall_metric("selected"), 1},
              {stall_metric("mio_throttle"), 0.5},
              {stall_metric("wait"), 0.75}};
  const ProfileStats t = aggregate_kernels({a, b});
  EXPECT_EQ(t.main_kernel, "b");
  EXPECT_EQ(t.time_ns, 40.0);
  EXPECT_EQ(t.bank_conflicts, 12.0);
  EXPECT_EQ(t.tensor_pct, 61.5);
  EXPECT_EQ(t.top_stall, "wait");
  EXPECT_EQ(t.top_stall_ratio, 0.75);
  EXPECT_TRUE(std::isnan(t.registers));
  EXPECT_TRUE(std::isnan(t.dram_pct));
  const ProfileStats none = aggregate_kernels({});
  EXPECT_EQ(none.kernels, 0);
  EXPECT_TRUE(std::isnan(none.time_ns));
  EXPECT_TRUE(std::isnan(none.bank_conflicts));
}

TEST(NcuCsv, ErrorLinesAndTimeUnits) {
  const NcuLog perm = parse_ncu_log(std::string("==PROF== Connected to process 7 (/x/rungs)\n") + kPermLine +
                                    "\n==PROF== Disconnected from process 7\n");
  EXPECT_EQ(perm.kernels.size(), 0u);
  EXPECT_FALSE(perm.has_header);
  ASSERT_EQ(perm.errors.size(), 1u);
  EXPECT_NE(perm.errors[0].find("ERR_NVGPUCTRPERM"), std::string::npos);

  const NcuLog us = parse_ncu_log(
      "==WARNING== a, b\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
      "\"\",\"\",\"usecond\",\"%\"\n"
      "\"0\",\"k(int, float)\",\"1,234.5\",\"50\"\n"
      "\"1\",\"short row\"\n");
  ASSERT_EQ(us.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(us.kernels[0].get("gpu__time_duration.sum"), 1234500.0);
  EXPECT_EQ(us.kernels[0].get("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 50.0);
  EXPECT_EQ(us.kernels[0].name, "k(int, float)");
}

// A log of the options rungs profile passes, from an H100 (ncu 2025.3.1): cuBLAS's bf16 gemm, one
// kernel, with the tensor-pipe and gmma-stall metrics the H200 sample lacks.
TEST(NcuCsv, ParsesAnH100Log) {
  const NcuLog log = parse_ncu_log(read_all(RUNGS_SOURCE_DIR "/tests/data/ncu_raw_h100_cublas_bf16.csv"));
  ASSERT_EQ(log.kernels.size(), 1u);
  EXPECT_TRUE(log.errors.empty());
  const ProfileStats s = aggregate_kernels(log.kernels);
  EXPECT_EQ(s.main_kernel, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  EXPECT_EQ(s.grid, "(2, 64, 1)");
  EXPECT_EQ(s.time_ns, 25952.0);
  EXPECT_EQ(s.registers, 168.0);
  EXPECT_DOUBLE_EQ(s.occupancy_pct, 14.12);
  EXPECT_DOUBLE_EQ(s.dram_pct, 19.66);
  EXPECT_DOUBLE_EQ(s.l2_hit_pct, 73.72);
  EXPECT_EQ(s.bank_conflicts, 80.0);  // 0 on loads + 80 on stores
  EXPECT_DOUBLE_EQ(s.issue_pct, 11.62);
  EXPECT_DOUBLE_EQ(s.fma_pct, 0.07);
  EXPECT_DOUBLE_EQ(s.tensor_pct, 81.64);
  EXPECT_EQ(s.tensor_metric, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
  ASSERT_EQ(s.stalls.size(), 3u);  // that run asked for three reasons
  EXPECT_EQ(s.top_stall, "gmma");
  EXPECT_DOUBLE_EQ(s.top_stall_ratio, 3.72);
}

// The kernel names ncu 2025.3.1 gave for every rung on an H100 (tests/data/ncu_kernel_names_h100.txt).
TEST(NcuCsv, ShortNamesOfEveryRungsKernels) {
  const std::string text = read_all(RUNGS_SOURCE_DIR "/tests/data/ncu_kernel_names_h100.txt");
  ASSERT_FALSE(text.empty());
  size_t names = 0;
  for (const std::string& line : split(text, '\n')) {
    if (line.empty() || line.rfind("###", 0) == 0) continue;
    ++names;
    const std::string s = short_kernel_name(line);
    EXPECT_FALSE(s.empty()) << line;
    EXPECT_LE(s.size(), 40u) << line;
    EXPECT_EQ(s.find_first_of("<>() ,*"), std::string::npos) << s << " from " << line;
    EXPECT_NE(s.rfind("::", 0), 0u) << s;
  }
  EXPECT_GT(names, 50u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"unnamed>::naive_kernel(long, long, long, float, const float *, long, bool)", "naive_kernel"},
      {"void unnamed>::warptile_kernel<unnamed>::Tile<64, 64, 16, 32, 32, 8, 4, 3, 4, 0, 16, 0>, 1, 0>(detail::"
       "GemmParams, unnamed>::SplitK)",
       "warptile_kernel"},
      {"void pack::<unnamed>::copy_rows_kernel<float>(const T1 *, long, long, long, T1 *, long, T1 *)",
       "pack::copy_rows_kernel"},
      {"void x3_kernel::x3_kernel<1, 0>(x3_kernel::Maps, ArgsT<float>, int, int, bool)", "x3_kernel::x3_kernel"},
      {"enable_if<!T7, void>::type kernel<int, int, float, float, float, float, 0, 1, 0, 0, 6, 0, "
       "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, float>>(T13)",
       "kernel"},
      {"void reduce::<unnamed>::vectorized_kernel<double, double>(const T1 *, VecSplit, T2 *)",
       "reduce::vectorized_kernel"},
      {"void DeviceReduceKernel<policy_hub<double, unsigned long long, plus<void>>::Policy1000, const double *, "
       "unsigned long long, plus<void>, double, __identity>(T2, T5 *, T3, GridEvenShare<T3>, T4, T6)",
       "DeviceReduceKernel"},
      {"void rungs::sgemm::(anonymous namespace)::kernel<(rungs::Trans)0, 128>(rungs::sgemm::ArgsT<float>)",
       "sgemm::kernel"},
      {"<unnamed>::finish_kernel(long, int)", "finish_kernel"},
  };
  for (const auto& [full, s] : want) EXPECT_EQ(short_kernel_name(full), s) << full;
}

TEST(NcuCsv, ShortKernelNames) {
  EXPECT_EQ(short_kernel_name("unnamed>::read_kernel(const float4 *, unsigned long, float *)"), "read_kernel");
  EXPECT_EQ(short_kernel_name("void rungs::sgemm::warptile::(anonymous namespace)::kernel<128, 64, (rungs::Trans)0>"
                              "(rungs::sgemm::ArgsT<float>)"),
            "warptile::kernel");
  EXPECT_EQ(short_kernel_name("void cub::CUB_300000_SM_900::detail::reduce::DeviceReduceKernel<Policy, const long *, "
                              "int, cuda::std::plus<void>, long, long>(const long *, long *, int, "
                              "cub::GridEvenShare<int>, cuda::std::plus<void>)"),
            "reduce::DeviceReduceKernel");
  const std::string cublas = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
                             "segment_k_off_kernel__5x_cublas";
  EXPECT_EQ(short_kernel_name(cublas), cublas.substr(0, 37) + "...");
  EXPECT_EQ(short_kernel_name("plain"), "plain");
}

// ---------------------------------------------------------------------------------------------
// Writers.

std::vector<ProfileRow> sample_rows() {
  ProfileRow ok;
  ok.op = "gemm";
  ok.the_case.shape = {4096, 4096, 4096};
  ok.variant = "naive";
  ok.rung = 1;
  ok.stats = aggregate_kernels(parse_ncu_log(read_all(kSample)).kernels);
  ProfileRow skip = ok;
  skip.variant = "cpu_naive";
  skip.rung = 0;
  skip.status = Status::skip;
  skip.reason = "runs on the host: no kernel to profile";
  skip.stats = ProfileStats();
  ProfileRow aut = ok;
  aut.variant = "auto";
  aut.rung = -1;
  aut.ran = "warptile";
  return {skip, ok, aut};
}

TEST(ProfileOutput, TableCsvJson) {
  Context ctx;
  ctx.command = "profile";
  ctx.git_commit = "abc1234";
  ctx.rungs_version = "0.1.0";
  ctx.command_line = "rungs profile gemm";
  const ProfilerInfo p{"/usr/local/cuda/bin/ncu", "2025.3.0.0"};
  const std::vector<ProfileRow> rows = sample_rows();

  const std::string t = format_profile_table(ctx, p, rows);
  EXPECT_NE(t.find("2025.3.0.0"), std::string::npos) << t;
  EXPECT_NE(t.find("commit abc1234"), std::string::npos) << t;
  EXPECT_NE(t.find("rungs profile gemm"), std::string::npos) << t;
  EXPECT_NE(t.find("gemm 4096x4096x4096 nn"), std::string::npos) << t;
  EXPECT_NE(t.find("1.428 ms"), std::string::npos) << t;
  EXPECT_NE(t.find("long_scoreboard 99.7"), std::string::npos) << t;
  EXPECT_NE(t.find("read_kernel"), std::string::npos) << t;
  EXPECT_NE(t.find("auto=warptile"), std::string::npos) << t;
  EXPECT_NE(t.find("SKIP"), std::string::npos) << t;
  EXPECT_NE(t.find("cpu_naive at 4096x4096x4096 nn: SKIP: runs on the host"), std::string::npos) << t;

  const std::string c = format_profile_csv(rows);
  const std::vector<std::string> lines = split(c, '\n');
  ASSERT_EQ(lines.size(), 5u);  // header, 3 rows, the final newline
  EXPECT_EQ(lines[0].rfind("name,op,rung,variant,ran,", 0), 0u);
  EXPECT_NE(lines[1].find(",skip,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("gemm/naive/4096x4096x4096/nn,gemm,1,naive,,4096,4096,4096,nn,f32,ok,1428.416,3,32,"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[2].find(",long_scoreboard,99.660,read_kernel,\"(256, 1, 1)\",\"(528, 1, 1)\","), std::string::npos)
      << lines[2];
  const size_t header_fields = parse_csv_record(lines[0]).size();
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(parse_csv_record(lines[i]).size(), header_fields) << lines[i];

  const std::string j = format_profile_json(ctx, p, rows);
  EXPECT_NE(j.find("\"context\": {"), std::string::npos);
  EXPECT_NE(j.find("\"profiler\": {"), std::string::npos);
  EXPECT_NE(j.find("\"ncu_version\": \"2025.3.0.0\""), std::string::npos);
  EXPECT_NE(j.find("\"profiles\": ["), std::string::npos);
  EXPECT_NE(j.find("\"top_stall\": \"long_scoreboard\""), std::string::npos);
  EXPECT_NE(j.find("\"ran\": \"warptile\""), std::string::npos);
  EXPECT_EQ(j.find("\"gmma\""), std::string::npos);  // this ncu reported no gmma stall
  EXPECT_NE(j.find("\"long_scoreboard\": 99.66"), std::string::npos) << j;
  int depth = 0;  // balanced braces and brackets outside strings
  bool in_str = false;
  for (size_t i = 0; i < j.size(); ++i) {
    if (in_str) {
      if (j[i] == '\\') ++i;
      else if (j[i] == '"') in_str = false;
    } else if (j[i] == '"') in_str = true;
    else if (j[i] == '{' || j[i] == '[') ++depth;
    else if (j[i] == '}' || j[i] == ']') {
      EXPECT_GE(--depth, 0);
    }
  }
  EXPECT_EQ(depth, 0);
}

// ---------------------------------------------------------------------------------------------
// Finding ncu.

TEST(ProfileNcu, LocatesNcu) {
  Scratch s;
  const std::string exe = s.write("ncu", "#!/bin/sh\nexit 0\n", true);
  const std::string other = s.write("ncu-2025", "#!/bin/sh\nexit 0\n", true);
  const std::string plain = s.write("not-exec", "x");
  EXPECT_EQ(locate_ncu("", "/nonexistent-dir:" + s.dir(), {}), exe);                 // on PATH
  EXPECT_EQ(locate_ncu("", "/nonexistent-dir", {"/nonexistent/ncu", other}), other);  // the first candidate there
  EXPECT_EQ(locate_ncu(other, "", {}), other);                                        // --ncu PATH
  EXPECT_EQ(locate_ncu("ncu-2025", s.dir(), {}), other);                              // --ncu NAME, on PATH
  for (const std::string& given : {std::string("/nonexistent/ncu"), plain, s.dir()}) {
    try {
      (void)locate_ncu(given, s.dir(), {});
      ADD_FAILURE() << given;
    } catch (const CliError& e) {
      EXPECT_EQ(e.code(), 2);
      EXPECT_NE(std::string(e.what()).find("--ncu " + given), std::string::npos) << e.what();
    }
  }
  try {
    (void)locate_ncu("", "/nonexistent-dir", {"/nowhere/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"});
    ADD_FAILURE();
  } catch (const CliError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), 2);
    EXPECT_NE(m.find("ncu on PATH"), std::string::npos) << m;
    EXPECT_NE(m.find("/nowhere/bin/ncu"), std::string::npos) << m;
    EXPECT_NE(m.find("/opt/nvidia/nsight-compute/*/ncu"), std::string::npos) << m;
    EXPECT_NE(m.find("--ncu PATH"), std::string::npos) << m;
  }
  const std::vector<std::string> d = default_ncu_candidates();
  EXPECT_NE(std::find(d.begin(), d.end(), "/usr/local/cuda/bin/ncu"), d.end());
}

// ---------------------------------------------------------------------------------------------
// The parent through run_main, ncu faked: no GPU is touched before ncu has answered.

struct Ran {
  int code;
  std::string out, err;
};
Ran run(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_main(argv, "rungs", out, err);
  return {code, out.str(), err.str()};
}

void expect_one_error_line(const Ran& r) {
  EXPECT_EQ(r.err.rfind("rungs: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(ProfileMain, NcuNotFound) {
  const Ran r = run({"profile", "gemm", "--ncu", "/nonexistent/ncu"});
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("/nonexistent/ncu"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(ProfileMain, CountersNotPermitted) {
  Scratch s;
  const std::string ncu =
      fake_ncu(s, "echo '==PROF== Connected to process 1 (/x/rungs)' > \"$log\"\n"
                  "echo '" + std::string(kPermLine) + "' >> \"$log\"\nexit 1\n");
  const Ran r = run({"profile", "gemm", "--size", "64", "--variant", "naive", "--ncu", ncu, "--quiet"});
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("ncu could not profile naive"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ERR_NVGPUCTRPERM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("permission"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("admin users"), std::string::npos) << r.err;
}

TEST(ProfileMain, RowsFromNcusLog) {
  Scratch s;
  // The child's result line on stdout, ncu's CSV in its log.
  const std::string ncu = fake_ncu(s, "cat '" + std::string(kSample) + "' > \"$log\"\n"
                                        "echo 'some output of the child'\n"
                                        "echo 'rungs-profile-child: ok naive'\nexit 0\n");
  const std::string csv = s.path("out.csv");
  const Ran r = run({"profile", "gemm", "--size", "64", "--variant", "cpu_naive,naive,wgmma", "--ncu", ncu, "--format",
                     "csv", "--output", csv});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("[profile 2/3] naive 64x64x64 nn"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote 3 profiles (csv)"), std::string::npos) << r.err;
  // The table on stdout: cpu_naive and wgmma (no f32) skipped without running ncu, naive's row from the log.
  EXPECT_NE(r.out.find("Nsight Compute 2099.1.0.0 (clocks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("read_kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu_naive at 64x64x64 nn: SKIP: runs on the host"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wgmma at 64x64x64 nn: SKIP: does not do f32"), std::string::npos) << r.out;
  const std::string c = read_all(csv);
  EXPECT_NE(c.find("gemm/naive/64x64x64/nn,gemm,1,naive,,64,64,64,nn,f32,ok,1428.416,3,"), std::string::npos) << c;
}

TEST(ProfileMain, ChildResults) {
  struct Want {
    std::string line;  // what the fake child prints
    int code;
    std::string in_output;
  };
  for (const Want& w : {Want{"rungs-profile-child: skip needs sm_90 or newer; this device is sm_80", 0,
                             "naive at 64x64x64 nn: SKIP: needs sm_90"},
                        Want{"rungs-profile-child: fail failed verification, not profiled: 3 NaN", 1,
                             "naive at 64x64x64 nn: FAIL: failed verification, not profiled: 3 NaN"},
                        Want{"rungs-profile-child: error CUDA error: an illegal memory access", 1,
                             "naive at 64x64x64 nn: ERROR: CUDA error: an illegal memory access"},
                        Want{"rungs-profile-child: ok naive", 1, "ERROR: ncu recorded no kernel"}}) {
    Scratch s;
    const std::string ncu = fake_ncu(s, "echo '==PROF== Disconnected' > \"$log\"\necho '" + w.line + "'\nexit 0\n");
    const Ran r = run({"profile", "gemm", "--size", "64", "--variant", "naive", "--ncu", ncu, "--quiet"});
    EXPECT_EQ(r.code, w.code) << w.line << "\n" << r.err;
    EXPECT_NE(r.out.find(w.in_output), std::string::npos) << r.out;
  }
}

TEST(ProfileMain, FatalAnswers) {
  struct Want {
    std::string body;
    std::string in_error;
  };
  for (const Want& w :
       {Want{"echo 'rungs-profile-child: fatal no CUDA device found; bench, verify, tune, profile and info need a "
             "GPU'\necho '==ERROR== The application returned an error code (2).' > \"$log\"\nexit 2\n",
             "rungs: error: no CUDA device found"},
        Want{"echo 'ncu: unknown option --page'\nexit 1\n", "ncu failed (exit status 1): ncu: unknown option --page"},
        Want{"echo '==ERROR== Failed to connect to the target process' > \"$log\"\nexit 1\n",
             "ncu could not profile naive (gemm 64x64x64 nn): ==ERROR== Failed to connect"}}) {
    Scratch s;
    const Ran r = run({"profile", "gemm", "--size", "64", "--variant", "naive", "--ncu", fake_ncu(s, w.body), "--quiet"});
    EXPECT_EQ(r.code, 2) << w.body;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(w.in_error), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace rungs::cli
