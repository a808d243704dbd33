// The `auto` choice for gemm: which rung runs for a shape on a device. The table behind it
// (tuning.cpp) carries the measurement that justified each entry.
#pragma once

#include <rungs/rungs.hpp>

#include <string>

namespace rungs::sgemm {
// type/math: the element type and (float only) the math mode; each has its own choice.
// rows_aligned: every row of A and B starts 16 bytes after the previous one's start (ld * elem % 16 == 0).
// scaling: an fp8 call's scale layout. dram_gbs: the device's DRAM bandwidth on paper
// (detail::dram_peak_gbs; 0 where unknown), which moves one decode threshold (H100 / H200).
std::string auto_variant(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int sm, GemmType type = GemmType::f32,
                         Math math = Math::fp32, bool rows_aligned = true, Scaling scaling = Scaling::tensor,
                         double dram_gbs = 0.0);
}
