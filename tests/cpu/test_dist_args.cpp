// rungs::dist without GPUs: each rank's own argument checks come before any NCCL or CUDA call (a
// null communicator is never passed to NCCL), and the dist ladders as variants() lists them.
#include <rungs/rungs.hpp>

#include "api_errors.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#if RUNGS_HAVE_DIST
#include <rungs/dist.hpp>

#include "dist/dist_rung.hpp"
#endif

namespace rungs::test {
namespace {

#if RUNGS_HAVE_DIST
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using B16 = __nv_bfloat16;

TEST(DistArgs, NullCommunicatorIsNamed) {
  const std::string e = error_of([] {
    dist::allgather_gemm(4, 8, 16, 1.0f, fake<B16>(), 16, fake<B16>(), 8, 0.0f, fake<B16>(), 8, nullptr);
  });
  EXPECT_TRUE(has(e, "dist::allgather_gemm")) << e;
  EXPECT_TRUE(has(e, "comm")) << e;
  const std::string r = error_of([] {
    dist::gemm_reducescatter(4, 8, 16, 1.0f, fake<__half>(), 16, fake<__half>(), 8, 0.0f, fake<__half>(), 8,
                             nullptr);
  });
  EXPECT_TRUE(has(r, "dist::gemm_reducescatter")) << r;
  EXPECT_TRUE(has(r, "comm")) << r;
}

// The argument's own error comes first (a null communicator only after the arguments pass).
TEST(DistArgs, EachArgumentIsNamed) {
  auto ag = [](int64_t m, int64_t n, int64_t k, const B16* A, int64_t lda, const B16* B, int64_t ldb, B16* C,
               int64_t ldc, float alpha = 1.0f, const char* variant = "auto") {
    return error_of([=] { dist::allgather_gemm(m, n, k, alpha, A, lda, B, ldb, 0.0f, C, ldc, nullptr, named(variant)); });
  };
  auto rs = [](int64_t m, int64_t n, int64_t k, const B16* A, int64_t lda, const B16* B, int64_t ldb, B16* C,
               int64_t ldc) {
    return error_of([=] { dist::gemm_reducescatter(m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc, nullptr); });
  };
  B16* p = fake<B16>();
  EXPECT_TRUE(has(ag(-1, 8, 16, p, 16, p, 8, p, 8), "m_local = -1")) << ag(-1, 8, 16, p, 16, p, 8, p, 8);
  EXPECT_TRUE(has(ag(4, -2, 16, p, 16, p, 8, p, 8), "n_local = -2"));
  EXPECT_TRUE(has(ag(4, 8, -3, p, 16, p, 8, p, 8), "k = -3"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 15, p, 8, p, 8), "lda = 15"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, p, 7, p, 8), "ldb = 7"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, p, 8, p, 7), "ldc = 7"));
  EXPECT_TRUE(has(ag(4, 8, 16, nullptr, 16, p, 8, p, 8), "A_local"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, nullptr, 8, p, 8), "invalid argument B"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, p, 8, nullptr, 8), "invalid argument C"));
  // A_local is gathered whatever this rank's alpha; B is not read with alpha == 0.
  EXPECT_TRUE(has(ag(4, 8, 16, nullptr, 16, p, 8, p, 8, 0.0f), "A_local"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, nullptr, 8, p, 8, 0.0f), "comm"));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, p, 8, p, 8, 1.0f, "no_such_rung"), "unknown variant \"no_such_rung\""));
  EXPECT_TRUE(has(ag(4, 8, 16, p, 16, p, 8, p, 8, 1.0f, "no_such_rung"), "nccl_then_gemm"));
  // Empty problems: only the communicator is left to check.
  EXPECT_TRUE(has(ag(0, 8, 16, nullptr, 16, nullptr, 8, nullptr, 8), "comm"));

  EXPECT_TRUE(has(rs(-1, 8, 16, p, 16, p, 8, p, 8), "m = -1"));
  EXPECT_TRUE(has(rs(4, 8, -1, p, 16, p, 8, p, 8), "k_local = -1"));
  EXPECT_TRUE(has(rs(4, 8, 16, p, 16, p, 8, nullptr, 8), "C_local"));
  EXPECT_TRUE(has(rs(4, 8, 16, nullptr, 16, p, 8, p, 8), "invalid argument A"));
  EXPECT_TRUE(has(rs(4, 8, 16, p, 16, p, 3, p, 8), "ldb = 3"));

  Options tf32;
  tf32.math = Math::tf32;
  const std::string m = error_of([&] { dist::allgather_gemm(4, 8, 16, 1.0f, p, 16, p, 8, 0.0f, p, 8, nullptr, tf32); });
  EXPECT_TRUE(has(m, "opts.math")) << m;
}

TEST(DistArgs, ReleaseOfAnUnknownCommunicatorIsANoOp) {
  dist::release(nullptr);
  EXPECT_EQ(dist::workspace_bytes(nullptr), 0u);
  EXPECT_TRUE(has(error_of([] { dist::set_collective_check(nullptr, false); }), "comm"));
}

// Every rung is listed under the operations it does, numbered by its place in the one list, with
// its file src/dist/NN_<name>.{cu,cpp}; each operation has one baseline.
TEST(DistLadder, ListsAreWellFormed) {
  namespace fs = std::filesystem;
  const auto& l = dist::detail::ladder();
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(std::string(l[0].name), "nccl_then_gemm");
  for (Op op : {Op::allgather_gemm, Op::gemm_reducescatter}) {
    const auto v = variants(op);
    ASSERT_FALSE(v.empty());
    int baselines = 0;
    for (const auto& r : v) {
      ASSERT_GE(r.rung, 1);
      ASSERT_LE(r.rung, static_cast<int>(l.size()));
      EXPECT_EQ(r.name, l[r.rung - 1].name);
      EXPECT_FALSE(r.types.empty()) << r.name;
      baselines += r.baseline;
      char prefix[8];
      std::snprintf(prefix, sizeof prefix, "%02d_", r.rung);
      bool found = false;
      for (const char* ext : {".cu", ".cpp"})
        found = found || fs::exists(fs::path(RUNGS_SOURCE_DIR) / "src" / "dist" / (prefix + r.name + ext));
      EXPECT_TRUE(found) << "no file src/dist/" << prefix << r.name << ".{cu,cpp}";
    }
    EXPECT_EQ(baselines, 1);
    EXPECT_EQ(v[0].name, "nccl_then_gemm");
    EXPECT_EQ(v[0].types, "f16 bf16");
  }
}
#else
TEST(DistLadder, EmptyWithoutNccl) {
  EXPECT_TRUE(variants(Op::allgather_gemm).empty());
  EXPECT_TRUE(variants(Op::gemm_reducescatter).empty());
}
#endif

}  // namespace
}  // namespace rungs::test
