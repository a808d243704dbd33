// Does TMA load a box whose inner start coordinate is not 16-byte aligned, from a map whose base
// was rounded down to 16 bytes (row residue classes: reading an A whose rows are not 16-byte
// aligned in place, rung 24 wgmma_inplace)? And from a map held in an array inside a
// __grid_constant__ struct? One mode per process (an illegal instruction ends the context):
// 0 plain map, class 0 (shift 0); 1 plain map, class 1 (shift 1: coordinate 1); 2 struct of maps,
// index from an argument; 3 struct, constant index 1; 4 class 1 without swizzle, a 16-byte wide box
// at coordinate 1; 5 class 1 at the aligned coordinate 8 (the map itself valid?). Prints mismatches.
// H100, 4e5abe0: mode 0: 0 mismatches; 1, 2, 3: "an illegal instruction was encountered": TMA refuses a
// shifted inner coordinate, with the map as a plain parameter too, so rung 24 was not kept and
// unaligned operands are copied (docs/gemm_tc.md).
// Usage (on the GPU machine): source scripts/experiments/lib.sh && for m in 0 1 2 3 4 5; do run_cu tma_shift_probe $m; done
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "detail/sm90/mma_stage.cuh"

using namespace rungs::detail;

struct Maps {
  CUtensorMap map[8];
  int shift[8];
  int log2p, on;
};

constexpr int BOX_ROWS = 16, BOX_COLS = 64, BOX_BYTES = BOX_ROWS * 128;

// One box of BYTES (shared memory aligned to ALIGN: 1024 for the 128-byte swizzle) through TMA
// into `out`, as 16-bit elements.
template <int BYTES = BOX_BYTES, int ALIGN = 1024>
__device__ void load_box(const CUtensorMap* map, int c0, int c1, uint16_t* out) {
  __shared__ alignas(ALIGN) unsigned char buf[BYTES];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    mbar_init(&bar, 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_expect_tx(&bar, BYTES);
    tma_load_2d(buf, map, c0, c1, &bar);
  }
  mbar_wait(&bar, 0);
  for (int i = threadIdx.x; i < BYTES / 2; i += blockDim.x) out[i] = reinterpret_cast<uint16_t*>(buf)[i];
}

__global__ void plain(const __grid_constant__ CUtensorMap map, int c0, uint16_t* out) { load_box(&map, c0, 0, out); }
__global__ void in_struct(const __grid_constant__ Maps maps, int j, int c0, uint16_t* out) { load_box(&maps.map[j], c0 + maps.shift[j], 0, out); }
__global__ void in_struct_const(const __grid_constant__ Maps maps, int c0, uint16_t* out) { load_box(&maps.map[1], c0 + maps.shift[1], 0, out); }
// Mode 4: a box 16 bytes wide and 16 rows, no swizzle (rows 16 bytes apart in shared memory).
__global__ void narrow_box(const __grid_constant__ CUtensorMap map, int c0, uint16_t* out) {
  load_box<16 * 16, 128>(&map, c0, 0, out);
}

typedef CUresult (*Encode)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                           const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  const int m = 40, lda = 65, k = 65, P = 8;
  std::vector<uint16_t> h(size_t(m) * lda);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i + 1);
  char* raw;
  cudaMalloc(&raw, h.size() * 2 + 64);
  uint16_t* A = reinterpret_cast<uint16_t*>(raw + 16);  // 16-byte aligned base
  cudaMemcpy(A, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  Encode encode = reinterpret_cast<Encode>(fn);
  Maps maps{};
  for (int j = 0; j < P; ++j) {
    const uintptr_t start = uintptr_t(A) + uintptr_t(j) * lda * 2, base = start & ~uintptr_t(15);
    maps.shift[j] = int((start - base) / 2);
    const cuuint64_t dims[2] = {cuuint64_t(k + maps.shift[j]), cuuint64_t((m - j + P - 1) / P)};
    const cuuint64_t strides[1] = {cuuint64_t(P) * lda * 2};
    const cuuint32_t box[2] = {BOX_COLS, BOX_ROWS}, es[2] = {1, 1};
    CUresult r = encode(&maps.map[j], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, reinterpret_cast<void*>(base), dims, strides,
                        box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode class %d: error %d\n", j, int(r)); return 1; }
  }
  uint16_t* out;
  cudaMalloc(&out, BOX_BYTES);
  cudaMemset(out, 0xFF, BOX_BYTES);
  // The box in `out` (128-byte swizzle) against A's rows row0 + P r and columns col0 + c (zero past
  // m or k): the mismatches, the first `show` of them printed after `what`.
  auto mismatches = [&](int row0, int col0, int show, const char* what) {
    std::vector<uint16_t> o(BOX_BYTES / 2);
    cudaMemcpy(o.data(), out, BOX_BYTES, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int r = 0; r < BOX_ROWS; ++r)
      for (int c = 0; c < BOX_COLS; ++c) {
        const int byte = r * 128 + ((((c * 2) / 16) ^ (r % 8)) * 16) + (c * 2) % 16;
        const int row = row0 + P * r, col = col0 + c;
        const uint16_t want = (row < m && col < k) ? h[size_t(row) * lda + col] : 0;
        const uint16_t got = o[byte / 2];
        if (got != want && bad++ < show) printf("  %s: (%d, %d) got %u want %u\n", what, r, c, got, want);
      }
    return bad;
  };
  const int j = mode == 0 ? 0 : 1;
  if (mode == 4) {
    CUtensorMap nm;
    const uintptr_t start = uintptr_t(A) + uintptr_t(lda) * 2, base = start & ~uintptr_t(15);
    const cuuint64_t dims[2] = {cuuint64_t(k + maps.shift[1]), cuuint64_t((m - 1 + P - 1) / P)};
    const cuuint64_t strides[1] = {cuuint64_t(P) * lda * 2};
    const cuuint32_t box[2] = {8, 16}, es[2] = {1, 1};
    CUresult r = encode(&nm, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, reinterpret_cast<void*>(base), dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("mode 4 encode: error %d\n", int(r)); return 1; }
    narrow_box<<<1, 32>>>(nm, maps.shift[1], out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("mode 4 (no swizzle, 16-byte box, coordinate %d): %s\n", maps.shift[1], cudaGetErrorString(e)); return 1; }
    std::vector<uint16_t> o(16 * 8);
    cudaMemcpy(o.data(), out, o.size() * 2, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int r2 = 0; r2 < 16; ++r2)
      for (int c = 0; c < 8; ++c) {
        const int row = 1 + P * r2;
        const uint16_t want = row < m ? h[size_t(row) * lda + c] : 0;
        if (o[r2 * 8 + c] != want) ++bad;
      }
    printf("mode 4 (no swizzle, 16-byte box, coordinate %d): %d mismatches\n", maps.shift[1], bad);
    return 0;
  }
  if (mode == 5) {  // class 1 at coordinate 8: columns 8 - shift .. of the row
    plain<<<1, 32>>>(maps.map[1], 8, out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("mode 5 (class 1, coordinate 8): %s\n", cudaGetErrorString(e)); return 1; }
    printf("mode 5 (class 1, coordinate 8): %d mismatches\n", mismatches(1, 8 - maps.shift[1], 0, "mode 5"));
    return 0;
  }
  for (int c0 : {0, 64}) {
    if (mode == 0) plain<<<1, 32>>>(maps.map[0], c0 + maps.shift[0], out);
    else if (mode == 1) plain<<<1, 32>>>(maps.map[1], c0 + maps.shift[1], out);
    else if (mode == 2) in_struct<<<1, 32>>>(maps, j, c0, out);
    else in_struct_const<<<1, 32>>>(maps, c0, out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("mode %d c0 %d: %s\n", mode, c0, cudaGetErrorString(e)); return 1; }
    char what[32];
    snprintf(what, sizeof what, "mode %d c0 %d", mode, c0);
    const int bad = mismatches(j, c0, 5, what);
    printf("mode %d (class %d, shift %d) c0 %d: %d mismatches\n", mode, j, maps.shift[j], c0, bad);
  }
  return 0;
}
