// The `auto` choice for gemm: which rung runs for a call on a device. The rules are one table of
// data (auto_rules(), in tuning.cpp): the first rule that takes the call names the rung, and each
// rule says which row of the generated pages (docs/bench/<gpu>.md) backs it.
#pragma once

#include <rungs/rungs.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace rungs::sgemm {

// What a rule knows of a call. rows_aligned: every row of A and B starts 16 bytes after the previous
// one's start (ld * elem % 16 == 0). scaling: an fp8 call's scale layout (ignored for the others).
struct AutoCall {
  Trans ta = Trans::N, tb = Trans::N;
  int64_t m = 0, n = 0, k = 0;
  GemmType type = GemmType::f32;
  Math math = Math::fp32;  // float only
  bool rows_aligned = true;
  Scaling scaling = Scaling::tensor;
};

// What a rule knows of the device. sm: major * 10 + minor; sm90a: the library carries sm_90a code
// (the wgmma rungs); dram_gbs: DRAM bandwidth on paper (detail::dram_peak_gbs; 0 where unknown).
struct AutoDevice {
  int sm = 0;
  bool sm90a = false;
  double dram_gbs = 0.0;
};

// The kind of product: the element type, and for float the math mode. tf32x3 is its own kind for
// every element type but fp8; f16 and bf16 with Math::tf32 are f16 and bf16.
enum AutoKind : unsigned { kF32 = 1, kTf32 = 2, kTf32x3 = 4, kF16 = 8, kBf16 = 16, kFp8 = 32 };
AutoKind auto_kind(GemmType type, Math math);

// Bit sets of a rule: transposes (ta, tb) and fp8 scalings.
enum AutoTrans : unsigned { kNN = 1, kNT = 2, kTN = 4, kTT = 8 };
enum AutoScaling : unsigned { kTensor = 1, kOuter = 2, kBlock128 = 4 };

enum class AutoRows { any, aligned, unaligned };
// any; sm70 / sm80: sm >= 70 / 80; sm90: sm == 90; sm90a: sm == 90 with the library's sm_90a code.
enum class AutoArch { any, sm70, sm80, sm90, sm90a };
// The DRAM's bandwidth on paper: up to 4 TB/s (the H100's 3.35) or more (the H200's 4.8).
enum class AutoDram { any, up_to_4tbs, over_4tbs };

// One rule: the calls it takes (every field narrows it; a field at its default takes every call),
// the rung it runs, and why. Built in the table as AutoRule("rung", kinds).field(...)...why("...").
struct AutoRule {
  static constexpr int64_t kNoMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  const char* rung = nullptr;
  unsigned kinds = 0;
  const char* reason = "";          // one line, naming the docs/bench/ page and row behind the rule
  unsigned trans = kNN | kNT | kTN | kTT;
  unsigned scalings = kTensor | kOuter | kBlock128;
  AutoRows rows = AutoRows::any;
  AutoArch arch = AutoArch::any;
  AutoDram dram = AutoDram::any;
  int64_t m_min = kNoMin, m_max = kNoMax;  // m_min <= m <= m_max
  int64_t n_min = kNoMin;                  // n >= n_min
  bool long_narrow = false;                // n >= 2k: W long and narrow
  bool edge_128 = false;                   // m or n not a multiple of 128
  double w_min = -kInf, w_below = kInf;    // w_min <= n * k < w_below (a decode shape's weights)
  double work_min = -kInf;                 // m * n * k >= work_min (multiply-adds)

  constexpr AutoRule(const char* r, unsigned k) : rung(r), kinds(k) {}
  constexpr AutoRule on(unsigned t) const { AutoRule c = *this; c.trans = t; return c; }
  constexpr AutoRule scaled(unsigned s) const { AutoRule c = *this; c.scalings = s; return c; }
  constexpr AutoRule rows_are(AutoRows r) const { AutoRule c = *this; c.rows = r; return c; }
  constexpr AutoRule device(AutoArch a, AutoDram d = AutoDram::any) const {
    AutoRule c = *this; c.arch = a; c.dram = d; return c;
  }
  constexpr AutoRule m_in(int64_t lo, int64_t hi) const { AutoRule c = *this; c.m_min = lo; c.m_max = hi; return c; }
  constexpr AutoRule n_from(int64_t lo) const { AutoRule c = *this; c.n_min = lo; return c; }
  constexpr AutoRule n_at_least_2k() const { AutoRule c = *this; c.long_narrow = true; return c; }
  constexpr AutoRule ragged_edge() const { AutoRule c = *this; c.edge_128 = true; return c; }
  constexpr AutoRule w_in(double lo, double below = kInf) const {
    AutoRule c = *this; c.w_min = lo; c.w_below = below; return c;
  }
  constexpr AutoRule work_from(double lo) const { AutoRule c = *this; c.work_min = lo; return c; }
  constexpr AutoRule why(const char* s) const { AutoRule c = *this; c.reason = s; return c; }
};

struct AutoRules {
  const AutoRule* begin() const { return first; }
  const AutoRule* end() const { return first + size; }
  const AutoRule* first;
  size_t size;
};
// The table, in the order the rules are tried. Its last rule for each kind takes every call.
AutoRules auto_rules();

bool auto_rule_takes(const AutoRule& rule, const AutoCall& call, const AutoDevice& device);
// The first rule that takes the call.
const AutoRule& auto_rule(const AutoCall& call, const AutoDevice& device);

// The rung `auto` runs, on this library's build (sm90a = detail::built_for_sm90a()).
std::string auto_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int sm, GemmType type = GemmType::f32,
                         Math math = Math::fp32, bool rows_aligned = true, Scaling scaling = Scaling::tensor,
                         double dram_gbs = 0.0);

// Whether every row of A and B (row strides lda, ldb in elements of the call's type) starts on 16
// bytes: AutoCall::rows_aligned and the epilogue rule's.
bool rows_aligned(GemmType type, int64_t lda, int64_t ldb);

// The rung `auto` runs for a gemm with an epilogue (Options::epilogue, or an fp8 output; fp8_out
// false where the caller does not know the output): a fused epilogue where it measured faster than
// the unfused chain (wgmma_overlap, the math under the next tile's MMAs; gated: wgmma_tma_store),
// else cublas (the product, then the epilogue's plain kernels), the one rung that applies every
// epilogue to every input type. Asks the device's compute capability only where a fused rung could
// take the call.
std::string auto_epilogue_variant(GemmType type, Trans ta, Trans tb, int64_t m, bool rows_aligned, bool fp8_out,
                                  bool gated);
// The same as a pure function: the call as auto sees it, whether a fused rung could take it on some
// device (auto_epilogue_variant asks the device nothing otherwise), and the rung on `device`.
struct EpiAutoCall {
  GemmType type;
  Trans ta, tb;
  int64_t m;
  bool rows_aligned, fp8_out, gated;
};
bool epilogue_fusable(const EpiAutoCall& call);
std::string auto_epilogue_pick(const EpiAutoCall& call, const AutoDevice& device);
}  // namespace rungs::sgemm
