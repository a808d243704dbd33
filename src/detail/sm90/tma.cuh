// Hopper (sm_90a) tensor memory accelerator, written once: 2D box loads into shared memory (one
// block, or multicast to several blocks of a cluster), completing on an mbarrier; box stores from
// shared memory tracked as bulk groups; the tensor-map prefetch; and the TMA kernels' prologue
// (1024-byte aligned shared memory, the pipeline barriers). Guards as in sync.cuh.
#pragma once

#include "core/errors.hpp"
#include "core/tensor_map.hpp"
#include "detail/sm90/sync.cuh"

#include <cuda.h>
#include <cuda/ptx>

#include <cstdint>

namespace rungs::detail {

// ---- TMA: one 2D box of a tensor map into shared memory, completing on `bar` ----
// c0 indexes the contiguous (inner) dimension, c1 the rows; out-of-range elements are zero-filled.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
#else
  (void)dst; (void)map; (void)c0; (void)c1; (void)bar;
  __trap();
#endif
}

// Fetches a tensor map into the TMA unit's descriptor cache ahead of its first use (the kernel's
// prologue), so the first loads do not wait for it. `map` must be a valid map (a kernel parameter).
__device__ __forceinline__ void tma_prefetch(const CUtensorMap* map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
#else
  (void)map;
  __trap();
#endif
}

// One 2D box of a tensor map into shared memory at the same offset in every block of `mask`
// (bit i: cluster rank i), each completing on its own mbarrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar,
                                                      uint16_t mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map, {c0, c1}, bar, mask);
#else
  (void)dst; (void)map; (void)c0; (void)c1; (void)bar; (void)mask;
  __trap();
#endif
}

// ---- the TMA rungs' kernel prologue ----
// The start of dynamic shared memory rounded up to 1024 bytes: the 128-byte swizzle repeats every
// 1024 bytes, so every TMA box must start on such a boundary (the launch asks for 1024 more).
// The offset is the same in every block of a kernel, so the same in both blocks of a cluster.
__device__ __forceinline__ unsigned char* smem_align_1024(unsigned char* raw) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
}
// Thread 0 initializes the pipeline's barriers: full[s] completes on one arrival (the producer's
// expect_tx) and the bytes TMA brings, empty[s] on `releases` arrivals (the consumers that read
// slot s). The caller syncs the block (or the cluster) before anyone uses them.
__device__ __forceinline__ void init_pipeline_barriers(uint64_t* full, uint64_t* empty, int stages,
                                                       unsigned releases) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], releases);
    mbar_init_fence();
  }
}
// The persistent, clustered rungs' walk over C: clusters of `cl` blocks along m share a column of
// B; cluster tile t covers tile rows cl * cm .. cl * cm + cl - 1 of tile column tn. Cluster
// `first` takes tiles first, first + stride, ... (count in all).
struct ClusterWalk {
  int rows, count, first, stride;
};
__device__ __forceinline__ ClusterWalk cluster_walk(int tiles_m, int tiles_n, int cl) {
  ClusterWalk w;
  w.rows = (tiles_m + cl - 1) / cl;
  w.count = w.rows * tiles_n;
  w.first = static_cast<int>(blockIdx.x) / cl;
  w.stride = static_cast<int>(gridDim.x) / cl;
  return w;
}

// ---- TMA stores: shared memory to one 2D box of a tensor map (out-of-range elements are not
// written), tracked as bulk groups of the issuing thread ----
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, map, {c0, c1}, src);
#else
  (void)map; (void)src; (void)c0; (void)c1;
  __trap();
#endif
}
__device__ __forceinline__ void bulk_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::cp_async_bulk_commit_group();
#else
  __trap();
#endif
}
// Until at most N of this thread's bulk groups still read their shared memory (READ) or are
// still in flight at all (!READ: their global writes done).
template <int N, bool READ>
__device__ __forceinline__ void bulk_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (READ) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<N>{});
  else cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<N>{});
#else
  __trap();
#endif
}

}  // namespace rungs::detail
