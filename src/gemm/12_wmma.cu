// Rung 12, wmma: tensor cores through the CUDA C++ WMMA API (article 004's v10; sm_80+): f16, bf16,
// and float as tf32 or 3xTF32; any shape, transpose, ld and pointer alignment, nothing copied.
// Adds over 09 warptile: each warp issues 16x16x16 (f16 / bf16) or 16x16x8 (tf32) matrix products
// on the tensor cores instead of FFMAs. A 64x64 block tile (4 warps of 32x32), a 32-deep k slab of A
// and B staged in shared memory by plain bounds-checked loads, converted to the compute type there;
// the accumulators go through shared memory to a masked alpha / beta store.
// tf32x3: each fragment element x is split into big = tf32(x) and small = tf32(x - big); per k step
// the two cross products go into a correction accumulator, big*big into a fresh one, and both reach
// the fp32 accumulator by round-to-nearest adds: the tensor core's accumulation truncates, so big*big
// summed there over all of k is biased (3.8e-5 normwise at k = 8192 on the H100, 30x cuBLAS sgemm).
// Bounded by: no overlap of loads with math (one buffer, two barriers per slab), scalar global loads,
// fragments re-read from shared memory with bank conflicts.
// Prediction: well under 10 % of peak; measured: f16 / bf16 27-34 TFLOP/s at 2048-8192^3 (3 % of the
// dense peak, 0.04x cuBLAS; H100), tf32 9.5-10.2, tf32x3 12-13 (faster than tf32: not understood).
#include "core/errors.hpp"
#include "detail/gemm_tc.cuh"
#include "gemm/gemm_rung.hpp"

#include <mma.h>

namespace rungs::sgemm::wmma {

namespace {

namespace nv = nvcuda::wmma;
using detail::ceil_div;

constexpr int BM = 64, BN = 64, BK = 32, THREADS = 128;

// What the tensor cores consume for each storage type: the smem element, the fragment shape.
template <typename T>
struct Frag {  // __half, __nv_bfloat16
  using smem_t = T;
  using in_t = T;
  static constexpr int K = 16;
  static constexpr int PAD = 8;  // keeps every fragment pointer 32-byte aligned, rows off one bank
};
template <>
struct Frag<float> {
  using smem_t = float;
  using in_t = nv::precision::tf32;
  static constexpr int K = 8;
  static constexpr int PAD = 4;
};

template <typename T>
__device__ __forceinline__ typename Frag<T>::smem_t to_smem(float x) {
  return detail::from_f32<typename Frag<T>::smem_t>(x);
}

// One block: a BM x BN tile of C. SPLIT: 3xTF32 (float only).
template <typename T, bool SPLIT>
__global__ void __launch_bounds__(THREADS) wmma_kernel(ArgsT<T> a, int tiles_n) {
  using F = Frag<T>;
  using S = typename F::smem_t;
  constexpr int LDA = BK + F::PAD, LDB = BN + F::PAD, LDC = BN + 4;
  // A slab [BM][BK], B slab [BK][BN]; the C tile reuses the same bytes after the k loop.
  constexpr int AB_BYTES = (BM * LDA + BK * LDB) * int(sizeof(S));
  constexpr int C_BYTES = BM * LDC * int(sizeof(float));
  __shared__ __align__(128) unsigned char smem[AB_BYTES > C_BYTES ? AB_BYTES : C_BYTES];
  S* As = reinterpret_cast<S*>(smem);
  S* Bs = As + BM * LDA;
  float* Cs = reinterpret_cast<float*>(smem);

  const int tid = threadIdx.x, warp = tid / 32;
  const int64_t m0 = int64_t(blockIdx.x / tiles_n) * BM, n0 = int64_t(blockIdx.x % tiles_n) * BN;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;  // this warp's 32x32 in the tile
  const bool ta = a.ta == Trans::T, tb = a.tb == Trans::T;

  nv::fragment<nv::accumulator, 16, 16, F::K, float> acc[2][2];
  [[maybe_unused]] nv::fragment<nv::accumulator, 16, 16, F::K, float> corr[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      nv::fill_fragment(acc[i][j], 0.0f);
      if constexpr (SPLIT) nv::fill_fragment(corr[i][j], 0.0f);
    }

  for (int64_t k0 = 0; k0 < a.k; k0 += BK) {
    // Threads walk the stored contiguous direction so each warp's loads are coalesced.
    for (int i = tid; i < BM * BK; i += THREADS) {
      const int r = ta ? i % BM : i / BK, c = ta ? i / BM : i % BK;  // (m, k) in the slab
      As[r * LDA + c] = to_smem<T>(detail::load_op_guarded(a.A, a.lda, ta, m0 + r, k0 + c, a.m, a.k));
    }
    for (int i = tid; i < BK * BN; i += THREADS) {
      const int r = tb ? i % BK : i / BN, c = tb ? i / BK : i % BN;  // (k, n) in the slab
      Bs[r * LDB + c] = to_smem<T>(detail::load_op_guarded(a.B, a.ldb, tb, k0 + r, n0 + c, a.k, a.n));
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += F::K) {
      nv::fragment<nv::matrix_a, 16, 16, F::K, typename F::in_t, nv::row_major> fa[2];
      nv::fragment<nv::matrix_b, 16, 16, F::K, typename F::in_t, nv::row_major> fb[2];
      [[maybe_unused]] nv::fragment<nv::matrix_a, 16, 16, F::K, typename F::in_t, nv::row_major> fa_s[2];
      [[maybe_unused]] nv::fragment<nv::matrix_b, 16, 16, F::K, typename F::in_t, nv::row_major> fb_s[2];
      for (int i = 0; i < 2; ++i) nv::load_matrix_sync(fa[i], As + (wm + 16 * i) * LDA + kk, LDA);
      for (int j = 0; j < 2; ++j) nv::load_matrix_sync(fb[j], Bs + kk * LDB + wn + 16 * j, LDB);
      if constexpr (std::is_same_v<T, float>) {  // tf32: round (or split) each element
        for (int i = 0; i < 2; ++i)
          for (int e = 0; e < fa[i].num_elements; ++e) {
            if constexpr (SPLIT) detail::split_tf32(fa[i].x[e], fa[i].x[e], fa_s[i].x[e]);
            else fa[i].x[e] = detail::to_tf32(fa[i].x[e]);
          }
        for (int j = 0; j < 2; ++j)
          for (int e = 0; e < fb[j].num_elements; ++e) {
            if constexpr (SPLIT) detail::split_tf32(fb[j].x[e], fb[j].x[e], fb_s[j].x[e]);
            else fb[j].x[e] = detail::to_tf32(fb[j].x[e]);
          }
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          if constexpr (SPLIT) {
            nv::mma_sync(corr[i][j], fa[i], fb_s[j], corr[i][j]);
            nv::mma_sync(corr[i][j], fa_s[i], fb[j], corr[i][j]);
            // big*big into a fresh accumulator, then one round-to-nearest fp32 add: the tensor
            // core's own accumulation truncates (over all of k the error grows linearly in k), the
            // FADD does not.
            nv::fragment<nv::accumulator, 16, 16, F::K, float> bb;
            nv::fill_fragment(bb, 0.0f);
            nv::mma_sync(bb, fa[i], fb[j], bb);
            for (int e = 0; e < bb.num_elements; ++e) acc[i][j].x[e] += bb.x[e];
          } else {
            nv::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
          }
        }
    }
    if constexpr (SPLIT)  // the corrections too leave the tensor core once per slab (4 mma deep)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          for (int e = 0; e < acc[i][j].num_elements; ++e) acc[i][j].x[e] += corr[i][j].x[e];
          nv::fill_fragment(corr[i][j], 0.0f);
        }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      nv::store_matrix_sync(Cs + (wm + 16 * i) * LDC + wn + 16 * j, acc[i][j], LDC, nv::mem_row_major);
    }
  __syncthreads();
  for (int i = tid; i < BM * BN; i += THREADS) {
    const int r = i / BN, c = i % BN;
    if (m0 + r < a.m && n0 + c < a.n) detail::store_c(a.C, a.ldc, m0 + r, n0 + c, Cs[r * LDC + c], a.alpha, a.beta);
  }
}

template <typename T, bool SPLIT = false>
void launch(const ArgsT<T>& a) {
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const dim3 grid = detail::tile_grid(tiles_m, tiles_n, "wmma");
  wmma_kernel<T, SPLIT><<<grid, THREADS, 0, a.stream>>>(a, static_cast<int>(tiles_n));
  detail::check_launch("wmma");
}

}  // namespace

void run_tf32(const Args& a) { launch<float>(a); }
void run_tf32x3(const Args& a) { launch<float, true>(a); }
void run_f16(const ArgsH& a) { launch(a); }
void run_bf16(const ArgsBF& a) { launch(a); }

}  // namespace rungs::sgemm::wmma
