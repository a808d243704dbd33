// The fastest single launch that only reads B bytes, at the decode weights' sizes: the floor under
// the decode rungs' "% of DRAM" (docs/gemm_tc.md, "The floor at each size"). Two kinds of reader,
// each in several shapes, the best median kept per size:
//  - ldg: the `rungs info` read kernel (grid-stride, four 16-byte loads in flight per thread);
//  - bulk: one thread per block streams chunks into shared memory by cp.async.bulk through S
//    mbarrier stages (rung 26's way of reading W, without the MMAs), chunks dealt round-robin.
// Timed as `rungs bench` times: the L2 flushed before each launch by reading another buffer, CUDA
// events around the one launch, median of 30. The percentages are of the best rate at 2 GiB (the
// `rungs info` denominator); the last column is what 93 % of it would need at that size.
//   source scripts/experiments/lib.sh && run_cu read_floor [BYTES...]
#include "../read_probe.cuh"

using namespace read_probe;

__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < ns);
}
__global__ void empty() {}

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {size_t{7168} * 8192 * 2, size_t{28672} * 8192 * 2, size_t{7168} * 8192,
                               size_t{28672} * 8192, size_t{2} << 30};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    sizes.push_back(size_t{2} << 30);
  }
  const size_t big = *std::max_element(sizes.begin(), sizes.end());
  const Setup g = setup(big);

  // The GPU's own cost of a queued launch (as rungs info measures it).
  std::vector<double> lv;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int r = 0; r < 51; ++r) {
    spin<<<1, 32>>>(50000);
    CK(cudaEventRecord(e0));
    empty<<<1, 32>>>();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    lv.push_back(ms);
  }
  std::sort(lv.begin(), lv.end());
  std::printf("%s, %d SMs, L2 %d MB; empty launch %.2f us\n", g.prop.name, g.sms, g.prop.l2CacheSize >> 20,
              lv[lv.size() / 2] * 1e3);

  struct Best {
    double ms;
    char what[64];
  };
  std::vector<Best> best(sizes.size(), Best{1e30, ""});
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t bytes = sizes[i];
    const int ldg_shapes[][2] = {{256, 4}, {256, 8}, {256, 16}, {512, 2}, {1024, 1}, {1024, 2}};
    for (const auto& sh : ldg_shapes) {
      const int threads = sh[0], per_sm = sh[1];
      const double ms = median_ms(
          [&] {
            stream_read_kernel<<<g.sms * per_sm, threads>>>(reinterpret_cast<const float4*>(g.p), bytes / 16, g.sink);
          }, g);
      if (ms < best[i].ms) {
        best[i].ms = ms;
        std::snprintf(best[i].what, sizeof best[i].what, "ldg %d x %d/SM", threads, per_sm);
      }
    }
    // (chunk bytes, stages, blocks per SM): up to 192 KB in flight per SM.
    const int bulk_shapes[][3] = {{16384, 8, 1}, {16384, 12, 1}, {32768, 6, 1}, {8192, 12, 2}, {16384, 6, 2}, {65536, 3, 1}};
    for (const auto& sh : bulk_shapes) {
      const unsigned chunk = static_cast<unsigned>(sh[0]);
      if (bytes % chunk != 0) continue;
      const int stages = sh[1], grid = g.sms * sh[2];
      const size_t smem = static_cast<size_t>(chunk) * stages;
      const double ms =
          median_ms([&] { bulk_read<<<grid, 32, smem>>>(g.p, bytes / chunk, chunk, stages, g.sink); }, g);
      if (ms < best[i].ms) {
        best[i].ms = ms;
        std::snprintf(best[i].what, sizeof best[i].what, "bulk %u B x %d stages, %d/SM", chunk, stages, sh[2]);
      }
    }
  }
  const double ref = static_cast<double>(sizes.back()) / (best.back().ms * 1e-3) / 1e9;
  std::printf("%14s %10s %9s %7s %14s  %s\n", "bytes", "best us", "GB/s", "% ref", "93% needs us", "reader");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double gbs = static_cast<double>(sizes[i]) / (best[i].ms * 1e-3) / 1e9;
    std::printf("%14zu %10.1f %9.0f %6.1f%% %14.1f  %s\n", sizes[i], best[i].ms * 1e3, gbs, 100.0 * gbs / ref,
                static_cast<double>(sizes[i]) / (0.93 * ref * 1e9) * 1e6, best[i].what);
  }
  return 0;
}
