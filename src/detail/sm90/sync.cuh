// Hopper (sm_90a) synchronization, written once for every tensor-core rung: mbarriers (the TMA
// pipelines' full and empty barriers), named barriers, clusters (rank, barrier, a remote arrive),
// register reallocation between warpgroups, the proxy fence, and release / acquire flags between
// blocks. TMA is tma.cuh, wgmma wgmma.cuh, the epilogues' stores store.cuh; the host side (tensor
// maps, cluster launches) core/tensor_map.hpp.
//
// Guards: every caller is a kernel of an sm_90a rung, so every wrapper that emits an instruction
// is guarded the same way, by __CUDA_ARCH_FEAT_SM90_ALL (device code for sm_90a). Device code for
// any other target (CMAKE_CUDA_ARCHITECTURES=90, 80, ...) compiles a __trap() in its place; the host
// never launches those kernels there (require_sm90a checks the build and the device). Some of the
// instructions exist without the "a" (mbarrier, TMA without multicast, clusters: sm_90) or before
// Hopper (st/ld.shared, bar.sync, st.release / ld.acquire): they take the same guard because only
// sm_90a kernels use them, and multicast TMA, wgmma and setmaxnreg need sm_90a.
//
// The instructions come from CCCL's cuda::ptx where it has the same instruction with the same
// semantics (space, scope, sem) and every kernel compiles to the same SASS as with inline PTX:
// mbar_init, mbar_expect_tx, mbar_arrive, mbar_init_fence, tma_load_2d_multicast, tma_store_2d,
// bulk_commit, bulk_wait, fence_proxy_async_shared, cluster_rank; and the try_wait of mbar_wait's
// RUNGS_HANG_DEBUG form (a debugging build, whose wait is a C++ loop anyway). Written here in
// inline PTX, because cuda::ptx (CCCL 3.0, CUDA 13.0) lacks them or the kernels compile
// differently with it:
//  - mbar_wait: the retry loop around mbarrier.try_wait.parity is inside the asm statement, so the
//    compiler sees one instruction; a C++ loop around cuda::ptx::mbarrier_try_wait_parity (the same
//    try_wait, acquire, cta scope) is a branch in the kernel's control flow, and every wgmma kernel
//    compiles to differently scheduled SASS;
//  - tma_load_2d: cuda::ptx::cp_async_bulk_tensor (the same copy, .tile being the default mode)
//    moves an address computation of rung 20's producer across an mbarrier arrive, and four of its
//    kernels schedule differently;
//  - mbar_arrive_cluster: cuda::ptx arrives on another block's mbarrier only with .release.cluster;
//    this one is .release.cta (its comment says why);
//  - cluster_sync: cuda::ptx's barrier.cluster.arrive / wait have no .aligned form (every thread of
//    the block calls this one, converged);
//  - tma_prefetch (prefetch.tensormap), setmaxnreg_inc / _dec, wgmma_fence / _commit / _wait and the
//    wgmma.mma_async wrappers: not in cuda::ptx;
//  - st_shared_b32 / _v2, ld_shared (st / ld.shared at a 32-bit shared address), named_barrier
//    (bar.sync with a thread count), named_barrier_arrive (bar.arrive), st_release_gpu /
//    ld_acquire_gpu: cuda::ptx has ld / st of global memory with cache hints only, and no bar.sync
//    or bar.arrive.
#pragma once

#include "detail/gemm_tc.cuh"

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace rungs::detail {

// ---- mbarrier (shared::cta) ----
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::mbarrier_init(bar, count);
#else
  (void)bar; (void)count;
  __trap();
#endif
}
// Arrives (release, cta scope) and adds `bytes` to the transactions the current phase waits for.
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                             bar, bytes);
#else
  (void)bar; (void)bytes;
  __trap();
#endif
}
// Arrives (release, cta scope).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  (void)cuda::ptx::mbarrier_arrive(bar);
#else
  (void)bar;
  __trap();
#endif
}
// Blocks until the phase with this parity has completed.
// RUNGS_HANG_DEBUG (cmake -DRUNGS_HANG_DEBUG=ON, a debugging build only): a wait that lasts ~1 s
// records who waited where (lane 0 of each warp, up to 64 records) and gives up, and every wait
// after that gives up at once, so a deadlocked kernel ends (with a wrong result) instead of
// hanging; hang_report, launched after the kernel on its stream, prints the records. No printf in
// the waiting kernel itself: a call there would serialize its wgmma pipeline and change the timing.
#if defined(RUNGS_HANG_DEBUG)
static __device__ unsigned hang_log[64][4];
static __device__ unsigned hang_count;
static __device__ volatile unsigned hang_abort;
static __global__ void hang_report() {
  const unsigned n = hang_count < 64 ? hang_count : 64;
  for (unsigned i = 0; i < n; ++i)
    printf("rungs hang: block %u rank %u thread %u waited on the mbarrier at shared 0x%x for parity %u\n",
           hang_log[i][0], hang_log[i][1] >> 16, hang_log[i][1] & 0xFFFF, hang_log[i][2], hang_log[i][3]);
  if (hang_count) printf("rungs hang: %u waits gave up\n", hang_count);
  hang_count = 0, hang_abort = 0;
}
#endif
// mbarrier.try_wait (acquire, cta scope) suspends the thread for a while inside the instruction
// when the phase has not completed yet; the loop asks again until it has. The loop is one asm
// statement, so the compiler sees one instruction (see the list at the top of this file).
// Two forms: the barrier's generic pointer, or its shared-space address (smem_u32(bar)) for a loop
// that computes the address once outside it rather than converting a pointer every pass.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity);
__device__ __forceinline__ void mbar_wait(uint32_t bar, unsigned parity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(RUNGS_HANG_DEBUG)
  mbar_wait(static_cast<uint64_t*>(__cvta_shared_to_generic(bar)), parity);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#else
  (void)bar; (void)parity;
  __trap();
#endif
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) && defined(RUNGS_HANG_DEBUG)
  const long long start = clock64();
  for (;;) {
    const bool ok = cuda::ptx::mbarrier_try_wait_parity(bar, parity);
    if (ok || hang_abort) break;
    if (clock64() - start > 2000000000ll) {
      if (threadIdx.x % 32 == 0) {
        const uint32_t rank = cuda::ptx::get_sreg_cluster_ctarank();
        const unsigned i = atomicAdd(&hang_count, 1u);
        if (i < 64) {
          hang_log[i][0] = blockIdx.x, hang_log[i][1] = rank << 16 | threadIdx.x;
          hang_log[i][2] = smem_u32(bar), hang_log[i][3] = parity;
        }
      }
      hang_abort = 1;
      break;
    }
  }
#else
  mbar_wait(smem_u32(bar), parity);
#endif
}

// Makes the mbarrier initializations of this thread visible to the cluster (and the async proxy):
// between mbar_init and the __syncthreads / cluster_sync after which others use the barriers.
__device__ __forceinline__ void mbar_init_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
#else
  __trap();
#endif
}

// Ordinary shared-memory writes of this thread become visible to the async proxy (TMA, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
#else
  __trap();
#endif
}
// Named barrier `id` (1..15; 0 is __syncthreads) for `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier(int id, int threads) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id; (void)threads;
  __trap();
#endif
}

// Arrive on named barrier `id` for `threads` threads without waiting: the threads that bar.sync on
// it pass once these and theirs make up the count (a turn handed to another warpgroup).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id; (void)threads;
  __trap();
#endif
}


// ---- flags between blocks of one grid (stream-K's partial tiles): a release store after the
// block's writes (ordered before it by a barrier), an acquire load before reading them ----
__device__ __forceinline__ void st_release_gpu(int* p, int v) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
#else
  (void)p; (void)v;
  __trap();
#endif
}
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
#else
  (void)p;
  __trap();
#endif
  return v;
}

// ---- clusters (the wgmma_ws rung runs clusters of 2 along m that share B) ----
__device__ __forceinline__ uint32_t cluster_rank() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  return cuda::ptx::get_sreg_cluster_ctarank();
#else
  __trap();
  return 0;
#endif
}
// Every thread of every block of the cluster: memory before it is visible to the cluster after it.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
// Arrives on the mbarrier at the same shared-memory offset as `bar` in block `cta` of the cluster.
// Default semantics (release, cta scope) as CUTLASS's ClusterBarrier::arrive: the slot's readers
// are wgmma reads already retired by wgmma.wait_group. A .release.cluster arrive here cost the
// wgmma_ws rung half its speed on the H100 (0.43x cuBLAS, 0.55x even with clusters of 1).
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
#else
  (void)bar; (void)cta;
  __trap();
#endif
}

// Register reallocation between the warpgroups of a block (all warps of the warpgroup).
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#else
  __trap();
#endif
}
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#else
  __trap();
#endif
}


// ---- programmatic dependent launch ----
// Every thread of a kernel whose results a programmatically launched kernel reads (the second
// pass): that kernel may be scheduled now; it waits (griddep_wait) until this grid has finished
// and its writes are visible.
__device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#else
  __trap();
#endif
}

}  // namespace rungs::detail
