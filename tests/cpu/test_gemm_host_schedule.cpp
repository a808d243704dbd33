// gemm_host's schedule (host/schedule.hpp) and argument checks, without a GPU. The schedule is
// what makes the pipeline right: every block of C gets every chunk of k exactly once, in order,
// only after both of its pieces were sent, and goes back exactly once, after its last chunk.
#include <rungs/rungs.hpp>

#include "cpu/api_errors.hpp"
#include "host/gemm_host.hpp"
#include "host/schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

namespace rungs::test {
namespace {

using host::Plan;
using host::Range;

TEST(GemmHostSchedule, SplitCoversTheRangeWithAlignedBoundaries) {
  for (int64_t total : {1, 2, 31, 32, 33, 100, 1000, 1024, 4097})
    for (int parts : {1, 2, 3, 7, 8, 16, 5000}) {
      const std::vector<Range> r = host::split(total, parts, 32);
      ASSERT_FALSE(r.empty());
      EXPECT_LE(static_cast<int64_t>(r.size()), std::min<int64_t>(parts, total));
      EXPECT_EQ(r.front().lo, 0);
      EXPECT_EQ(r.back().hi, total);
      for (size_t i = 0; i < r.size(); ++i) {
        EXPECT_GT(r[i].size(), 0) << total << " " << parts;
        if (i > 0) {
          EXPECT_EQ(r[i].lo, r[i - 1].hi);
        }
        if (i + 1 < r.size() && total / static_cast<int64_t>(r.size()) >= 32) {
          EXPECT_EQ(r[i].hi % 32, 0) << total << " " << parts;
        }
      }
    }
}

// Replays a schedule and checks the invariants above; returns a message or "".
std::string check_schedule(int64_t m, int64_t n, int64_t k, const Plan& plan, bool reads_c) {
  const host::Schedule s = host::make_schedule(m, n, k, plan, reads_c);
  std::ostringstream err;
  if (s.chunks.empty() || s.chunks.front().lo != 0 || s.chunks.back().hi != k) return "chunks do not cover k";
  for (size_t c = 1; c < s.chunks.size(); ++c)
    if (s.chunks[c].lo != s.chunks[c - 1].hi || s.chunks[c].size() <= 0) return "chunks not contiguous";
  std::set<std::pair<int, int>> sent_a, sent_b;  // (panel, chunk)
  std::set<int> c_rows_sent;
  // Per element block (row panel, col panel): chunks applied, in order; times sent back.
  std::map<std::pair<int, int>, std::vector<int>> applied;
  std::map<std::pair<int, int>, int> back;
  auto panel_of = [](const std::vector<Range>& p, int64_t x) {
    for (size_t i = 0; i < p.size(); ++i)
      if (x >= p[i].lo && x < p[i].hi) return static_cast<int>(i);
    return -1;
  };
  auto blocks = [&](const host::Product& p) {
    std::vector<std::pair<int, int>> out;
    const int i0 = panel_of(s.rows, p.rows.lo), i1 = panel_of(s.rows, p.rows.hi - 1);
    const int j0 = panel_of(s.cols, p.cols.lo), j1 = panel_of(s.cols, p.cols.hi - 1);
    if (i0 < 0 || i1 < 0 || j0 < 0 || j1 < 0 || s.rows[i0].lo != p.rows.lo || s.rows[i1].hi != p.rows.hi ||
        s.cols[j0].lo != p.cols.lo || s.cols[j1].hi != p.cols.hi)
      return out;  // not whole panels: reported by the caller
    for (int i = i0; i <= i1; ++i)
      for (int j = j0; j <= j1; ++j) out.push_back({i, j});
    return out;
  };
  for (const host::Step& st : s.steps) {
    if (st.piece.panels < 1 || (!st.piece.is_a && st.piece.panels != 1)) return "a piece of no panels";
    for (int j = 0; j < st.piece.panels; ++j) {
      if (st.upload_c) c_rows_sent.insert(st.piece.panel + j);
      (st.piece.is_a ? sent_a : sent_b).insert({st.piece.panel + j, st.piece.chunk});
    }
    for (const host::Product& p : st.products) {
      const int c = panel_of(s.chunks, p.k.lo);
      if (c < 0 || !(s.chunks[c] == p.k)) return "a product's k is not one chunk";
      if (p.first_k != (c == 0)) return "first_k wrong";
      const std::vector<std::pair<int, int>> bl = blocks(p);
      if (bl.empty()) return "a product is not made of whole panels";
      for (auto [i, j] : bl) {
        if (!sent_a.count({i, c}) || !sent_b.count({j, c})) return "a product before its pieces were sent";
        if (reads_c && !c_rows_sent.count(i)) return "a product before C's rows were sent (beta != 0)";
        std::vector<int>& done = applied[{i, j}];
        if (static_cast<int>(done.size()) != c) return "chunks applied out of order or twice";
        done.push_back(c);
      }
    }
    for (const host::Product& f : st.finished)
      for (auto [i, j] : blocks(f)) {
        if (static_cast<int>(applied[{i, j}].size()) != static_cast<int>(s.chunks.size()))
          return "a block sent back before its last chunk";
        ++back[{i, j}];
      }
  }
  for (size_t i = 0; i < s.rows.size(); ++i)
    for (size_t j = 0; j < s.cols.size(); ++j) {
      const std::pair<int, int> b{static_cast<int>(i), static_cast<int>(j)};
      if (applied[b].size() != s.chunks.size()) return "a block missed a chunk";
      if (back[b] != 1) return "a block not sent back exactly once";
    }
  if (!reads_c && !c_rows_sent.empty()) return "C sent although beta == 0";
  return err.str();
}

TEST(GemmHostSchedule, EveryBlockGetsEveryChunkOnceInOrderAndGoesBackOnce) {
  const int64_t sizes[] = {1, 7, 33, 128, 129, 1000, 4097};
  const Plan plans[] = {{1, 1, 0, 0},        {4, 4, 0, 0},         {8, 3, 1, 0.25},
                        {16, 16, 2, 0.5},    {3, 16, 4, 0.75},     {2, 5, 3, 0.9},
                        {8, 1, 2, 0.5, 2},   {7, 3, 3, 0.5, 3},    {5, 2, 1, 0.25, 1},
                        {4, 4, 2, 0.5, 9}};  // phase 1 in groups of row panels (9 > 4: one each)
  for (int64_t m : sizes)
    for (int64_t n : {int64_t{1}, int64_t{65}, int64_t{2048}})
      for (int64_t k : {int64_t{1}, int64_t{31}, int64_t{300}, int64_t{4096}})
        for (const Plan& p : plans)
          for (bool reads_c : {false, true})
            EXPECT_EQ("", check_schedule(m, n, k, p, reads_c))
                << m << "x" << n << "x" << k << " panels " << p.row_panels << "x" << p.col_panels << " kmajor "
                << p.kmajor_chunks << "/" << p.kmajor_fraction << " r" << p.kmajor_row_panels << " reads_c "
                << reads_c;
}

// Plan::kmajor_row_panels: phase 1 sends op(A) in that many taller pieces (groups of consecutive
// row panels, each multiplied as one product per column panel), phase 2 in single panels.
TEST(GemmHostSchedule, PhaseOneGroupsRowPanels) {
  const host::Schedule s = host::make_schedule(4096, 4096, 4096, Plan{8, 1, 2, 0.5, 2}, false);
  ASSERT_EQ(s.rows.size(), 8u);
  ASSERT_EQ(s.chunks.size(), 3u);
  int phase1_a = 0, phase2_a = 0;
  for (const host::Step& st : s.steps) {
    if (!st.piece.is_a) continue;
    if (st.piece.chunk < 2) {
      ++phase1_a;
      EXPECT_EQ(st.piece.panels, 4);
      EXPECT_EQ(st.piece.panel % 4, 0);
      for (const host::Product& p : st.products) EXPECT_EQ(p.rows.size(), 2048);
    } else {
      ++phase2_a;
      EXPECT_EQ(st.piece.panels, 1);
    }
  }
  EXPECT_EQ(phase1_a, 2 * 2);
  EXPECT_EQ(phase2_a, 8);
}

TEST(GemmHostSchedule, PlanFollowsTheBalanceOfComputeAndTransfer) {
  const Plan big = host::choose_plan(4096, 4096, 4096, 2.7e-3, 2.6e-3);  // compute-bound
  EXPECT_EQ(big.row_panels, 16);  // A stored m x k: whole rows, 256 each
  EXPECT_EQ(big.col_panels, 1);   // B stored k x n: whole rows
  EXPECT_EQ(big.kmajor_chunks, 2);
  EXPECT_DOUBLE_EQ(big.kmajor_fraction, 0.5);
  const Plan thin = host::choose_plan(1024, 1024, 1024, 0.04e-3, 0.16e-3);  // transfer-bound
  EXPECT_EQ(thin.row_panels, 8);
  EXPECT_EQ(thin.col_panels, 1);
  EXPECT_EQ(thin.kmajor_chunks, 0);  // a quarter of k (256) would make 2D copies of 1 KiB rows
  const Plan tt = host::choose_plan(4096, 4096, 4096, 2.7e-3, 2.6e-3, true, true);
  EXPECT_EQ(tt.row_panels, 8);  // A stored k x m: its row panels are 2D copies of m / 8 wide
  EXPECT_EQ(tt.col_panels, 8);  // B stored n x k: column panels of op(B), at least 512 wide
  EXPECT_EQ(tt.kmajor_chunks, 2);
  // 132 SMs: a compute-bound product of n = 4096 columns fills one wave of 128 x 128 tiles with
  // 512 rows (8 panels); n = 8192 with 256 (16 panels: the cap); transfer-bound ones keep 128.
  EXPECT_EQ(host::choose_plan(4096, 4096, 4096, 2.74e-3, 2.68e-3, false, false, 512, 132).row_panels, 8);
  EXPECT_EQ(host::choose_plan(8192, 8192, 8192, 21e-3, 10e-3, false, false, 512, 132).row_panels, 16);
  EXPECT_EQ(host::choose_plan(2048, 2048, 2048, 0.34e-3, 0.64e-3, false, false, 512, 132).row_panels, 16);
  EXPECT_EQ(host::choose_plan(1024, 1024, 1024, 0.04e-3, 0.16e-3, false, false, 512, 132).row_panels, 8);
  const Plan tiny = host::choose_plan(100, 5, 100, 1e-6, 1e-6);
  EXPECT_EQ(tiny.row_panels, 1);
  EXPECT_EQ(tiny.col_panels, 1);
  EXPECT_EQ(tiny.kmajor_chunks, 0);  // k < 256: one chunk
}

// Out-of-core tiling: the jobs cover every (row, column, k) of the problem exactly once, each
// fits the budget, k ranges of one block of C come together and in order, flags mark the ends.
TEST(GemmHostSchedule, JobsTileTheProblemWithinTheBudget) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {700, 900, 1300}, {33, 5000, 17},
                         {4096, 4096, 4096}, {100000, 64, 3}, {64, 64, 1000000}})
    for (double budget : {1e3, 6e4, 1.5e5, 8e5, 1e7, 1e12}) {
      const std::vector<host::Job> jobs = host::make_jobs(m, n, k, budget);
      if (jobs.empty()) {  // only when a 32 x 32 block (or the whole small side) with k = 1 cannot fit
        const double bm = std::min<int64_t>(m, 32), bn = std::min<int64_t>(n, 32);
        EXPECT_GT(bm + bn + bm * bn, budget) << m << "x" << n << "x" << k << " budget " << budget;
        continue;
      }
      double covered = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const host::Job& j = jobs[i];
        const double rows = static_cast<double>(j.rows.size()), cols = static_cast<double>(j.cols.size()),
                     kk = static_cast<double>(j.k.size());
        ASSERT_GT(rows * cols * kk, 0);
        EXPECT_LE(rows * kk + kk * cols + rows * cols, budget) << m << "x" << n << "x" << k << " job " << i;
        covered += rows * cols * kk;
        EXPECT_EQ(j.first_k, j.k.lo == 0);
        EXPECT_EQ(j.last_k, j.k.hi == k);
        if (!j.first_k) {  // the previous job is the same block of C, the k range just before
          ASSERT_GT(i, 0u);
          EXPECT_TRUE(jobs[i - 1].rows == j.rows && jobs[i - 1].cols == j.cols && jobs[i - 1].k.hi == j.k.lo);
        }
      }
      EXPECT_DOUBLE_EQ(covered, static_cast<double>(m) * n * k) << m << "x" << n << "x" << k << " budget " << budget;
      if (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n <= budget) {
        EXPECT_EQ(jobs.size(), 1u);
      }
    }
}

TEST(GemmHostArgs, BadArgumentsNameTheArgument) {
  float* h = fake<float>();
  auto call = [&](int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, const float* A,
                  const float* B, float* C, Trans ta = Trans::N, Trans tb = Trans::N) {
    return error_of([&] { gemm_host(ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc); });
  };
  EXPECT_NE(call(-1, 4, 4, 4, 4, 4, h, h, h).find("gemm_host: invalid argument m = -1"), std::string::npos);
  EXPECT_NE(call(4, -2, 4, 4, 4, 4, h, h, h).find("invalid argument n = -2"), std::string::npos);
  EXPECT_NE(call(4, 4, -3, 4, 4, 4, h, h, h).find("invalid argument k = -3"), std::string::npos);
  EXPECT_NE(call(4, 4, 5, 4, 4, 4, h, h, h).find("invalid argument lda = 4"), std::string::npos);
  EXPECT_NE(call(4, 4, 5, 5, 3, 4, h, h, h).find("invalid argument ldb = 3"), std::string::npos);
  EXPECT_NE(call(4, 6, 5, 5, 6, 5, h, h, h).find("invalid argument ldc = 5"), std::string::npos);
  EXPECT_NE(call(4, 6, 5, 3, 6, 6, h, h, h, Trans::T).find("invalid argument lda = 3"), std::string::npos);
  EXPECT_NE(call(4, 6, 5, 5, 4, 6, h, h, h, Trans::N, Trans::T).find("invalid argument ldb = 4"), std::string::npos);
  EXPECT_NE(call(4, 4, 4, 4, 4, 4, nullptr, h, h).find("invalid argument A = nullptr"), std::string::npos);
  EXPECT_NE(call(4, 4, 4, 4, 4, 4, h, nullptr, h).find("invalid argument B = nullptr"), std::string::npos);
  EXPECT_NE(call(4, 4, 4, 4, 4, 4, h, h, nullptr).find("invalid argument C = nullptr"), std::string::npos);
  // The 16-bit overloads check the same way.
  const __half* hh = fake<__half>();
  EXPECT_NE(error_of([&] { gemm_host(Trans::N, Trans::N, 4, 4, 4, 1.0f, hh, 4, hh, 4, 0.0f, nullptr, 4); })
                .find("gemm_host: invalid argument C = nullptr (must be a host pointer"),
            std::string::npos);
  const __nv_bfloat16* bb = fake<__nv_bfloat16>();
  EXPECT_NE(error_of([&] {
              gemm_host(Trans::T, Trans::N, 4, 4, 5, 1.0f, bb, 3, bb, 4, 0.0f, const_cast<__nv_bfloat16*>(bb), 4);
            }).find("invalid argument lda = 3"),
            std::string::npos);
}

}  // namespace
}  // namespace rungs::test
