// The timing of the cycle-counting probes (wgmma_probe.cu, fp8_promote_tc.cu): a launch puts one
// block on every SM, and each block's first thread writes the SM cycles its loop took to
// cycles[blockIdx.x]. median_rate runs launch(ktiles / 8) once to warm up, then launch(ktiles)
// five times, and gives the median over the launches of macs_per_block over the median block's
// cycles: MACs per SM cycle.
#pragma once

#include "ck.hpp"

#include <algorithm>
#include <vector>

template <class Launch>
double median_rate(Launch&& launch, int sms, int ktiles, long long* cycles, double macs_per_block) {
  launch(ktiles / 8);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> rate;
  std::vector<long long> c(static_cast<size_t>(sms));
  for (int rep = 0; rep < 5; ++rep) {
    launch(ktiles);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(c.data(), cycles, sizeof(long long) * sms, cudaMemcpyDeviceToHost));
    std::sort(c.begin(), c.end());
    rate.push_back(macs_per_block / double(c[c.size() / 2]));
  }
  std::sort(rate.begin(), rate.end());
  return rate[rate.size() / 2];
}
