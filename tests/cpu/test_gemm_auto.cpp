// The `auto` table of gemm (src/gemm/tuning.cpp): each rule at its edges, on the devices the rules
// name, and the table itself: every rule is the first to take one of the calls below, each kind ends
// in a rule that takes every call, every rule runs a rung of the ladder that does the kinds it takes
// and gives a one-line reason naming its evidence.
#include <rungs/rungs.hpp>

#include "core/tensor_map.hpp"
#include "gemm/tuning.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace rungs::test {
namespace {

using sgemm::AutoCall;
using sgemm::AutoDevice;
using sgemm::AutoRule;

// The devices the rules tell apart (DRAM bandwidth on paper, GB/s).
constexpr AutoDevice kH100{90, true, 3352.3};
constexpr AutoDevice kH200{90, true, 4814.3};
constexpr AutoDevice kSm90Plain{90, false, 4814.3};  // sm_90 with a library built without sm_90a
constexpr AutoDevice kSm100{100, false, 8000.0};
constexpr AutoDevice kA100{80, false, 2039.0};
constexpr AutoDevice kT4{75, false, 320.0};
constexpr AutoDevice kV100{70, false, 900.0};
constexpr AutoDevice kP100{60, false, 732.0};

enum class K { f32, tf32, tf32x3, f16, bf16, fp8 };
enum class Layout { nn, nt, tn, tt };
constexpr bool kAligned = true, kOdd = false;  // rows 16-byte aligned, or an odd ld
constexpr Scaling kTensor = Scaling::tensor, kOuter = Scaling::outer, kBlock = Scaling::block128;

struct Case {
  AutoDevice device;
  K kind;
  Layout layout;
  int64_t m, n, k;
  bool aligned;
  Scaling scaling;
  const char* want;
};

AutoCall call_of(const Case& c) {
  AutoCall a;
  a.ta = c.layout == Layout::tn || c.layout == Layout::tt ? Trans::T : Trans::N;
  a.tb = c.layout == Layout::nt || c.layout == Layout::tt ? Trans::T : Trans::N;
  a.m = c.m, a.n = c.n, a.k = c.k, a.rows_aligned = c.aligned, a.scaling = c.scaling;
  a.type = c.kind == K::f16 ? GemmType::f16 : c.kind == K::bf16 ? GemmType::bf16 : c.kind == K::fp8 ? GemmType::fp8
                                                                                                    : GemmType::f32;
  a.math = c.kind == K::tf32 ? Math::tf32 : c.kind == K::tf32x3 ? Math::tf32x3 : Math::fp32;
  return a;
}

std::string describe(const Case& c) {
  static const char* const kinds[] = {"f32", "tf32", "tf32x3", "f16", "bf16", "fp8"};
  static const char* const layouts[] = {"nn", "nt", "tn", "tt"};
  std::ostringstream os;
  os << kinds[static_cast<int>(c.kind)] << " " << layouts[static_cast<int>(c.layout)] << " " << c.m << " x " << c.n
     << " x " << c.k << (c.aligned ? "" : " odd ld") << " scaling " << static_cast<int>(c.scaling) << " on sm_"
     << c.device.sm << (c.device.sm90a ? "a" : "") << " " << c.device.dram_gbs << " GB/s";
  return os.str();
}

constexpr int64_t k2p20 = int64_t{1} << 20, k2p22 = int64_t{1} << 22;

// Each rule's calls at its edges, the wanted rung the one the rules gave when they became this table.
const Case kCases[] = {
    // fp8: the wide decode rung on the H200, outer at 16 <= m <= 64, block128 at 16 < m <= 64, W long and
    // narrow (n >= 16384, n >= 2k, n k >= 2^27).
    {kH200, K::fp8, Layout::nt, 16, 28672, 8192, kAligned, kOuter, "decode_fp8_wide"},
    {kH200, K::fp8, Layout::nt, 64, 28672, 8192, kAligned, kOuter, "decode_fp8_wide"},
    {kH200, K::fp8, Layout::nt, 64, 16384, 8192, kAligned, kOuter, "decode_fp8_wide"},
    {kH200, K::fp8, Layout::nt, 15, 28672, 8192, kAligned, kOuter, "decode_fp8"},
    {kH200, K::fp8, Layout::nt, 64, 8192, 28672, kAligned, kOuter, "decode_fp8"},
    {kH200, K::fp8, Layout::nt, 64, 16384, 16384, kAligned, kOuter, "decode_fp8"},
    {kH100, K::fp8, Layout::nt, 64, 28672, 8192, kAligned, kOuter, "decode_fp8"},
    {kH200, K::fp8, Layout::nt, 65, 28672, 8192, kAligned, kOuter, "cublas"},
    {kH200, K::fp8, Layout::nt, 17, 28672, 8192, kAligned, kBlock, "decode_fp8_wide"},
    {kH200, K::fp8, Layout::nt, 64, 28672, 8192, kAligned, kBlock, "decode_fp8_wide"},
    {kH200, K::fp8, Layout::nt, 16, 28672, 8192, kAligned, kBlock, "decode_fp8"},
    {kH100, K::fp8, Layout::nt, 64, 28672, 8192, kAligned, kBlock, "decode_fp8"},
    // block128 on the H200 past m = 16 on a W of 2^27 elements or more that the wide rung does not take:
    // cuBLASLt.
    {kH200, K::fp8, Layout::nt, 17, 8192, 28672, kAligned, kBlock, "cublas"},
    {kH200, K::fp8, Layout::nt, 64, 8192, 16384, kAligned, kBlock, "cublas"},
    {kH200, K::fp8, Layout::nt, 129, 28672, 8192, kAligned, kBlock, "cublas"},
    // The fp8 decode rung: outer or block128, nt, aligned, 1 <= m <= 64, n >= 7168, n k >= 2^25.
    {kH100, K::fp8, Layout::nt, 1, 7168, 8192, kAligned, kOuter, "decode_fp8"},
    {kH100, K::fp8, Layout::nt, 64, 7168, 8192, kAligned, kBlock, "decode_fp8"},
    {kH100, K::fp8, Layout::nt, 16, 8192, 4096, kAligned, kOuter, "decode_fp8"},
    {kH100, K::fp8, Layout::nt, 16, 8192, 4095, kAligned, kOuter, "cublas"},
    {kH100, K::fp8, Layout::nt, 16, 7167, 8192, kAligned, kOuter, "cublas"},
    {kH100, K::fp8, Layout::nt, 0, 7168, 8192, kAligned, kOuter, "cublas"},
    {kH100, K::fp8, Layout::nt, 65, 7168, 8192, kAligned, kOuter, "cublas"},
    {kH100, K::fp8, Layout::nt, 16, 28672, 8192, kAligned, kTensor, "cublas"},
    // ... and on the H200 up to m = 128 on a W under 2^27 elements.
    {kH200, K::fp8, Layout::nt, 65, 7168, 8192, kAligned, kBlock, "decode_fp8"},
    {kH200, K::fp8, Layout::nt, 128, 7168, 8192, kAligned, kOuter, "decode_fp8"},
    {kH200, K::fp8, Layout::nt, 129, 7168, 8192, kAligned, kOuter, "cublas"},
    {kH200, K::fp8, Layout::nt, 128, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::fp8, Layout::nt, 128, 7168, 8192, kAligned, kOuter, "cublas"},
    // The forms cuBLASLt does not run: the promoted wgmma rung on Hopper, elsewhere the cublas rung
    // (which throws Unsupported for them).
    {kH100, K::fp8, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "wgmma_fp8_promote"},
    {kH100, K::fp8, Layout::tn, 4095, 4097, 4093, kOdd, kTensor, "wgmma_fp8_promote"},
    {kH200, K::fp8, Layout::tt, 64, 64, 64, kAligned, kOuter, "wgmma_fp8_promote"},
    {kH200, K::fp8, Layout::nn, 16, 28672, 8192, kAligned, kOuter, "wgmma_fp8_promote"},
    {kH100, K::fp8, Layout::nt, 16, 28672, 8192, kOdd, kOuter, "wgmma_fp8_promote"},
    {kH100, K::fp8, Layout::nt, 8192, 8192, 8192, kOdd, kBlock, "wgmma_fp8_promote"},
    {kSm90Plain, K::fp8, Layout::nn, 4096, 4096, 4096, kOdd, kTensor, "cublas"},
    {kA100, K::fp8, Layout::tn, 4096, 4096, 4096, kOdd, kTensor, "cublas"},
    // Otherwise cuBLASLt.
    {kH100, K::fp8, Layout::nt, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::fp8, Layout::nt, 2048, 2048, 2048, kAligned, kBlock, "cublas"},
    {kSm90Plain, K::fp8, Layout::nt, 16, 28672, 8192, kAligned, kOuter, "cublas"},
    {kA100, K::fp8, Layout::nt, 16, 28672, 8192, kAligned, kOuter, "cublas"},

    // tf32x3: the register-A wgmma rung on Hopper, any shape; wmma elsewhere.
    {kH100, K::tf32x3, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "wgmma_x3_rs"},
    {kH200, K::tf32x3, Layout::tn, 5, 7, 3, kOdd, kTensor, "wgmma_x3_rs"},
    {kSm90Plain, K::tf32x3, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "wmma"},
    {kA100, K::tf32x3, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "wmma"},

    // f16 and bf16 decode shapes, nt, aligned. The wide rung on the H200 at 32 < m <= 64 with W long and
    // narrow.
    {kH200, K::bf16, Layout::nt, 64, 28672, 8192, kAligned, kTensor, "decode_wide"},
    {kH200, K::f16, Layout::nt, 33, 28672, 8192, kAligned, kTensor, "decode_wide"},
    {kH200, K::bf16, Layout::nt, 64, 16384, 8192, kAligned, kTensor, "decode_wide"},
    {kH200, K::bf16, Layout::nt, 32, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::bf16, Layout::nt, 65, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::f16, Layout::nt, 64, 8192, 28672, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 64, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    // The decode rung: 1 <= m <= 128 from 2^27 elements of W, n >= 7168.
    {kH100, K::f16, Layout::nt, 1, 8192, 28672, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 16, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 128, 8192, 28672, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 16, 8192, 16384, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::f16, Layout::nt, 128, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 129, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 16, 28672, 8192, kOdd, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nn, 16, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 16, 7167, 32768, kAligned, kTensor, "cublas"},
    // ... and from 2^25 elements at m <= 8 (H100) or m <= 16 (H200).
    {kH100, K::bf16, Layout::nt, 1, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::f16, Layout::nt, 8, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 8, 8192, 4096, kAligned, kTensor, "decode_wgmma"},
    {kH100, K::bf16, Layout::nt, 9, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 8, 8192, 4095, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nt, 9, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::f16, Layout::nt, 16, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::bf16, Layout::nt, 17, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nt, 32, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 16, 7168, 8192, kAligned, kTensor, "cublas"},
    // The split-k row rung at m = 1 from 2^25 elements of W where n is short.
    {kH100, K::bf16, Layout::nt, 1, 64, k2p20, kAligned, kTensor, "decode_splitk"},
    {kH200, K::f16, Layout::nt, 1, 7167, 8192, kAligned, kTensor, "decode_splitk"},
    {kH100, K::bf16, Layout::nt, 2, 64, k2p20, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 64, 64, k2p22, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nt, 1, 1024, 1024, kAligned, kTensor, "cublas"},
    // W stored k x n (nn) on the H200: bf16 at m <= 16 on 2^25 <= n k < 2^27, f16 and bf16 at m = 128
    // from 2^27; the H100 and odd ld's keep cuBLAS.
    {kH200, K::bf16, Layout::nn, 16, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::bf16, Layout::nn, 1, 7168, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::f16, Layout::nn, 16, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 17, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 1, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nn, 16, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::f16, Layout::nn, 128, 28672, 8192, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::bf16, Layout::nn, 128, 8192, 28672, kAligned, kTensor, "decode_wgmma"},
    {kH200, K::bf16, Layout::nn, 127, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 97, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 129, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 64, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 128, 7168, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::bf16, Layout::nn, 128, 28672, 8192, kAligned, kTensor, "cublas"},
    {kH200, K::bf16, Layout::nn, 128, 28672, 8192, kOdd, kTensor, "cublas"},
    // f16 and bf16 with odd ld's from 2^35 multiply-adds: the balanced rung.
    {kH100, K::bf16, Layout::nn, 4095, 4097, 4093, kOdd, kTensor, "wgmma_balanced"},
    {kH100, K::f16, Layout::tn, 4095, 4097, 4093, kOdd, kTensor, "wgmma_balanced"},
    {kH200, K::bf16, Layout::nt, 4096, 4096, 2048, kOdd, kTensor, "wgmma_balanced"},
    {kH100, K::bf16, Layout::nt, 4096, 4096, 2047, kOdd, kTensor, "cublas"},
    {kH100, K::f16, Layout::nn, 1000, 1001, 999, kOdd, kTensor, "cublas"},
    // tf32: the ragged rung for odd ld's from 2^35 and for tn from 2^33 (2048^3), the balanced rung for
    // a ragged edge (m or n not a multiple of 128) from 2^35.
    {kH100, K::tf32, Layout::nn, 4095, 4097, 4093, kOdd, kTensor, "wgmma_ragged"},
    {kH100, K::tf32, Layout::nt, 4096, 4096, 2047, kOdd, kTensor, "cublas"},
    {kH100, K::tf32, Layout::tn, 2048, 2048, 2048, kAligned, kTensor, "wgmma_ragged"},
    {kH100, K::tf32, Layout::tn, 4096, 4096, 4096, kAligned, kTensor, "wgmma_ragged"},
    {kH100, K::tf32, Layout::tn, 4104, 4096, 4096, kAligned, kTensor, "wgmma_ragged"},
    {kH100, K::tf32, Layout::tn, 2048, 2048, 2047, kAligned, kTensor, "cublas"},
    {kH100, K::tf32, Layout::tn, 1024, 1024, 1024, kAligned, kTensor, "cublas"},
    {kH100, K::tf32, Layout::nn, 4096, 4104, 4096, kAligned, kTensor, "wgmma_balanced"},
    {kH100, K::tf32, Layout::nt, 4104, 4096, 4096, kAligned, kTensor, "wgmma_balanced"},
    {kH100, K::tf32, Layout::tt, 4096, 4104, 4096, kAligned, kTensor, "wgmma_balanced"},
    {kH100, K::tf32, Layout::nn, 2056, 2048, 2048, kAligned, kTensor, "cublas"},
    {kH100, K::tf32, Layout::nn, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::tf32, Layout::nt, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    {kH100, K::tf32, Layout::tt, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    // f16 and bf16 from 2^39 multiply-adds (8192^3): the TMA-store rung; cuBLAS below.
    {kH100, K::bf16, Layout::nn, 8192, 8192, 8192, kAligned, kTensor, "wgmma_tma_store"},
    {kH200, K::f16, Layout::nt, 8200, 8191, 8193, kAligned, kTensor, "wgmma_tma_store"},
    {kH100, K::bf16, Layout::nn, 8192, 8192, 8191, kAligned, kTensor, "cublas"},
    {kH100, K::f16, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},
    // sm_90 without the library's sm_90a code: cuBLAS; other GPUs the rung before wgmma.
    {kSm90Plain, K::bf16, Layout::nn, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    {kSm90Plain, K::bf16, Layout::nt, 16, 28672, 8192, kAligned, kTensor, "cublas"},
    {kSm90Plain, K::tf32, Layout::tn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},
    {kA100, K::bf16, Layout::nn, 4095, 4097, 4093, kOdd, kTensor, "mma_sync"},
    {kSm100, K::f16, Layout::nt, 16, 28672, 8192, kAligned, kTensor, "mma_sync"},
    {kA100, K::tf32, Layout::nn, 8192, 8192, 8192, kAligned, kTensor, "wmma"},
    {kV100, K::f16, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},
    {kV100, K::tf32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},

    // f32 on CUDA cores: cuBLAS on sm_90, elsewhere the top rung the device runs.
    {kH100, K::f32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},
    {kH200, K::f32, Layout::tn, 1, 1, 1, kOdd, kTensor, "cublas"},
    {kSm90Plain, K::f32, Layout::nn, 8192, 8192, 8192, kAligned, kTensor, "cublas"},
    {kA100, K::f32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "warptile"},
    {kSm100, K::f32, Layout::nt, 4096, 4096, 4096, kAligned, kTensor, "warptile"},
    {kT4, K::f32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "outer_product"},
    {kV100, K::f32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "outer_product"},
    {kP100, K::f32, Layout::nn, 4096, 4096, 4096, kAligned, kTensor, "cublas"},
};

TEST(GemmAuto, EachRuleAtItsEdges) {
  for (const Case& c : kCases) EXPECT_STREQ(sgemm::auto_rule(call_of(c), c.device).rung, c.want) << describe(c);
}

TEST(GemmAuto, EveryRuleIsTheFirstToTakeSomeCase) {
  std::set<const AutoRule*> taken;
  for (const Case& c : kCases) taken.insert(&sgemm::auto_rule(call_of(c), c.device));
  int i = 0;
  for (const AutoRule& r : sgemm::auto_rules()) {
    EXPECT_TRUE(taken.count(&r)) << "rule " << i << " (" << r.rung << ": " << r.reason << ") takes no case";
    ++i;
  }
}

// Each kind's last rule takes every call, so auto names a rung for any call on any device.
TEST(GemmAuto, EachKindEndsInACatchAll) {
  for (unsigned kind : {sgemm::kF32, sgemm::kTf32, sgemm::kTf32x3, sgemm::kF16, sgemm::kBf16, sgemm::kFp8}) {
    const AutoRule* last = nullptr;
    for (const AutoRule& r : sgemm::auto_rules())
      if (r.kinds & kind) last = &r;
    ASSERT_NE(last, nullptr) << kind;
    const AutoRule any("", 0);
    EXPECT_EQ(last->trans, any.trans) << last->rung;
    EXPECT_EQ(last->scalings, any.scalings) << last->rung;
    EXPECT_EQ(last->rows, sgemm::AutoRows::any) << last->rung;
    EXPECT_EQ(last->arch, sgemm::AutoArch::any) << last->rung;
    EXPECT_EQ(last->dram, sgemm::AutoDram::any) << last->rung;
    EXPECT_TRUE(last->m_min == any.m_min && last->m_max == any.m_max && last->n_min == any.n_min) << last->rung;
    EXPECT_TRUE(!last->long_narrow && !last->edge_128) << last->rung;
    EXPECT_TRUE(last->w_min == any.w_min && last->w_below == any.w_below && last->work_min == any.work_min)
        << last->rung;
  }
}

TEST(GemmAuto, KindsOfACall) {
  EXPECT_EQ(sgemm::auto_kind(GemmType::f32, Math::fp32), sgemm::kF32);
  EXPECT_EQ(sgemm::auto_kind(GemmType::f32, Math::tf32), sgemm::kTf32);
  EXPECT_EQ(sgemm::auto_kind(GemmType::f32, Math::tf32x3), sgemm::kTf32x3);
  EXPECT_EQ(sgemm::auto_kind(GemmType::f16, Math::fp32), sgemm::kF16);
  EXPECT_EQ(sgemm::auto_kind(GemmType::bf16, Math::tf32), sgemm::kBf16);
  EXPECT_EQ(sgemm::auto_kind(GemmType::fp8, Math::tf32x3), sgemm::kFp8);
}

// Every rule runs a rung of the gemm ladder that does each kind the rule takes.
TEST(GemmAuto, RulesNameRungsThatDoTheirKinds) {
  const std::pair<unsigned, const char*> tokens[] = {{sgemm::kF32, "f32"},   {sgemm::kTf32, "tf32"},
                                                     {sgemm::kTf32x3, "tf32x3"}, {sgemm::kF16, "f16"},
                                                     {sgemm::kBf16, "bf16"}, {sgemm::kFp8, "fp8"}};
  const std::vector<VariantInfo> ladder = variants(Op::gemm);
  for (const AutoRule& r : sgemm::auto_rules()) {
    const VariantInfo* v = nullptr;
    for (const VariantInfo& i : ladder)
      if (i.name == r.rung) v = &i;
    ASSERT_NE(v, nullptr) << r.rung << " is not a gemm rung";
    for (const auto& [kind, token] : tokens) {
      if ((r.kinds & kind) == 0) continue;
      EXPECT_NE((" " + v->types + " ").find(std::string(" ") + token + " "), std::string::npos)
          << r.rung << " does not do " << token << " (it does \"" << v->types << "\")";
    }
  }
}

// Each rule gives one line of evidence: a row of the generated pages it names first ("docs/bench/h200.md
// decode fp8, ..." or "docs/bench/h100.md, h200.md ..."; each page exists, is listed in docs/BENCHMARKS.md
// and holds the rung names of the reason), "no docs/bench row" with the doc that says why, a probe of
// scripts/experiments/ (which exists), or "not measured".
TEST(GemmAuto, EveryRuleNamesItsEvidence) {
  const auto read = [](const std::string& rel) {
    std::ifstream in(std::string(RUNGS_SOURCE_DIR) + "/" + rel);
    std::stringstream ss;
    if (in) ss << in.rdbuf();
    return std::make_pair(static_cast<bool>(in), ss.str());
  };
  const auto [have_index, index] = read("docs/BENCHMARKS.md");
  ASSERT_TRUE(have_index) << "docs/BENCHMARKS.md";
  const std::regex rung_name("[a-z0-9]+_[a-z0-9_]+");
  const std::regex pages_head("^docs/bench/([a-z0-9_-]+\\.md)((?:, [a-z0-9_-]+\\.md)*) ");
  const std::regex page_name("[a-z0-9_-]+\\.md");
  int bench_rows = 0;
  for (const AutoRule& r : sgemm::auto_rules()) {
    const std::string why = r.reason;
    EXPECT_EQ(why.find('\n'), std::string::npos) << r.rung << ": one line";
    std::smatch head;
    const bool bench_row = std::regex_search(why, head, pages_head);
    EXPECT_TRUE(bench_row || why.find("no docs/bench row") == 0 || why.find("not measured") == 0 ||
                why.find("scripts/experiments/") != std::string::npos)
        << r.rung << ": \"" << why << "\"";
    const size_t probe = why.find("scripts/experiments/");
    if (probe != std::string::npos) {
      const std::string dir = why.substr(probe, why.find_first_of(" )", probe) - probe);
      EXPECT_TRUE(std::ifstream(std::string(RUNGS_SOURCE_DIR) + "/" + dir + "/README.md").good())
          << r.rung << ": no probe " << dir;
    }
    if (!bench_row) continue;
    ++bench_rows;
    // The pages the reason names: their text together must hold every rung name the reason cites.
    std::string bench;
    const std::string names = head.str(0);
    for (auto it = std::sregex_iterator(names.begin(), names.end(), page_name); it != std::sregex_iterator(); ++it) {
      const std::string rel = "docs/bench/" + it->str();
      const auto [have_page, text] = read(rel);
      EXPECT_TRUE(have_page) << r.rung << ": no page " << rel;
      EXPECT_NE(index.find("](bench/" + it->str() + ")"), std::string::npos)
          << r.rung << ": docs/BENCHMARKS.md does not list " << rel;
      bench += text;
    }
    const std::string rest = why.substr(names.size());
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), rung_name); it != std::sregex_iterator(); ++it)
      EXPECT_NE(bench.find(it->str()), std::string::npos) << r.rung << ": " << names << "has no " << it->str();
  }
  EXPECT_GT(bench_rows, 10) << "rules backed by a generated table";
}

// auto_variant is the table on this library's build.
TEST(GemmAuto, VariantIsTheTableOnThisBuild) {
  for (const Case& c : kCases) {
    if (c.device.sm != 90 || c.device.sm90a != detail::built_for_sm90a()) continue;
    const AutoCall a = call_of(c);
    EXPECT_EQ(sgemm::auto_variant(a.ta, a.tb, a.m, a.n, a.k, c.device.sm, a.type, a.math, a.rows_aligned, a.scaling,
                                  c.device.dram_gbs),
              c.want)
        << describe(c);
  }
}

// With an epilogue: a fused rung for f16/bf16 without an fp8 output, nt with aligned rows, from
// m = 1024, on sm_90a (wgmma_overlap; gated: wgmma_tma_store); the chain (cublas) for everything else.
TEST(GemmAuto, EpilogueRuleAtItsEdges) {
  using sgemm::EpiAutoCall;
  const EpiAutoCall fused{GemmType::bf16, Trans::N, Trans::T, 1024, true, false, false};
  EXPECT_EQ(sgemm::auto_epilogue_pick(fused, kH200), "wgmma_overlap");
  EXPECT_EQ(sgemm::auto_epilogue_pick(fused, kH100), "wgmma_overlap");
  EpiAutoCall c = fused;
  c.type = GemmType::f16;
  EXPECT_EQ(sgemm::auto_epilogue_pick(c, kH200), "wgmma_overlap");
  c.gated = true;
  EXPECT_EQ(sgemm::auto_epilogue_pick(c, kH200), "wgmma_tma_store");
  auto chain = [&](EpiAutoCall x, const AutoDevice& d, const char* what) {
    EXPECT_FALSE(sgemm::epilogue_fusable(x) && d.sm90a && d.sm == 90) << what;
    EXPECT_EQ(sgemm::auto_epilogue_pick(x, d), "cublas") << what;
  };
  chain(fused, kSm90Plain, "sm_90 without sm_90a code");
  chain(fused, kA100, "sm_80");
  chain(fused, kSm100, "sm_100");
  c = fused, c.m = 1023;
  chain(c, kH200, "m = 1023");
  c = fused, c.fp8_out = true;
  chain(c, kH200, "fp8 output");
  c = fused, c.rows_aligned = false;
  chain(c, kH200, "odd ld");
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T})
      if (ta != Trans::N || tb != Trans::T) {
        c = fused, c.ta = ta, c.tb = tb;
        chain(c, kH200, "not nt");
      }
  for (GemmType t : {GemmType::f32, GemmType::fp8}) {
    c = fused, c.type = t;
    chain(c, kH200, "f32 or fp8 inputs");
  }
  // Every rung it picks applies epilogues.
  for (const char* name : {"wgmma_overlap", "wgmma_tma_store", "cublas"}) {
    bool applies = false;
    for (const auto& v : variants(Op::gemm)) applies = applies || (v.name == name && v.epilogue);
    EXPECT_TRUE(applies) << name;
  }
}

}  // namespace
}  // namespace rungs::test
