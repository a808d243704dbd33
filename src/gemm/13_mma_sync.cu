// Rung 13, mma_sync: PTX mma.sync.m16n8k16 fed by ldmatrix from swizzled shared memory, with a
// 4-stage cp.async pipeline (the Ampere design; any sm_80+ GPU): f16 and bf16, any shape, transpose,
// ld and alignment, nothing copied.
// Adds over 12 wmma: 128x128x32 block tiles, 8 warps of 64x32; operands copied global -> shared by
// 16-byte cp.async (no registers, no conversion) three tiles ahead of the math; each operand kept
// in its stored layout (k-contiguous, or m/n-contiguous read with ldmatrix.trans: all four
// transposes run at one speed) with 16-byte chunks XOR-swizzled, so every cp.async store and every
// ldmatrix phase hits 8 distinct 16-byte bank groups (no conflicts, no padding).
// Edges: a chunk wholly outside the matrix is zero-filled by cp.async; one partly outside, or not
// 16-byte aligned (base, or ld % 8 != 0), is loaded element by element with bounds checks.
// Bounded by: ~1/4 of the dense peak, not profiled. Suspects: 16 mma per 6 ldmatrix per warp (too
// little math per shared-memory read for Hopper's tensor cores), one block per SM's warps to hide
// latency, scalar 2-byte epilogue stores.
// Prediction: 60-70 % of the dense peak, issue-bound; measured: 224-281 TFLOP/s f16 / bf16 at
// 2048-8192^3 (26 %, 0.34-0.37x cuBLAS; H100): a miss, kept as the Ampere step.
#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::mma_sync {

namespace {

using detail::ceil_div;

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 4, THREADS = 256;
constexpr int TILE = BM * BK;  // elements of one operand tile per stage (BN * BK too)
static_assert(BM == BN, "one swizzle function serves A and B");
constexpr int SMEM_BYTES = STAGES * 2 * TILE * 2;  // 64 KB

// Element offset of (x, k) in a 128 x 32 operand tile (x = m for A, n for B) held in its stored
// layout, 16-byte chunks XOR-swizzled:
//   K_MAJOR  [x][k]: 64-byte rows, 4 chunks; chunk ^= (x / 2) % 4 (two rows share a 128-byte line);
//   !K_MAJOR [k][x]: 256-byte rows, 16 chunks; chunk ^= k % 8.
template <bool K_MAJOR>
__device__ __forceinline__ int tile_off(int x, int k) {
  if constexpr (K_MAJOR) return x * BK + ((((k >> 3) ^ (x >> 1)) & 3) << 3) + (k & 7);
  else return k * BM + (((x >> 3) ^ (k & 7)) << 3) + (x & 7);
}

// One operand's 128 x 32 tile at (x0, k0) into shared memory; TILE / 8 chunks of 8 elements,
// two per thread. Stored rows are x (K_MAJOR) or k; `vec`: 16-byte copies are legal.
template <bool K_MAJOR, typename T>
__device__ __forceinline__ void load_tile(T* __restrict__ s, const T* __restrict__ p, int64_t ld, int x0, int k0,
                                          int X, int K, bool vec, int tid) {
#pragma unroll
  for (int q = 0; q < TILE / 8 / THREADS; ++q) {
    const int j = tid + q * THREADS;
    const int x = K_MAJOR ? j / (BK / 8) : (j % (BM / 8)) * 8;
    const int k = K_MAJOR ? (j % (BK / 8)) * 8 : j / (BM / 8);
    const int64_t sr = K_MAJOR ? x0 + x : k0 + k;  // stored row, first stored column of the chunk
    const int64_t sc = K_MAJOR ? k0 + k : x0 + x;
    const int64_t SR = K_MAJOR ? X : K, SC = K_MAJOR ? K : X;
    T* dst = s + tile_off<K_MAJOR>(x, k);
    if (sr >= SR || sc >= SC) {
      detail::cp_async_16(dst, p, 0);  // wholly outside: zeros, nothing read
    } else if (vec && sc + 8 <= SC) {
      detail::cp_async_16(dst, p + sr * ld + sc);
    } else {  // ragged or unaligned: element by element
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = sc + e < SC ? p[sr * ld + sc + e] : detail::from_f32<T>(0.0f);
    }
  }
}

template <typename T, bool A_K, bool B_K>
__global__ void __launch_bounds__(THREADS) mma_kernel(ArgsT<T> a, int tiles_m, int tiles_n, bool a_vec, bool b_vec) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);  // per stage: A tile, then B tile
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int tm, tn;
  detail::swizzle_tile(blockIdx.x, tiles_m, tiles_n, 8, tm, tn);
  const int m0 = tm * BM, n0 = tn * BN;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;  // this warp's 64 x 32 of the tile
  const int M = static_cast<int>(a.m), N = static_cast<int>(a.n), K = static_cast<int>(a.k);
  const int KT = static_cast<int>(ceil_div(K, BK));

  auto load_stage = [&](int stage, int kt) {
    T* s = smem + stage * 2 * TILE;
    load_tile<A_K>(s, a.A, a.lda, m0, kt * BK, M, K, a_vec, tid);
    load_tile<B_K>(s + TILE, a.B, a.ldb, n0, kt * BK, N, K, b_vec, tid);
  };

  float acc[4][4][4] = {};  // [m16 tile][n8 tile][fragment]
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_stage(s, s);
    detail::cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    detail::cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt landed for every thread; everyone is done with tile kt - 1
    if (kt + STAGES - 1 < KT) load_stage((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
    detail::cp_async_commit();
    const T* As = smem + (kt % STAGES) * 2 * TILE;
    const T* Bs = As + TILE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15)
        const int q = lane / 8, r = lane % 8;
        const int x = wm + 16 * i + (q & 1) * 8, k = kk + (q >> 1) * 8;
        if constexpr (A_K) detail::ldmatrix_x4<false>(af[i], detail::smem_u32(As + tile_off<true>(x + r, k)));
        else detail::ldmatrix_x4<true>(af[i], detail::smem_u32(As + tile_off<false>(x, k + r)));
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {  // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
        const int q = lane / 8, r = lane % 8;
        const int x = wn + 16 * j + (q >> 1) * 8, k = kk + (q & 1) * 8;
        uint32_t t[4];
        if constexpr (B_K) detail::ldmatrix_x4<false>(t, detail::smem_u32(Bs + tile_off<true>(x + r, k)));
        else detail::ldmatrix_x4<true>(t, detail::smem_u32(Bs + tile_off<false>(x, k + r)));
        bf[2 * j][0] = t[0], bf[2 * j][1] = t[1], bf[2 * j + 1][0] = t[2], bf[2 * j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) detail::mma_16816<T>(acc[i][j], af[i], bf[j]);
    }
  }
  detail::cp_async_wait<0>();
  // Fragment (i, j): rows wm + 16i + g (+8), columns wn + 8j + 2t (+1); g = lane / 4, t = lane % 4.
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = m0 + wm + 16 * i + g + (e / 2) * 8, c = n0 + wn + 8 * j + 2 * t + (e % 2);
        if (r < M && c < N) detail::store_c(a.C, a.ldc, r, c, acc[i][j][e], a.alpha, a.beta);
      }
}

// 16-byte copies of stored rows: base 16-byte aligned and ld a multiple of 8 elements.
bool vec_ok(const void* p, int64_t ld) { return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % 8 == 0; }

template <typename T>
void launch(const ArgsT<T>& a) {
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "mma_sync");
  const bool av = vec_ok(a.A, a.lda), bv = vec_ok(a.B, a.ldb);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    // A is k-contiguous when stored m x k (ta == N); B when stored n x k (tb == T).
    constexpr bool A_K = !decltype(ta)::value, B_K = decltype(tb)::value;
    const void* kernel = reinterpret_cast<const void*>(&mma_kernel<T, A_K, B_K>);
    detail::allow_dynamic_smem(kernel, SMEM_BYTES);
    mma_kernel<T, A_K, B_K><<<grid, THREADS, SMEM_BYTES, a.stream>>>(a, static_cast<int>(tiles_m),
                                                                     static_cast<int>(tiles_n), av, bv);
  });
  detail::check_launch("mma_sync");
}

}  // namespace

void run_f16(const ArgsH& a) { launch(a); }
void run_bf16(const ArgsBF& a) { launch(a); }

}  // namespace rungs::sgemm::mma_sync
