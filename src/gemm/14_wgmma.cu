// Rung 14, wgmma: Hopper warpgroup MMA (sm_90a) fed by the tensor memory accelerator: f16, bf16 (any
// transpose) and tf32; copies what TMA cannot address (gemm/pack.hpp: f16 / bf16 rows with an
// unaligned base or ld, tf32 operands stored m/n-contiguous, copied k-contiguous).
// Adds over 13 mma_sync: 128x256 block tiles, two warpgroups each issuing wgmma.m64n256 straight from
// shared memory (no ldmatrix, no register fragments); TMA brings each 128-byte-wide operand box in
// its stored layout (an m/n-contiguous one read by wgmma's transpose bit) with the 128-byte swizzle
// wgmma reads without conflicts; 4 stages in flight, tracked by mbarriers ("full": TMA bytes landed;
// "empty": both warpgroups' MMAs on the slot retired, then thread 0 refills it).
// TMA zero-fills the rows and columns of a box past the matrix; the epilogue stores straight from
// the accumulators, masked, two elements at a time where aligned. tf32 wgmma has no transpose and
// reads fp32 bits truncated: the TMA maps round every element to tf32 (detail::tma_operand_type).
// Bounded by: one thread both waits on "empty" and issues TMA, so warpgroup 0 stalls when a refill is
// late; no persistent grid (a tail wave at most sizes), no cluster multicast (every block fetches its
// own A and B panels from L2).
// Prediction: 60-75 % of the dense peak, 0.8-0.95x cuBLAS at 4096-8192^3; measured: 0.81-0.84x at
// 2048^3, 0.87x at 4096^3, 0.94-0.98x at 8192^3 (f16, bf16; H100).
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/sm90/mma_stage.cuh"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

namespace rungs::sgemm::wgmma {

namespace {

using detail::ceil_div;

constexpr int BM = 128, BN = 256, STAGES = 4, THREADS = 256;  // 2 warpgroups x (64 x 256)
constexpr int ROW = 128;                                        // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 /* alignment */ + 2 * STAGES * 8 /* barriers */;
static_assert(SMEM_BYTES <= 227 * 1024, "fits the 227 KB a Hopper block may have");

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row
  return ROW / int(sizeof(T));
}

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
template <typename T, bool A_MN, bool B_MN>
__global__ void __launch_bounds__(THREADS, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, ArgsT<T> a,
                 int tiles_m, int tiles_n, bool c_vec) {
  constexpr int BK = bk<T>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
  uint64_t* empty = full + STAGES;
  const int tid = threadIdx.x, wg = tid / 128;
  detail::init_pipeline_barriers(full, empty, STAGES, 2);  // empty: both consumer warpgroups
  __syncthreads();
  int tm, tn;
  detail::swizzle_tile(blockIdx.x, tiles_m, tiles_n, 8, tm, tn);
  const int m0 = tm * BM, n0 = tn * BN;
  const int KT = static_cast<int>(ceil_div(a.k, BK));

  auto issue = [&](int t) {  // tile t of k into slot t % STAGES (thread 0 only)
    unsigned char* st = smem + (t % STAGES) * STAGE_BYTES;
    uint64_t* bar = &full[t % STAGES];
    const int k0 = t * BK;
    detail::mbar_expect_tx(bar, STAGE_BYTES);
    if constexpr (A_MN) {  // boxes of BK k-rows x 64 m
      for (int j = 0; j < BM / 64; ++j) detail::tma_load_2d(st + j * BK * ROW, &map_a, m0 + 64 * j, k0, bar);
    } else {
      detail::tma_load_2d(st, &map_a, k0, m0, bar);
    }
    if constexpr (B_MN) {
      for (int j = 0; j < BN / 64; ++j) detail::tma_load_2d(st + A_BYTES + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar);
    } else {
      detail::tma_load_2d(st + A_BYTES, &map_b, k0, n0, bar);
    }
  };
  if (tid == 0)
    for (int t = 0; t < STAGES && t < KT; ++t) issue(t);

  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % STAGES;
    detail::mbar_wait(&full[s], (kt / STAGES) & 1);
    const unsigned char* As = smem + s * STAGE_BYTES;
    const unsigned char* Bs = As + A_BYTES;
    detail::wgmma_fence();
    detail::wgmma_stage_64xn<T, A_MN, B_MN>(d, As, Bs, wg);
    detail::wgmma_commit();
    detail::wgmma_wait<1>();  // the MMAs of tile kt - 1 have retired: its slot may be refilled
    if (kt > 0) {
      const int ps = (kt - 1) % STAGES;
      if (tid % 128 == 0) detail::mbar_arrive(&empty[ps]);
      if (tid == 0 && kt - 1 + STAGES < KT) {
        detail::mbar_wait(&empty[ps], ((kt - 1) / STAGES) & 1);
        issue(kt - 1 + STAGES);
      }
    }
  }
  detail::wgmma_wait<0>();

  detail::store_acc_64xn(d, a.C, a.ldc, m0 + wg * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n), a.alpha,
                           a.beta, c_vec);
}

template <typename T, bool A_MN, bool B_MN>
void launch_tma(const ArgsT<T>& a) {
  constexpr int BK = bk<T>(), E = int(sizeof(T));
  const CUtensorMap ma = A_MN ? detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.k, a.m, a.lda, BK, 64)
                              : detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.m, a.k, a.lda, BM, BK);
  const CUtensorMap mb = B_MN ? detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.k, a.n, a.ldb, BK, 64)
                              : detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.n, a.k, a.ldb, BN, BK);
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "wgmma");
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * E) == 0 && a.ldc % 2 == 0;
  auto* kernel = &wgmma_kernel<T, A_MN, B_MN>;
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  kernel<<<grid, THREADS, SMEM_BYTES, a.stream>>>(ma, mb, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                                  c_vec);
  detail::check_launch("wgmma");
}

// Rows TMA cannot address (base or stride not a multiple of 16 bytes) are copied aligned first.
template <typename T>
void run16(const ArgsT<T>& user) {
  detail::require_sm90a("wgmma");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    launch_tma<T, decltype(ta)::value, !decltype(tb)::value>(a);
  });
}

}  // namespace

void run_f16(const ArgsH& a) { run16(a); }
void run_bf16(const ArgsBF& a) { run16(a); }
void run_tf32(const Args& user) {
  detail::require_sm90a("wgmma");
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const Args a = pack::operands(user, keep_a, keep_b);  // k-contiguous
  launch_tma<float, false, false>(a);
}

}  // namespace rungs::sgemm::wgmma
