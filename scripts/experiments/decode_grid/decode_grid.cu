// What cuBLAS's decode grids do that rung 26's does not, in a bare read of W (bf16, 128-byte
// swizzle, T x 64 TMA boxes as the decode rungs load them; no MMAs). On the H200 at 7168 x 8192,
// cuBLAS runs at m = 64 `nvjet_sm90_tst_80x64_64x11_4x1`: 92 blocks, each 80 rows of W over the
// whole k (no split), clusters of 4 sharing A's boxes (31.9 us under ncu), and at m = 128
// `nvjet_sm90_tst_128x64_64x8_4x2`: 112 blocks of 128 rows of W x 64 rows of A, clusters of 4 x 2
// (34.0 us); rung 26 takes 35.4 / 39.6 us there (ncu), 56 tiles of 128 rows split twice along k.
// Three questions, each timed as read_floor.cu times (L2 flushed, events, median of 30):
//  1. unsplit grids of fitted tile heights against rung 26's split grid, with A's box per stage
//     (A_ROWS x 64, the same box for every block: L2 hits);
//  2. whether rung 26's roles (a producer and a consumer thread, the consumer releasing the slot
//     before the one it holds, as rung 26's consumers do) or its clusters of 2 cost bandwidth;
//  3. whether blocks held in step in clusters of 4, as cuBLAS's are by the A boxes they share (a
//     slot refilled only when all four released it), read faster, with A multicast or not;
//  4. whether the TMA's L2 options read faster: the tensor map's L2 promotion, and an evict_first
//     or evict_last cache hint on W's loads.
//   source scripts/experiments/lib.sh && run_cu decode_grid
#include "../read_probe.cuh"

#include <algorithm>

using namespace read_probe;

// Rung 26's roles around the read: thread 0 produces (waits for the slot's release, then loads
// it), thread 32 consumes (waits for the data, reads a float, releases the slot; with LAG the slot
// before). The cluster's C blocks are held in step: a block's slot is refilled only when every
// block of the cluster released it (empty counts C arrivals). MC: each block loads a_rows / C rows
// of A's box into all C blocks (multicast), else the whole box for itself. Block b reads tile t,
// split z, z-major where zmajor (so that a cluster's blocks share a k range); a grid padded to
// whole clusters reads the last tile again (max_tile).
template <bool LAG, bool MC>
__global__ void roles_read(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap map_a, int T,
                           int a_rows, int kboxes, int splits, int stages, int zmajor, int max_tile, float* sink) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char* buf = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  uint32_t C = 0;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(C));
  const uint32_t rank = rungs::detail::cluster_rank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], C);
    mbar_init_fence();
  }
  rungs::detail::cluster_sync();
  const unsigned w_bytes = (static_cast<unsigned>(T) * 128u + 1023u) & ~1023u, a_bytes = a_rows * 128u;
  const unsigned slot = (w_bytes + a_bytes + 1023u) & ~1023u;
  const int tiles = static_cast<int>(gridDim.x) / splits, b = static_cast<int>(blockIdx.x);
  const int z = zmajor ? b / tiles : b % splits, t = min(max_tile, zmajor ? b % tiles : b / splits);
  const int j0 = kboxes * z / splits, j1 = kboxes * (z + 1) / splits;
  if (threadIdx.x == 0) {
    const int part = a_rows / static_cast<int>(C);
    for (int j = j0; j < j1; ++j) {
      const int i = j - j0, s = i % stages;
      if (i >= stages) mbar_wait(&empty[s], static_cast<unsigned>(((i / stages) + 1) & 1));
      unsigned char* st = buf + static_cast<size_t>(s) * slot;
      mbar_expect_tx(&full[s], static_cast<unsigned>(T) * 128u + a_bytes);
      tma_load_2d(st, &map, j * 64, t * T, &full[s]);
      if (a_rows > 0 && MC)
        rungs::detail::tma_load_2d_multicast(st + w_bytes + rank * part * 128, &map_a, j * 64, rank * part, &full[s],
                                             static_cast<uint16_t>((1u << C) - 1));
      else if (a_rows > 0)
        tma_load_2d(st + w_bytes, &map_a, j * 64, 0, &full[s]);
    }
  } else if (threadIdx.x == 32) {
    float acc = 0.0f;
    for (int i = 0; i < j1 - j0; ++i) {
      const int s = i % stages;
      mbar_wait(&full[s], static_cast<unsigned>((i / stages) & 1));
      acc += reinterpret_cast<const float*>(buf + static_cast<size_t>(s) * slot)[0];
      const int r = LAG ? i - 1 : i;
      if (r >= 0)
        for (uint32_t c = 0; c < C; ++c) rungs::detail::mbar_arrive_cluster(&empty[r % stages], c);
    }
    if (acc == -1.0f) *sink = acc;
  }
  __syncwarp();
  rungs::detail::cluster_sync();  // no block leaves while the others may still signal it or write to it
}

// kernel<<<blocks, threads, smem>>>(args...) in clusters of `cluster` blocks along x.
template <typename... P, typename... Q>
void launch_clustered(void (*kernel)(P...), int blocks, int threads, size_t smem, int cluster, Q... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...));
}

int main() {
  const size_t big = size_t{2} << 30;
  const Setup g = setup(big);
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const double ref = reference_gbs(g, big);
  CK(cudaFuncSetAttribute(tiled_read<>, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
  for (auto* kern : {roles_read<false, false>, roles_read<true, false>, roles_read<false, true>})
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
  void* a_buf = nullptr;  // A: 128 x 8192 bf16
  CK(cudaMalloc(&a_buf, size_t{128} * 8192 * 2));
  CK(cudaMemset(a_buf, 0, size_t{128} * 8192 * 2));
  const int k = 8192;
  auto slot_of = [](int T, int a_rows) { return ((T * 128 + 1023) / 1024 * 1024 + a_rows * 128 + 1023) / 1024 * 1024; };

  std::printf("\n1. unsplit tiles and rung 26's split grid, A's box per stage (one thread per block, ~208 KB)\n");
  struct Grid { int n, T, splits; };
  for (Grid gr : {Grid{7168, 128, 2}, Grid{7168, 64, 1}, Grid{7168, 56, 1}, Grid{7168, 80, 1}, Grid{7168, 224, 4},
                  Grid{28672, 224, 1}, Grid{28672, 256, 1}}) {
    const int tiles = (gr.n + gr.T - 1) / gr.T;
    const size_t bytes = static_cast<size_t>(gr.n) * k * 2;
    CUtensorMap map{};
    if (!bf16_map(encode, g.p, gr.n, k, gr.T, &map)) continue;
    for (int a_rows : {0, 64, 128}) {
      CUtensorMap map_a{};
      if (!bf16_map(encode, a_buf, 128, k, a_rows > 0 ? a_rows : 8, &map_a)) continue;
      const int slot = slot_of(gr.T, a_rows), stages = std::min(kMaxStages, 208 * 1024 / slot);
      const double ms = median_ms([&] {
        tiled_read<><<<tiles * gr.splits, 32, static_cast<size_t>(stages) * slot + 1024>>>(
            map, map_a, gr.T, a_rows, k / 64, gr.splits, stages, g.sink);
      }, g);
      const double gbs = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
      std::printf("%5d x %d  T %3d x %d splits = %3d blocks, A %3d rows, S%-2d: %7.1f us, %5.1f%% (W bytes)\n", gr.n, k,
                  gr.T, gr.splits, tiles * gr.splits, a_rows, stages, ms * 1e3, 100.0 * gbs / ref);
    }
  }

  const int n = 7168, a_rows = 64;
  CUtensorMap map_a64{};
  bf16_map(encode, a_buf, 128, k, a_rows, &map_a64);
  std::printf("\n2. rung 26's roles and clusters, W 7168 x 8192, T 128 x 2 splits = 112 blocks, 8 stages, A 64 rows\n");
  {
    const int T = 128, splits = 2, blocks = n / T * splits, stages = 8;
    CUtensorMap map{};
    bf16_map(encode, g.p, n, k, T, &map);
    const size_t smem = static_cast<size_t>(stages) * slot_of(T, a_rows) + 1024;
    auto row = [&](const char* what, double ms) { std::printf("%-46s %7.1f us\n", what, ms * 1e3); };
    row("one thread", median_ms([&] {
          tiled_read<><<<blocks, 32, smem>>>(map, map_a64, T, a_rows, k / 64, splits, stages, g.sink);
        }, g));
    row("one thread, clusters of 2", median_ms([&] {
          launch_clustered(tiled_read<>, blocks, 32, smem, 2, map, map_a64, T, a_rows, k / 64, splits, stages, g.sink);
        }, g));
    row("producer + consumer", median_ms([&] {
          roles_read<false, false><<<blocks, 288, smem>>>(map, map_a64, T, a_rows, k / 64, splits, stages, 0, 1 << 30,
                                                          g.sink);
        }, g));
    row("producer + consumer, lag 1", median_ms([&] {
          roles_read<true, false><<<blocks, 288, smem>>>(map, map_a64, T, a_rows, k / 64, splits, stages, 0, 1 << 30,
                                                         g.sink);
        }, g));
    row("producer + consumer, lag 1, clusters of 2 in step", median_ms([&] {
          launch_clustered(roles_read<true, false>, blocks, 288, smem, 2, map, map_a64, T, a_rows, k / 64, splits,
                           stages, 0, 1 << 30, g.sink);
        }, g));
  }

  std::printf("\n3. clusters of 4 held in step, W 7168 x 8192, A 64 rows a stage (16 a block where multicast)\n");
  struct LGrid { int T, splits, blocks; };
  for (LGrid lg : {LGrid{80, 1, 92}, LGrid{128, 2, 112}, LGrid{64, 1, 112}, LGrid{56, 1, 128}}) {
    CUtensorMap map{};
    bf16_map(encode, g.p, n, k, lg.T, &map);
    const int slot = slot_of(lg.T, a_rows), stages = std::min(kMaxStages, 208 * 1024 / slot);
    const size_t smem = static_cast<size_t>(stages) * slot + 1024;
    const int max_tile = (n + lg.T - 1) / lg.T - 1;
    for (int mc : {0, 1})
      for (int cl : {1, 4}) {
        if (mc && cl == 1) continue;
        CUtensorMap map_a{};
        bf16_map(encode, a_buf, 128, k, mc ? a_rows / cl : a_rows, &map_a);
        const double ms = median_ms([&] {
          launch_clustered(mc ? roles_read<false, true> : roles_read<false, false>, lg.blocks, 64, smem, cl, map, map_a,
                           lg.T, a_rows, k / 64, lg.splits, stages, 1, max_tile, g.sink);
        }, g);
        std::printf("T %3d x %d splits, %3d blocks, S%-2d, clusters of %d%-14s %7.1f us\n", lg.T, lg.splits, lg.blocks,
                    stages, cl, mc ? ", A multicast" : "", ms * 1e3);
      }
  }

  std::printf("\n4. L2 promotion and cache hints, W n x 8192, A 64 rows a stage, one thread a block\n");
  for (auto* kern : {tiled_read<1>, tiled_read<2>})
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
  for (Grid gr : {Grid{7168, 128, 2}, Grid{7168, 80, 1}, Grid{28672, 128, 1}, Grid{28672, 256, 1}}) {
    const int tiles = (gr.n + gr.T - 1) / gr.T, slot = slot_of(gr.T, a_rows);
    const int stages = std::min(kMaxStages, 208 * 1024 / slot);
    const size_t smem = static_cast<size_t>(stages) * slot + 1024;
    const struct { CUtensorMapL2promotion p; const char* name; } proms[] = {
        {CU_TENSOR_MAP_L2_PROMOTION_NONE, "none"}, {CU_TENSOR_MAP_L2_PROMOTION_L2_64B, "64B"},
        {CU_TENSOR_MAP_L2_PROMOTION_L2_128B, "128B"}, {CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "256B"}};
    for (const auto& pr : proms)
      for (int hint : {0, 1, 2}) {
        if (hint > 0 && pr.p != CU_TENSOR_MAP_L2_PROMOTION_L2_256B) continue;
        CUtensorMap map{};
        bf16_map(encode, g.p, gr.n, k, gr.T, &map, pr.p);
        auto* kern = hint == 0 ? tiled_read<0> : hint == 1 ? tiled_read<1> : tiled_read<2>;
        const double ms = median_ms([&] {
          kern<<<tiles * gr.splits, 32, smem>>>(map, map_a64, gr.T, a_rows, k / 64, gr.splits, stages, g.sink);
        }, g);
        std::printf("%5d: T %3d x %d splits, %3d blocks, S%-2d, promotion %-4s, hint %-11s %7.1f us\n", gr.n, gr.T, gr.splits,
                    tiles * gr.splits, stages, pr.name, hint == 0 ? "none" : hint == 1 ? "evict_first" : "evict_last",
                    ms * 1e3);
      }
  }
  return 0;
}
