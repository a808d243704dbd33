// gemm_host's flow kernel: the whole multiplication of a host-to-host job as one persistent launch
// that follows the copies, instead of one rungs::gemm launch per product of the schedule.
//
// Why: at 4096^3 fp32 the flow is bound by how fast its products multiply (docs/gemm_host.md): a
// 512-row strip is one wave of tiles, and each product pays its own fill and drain, so the 24
// products took 3.31 ms against 2.66 ms for one whole product (cuBLAS), and the flow 1.5x its floor.
// Here the schedule's products are a list of tiles; the blocks of one persistent grid take the next
// tile from a ticket, wait until its pieces are on the device (a counter that the H2D stream writes
// after each step with cuStreamWriteValue32) and until the same tile's previous k chunk is done (a
// counter per tile), multiply it with rung 09's tile (warptile.cuh) and count it done; the D2H
// stream waits (cuStreamWaitValue32) for each finished band of C, one tile row of a finishing
// product, and copies it back. No block idles at a product's end while a later product's data is
// there, and C goes back a tile row at a time.
//
// Deadlock-free by construction: a block waits only for copies (which never wait for the kernel)
// or for tiles handed out before its own, which blocks already running hold. Copies of C read
// only bands the kernel has counted (after a fence); the kernel reads A and B only after their
// step's counter, written after the copy, and C's earlier partial sums through L2 (ld.global.cg:
// L1 is not coherent with the other SMs' stores). The device windows' rows start at 128-byte
// boundaries and pieces at multiples of 32 elements (gemm_host pads them), so no L1 line read
// early holds a piece that arrives later.
// Bounded by: rung 09's tile (0.93-0.95x cuBLAS sgemm at 2048-8192), the pieces' arrival until the
// first products, and the last band's copy back.
#include "host/flow_kernel.hpp"

#include "detail/check.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/scratch.hpp"
#include "gemm/warptile.cuh"

#include <cudaTypedefs.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

namespace rungs::host {

namespace {

using sgemm::warptile::Tile;
using sgemm::warptile::TileOut;
// Rung 09's tiles at 4096^3 and up (gemm/09_warptile.cu, kPicks): 128 x 256 x 64 with 2 stages when
// B is stored k x n, 256 x 128 x 32 with 3 stages when B is stored n x k (k-contiguous B copied by
// 4-byte cp.async gets the tile's short side). One block per SM.
using FlowTileN = Tile<128, 256, 64, 64, 64, 16, 8, 2, 1, 0, 4, 1>;
using FlowTileT = Tile<256, 128, 32, 64, 64, 16, 8, 3, 1, 0, 4, 1>;

struct FlowArgs {
  detail::GemmParams g;
  int products, items, bands;
  unsigned* counters;
  int* status;
  FlowProduct prod[kMaxFlowProducts];
};

constexpr unsigned long long kTimeoutNs = 20ull * 1000 * 1000 * 1000;  // one wait with no progress

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0: waits until *p >= target (at_least) or == target. false: the flow was aborted or the
// wait timed out (then it aborts the flow for every block and says so in *status).
__device__ bool wait_for(const FlowArgs& fa, const unsigned* p, unsigned target, bool at_least) {
  unsigned* arrived = fa.counters + kFlowArrived;
  const unsigned long long t0 = globaltimer();
  for (;;) {
    const unsigned a = ld_acquire(arrived);
    if (a == kFlowAbort) return false;
    const unsigned v = p == arrived ? a : ld_acquire(p);
    if (at_least ? v >= target : v == target) return true;
    if (globaltimer() - t0 > kTimeoutNs) {
      *reinterpret_cast<volatile int*>(fa.status) = kFlowTimedOut;
      atomicExch(arrived, kFlowAbort);
      return false;
    }
    __nanosleep(100);
  }
}

template <class T, bool A_KC, bool B_KC>
__global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS) flow_kernel(const __grid_constant__ FlowArgs fa) {
  extern __shared__ float4 smem4[];
  __shared__ int s_item, s_prod, s_stop;
  unsigned* const bands = fa.counters + kFlowHead;
  unsigned* const tiles = bands + fa.bands;
  const int tiles_n = fa.g.tiles_n;
  for (;;) {
    if (threadIdx.x == 0) {
      const int it = static_cast<int>(atomicAdd(fa.counters + kFlowTicket, 1u));
      int pi = 0, stop = it >= fa.items ? 1 : 0;
      if (!stop) {
        while (pi + 1 < fa.products && fa.prod[pi + 1].items_before <= it) ++pi;
        const FlowProduct& pr = fa.prod[pi];
        const int t = it - pr.items_before, w = pr.tj1 - pr.tj0;
        const int ti = pr.ti0 + t / w, tj = pr.tj0 + t % w;
        if (!wait_for(fa, fa.counters + kFlowArrived, static_cast<unsigned>(pr.step + 1), true) ||
            !wait_for(fa, tiles + static_cast<int64_t>(ti) * tiles_n + tj, static_cast<unsigned>(pr.chunk), false))
          stop = 2;
      }
      s_item = it;
      s_prod = pi;
      s_stop = stop;
    }
    __syncthreads();
    const int it = s_item, stop = s_stop;
    if (stop) {
      // Aborted: every band counts as finished, so no D2H wait of this flow can hang.
      if (stop == 2 && threadIdx.x == 0) {
        if (*reinterpret_cast<volatile int*>(fa.status) == 0) *reinterpret_cast<volatile int*>(fa.status) = kFlowAborted;
        for (int b = 0; b < fa.bands; ++b) atomicExch(bands + b, kFlowAbort);
      }
      break;
    }
    const FlowProduct& pr = fa.prod[s_prod];
    const int t = it - pr.items_before, w = pr.tj1 - pr.tj0;
    const int ti = pr.ti0 + t / w, tj = pr.tj0 + t % w;
    const bool first = pr.first_k != 0;
    sgemm::warptile::tile_product<T, A_KC, B_KC, true>(
        fa.g, reinterpret_cast<float*>(smem4), ti * T::BM, tj * T::BN, pr.k0, pr.k1 - pr.k0, [&] {
          return TileOut{fa.g.C, fa.g.ldc, fa.g.alpha, first ? fa.g.beta : 1.0f, fa.g.c_vec};
        });
    __threadfence();  // this thread's C stores, before the counters say the tile is done
    __syncthreads();  // every thread's (and every read of the shared memory, before the next tile's copies)
    if (threadIdx.x == 0) {
      st_release(tiles + static_cast<int64_t>(ti) * tiles_n + tj, static_cast<unsigned>(pr.chunk + 1));
      if (pr.band >= 0) {
        __threadfence_system();  // the copy engine reads the band once its count is complete
        atomicAdd(bands + pr.band + (ti - pr.ti0), 1u);
      }
    }
  }
}

template <class T, bool A_KC, bool B_KC>
void launch(const FlowLaunch& f, cudaStream_t s) {
  static_assert(T::BK % 32 == 0 || 32 % T::BK == 0, "k chunks (multiples of 32) start at tile boundaries");
  auto* kernel = &flow_kernel<T, A_KC, B_KC>;
  constexpr int smem = T::template smem_bytes<A_KC, B_KC>();
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  static std::mutex mu;
  static std::map<int, int> per_sm;  // device -> blocks per SM
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  int fit = 0;
  {
    std::lock_guard<std::mutex> lk(mu);
    auto itr = per_sm.find(dev);
    if (itr == per_sm.end()) {
      RUNGS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, T::THREADS, smem));
      per_sm[dev] = fit;
    } else {
      fit = itr->second;
    }
  }
  if (fit < 1) throw Error("rungs::gemm_host: the flow kernel does not fit on an SM");
  FlowArgs a{};
  a.g.A = f.A, a.g.B = f.B, a.g.C = f.C;
  a.g.lda = f.lda, a.g.ldb = f.ldb, a.g.ldc = f.ldc;
  a.g.m = f.m, a.g.n = f.n, a.g.k = f.k;
  a.g.alpha = f.alpha, a.g.beta = f.beta;
  a.g.tiles_m = static_cast<int>(detail::ceil_div(f.m, T::BM));
  a.g.tiles_n = static_cast<int>(detail::ceil_div(f.n, T::BN));
  a.g.a_vec = detail::float4_ok(f.A, f.lda);
  a.g.b_vec = detail::float4_ok(f.B, f.ldb);
  a.g.c_vec = detail::float4_ok(f.C, f.ldc);
  a.products = f.products, a.items = f.items, a.bands = f.bands;
  a.counters = f.counters;
  a.status = f.status;
  if (f.products < 1 || f.products > kMaxFlowProducts) throw Error("rungs::gemm_host: flow of " + std::to_string(f.products) + " products");
  for (int i = 0; i < f.products; ++i) a.prod[i] = f.prod[i];
  const int blocks = std::min(fit * detail::sm_count(), f.items);
  kernel<<<blocks, T::THREADS, smem, s>>>(a);
  detail::check_launch("gemm_host flow kernel");
}

PFN_cuStreamWriteValue32_v11070 g_write = nullptr;
PFN_cuStreamWaitValue32_v11070 g_wait = nullptr;
std::once_flag g_memops_once;
void find_memops() {
  std::call_once(g_memops_once, [] {
    void* w = nullptr;
    void* v = nullptr;
    cudaDriverEntryPointQueryResult q1{}, q2{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &w, 12000, cudaEnableDefault, &q1) == cudaSuccess &&
        q1 == cudaDriverEntryPointSuccess &&
        cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &v, 12000, cudaEnableDefault, &q2) == cudaSuccess &&
        q2 == cudaDriverEntryPointSuccess) {
      g_write = reinterpret_cast<PFN_cuStreamWriteValue32_v11070>(w);
      g_wait = reinterpret_cast<PFN_cuStreamWaitValue32_v11070>(v);
    }
    (void)cudaGetLastError();
  });
}
void check_cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Error(std::string("rungs::gemm_host: ") + what + " failed (CUDA driver error " + std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace

FlowTile flow_tile(Trans tb) {
  return tb == Trans::N ? FlowTile{FlowTileN::BM, FlowTileN::BN} : FlowTile{FlowTileT::BM, FlowTileT::BN};
}

int flow_blocks(Trans tb) { return detail::sm_count() * (tb == Trans::N ? FlowTileN::MIN_BLOCKS : FlowTileT::MIN_BLOCKS); }

void launch_flow(const FlowLaunch& f, cudaStream_t s) {
  const bool a_kc = f.ta == Trans::N, b_kc = f.tb == Trans::T;
  if (!b_kc) {
    if (a_kc) launch<FlowTileN, true, false>(f, s);
    else launch<FlowTileN, false, false>(f, s);
  } else {
    if (a_kc) launch<FlowTileT, true, true>(f, s);
    else launch<FlowTileT, false, true>(f, s);
  }
}

bool stream_memops_available() {
  find_memops();
  return g_write && g_wait;
}

void stream_write_u32(cudaStream_t s, unsigned* p, unsigned v) {
  if (!stream_memops_available()) throw Error("rungs::gemm_host: cuStreamWriteValue32 is not available from the driver");
  check_cu(g_write(s, reinterpret_cast<CUdeviceptr>(p), v, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
}

void stream_wait_geq_u32(cudaStream_t s, unsigned* p, unsigned v) {
  if (!stream_memops_available()) throw Error("rungs::gemm_host: cuStreamWaitValue32 is not available from the driver");
  check_cu(g_wait(s, reinterpret_cast<CUdeviceptr>(p), v, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
}

}  // namespace rungs::host
