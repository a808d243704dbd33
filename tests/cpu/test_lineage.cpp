// The lineage of every ladder (VariantInfo::parent): each rung names the rung it adds one idea to,
// that rung exists in the same ladder and comes before it (so the lineage is a tree, read in ladder
// order), the vendor baseline stands apart, and a ladder has only the roots it is meant to have.
#include <rungs/rungs.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rungs::test {
namespace {

// A ladder's roots besides its baseline: its first rung, and where a branch starts from another
// ladder's design, that branch's first rung (gemm's decode_rows: gemv's packed-row design carrying
// several rows of A). The dist ladders start from their baseline, the flow users write today.
std::set<std::string> roots_of(Op op) {
  switch (op) {
    case Op::gemm: return {"cpu_naive", "decode_rows"};
    case Op::gemv: return {"naive"};
    case Op::reduce: return {variants(op).front().name};
    default: return {};
  }
}

void check_ladder(Op op, const char* label) {
  SCOPED_TRACE(label);
  const std::vector<VariantInfo> v = variants(op);
  std::map<std::string, int> number;
  std::set<std::string> roots;
  for (const VariantInfo& r : v) {
    SCOPED_TRACE(r.name);
    if (r.baseline) {
      // The baseline builds on nothing of ours, except where it is the ladder's first rung, and
      // is nobody's parent unless it is (the dist ladders start from the flow users write today).
      if (r.parent.empty()) roots.insert(r.name);
    } else if (r.parent.empty()) {
      roots.insert(r.name);
    } else {
      const auto p = number.find(r.parent);
      ASSERT_NE(p, number.end()) << "parent " << r.parent << " is not an earlier rung of the ladder";
      EXPECT_LT(p->second, r.rung);
    }
    number[r.name] = r.rung;
  }
  std::set<std::string> expected = roots_of(op);
  for (const VariantInfo& r : v)
    if (r.baseline && r.parent.empty()) expected.insert(r.name);
  EXPECT_EQ(roots, expected);
  // Every parent that is a baseline is the ladder's first entry (the dist ladders' nccl_then_gemm).
  for (const VariantInfo& r : v)
    for (const VariantInfo& q : v)
      if (q.name == r.parent && q.baseline) {
        EXPECT_EQ(q.rung, v.front().rung) << r.name;
      }
}

TEST(Lineage, EveryParentIsAnEarlierRungOfTheLadder) {
  check_ladder(Op::gemm, "gemm");
  check_ladder(Op::gemv, "gemv");
  check_ladder(Op::reduce, "reduce");
  check_ladder(Op::allgather_gemm, "allgather_gemm");
  check_ladder(Op::gemm_reducescatter, "gemm_reducescatter");
}

// Where a ladder is a line (gemv, reduce), each rung's parent is the rung before it.
TEST(Lineage, LinesBuildOnTheRungBefore) {
  for (Op op : {Op::gemv, Op::reduce}) {
    std::string before;
    for (const VariantInfo& r : variants(op)) {
      if (r.baseline) {
        EXPECT_TRUE(r.parent.empty()) << r.name;
        continue;
      }
      EXPECT_EQ(r.parent, before) << r.name;
      before = r.name;
    }
  }
}

// The tensor-core wing's branches, as the docs tell them: the 3xTF32 pair, the warp-specialized
// family on rung 17, the decode branch on the first wgmma rung, the fp8 branch on rung 17.
TEST(Lineage, TensorCoreBranches) {
  std::map<std::string, std::string> parent;
  for (const VariantInfo& r : variants(Op::gemm)) parent[r.name] = r.parent;
  EXPECT_EQ(parent["wgmma"], "mma_sync");
  EXPECT_EQ(parent["wgmma_x3_rs"], "wgmma_x3");
  EXPECT_EQ(parent["wgmma_ragged"], "wgmma_narrow");
  EXPECT_EQ(parent["wgmma_balanced"], "wgmma_deal");
  EXPECT_EQ(parent["wgmma_x3"], "wgmma_sums");
  EXPECT_EQ(parent["decode_wgmma"], "wgmma");
  EXPECT_EQ(parent["wgmma_fp8"], "wgmma_tma_store");
  EXPECT_EQ(parent["decode_fp8_wide"], "decode_fp8");
  EXPECT_TRUE(parent["cublas"].empty());
}

// The tensor-core skeleton (docs/gemm_tc.md): a rung on it names its four parts (their C++ types),
// and differs from its parent in one of them. A part's numbers (a tile width, a ring depth) are
// its parameters, not another part: WholeTilesOf<128, 6> is WholeTiles at rung 18's width.
// Every sm_90 rung is on the skeleton but rungs 31, 33 and 34, which measured slower on it (their
// headers): the list is exact, so a rung that moves onto the skeleton updates it.
std::string kind_of(const std::string& part) {
  std::string k;  // each number one '#'
  for (size_t i = 0; i < part.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(part[i]));
    if (!digit) k += part[i];
    else if (i == 0 || !std::isdigit(static_cast<unsigned char>(part[i - 1]))) k += '#';
  }
  return k;
}

TEST(Lineage, SkeletonRungsDifferFromTheirParentInOnePart) {

  std::map<std::string, VariantInfo> by_name;
  for (const VariantInfo& r : variants(Op::gemm)) by_name[r.name] = r;
  std::set<std::string> without_parts;
  int checked = 0;
  for (const auto& [name, r] : by_name) {
    SCOPED_TRACE(name);
    if (r.baseline || r.min_sm < 90) {
      EXPECT_TRUE(r.parts.empty());
      continue;
    }
    if (r.parts.empty()) {
      without_parts.insert(name);
      continue;
    }
    ASSERT_EQ(r.parts.size(), 4u);
    for (const std::string& p : r.parts) EXPECT_FALSE(p.empty());
    const VariantInfo& parent = by_name.at(r.parent);
    if (parent.parts.empty()) continue;  // built on a kernel of its own (rung 14 on rung 13)
    int differ = 0;
    for (size_t i = 0; i < 4; ++i) differ += kind_of(r.parts[i]) != kind_of(parent.parts[i]);
    ++checked;
    EXPECT_EQ(differ, 1) << "parts differing from " << r.parent;
  }
  EXPECT_EQ(without_parts, (std::set<std::string>{"decode_fp8", "decode_wide", "decode_fp8_wide"}));
  EXPECT_GE(checked, 12);
}

// What a skeleton rung's parts read as (the names the docs use).
TEST(Lineage, SkeletonPartsAreTheTypesTheRungsName) {
  std::map<std::string, std::vector<std::string>> parts;
  for (const VariantInfo& r : variants(Op::gemm)) parts[r.name] = r.parts;
  EXPECT_EQ(parts["wgmma"].at(0), "Unspecialized");
  EXPECT_EQ(parts["wgmma_ws"],
            (std::vector<std::string>{"RoundRobin", "WholeTilesOf<256, 4, 256, 128>", "DirectStore", "InTensorCore"}));
  EXPECT_EQ(parts["wgmma_pingpong"],
            (std::vector<std::string>{"PingPong", "WholeTilesOf<128, 6, 256, 128>", "TmaStore", "InTensorCore"}));
  EXPECT_EQ(parts["wgmma_ragged"].at(2), "Staged<TmaStore>");
  EXPECT_EQ(parts["wgmma_x3_rs"].at(1), "X3<SplitInRegisters>");
  EXPECT_EQ(parts["wgmma_narrow"].at(1), "Ragged");
  EXPECT_EQ(parts["wgmma_deal"].at(0), "Balanced");
  EXPECT_EQ(parts["wgmma_balanced"].at(1), "Paired");
  EXPECT_EQ(parts["wgmma_sums"].at(3), "SumPerStage");
  EXPECT_EQ(parts["wgmma_fp8"].at(3), "ScaledInTensorCore");
  EXPECT_EQ(parts["wgmma_fp8_overlap"].at(3), "PromoteWith<Turns>");
}

}  // namespace
}  // namespace rungs::test
