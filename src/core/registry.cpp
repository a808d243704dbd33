// rungs::variants: every ladder's rungs, read from the one list of each operation.
#include <rungs/rungs.hpp>

#include "gemm/gemm_rung.hpp"
#include "gemv/gemv_rung.hpp"
#include "reduce/reduce_rung.hpp"
#if RUNGS_HAVE_DIST
#include "dist/dist_rung.hpp"
#endif

#include <utility>

namespace rungs {

namespace {
// first = the number of the ladder's first entry (gemm starts at its CPU rung 0, the others at 1).
template <typename Rung>
std::string types_of(const Rung&) {
  return "";
}
std::string types_of(const sgemm::Rung& r) {
  std::string t;
  const std::pair<bool, const char*> has[] = {{r.run != nullptr, "f32"},       {r.tf32 != nullptr, "tf32"},
                                              {r.tf32x3 != nullptr, "tf32x3"}, {r.f16 != nullptr, "f16"},
                                              {r.bf16 != nullptr, "bf16"},     {r.fp8 != nullptr, "fp8"}};
  for (const auto& h : has)
    if (h.first) t += (t.empty() ? "" : " ") + std::string(h.second);
  return t;
}

// A line's parent: the rung before (the baseline is nobody's parent and has none).
template <typename Rung>
std::string parent_of(const std::vector<Rung>& ladder, size_t i) {
  if (ladder[i].baseline) return "";
  while (i-- > 0)
    if (!ladder[i].baseline) return ladder[i].name;
  return "";
}
std::string parent_of(const std::vector<sgemm::Rung>& ladder, size_t i) { return ladder[i].parent; }

// A skeleton rung's parts (gemm only).
template <typename Rung>
std::vector<std::string> parts_of(const Rung&) {
  return {};
}
std::vector<std::string> parts_of(const sgemm::Rung& r) { return r.parts != nullptr ? r.parts() : std::vector<std::string>{}; }
template <typename Rung>
bool epilogue_of(const Rung&) {
  return false;
}
bool epilogue_of(const sgemm::Rung& r) { return r.epi != nullptr; }

template <typename Rung>
std::vector<VariantInfo> list(const std::vector<Rung>& ladder, int first) {
  std::vector<VariantInfo> out;
  for (size_t i = 0; i < ladder.size(); ++i)
    out.push_back({ladder[i].name, ladder[i].summary, static_cast<int>(i) + first, ladder[i].min_sm,
                   ladder[i].baseline, types_of(ladder[i]), parent_of(ladder, i), parts_of(ladder[i]),
                   epilogue_of(ladder[i])});
  return out;
}
}  // namespace

std::vector<VariantInfo> variants(Op op) {
  switch (op) {
    case Op::gemm: return list(sgemm::ladder(), 0);
    case Op::gemv: return list(sgemv::ladder(), 1);
    case Op::reduce: return list(reduce::ladder(), 1);
    // The dist ladders: empty where the library was built without NCCL.
    case Op::allgather_gemm:
    case Op::gemm_reducescatter:
#if RUNGS_HAVE_DIST
      return dist::detail::variants(op);
#else
      return {};
#endif
  }
  return {};
}

}  // namespace rungs
