// Question: would rung 31 (decode_fp8) read its fp8 weights faster in rung 33's orientation? Rung 31
// gives W's rows wgmma's 64-row side, so at n = 28672 its 128-row tiles run 224 blocks (1.7 waves);
// tile_fit.cu measured the 235 MB fp8 weight read in 58.6 us in fitted tiles against 61.8 in rung
// 31's grid, and rung 31 itself takes 64-65 us at m = 1 (H200). Here A's rows (m <= 64) take the
// 64-row side and W's rows wgmma's N, fitted to one wave: 224 rows per block at n = 28672 (two
// consumer warpgroups of 112, the same 64 rows of A), 56 at 7168 (one warpgroup), 128 fp8 of k a
// stage, each stage's partial sums promoted into fp32 registers (as rung 31 does, wgmma_wait<0>
// then an add), e4m3 x e4m3 -> bf16, no scales (outer scales are an epilogue multiply). Against the
// same kernel with the MMAs off (the bare read in that grid). Timed as read_floor.cu times (L2
// flushed, events, median of 30); C checked against a CUDA-core fp32 product.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc --expt-relaxed-constexpr \
//     scripts/experiments/decode_wide_fp8/decode_wide_fp8.cu -lcuda -o build-experiments/decode_wide_fp8
#include "../read_probe.cuh"

#include "detail/gemm_tc.cuh"

#include <cuda_fp8.h>

#include <cmath>

using namespace read_probe;
namespace d = rungs::detail;

// wgmma.m64nNk32, e4m3 x e4m3 -> fp32, both K-major: d = (acc ? d : 0) + A (64 x 32) B (32 x N).
template <int N> __device__ __forceinline__ void wgmma_e4m3(float (&d)[N / 2], uint64_t da, uint64_t db, int acc);
template <> __device__ __forceinline__ void wgmma_e4m3<56>(float (&d)[28], uint64_t da, uint64_t db, int acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %30, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n56k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, %28, %29, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
               : "l"(da), "l"(db), "r"(acc));
}
template <> __device__ __forceinline__ void wgmma_e4m3<112>(float (&d)[56], uint64_t da, uint64_t db, int acc) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %58, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n112k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, %56, %57, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
               : "l"(da), "l"(db), "r"(acc));
}

constexpr int ROW = 128, BK = 128;  // 128 fp8 of k per stage: one 128-byte swizzle row
template <int NB, int NW>
constexpr int stage_bytes() {
  return (NB * NW + 64) * ROW;
}
template <int NB, int NW>
constexpr int stages() {
  constexpr int s = (226 * 1024 - 256) / stage_bytes<NB, NW>();
  return s > 14 ? 14 : s;
}

// Block x: W rows NB NW x .. (warpgroup w: NB rows from NB w), A rows 0 .. 63, all of k. MMA = 0:
// the consumers wait for each stage and release it (the bare read).
template <int NB, int NW, int MMA>
__global__ void __launch_bounds__(128 * NW + 32, 1)
    wide_fp8(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, int m, int n, int k,
             __nv_bfloat16* C) {
  constexpr int ST = stages<NB, NW>(), SB = stage_bytes<NB, NW>(), N = NB * NW;
  extern __shared__ unsigned char raw[];
  unsigned char* smem = d::smem_align_1024(raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + ST * SB);
  uint64_t* empty = full + ST;
  const int tid = threadIdx.x, wg = tid / 128;
  d::init_pipeline_barriers(full, empty, ST, NW);
  __syncthreads();
  const int n0 = blockIdx.x * N, KT = (k + BK - 1) / BK;
  if (wg == NW) {
    if (tid == 128 * NW)
      for (int i = 0; i < KT; ++i) {
        const int s = i % ST;
        if (i >= ST) d::mbar_wait(&empty[s], ((i / ST) + 1) & 1);
        unsigned char* st = smem + s * SB;
        d::mbar_expect_tx(&full[s], SB);
        d::tma_load_2d(st, &map_w, i * BK, n0, &full[s]);
        d::tma_load_2d(st + N * ROW, &map_a, i * BK, 0, &full[s]);
      }
    return;
  }
  float part[NB / 2], total[NB / 2];
#pragma unroll
  for (int i = 0; i < NB / 2; ++i) part[i] = 0.0f, total[i] = 0.0f;
  for (int i = 0; i < KT; ++i) {
    const int s = i % ST;
    d::mbar_wait(&full[s], (i / ST) & 1);
    if constexpr (MMA) {
      const unsigned char* Ws = smem + s * SB + wg * NB * ROW;
      const unsigned char* As = smem + s * SB + N * ROW;
      d::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 32; ++kk)
        wgmma_e4m3<NB>(part, d::smem_desc(As + kk * 32, 16, 1024), d::smem_desc(Ws + kk * 32, 16, 1024), kk > 0);
      d::wgmma_commit();
      d::wgmma_wait<0>();
#pragma unroll
      for (int j = 0; j < NB / 2; ++j) total[j] += part[j];
    }
    if (tid % 128 == 0) d::mbar_arrive(&empty[s]);
  }
  if (static_cast<int>(blockIdx.x) * N < n)
    d::store_acc_64xn<__nv_bfloat16, NB>(total, C, n, 0, n0 + wg * NB, m, n, 1.0f, 0.0f, true);
}

__global__ void reference(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* W, int m, int n, int k, float* C) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= n) return;
  float s = 0.0f;
  for (int t = 0; t < k; ++t) s += float(A[size_t(i) * k + t]) * float(W[size_t(j) * k + t]);
  C[size_t(i) * n + j] = s;
}
__global__ void fill(unsigned char* p, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    p[i] = __nv_fp8_e4m3((static_cast<int>(h % 65) - 32) / 16.0f).__x;
  }
}

inline bool u8_map(PFN_cuTensorMapEncodeTiled_v12000 encode, void* base, int rows, int cols, int box_rows,
                   CUtensorMap* map) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols)};
  const cuuint32_t box[2] = {128, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estr[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int NB, int NW>
void run(const Setup& g, PFN_cuTensorMapEncodeTiled_v12000 encode, double ref_gbs, int m, int n, int k,
         unsigned char* W, unsigned char* A, __nv_bfloat16* C, float* Cref) {
  constexpr int SMEM = stages<NB, NW>() * stage_bytes<NB, NW>() + 1024 + 256;
  CUtensorMap mw{}, ma{};
  if (!u8_map(encode, W, n, k, NB * NW, &mw) || !u8_map(encode, A, m, k, 64, &ma)) {
    std::printf("map refused\n");
    return;
  }
  const int blocks = (n + NB * NW - 1) / (NB * NW);
  auto k1 = wide_fp8<NB, NW, 1>;
  auto k0 = wide_fp8<NB, NW, 0>;
  CK(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CK(cudaFuncSetAttribute(k0, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CK(cudaMemset(C, 0xff, size_t(m) * n * 2));
  k1<<<blocks, 128 * NW + 32, SMEM>>>(mw, ma, m, n, k, C);
  reference<<<dim3((n + 255) / 256, m), 256>>>(reinterpret_cast<__nv_fp8_e4m3*>(A), reinterpret_cast<__nv_fp8_e4m3*>(W),
                                              m, n, k, Cref);
  CK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> c(size_t(m) * n);
  std::vector<float> r(size_t(m) * n);
  CK(cudaMemcpy(c.data(), C, c.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.data(), Cref, r.size() * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double u = __bfloat162float(c[i]), v = r[i];
    num += (u - v) * (u - v), den += v * v;
    if (std::isnan(u)) num = 1e30;
  }
  double t1[2], t0[2];
  for (int rep = 0; rep < 2; ++rep) {
    t1[rep] = median_ms([&] { k1<<<blocks, 128 * NW + 32, SMEM>>>(mw, ma, m, n, k, C); }, g);
    t0[rep] = median_ms([&] { k0<<<blocks, 128 * NW + 32, SMEM>>>(mw, ma, m, n, k, C); }, g);
  }
  const double bytes = double(n) * k + double(m) * k + double(m) * n * 2;
  const double us1 = 1e3 * std::min(t1[0], t1[1]), us0 = 1e3 * std::min(t0[0], t0[1]);
  std::printf("%5d x %d m %2d  N %3d (%d x %3d) S%-2d %3d blocks: promoted %6.1f / %6.1f us (%4.1f%%), bare read %6.1f / "
              "%6.1f us (%4.1f%%), err %.1e\n",
              n, k, m, NB * NW, NW, NB, stages<NB, NW>(), blocks, 1e3 * t1[0], 1e3 * t1[1],
              100 * bytes / (us1 * 1e3) / ref_gbs, 1e3 * t0[0], 1e3 * t0[1], 100 * bytes / (us0 * 1e3) / ref_gbs,
              std::sqrt(num / (den > 0 ? den : 1)));
}

int main() {
  const size_t big = size_t{2} << 30;
  const Setup g = setup(big);
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const double ref = reference_gbs(g, big);
  unsigned char *W = reinterpret_cast<unsigned char*>(g.p), *A;
  __nv_bfloat16* C;
  float* Cref;
  CK(cudaMalloc(&A, size_t{64} * 8192));
  CK(cudaMalloc(&C, size_t{64} * 28672 * 2));
  CK(cudaMalloc(&Cref, size_t{64} * 28672 * 4));
  fill<<<1024, 256>>>(W, size_t{28672} * 8192, 1);
  fill<<<1024, 256>>>(A, size_t{64} * 8192, 2);
  CK(cudaDeviceSynchronize());
  std::printf("W + A + C bytes over time, %% of the contiguous read\n");
  for (int m : {1, 16, 64}) {
    run<112, 2>(g, encode, ref, m, 28672, 8192, W, A, C, Cref);
    run<56, 1>(g, encode, ref, m, 7168, 8192, W, A, C, Cref);
  }
  return 0;
}
