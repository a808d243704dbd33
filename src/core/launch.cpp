#include "core/errors.hpp"

#include <cuda_runtime_api.h>

#include <climits>
#include <string>

namespace rungs::detail {

dim3 tile_grid(int64_t tiles_m, int64_t tiles_n, const char* rung) {
  const int64_t blocks = tiles_m * tiles_n;
  if (blocks > INT_MAX) {
    unsupported(rung, "problem needs " + std::to_string(blocks) + " thread blocks, more than one launch addresses");
  }
  return dim3(static_cast<unsigned>(blocks));
}

void check_launch(const char* rung) {
  cudaError_t err = cudaPeekAtLastError();
  if (err != cudaSuccess) throw_cuda(err, rung, __FILE__, __LINE__);
}

}  // namespace rungs::detail
