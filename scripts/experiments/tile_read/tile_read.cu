// Reading W (n x k bf16, row-major) the way the decode rungs do, without the MMAs: does the tiled
// access pattern itself cost bandwidth against a contiguous read of the same bytes? One thread per
// block streams steps of 128 rows x 64*G k through S mbarrier stages by TMA boxes (box_rows x
// box_k; 128-byte swizzle when box_k = 64, rung 26's 128 x 64 box), so that G consecutive k boxes
// of each row go out together; blocks take tiles of 128 rows split along k (rung 26's grid) or,
// "persistent", equal ranges of the (tile, step) list on one block per SM (rung 27's schedule);
// "rotated": rung 26's grid with each block's steps walked from a start spread evenly over the
// split's range (decode_rotated.patch), so the blocks do not all load one offset of their rows at once.
// "rows": rung 26's grid reading whole row segments (1-4 KB) by 1D bulk copies, one per row.
// Beside them: a contiguous bulk read of the same bytes (read_floor.cu's best shape) and at 2 GiB.
// Timed as read_floor.cu: L2 flushed before each launch, CUDA events, median of 30.
//   source scripts/experiments/lib.sh && run_cu tile_read
#include "../read_probe.cuh"

using namespace read_probe;
using rungs::detail::tma_load_2d;

constexpr int kTileRows = 128;

struct Shape {
  int box_rows, box_k, G, stages;
};

// Units are (tile, step), tile-major; step j of tile t covers rows t*128.. and k j*64*G.. . Block b
// takes units [b*U/P, (b+1)*U/P) when persistent (P = gridDim.x), else tile b / splits and its
// k steps [z*KT/splits, (z+1)*KT/splits), z = b % splits.
__global__ void tile_read(const __grid_constant__ CUtensorMap map, int tiles, int steps_per_tile, int splits,
                          bool persistent, bool rotated, Shape sh, float* sink) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char* buf = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < sh.stages; ++s) mbar_init(&full[s], 1);
  mbar_init_fence();
  const unsigned step_bytes = kTileRows * 64u * sh.G * 2u;
  const unsigned box_bytes = sh.box_rows * sh.box_k * 2u;
  const int rb_n = kTileRows / sh.box_rows, kb_n = 64 * sh.G / sh.box_k;
  long long u0, u1;
  if (persistent) {
    const long long U = static_cast<long long>(tiles) * steps_per_tile;
    u0 = U * blockIdx.x / gridDim.x, u1 = U * (blockIdx.x + 1) / gridDim.x;
  } else {
    const int t = blockIdx.x / splits, z = blockIdx.x % splits;
    u0 = static_cast<long long>(t) * steps_per_tile + static_cast<long long>(steps_per_tile) * z / splits;
    u1 = static_cast<long long>(t) * steps_per_tile + static_cast<long long>(steps_per_tile) * (z + 1) / splits;
  }
  const long long count = u1 - u0;
  const long long rot = rotated ? static_cast<long long>(blockIdx.x / splits) * count / (gridDim.x / splits) : 0;
  auto issue = [&](long long u, int s) {
    if (rotated) u = u0 + (u - u0 + rot) % count;
    const int t = static_cast<int>(u / steps_per_tile), j = static_cast<int>(u % steps_per_tile);
    mbar_expect_tx(&full[s], step_bytes);
    unsigned char* dst = buf + static_cast<size_t>(s) * step_bytes;
    for (int kb = 0; kb < kb_n; ++kb)
      for (int rb = 0; rb < rb_n; ++rb)
        tma_load_2d(dst + (kb * rb_n + rb) * box_bytes, &map, j * 64 * sh.G + kb * sh.box_k,
                    t * kTileRows + rb * sh.box_rows, &full[s]);
  };
  long long issued = u0, done = u0;
  for (int s = 0; s < sh.stages && issued < u1; ++s, ++issued) issue(issued, s);
  float acc = 0.0f;
  while (done < u1) {
    const long long i = done - u0;
    const int s = static_cast<int>(i % sh.stages);
    mbar_wait(&full[s], static_cast<unsigned>((i / sh.stages) & 1));
    acc += reinterpret_cast<const float*>(buf + static_cast<size_t>(s) * step_bytes)[0];
    ++done;
    if (issued < u1) {
      issue(issued, static_cast<int>((issued - u0) % sh.stages));
      ++issued;
    }
  }
  if (acc == -1.0f) *sink = acc;
}

// Rung 26's grid (tiles of 128 rows, split along k) with each stage 16 rows x `seg` bytes of W read
// by one 1D bulk copy per row (cp.async.bulk): long contiguous runs per row, where a TMA box asks
// for 128 or 256 bytes of each of 128 rows. Units are (k segment, group of 16 rows), k outer, so
// that all 128 rows of a tile are read near one k offset, as an MMA over the tile needs them.
constexpr int kGroupRows = 16;
__global__ void row_read(const char* __restrict__ w, int row_bytes, int tiles, int splits, unsigned seg, int stages,
                         float* sink) {
  extern __shared__ __align__(128) unsigned char rbuf[];
  __shared__ uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
  mbar_init_fence();
  const int t = blockIdx.x / splits, z = blockIdx.x % splits;
  const int segs = row_bytes / static_cast<int>(seg), groups = kTileRows / kGroupRows;
  const long long u0 = static_cast<long long>(segs) * z / splits * groups;
  const long long u1 = static_cast<long long>(segs) * (z + 1) / splits * groups;
  const unsigned stage_bytes = kGroupRows * seg;
  auto issue = [&](long long u, int s) {
    const int c = static_cast<int>(u / groups), gr = static_cast<int>(u % groups);
    mbar_expect_tx(&full[s], stage_bytes);
    for (int r = 0; r < kGroupRows; ++r) {
      const char* src = w + (static_cast<size_t>(t) * kTileRows + gr * kGroupRows + r) * row_bytes +
                        static_cast<size_t>(c) * seg;
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       smem_u32(rbuf + static_cast<size_t>(s) * stage_bytes + r * seg)),
                   "l"(src), "r"(seg), "r"(smem_u32(&full[s]))
                   : "memory");
    }
  };
  long long issued = u0, done = u0;
  for (int s = 0; s < stages && issued < u1; ++s, ++issued) issue(issued, s);
  float acc = 0.0f;
  while (done < u1) {
    const long long i = done - u0;
    const int s = static_cast<int>(i % stages);
    mbar_wait(&full[s], static_cast<unsigned>((i / stages) & 1));
    acc += reinterpret_cast<const float*>(rbuf + static_cast<size_t>(s) * stage_bytes)[0];
    ++done;
    if (issued < u1) {
      issue(issued, static_cast<int>((issued - u0) % stages));
      ++issued;
    }
  }
  if (acc == -1.0f) *sink = acc;
}

int main() {
  const size_t big = size_t{2} << 30;
  const Setup g = setup(big);
  CK(cudaFuncSetAttribute(tile_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(row_read, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const double ref = reference_gbs(g, big);
  std::printf("%-14s %-44s %8s %7s %7s\n", "W (n x k)", "reader", "us", "GB/s", "%");
  const int k = 8192;
  for (int n : {7168, 28672}) {
    const size_t bytes = static_cast<size_t>(n) * k * 2;
    auto row = [&](const char* what, double ms) {
      const double gbs = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
      std::printf("%5d x %-6d %-44s %8.1f %7.0f %6.1f%%\n", n, k, what, ms * 1e3, gbs, 100.0 * gbs / ref);
    };
    row("contiguous bulk 64 KB x 3, 1/SM",
        median_ms([&] { bulk_read<<<g.sms, 32, 65536 * 3>>>(g.p, bytes / 65536, 65536, 3, g.sink); }, g));
    const int tiles = n / kTileRows;
    // rung 26's split: whole multiples of the tiles up to the SMs, at most 8
    const int splits = std::max(1, std::min(8, g.sms / tiles));
    // 1D bulk copies of whole row segments: 16 rows x seg bytes a stage, about 128 KB in flight
    for (unsigned seg : {1024u, 2048u, 4096u}) {
      const int stages = std::min(kMaxStages, static_cast<int>(131072 / (kGroupRows * seg)));
      char what[96];
      std::snprintf(what, sizeof what, "rows: 16 x %u B bulk a stage, S%d, %d blocks", seg, stages, tiles * splits);
      row(what, median_ms(
                    [&] {
                      row_read<<<tiles * splits, 32, static_cast<size_t>(kGroupRows) * seg * stages>>>(
                          g.p, k * 2, tiles, splits, seg, stages, g.sink);
                    },
                    g));
    }
    const Shape shapes[] = {{128, 64, 1, 8}, {128, 64, 2, 4}, {128, 64, 4, 2}, {128, 64, 4, 3},
                            {32, 256, 4, 3}, {64, 128, 2, 6}};
    for (const Shape& sh : shapes) {
      const bool sw = sh.box_k == 64;
      CUtensorMap map{};
      const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(n)};
      const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * 2};
      const cuuint32_t box[2] = {static_cast<cuuint32_t>(sh.box_k), static_cast<cuuint32_t>(sh.box_rows)};
      const cuuint32_t estr[2] = {1, 1};
      if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, g.p, dims, strides, box, estr,
                 CU_TENSOR_MAP_INTERLEAVE_NONE,
                 sw ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        std::printf("encode failed for box %d x %d\n", sh.box_rows, sh.box_k);
        continue;
      }
      const int steps = k / (64 * sh.G);
      const size_t smem = static_cast<size_t>(kTileRows) * 64 * sh.G * 2 * sh.stages + 1024;
      for (int mode = 0; mode < 3; ++mode) {
        const bool persistent = mode == 1, rotated = mode == 2;
        const int grid = persistent ? g.sms : tiles * splits;
        char what[96];
        std::snprintf(what, sizeof what, "%s box %dx%d%s G%d S%d, %d blocks",
                      persistent ? "stream-K" : rotated ? "tiles rotated" : "tiles", sh.box_rows, sh.box_k,
                      sw ? " sw128" : "", sh.G, sh.stages, grid);
        row(what, median_ms(
                      [&] {
                        tile_read<<<grid, 32, smem>>>(map, tiles, steps, splits, persistent, rotated, sh, g.sink);
                      },
                      g));
      }
    }
  }
  return 0;
}
