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

float* const nf = nullptr;  // a typed null: gemm is overloaded on the element type

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
  auto z = error_of([&] { gemm(Trans::N, Trans::N, 0, 0, 0, 1, nf, 0, nf, 1, 0, nf, 1, o); });
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
  EXPECT_EQ("", error_of([&] { gemm(Trans::N, Trans::N, 0, 3, 3, 1, nf, 3, nf, 3, 0, nf, 3, o); }));
  EXPECT_EQ("", error_of([&] { gemm(Trans::N, Trans::N, 3, 0, 3, 1, nf, 3, nf, 1, 0, nf, 1, o); }));
}

TEST(GemmArgs, UnknownVariantIsAnErrorNotUnsupported) {
  auto v = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, named("fastest")); });
  EXPECT_NE(v.find("unknown variant \"fastest\""), std::string::npos) << v;
  EXPECT_EQ(v.find("UNSUPPORTED"), std::string::npos);
  auto h = error_of([&] {
    gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake<__half>(), 2, fake<__half>(), 2, 0, fake<__half>(), 2, named("fast"));
  });
  EXPECT_NE(h.find("unknown variant \"fast\""), std::string::npos) << h;
}

// Options::math applies to float only: a half or bf16 call with tf32 / tf32x3 is an argument error.
TEST(GemmArgs, MathModesOnHalfAndBf16AreErrors) {
  for (Math m : {Math::tf32, Math::tf32x3}) {
    Options o = named("cublas");
    o.math = m;
    const std::string want = m == Math::tf32 ? "opts.math = tf32" : "opts.math = tf32x3";
    auto h = error_of([&] {
      gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake<__half>(), 2, fake<__half>(), 2, 0, fake<__half>(), 2, o);
    });
    EXPECT_NE(h.find(want + " for __half"), std::string::npos) << h;
    EXPECT_EQ(h.find("UNSUPPORTED"), std::string::npos) << h;
    using BF = __nv_bfloat16;
    auto b = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake<BF>(), 2, fake<BF>(), 2, 0, fake<BF>(), 2, o); });
    EXPECT_NE(b.find(want + " for __nv_bfloat16"), std::string::npos) << b;
    EXPECT_EQ(b.find("UNSUPPORTED"), std::string::npos) << b;
  }
}

// A rung asked for a type or math mode it does not do: Unsupported naming both, before any GPU work.
TEST(GemmArgs, TypesARungDoesNotDoAreUnsupported) {
  Options o = named("warptile");
  auto h = error_of([&] {
    gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake<__half>(), 2, fake<__half>(), 2, 0, fake<__half>(), 2, o);
  });
  EXPECT_NE(h.find("UNSUPPORTED warptile: does not do __half"), std::string::npos) << h;
  o.math = Math::tf32x3;
  auto x = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, o); });
  EXPECT_NE(x.find("UNSUPPORTED warptile: does not do float inputs with math = tf32x3"), std::string::npos) << x;
  Options w = named("wmma");  // tensor cores only: no exact-fp32 path
  auto f = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, w); });
  EXPECT_NE(f.find("UNSUPPORTED wmma: does not do float inputs with math = fp32"), std::string::npos) << f;
  Options c = named("cublas");  // cuBLAS has no 3xTF32
  c.math = Math::tf32x3;
  auto cx = error_of([&] { gemm(Trans::N, Trans::N, 2, 2, 2, 1, fake(), 2, fake(), 2, 0, fake(), 2, c); });
  EXPECT_NE(cx.find("UNSUPPORTED cublas"), std::string::npos) << cx;
}

// The half and bf16 overloads check their arguments like the float one.
TEST(GemmArgs, HalfAndBf16ArgumentsAreChecked) {
  const Options o = named("cublas");
  auto m = error_of([&] {
    gemm(Trans::N, Trans::N, -1, 4, 4, 1, fake<__half>(), 4, fake<__half>(), 4, 0, fake<__half>(), 4, o);
  });
  EXPECT_NE(m.find("m = -1"), std::string::npos) << m;
  using BF = __nv_bfloat16;
  auto l = error_of([&] { gemm(Trans::T, Trans::N, 5, 6, 7, 1, fake<BF>(), 4, fake<BF>(), 6, 0, fake<BF>(), 6, o); });
  EXPECT_NE(l.find("lda = 4"), std::string::npos) << l;
  auto c = error_of([&] {
    gemm(Trans::N, Trans::N, 3, 3, 3, 1, fake<BF>(), 3, fake<BF>(), 3, 0, static_cast<BF*>(nullptr), 3, o);
  });
  EXPECT_NE(c.find("C = nullptr"), std::string::npos) << c;
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

// Each rung lists what it does; the CUDA-core rungs do f32 only, the tensor-core rungs no f32.
TEST(Ladder, TypesFollowTheEntryPoints) {
  for (const auto& v : variants(Op::gemm)) {
    EXPECT_FALSE(v.types.empty()) << v.name;
    if (v.name == "cublas") {
      EXPECT_EQ(v.types, "f32 tf32 f16 bf16 fp8");
    } else if (v.name == "wmma") {
      EXPECT_EQ(v.types, "tf32 tf32x3 f16 bf16");
    } else if (v.name == "mma_sync") {
      EXPECT_EQ(v.types, "f16 bf16");
    } else if (v.name == "warptile") {
      EXPECT_EQ(v.types, "f32");
    }
  }
  for (const auto& v : variants(Op::gemv)) EXPECT_TRUE(v.types.empty()) << v.name;
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
