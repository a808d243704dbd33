// Argument checking of rungs::gemm and the ladder registry: all of it runs before any GPU
// work, so these run in CI without a GPU.
#include <rungs/rungs.hpp>

#include "api_errors.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>

namespace rungs::test {
namespace {

TEST(GemmArgs, NegativeSizesNameTheArgument) {
  const Options o = named("cublas");
  auto m = error_of([&] { gemm(Trans::N, Trans::N, -1, 4, 4, 1, fake(), 4, fake(), 4, 0, fake(), 4, o); });
  EXPECT_NE(m.find("m = -1"), std::string::npos) << m;
  auto n = error_of([&] { gemm(Trans::N, Trans::N, 4, -2, 4, 1, fake(), 4, fake(), 4, 0, fake(), 4, o); });
  EXPECT_NE(n.find("n = -2"), std::string::npos) << n;
  auto k = error_of([&] { gemm(Trans::N, Trans::N, 4, 4, -3, 1, fake(), 4, fake(), 4, 0, fake(), 4, o); });
  EXPECT_NE(k.find("k = -3"), std::string::npos) << k;
}

TEST(GemmArgs, LeadingDimensionsFollowTheTranspose) {
  const Options o = named("cublas");
  // A is m x k (N) or k x m (T): m = 5, k = 7.
  auto a = error_of([&] { gemm(Trans::N, Trans::N, 5, 6, 7, 1, fake(), 6, fake(), 6, 0, fake(), 6, o); });
  EXPECT_NE(a.find("lda = 6"), std::string::npos) << a;
  auto at = error_of([&] { gemm(Trans::T, Trans::N, 5, 6, 7, 1, fake(), 4, fake(), 6, 0, fake(), 6, o); });
  EXPECT_NE(at.find("lda = 4"), std::string::npos) << at;
  auto b = error_of([&] { gemm(Trans::N, Trans::N, 5, 6, 7, 1, fake(), 7, fake(), 5, 0, fake(), 6, o); });
  EXPECT_NE(b.find("ldb = 5"), std::string::npos) << b;
  auto bt = error_of([&] { gemm(Trans::N, Trans::T, 5, 6, 7, 1, fake(), 7, fake(), 6, 0, fake(), 6, o); });
  EXPECT_NE(bt.find("ldb = 6"), std::string::npos) << bt;
  auto c = error_of([&] { gemm(Trans::N, Trans::N, 5, 6, 7, 1, fake(), 7, fake(), 6, 0, fake(), 5, o); });
  EXPECT_NE(c.find("ldc = 5"), std::string::npos) << c;
  // ld >= max(1, row length): a 0 x 0 problem still needs ld >= 1.
  auto z = error_of([&] { gemm(Trans::N, Trans::N, 0, 0, 0, 1, nullptr, 0, nullptr, 1, 0, nullptr, 1, o); });
  EXPECT_NE(z.find("lda = 0"), std::string::npos) << z;
}

TEST(GemmArgs, NullPointersOnlyWhereNothingIsRead) {
  const Options o = named("cublas");
  auto c = error_of([&] { gemm(Trans::N, Trans::N, 3, 3, 3, 1, fake(), 3, fake(), 3, 0, nullptr, 3, o); });
  EXPECT_NE(c.find("C = nullptr"), std::string::npos) << c;
  auto a = error_of([&] { gemm(Trans::N, Trans::N, 3, 3, 3, 1, nullptr, 3, fake(), 3, 0, fake(), 3, o); });
  EXPECT_NE(a.find("A = nullptr"), std::string::npos) << a;
  auto b = error_of([&] { gemm(Trans::N, Trans::N, 3, 3, 3, 1, fake(), 3, nullptr, 3, 0, fake(), 3, o); });
  EXPECT_NE(b.find("B = nullptr"), std::string::npos) << b;
  // m == 0 or n == 0 is a no-op: no pointer is touched, no GPU needed.
  EXPECT_EQ("", error_of([&] { gemm(Trans::N, Trans::N, 0, 3, 3, 1, nullptr, 3, nullptr, 3, 0, nullptr, 3, o); }));
  EXPECT_EQ("", error_of([&] { gemm(Trans::N, Trans::N, 3, 0, 3, 1, nullptr, 3, nullptr, 1, 0, nullptr, 1, o); }));
}

TEST(GemmArgs, UnknownVariantAndMathModesAreErrorsNotUnsupported) {
  auto v = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, named("fastest")); });
  EXPECT_NE(v.find("unknown variant \"fastest\""), std::string::npos) << v;
  EXPECT_EQ(v.find("UNSUPPORTED"), std::string::npos);
  Options o = named("cublas");
  o.math = Math::tf32;
  auto t = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, o); });
  EXPECT_NE(t.find("math = tf32"), std::string::npos) << t;
  EXPECT_EQ(t.find("UNSUPPORTED"), std::string::npos);
}

TEST(Ladder, ListIsOrderedUniqueAndHasTheBaseline) {
  const auto v = variants(Op::gemm);
  ASSERT_GE(v.size(), 11u);
  std::set<std::string> names;
  int baselines = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].rung, static_cast<int>(i));
    EXPECT_TRUE(names.insert(v[i].name).second) << "duplicate " << v[i].name;
    EXPECT_FALSE(v[i].summary.empty());
    baselines += v[i].baseline;
  }
  EXPECT_EQ(baselines, 1);
  EXPECT_TRUE(names.count("cublas"));
}

// One rung per file: src/gemm/NN_name.{cu,cpp}, whose first line says which rung it is.
TEST(Ladder, EveryRungHasItsNumberedFileWithAHeader) {
  namespace fs = std::filesystem;
  for (const auto& v : variants(Op::gemm)) {
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%02d_", v.rung);
    fs::path found;
    for (const char* ext : {".cu", ".cpp"}) {
      fs::path p = fs::path(RUNGS_SOURCE_DIR) / "src" / "gemm" / (prefix + v.name + ext);
      if (fs::exists(p)) found = p;
    }
    ASSERT_FALSE(found.empty()) << "no file src/gemm/" << prefix << v.name << ".{cu,cpp}";
    std::ifstream in(found);
    std::string first;
    std::getline(in, first);
    const bool says = first.find("Rung " + std::to_string(v.rung) + ", " + v.name + ":") != std::string::npos ||
                      first.find(std::string("Rung ") + prefix[0] + prefix[1] + ", " + v.name + ":") != std::string::npos;
    EXPECT_TRUE(says) << found << " should start with \"// Rung " << v.rung << ", " << v.name
                      << ": what it adds\" but starts with: " << first;
  }
}

}  // namespace
}  // namespace rungs::test
