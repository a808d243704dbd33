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

// Rungs 2 and 3 do both operations in both types, after the baseline, in ladder order; rung 4
// allgather_gemm only, rung 5 gemm_reducescatter in bf16 only.
TEST(DistLadder, OverlapRungsFollowTheBaseline) {
  for (Op op : {Op::allgather_gemm, Op::gemm_reducescatter}) {
    const auto v = variants(op);
    ASSERT_GE(v.size(), 3u);
    EXPECT_EQ(v[1].name, "chunked_overlap");
    EXPECT_EQ(v[1].rung, 2);
    EXPECT_EQ(v[2].name, "ring");
    EXPECT_EQ(v[2].rung, 3);
    for (size_t i = 1; i < 3; ++i) {
      EXPECT_EQ(v[i].types, "f16 bf16") << v[i].name;
      EXPECT_FALSE(v[i].baseline) << v[i].name;
    }
  }
  // Rung 4 moves bytes on the copy engines in both operations (the reduce-scatter's adds in a kernel).
  for (Op op : {Op::allgather_gemm, Op::gemm_reducescatter}) {
    const auto v = variants(op);
    ASSERT_GE(v.size(), 4u);
    EXPECT_EQ(v[3].name, "copy_engine");
    EXPECT_EQ(v[3].rung, 4);
    EXPECT_EQ(v[3].types, "f16 bf16");
  }
  // Rung 5 rounds the partials to bf16 (f16 ones could overflow): gemm_reducescatter in bf16 only.
  const auto rs = variants(Op::gemm_reducescatter);
  ASSERT_GE(rs.size(), 5u);
  EXPECT_EQ(rs[4].name, "narrow_partials");
  EXPECT_EQ(rs[4].rung, 5);
  EXPECT_EQ(rs[4].types, "bf16");
  // Rung 6 carries rung 5's bf16 partials on rung 4's copy engines: bf16 only, reduce-scatter only.
  ASSERT_GE(rs.size(), 6u);
  EXPECT_EQ(rs[5].name, "narrow_copy_engine");
  EXPECT_EQ(rs[5].rung, 6);
  EXPECT_EQ(rs[5].types, "bf16");
  // Rung 7 drives rung 4's copy engines one-sided: both operations, both types; in the allgather
  // list it follows rung 4, since rungs 5 and 6 are reduce-scatter only.
  ASSERT_GE(rs.size(), 7u);
  EXPECT_EQ(rs[6].name, "one_sided");
  EXPECT_EQ(rs[6].rung, 7);
  EXPECT_EQ(rs[6].types, "f16 bf16");
  // Rung 8 reorders rung 7's transfers and products by peer: both operations, both types.
  ASSERT_GE(rs.size(), 8u);
  EXPECT_EQ(rs[7].name, "own_last");
  EXPECT_EQ(rs[7].rung, 8);
  EXPECT_EQ(rs[7].types, "f16 bf16");
  // Rung 9 carries rung 6's bf16 partials in rung 8's order: bf16 only, reduce-scatter only.
  ASSERT_GE(rs.size(), 9u);
  EXPECT_EQ(rs[8].name, "narrow_own_last");
  EXPECT_EQ(rs[8].rung, 9);
  EXPECT_EQ(rs[8].types, "bf16");
  const auto ag = variants(Op::allgather_gemm);
  ASSERT_GE(ag.size(), 5u);
  EXPECT_EQ(ag[4].name, "one_sided");
  EXPECT_EQ(ag[4].rung, 7);
  EXPECT_EQ(ag[4].types, "f16 bf16");
  ASSERT_GE(ag.size(), 6u);
  EXPECT_EQ(ag[5].name, "own_last");
  EXPECT_EQ(ag[5].rung, 8);
  EXPECT_EQ(ag[5].types, "f16 bf16");
  for (const auto& v : variants(Op::allgather_gemm)) {
    EXPECT_NE(v.name, "narrow_partials");
    EXPECT_NE(v.name, "narrow_copy_engine");
    EXPECT_NE(v.name, "narrow_own_last");
  }
}

// The pipelines' pieces: >= kMinPieceBytes each, at most kMaxPieces, at most one per row, at least
// one; the test override; piece_begin cuts the rows into contiguous pieces differing by <= 1 row.
TEST(DistLadder, PiecesFollowTheRule) {
  using dist::detail::kMaxPieces;
  using dist::detail::kMinPieceBytes;
  using dist::detail::piece_begin;
  using dist::detail::pieces_of;
  EXPECT_EQ(pieces_of(1, int64_t{1} << 40), 1);
  EXPECT_EQ(pieces_of(37, 29 * 4), 1);                         // small: one piece
  EXPECT_EQ(pieces_of(1024, kMinPieceBytes / 1024 * 3), 3);    // 3 x the minimum
  EXPECT_EQ(pieces_of(8192, 8192 * 4 * 2), kMaxPieces);        // 512 MiB: capped
  EXPECT_EQ(pieces_of(4, kMinPieceBytes), 4);                  // at most one per row
  // rung 4's all-gather: pieces of at least kMinCePieceBytes (268 MB gathered: 2)
  EXPECT_EQ(pieces_of(4096, 4 * 8192 * 2, dist::detail::kMinCePieceBytes), 2);
  EXPECT_EQ(pieces_of(4096, 4 * 8192 * 2), kMaxPieces);
  // rung 7: at most kOneSidedMaxPieces, the same minimum
  using dist::detail::kOneSidedMaxPieces;
  EXPECT_EQ(pieces_of(4096, 4 * 8192 * 2, kMinPieceBytes, kOneSidedMaxPieces), kOneSidedMaxPieces);
  EXPECT_EQ(pieces_of(1024, kMinPieceBytes / 1024 * 3, kMinPieceBytes, kOneSidedMaxPieces), 3);
  // rungs 8 and 9's reduce-scatter: at most kOwnLastMaxPieces (2)
  EXPECT_EQ(pieces_of(4096, 8192 * 2, kMinPieceBytes, dist::detail::kOwnLastMaxPieces), 2);
  EXPECT_EQ(pieces_of(512, kMinPieceBytes / 512, kMinPieceBytes, dist::detail::kOwnLastMaxPieces), 1);
  dist::detail::force_pieces(6);
  EXPECT_EQ(pieces_of(4096, 4 * 8192 * 2, kMinPieceBytes, kOneSidedMaxPieces), 6);  // forcing overrides
  dist::detail::force_pieces(3);
  EXPECT_EQ(pieces_of(37, 4), 3);
  EXPECT_EQ(pieces_of(2, 4), 2);
  EXPECT_EQ(pieces_of(1, 4), 1);
  dist::detail::force_pieces(0);
  EXPECT_EQ(pieces_of(37, 4), 1);
  for (int64_t rows : {1, 2, 7, 37, 1000})
    for (int p = 1; p <= 8 && p <= rows; ++p) {
      EXPECT_EQ(piece_begin(rows, p, 0), 0);
      EXPECT_EQ(piece_begin(rows, p, p), rows);
      for (int i = 0; i < p; ++i) {
        const int64_t len = piece_begin(rows, p, i + 1) - piece_begin(rows, p, i);
        EXPECT_TRUE(len == rows / p || len == rows / p + 1) << rows << " rows, " << p << " pieces, piece " << i;
      }
    }
}

// auto (src/dist/dist.cpp, from the measured sizes): from 2^39 multiply-adds per rank on 2 ranks
// and from 2^38 on more, rung 8 for allgather_gemm. gemm_reducescatter from the same sizes:
// rung 9 in bf16, rung 8 in f16 (rung 4 for all without NCCL 2.28's device API, rung 2 before NCCL
// 2.28); else rung 1 (index 0). The same on every rank for the same agreed sizes and type.
TEST(DistLadder, AutoFollowsTheRule) {
  using dist::detail::auto_rung;
  ASSERT_GE(dist::detail::ladder().size(), 9u);
  EXPECT_STREQ(dist::detail::ladder()[1].name, "chunked_overlap");
  EXPECT_STREQ(dist::detail::ladder()[3].name, "copy_engine");
  EXPECT_STREQ(dist::detail::ladder()[6].name, "one_sided");
  EXPECT_STREQ(dist::detail::ladder()[7].name, "own_last");
  EXPECT_STREQ(dist::detail::ladder()[8].name, "narrow_own_last");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0) && __has_include(<nccl_device.h>)
  const size_t ol = 7u, nol = 8u;  // rungs 8 and 9
#elif NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  const size_t ol = 3u, nol = 3u;  // rung 4 for all
#else
  const size_t ol = 1u, nol = 1u;  // rung 2 for all
#endif
  for (bool bf16 : {true, false}) {
    const size_t rs = bf16 ? nol : ol;
    EXPECT_EQ(auto_rung(true, bf16, 8192, 4096, 8192, 2), ol);    // 16384 x 4096 x 8192 per rank
    EXPECT_EQ(auto_rung(false, bf16, 16384, 8192, 4096, 2), rs);  // 16384 x 8192 x 4096 per rank
    EXPECT_EQ(auto_rung(true, bf16, 8192, 4096, 8191, 2), 0u);    // just below 2^39 on 2 ranks: rung 1
    EXPECT_EQ(auto_rung(false, bf16, 16384, 8192, 4095, 2), 0u);
    EXPECT_EQ(auto_rung(true, bf16, 4096, 2048, 8192, 4), ol);    // 2^38 per rank on 4 ranks
    EXPECT_EQ(auto_rung(true, bf16, 4096, 8192, 8192, 4), ol);    // 2^40 per rank on 4 ranks too
    EXPECT_EQ(auto_rung(false, bf16, 16384, 8192, 2048, 4), rs);
    EXPECT_EQ(auto_rung(false, bf16, 16384, 8192, 8192, 4), rs);
    EXPECT_EQ(auto_rung(false, bf16, 16384, 8192, 2047, 4), 0u);  // below 2^38
    EXPECT_EQ(auto_rung(true, bf16, 200, 264, 520, 2), 0u);       // the GPU tests' shapes: rung 1
    EXPECT_EQ(auto_rung(true, bf16, 1 << 20, 8192, 8192, 1), 0u); // one rank: nothing to overlap
  }
  // The rung auto runs takes the type it runs for.
  EXPECT_NE(dist::detail::ladder()[auto_rung(false, false, 16384, 8192, 8192, 4)].gemm_reducescatter_f16, nullptr);
}
#else
TEST(DistLadder, EmptyWithoutNccl) {
  EXPECT_TRUE(variants(Op::allgather_gemm).empty());
  EXPECT_TRUE(variants(Op::gemm_reducescatter).empty());
}
#endif

}  // namespace
}  // namespace rungs::test
