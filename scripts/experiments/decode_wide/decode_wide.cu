// Question: do decode products at m = 64 / 128 run faster in cuBLAS's orientation than in rung 26's?
// Rung 26 gives W's rows wgmma's 64-row side (C^T = W A^T) and splits k over a cluster pair at 7168 x
// 8192 (56 tiles of 128 rows); at m = 64 / 128 its MMAs and its split sums' exchange cost 1.9-3.2 us
// over the read (decode_parts.patch). Here A's rows take wgmma's 64-row side (one consumer warpgroup
// per 64 rows of A) and W's rows its N, fitted so one wave of unsplit tiles covers n (N = 56 at n =
// 7168: 128 blocks; 224 at 28672; 64 at 8192): no split, no exchange, the accumulators stored
// straight into C's rows. A's boxes come from L2 once per block and k tile (NC x 64 rows); in
// clusters of CL blocks along n each block loads 1 / CL of them and multicasts it (a slot refilled
// when every consumer of the cluster released it). Timed as read_floor.cu times (L2 flushed,
// events, median of 30), interleaved with cublasGemmEx on the same data; C checked against cuBLAS's.
// Second question: at m = 128, does splitting m over a cluster pay, as cuBLAS's 7168 x 8192 kernel
// does (`128x64_64x8_4x2`)? With WM the cluster of CL runs along m: its blocks hold different rows
// of A and the same N rows of W, each loads 1 / CL of W's box and multicasts it, and A's box comes
// whole from L2 (m = 128 in two blocks of one warpgroup, N twice as wide: half of A's L2 bytes per
// block, W from L2 once per cluster). Measured (H200, 6bc9f8c): no. 7168 x 8192 41.5-41.7 us
// against 39.7-39.9 with two warpgroups a block (51.0-51.6 unclustered, W from L2 twice), 8192 x
// 28672 136.7-137.7 against 135.9-136.4 (181.6-181.8 unclustered); cuBLAS 36.0 / 124.4.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc --expt-relaxed-constexpr \
//     scripts/experiments/decode_wide/decode_wide.cu -lcublas -lcuda -o build-experiments/decode_wide
#include "../read_probe.cuh"

#include "detail/gemm_tc.cuh"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cmath>

using namespace read_probe;
namespace d = rungs::detail;

constexpr int ROW = 128, BK = 64;
template <int BN, int NC>
constexpr int stage_bytes() {
  return (BN + 64 * NC) * ROW;
}
template <int BN, int NC>
constexpr int stages() {
  constexpr int s = (226 * 1024 - 256) / stage_bytes<BN, NC>();
  return s > 12 ? 12 : s;
}

// Block (x, y): W rows BN x .., A rows 64 NC y .., the whole k. Warpgroups 0 .. NC - 1 consume (64
// rows of A each), warp 4 NC produces.
template <int BN, int NC, int CL, bool WM = false>
__global__ void __launch_bounds__(128 * NC + 32, 1)
    wide_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a, int m, int n,
                int k, __nv_bfloat16* C, int tiles) {
  constexpr int ST = stages<BN, NC>(), SB = stage_bytes<BN, NC>(), PART = 64 * NC / CL, WPART = BN / CL;
  extern __shared__ unsigned char raw[];
  unsigned char* smem = d::smem_align_1024(raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + ST * SB);
  uint64_t* empty = full + ST;
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = CL > 1 ? d::cluster_rank() : 0;
  d::init_pipeline_barriers(full, empty, ST, NC * CL);
  if constexpr (CL > 1) d::cluster_sync();
  else __syncthreads();
  const int n0 = min(static_cast<int>(blockIdx.x), tiles - 1) * BN, m0 = blockIdx.y * 64 * NC;
  const int KT = (k + BK - 1) / BK;
  if (wg == NC) {
    if (tid == 128 * NC) {
      for (int i = 0; i < KT; ++i) {
        const int s = i % ST;
        if (i >= ST) d::mbar_wait(&empty[s], ((i / ST) + 1) & 1);
        unsigned char* st = smem + s * SB;
        d::mbar_expect_tx(&full[s], SB);
        if constexpr (WM) {
          d::tma_load_2d_multicast(st + rank * WPART * ROW, &map_w, i * BK, n0 + rank * WPART, &full[s],
                                   static_cast<uint16_t>((1u << CL) - 1));
          d::tma_load_2d(st + BN * ROW, &map_a, i * BK, m0, &full[s]);
          continue;
        }
        d::tma_load_2d(st, &map_w, i * BK, n0, &full[s]);
        if constexpr (CL == 1) d::tma_load_2d(st + BN * ROW, &map_a, i * BK, m0, &full[s]);
        else
          d::tma_load_2d_multicast(st + BN * ROW + rank * PART * ROW, &map_a, i * BK, m0 + rank * PART, &full[s],
                                   static_cast<uint16_t>((1u << CL) - 1));
      }
    }
  } else {
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
    for (int i = 0; i < KT; ++i) {
      const int s = i % ST;
      d::mbar_wait(&full[s], (i / ST) & 1);
      const unsigned char* Ws = smem + s * SB;
      const unsigned char* As = Ws + BN * ROW + wg * 64 * ROW;
      d::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        d::wgmma<BN, __nv_bfloat16, __nv_bfloat16>(acc, d::smem_desc(As + kk * 32, 16, 1024), d::smem_desc(Ws + kk * 32, 16, 1024));
      d::wgmma_commit();
      d::wgmma_wait<1>();
      if (i > 0 && tid % 128 == 0) {
        const int r = (i - 1) % ST;
        if constexpr (CL == 1) d::mbar_arrive(&empty[r]);
        else
          for (int c = 0; c < CL; ++c) d::mbar_arrive_cluster(&empty[r], c);
      }
    }
    d::wgmma_wait<0>();
    if (static_cast<int>(blockIdx.x) < tiles)
      d::store_acc_64xn<__nv_bfloat16, BN>(acc, C, n, m0 + wg * 64, n0, m, n, 1.0f, 0.0f, true);
  }
  if constexpr (CL > 1) {
    __syncwarp();
    d::cluster_sync();  // no block leaves while its peers may still multicast into it or arrive on it
  }
}

inline double check(const __nv_bfloat16* x, const __nv_bfloat16* ref, size_t count) {
  std::vector<__nv_bfloat16> a(count), b(count);
  CK(cudaMemcpy(a.data(), x, count * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), ref, count * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < count; ++i) {
    const double u = __bfloat162float(a[i]), v = __bfloat162float(b[i]);
    num += (u - v) * (u - v), den += v * v;
    if (std::isnan(u)) return 1e9;
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

__global__ void fill(__nv_bfloat16* p, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    p[i] = __float2bfloat16((static_cast<int>(h % 2001) - 1000) * 1e-3f);
  }
}

struct Shape { int n, k; };

template <int BN, int NC, int CL, bool WM = false>
void run(const Setup& g, PFN_cuTensorMapEncodeTiled_v12000 encode, cublasHandle_t h, double ref_gbs, int m, int n,
         int k, __nv_bfloat16* W, __nv_bfloat16* A, __nv_bfloat16* C, __nv_bfloat16* Cref) {
  constexpr int SMEM = stages<BN, NC>() * stage_bytes<BN, NC>() + 1024 + 256;
  auto* kern = wide_kernel<BN, NC, CL, WM>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CUtensorMap mw{}, ma{};
  if (!bf16_map(encode, W, n, k, WM ? BN / CL : BN, &mw, CU_TENSOR_MAP_L2_PROMOTION_L2_64B) ||
      !bf16_map(encode, A, m, k, WM ? 64 * NC : 64 * NC / CL, &ma, CU_TENSOR_MAP_L2_PROMOTION_L2_64B)) {
    std::printf("map refused\n");
    return;
  }
  const int tiles = (n + BN - 1) / BN, bx = WM ? tiles : (tiles + CL - 1) / CL * CL,
            by = WM ? ((m + 64 * NC - 1) / (64 * NC) + CL - 1) / CL * CL : (m + 64 * NC - 1) / (64 * NC);
  auto mine = [&] {
    if (CL == 1) {
      kern<<<dim3(bx, by), 128 * NC + 32, SMEM>>>(mw, ma, m, n, k, C, tiles);
    } else {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(bx, by);
      cfg.blockDim = dim3(128 * NC + 32);
      cfg.dynamicSmemBytes = SMEM;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = WM ? 1 : CL, at[0].val.clusterDim.y = WM ? CL : 1, at[0].val.clusterDim.z = 1;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      CK(cudaLaunchKernelEx(&cfg, kern, mw, ma, m, n, k, C, tiles));
    }
  };
  const float one = 1.0f, zero = 0.0f;
  auto vendor = [&] {
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, W, CUDA_R_16BF, k, A, CUDA_R_16BF, k, &zero, Cref,
                 CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  CK(cudaMemset(C, 0xff, size_t(m) * n * 2));  // NaN
  mine();
  vendor();
  CK(cudaDeviceSynchronize());
  const double err = check(C, Cref, size_t(m) * n);
  double t_mine[2], t_vendor[2];
  for (int r = 0; r < 2; ++r) t_mine[r] = median_ms(mine, g), t_vendor[r] = median_ms(vendor, g);
  const double bytes = (double(n) * k + double(m) * k + double(m) * n) * 2;
  const double us = 1e3 * std::min(t_mine[0], t_mine[1]), vus = 1e3 * std::min(t_vendor[0], t_vendor[1]);
  std::printf("%5d x %5d m %3d  N %3d NC %d CL %d%s S%-2d %3d blocks: %6.1f / %6.1f us (%4.1f%%), cuBLAS %6.1f / %6.1f "
              "us (%4.1f%%), %.2fx, err %.1e\n",
              n, k, m, BN, NC, CL, WM ? " (W multicast along m)" : "", stages<BN, NC>(), bx * by, 1e3 * t_mine[0], 1e3 * t_mine[1],
              100 * bytes / (us * 1e3) / ref_gbs, 1e3 * t_vendor[0], 1e3 * t_vendor[1],
              100 * bytes / (vus * 1e3) / ref_gbs, vus / us, err);
}

int main() {
  const size_t big = size_t{2} << 30;
  const Setup g = setup(big);
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const double ref = reference_gbs(g, big);
  cublasHandle_t h;
  cublasCreate(&h);
  __nv_bfloat16 *W = reinterpret_cast<__nv_bfloat16*>(g.p), *A, *C, *Cref;
  CK(cudaMalloc(&A, size_t{128} * 28672 * 2));
  CK(cudaMalloc(&C, size_t{128} * 28672 * 2));
  CK(cudaMalloc(&Cref, size_t{128} * 28672 * 2));
  fill<<<1024, 256>>>(W, size_t{28672} * 8192, 1);
  fill<<<1024, 256>>>(A, size_t{128} * 28672, 2);
  CK(cudaDeviceSynchronize());
  std::printf("W + A + C bytes over time, %% of the contiguous read\n");
  for (int m : {64, 128}) {
    auto at = [&](auto bn, auto nc, auto cl, int n, int k) {
      run<decltype(bn)::value, decltype(nc)::value, decltype(cl)::value>(g, encode, h, ref, m, n, k, W, A, C, Cref);
    };
    auto wm = [&](auto bn, auto cl, int n, int k) {  // one warpgroup a block, W multicast along m
      run<decltype(bn)::value, 1, decltype(cl)::value, true>(g, encode, h, ref, m, n, k, W, A, C, Cref);
    };
    using I56 = std::integral_constant<int, 56>;
    using I1 = std::integral_constant<int, 1>;
    using I2 = std::integral_constant<int, 2>;
    using I4 = std::integral_constant<int, 4>;
    if (m == 64) {
      at(I56{}, I1{}, I1{}, 7168, 8192);
      at(I56{}, I1{}, I2{}, 7168, 8192);
      at(I56{}, I1{}, I4{}, 7168, 8192);
      at(std::integral_constant<int, 64>{}, I1{}, I2{}, 7168, 8192);
      at(std::integral_constant<int, 224>{}, I1{}, I1{}, 28672, 8192);
      at(std::integral_constant<int, 224>{}, I1{}, I2{}, 28672, 8192);
      at(std::integral_constant<int, 64>{}, I1{}, I2{}, 8192, 28672);
    } else {
      at(I56{}, I2{}, I1{}, 7168, 8192);
      at(I56{}, I2{}, I2{}, 7168, 8192);
      at(I56{}, I2{}, I4{}, 7168, 8192);
      at(std::integral_constant<int, 112>{}, I2{}, I2{}, 7168, 8192);
      at(std::integral_constant<int, 224>{}, I2{}, I1{}, 28672, 8192);
      at(std::integral_constant<int, 224>{}, I2{}, I2{}, 28672, 8192);
      at(std::integral_constant<int, 64>{}, I2{}, I2{}, 8192, 28672);
      // m in two blocks of one warpgroup, N doubled: without and with W multicast along m.
      at(std::integral_constant<int, 112>{}, I1{}, I1{}, 7168, 8192);
      wm(std::integral_constant<int, 112>{}, I2{}, 7168, 8192);
      at(std::integral_constant<int, 64>{}, I2{}, I1{}, 8192, 28672);
      at(std::integral_constant<int, 128>{}, I1{}, I1{}, 8192, 28672);
      wm(std::integral_constant<int, 128>{}, I2{}, 8192, 28672);
    }
  }
  return 0;
}
