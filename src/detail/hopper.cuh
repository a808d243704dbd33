// Hopper (sm_90a) device helpers shared by the wgmma rungs, written once: mbarriers, TMA loads
// (multicast too) and stores with their bulk groups, clusters, register reallocation, wgmma fences
// and the 64 x N warpgroup MMAs (bf16, f16: k16 with either operand K-major or MN-major; tf32: k8,
// K-major only; fp8 e4m3 / e5m2: k32, K-major only, n256, n128 and the narrow n8 to n64), the
// shared-memory matrix descriptor for the 128-byte swizzle that TMA writes, and the epilogues built
// on them. The host side (tensor maps, cluster launches) is core/tensor_map.hpp.
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

#include "core/errors.hpp"
#include "detail/gemm_tc.cuh"
#include "core/tensor_map.hpp"

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

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
// Stores to a shared-space address (smem_u32), 4 and 8 bytes.
__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t v) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
#else
  (void)addr; (void)v;
  __trap();
#endif
}
__device__ __forceinline__ void st_shared_v2(uint32_t addr, uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(addr), "r"(a), "r"(b) : "memory");
#else
  (void)addr; (void)a; (void)b;
  __trap();
#endif
}
// One element of T (2 or 4 bytes) from a shared-space address (smem_u32).
template <typename T>
__device__ __forceinline__ T ld_shared(uint32_t addr) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "16- or 32-bit elements");
  T v;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (sizeof(T) == 2) {
    unsigned short x;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(x) : "r"(addr) : "memory");
    memcpy(&v, &x, 2);
  } else {
    uint32_t x;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(x) : "r"(addr) : "memory");
    memcpy(&v, &x, 4);
  }
#else
  (void)addr;
  memset(&v, 0, sizeof(T));
  __trap();
#endif
  return v;
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
// Four floats at the same shared-memory offset as `p` (16-byte aligned) in block `cta` of the
// cluster (distributed shared memory). The caller orders them after the owner's writes with a
// cluster_sync.
__device__ __forceinline__ float4 ld_shared_cluster_v4(const void* p, uint32_t cta) {
  float4 v;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(smem_u32(p)), "r"(cta)
      : "memory");
#else
  (void)p; (void)cta;
  v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  __trap();
#endif
  return v;
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

// ---- wgmma ----
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#else
  __trap();
#endif
}
// Shared-memory matrix descriptor, 128-byte swizzle (the layout TMA writes with
// CU_TENSOR_MAP_SWIZZLE_128B): start address, leading and stride byte offsets (16-byte units).
//   K-major operand (rows of 64 16-bit / 32 tf32 elements = 128 B): SBO = 1024 (8 rows), LBO unused;
//     the next k step inside the 128-byte row is start + k_bytes.
//   MN-major operand (rows of 64 m/n elements, one row per k): SBO = 1024 (the next 8 k),
//     LBO = the bytes between 64-wide m/n blocks (one TMA box each).
__device__ __forceinline__ uint64_t smem_desc(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint64_t a = smem_u32(p);
  return ((a & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) | (uint64_t((sbo & 0x3FFFF) >> 4) << 32) |
         (uint64_t(1) << 62);
}

// Byte `byte` (< 128) of row r in a tile of 128-byte rows with the 128-byte swizzle (the layout
// TMA writes and reads with CU_TENSOR_MAP_SWIZZLE_128B): 16-byte chunk i of row r sits at chunk
// i ^ (r % 8).
__device__ __forceinline__ int swizzle128_offset(int r, int byte) {
  return r * 128 + ((((byte >> 4) ^ (r & 7)) << 4) | (byte & 15));
}

// The 128 accumulator registers of a 64 x 256 wgmma (fp32, one warpgroup): the PTX operand list
// %0..%127 and the matching read-write constraints, written once for the three wrappers below.
#define RUNGS_WGMMA_D128 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define RUNGS_WGMMA_D128_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// d (64 x 256 per warpgroup, fp32) += A (64 x 16) * B (16 x 256); TA / TB: 1 = MN-major operand.
template <int TA, int TB>
__device__ __forceinline__ void wgmma_256_bf16(float (&d)[128], uint64_t da, uint64_t db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " RUNGS_WGMMA_D128 ", %128, %129, p, 1, 1, %130, %131;\n}\n"
      : RUNGS_WGMMA_D128_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
template <int TA, int TB>
__device__ __forceinline__ void wgmma_256_f16(float (&d)[128], uint64_t da, uint64_t db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " RUNGS_WGMMA_D128 ", %128, %129, p, 1, 1, %130, %131;\n}\n"
      : RUNGS_WGMMA_D128_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}

// tf32: k8, both operands K-major (the instruction has no transpose for 32-bit types).
__device__ __forceinline__ void wgmma_256_tf32(float (&d)[128], uint64_t da, uint64_t db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " RUNGS_WGMMA_D128 ", %128, %129, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D128_OUT
      : "l"(da), "l"(db));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
// tf32 with A from registers (a: this thread's A fragment, rows 16w + g (+ 8), k q (+ 4), see
// load_a_frags_mn_tf32): the form for an operand stored m/n-contiguous, which the K-major-only
// shared-memory form cannot read.
__device__ __forceinline__ void wgmma_256_tf32_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " RUNGS_WGMMA_D128 ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D128_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
#else
  (void)d; (void)a; (void)db;
  __trap();
#endif
}
// fp8: d (64 x 256 per warpgroup, fp32) = (accumulate ? d : 0) + A (64 x 32) * B (32 x 256), A and
// B each e4m3 or e5m2 (all four pairs exist on sm_90a), both K-major: the instruction has no
// transpose for 8-bit types. k32 is 32 bytes of a 128-byte row, as k16 is for 16-bit types, so the
// descriptors step through a stage exactly as theirs do. accumulate = false starts a fresh sum
// (the promotion rung's first k tile of each interval).
#define RUNGS_WGMMA_FP8_256(AT, BT)                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                               \
               "wgmma.mma_async.sync.aligned.m64n256k32.f32." AT "." BT " " RUNGS_WGMMA_D128                \
               ", %128, %129, p, 1, 1;\n}\n"                                                                \
               : RUNGS_WGMMA_D128_OUT                                                                      \
               : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)))
template <typename TA8, typename TB8>
__device__ __forceinline__ void wgmma_256_fp8(float (&d)[128], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (a4 && b4) RUNGS_WGMMA_FP8_256("e4m3", "e4m3");
  else if constexpr (a4) RUNGS_WGMMA_FP8_256("e4m3", "e5m2");
  else if constexpr (b4) RUNGS_WGMMA_FP8_256("e5m2", "e4m3");
  else RUNGS_WGMMA_FP8_256("e5m2", "e5m2");
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_256
#undef RUNGS_WGMMA_D128
#undef RUNGS_WGMMA_D128_OUT

// The 64 accumulator registers of a 64 x 128 wgmma (fp32, one warpgroup), written once for the
// n128 wrappers below.
#define RUNGS_WGMMA_D64 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define RUNGS_WGMMA_D64_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d (64 x 128 per warpgroup, fp32) += A (64 x 16) * B (16 x 128); TA / TB: 1 = MN-major operand.
// d: the first 64 registers of an accumulator array of R >= 64 (columns 8j .. 8j + 7 of a 64 x N
// accumulator are d[4j .. 4j + 3], so a 64 x 128 product is a prefix of a 64 x 256 one).
template <int TA, int TB, int R>
__device__ __forceinline__ void wgmma_128_bf16(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 64, "64 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " RUNGS_WGMMA_D64 ", %64, %65, p, 1, 1, %66, %67;\n}\n"
      : RUNGS_WGMMA_D64_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
template <int TA, int TB, int R>
__device__ __forceinline__ void wgmma_128_f16(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 64, "64 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RUNGS_WGMMA_D64 ", %64, %65, p, 1, 1, %66, %67;\n}\n"
      : RUNGS_WGMMA_D64_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}

// tf32, 64 x 128 per warpgroup: d = (accumulate ? d : 0) + A (64 x 8) * B (8 x 128), both K-major.
// accumulate = false starts a fresh sum (the 3xTF32 rung sums each stage apart, see 16_wgmma_x3.cu).
template <int R>
__device__ __forceinline__ void wgmma_128_tf32(float (&d)[R], uint64_t da, uint64_t db, bool accumulate) {
  static_assert(R >= 64, "64 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      RUNGS_WGMMA_D64 ", "
      "%64, %65, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D64_OUT
      : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)));
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
template <int R>
__device__ __forceinline__ void wgmma_128_tf32_rs(float (&d)[R], const uint32_t (&a)[4], uint64_t db,
                                                  bool accumulate = true) {
  static_assert(R >= 64, "64 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " RUNGS_WGMMA_D64 ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D64_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(static_cast<int>(accumulate)));
#else
  (void)d; (void)a; (void)db; (void)accumulate;
  __trap();
#endif
}
// fp8, 64 x 128 per warpgroup: d = (accumulate ? d : 0) + A (64 x 32) * B (32 x 128), e4m3 or e5m2
// each, both K-major (as wgmma_256_fp8): the promotion rung's half-width MMAs, whose accumulator
// leaves room beside the fp32 sums it is added into.
#define RUNGS_WGMMA_FP8_128(AT, BT)                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                \
               "wgmma.mma_async.sync.aligned.m64n128k32.f32." AT "." BT " " RUNGS_WGMMA_D64                 \
               ", %64, %65, p, 1, 1;\n}\n"                                                                  \
               : RUNGS_WGMMA_D64_OUT                                                                       \
               : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)))
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_128_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(R >= 64, "64 accumulator registers");
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (a4 && b4) RUNGS_WGMMA_FP8_128("e4m3", "e4m3");
  else if constexpr (a4) RUNGS_WGMMA_FP8_128("e4m3", "e5m2");
  else if constexpr (b4) RUNGS_WGMMA_FP8_128("e5m2", "e4m3");
  else RUNGS_WGMMA_FP8_128("e5m2", "e5m2");
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_128
#undef RUNGS_WGMMA_D64
#undef RUNGS_WGMMA_D64_OUT

// The 32 accumulator registers of a 64 x 64 wgmma (the first 32 of the caller's array).
#define RUNGS_WGMMA_D32 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define RUNGS_WGMMA_D32_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// d (64 x 64 per warpgroup, the first 32 of R registers) += A (64 x 16) * B (16 x 64), f16 / bf16
// (TA / TB: 1 = MN-major), or A (64 x 8) * B (8 x 64) in tf32 (both K-major).
template <int TA, int TB, int R>
__device__ __forceinline__ void wgmma_64_bf16(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 32, "32 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " RUNGS_WGMMA_D32 ", %32, %33, p, 1, 1, %34, %35;\n}\n"
      : RUNGS_WGMMA_D32_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
template <int TA, int TB, int R>
__device__ __forceinline__ void wgmma_64_f16(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 32, "32 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " RUNGS_WGMMA_D32 ", %32, %33, p, 1, 1, %34, %35;\n}\n"
      : RUNGS_WGMMA_D32_OUT
      : "l"(da), "l"(db), "n"(TA), "n"(TB));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
template <int R>
__device__ __forceinline__ void wgmma_64_tf32(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 32, "32 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " RUNGS_WGMMA_D32 ", %32, %33, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D32_OUT
      : "l"(da), "l"(db));
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
template <int R>
__device__ __forceinline__ void wgmma_64_tf32_rs(float (&d)[R], const uint32_t (&a)[4], uint64_t db) {
  static_assert(R >= 32, "32 accumulator registers");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " RUNGS_WGMMA_D32 ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : RUNGS_WGMMA_D32_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
#else
  (void)d; (void)a; (void)db;
  __trap();
#endif
}
#undef RUNGS_WGMMA_D32
#undef RUNGS_WGMMA_D32_OUT

// The narrow shapes, f16 / bf16 only: d (64 x N per warpgroup, N = 8, 16 or 32: the first N / 2 of
// R registers) += A (64 x 16) * B (16 x N); TA / TB: 1 = MN-major. The decode rung (26) multiplies
// a weight tile by the few rows of activations, which are wgmma's N.
#define RUNGS_WGMMA_D4 "{%0, %1, %2, %3}"
#define RUNGS_WGMMA_D4_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
template <typename T, int TA, int TB, int R>
__device__ __forceinline__ void wgmma_8(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 4, "4 accumulator registers");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "f16 or bf16");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 " RUNGS_WGMMA_D4 ", %4, %5, p, 1, 1, %6, %7;\n}\n"
        : RUNGS_WGMMA_D4_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 " RUNGS_WGMMA_D4 ", %4, %5, p, 1, 1, %6, %7;\n}\n"
        : RUNGS_WGMMA_D4_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  }
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
#undef RUNGS_WGMMA_D4
#undef RUNGS_WGMMA_D4_OUT
#define RUNGS_WGMMA_D8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define RUNGS_WGMMA_D8_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
template <typename T, int TA, int TB, int R>
__device__ __forceinline__ void wgmma_16(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 8, "8 accumulator registers");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "f16 or bf16");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 " RUNGS_WGMMA_D8 ", %8, %9, p, 1, 1, %10, %11;\n}\n"
        : RUNGS_WGMMA_D8_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " RUNGS_WGMMA_D8 ", %8, %9, p, 1, 1, %10, %11;\n}\n"
        : RUNGS_WGMMA_D8_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  }
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
#undef RUNGS_WGMMA_D8
#undef RUNGS_WGMMA_D8_OUT
#define RUNGS_WGMMA_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define RUNGS_WGMMA_D16_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
template <typename T, int TA, int TB, int R>
__device__ __forceinline__ void wgmma_32(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(R >= 16, "16 accumulator registers");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "f16 or bf16");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " RUNGS_WGMMA_D16 ", %16, %17, p, 1, 1, %18, %19;\n}\n"
        : RUNGS_WGMMA_D16_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " RUNGS_WGMMA_D16 ", %16, %17, p, 1, 1, %18, %19;\n}\n"
        : RUNGS_WGMMA_D16_OUT
        : "l"(da), "l"(db), "n"(TA), "n"(TB));
  }
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
#undef RUNGS_WGMMA_D16
#undef RUNGS_WGMMA_D16_OUT

// d += A * B over the first N columns, f16 / bf16, for any N of 8, 16, 32, 64, 128 (N / 2 of R
// registers).
template <typename T, int TA, int TB, int N, int R>
__device__ __forceinline__ void wgmma_narrow(float (&d)[R], uint64_t da, uint64_t db) {
  static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128, "n8, n16, n32, n64 or n128");
  if constexpr (N == 8) wgmma_8<T, TA, TB>(d, da, db);
  else if constexpr (N == 16) wgmma_16<T, TA, TB>(d, da, db);
  else if constexpr (N == 32) wgmma_32<T, TA, TB>(d, da, db);
  else if constexpr (N == 64 && std::is_same_v<T, __nv_bfloat16>) wgmma_64_bf16<TA, TB>(d, da, db);
  else if constexpr (N == 64) wgmma_64_f16<TA, TB>(d, da, db);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) wgmma_128_bf16<TA, TB>(d, da, db);
  else wgmma_128_f16<TA, TB>(d, da, db);
}

// The narrow shapes in fp8: d (64 x N per warpgroup, N = 8, 16, 32 or 64: the first N / 2 of R
// registers) = (accumulate ? d : 0) + A (64 x 32) * B (32 x N), A and B each e4m3 or e5m2, both
// K-major (as wgmma_256_fp8). The fp8 decode rung (30) multiplies a weight tile by the few rows of
// activations, which are wgmma's N; N = 128 is wgmma_128_fp8.
#define RUNGS_WGMMA_FP8_NARROW(NS, DREGS, IA, IB, IP, AT, BT, ...)                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" IP ", 0;\n"                                                        \
               "wgmma.mma_async.sync.aligned.m64n" NS "k32.f32." AT "." BT " " DREGS ", %" IA ", %" IB                 \
               ", p, 1, 1;\n}\n"                                                                                       \
               : __VA_ARGS__                                                                                           \
               : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)))
#define RUNGS_WGMMA_FP8_PAIRS(NS, DREGS, IA, IB, IP, ...)                                                              \
  if constexpr (a4 && b4) RUNGS_WGMMA_FP8_NARROW(NS, DREGS, IA, IB, IP, "e4m3", "e4m3", __VA_ARGS__);                  \
  else if constexpr (a4) RUNGS_WGMMA_FP8_NARROW(NS, DREGS, IA, IB, IP, "e4m3", "e5m2", __VA_ARGS__);                   \
  else if constexpr (b4) RUNGS_WGMMA_FP8_NARROW(NS, DREGS, IA, IB, IP, "e5m2", "e4m3", __VA_ARGS__);                   \
  else RUNGS_WGMMA_FP8_NARROW(NS, DREGS, IA, IB, IP, "e5m2", "e5m2", __VA_ARGS__)
#define RUNGS_WGMMA_FP8_D4 "{%0, %1, %2, %3}"
#define RUNGS_WGMMA_FP8_D4_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_8_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(R >= 4, "4 accumulator registers");
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUNGS_WGMMA_FP8_PAIRS("8", RUNGS_WGMMA_FP8_D4, "4", "5", "6", RUNGS_WGMMA_FP8_D4_OUT);
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_D4
#undef RUNGS_WGMMA_FP8_D4_OUT
#define RUNGS_WGMMA_FP8_D8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define RUNGS_WGMMA_FP8_D8_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_16_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(R >= 8, "8 accumulator registers");
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUNGS_WGMMA_FP8_PAIRS("16", RUNGS_WGMMA_FP8_D8, "8", "9", "10", RUNGS_WGMMA_FP8_D8_OUT);
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_D8
#undef RUNGS_WGMMA_FP8_D8_OUT
#define RUNGS_WGMMA_FP8_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define RUNGS_WGMMA_FP8_D16_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_32_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(R >= 16, "16 accumulator registers");
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUNGS_WGMMA_FP8_PAIRS("32", RUNGS_WGMMA_FP8_D16, "16", "17", "18", RUNGS_WGMMA_FP8_D16_OUT);
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_D16
#undef RUNGS_WGMMA_FP8_D16_OUT
#define RUNGS_WGMMA_FP8_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define RUNGS_WGMMA_FP8_D32_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_64_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(R >= 32, "32 accumulator registers");
  static_assert(sizeof(TA8) == 1 && sizeof(TB8) == 1, "fp8 operands");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUNGS_WGMMA_FP8_PAIRS("64", RUNGS_WGMMA_FP8_D32, "32", "33", "34", RUNGS_WGMMA_FP8_D32_OUT);
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FP8_D32
#undef RUNGS_WGMMA_FP8_D32_OUT
#undef RUNGS_WGMMA_FP8_PAIRS
#undef RUNGS_WGMMA_FP8_NARROW

// d = (accumulate ? d : 0) + A * B over the first N columns, fp8 (any pair), for any N of 8, 16, 32,
// 64, 128 (N / 2 of R registers).
template <typename TA8, typename TB8, int N, int R>
__device__ __forceinline__ void wgmma_narrow_fp8(float (&d)[R], uint64_t da, uint64_t db, bool accumulate = true) {
  static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128, "n8, n16, n32, n64 or n128");
  if constexpr (N == 8) wgmma_8_fp8<TA8, TB8>(d, da, db, accumulate);
  else if constexpr (N == 16) wgmma_16_fp8<TA8, TB8>(d, da, db, accumulate);
  else if constexpr (N == 32) wgmma_32_fp8<TA8, TB8>(d, da, db, accumulate);
  else if constexpr (N == 64) wgmma_64_fp8<TA8, TB8>(d, da, db, accumulate);
  else wgmma_128_fp8<TA8, TB8>(d, da, db, accumulate);
}

// d += A * B for the element type T (f16, bf16: k16, TA / TB = 1 for an MN-major operand; float:
// tf32, k8, both operands K-major).
template <typename T, int TA, int TB>
__device__ __forceinline__ void wgmma_256(float (&d)[128], uint64_t da, uint64_t db) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) wgmma_256_bf16<TA, TB>(d, da, db);
  else if constexpr (std::is_same_v<T, __half>) wgmma_256_f16<TA, TB>(d, da, db);
  else wgmma_256_tf32(d, da, db);
}

// The fitted widths of rung 33 (decode_wide), f16 / bf16, both operands K-major: d (64 x N per
// warpgroup, N / 2 registers) += A (64 x 16) * B (16 x N) for N = 56, 112 and 224 (n = 7168, 14336
// and 28672 over 128 blocks). The operand lists as RUNGS_WGMMA_D128's, kept for the fp8 widths below.
#define RUNGS_WGMMA_D28 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}"
#define RUNGS_WGMMA_D28_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define RUNGS_WGMMA_D56 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}"
#define RUNGS_WGMMA_D56_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define RUNGS_WGMMA_D112 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111}"
#define RUNGS_WGMMA_D112_OUT \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define RUNGS_WGMMA_FITTED(NS, R, TY)                                                                            \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                           \
               "wgmma.mma_async.sync.aligned.m64n" NS "k16.f32." TY "." TY " " RUNGS_WGMMA_D##R ", %" #R ", %"    \
               RUNGS_NEXT_##R ", p, 1, 1, 0, 0;\n}\n"                                                              \
               : RUNGS_WGMMA_D##R##_OUT                                                                      \
               : "l"(da), "l"(db))
#define RUNGS_NEXT_28 "29"
#define RUNGS_NEXT_56 "57"
#define RUNGS_NEXT_112 "113"
template <typename T, int N>
__device__ __forceinline__ void wgmma_fitted_kmajor(float (&d)[N / 2], uint64_t da, uint64_t db) {
  static_assert(N == 56 || N == 112 || N == 224, "n56, n112 or n224");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "f16 or bf16");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool bf = std::is_same_v<T, __nv_bfloat16>;
  if constexpr (N == 56 && bf) RUNGS_WGMMA_FITTED("56", 28, "bf16");
  else if constexpr (N == 56) RUNGS_WGMMA_FITTED("56", 28, "f16");
  else if constexpr (N == 112 && bf) RUNGS_WGMMA_FITTED("112", 56, "bf16");
  else if constexpr (N == 112) RUNGS_WGMMA_FITTED("112", 56, "f16");
  else if constexpr (N == 224 && bf) RUNGS_WGMMA_FITTED("224", 112, "bf16");
  else if constexpr (N == 224) RUNGS_WGMMA_FITTED("224", 112, "f16");
#else
  (void)d; (void)da; (void)db;
  __trap();
#endif
}
#undef RUNGS_WGMMA_FITTED

// d += A * B over N columns, f16 / bf16, both operands K-major, for every width rung 33 fits: 8, 16,
// 32, 56, 64, 112, 128, 224 or 256 (N / 2 registers).
template <typename T, int N>
__device__ __forceinline__ void wgmma_fitted(float (&d)[N / 2], uint64_t da, uint64_t db) {
  if constexpr (N == 56 || N == 112 || N == 224) wgmma_fitted_kmajor<T, N>(d, da, db);
  else if constexpr (N == 256) wgmma_256<T, 0, 0>(d, da, db);
  else wgmma_narrow<T, 0, 0, N>(d, da, db);
}

// The same widths in fp8 for rung 34 (decode_fp8_wide): d = (accumulate ? d : 0) + A (64 x 32) * B
// (32 x N), A and B each e4m3 or e5m2, both K-major, N = 56 or 112 (N / 2 registers).
#define RUNGS_NEXT2_28 "30"
#define RUNGS_NEXT2_56 "58"
#define RUNGS_WGMMA_FITTED_FP8(NS, R, AT, BT)                                                                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" RUNGS_NEXT2_##R ", 0;\n"                                     \
               "wgmma.mma_async.sync.aligned.m64n" NS "k32.f32." AT "." BT " " RUNGS_WGMMA_D##R ", %" #R        \
               ", %" RUNGS_NEXT_##R ", p, 1, 1;\n}\n"                                                              \
               : RUNGS_WGMMA_D##R##_OUT                                                                      \
               : "l"(da), "l"(db), "r"(static_cast<int>(accumulate)))
template <typename TA8, typename TB8, int N>
__device__ __forceinline__ void wgmma_fitted_fp8_kmajor(float (&d)[N / 2], uint64_t da, uint64_t db, bool accumulate) {
  static_assert(N == 56 || N == 112, "n56 or n112");
  constexpr bool a4 = std::is_same_v<TA8, __nv_fp8_e4m3>, b4 = std::is_same_v<TB8, __nv_fp8_e4m3>;
  static_assert((a4 || std::is_same_v<TA8, __nv_fp8_e5m2>) && (b4 || std::is_same_v<TB8, __nv_fp8_e5m2>),
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (N == 56 && a4 && b4) RUNGS_WGMMA_FITTED_FP8("56", 28, "e4m3", "e4m3");
  else if constexpr (N == 56 && a4 && !b4) RUNGS_WGMMA_FITTED_FP8("56", 28, "e4m3", "e5m2");
  else if constexpr (N == 56 && !a4 && b4) RUNGS_WGMMA_FITTED_FP8("56", 28, "e5m2", "e4m3");
  else if constexpr (N == 56 && !a4 && !b4) RUNGS_WGMMA_FITTED_FP8("56", 28, "e5m2", "e5m2");
  else if constexpr (N == 112 && a4 && b4) RUNGS_WGMMA_FITTED_FP8("112", 56, "e4m3", "e4m3");
  else if constexpr (N == 112 && a4 && !b4) RUNGS_WGMMA_FITTED_FP8("112", 56, "e4m3", "e5m2");
  else if constexpr (N == 112 && !a4 && b4) RUNGS_WGMMA_FITTED_FP8("112", 56, "e5m2", "e4m3");
  else if constexpr (N == 112 && !a4 && !b4) RUNGS_WGMMA_FITTED_FP8("112", 56, "e5m2", "e5m2");
#else
  (void)d; (void)da; (void)db; (void)accumulate;
  __trap();
#endif
}
#undef RUNGS_WGMMA_D28
#undef RUNGS_WGMMA_D28_OUT
#undef RUNGS_NEXT_28
#undef RUNGS_NEXT2_28
#undef RUNGS_WGMMA_D56
#undef RUNGS_WGMMA_D56_OUT
#undef RUNGS_NEXT_56
#undef RUNGS_NEXT2_56
#undef RUNGS_WGMMA_FITTED_FP8
#undef RUNGS_WGMMA_D112
#undef RUNGS_WGMMA_D112_OUT
#undef RUNGS_NEXT_112

// d = (accumulate ? d : 0) + A * B over N columns, fp8 (any pair), both K-major, for every width rung
// 34 fits: 32, 56, 64, 112 or 128 (N / 2 registers).
template <typename TA8, typename TB8, int N>
__device__ __forceinline__ void wgmma_fitted_fp8(float (&d)[N / 2], uint64_t da, uint64_t db, bool accumulate) {
  if constexpr (N == 56 || N == 112) wgmma_fitted_fp8_kmajor<TA8, TB8, N>(d, da, db, accumulate);
  else wgmma_narrow_fp8<TA8, TB8, N>(d, da, db, accumulate);
}

// d += A * B over the first N columns (N = 256, 128 or 64): the first N / 2 registers of d, the
// rest untouched. Rung 20 multiplies a ragged last tile column no wider than it must.
template <typename T, int TA, int TB, int N>
__device__ __forceinline__ void wgmma_n(float (&d)[128], uint64_t da, uint64_t db) {
  static_assert(N == 256 || N == 128 || N == 64, "n256, n128 or n64");
  if constexpr (N == 256) {
    wgmma_256<T, TA, TB>(d, da, db);
  } else if constexpr (N == 128) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) wgmma_128_bf16<TA, TB>(d, da, db);
    else if constexpr (std::is_same_v<T, __half>) wgmma_128_f16<TA, TB>(d, da, db);
    else wgmma_128_tf32(d, da, db, true);
  } else {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) wgmma_64_bf16<TA, TB>(d, da, db);
    else if constexpr (std::is_same_v<T, __half>) wgmma_64_f16<TA, TB>(d, da, db);
    else wgmma_64_tf32(d, da, db);
  }
}

// One stage of the TMA rungs' shared-memory layout (128-byte swizzle, one 128-byte row of k per
// stage: 64 16-bit or 32 tf32 elements), issued by warpgroup `half` for its 64 rows of A against
// all 256 columns of B, k16 (k8 for tf32) per wgmma.
//   A K-major: BM rows of 128 B; this warpgroup's rows start at half * 64 rows, k steps move
//     inside the row. A MN-major: boxes of 64 m x BK k-rows, this warpgroup's is box `half`,
//     k steps move by KI rows of 128 B.
//   B K-major: 256 rows of 128 B. B MN-major: 4 boxes of 64 n x BK k-rows (LBO = one box).
// N < 256: only the first N columns of B (its first N rows, or N / 64 boxes) and of d.
template <typename T, bool A_MN, bool B_MN, int N = 256>
__device__ __forceinline__ void wgmma_stage_64xn(float (&d)[128], const unsigned char* As, const unsigned char* Bs,
                                                 int half) {
  constexpr int ROW = 128, BK = ROW / int(sizeof(T)), KI = std::is_same_v<T, float> ? 8 : 16;
#pragma unroll
  for (int kk = 0; kk < BK / KI; ++kk) {
    const uint64_t da = A_MN ? smem_desc(As + half * BK * ROW + kk * KI * ROW, BK * ROW, 1024)
                             : smem_desc(As + half * 64 * ROW + kk * KI * int(sizeof(T)), 16, 1024);
    const uint64_t db = B_MN ? smem_desc(Bs + kk * KI * ROW, BK * ROW, 1024)
                             : smem_desc(Bs + kk * KI * int(sizeof(T)), 16, 1024);
    wgmma_n<T, A_MN ? 1 : 0, B_MN ? 1 : 0, N>(d, da, db);
  }
}

// One stage of fp8 operands (both K-major, one 128-byte row of k = 128 elements per stage, the
// 128-byte swizzle) for warpgroup `half`'s 64 rows of A against the 256 columns of B: four
// m64n256k32, each k step 32 bytes into the rows (as wgmma_stage_64xn's K-major case).
// accumulate = false: the stage's first MMA starts a fresh sum (the rest add to it).
template <typename TA8, typename TB8>
__device__ __forceinline__ void wgmma_stage_64x256_fp8(float (&d)[128], const unsigned char* As,
                                                       const unsigned char* Bs, int half, bool accumulate = true) {
  constexpr int ROW = 128, KI = 32;
#pragma unroll
  for (int kk = 0; kk < ROW / KI; ++kk) {
    const uint64_t da = smem_desc(As + half * 64 * ROW + kk * KI, 16, 1024);
    const uint64_t db = smem_desc(Bs + kk * KI, 16, 1024);
    wgmma_256_fp8<TA8, TB8>(d, da, db, accumulate || kk > 0);
  }
}

// The same for 128 columns of B, from descriptors (smem_desc, K-major, 128-byte swizzle) of this
// warpgroup's first row of A and of the first of the 128 rows of B at the stage's k step 0: a k step
// of 32 bytes adds 2 to their start address (16-byte units). d holds the 64 x 128 product (64
// registers) in the m64n128 layout.
template <typename TA8, typename TB8, int R>
__device__ __forceinline__ void wgmma_stage_64x128_fp8(float (&d)[R], uint64_t da, uint64_t db,
                                                       bool accumulate = true) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_128_fp8<TA8, TB8>(d, da + 2 * kk, db + 2 * kk, accumulate || kk > 0);
}

// tf32 with A from registers, for an A stored MN-major (a stage of it: boxes of BK = 32 k-rows x
// 32 m-elements, 128-byte swizzle, this warpgroup's 64 rows in boxes 2 half and 2 half + 1).
// a[4 kk + e]: this thread's fragment of k8 step kk, element e at row 16w + g + 8(e % 2), k 8kk + q
// + 4(e / 2) (warp w, lane 4g + q: the m16n8k8 tf32 A layout, a warp per 16 rows). Shared-memory
// reads: 2-way bank conflicts (rows g and g + 4 land in the same 16-byte chunk for k q and q ^ 1),
// 16 per thread per stage against the 1024 tensor-core cycles of the stage's four m64n256k8.
__device__ __forceinline__ void load_a_frags_mn_tf32(uint32_t (&a)[16], const unsigned char* As, int half) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const uint32_t box = smem_u32(As) + static_cast<uint32_t>((2 * half + w / 2) * 4096);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * (w % 2) + g + 8 * (e % 2), k = 8 * kk + q + 4 * (e / 2);
      a[4 * kk + e] = ld_shared<uint32_t>(box + static_cast<uint32_t>(swizzle128_offset(k, 4 * row)));
    }
}

// The same fragments from a K-major A tile (BM rows of 128 bytes, 32 floats of k each, 128-byte
// swizzle, as TMA writes it): rows 64 * half + 16w + g (+ 8), k 8kk + q (+ 4). A warp's 32 loads
// of one word fall in 8 rows (8 different swizzled chunks) x 4 words: no bank conflicts. The words
// are as stored (fp32 bits: the caller rounds or splits them).
__device__ __forceinline__ void load_a_frags_k_f32(uint32_t (&a)[16], const unsigned char* As, int half) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  const uint32_t base = smem_u32(As);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 64 * half + 16 * w + g + 8 * (e % 2), k = 8 * kk + q + 4 * (e / 2);
      a[4 * kk + e] = ld_shared<uint32_t>(base + static_cast<uint32_t>(swizzle128_offset(row, 4 * k)));
    }
}

// One stage as wgmma_stage_64xn, tf32 with A from registers (load_a_frags_mn_tf32) and B K-major.
// `a` must stay untouched until the wgmma group issued here has retired.
template <int N = 256>
__device__ __forceinline__ void wgmma_stage_64xn_rs(float (&d)[128], const uint32_t (&a)[16], const unsigned char* Bs) {
  static_assert(N == 256 || N == 128 || N == 64, "n256, n128 or n64");
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint32_t (&f)[4] = *reinterpret_cast<const uint32_t(*)[4]>(&a[4 * kk]);
    const uint64_t db = smem_desc(Bs + kk * 8 * 4, 16, 1024);
    if constexpr (N == 256) wgmma_256_tf32_rs(d, f, db);
    else if constexpr (N == 128) wgmma_128_tf32_rs(d, f, db);
    else wgmma_64_tf32_rs(d, f, db);
  }
}

// C[row0 .., col0 ..] = alpha * d + beta * C for one warpgroup's 64 x N accumulator (N = 256 unless
// given; thread
// tid % 128 of it), masked to m x n. Accumulator d[4j + e] of warp w, lane = 4g + q:
// row 16w + g + 8(e / 2), column 8j + 2q + (e % 2). vec: two-element stores are aligned.
template <typename T, int N = 256>
__device__ __forceinline__ void store_acc_64xn(const float (&d)[N / 2], T* __restrict__ C, int64_t ldc, int row0,
                                                 int col0, int m, int n, float alpha, float beta, bool vec) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  constexpr int J = N / 8;
#pragma unroll J
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + 16 * w + g + 8 * h, c = col0 + 8 * j + 2 * q;
      if (r < m && c < n) store_c_pair(C, ldc, r, c, d[4 * j + 2 * h], d[4 * j + 2 * h + 1], alpha, beta, c + 1 < n, vec);
    }
}

// The same for an accumulator of C's transpose (the rung swapped A and B: d holds C^T's rows
// row0 .., i.e. C's columns): element (r, c) of d goes to C[col0 + c][row0 + r], masked to
// C^T's m x n. A warp's store covers 8 consecutive columns of C in each of 4 rows: 32-byte runs.
template <typename T, int N = 256>
__device__ __forceinline__ void store_acc_64xn_t(const float (&d)[N / 2], T* __restrict__ C, int64_t ldc, int row0,
                                                   int col0, int m, int n, float alpha, float beta) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
  constexpr int J = N / 8;
#pragma unroll J
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = row0 + 16 * w + g + 8 * (e / 2), c = col0 + 8 * j + 2 * q + e % 2;
      if (r < m && c < n) store_c(C, ldc, c, r, d[4 * j + e], alpha, beta);
    }
}

// Element (r, col) of a chunk that fill_c_chunk wrote at `buf` (col < CHUNK = 256 / sizeof(T)):
// its byte offset in the two 64-row x 128-byte boxes with the 128-byte swizzle.
template <typename T>
__device__ __forceinline__ int c_chunk_offset(int r, int col) {
  constexpr int E = int(sizeof(T)), BOX_COLS = 128 / E;
  return (col / BOX_COLS) * 8192 + swizzle128_offset(r, (col % BOX_COLS) * E);
}

// This thread's element pairs of chunk c (columns c * CHUNK .. of a warpgroup's 64 x N
// accumulator, CHUNK = 256 bytes of T per row): f(j, h, offset) for accumulator pair d[4j + 2h],
// d[4j + 2h + 1] (row 16w + g + 8h, columns 8j + 2q and + 1, layout as in store_acc_64xn) and its
// byte offset in the chunk's buffer: two boxes of 64 rows x 128 bytes in the 128-byte swizzle
// (16-byte chunk i of row r at chunk i ^ (r % 8): the 8 rows a warp writes at once land in 8
// different chunks, no bank conflicts).
template <typename T, typename F>
__device__ __forceinline__ void for_chunk_pairs(int c, F&& f) {
  constexpr int E = int(sizeof(T)), BOX_COLS = 128 / E, CHUNK = 2 * BOX_COLS;
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
#pragma unroll
  for (int jj = 0; jj < CHUNK / 8; ++jj) {
    const int j = c * (CHUNK / 8) + jj, col = 8 * jj + 2 * q;
#pragma unroll
    for (int h = 0; h < 2; ++h) f(j, h, c_chunk_offset<T>(16 * w + g + 8 * h, col));
  }
}

// Two floats as one word of two 16-bit elements of T (round to nearest), the first in the low half.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float v0, float v1) {
  static_assert(sizeof(T) == 2, "16-bit T");
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 x = __floats2half2_rn(v0, v1);
    return *reinterpret_cast<const uint32_t*>(&x);
  } else {
    const __nv_bfloat162 x = __floats2bfloat162_rn(v0, v1);
    return *reinterpret_cast<const uint32_t*>(&x);
  }
}

// Chunk c of a warpgroup's 64 x N accumulator into shared memory at `base` (1024-aligned, 16 KB):
// alpha applied, converted to T, laid out as for_chunk_pairs says. The caller syncs the
// warpgroup around it.
template <typename T, int N = 256>
__device__ __forceinline__ void fill_c_chunk(const float (&d)[N / 2], uint32_t base, int c, float alpha) {
  // Shared-space addresses and st.shared: through a generic pointer the compiler emitted generic
  // stores (ST.E, ncu at a5861b6), which must first resolve the address space.
  for_chunk_pairs<T>(c, [&](int j, int h, int offset) {
    const uint32_t p = base + static_cast<uint32_t>(offset);
    const float v0 = alpha * d[4 * j + 2 * h], v1 = alpha * d[4 * j + 2 * h + 1];
    if constexpr (std::is_same_v<T, float>) st_shared_v2(p, __float_as_uint(v0), __float_as_uint(v1));
    else st_shared_b32(p, pack2<T>(v0, v1));
  });
}

// Chunk c of a warpgroup's 64 x N accumulator of C's transpose into shared memory at `base`, as C
// (float): accumulator columns c * 64 .. c * 64 + 63 become 64 rows of C, its 64 rows C's columns,
// in two boxes of 64 rows x 32 floats (C columns row0 .. + 31 and + 32 .. + 63) in the 128-byte
// swizzle, so that tma_store_c_chunk<float> stores it at C[col0 + 64c ..][row0 ..]. A warp's
// 4-byte stores hit 4 rows (columns 2q) x 8 consecutive floats: the swizzle spreads them over all
// 32 banks.
template <int N = 256>
__device__ __forceinline__ void fill_c_chunk_t(const float (&d)[N / 2], uint32_t base, int c, float alpha) {
  const int t = static_cast<int>(threadIdx.x % 128), lane = t % 32, w = t / 32, g = lane / 4, q = lane % 4;
#pragma unroll
  for (int jj = 0; jj < 8; ++jj) {
    const int j = c * 8 + jj;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = 16 * w + g + 8 * (e / 2), col = 8 * jj + 2 * q + e % 2;
      st_shared_b32(base + static_cast<uint32_t>(c_chunk_offset<float>(col, r)), __float_as_uint(alpha * d[4 * j + e]));
    }
  }
}

// A warpgroup's 64 x N accumulator as C's 16-bit type, alpha applied: word 2j + h holds
// d[4j + 2h] and d[4j + 2h + 1] (rung 21 keeps these while the next tile's MMAs run).
template <typename T, int N = 256>
__device__ __forceinline__ void pack_acc(const float (&d)[N / 2], uint32_t (&w)[N / 4], float alpha) {
#pragma unroll
  for (int i = 0; i < N / 4; ++i) w[i] = pack2<T>(alpha * d[2 * i], alpha * d[2 * i + 1]);
}

// Chunk C of packed words (pack_acc) into shared memory at `base`, as fill_c_chunk lays it out.
template <typename T, int C, int N = 256>
__device__ __forceinline__ void fill_c_chunk_packed(const uint32_t (&w)[N / 4], uint32_t base) {
  for_chunk_pairs<T>(C, [&](int j, int h, int offset) { st_shared_b32(base + static_cast<uint32_t>(offset), w[2 * j + h]); });
}

// C[row0 .., col0 ..] = alpha * d for one warpgroup's 64 x N accumulator (N = 256 unless given;
// layout as in store_acc_64xn) through shared memory and TMA stores. `buf`: 16 KB, 1024-aligned, this
// warpgroup's own, filled by fill_c_chunk and stored in chunks of 64 rows x 256 bytes (2 for 16-bit C, 4 for
// float). `map`: C with boxes of 64 rows x 128 bytes; TMA clips the boxes at m, and at n only to
// the 16-byte chunk holding column n - 1 (the caller keeps such boxes away from padding). Thread
// t % 128 == 0 issues the stores and owns their bulk groups; the warpgroup syncs on named
// barrier `bar_id`. The stores are left in flight: the next call waits for their reads of `buf`,
// the block waits for all of them (bulk_wait<0, false>) before it exits.
// One chunk of C (64 rows x 256 bytes at `buf`, as fill_c_chunk lays it out) to C[row0 .., col0 ..]:
// two TMA box stores in one bulk group of the calling thread.
template <typename T>
__device__ __forceinline__ void tma_store_c_chunk(const CUtensorMap* map, const unsigned char* buf, int row0, int col0) {
  constexpr int BOX_COLS = 128 / int(sizeof(T));
  tma_store_2d(map, buf, col0, row0);
  tma_store_2d(map, buf + 8192, col0 + BOX_COLS, row0);
  bulk_commit();
}

// One chunk of C out through `buf` (this warpgroup's 16 KB buffer): wait until the previous
// chunk's TMA stores have read buf, fill(shared address of buf) by every thread, make the writes
// visible to TMA, then thread t % 128 == 0 stores the chunk to C[row0 .., col0 ..]. The warpgroup
// syncs on named barrier `bar_id`.
template <typename T, typename Fill>
__device__ __forceinline__ void send_c_chunk(unsigned char* buf, const CUtensorMap* map, int row0, int col0, int bar_id,
                                             Fill&& fill) {
  const int t = static_cast<int>(threadIdx.x % 128);
  if (t == 0) bulk_wait<0, true>();  // the previous chunk's stores have read buf
  named_barrier(bar_id, 128);
  fill(smem_u32(buf));
  fence_proxy_async_shared();
  named_barrier(bar_id, 128);
  if (t == 0) tma_store_c_chunk<T>(map, buf, row0, col0);
}

template <typename T, int N = 256>
__device__ __forceinline__ void store_acc_64x256_tma(const float (&d)[N / 2], unsigned char* buf, const CUtensorMap* map,
                                                     int row0, int col0, float alpha, int bar_id) {
  constexpr int BOX_COLS = 128 / int(sizeof(T)), CHUNK = 2 * BOX_COLS, CHUNKS = N / CHUNK;
  static_assert(N % CHUNK == 0, "whole 64 x 256-byte pieces");
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c)
    send_c_chunk<T>(buf, map, row0, col0 + c * CHUNK, bar_id, [&](uint32_t b) { fill_c_chunk<T, N>(d, b, c, alpha); });
}

// C^T's 64 x N accumulator (float; see fill_c_chunk_t) out through `buf` and TMA stores: chunk c
// (accumulator columns 64c ..) to C rows col0 + 64c .., columns row0 .. row0 + 63. As
// store_acc_64x256_tma otherwise; `map`: C with boxes of 64 rows x 32 floats.
template <int N = 256>
__device__ __forceinline__ void store_acc_64x256_tma_t(const float (&d)[N / 2], unsigned char* buf, const CUtensorMap* map,
                                                       int row0, int col0, float alpha, int bar_id) {
#pragma unroll
  for (int c = 0; c < N / 64; ++c)
    send_c_chunk<float>(buf, map, col0 + 64 * c, row0, bar_id, [&](uint32_t b) { fill_c_chunk_t<N>(d, b, c, alpha); });
}

}  // namespace rungs::detail
