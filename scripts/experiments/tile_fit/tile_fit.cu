// Does a tile height fitted to the SM count read W faster than the decode rungs' 128-row tiles?
// Rungs 26 and 31 cover n with tiles of 128 rows (256 at some N): n = 7168 gives 56 tiles, split
// twice along k (112 blocks on 132 SMs), and n = 28672 gives 224 tiles (1.7 waves). A tile of T
// rows, T chosen so that tiles x splits come close to the SM count, keeps every SM reading in one
// wave: 112 rows at n = 7168 (64 tiles x 2 splits = 128 blocks), 224 rows at n = 28672 (128
// blocks). Here only the read, as tile_read.cu does it: one thread per block streams its tile's
// T x 64 boxes (bf16, 128-byte swizzle: rung 26's box; 128 fp8 of k are the same bytes, rung 31's)
// through S mbarrier stages, about 128-200 KB in flight. W 28672 x 4096 bf16 has the bytes of
// rung 31's 28672 x 8192 fp8 weight (235 MB), 7168 x 4096 those of its 7168 x 8192 (58.7 MB).
// Hypothesis: the fitted tiles read 5-15 % faster where the 128-row grid leaves SMs idle or runs
// a second wave; if so, a rung with fitted tile heights is worth building.
// Timed as read_floor.cu: L2 flushed before each launch, CUDA events, median of 30.
//   source scripts/experiments/lib.sh && run_cu tile_fit
#include "../read_probe.cuh"

#include <algorithm>

using namespace read_probe;

int main() {
  const size_t big = size_t{2} << 30;
  const Setup g = setup(big);
  CK(cudaFuncSetAttribute(tiled_read<>, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const double ref = reference_gbs(g, big);
  std::printf("%-16s %-40s %8s %7s %7s\n", "W (n x k bf16)", "reader", "us", "GB/s", "%");
  struct Case { int n, k; };
  for (Case c : {Case{7168, 8192}, Case{28672, 8192}, Case{7168, 4096}, Case{28672, 4096}}) {
    const size_t bytes = static_cast<size_t>(c.n) * c.k * 2;
    auto row = [&](const char* what, double ms) {
      const double gbs = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
      std::printf("%5d x %-8d %-40s %8.1f %7.0f %6.1f%%\n", c.n, c.k, what, ms * 1e3, gbs, 100.0 * gbs / ref);
    };
    row("contiguous bulk 64 KB x 3, 1/SM",
        median_ms([&] { bulk_read<<<g.sms, 32, 65536 * 3>>>(g.p, bytes / 65536, 65536, 3, g.sink); }, g));
    for (int T : {128, 256, 112, 224, 96, 192}) {
      if (c.n % T != 0) continue;
      const int tiles = c.n / T;
      const int splits = std::max(1, std::min(8, g.sms / tiles));  // rung 26's: whole multiples up to the SMs
      CUtensorMap map{};
      if (!bf16_map(encode, g.p, c.n, c.k, T, &map)) {
        std::printf("encode failed for %d rows\n", T);
        continue;
      }
      const int slot = (T * 128 + 1023) / 1024 * 1024;
      for (int kb_in_flight : {128, 192}) {
        const int stages = std::min(kMaxStages, kb_in_flight * 1024 / slot);
        char what[96];
        std::snprintf(what, sizeof what, "T %3d x %d splits = %3d blocks, S%-2d (%3d KB)", T, splits, tiles * splits,
                      stages, stages * slot / 1024);
        row(what, median_ms(
                      [&] {
                        tiled_read<><<<tiles * splits, 32, static_cast<size_t>(stages) * slot + 1024>>>(
                            map, map, T, 0, c.k / 64, splits, stages, g.sink);
                      },
                      g));
      }
    }
  }
  return 0;
}
