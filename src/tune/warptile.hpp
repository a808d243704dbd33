// The tuner's view of rung 09 (warptile): every tile configuration `rungs tune gemm` times, in the
// rungs_tune library (src/tune/), which the CLI and the tests link beside rungs. The library itself
// carries only the configurations its dispatch picks (src/gemm/09_warptile.cu).
#pragma once

#include "gemm/gemm_rung.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace rungs::sgemm::warptile {
std::vector<std::string> configs();               // names, e.g. "128x128x16_w32x64_t8x8_s3"
void run_config(size_t index, const Args& args);  // run one configuration (index into configs())
}  // namespace rungs::sgemm::warptile
