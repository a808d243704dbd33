// The `auto` choice for reduce_sum. For f32 and f64 it must be an `accurate` rung (the API
// promises 1 ulp + 2^-40 / 2^-69 sum|x| and bitwise reproducibility); single_pass is the only one,
// and it is also meant to be the fastest rung for every type (one launch at DRAM speed, no second
// pass over partials). The choice is to be confirmed and tuned (block and grid constants in
// 08_single_pass.cu) from the H100 measurements recorded in docs/bench/h100.md; until a
// measurement says otherwise, every type and size gets it.
#include "reduce/reduce_rung.hpp"

namespace rungs::reduce {

namespace {

constexpr const char* kAutoRung = "single_pass";  // accurate: required for f32/f64

}  // namespace

std::string auto_variant(DType, int64_t, int) { return kAutoRung; }

}  // namespace rungs::reduce
