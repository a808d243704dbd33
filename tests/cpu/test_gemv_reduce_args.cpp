// Argument checking of rungs::gemv and rungs::reduce_sum, and their ladder lists: all of it
// happens before any GPU work (and before `auto` is resolved, which needs the device), so
// these run in CI without a GPU.
#include <rungs/rungs.hpp>

#include "api_errors.hpp"

#include "gemv/gemv_rung.hpp"
#include "reduce/reduce_rung.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

namespace rungs::test {
namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// Both a named rung and `auto`: argument errors come before the variant is looked up or
// resolved, so `auto` gives the same message without touching the GPU.
const Options kOpts[2] = {named("naive"), Options{}};

TEST(GemvArgs, NegativeSizesNameTheArgument) {
  for (const Options& o : kOpts) {
    auto m = error_of([&] { gemv(Trans::N, -1, 4, 1, fake(), 4, fake(), 1, 0, fake(), 1, o); });
    EXPECT_TRUE(has(m, "rungs::gemv: invalid argument m = -1")) << m;
    auto n = error_of([&] { gemv(Trans::T, 4, -2, 1, fake(), 4, fake(), 1, 0, fake(), 1, o); });
    EXPECT_TRUE(has(n, "n = -2")) << n;
    EXPECT_FALSE(has(m, "UNSUPPORTED") || has(n, "UNSUPPORTED"));
  }
}

TEST(GemvArgs, LeadingDimensionAndIncrements) {
  for (const Options& o : kOpts) {
    auto a = error_of([&] { gemv(Trans::N, 5, 6, 1, fake(), 5, fake(), 1, 0, fake(), 1, o); });
    EXPECT_TRUE(has(a, "lda = 5")) << a;
    auto at = error_of([&] { gemv(Trans::T, 5, 6, 1, fake(), 5, fake(), 1, 0, fake(), 1, o); });
    EXPECT_TRUE(has(at, "lda = 5")) << at;  // A is stored m x n either way: lda >= n
    auto z = error_of([&] { gemv(Trans::N, 5, 0, 1, nullptr, 0, nullptr, 1, 0, fake(), 1, o); });
    EXPECT_TRUE(has(z, "lda = 0")) << z;  // lda >= max(1, n)
    for (int64_t inc : {0, -1}) {
      auto x = error_of([&] { gemv(Trans::N, 5, 6, 1, fake(), 6, fake(), inc, 0, fake(), 1, o); });
      EXPECT_TRUE(has(x, "incx = " + std::to_string(inc))) << x;
      auto y = error_of([&] { gemv(Trans::N, 5, 6, 1, fake(), 6, fake(), 1, 0, fake(), inc, o); });
      EXPECT_TRUE(has(y, "incy = " + std::to_string(inc))) << y;
    }
  }
}

TEST(GemvArgs, MathMustBeFp32AndIsAnErrorNotUnsupported) {
  for (Math m : {Math::tf32, Math::tf32x3})
    for (Options o : kOpts) {
      o.math = m;
      auto e = error_of([&] { gemv(Trans::N, 2, 2, 1, fake(), 2, fake(), 1, 0, fake(), 1, o); });
      EXPECT_TRUE(has(e, "math must be Math::fp32")) << e;
      EXPECT_FALSE(has(e, "UNSUPPORTED")) << e;
    }
}

TEST(GemvArgs, UnknownVariantListsTheKnownOnes) {
  auto v = error_of([&] { gemv(Trans::N, 2, 2, 1, fake(), 2, fake(), 1, 0, fake(), 1, named("fastest")); });
  EXPECT_TRUE(has(v, "unknown variant \"fastest\"")) << v;
  EXPECT_FALSE(has(v, "UNSUPPORTED"));
  for (const auto& r : variants(Op::gemv)) EXPECT_TRUE(has(v, r.name)) << v;
  auto e = error_of([&] { (void)resolve_gemv_variant(Trans::N, 2, 2, named("fastest")); });
  EXPECT_TRUE(has(e, "unknown variant")) << e;
  EXPECT_EQ(resolve_gemv_variant(Trans::T, 2, 2, named("split_k")), "split_k");
}

TEST(GemvArgs, NullPointersOnlyWhereNothingIsRead) {
  const Options o = named("naive");
  auto y = error_of([&] { gemv(Trans::N, 3, 3, 1, fake(), 3, fake(), 1, 0, nullptr, 1, o); });
  EXPECT_TRUE(has(y, "y = nullptr")) << y;
  auto a = error_of([&] { gemv(Trans::N, 3, 3, 1, nullptr, 3, fake(), 1, 0, fake(), 1, o); });
  EXPECT_TRUE(has(a, "A = nullptr")) << a;
  auto x = error_of([&] { gemv(Trans::T, 3, 3, 1, fake(), 3, nullptr, 1, 0, fake(), 1, o); });
  EXPECT_TRUE(has(x, "x = nullptr")) << x;
  // An empty y (out_len 0) is a no-op: every pointer may be null and no GPU is needed.
  EXPECT_EQ("", error_of([&] { gemv(Trans::N, 0, 3, 1, nullptr, 3, nullptr, 1, 0, nullptr, 1, o); }));
  EXPECT_EQ("", error_of([&] { gemv(Trans::T, 3, 0, 1, nullptr, 1, nullptr, 1, 0, nullptr, 1, o); }));
}

template <typename T, typename S>
void reduce_arg_errors(const char* type) {
  SCOPED_TRACE(type);
  for (const Options& o : {named("sequential"), Options{}}) {
    auto n = error_of([&] { reduce_sum(fake<const T>(), -1, fake<S>(), o); });
    EXPECT_TRUE(has(n, "rungs::reduce_sum: invalid argument n = -1")) << n;
    auto in = error_of([&] { reduce_sum(static_cast<const T*>(nullptr), 5, fake<S>(), o); });
    EXPECT_TRUE(has(in, "in = nullptr")) << in;
    auto out = error_of([&] { reduce_sum(fake<const T>(), 5, static_cast<S*>(nullptr), o); });
    EXPECT_TRUE(has(out, "out = nullptr")) << out;
    auto out0 = error_of([&] { reduce_sum(static_cast<const T*>(nullptr), 0, static_cast<S*>(nullptr), o); });
    EXPECT_TRUE(has(out0, "out = nullptr")) << out0;  // n == 0 still writes the 0
    Options m = o;
    m.math = Math::tf32;
    auto mm = error_of([&] { reduce_sum(fake<const T>(), 5, fake<S>(), m); });
    EXPECT_TRUE(has(mm, "math must be Math::fp32")) << mm;
    for (const auto& e : {n, in, out, out0, mm}) EXPECT_FALSE(has(e, "UNSUPPORTED")) << e;
  }
  auto v = error_of([&] { reduce_sum(fake<const T>(), 5, fake<S>(), named("fastest")); });
  EXPECT_TRUE(has(v, "unknown variant \"fastest\"")) << v;
  EXPECT_FALSE(has(v, "UNSUPPORTED"));
  for (const auto& r : variants(Op::reduce)) EXPECT_TRUE(has(v, r.name)) << v;
}

// What `auto` runs at each seed workload of `rungs bench gemv` on sm_90: the rung the bench measured
// fastest there, or within its noise (docs/gemv.md). gemv() runs exactly the resolved rung, so auto
// and that rung launch the same kernel: a timing gap between them is the harness's, not the library's.
TEST(GemvAuto, SeedShapesPickTheMeasuredRung) {
  struct Seed {
    Trans t;
    int64_t m, n;
    const char* rung;
  };
  const Seed seeds[] = {
      {Trans::N, 4096, 4096, "multi_row"},        {Trans::T, 4096, 4096, "multi_row"},
      {Trans::N, 8192, 8192, "multi_row"},        {Trans::T, 8192, 8192, "multi_row"},
      {Trans::N, 16384, 16384, "multi_row"},      {Trans::T, 16384, 16384, "multi_row"},
      {Trans::N, 32768, 32768, "multi_row"},      {Trans::T, 32768, 32768, "multi_row"},
      {Trans::N, int64_t{1} << 20, 64, "multi_row"}, {Trans::T, int64_t{1} << 20, 64, "split_k"},
      {Trans::N, 64, int64_t{1} << 20, "split_k"},   {Trans::T, 64, int64_t{1} << 20, "multi_row"},
  };
  for (const Seed& s : seeds)
    EXPECT_EQ(sgemv::auto_variant(s.t, s.m, s.n, 90), s.rung)
        << (s.t == Trans::N ? "n " : "t ") << s.m << " x " << s.n;
}

TEST(ReduceArgs, BadArgumentsThrowErrorForEveryType) {
  reduce_arg_errors<int32_t, int64_t>("int32");
  reduce_arg_errors<int64_t, int64_t>("int64");
  reduce_arg_errors<float, float>("float");
  reduce_arg_errors<double, double>("double");
  auto e = error_of([&] { (void)resolve_reduce_variant(DType::f32, 10, named("fastest")); });
  EXPECT_TRUE(has(e, "unknown variant")) << e;
  EXPECT_EQ(resolve_reduce_variant(DType::i64, 10, named("cub")), "cub");
}

// Both new ladders: numbered from 1 in list order, unique names, one vendor baseline, a
// numbered file per rung (src/<op>/NN_name.{cu,cpp}).
void check_ladder(Op op, const char* dir, const char* baseline) {
  namespace fs = std::filesystem;
  const auto v = variants(op);
  ASSERT_GE(v.size(), 2u);
  std::set<std::string> names;
  int baselines = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].rung, static_cast<int>(i) + 1) << v[i].name;
    EXPECT_TRUE(names.insert(v[i].name).second) << "duplicate " << v[i].name;
    EXPECT_FALSE(v[i].summary.empty()) << v[i].name;
    EXPECT_NE(v[i].name, "auto");
    if (v[i].baseline) {
      ++baselines;
      EXPECT_EQ(v[i].name, baseline);
    }
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02d_", v[i].rung);
    bool found = false;
    for (const char* ext : {".cu", ".cpp"})
      found = found || fs::exists(fs::path(RUNGS_SOURCE_DIR) / "src" / dir / (prefix + v[i].name + ext));
    EXPECT_TRUE(found) << "no file src/" << dir << "/" << prefix << v[i].name << ".{cu,cpp}";
  }
  EXPECT_EQ(baselines, 1);
}

TEST(Ladders, GemvAndReduceListsAreWellFormed) {
  check_ladder(Op::gemv, "gemv", "cublas");
  check_ladder(Op::reduce, "reduce", "cub");
  // `auto` must resolve floats to an accurate rung, so the ladder needs at least one, and
  // reduce::ladder() is the list variants(Op::reduce) reports.
  const auto& ladder = reduce::ladder();
  const auto v = variants(Op::reduce);
  ASSERT_EQ(ladder.size(), v.size());
  bool any_accurate = false;
  for (size_t i = 0; i < ladder.size(); ++i) {
    EXPECT_EQ(v[i].name, ladder[i].name);
    any_accurate = any_accurate || ladder[i].accurate;
  }
  EXPECT_TRUE(any_accurate);
}

}  // namespace
}  // namespace rungs::test
