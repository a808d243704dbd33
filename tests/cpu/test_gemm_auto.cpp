// The `auto` table for the tensor-core kinds on the H100 (src/gemm/tuning.cpp): cuBLAS where
// rows are 16-byte aligned below 8192^3, wgmma_tma_store from there, wgmma_balanced (f16/bf16) and
// wgmma_ragged (tf32) for large problems whose rows are not aligned, wgmma_ragged for large tf32 tn (it copies A and B aligned and hands C to its
// storer warps; 3.1x cuBLAS measured at 4095x4097x4093), wgmma_balanced for large tf32 with aligned rows
// and a ragged edge (1.07-1.35x cuBLAS), wgmma_x3_rs for tf32x3, and through the
// public resolver the ld's decide it.
#include <rungs/rungs.hpp>

#include "gemm/tuning.hpp"

#include <gtest/gtest.h>

namespace rungs::test {
namespace {

#if defined(RUNGS_HAVE_SM90A)
const char* const kUnalignedChoice = "wgmma_ragged";
const char* const kUnalignedHalfChoice = "wgmma_balanced";
const char* const kRaggedTf32Choice = "wgmma_balanced";
const char* const kLargeChoice = "wgmma_tma_store";
const char* const kX3Choice = "wgmma_x3_rs";
const char* const kDecodeChoice = "decode_wgmma";
const char* const kDecodeWideChoice = "decode_wide";
const char* const kDecodeRowChoice = "decode_splitk";
#else  // the sm_90a rungs are not in this build
const char* const kUnalignedChoice = "cublas";
const char* const kUnalignedHalfChoice = "cublas";
const char* const kRaggedTf32Choice = "cublas";
const char* const kLargeChoice = "cublas";
const char* const kX3Choice = "wmma";
const char* const kDecodeChoice = "cublas";
const char* const kDecodeWideChoice = "cublas";
const char* const kDecodeRowChoice = "cublas";
#endif

TEST(GemmAuto, HopperTensorCoreChoices) {
  for (GemmType t : {GemmType::f16, GemmType::bf16}) {
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4096, 4096, 4096, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 8192, 8192, 8192, 90, t, Math::fp32, true), kLargeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 8200, 8191, 8193, 90, t, Math::fp32, true), kLargeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4095, 4097, 4093, 90, t, Math::fp32, false), kUnalignedHalfChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 4095, 4097, 4093, 90, t, Math::fp32, false), kUnalignedHalfChoice);
    // Decode shapes, nt with aligned rows: rung 26 from 2^27 elements of W at m <= 128 and from 2^25
    // at m <= 8, n >= 7168 for both; rung 25 at m = 1 from 2^25 (a short n); m = 16 at 7168 x 8192,
    // nn, unaligned rows, m > 128 and smaller W stay on cuBLAS. (The DRAM bandwidth left out: the
    // H100's rule.)
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 16, 28672, 8192, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 1, 8192, 28672, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 64, 28672, 8192, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 128, 8192, 28672, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 129, 28672, 8192, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 1, 7168, 8192, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 8, 7168, 8192, 90, t, Math::fp32, true), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 9, 7168, 8192, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 1, 64, 1 << 20, 90, t, Math::fp32, true), kDecodeRowChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 64, 64, 1 << 22, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 16, 7168, 8192, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 16, 28672, 8192, 90, t, Math::fp32, true), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 16, 28672, 8192, 90, t, Math::fp32, false), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 1, 1024, 1024, 90, t, Math::fp32, true), "cublas");
    // With the H200's 4814 GB/s on paper, rung 26 up to m = 16 at 2^25 elements of W; with the H100's
    // 3352 the H100's rule.
    const Scaling st = Scaling::tensor;
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 16, 7168, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 9, 7168, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 17, 7168, 8192, 90, t, Math::fp32, true, st, 4814.3), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 32, 7168, 8192, 90, t, Math::fp32, true, st, 4814.3), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 16, 7168, 8192, 90, t, Math::fp32, true, st, 3352.3), "cublas");
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 8, 7168, 8192, 90, t, Math::fp32, true, st, 3352.3), kDecodeChoice);
    // W stored k x n (nn) on the H200: bf16 at m <= 16 on 2^25-2^27 elements of W (f16 stays on
    // cuBLAS), both types at m = 128 from 2^27; the H100 keeps cuBLAS.
    const char* const nn_small = t == GemmType::bf16 ? kDecodeChoice : "cublas";
    struct NnCase {
      int64_t m, n, k;
      bool aligned;
      double gbs;
      const char* want;
    };
    const NnCase nn_cases[] = {
        {16, 7168, 8192, true, 4814.3, nn_small},        {1, 7168, 8192, true, 4814.3, nn_small},
        {17, 7168, 8192, true, 4814.3, "cublas"},        {1, 28672, 8192, true, 4814.3, "cublas"},
        {16, 7168, 8192, true, 3352.3, "cublas"},        {128, 28672, 8192, true, 4814.3, kDecodeChoice},
        {128, 8192, 28672, true, 4814.3, kDecodeChoice}, {128, 7168, 8192, true, 4814.3, "cublas"},
        {128, 28672, 8192, true, 3352.3, "cublas"},      {128, 28672, 8192, false, 4814.3, "cublas"},
        {97, 28672, 8192, true, 4814.3, "cublas"},       {129, 28672, 8192, true, 4814.3, "cublas"},
    };
    for (const NnCase& c : nn_cases)
      EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, c.m, c.n, c.k, 90, t, Math::fp32, c.aligned, st, c.gbs), c.want)
          << c.m << " x " << c.n << " x " << c.k << " at " << c.gbs << " GB/s";
    // On the H200 rung 33 at 32 < m <= 64 where n >= 16384 and n >= 2k (28672 x 8192); rung 26 at
    // m <= 32 and 64 < m <= 128 there, at 8192 x 28672 and on the H100.
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 64, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeWideChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 33, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeWideChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 65, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 128, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 32, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 64, 8192, 28672, 90, t, Math::fp32, true, st, 4814.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::T, 64, 28672, 8192, 90, t, Math::fp32, true, st, 3352.3), kDecodeChoice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 64, 28672, 8192, 90, t, Math::fp32, true, st, 4814.3), "cublas");
    // Small unaligned problems: not measured, cuBLAS.
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 1000, 1001, 999, 90, t, Math::fp32, false), "cublas");
    // Another GPU: not measured there, the Ampere-design rung.
    EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4095, 4097, 4093, 80, t, Math::fp32, false), "mma_sync");
  }
  // tf32: rung 20 for unaligned rows (from 2^35) and for tn (where cuBLAS is slow) from 2048^3 up, else cuBLAS.
  EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4095, 4097, 4093, 90, GemmType::f32, Math::tf32, false),
            kUnalignedChoice);
  EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 4096, 4096, 4096, 90, GemmType::f32, Math::tf32, true),
            kUnalignedChoice);
  EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 2048, 2048, 2048, 90, GemmType::f32, Math::tf32, true),
            kUnalignedChoice);
  EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 1024, 1024, 1024, 90, GemmType::f32, Math::tf32, true), "cublas");
  for (Trans ta : {Trans::N, Trans::T})
    EXPECT_EQ(sgemm::auto_variant(ta, Trans::T, 8192, 8192, 8192, 90, GemmType::f32, Math::tf32, true), "cublas");
  EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 8192, 8192, 8192, 90, GemmType::f32, Math::tf32, true), "cublas");
  // tf32, rows aligned, a ragged edge (rung 23, from 2^35); tn stays rung 20; small ones cuBLAS.
  for (Trans tb : {Trans::N, Trans::T}) {
    EXPECT_EQ(sgemm::auto_variant(Trans::N, tb, 4096, 4104, 4096, 90, GemmType::f32, Math::tf32, true), kRaggedTf32Choice);
    EXPECT_EQ(sgemm::auto_variant(Trans::N, tb, 4104, 4096, 4096, 90, GemmType::f32, Math::tf32, true), kRaggedTf32Choice);
  }
  EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 4104, 4096, 4096, 90, GemmType::f32, Math::tf32, true), kUnalignedChoice);
  EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 2056, 2048, 2048, 90, GemmType::f32, Math::tf32, true), "cublas");
  EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4096, 4096, 4096, 90, GemmType::f32, Math::tf32x3, true), kX3Choice);
  EXPECT_EQ(sgemm::auto_variant(Trans::T, Trans::N, 5, 7, 3, 90, GemmType::f32, Math::tf32x3, false), kX3Choice);
  EXPECT_EQ(sgemm::auto_variant(Trans::N, Trans::N, 4096, 4096, 4096, 80, GemmType::f32, Math::tf32x3, true), "wmma");
}

}  // namespace
}  // namespace rungs::test
