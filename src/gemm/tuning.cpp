// The `auto` choice for gemm as one table: kind of product, layout, shape, device -> rung. Rules are
// tried in order; the first that takes a call names its rung. Each rule's reason names the generated
// page (docs/bench/<gpu>.md, indexed by docs/BENCHMARKS.md) and the row that back it, or where no
// generated table has the shape the "What auto picks" section of docs/gemm_tc.md, decode.md or fp8.md;
// the measurements themselves live there.
#include "gemm/tuning.hpp"

#include "core/errors.hpp"
#include "core/tensor_map.hpp"

#include <stdexcept>

namespace rungs::sgemm {

namespace {

constexpr double pow2(int e) {
  double x = 1.0;
  for (int i = 0; i < e; ++i) x *= 2.0;
  return x;
}

// Elements of W (n * k) in a decode shape: 7168 x 8192 (58.7 M) lies between the two, 28672 x 8192
// and 8192 x 28672 (235 M) above both.
constexpr double kDecodeW = pow2(25);
constexpr double kLargeDecodeW = pow2(27);
// Multiply-adds (m * n * k).
constexpr double kWork2048Cubed = pow2(33);
constexpr double kWorkRagged = pow2(35);  // the ragged rules: measured at 4096-scale shapes only
constexpr double kWork8192Cubed = pow2(39);
// The decode rungs' 128-row tiles, at most 8 splits of k per tile, need n this large.
constexpr int64_t kDecodeMinN = 7168;
// A W long enough for the wide decode rungs' fitted tiles to fill the SMs (with n >= 2k).
constexpr int64_t kWideMinN = 16384;

constexpr unsigned kHalf = kF16 | kBf16;
constexpr unsigned kNotNT = kNN | kTN | kTT;
constexpr unsigned kRowScales = kOuter | kBlock128;  // the scales serving stacks keep for a decode
constexpr auto kHopper = AutoArch::sm90a;
constexpr auto kAligned = AutoRows::aligned;
constexpr auto kH100Dram = AutoDram::up_to_4tbs;
constexpr auto kH200Dram = AutoDram::over_4tbs;
// The DRAM bandwidth on paper that splits the two.
constexpr double kFastDramGbs = 4000.0;

using R = AutoRule;

constexpr R kRules[] = {
    // fp8 (e4m3): cuBLASLt (in the cublas rung) unless a decode shape with per-row or block scales.
    R("decode_fp8_wide", kFp8).scaled(kOuter).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(16, 64).n_from(kWideMinN).n_at_least_2k().w_in(kLargeDecodeW)
        .why("docs/bench/h200.md decode fp8, W 28672 x 8192, decode_fp8_wide: 1.33 / 1.37x at m = 16 / 64"),
    R("decode_fp8_wide", kFp8).scaled(kBlock128).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(17, 64).n_from(kWideMinN).n_at_least_2k().w_in(kLargeDecodeW)
        .why("no docs/bench row (block128): docs/fp8.md What auto picks, 1.12x cuBLASLt at m = 64"),
    R("cublas", kFp8).scaled(kBlock128).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(17, AutoRule::kNoMax).w_in(kLargeDecodeW)
        .why("no docs/bench row (block128): docs/fp8.md What auto picks, decode_fp8 0.88x here"),
    R("decode_fp8", kFp8).scaled(kRowScales).on(kNT).rows_are(kAligned).device(kHopper)
        .m_in(1, 64).n_from(kDecodeMinN).w_in(kDecodeW)
        .why("docs/bench/h200.md decode fp8, decode_fp8: 1.18-1.81x cuBLASLt at m = 1-64"),
    R("decode_fp8", kFp8).scaled(kRowScales).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(65, 128).n_from(kDecodeMinN).w_in(kDecodeW, kLargeDecodeW)
        .why("docs/bench/h200.md decode fp8, decode_fp8 at m = 128: 1.08x on 7168 x 8192, 0.90x on 28672"),
    R("wgmma_fp8_promote", kFp8).on(kNotNT).device(kHopper)
        .why("cuBLASLt runs fp8 only nt with 16-byte rows (scripts/experiments/cublaslt_fp8_modes)"),
    R("wgmma_fp8_promote", kFp8).rows_are(AutoRows::unaligned).device(kHopper)
        .why("cuBLASLt runs fp8 only nt with 16-byte rows (scripts/experiments/cublaslt_fp8_modes)"),
    R("cublas", kFp8)
        .why("docs/bench/h100.md, h200.md fp8: wgmma_fp8 1.04-1.09x but error 2.50e-03 (1.66e-03), "
             "the promoted 0.83-1.02x"),

    // tf32x3.
    R("wgmma_x3_rs", kTf32x3).device(kHopper)
        .why("docs/bench/h100.md, h200.md tf32x3, wgmma_x3_rs: 1.20-2.53x cuBLAS sgemm, wgmma_x3 1.10-2.13x"),
    R("wmma", kTf32x3).why("not measured: the tf32x3 rung before wgmma"),

    // f16, bf16 and tf32.
    R("decode_wide", kHalf).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(33, 64).n_from(kWideMinN).n_at_least_2k().w_in(kLargeDecodeW)
        .why("docs/bench/h200.md decode bf16, W 28672 x 8192, decode_wide: 1.00x at m = 64, decode_wgmma 0.99x"),
    R("decode_wgmma", kHalf).on(kNT).rows_are(kAligned).device(kHopper)
        .m_in(1, 128).n_from(kDecodeMinN).w_in(kLargeDecodeW)
        .why("docs/bench/h100.md, h200.md decode bf16, W 28672 x 8192 and 8192 x 28672, decode_wgmma: "
             "0.99-1.07x"),
    R("decode_wgmma", kHalf).on(kNT).rows_are(kAligned).device(kHopper, kH100Dram)
        .m_in(1, 8).n_from(kDecodeMinN).w_in(kDecodeW)
        .why("docs/bench/h100.md decode bf16, W 7168 x 8192, decode_wgmma: 1.06x at m = 1, 0.98x at 16"),
    R("decode_wgmma", kHalf).on(kNT).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(1, 16).n_from(kDecodeMinN).w_in(kDecodeW)
        .why("docs/bench/h200.md decode bf16, W 7168 x 8192, decode_wgmma: 1.11 / 1.14x at m = 1 / 16, 0.93x at 64"),
    R("decode_splitk", kHalf).on(kNT).rows_are(kAligned).device(kHopper)
        .m_in(1, 1).w_in(kDecodeW)
        .why("docs/bench/h100.md, h200.md decode bf16, W 7168 x 8192, decode_splitk: 1.03-1.04x at m = 1 "
             "(n < 7168 here)"),
    R("decode_wgmma", kBf16).on(kNN).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(1, 16).n_from(kDecodeMinN).w_in(kDecodeW, kLargeDecodeW)
        .why("no docs/bench row (decode nn): docs/decode.md What auto picks, 1.05-1.08x (f16 0.92x)"),
    R("decode_wgmma", kHalf).on(kNN).rows_are(kAligned).device(kHopper, kH200Dram)
        .m_in(128, 128).n_from(kDecodeMinN).w_in(kLargeDecodeW)
        .why("no docs/bench row (decode nn): docs/decode.md What auto picks, 1.12-1.63x at m = 128"),
    R("wgmma_balanced", kHalf).rows_are(AutoRows::unaligned).device(kHopper).work_from(kWorkRagged)
        .why("no docs/bench row (odd ld): docs/gemm_tc.md What auto picks, 3.4x cuBLAS at 4095 x 4097 x 4093"),
    R("wgmma_ragged", kTf32).rows_are(AutoRows::unaligned).device(kHopper).work_from(kWorkRagged)
        .why("no docs/bench row (tf32): docs/gemm_tc.md What auto picks, 1.86x cuBLAS at 4095 x 4097 x 4093"),
    R("wgmma_ragged", kTf32).on(kTN).device(kHopper).work_from(kWork2048Cubed)
        .why("no docs/bench row (tf32): docs/gemm_tc.md What auto picks, tn 1.16-1.48x cuBLAS"),
    R("wgmma_balanced", kTf32).ragged_edge().device(kHopper).work_from(kWorkRagged)
        .why("no docs/bench row (tf32): docs/gemm_tc.md What auto picks, 1.07-1.35x cuBLAS"),
    R("wgmma_tma_store", kHalf).device(kHopper).work_from(kWork8192Cubed)
        .why("docs/bench/h100.md, h200.md tensor cores bf16, wgmma_tma_store: 1.01x at 8192^3, 0.97-1.00x below"),
    R("cublas", kHalf | kTf32).device(AutoArch::sm90)
        .why("docs/bench/h100.md, h200.md tensor cores bf16: no rung of ours above 1.00x cuBLAS below 8192^3"),
    R("mma_sync", kHalf).device(AutoArch::sm80).why("not measured: the f16/bf16 rung before wgmma"),
    R("wmma", kTf32).device(AutoArch::sm80).why("not measured: the tf32 rung before wgmma"),
    R("cublas", kHalf | kTf32).why("not measured: no tensor-core rung of ours runs before sm_80"),

    // f32 on CUDA cores.
    R("cublas", kF32).device(AutoArch::sm90).work_from(0.0)
        .why("docs/bench/h100.md, h200.md SGEMM on CUDA cores, warptile: 0.93-1.00x cuBLAS at 1024^3-8192^3"),
    R("warptile", kF32).device(AutoArch::sm80).why("not measured: the top SGEMM rung"),
    R("outer_product", kF32).device(AutoArch::sm70).why("not measured: the top SGEMM rung before sm_80"),
    R("cublas", kF32).why("not measured: no SGEMM rung of ours is tuned before sm_70"),
};

bool arch_takes(AutoArch arch, const AutoDevice& d) {
  switch (arch) {
    case AutoArch::any: return true;
    case AutoArch::sm70: return d.sm >= 70;
    case AutoArch::sm80: return d.sm >= 80;
    case AutoArch::sm90: return d.sm == 90;
    case AutoArch::sm90a: return d.sm == 90 && d.sm90a;
  }
  return false;
}

bool dram_takes(AutoDram dram, const AutoDevice& d) {
  const bool fast = d.dram_gbs > kFastDramGbs;
  return dram == AutoDram::any || (dram == AutoDram::over_4tbs) == fast;
}

unsigned trans_bit(Trans ta, Trans tb) {
  return ta == Trans::N ? (tb == Trans::N ? kNN : kNT) : (tb == Trans::N ? kTN : kTT);
}

unsigned scaling_bit(Scaling s) { return s == Scaling::tensor ? kTensor : s == Scaling::outer ? kOuter : kBlock128; }

}  // namespace

AutoKind auto_kind(GemmType type, Math math) {
  if (type == GemmType::fp8) return kFp8;
  if (math == Math::tf32x3) return kTf32x3;
  if (type == GemmType::f16) return kF16;
  if (type == GemmType::bf16) return kBf16;
  return math == Math::tf32 ? kTf32 : kF32;
}

AutoRules auto_rules() { return {kRules, sizeof(kRules) / sizeof(kRules[0])}; }

bool auto_rule_takes(const AutoRule& r, const AutoCall& c, const AutoDevice& d) {
  const double w = static_cast<double>(c.n) * static_cast<double>(c.k);
  const double work = static_cast<double>(c.m) * w;
  return (r.kinds & auto_kind(c.type, c.math)) != 0 && (r.trans & trans_bit(c.ta, c.tb)) != 0 &&
         (r.scalings & scaling_bit(c.scaling)) != 0 &&
         (r.rows == AutoRows::any || (r.rows == AutoRows::aligned) == c.rows_aligned) && arch_takes(r.arch, d) &&
         dram_takes(r.dram, d) && c.m >= r.m_min && c.m <= r.m_max && c.n >= r.n_min &&
         (!r.long_narrow || c.n >= 2 * c.k) && (!r.edge_128 || c.m % 128 != 0 || c.n % 128 != 0) && w >= r.w_min &&
         w < r.w_below && work >= r.work_min;
}

const AutoRule& auto_rule(const AutoCall& call, const AutoDevice& device) {
  for (const AutoRule& r : kRules)
    if (auto_rule_takes(r, call, device)) return r;
  throw std::logic_error("rungs: the gemm auto table has no rule for this call");  // each kind ends in a catch-all
}

std::string auto_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int sm, GemmType type, Math math,
                         bool rows_aligned, Scaling scaling, double dram_gbs) {
  const AutoCall call{ta, tb, m, n, k, type, math, rows_aligned, scaling};
  return auto_rule(call, AutoDevice{sm, detail::built_for_sm90a(), dram_gbs}).rung;
}

// The fused rung needs rows enough for whole 128-row tiles to fill the SMs; below, the chain's
// product (cuBLAS) runs at its full speed and the fused rung's tiles are mostly empty.
constexpr int64_t kFusedMinM = 1024;

bool rows_aligned(GemmType type, int64_t lda, int64_t ldb) {
  const int64_t elem = type == GemmType::f32 ? 4 : type == GemmType::fp8 ? 1 : 2;
  return (lda * elem) % 16 == 0 && (ldb * elem) % 16 == 0;
}

bool epilogue_fusable(const EpiAutoCall& c) {
  // docs/bench/h200-epilogue.md, bf16 nt at m = 1024-4096: the fused rungs 1.08-1.12x the chain gated,
  // 1.03-1.07x bias+silu; the chain faster with an fp8 output (0.90x) and at m = 16 (0.54-0.62x).
  const bool half = c.type == GemmType::f16 || c.type == GemmType::bf16;
  return half && !c.fp8_out && c.ta == Trans::N && c.tb == Trans::T && c.rows_aligned && c.m >= kFusedMinM;
}

std::string auto_epilogue_pick(const EpiAutoCall& c, const AutoDevice& d) {
  if (!epilogue_fusable(c) || d.sm != 90 || !d.sm90a) return "cublas";
  // docs/epilogue.md, "What auto picks": 4096 x 28672 bias+silu, wgmma_overlap 1.03x wgmma_tma_store
  // (equal at m = 1024); gated silu, wgmma_tma_store 1.04x wgmma_overlap (the overlap's tile-end fill
  // costs more than the halved math it hides).
  return c.gated ? "wgmma_tma_store" : "wgmma_overlap";
}

std::string auto_epilogue_variant(GemmType type, Trans ta, Trans tb, int64_t m, bool rows_aligned, bool fp8_out,
                                  bool gated) {
  const EpiAutoCall c{type, ta, tb, m, rows_aligned, fp8_out, gated};
  if (!epilogue_fusable(c)) return "cublas";
  return auto_epilogue_pick(c, AutoDevice{detail::current_sm(), detail::built_for_sm90a(), 0.0});
}

}  // namespace rungs::sgemm
