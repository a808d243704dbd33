// The plain streaming read: what `rungs info` measures as the DRAM read bandwidth (the "% of DRAM"
// denominator, src/cli/probes.cu), the L2 flush before each timed launch, and one of the readers of
// scripts/experiments/read_floor/read_floor.cu. Each thread keeps 4 independent 16-byte loads in flight; the
// sum is written only by a thread whose sum is an impossible value, so the loads cannot be
// optimized away.
#pragma once

#include <cstddef>

namespace rungs::detail {

static __global__ void stream_read_kernel(const float4* __restrict__ p, size_t n4, float* sink) {
  float acc = 0.0f;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const float4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) {
    const float4 a = p[i];
    acc += a.x + a.y + a.z + a.w;
  }
  if (acc == -1.0f) *sink = acc;
}

}  // namespace rungs::detail
