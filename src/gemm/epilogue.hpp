// The epilogue as plain kernels after a product (the unfused chain): C from the product P (m x
// np, written by a gemm into scratch) with the bias, the activation, the gated product, beta * C
// and the fp8 output's quantization of an EpiCall applied (rungs.hpp, Epilogue).
#pragma once

#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::epilogue {

// P: m x c.np() row-major with row stride ldp, of type p_type (f32, f16 or bf16); nullptr: the
// product is zero (k == 0 or alpha == 0), nothing read. Writes C (and c_scales for an e4m3 C).
void apply(const EpiCall& c, const void* P, EpiOut p_type, int64_t ldp);

// Whether an epilogue does anything (a default Epilogue is none: the plain gemm).
inline bool any(const Epilogue& e) { return e.bias != nullptr || e.act != Activation::none || e.gated; }

}  // namespace rungs::sgemm::epilogue
