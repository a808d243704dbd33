// How many clusters of 1, 2, 4 and 8 blocks fit on this GPU at once, for a block of the ws template's
// shape (384 threads, 227 KB of dynamic shared memory: one block per SM), and how many SMs they
// cover. Clusters must sit inside one GPC, so sizes that do not divide a GPC's SM count leave SMs
// idle. Behind dropping rung 24 wgmma_cluster4 (docs/gemm_tc.md): on the H100 30 clusters of four
// fit, 120 of 132 SMs, and the rung ran 0.58x cuBLAS at 2048^3 bf16.
// Usage: source scripts/experiments/lib.sh && run_cu cluster_fit
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe_kernel(int* p) {
  extern __shared__ int s[];
  if (p) p[blockIdx.x] = s[threadIdx.x];
}

int main() {
  const int smem = 227 * 1024, threads = 384;
  cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("%s: %d SMs\n", prop.name, prop.multiProcessorCount);
  for (int cl : {1, 2, 4, 8, 16}) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cl, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(cl * 64), cfg.blockDim = dim3(threads), cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr, cfg.numAttrs = 1;
    int n = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, probe_kernel, &cfg);
    if (e != cudaSuccess) {
      std::printf("cluster %2d: %s\n", cl, cudaGetErrorString(e));
      cudaGetLastError();
      continue;
    }
    std::printf("cluster %2d: %3d clusters fit, %3d SMs busy\n", cl, n, n * cl);
  }
  return 0;
}
