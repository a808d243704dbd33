// The `rungs` argument parser: sizes (lists, ranges, 2^k), transposes, every flag, and
// errors that name the bad flag. No GPU: the parser is a pure function.
#include "cli/args.hpp"
#include "cli_errors.hpp"
#include "cli/bench_chain.hpp"
#include "cli/bench_host.hpp"
#include "cli/commands.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace rungs::cli {
namespace {

std::vector<int64_t> sizes(const std::string& text) { return parse_size_list(text, "--size"); }

std::string size_error(const std::string& text) {
  try {
    (void)sizes(text);
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(CliArgs, SingleSizes) {
  EXPECT_EQ(parse_size("4096", "--m"), 4096);
  EXPECT_EQ(parse_size("1", "--m"), 1);
  EXPECT_EQ(parse_size("2^12", "--m"), 4096);
  EXPECT_EQ(parse_size("2^0", "--m"), 1);
  EXPECT_EQ(parse_size("2^30", "--m"), int64_t{1} << 30);
  EXPECT_EQ(parse_size("2147483647", "--m"), 2147483647);
  for (const char* bad : {"0", "-1", "abc", "12a", "3^4", "2^31", "2^", "2147483648", "", "1.5", " 8"}) {
    try {
      (void)parse_size(bad, "--m");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const CliError& e) {
      EXPECT_NE(std::string(e.what()).find("--m"), std::string::npos) << e.what();
    }
  }
}

TEST(CliArgs, SizeListsAndRanges) {
  EXPECT_EQ(sizes("1024,2048,4096"), (std::vector<int64_t>{1024, 2048, 4096}));
  EXPECT_EQ(sizes("1024:8192:x2"), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(sizes("1024:8192"), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(sizes("1000:4000:+1000"), (std::vector<int64_t>{1000, 2000, 3000, 4000}));
  EXPECT_EQ(sizes("1000:3500:+1000"), (std::vector<int64_t>{1000, 2000, 3000}));
  EXPECT_EQ(sizes("100:1000:x3"), (std::vector<int64_t>{100, 300, 900}));
  EXPECT_EQ(sizes("2^10:2^13"), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(sizes("512,1000,2^11:2^12"), (std::vector<int64_t>{512, 1000, 2048, 4096}));
  EXPECT_EQ(sizes("7:7:+1"), (std::vector<int64_t>{7}));
  EXPECT_EQ(sizes("1:4:+1"), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(CliArgs, BadSizeListsNameTheFlag) {
  for (const char* bad : {"1024:512", "1:8:y2", "1:8:x1", "1:8:+0", "1,,2", "", "1:2:x2:4", "1:", ":8",
                          "1:8:x", "8,", "2^40:2^41", "1:2147483647:+1"}) {
    const std::string e = size_error(bad);
    EXPECT_NE(e.find("--size"), std::string::npos) << "'" << bad << "' gave: " << e;
  }
}

TEST(CliArgs, TransLists) {
  const auto t = parse_trans_list("nn,tn", "--trans", "gemm");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(trans_name(t[0]), "nn");
  EXPECT_EQ(trans_name(t[1]), "tn");
  EXPECT_EQ(t[1].a, Trans::T);
  EXPECT_EQ(t[1].b, Trans::N);
  const auto all = parse_trans_list("all", "--trans", "gemm");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(trans_name(all[0]), "nn");
  EXPECT_EQ(trans_name(all[1]), "nt");
  EXPECT_EQ(trans_name(all[2]), "tn");
  EXPECT_EQ(trans_name(all[3]), "tt");
  EXPECT_EQ(trans_name(parse_trans_list("TT", "--trans", "gemm")[0]), "tt");
  EXPECT_NE(parse_error({"bench", "--trans", "nx"}).find("--trans"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "--trans", "nn,"}).find("--trans"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "--trans", "n"}).find("--trans"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm", "--trans", "n"}).find("--trans"), std::string::npos);
  // gemv takes one letter: n, t or all (both).
  const auto gv = parse_trans_list("all", "--trans", "gemv");
  ASSERT_EQ(gv.size(), 2u);
  EXPECT_EQ(gv[0].a, Trans::N);
  EXPECT_EQ(gv[1].a, Trans::T);
  EXPECT_EQ(trans_name("gemv", gv[1]), "t");
  EXPECT_NE(parse_error({"bench", "gemv", "--trans", "nn"}).find("--trans"), std::string::npos);
}

TEST(CliArgs, BenchWithNoArgumentsIsTheSeedWorkload) {
  const Args a = parse_args({"bench"});
  EXPECT_EQ(a.command, Command::bench);
  EXPECT_TRUE(a.op.empty());
  EXPECT_TRUE(a.shapes.empty());
  EXPECT_TRUE(a.variants.empty());
  EXPECT_TRUE(a.trans.empty());
  EXPECT_EQ(a.reps, 20);
  EXPECT_EQ(a.warmup, 3);
  EXPECT_TRUE(a.flush_l2);
  EXPECT_EQ(a.format, Format::table);
  EXPECT_EQ(a.baseline, "auto");  // each ladder's vendor rung
  EXPECT_EQ(a.alpha, 1.0f);
  EXPECT_EQ(a.beta, 0.0f);
  EXPECT_EQ(a.check_rows, -1);
  EXPECT_TRUE(a.output.empty());
  const auto d = default_shapes();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], (Shape{1024, 1024, 1024}));
  EXPECT_EQ(d[3], (Shape{8192, 8192, 8192}));
}

TEST(CliArgs, EveryBenchFlag) {
  const Args a = parse_args({"bench", "gemm", "--size", "1024:4096:x2", "--variant", "warptile,cublas", "--trans=nn,tt",
                             "--alpha", "-1.5", "--beta=0.25", "--reps", "50", "--warmup=0", "--flush-l2", "off",
                             "--seed", "7", "--format", "json", "--output", "out.json", "--baseline", "naive",
                             "--check-rows", "all", "--device", "1", "--quiet"});
  EXPECT_EQ(a.command, Command::bench);
  EXPECT_EQ(a.op, "gemm");
  EXPECT_EQ(a.shapes, (std::vector<Shape>{{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}}));
  EXPECT_EQ(a.variants, (std::vector<std::string>{"warptile", "cublas"}));
  ASSERT_EQ(a.trans.size(), 2u);
  EXPECT_EQ(trans_name(a.trans[1]), "tt");
  EXPECT_EQ(a.alpha, -1.5f);
  EXPECT_EQ(a.beta, 0.25f);
  EXPECT_EQ(a.reps, 50);
  EXPECT_TRUE(a.reps_given);
  EXPECT_EQ(a.warmup, 0);
  EXPECT_FALSE(a.flush_l2);
  EXPECT_EQ(a.seed, 7u);
  EXPECT_EQ(a.format, Format::json);
  EXPECT_EQ(a.output, "out.json");
  EXPECT_EQ(a.baseline, "naive");
  EXPECT_EQ(a.check_rows, 0);
  EXPECT_EQ(a.device, 1);
  EXPECT_TRUE(a.quiet);
  EXPECT_EQ(parse_args({"bench", "--variant", "all"}).variants.size(), 0u);
  EXPECT_EQ(parse_args({"bench", "--format", "csv"}).format, Format::csv);
  EXPECT_EQ(parse_args({"bench", "--check-rows", "64"}).check_rows, 64);
  EXPECT_EQ(parse_args({"bench", "--baseline", "none"}).baseline, "none");
}

TEST(CliArgs, MnkListsMultiply) {
  const Args a = parse_args({"bench", "gemm", "--m", "4096", "--n", "4096", "--k", "4096"});
  EXPECT_EQ(a.shapes, (std::vector<Shape>{{4096, 4096, 4096}}));
  const Args b = parse_args({"verify", "gemm", "--m", "1,2", "--n", "3", "--k", "4,5"});
  EXPECT_EQ(b.shapes, (std::vector<Shape>{{1, 3, 4}, {1, 3, 5}, {2, 3, 4}, {2, 3, 5}}));
  const Args c = parse_args({"bench", "gemm", "--size", "8,16", "--k", "4"});
  EXPECT_EQ(c.shapes, (std::vector<Shape>{{8, 8, 4}, {16, 16, 4}}));
  const std::string e = parse_error({"bench", "gemm", "--m", "100", "--n", "100"});
  EXPECT_NE(e.find("--k"), std::string::npos) << e;
  EXPECT_EQ(e.find("--m "), std::string::npos) << e;
  // Shapes mean different things per ladder, so they need the ladder named.
  EXPECT_NE(parse_error({"bench", "--size", "4096"}).find("name the operation"), std::string::npos);
}

TEST(CliArgs, GemvAndReduceShapes) {
  const Args g = parse_args({"bench", "gemv", "--m", "100,200", "--n", "7", "--trans", "all"});
  EXPECT_EQ(g.shapes, (std::vector<Shape>{{100, 7, 0}, {200, 7, 0}}));
  ASSERT_EQ(g.trans.size(), 2u);
  EXPECT_EQ(parse_args({"bench", "gemv", "--size", "4096"}).shapes, (std::vector<Shape>{{4096, 4096, 0}}));
  EXPECT_NE(parse_error({"bench", "gemv", "--m", "100"}).find("--n"), std::string::npos);
  const Args r = parse_args({"verify", "reduce", "--n", "1,2^33", "--dtype", "i32,f64"});
  EXPECT_EQ(r.shapes, (std::vector<Shape>{{0, 1, 0}, {0, int64_t{1} << 33, 0}}));
  EXPECT_EQ(r.dtypes, (std::vector<DType>{DType::i32, DType::f64}));
  EXPECT_EQ(parse_args({"bench", "reduce", "--size", "2^24"}).shapes, (std::vector<Shape>{{0, 1 << 24, 0}}));
  EXPECT_NE(parse_error({"bench", "reduce", "--n", "2^37"}).find("--n"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm", "--dtype", "i64"}).find("--dtype"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "reduce", "--trans", "n"}).find("--trans"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "reduce", "--dtype", "f16"}).find("--dtype"), std::string::npos);
  // The seed workloads per ladder.
  const Args none = parse_args({"bench"});
  const std::vector<Case> gm = cases_for(none, "gemm");
  ASSERT_EQ(gm.size(), 36u);  // 1024..8192 in f32, bf16, tf32x3, the decode workload, fp8 nt, fp8 decode
  EXPECT_EQ(gm[0].kind, check::GemmKind::f32);
  EXPECT_EQ(gm[4].kind, check::GemmKind::bf16);
  EXPECT_EQ(gm[8].kind, check::GemmKind::tf32x3);
  EXPECT_EQ(gm[11].shape, (Shape{8192, 8192, 8192}));
  EXPECT_TRUE(gm[11].workload.empty());
  const std::vector<Case> gv = cases_for(none, "gemv");
  ASSERT_EQ(gv.size(), 12u);  // 2^12..2^15 squares and the two skinny shapes, both transposes
  EXPECT_EQ(gv[0].shape, (Shape{4096, 4096, 0}));
  EXPECT_EQ(gv[1].trans.a, Trans::T);
  EXPECT_EQ(gv[11].shape, (Shape{64, 1 << 20, 0}));
  const std::vector<Case> rd = cases_for(none, "reduce");
  ASSERT_EQ(rd.size(), 8u);  // 2^24 and 2^28, every dtype
  EXPECT_EQ(rd[0].shape.n, 1 << 24);
  EXPECT_EQ(rd[0].dtype, DType::i64);
  EXPECT_EQ(rd[7].shape.n, 1 << 28);
  EXPECT_EQ(cases_for(r, "reduce").size(), 4u);
}

// The decode workload: bf16 nt, m = 1, 16, 64, 128 against three weight matrices; part of the whole
// seed set of bench and verify (bench gemm too), not of tune nor of any narrowed set.
TEST(CliArgs, DecodeWorkload) {
  const std::vector<Shape> d = decode_shapes();
  ASSERT_EQ(d.size(), 12u);
  EXPECT_EQ(d[0], (Shape{1, 7168, 8192}));
  EXPECT_EQ(d[3], (Shape{128, 7168, 8192}));
  EXPECT_EQ(d[4], (Shape{1, 28672, 8192}));
  EXPECT_EQ(d[11], (Shape{128, 8192, 28672}));
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{{"bench"}, {"bench", "gemm"}, {"verify"}}) {
    const std::vector<Case> c = cases_for(parse_args(argv), "gemm");
    ASSERT_EQ(c.size(), 36u) << argv.size();
    for (size_t i = 12; i < 24; ++i) {
      EXPECT_EQ(c[i].shape, d[i - 12]);
      EXPECT_EQ(c[i].workload, kDecodeWorkload);
      EXPECT_EQ(c[i].kind, check::GemmKind::bf16);
      EXPECT_EQ(trans_name(c[i].trans), "nt");
    }
  }
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {"tune"}, {"bench", "gemm", "--trans", "nn"}, {"bench", "gemm", "--dtype", "bf16"}, {"bench", "gemm", "--size", "64"}})
    for (const Case& c : cases_for(parse_args(argv), "gemm")) EXPECT_TRUE(c.workload.empty()) << argv.back();
  // The explicit command gives the same shapes, as ordinary cases (every bf16 rung, no workload tag).
  const std::vector<Case> e = cases_for(
      parse_args({"bench", "gemm", "--dtype", "bf16", "--m", "1,16,64,128", "--n", "7168", "--k", "8192", "--trans", "nt"}), "gemm");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[3].shape, d[3]);
  EXPECT_TRUE(e[3].workload.empty());
}

// fp8 at the seed sizes: e4m3 nt 1024..8192, after the decode workload, in the whole seed set of
// bench and verify only; its rows carry --scaling's layout.
TEST(CliArgs, Fp8SeedWorkload) {
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{{"bench"}, {"bench", "gemm"}, {"verify"}}) {
    const std::vector<Case> c = cases_for(parse_args(argv), "gemm");
    ASSERT_EQ(c.size(), 36u) << argv.size();
    for (size_t i = 24; i < 28; ++i) {
      const int64_t s = int64_t{1024} << (i - 24);
      EXPECT_EQ(c[i].shape, (Shape{s, s, s}));
      EXPECT_EQ(c[i].kind, check::GemmKind::fp8);
      EXPECT_EQ(trans_name(c[i].trans), "nt");
      EXPECT_TRUE(c[i].workload.empty());
      EXPECT_EQ(c[i].scaling, Scaling::tensor);
    }
  }
  for (const Case& c : cases_for(parse_args({"bench", "gemm", "--workload", "fp8", "--scaling", "block128"}), "gemm"))
    EXPECT_EQ(c.scaling, Scaling::block128);
  for (const Case& c : cases_for(parse_args({"tune"}), "gemm")) EXPECT_NE(c.kind, check::GemmKind::fp8);
  for (const Case& c : cases_for(parse_args({"bench", "gemm", "--dtype", "bf16"}), "gemm"))
    EXPECT_NE(c.kind, check::GemmKind::fp8);
  EXPECT_STREQ(scaling_name(Scaling::tensor), "tensor");
  EXPECT_STREQ(scaling_name(Scaling::outer), "outer");
  EXPECT_STREQ(scaling_name(Scaling::block128), "block128");
}

// The fp8 decode workload: e4m3 nt, m = 1, 16, 64, 128 against 7168 x 8192 and 28672 x 8192, outer
// scales unless --scaling names others; last in the whole seed set of bench and verify.
TEST(CliArgs, DecodeFp8Workload) {
  const std::vector<Shape> d = decode_fp8_shapes();
  ASSERT_EQ(d.size(), 8u);
  EXPECT_EQ(d[0], (Shape{1, 7168, 8192}));
  EXPECT_EQ(d[7], (Shape{128, 28672, 8192}));
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{{"bench"}, {"bench", "gemm"}, {"verify"}}) {
    const std::vector<Case> c = cases_for(parse_args(argv), "gemm");
    ASSERT_EQ(c.size(), 36u) << argv.size();
    for (size_t i = 28; i < 36; ++i) {
      EXPECT_EQ(c[i].shape, d[i - 28]);
      EXPECT_EQ(c[i].workload, kDecodeFp8Workload);
      EXPECT_EQ(c[i].kind, check::GemmKind::fp8);
      EXPECT_EQ(c[i].scaling, Scaling::outer);
      EXPECT_EQ(trans_name(c[i].trans), "nt");
    }
  }
  const std::vector<Case> b = cases_for(parse_args({"bench", "gemm", "--workload", "decode_fp8", "--scaling", "block128"}), "gemm");
  ASSERT_EQ(b.size(), 8u);
  for (const Case& c : b) EXPECT_EQ(c.scaling, Scaling::block128);
  // With fp8 seed cases beside it, --scaling names both parts' layout.
  const std::vector<Case> both = cases_for(parse_args({"bench", "gemm", "--workload", "fp8,decode_fp8", "--scaling", "tensor"}), "gemm");
  ASSERT_EQ(both.size(), 12u);
  for (const Case& c : both) EXPECT_EQ(c.scaling, Scaling::tensor);
}

// Which rungs bench times on the decode workload: by name prefix and property, so new decode_* rungs join.
TEST(CliArgs, DecodeRungs) {
  EXPECT_TRUE(decode_rung({"decode_rows", "", 24, 90, false, "bf16"}, "cublas"));
  EXPECT_TRUE(decode_rung({"decode_splitk", "", 25, 80, false, "bf16"}, "cublas"));
  EXPECT_TRUE(decode_rung({"cublas", "", 11, 75, true, "f32 bf16"}, "cublas"));
  EXPECT_TRUE(decode_rung({"auto", "", -1, 0, false}, "cublas"));
  EXPECT_TRUE(decode_rung({"wgmma_balanced", "", 23, 90, false, "bf16"}, "cublas"));
  EXPECT_FALSE(decode_rung({"mma_sync", "", 13, 80, false, "f16 bf16"}, "cublas"));
  EXPECT_FALSE(decode_rung({"wmma", "", 12, 80, false, "bf16"}, "cublas"));
  EXPECT_TRUE(decode_rung({"wmma", "", 12, 80, false, "bf16"}, "wmma")) << "the run's baseline is timed anyway";
}

TEST(CliArgs, GemmDtypes) {
  using check::GemmKind;
  const Args a = parse_args({"bench", "gemm", "--size", "4096", "--dtype", "bf16,tf32x3,f16"});
  EXPECT_EQ(a.gemm_kinds, (std::vector<GemmKind>{GemmKind::bf16, GemmKind::tf32x3, GemmKind::f16}));
  const std::vector<Case> c = cases_for(a, "gemm");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].kind, GemmKind::tf32x3);
  EXPECT_EQ(parse_args({"bench", "gemm", "--dtype", "all"}).gemm_kinds.size(), 5u);
  // Shapes given without --dtype: f32 only, as before the tensor-core ladder.
  const std::vector<Case> plain = cases_for(parse_args({"bench", "gemm", "--size", "512"}), "gemm");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].kind, GemmKind::f32);
  const std::string e = parse_error({"bench", "gemm", "--dtype", "f64"});
  EXPECT_NE(e.find("--dtype: bad gemm type 'f64'"), std::string::npos) << e;
  EXPECT_NE(parse_error({"bench", "gemv", "--dtype", "bf16"}).find("--dtype"), std::string::npos);
}

// --dtype fp8 (e4m3 x e4m3 -> bf16) is named, never part of all; --scaling picks the scales' layout
// and needs fp8.
TEST(CliArgs, GemmFp8AndScaling) {
  using check::GemmKind;
  const Args a = parse_args({"verify", "gemm", "--size", "256", "--dtype", "fp8,bf16", "--scaling", "block128"});
  EXPECT_EQ(a.gemm_kinds, (std::vector<GemmKind>{GemmKind::fp8, GemmKind::bf16}));
  EXPECT_EQ(a.scaling, Scaling::block128);
  EXPECT_EQ(cases_for(a, "gemm")[0].kind, GemmKind::fp8);
  EXPECT_EQ(parse_args({"bench", "gemm", "--size", "256", "--dtype", "fp8"}).scaling, Scaling::tensor);
  EXPECT_EQ(parse_args({"bench", "gemm", "--dtype", "fp8", "--scaling", "outer"}).scaling, Scaling::outer);
  for (GemmKind k : parse_args({"bench", "gemm", "--dtype", "all"}).gemm_kinds) EXPECT_NE(k, GemmKind::fp8);
  const std::string bad = parse_error({"bench", "gemm", "--dtype", "fp8", "--scaling", "rows"});
  EXPECT_NE(bad.find("--scaling: 'rows' is not tensor, outer or block128"), std::string::npos) << bad;
  const std::string no8 = parse_error({"bench", "gemm", "--dtype", "bf16", "--scaling", "outer"});
  EXPECT_NE(no8.find("--scaling applies to --dtype fp8 (or --workload fp8, decode_fp8) only"), std::string::npos) << no8;
  const std::string gemv = parse_error({"bench", "gemv", "--scaling", "outer"});
  EXPECT_NE(gemv.find("--scaling"), std::string::npos) << gemv;
}

// --workload picks parts of gemm's seed workload: the same cases as the whole seed, those parts only.
TEST(CliArgs, GemmWorkloadParts) {
  using check::GemmKind;
  const std::vector<Case> whole = cases_for(parse_args({"bench", "gemm"}), "gemm");
  auto count = [](const std::vector<Case>& cs, GemmKind kind, bool decode) {
    size_t n = 0;
    for (const Case& c : cs) n += c.kind == kind && (!c.workload.empty()) == decode;
    return n;
  };
  const std::vector<Case> some = cases_for(parse_args({"bench", "gemm", "--workload", "decode,fp8,bf16"}), "gemm");
  EXPECT_EQ(count(some, GemmKind::f32, false), 0u);
  EXPECT_EQ(count(some, GemmKind::tf32x3, false), 0u);
  EXPECT_EQ(count(some, GemmKind::bf16, false), count(whole, GemmKind::bf16, false));
  EXPECT_EQ(count(some, GemmKind::bf16, true), count(whole, GemmKind::bf16, true));
  EXPECT_EQ(count(some, GemmKind::fp8, false), count(whole, GemmKind::fp8, false));
  EXPECT_GT(count(some, GemmKind::bf16, true), 0u);
  EXPECT_EQ(count(some, GemmKind::fp8, true), 0u);
  const std::vector<Case> f8 = cases_for(parse_args({"bench", "gemm", "--workload", "decode_fp8"}), "gemm");
  EXPECT_EQ(count(f8, GemmKind::fp8, true), count(whole, GemmKind::fp8, true));
  EXPECT_EQ(f8.size(), 8u);
  EXPECT_EQ(cases_for(parse_args({"bench", "gemm", "--workload", "all"}), "gemm").size(), whole.size());
  EXPECT_EQ(parse_args({"bench", "gemm", "--workload", "fp8", "--scaling", "block128"}).scaling, Scaling::block128);
  const std::string bad = parse_error({"bench", "gemm", "--workload", "int8"});
  EXPECT_NE(bad.find("--workload: 'int8' is not f32, bf16, tf32x3, decode, fp8, decode_fp8 or all"), std::string::npos)
      << bad;
  const std::string shaped = parse_error({"bench", "gemm", "--workload", "decode", "--size", "256"});
  EXPECT_NE(shaped.find("--workload picks parts of the seed workload"), std::string::npos) << shaped;
  const std::string other = parse_error({"bench", "reduce", "--workload", "decode"});
  EXPECT_NE(other.find("--workload applies to rungs bench gemm only"), std::string::npos) << other;
}

TEST(CliArgs, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> argv;
    const char* must_name;
  };
  const std::vector<Case> cases = {
      {{"bench", "--bogus"}, "--bogus"},
      {{"bench", "--bogus=3"}, "--bogus"},
      {{"bench", "-x"}, "-x"},
      {{"verify", "--reps", "5"}, "--reps"},
      {{"verify", "--baseline", "cublas"}, "--baseline"},
      {{"tune", "--variant", "warptile"}, "--variant"},
      {{"info", "--size", "5"}, "--size"},
      {{"bench", "gemv", "--k", "8"}, "--k"},
      {{"bench", "reduce", "--m", "8"}, "--m"},
      {{"list", "--format", "csv"}, "--format"},
      {{"bench", "--m"}, "--m"},
      {{"bench", "--reps", "x"}, "--reps"},
      {{"bench", "--reps", "0"}, "--reps"},
      {{"bench", "--warmup", "-1"}, "--warmup"},
      {{"bench", "--alpha", "nan"}, "--alpha"},
      {{"bench", "--beta", "1e99"}, "--beta"},
      {{"bench", "--alpha", ""}, "--alpha"},
      {{"bench", "--seed", "-3"}, "--seed"},
      {{"bench", "--flush-l2", "maybe"}, "--flush-l2"},
      {{"bench", "--format", "xml"}, "--format"},
      {{"bench", "--quiet=1"}, "--quiet"},
      {{"bench", "--device", "x"}, "--device"},
      {{"bench", "--check-rows", "0"}, "--check-rows"},
      {{"bench", "--variant", "a,,b"}, "--variant"},
      {{"bench", "--output", ""}, "--output"},
      {{"bench", "gemm", "--size", "4x"}, "--size"},
      {{"bench", "gemm", "--k", "2^99"}, "--k"},
      {{"frob"}, "frob"},
      {{"--frob"}, "--frob"},
      {{"bench", "gemm", "gemm"}, "gemm"},
      {{"bench", "matmul"}, "matmul"},
      {{"info", "gemm"}, "gemm"},
      {{"help", "nothing"}, "nothing"},
      {{"tune", "gemv"}, "gemv"},
      {{"tune", "--alpha", "0"}, "--alpha"},
  };
  for (const auto& c : cases) {
    const std::string e = parse_error(c.argv);
    EXPECT_NE(e.find(c.must_name), std::string::npos) << "argv[1]=" << c.argv.back() << " gave: '" << e << "'";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(CliArgs, HelpAndVersion) {
  EXPECT_EQ(parse_args({}).command, Command::help);
  EXPECT_EQ(parse_args({"--help"}).help_for, Command::none);
  EXPECT_EQ(parse_args({"-h"}).command, Command::help);
  const Args b = parse_args({"bench", "--size", "4", "--help"});
  EXPECT_EQ(b.command, Command::help);
  EXPECT_EQ(b.help_for, Command::bench);
  EXPECT_EQ(parse_args({"bench", "--bogus", "-h"}).help_for, Command::bench);  // help wins over errors
  EXPECT_EQ(parse_args({"help", "tune"}).help_for, Command::tune);
  EXPECT_EQ(parse_args({"--version"}).command, Command::version);
  EXPECT_EQ(parse_args({"list"}).command, Command::list);
  EXPECT_EQ(parse_args({"list", "gemv"}).op, "gemv");
  EXPECT_EQ(parse_args({"info", "--device", "2"}).device, 2);
  EXPECT_EQ(parse_args({"tune"}).op, "gemm");
}

// flags() drives the parser and every --help: each flag's help lists it for every command that
// accepts it (the internal ones excepted), the top-level summary names it, no line is too long, and
// each flag the parser reaches has a store.
TEST(CliArgs, EveryFlagInTheHelpOfItsCommands) {
  const Command commands[] = {Command::info, Command::list, Command::bench, Command::verify, Command::tune,
                              Command::profile};
  const std::string top = help_text(Command::none);
  std::vector<std::string> names;
  for (const Flag& f : flags()) {
    for (const std::string& n : names) EXPECT_NE(n, f.name) << "listed twice";
    names.push_back(f.name);
    EXPECT_EQ(f.store == nullptr, std::string(f.name) == "--help") << f.name;
    if (f.group == FlagGroup::internal || f.store == nullptr) continue;
    EXPECT_NE(top.find(f.name), std::string::npos) << f.name << " is missing from rungs --help";
    for (Command c : commands)
      if (f.commands & (1u << static_cast<unsigned>(c))) {
        const std::string h = help_text(c);
        EXPECT_NE(h.find(std::string("  ") + f.name), std::string::npos)
            << f.name << " is missing from rungs " << command_name(c) << " --help";
      }
  }
  for (Command c : {Command::none, Command::info, Command::list, Command::bench, Command::verify, Command::tune,
                    Command::profile})
    for (const std::string& line : split(help_text(c), '\n')) EXPECT_LE(line.size(), 110u) << line;
  // A flag's help text for one command where it means something else there.
  EXPECT_NE(help_text(Command::profile).find("(default i64)"), std::string::npos);
  EXPECT_EQ(help_text(Command::bench).find("(default i64)"), std::string::npos);
  EXPECT_NE(help_text(Command::info).find("--device N"), std::string::npos);
  EXPECT_EQ(help_text(Command::info).find("--format"), std::string::npos);
}

TEST(CliArgs, ReferenceRows) {
  Args a;
  EXPECT_EQ(reference_rows(a, {1024, 1024, 1024}), 0);                  // 2^30: all rows
  EXPECT_EQ(reference_rows(a, {2048, 2048, 2048}), kDefaultCheckRows);  // sampled
  EXPECT_EQ(reference_rows(a, {100, 8192, 8192}), 0);                   // fewer rows than the sample
  a.check_rows = 0;
  EXPECT_EQ(reference_rows(a, {8192, 8192, 8192}), 0);
  a.check_rows = 10;
  EXPECT_EQ(reference_rows(a, {64, 64, 64}), 10);
  EXPECT_EQ(reference_rows(a, {8, 64, 64}), 0);
}

TEST(CliArgs, SelectVariants) {
  const std::vector<VariantInfo> ladder = {
      {"cpu_naive", "host", 0, 0, false}, {"naive", "n", 1, 70, false}, {"cublas", "vendor", 2, 75, true}};
  const auto all = select_variants(ladder, {}, "gemm");
  ASSERT_EQ(all.size(), 4u);  // the ladder, then auto
  EXPECT_EQ(all.back().name, "auto");
  EXPECT_EQ(select_variants(ladder, {"auto"}, "gemm").size(), 1u);
  const auto s = select_variants(ladder, {"cublas", "0", "naive", "cublas"}, "gemm");
  ASSERT_EQ(s.size(), 3u);  // ladder order, no duplicates
  EXPECT_EQ(s[0].name, "cpu_naive");
  EXPECT_EQ(s[2].name, "cublas");
  try {
    (void)select_variants(ladder, {"naive", "warpy"}, "gemm");
    ADD_FAILURE();
  } catch (const CliError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("warpy"), std::string::npos) << m;
    EXPECT_NE(m.find("--variant"), std::string::npos) << m;
    EXPECT_NE(m.find("cublas"), std::string::npos) << m;  // lists the known ones
    EXPECT_EQ(e.code(), 2);
  }
  EXPECT_THROW((void)select_variants(ladder, {"7"}, "gemm"), CliError);
}

// The top level without a GPU: help, list and argument errors never touch the device.
TEST(CliMain, NoGpuPathsAndExitCodes) {
  std::ostringstream out, err;
  EXPECT_EQ(run_main({"--help"}, "rungs", out, err), 0);
  EXPECT_NE(out.str().find("Usage"), std::string::npos);
  out.str("");
  EXPECT_EQ(run_main({"list"}, "rungs", out, err), 0);
  EXPECT_NE(out.str().find("cublas"), std::string::npos);
  EXPECT_NE(out.str().find("gemv (8 rungs)"), std::string::npos);
  EXPECT_NE(out.str().find("reduce (9 rungs)"), std::string::npos);
  EXPECT_NE(out.str().find("cub"), std::string::npos);
  EXPECT_NE(out.str().find("min_sm"), std::string::npos);
  EXPECT_NE(out.str().find("baseline"), std::string::npos);
  EXPECT_EQ(err.str(), "");
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"frob"}, {"bench", "--bogus"}, {"bench", "--variant", "nope"},
        {"verify", "gemm", "--baseline", "x"}, {"bench", "gemv", "--k", "3"}, {"bench", "gemm", "--size", "0"}}) {
    out.str("");
    err.str("");
    EXPECT_EQ(run_main(argv, "rungs", out, err), 2) << argv.back();
    const std::string e = err.str();
    EXPECT_EQ(e.rfind("rungs: error: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), e.size() - 1) << "one line: " << e;
    EXPECT_EQ(out.str(), "");
  }
}

}  // namespace
}  // namespace rungs::cli

namespace rungs::cli {
namespace {

// rungs bench allgather_gemm|gemm_reducescatter: the call's sizes as gemm's --m --n --k, --world;
// list takes them too; no other command, transpose or type.
TEST(CliArgs, BenchDist) {
  const Args a = parse_args({"bench", "allgather_gemm", "--world", "2", "--m", "37", "--n", "64", "--k", "128"});
  EXPECT_EQ(a.op, "allgather_gemm");
  EXPECT_EQ(a.world, 2);
  ASSERT_EQ(a.shapes.size(), 1u);
  EXPECT_EQ(a.shapes[0], (Shape{37, 64, 128}));
  EXPECT_EQ(parse_args({"bench", "gemm_reducescatter"}).world, 0);
  EXPECT_TRUE(parse_args({"bench", "gemm_reducescatter"}).shapes.empty());
  EXPECT_EQ(parse_args({"list", "gemm_reducescatter"}).op, "gemm_reducescatter");
  EXPECT_TRUE(is_dist_op("allgather_gemm"));
  EXPECT_FALSE(is_dist_op("gemm"));
  EXPECT_EQ(op_from_name("allgather_gemm"), Op::allgather_gemm);
  EXPECT_EQ(op_from_name("gemm_reducescatter"), Op::gemm_reducescatter);
  EXPECT_NE(parse_error({"bench", "gemm", "--world", "2"}).find("--world applies to rungs bench allgather_gemm"),
            std::string::npos);
  EXPECT_NE(parse_error({"verify", "allgather_gemm"}).find("checked by the GPU tests"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "allgather_gemm", "--trans", "nt"}).find("--trans does not apply"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm_reducescatter", "--dtype", "f16"}).find("--dtype does not apply"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "allgather_gemm", "--world", "0"}).find("--world: 0 is out of range"),
            std::string::npos);
  EXPECT_EQ(parse_args({"bench", "gemm_reducescatter", "--pieces", "4"}).pieces, 4);
  EXPECT_EQ(parse_args({"bench", "gemm_reducescatter"}).pieces, 0);
  EXPECT_NE(parse_error({"bench", "gemm", "--pieces", "4"}).find("--pieces applies to rungs bench allgather_gemm"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "allgather_gemm", "--pieces", "0"}).find("--pieces: 0 is out of range"),
            std::string::npos);
}

// bench chain: --model, --m (the batch) and --dtype bf16/fp8; the model fixes every n and k.
TEST(CliArgs, BenchChain) {
  const Args a = parse_args({"bench", "chain", "--model", "all", "--m", "1,16", "--dtype", "bf16,fp8"});
  EXPECT_EQ(a.op, "chain");
  EXPECT_EQ(a.models, (std::vector<std::string>{"llama3-8b", "llama3-70b"}));
  ASSERT_EQ(a.shapes.size(), 2u);
  EXPECT_EQ(a.shapes[1].m, 16);
  EXPECT_EQ(a.gemm_kinds, (std::vector<check::GemmKind>{check::GemmKind::bf16, check::GemmKind::fp8}));
  const Args d = parse_args({"bench", "chain"});
  EXPECT_TRUE(d.models.empty() && d.shapes.empty() && d.gemm_kinds.empty());
  auto has = [](const std::string& error, const char* what) {
    EXPECT_NE(error.find(what), std::string::npos) << error;
  };
  has(parse_error({"bench", "chain", "--n", "4096"}), "bench chain takes --model, --m and --dtype");
  has(parse_error({"bench", "chain", "--trans", "nt"}), "bench chain takes --model, --m and --dtype");
  has(parse_error({"bench", "chain", "--dtype", "f32"}), "bench chain times bf16 or fp8 (got f32)");
  has(parse_error({"bench", "chain", "--model", "llama2"}), "--model: 'llama2' is not llama3-8b, llama3-70b or all");
  has(parse_error({"bench", "gemm", "--model", "llama3-8b"}), "--model applies to rungs bench chain only");
  has(parse_error({"bench", "chain", "--dtype", "fp8", "--scaling", "block128"}), "--scaling applies to rungs bench gemm only");
  has(parse_error({"bench", "chain", "--m", "5000"}), "--m");
  has(parse_error({"verify", "chain"}), "unknown operation 'chain'");
}

// The chains' products: Llama-3.1-8B's 129 (15.0 GB of bf16 weights) and 70B's 33 (15.8 GB); each
// product's k at most the n of the one before, so C of one can be the A of the next.
TEST(BenchChain, ModelProducts) {
  auto weights = [](const std::vector<ChainProduct>& ps) {
    double params = 0;
    for (const ChainProduct& p : ps) params += double(p.n) * double(p.k);
    return params;
  };
  const std::vector<ChainProduct> small = chain_products("llama3-8b"), large = chain_products("llama3-70b");
  EXPECT_EQ(small.size(), 129u);
  EXPECT_EQ(weights(small), 7504658432.0);
  EXPECT_EQ(large.size(), 33u);
  EXPECT_EQ(weights(large), 7895777280.0);
  for (const auto* ps : {&small, &large}) {
    EXPECT_EQ(ps->back().name, "lm_head");
    EXPECT_EQ(ps->back().n, 128256);
    for (size_t i = 1; i < ps->size(); ++i) EXPECT_LE((*ps)[i].k, (*ps)[i - 1].n) << (*ps)[i].name;
  }
  EXPECT_EQ(chain_models(), (std::vector<std::string>{"llama3-8b", "llama3-70b"}));
  EXPECT_THROW((void)chain_products("gpt2"), CliError);
}

TEST(CliArgs, BenchGemmHost) {
  const Args a = parse_args({"bench", "gemm_host", "--size", "1024,4096", "--memory", "pinned", "--trans", "nt"});
  EXPECT_EQ(a.op, "gemm_host");
  ASSERT_EQ(a.shapes.size(), 2u);
  EXPECT_EQ(a.shapes[1], (Shape{4096, 4096, 4096}));
  EXPECT_EQ(a.memory, (std::vector<std::string>{"pinned"}));
  ASSERT_EQ(a.trans.size(), 1u);
  EXPECT_EQ(a.trans[0].b, Trans::T);
  EXPECT_EQ(parse_args({"bench", "gemm_host", "--memory", "all"}).memory,
            (std::vector<std::string>{"pinned", "pageable"}));
  EXPECT_NE(parse_error({"bench", "gemm_host", "--memory", "unified"}).find("--memory: 'unified' is not pinned"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm", "--memory", "pinned"}).find("--memory applies to rungs bench gemm_host"),
            std::string::npos);
  EXPECT_TRUE(parse_args({"bench", "gemm_host", "--no-graph"}).no_graph);
  EXPECT_FALSE(parse_args({"bench", "gemm_host"}).no_graph);
  EXPECT_NE(parse_error({"bench", "reduce", "--no-graph"}).find("--no-graph applies to rungs bench gemm_host"),
            std::string::npos);
  EXPECT_EQ(parse_args({"bench", "gemm_host", "--host-threads", "12"}).host_threads, 12);
  EXPECT_EQ(parse_args({"bench", "gemm_host"}).host_threads, 0);
  EXPECT_NE(parse_error({"bench", "gemm_host", "--host-threads", "0"}).find("--host-threads: 0 is out of range"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm", "--host-threads", "4"}).find("--host-threads applies to rungs bench gemm_host"),
            std::string::npos);
  EXPECT_TRUE(parse_args({"bench", "gemm_host", "--calls"}).calls);
  EXPECT_FALSE(parse_args({"bench", "gemm_host"}).calls);
  EXPECT_NE(parse_error({"bench", "gemv", "--calls"}).find("--calls applies to rungs bench gemm_host"), std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm_host", "--calls", "--format", "json"}).find("--calls prints its list"),
            std::string::npos);
  EXPECT_NE(parse_error({"verify", "gemm_host"}).find("unknown operation 'gemm_host'"), std::string::npos);
  EXPECT_NE(parse_error({"verify", "gemm", "--memory", "pinned"}).find("does not apply to 'rungs verify'"),
            std::string::npos);
}

// --plan's value, parsed in every build (the flag itself is a RUNGS_EXPERIMENTS build's).
TEST(CliArgs, PlanValues) {
  const host::Plan p = parse_plan("8x1:k2/0.5:r2");
  EXPECT_EQ(p.row_panels, 8);
  EXPECT_EQ(p.col_panels, 1);
  EXPECT_EQ(p.kmajor_chunks, 2);
  EXPECT_DOUBLE_EQ(p.kmajor_fraction, 0.5);
  EXPECT_EQ(p.kmajor_row_panels, 2);
  EXPECT_EQ(parse_plan("4x2").kmajor_chunks, 0);
  EXPECT_EQ(parse_plan("16x1:k4/0.25").kmajor_row_panels, 0);
  for (const char* bad : {"8x1:k2/0.5:r0", "8x1:k2/0.5:x2", "8x1:k2/0.5junk", "8x", "0x1", "8x1:k2/1.5", "8x1:r2"})
    EXPECT_THROW(parse_plan(bad), CliError) << bad;
}

// The experiment hooks' flags (--plan, --trace): in a RUNGS_EXPERIMENTS build only.
TEST(CliArgs, BenchGemmHostExperimentFlags) {
#ifndef RUNGS_EXPERIMENTS
  GTEST_SKIP() << "built without RUNGS_EXPERIMENTS";
#else
  EXPECT_EQ(parse_args({"bench", "gemm_host", "--plan", "8x1:k2/0.5"}).plan, "8x1:k2/0.5");
  EXPECT_NE(parse_error({"bench", "gemv", "--plan", "4x4"}).find("--plan applies to rungs bench gemm_host"),
            std::string::npos);
  EXPECT_TRUE(parse_args({"bench", "gemm_host", "--trace"}).trace);
  EXPECT_NE(parse_error({"bench", "gemm", "--trace"}).find("--trace applies to rungs bench gemm_host"),
            std::string::npos);
  EXPECT_NE(parse_error({"bench", "gemm_host", "--trace", "--format", "csv"}).find("--trace prints a timeline"),
            std::string::npos);
  EXPECT_NE(help_text(Command::bench).find("--plan RxC[:kN/F[:rP]]"), std::string::npos);
#endif
}

// Without RUNGS_EXPERIMENTS the hooks' flags are unknown, and bench's help says which build has them.
TEST(CliArgs, ExperimentFlagsUnknownWithoutTheHooks) {
#ifdef RUNGS_EXPERIMENTS
  GTEST_SKIP() << "built with RUNGS_EXPERIMENTS";
#else
  for (const char* flag : {"--plan", "--trace"}) {
    const std::string e = parse_error({"bench", "gemm_host", flag, "4x4"});
    EXPECT_EQ(e.rfind(std::string("unknown flag ") + flag + " for 'rungs bench'", 0), 0u) << e;
  }
  EXPECT_NE(help_text(Command::bench).find("-DRUNGS_EXPERIMENTS=ON adds --plan"), std::string::npos);
  EXPECT_EQ(help_text(Command::none).find("--trace"), std::string::npos);
#endif
}

// --epilogue, --gated, --out fp8: every gemm case carries the epilogue; fp8 outputs keep the bf16
// and fp8 kinds only; the words are checked.
std::string message_of(const std::vector<std::string>& argv) {
  try {
    (void)parse_args(argv);
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(CliArgs, EpilogueFlagsReachEveryGemmCase) {
  const std::vector<Case> c = cases_for(
      parse_args({"bench", "gemm", "--m", "16,4096", "--n", "14336", "--k", "4096", "--trans", "nt", "--dtype",
                  "bf16,f32", "--epilogue", "bias,silu", "--gated"}),
      "gemm");
  ASSERT_EQ(c.size(), 4u);
  for (const Case& x : c) {
    EXPECT_TRUE(x.epi.on && x.epi.bias && x.epi.gated && !x.epi.fp8_out);
    EXPECT_EQ(x.epi.act, Activation::silu);
    EXPECT_EQ(epi_name(x.epi), "bias+silu+gated");
  }
  const std::vector<Case> f = cases_for(
      parse_args({"bench", "gemm", "--size", "1024", "--dtype", "bf16,fp8", "--gated", "--out", "fp8"}), "gemm");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(epi_name(f[0].epi), "gated+fp8");
  EXPECT_TRUE(cases_for(parse_args({"bench", "gemm", "--size", "1024"}), "gemm")[0].epi.on == false);
  EXPECT_NE(message_of({"bench", "gemm", "--epilogue", "tanh"}).find("'tanh' is not bias, relu, gelu or silu"),
            std::string::npos);
  EXPECT_NE(message_of({"bench", "gemm", "--dtype", "f16", "--out", "fp8"}).find("--out fp8 takes bf16 or fp8"),
            std::string::npos);
}

}  // namespace
}  // namespace rungs::cli
