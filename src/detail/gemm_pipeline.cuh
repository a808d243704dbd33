// Pieces shared by the cp.async-pipelined SGEMM rungs (08 double_buffer, 09 warptile, 10 kahan),
// written once: kernel parameters, the multi-stage tile loaders for both stored layouts, the
// float4 fragment load, the 4-wide alpha/beta store, the L2 block swizzle, and the host helpers
// (SM count per device, the dynamic shared-memory opt-in per kernel and device).
//
// Every pipelined rung keeps both operands in shared memory as [k][x] with x contiguous
// (x = m for A, x = n for B), so a thread reads 4 consecutive m (or n) of one k with one LDS.128.
// An operand reaches that layout one of two ways, fixed at compile time by the transpose:
//   "x-contiguous" (A stored k x m, i.e. ta == T; B stored k x n, i.e. tb == N): stored rows are
//     smem rows, so 16-byte cp.async.cg copies 4 elements at once (when float4_ok; otherwise one
//     4-byte cp.async per element, still coalesced);
//   "k-contiguous" (A stored m x k, ta == N; B stored n x k, tb == T): a 16-byte copy would land
//     4 k's in one smem row, the wrong direction. Instead each element travels alone with a
//     4-byte cp.async whose destination is its transposed slot: the copy engine does the
//     transpose, no registers hold data in flight, and this operand keeps the same multi-stage
//     pipeline as the other. (Rejected: staging through registers -- LDG.128 for tile t+1, STS
//     transposed after tile t -- ties the copy to the compute loop, holds 4 registers per float4
//     in flight and allows only one tile of look-ahead; keeping the tile k-contiguous in smem and
//     reading 4 k's per LDS.128 needs a whole 4-k block of one operand's fragments live at once,
//     32 more registers at 8x8 per thread, which the 2-blocks-per-SM budget of 128 lacks.)
//     Cost: BM*BK/threads copies per thread and tile (8 at 128x128x16 / 256 threads, next to
//     1024 FFMA), ~3 issue slots each with addressing, and a padded smem row (stride % 32 == 4)
//     so that a warp's 32 scattered 4-byte writes land in 32 distinct banks.
// Out-of-range elements (the ragged m/n/k edges) are zero-filled with src_bytes = 0 from a
// clamped, valid address, so a full tile always computes and nothing outside A or B is read.
#pragma once

#include "core/errors.hpp"
#include "detail/gemm_tile.cuh"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

namespace rungs::detail {

// ---------------------------------------------------------------------------------------------
// Kernel parameters (passed by value: they live in the constant bank and cost no registers).
// ---------------------------------------------------------------------------------------------
struct GemmParams {
  const float* A;
  const float* B;
  float* C;
  int64_t lda, ldb, ldc;
  int m, n, k;
  float alpha, beta;
  int tiles_m, tiles_n;  // tile grid of the launch (tiles_m * tiles_n blocks)
  bool a_vec;            // A may use 16-byte copies (only read when A is x-contiguous, ta == T;
                         // rung 09 sets it to float4_ok(A, lda) for its register-staged loader)
  bool b_vec;            // B may use 16-byte copies (only read when B is x-contiguous, tb == N;
                         // likewise for rung 09's register-staged loader when tb == T)
  bool c_vec;            // C may use float4 loads/stores (float4_ok(C, ldc))
};

inline GemmParams make_gemm_params(const sgemm::Args& a, int64_t tiles_m, int64_t tiles_n) {
  GemmParams p;
  p.A = a.A, p.B = a.B, p.C = a.C;
  p.lda = a.lda, p.ldb = a.ldb, p.ldc = a.ldc;
  p.m = static_cast<int>(a.m), p.n = static_cast<int>(a.n), p.k = static_cast<int>(a.k);
  p.alpha = a.alpha, p.beta = a.beta;
  p.tiles_m = static_cast<int>(tiles_m), p.tiles_n = static_cast<int>(tiles_n);
  p.a_vec = a.ta == Trans::T && float4_ok(a.A, a.lda);
  p.b_vec = a.tb == Trans::N && float4_ok(a.B, a.ldb);
  p.c_vec = float4_ok(a.C, a.ldc);
  return p;
}

// Shared-memory row stride (floats) of a [BK][BX] operand tile: k-contiguous operands are
// written transposed by scattered 4-byte copies and get 4 floats of padding (stride % 32 == 4:
// the 8 k x 4 x elements of one warp's copy fall in 32 distinct banks); x-contiguous ones are
// written a row at a time and need none. Either way the stride stays a multiple of 4 floats,
// so every LDS.128 of a fragment is 16-byte aligned.
template <int BX, bool K_CONTIG>
constexpr int smem_stride() {
  return K_CONTIG ? BX + 4 : BX;
}

// ---------------------------------------------------------------------------------------------
// Tile loaders: issue (never wait for) the cp.async copies of one BK x BX tile of an operand
// into s[k][x] (row stride SLD floats), zero outside [0, K) x [0, X); NT threads.
// A loader is built once per block (init) and then load() is called for k-tiles 0, 1, 2, ...
// in order. It keeps one running global pointer, so a thread's per-tile work is a few pointer
// bumps, not 64-bit index math or per-copy addresses hoisted into the registers that the
// accumulators need. Tiles wholly inside the matrix (every tile of an interior block but the
// k tail) take a path with no bounds tests at all; edge tiles test each copy and zero-fill.
//   init(base, ld, x_left, vec, tid): base = the panel's element (k = 0, x = x0) in stored
//     terms (panel_base), x_left = X - x0 >= 1, vec = 16-byte copies allowed (x-contiguous only).
//   load(s, ld, k_left, clamp): copies the next k-tile into s; k_left = K - k0 >= 1 for that
//     tile; clamp = a valid address in the matrix, 16-byte aligned when vec (the matrix base),
//     the source of the zero-filling src_bytes = 0 copies, so no copy names a wild address.
// ---------------------------------------------------------------------------------------------
template <int BK, int BX, int NT, int SLD, bool K_CONTIG>
struct TileLoader;

// x-contiguous: element (k, x) at base[k * ld + x]. A thread keeps one x (one float4 column
// when vec) and takes every kStep-th k row of the tile; a warp's copy is one contiguous run.
template <int BK, int BX, int NT, int SLD>
struct TileLoader<BK, BX, NT, SLD, false> {
  static constexpr int kVecStep = NT / (BX / 4);  // k rows between a thread's float4s
  static constexpr int kVecPasses = BK / kVecStep;
  static constexpr int kScalarStep = NT / BX;  // k rows between a thread's scalars (unaligned input)
  static constexpr int kScalarPasses = BK / kScalarStep;
  static_assert(NT % BX == 0 && BK % kScalarStep == 0 && BK % kVecStep == 0, "threads tile the k x x tile");
  static_assert(SLD % 4 == 0 && SLD >= BX, "16-byte aligned smem rows");

  const float* g;  // this thread's first element of the next tile
  int soff;        // its smem offset within a stage
  int kb;          // its first k row within a tile
  int xbytes;      // bytes of its float4 (vec) or scalar that exist in x: 0..16 or 0/4
  bool vec;
  bool xfull;      // the block's panel has all BX columns

  __device__ __forceinline__ void init(const float* base, int64_t ld, int x_left, bool use_vec, int tid) {
    vec = use_vec;
    xfull = x_left >= BX;
    int x;
    if (vec) {
      kb = tid / (BX / 4), x = (tid % (BX / 4)) * 4;
      xbytes = 4 * max(0, min(x_left - x, 4));
    } else {
      kb = tid / BX, x = tid % BX;
      xbytes = x < x_left ? 4 : 0;
    }
    soff = kb * SLD + x;
    g = base + kb * ld + x;
  }

  __device__ __forceinline__ void load(float* __restrict__ s, int64_t ld, int k_left, const float* clamp) {
    const float* q = g;
    const bool full = xfull && k_left >= BK;
    if (vec) {  // base, ld, x0 are all multiples of 4 floats: every source is 16-byte aligned
      if (full) {
#pragma unroll
        for (int i = 0; i < kVecPasses; ++i, q += kVecStep * ld) cp_async_16(s + soff + i * kVecStep * SLD, q);
      } else {
#pragma unroll
        for (int i = 0; i < kVecPasses; ++i, q += kVecStep * ld) {
          const bool ok = kb + i * kVecStep < k_left && xbytes > 0;
          cp_async_16(s + soff + i * kVecStep * SLD, ok ? q : clamp, ok ? xbytes : 0);
        }
      }
    } else {
      if (full) {
#pragma unroll
        for (int i = 0; i < kScalarPasses; ++i, q += kScalarStep * ld)
          cp_async_4(s + soff + i * kScalarStep * SLD, q);
      } else {
#pragma unroll
        for (int i = 0; i < kScalarPasses; ++i, q += kScalarStep * ld) {
          const bool ok = kb + i * kScalarStep < k_left && xbytes > 0;
          cp_async_4(s + soff + i * kScalarStep * SLD, ok ? q : clamp, ok ? 4 : 0);
        }
      }
    }
    g += BK * ld;
  }
};

// k-contiguous: element (k, x) at base[x * ld + k]; one 4-byte copy per element, transposed on
// the way. Lane l of warp w takes x = 4w + l / 8 (+ i * NT / 8) and k = l % 8 (+ 8j): each warp
// instruction reads 4 rows x 32 contiguous bytes (4 whole sectors) and writes 32 distinct banks
// (SLD % 32 == 4: bank = 4 (l % 8) + l / 8 + const). A thread's BK / 8 copies of one row share
// one pointer (immediate offsets 0, 32, 64 .. bytes), so a row costs one pointer bump.
template <int BK, int BX, int NT, int SLD>
struct TileLoader<BK, BX, NT, SLD, true> {
  static constexpr int kKGroups = BK / 8;  // copies per row and thread, 8 k apart
  static constexpr int kXStep = NT / 8;    // x distance between a thread's rows
  static constexpr int kRows = BX / kXStep;
  static_assert(BK % 8 == 0 && NT % 32 == 0, "warps tile the k direction in 8s");
  static_assert(BX % kXStep == 0 && BX % 32 == 0 && kRows <= 32, "threads tile the x direction");
  static_assert(SLD % 32 == 4, "conflict-free transposed writes");

  const float* g;  // this thread's first element of the next tile
  int soff;        // its smem offset within a stage
  int kk;          // its first k within a tile (0..7)
  unsigned xmask;  // bit i: its i-th row exists
  bool xfull;      // the block's panel has all BX rows

  __device__ __forceinline__ void init(const float* base, int64_t ld, int x_left, bool /*vec*/, int tid) {
    const int lane = tid & 31, w = tid >> 5;
    kk = lane & 7;
    const int xb = w * 4 + (lane >> 3);
    xfull = x_left >= BX;
    xmask = 0;
#pragma unroll
    for (int i = 0; i < kRows; ++i) xmask |= (xb + i * kXStep < x_left ? 1u : 0u) << i;
    soff = kk * SLD + xb;
    g = base + xb * ld + kk;
  }

  __device__ __forceinline__ void load(float* __restrict__ s, int64_t ld, int k_left, const float* clamp) {
    const float* q = g;
    if (xfull && k_left >= BK) {
#pragma unroll
      for (int i = 0; i < kRows; ++i, q += kXStep * ld)
#pragma unroll
        for (int j = 0; j < kKGroups; ++j) cp_async_4(s + soff + j * 8 * SLD + i * kXStep, q + 8 * j);
    } else {
#pragma unroll
      for (int i = 0; i < kRows; ++i, q += kXStep * ld)
#pragma unroll
        for (int j = 0; j < kKGroups; ++j) {
          const bool ok = kk + 8 * j < k_left && ((xmask >> i) & 1u);
          cp_async_4(s + soff + j * 8 * SLD + i * kXStep, ok ? q + 8 * j : clamp, ok ? 4 : 0);
        }
    }
    g += BK;
  }
};

// ---------------------------------------------------------------------------------------------
// Register-staged loader of a k-contiguous operand (element (k, x) at base[x * ld + k]), the
// alternative to TileLoader<.., true> that rung 09 offers its tuner (configs named *_rs): the
// tile is read with LDG.128 along k (4 k's of one x per thread and float4) into registers
// (fetch), which the kernel writes transposed into the stage with 4 STS.32 each (store) after
// one k-tile of FFMAs has hidden the load latency. Costs 4 registers per float4 in flight
// (BX * BK / NT floats per thread) and binds the copy to the compute loop; saves the 4-byte
// cp.async per element (a quarter of the copy instructions and L1/LSU requests for the loads).
// Mapping: lane l of warp w takes x = 16 * (w / (KQ/2)) + l % 16 (+ i * kXStep) and the float4
// kq = 2 * (w % (KQ/2)) + l / 16 (KQ = BK / 4 float4s per row): a warp's LDG.128 reads 16 rows x
// 32 contiguous bytes (16 whole sectors), and its STS.32 of k = 4 kq + e hit banks
// 16 kq + 4 e + x (SLD % 8 == 4): the two kq's of the warp fall in disjoint halves, 32 banks.
// The transposed tile and its padding are those of TileLoader<.., true> (smem_stride<BX, true>).
//   init(base, ld, x_left, vec, tid): as TileLoader; vec = float4_ok(matrix, ld) (k0 % 4 == 0
//     keeps every float4 aligned then).
//   fetch(ld, k_left): loads the next k-tile into registers (zeros outside the matrix; edge or
//     unaligned tiles use guarded scalar loads; nothing outside the matrix is read).
//   store(s): writes the fetched tile into stage s (the caller synchronizes).
// ---------------------------------------------------------------------------------------------
template <int BK, int BX, int NT, int SLD>
struct RegTileLoader {
  static constexpr int KQ = BK / 4;                  // float4s per stored row and tile
  static constexpr int NW = NT / 32;                 // warps
  static constexpr int kXStep = 16 * NW / (KQ / 2);  // x distance between a thread's float4s
  static constexpr int kRows = BX / kXStep;          // float4s per thread and tile
  static_assert(BK % 8 == 0 && NT % 32 == 0 && NW % (KQ / 2) == 0, "warps tile k in pairs of float4s");
  static_assert(BX % kXStep == 0 && kRows >= 1 && kRows <= 32, "threads tile the x direction");
  static_assert(SLD % 8 == 4 && SLD >= BX, "conflict-free transposed writes, 16-byte aligned rows");

  const float* g;  // this thread's first element of the next tile
  int soff;        // its smem offset within a stage
  int k4;          // its first k within a tile (4 kq)
  unsigned xmask;  // bit i: its i-th row exists
  bool xfull;      // the block's panel has all BX rows
  bool vec;        // LDG.128 allowed
  float r[kRows][4];

  __device__ __forceinline__ void init(const float* base, int64_t ld, int x_left, bool use_vec, int tid) {
    const int lane = tid & 31, w = tid >> 5;
    k4 = 4 * (2 * (w % (KQ / 2)) + (lane >> 4));
    const int xb = 16 * (w / (KQ / 2)) + (lane & 15);
    vec = use_vec;
    xfull = x_left >= BX;
    xmask = 0;
#pragma unroll
    for (int i = 0; i < kRows; ++i) xmask |= (xb + i * kXStep < x_left ? 1u : 0u) << i;
    soff = k4 * SLD + xb;
    g = base + xb * ld + k4;
  }

  __device__ __forceinline__ void fetch(int64_t ld, int k_left) {
    const float* q = g;
    if (xfull && k_left >= BK) {
      if (vec) {
#pragma unroll
        for (int i = 0; i < kRows; ++i, q += kXStep * ld) {
          const float4 v = *reinterpret_cast<const float4*>(q);
          r[i][0] = v.x, r[i][1] = v.y, r[i][2] = v.z, r[i][3] = v.w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < kRows; ++i, q += kXStep * ld)
#pragma unroll
          for (int e = 0; e < 4; ++e) r[i][e] = q[e];
      }
    } else {
#pragma unroll
      for (int i = 0; i < kRows; ++i, q += kXStep * ld)
#pragma unroll
        for (int e = 0; e < 4; ++e) r[i][e] = (k4 + e < k_left && ((xmask >> i) & 1u)) ? q[e] : 0.0f;
    }
    g += BK;
  }

  __device__ __forceinline__ void store(float* __restrict__ s) const {
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[soff + e * SLD + i * kXStep] = r[i][e];
  }
};

// The block's panel base of each operand, in stored terms (see TileLoader::load's `base`).
template <bool K_CONTIG>
__device__ __forceinline__ const float* panel_base(const float* p, int64_t ld, int x0) {
  return K_CONTIG ? p + static_cast<int64_t>(x0) * ld : p + x0;
}

// ---------------------------------------------------------------------------------------------
// Fragments and the epilogue.
// ---------------------------------------------------------------------------------------------
// Four consecutive floats of shared memory (16-byte aligned) into registers: one LDS.128.
__device__ __forceinline__ void lds4(float* __restrict__ dst, const float* __restrict__ src) {
  const float4 v = *reinterpret_cast<const float4*>(src);
  dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
}

// C[r, c .. c+3] = alpha * v + beta * C (C not read when beta == 0); cols_left = n - c (may be
// <= 0: nothing is written past column n, so the ld padding of C is never touched).
// vec = float4_ok(C, ldc) and c % 4 == 0: one 16-byte store (and load when beta != 0).
__device__ __forceinline__ void store_c4(float* __restrict__ C, int64_t ldc, int64_t r, int64_t c, int cols_left,
                                         const float* v, float alpha, float beta, bool vec) {
  if (vec && cols_left >= 4) {
    float4* p = reinterpret_cast<float4*>(C + r * ldc + c);
    float4 o;
    if (beta == 0.0f) {
      o = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
    } else {
      const float4 old = *p;
      o = make_float4(alpha * v[0] + beta * old.x, alpha * v[1] + beta * old.y, alpha * v[2] + beta * old.z,
                      alpha * v[3] + beta * old.w);
    }
    *p = o;
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (j < cols_left) epilogue_store(C, ldc, r, c + j, v[j], alpha, beta);
  }
}

// Block swizzle for L2 reuse: block b walks down a band of `group` tile rows before moving
// right, so the blocks resident at one time share ~`group` A panels and ~resident/group B
// panels instead of a few tile rows x all of tiles_n B panels. The last band may be shorter.
// 32-bit only: b < tiles_m * tiles_n <= INT_MAX; a band wider than INT_MAX blocks would hold
// every tile, and then band = INT_MAX gives the same answer.
__device__ __forceinline__ void swizzle_tile(int b, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
  const int band = tiles_n <= INT_MAX / group ? group * tiles_n : INT_MAX;
  const int first = (b / band) * group;
  const int rows = min(tiles_m - first, group);
  const int in = b % band;
  tm = first + in % rows;
  tn = in / rows;
}

// ---------------------------------------------------------------------------------------------
// Host helpers.
// ---------------------------------------------------------------------------------------------
// Opt a kernel in to `bytes` of dynamic shared memory (needed above 48 KB) on the current
// device, once per (kernel, device); thread-safe. Also hints the largest shared-memory carveout:
// these kernels want 2 blocks per SM of up to ~100 KB each and barely use L1 (cp.async.cg
// bypasses it), so the L1/shared split must not be what limits their occupancy.
inline void allow_dynamic_smem(const void* kernel, int bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mu;
  static std::set<std::pair<const void*, int>> done;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({kernel, dev})) return;
  const RelaxedCaptureMode relaxed;  // the first call may come while its stream is captured
  RUNGS_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  RUNGS_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  static_cast<int>(cudaSharedmemCarveoutMaxShared)));
  done.insert({kernel, dev});
}

}  // namespace rungs::detail
