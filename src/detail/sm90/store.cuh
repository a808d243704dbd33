// The tensor-core rungs' epilogue helpers (sm_90a), written once: shared-memory words at 32-bit
// addresses (and another block's, in a cluster), a warpgroup's 64 x N wgmma accumulator stored to C
// from registers (as is or transposed), or staged into a 128-byte-swizzled shared buffer and sent by
// TMA box stores, and the packed 16-bit form that waits in registers. Guards as in sync.cuh.
#pragma once

#include "detail/sm90/tma.cuh"
#include "detail/sm90/wgmma.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rungs::detail {

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

// The two floats of a pack2 word (exact).
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t w) {
  static_assert(sizeof(T) == 2, "16-bit T");
  if constexpr (std::is_same_v<T, __half>) return __half22float2(*reinterpret_cast<const __half2*>(&w));
  else return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
}

// Chunk c of a warpgroup's 64 x N accumulator into shared memory at `base` (1024-aligned, 16 KB):
// alpha applied, converted to T, laid out as for_chunk_pairs says. The caller syncs the
// warpgroup around it.
template <typename T, int N = 256>
__device__ __forceinline__ void fill_c_chunk(const float (&d)[N / 2], uint32_t base, int c, float alpha) {
  // Shared-space addresses and st.shared: through a generic pointer the compiler emitted generic
  // stores (ST.E), which must first resolve the address space.
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
