// Rung 17's part, the TMA-store epilogue (used by rungs 17, 19, 20, 21 and 23; what it adds and
// why: 17_wgmma_tma_store.cu): each consumer writes its accumulator (alpha applied, C's type) into
// its own 16 KB shared buffer in the 128-byte swizzle and one thread sends it with TMA box stores,
// which drain while the consumer goes on to its next tile. C that TMA cannot store (beta != 0,
// C unaligned, a last tile column TMA would clip into the ld padding) goes out as rung 15's.
#pragma once

#include "gemm/15_wgmma_ws.cuh"

namespace rungs::sgemm::ws {

struct TmaStore {
  static constexpr bool buffers = true, tma = true, storers = false;
  // Through TMA where the tile's columns lie inside what TMA may write; true if it did.
  template <typename T, bool C_T, class Ctx>
  static __device__ __forceinline__ bool try_store(const Ctx& x, const float (&d)[128], int m0, int n0) {
    if constexpr (C_T) {  // C^T's rows m0 + 64 cw .. are C's columns
      if (m0 + 64 * x.cw + 64 > x.tma_cols) return false;
      detail::store_acc_64x256_tma_t(d, x.buf, x.map_c, m0 + x.cw * 64, n0, x.a.alpha, 1 + x.cw);
    } else {
      return try_store_rows<T, BN>(x, d, m0 + x.cw * 64, n0);
    }
    return true;
  }
  // 64 rows of C from row0, N columns from n0, through TMA where they lie inside what it may write.
  template <typename T, int N, class Ctx>
  static __device__ __forceinline__ bool try_store_rows(const Ctx& x, const float (&d)[N / 2], int row0, int n0) {
    if (n0 + N > x.tma_cols) return false;
    detail::store_acc_64x256_tma<T, N>(d, x.buf, x.map_c, row0, n0, x.a.alpha, 1 + x.cw);
    return true;
  }
  template <typename T, bool C_T>
  struct Consumer : DirectStore::Consumer<T, C_T> {
    template <class Ctx>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[128], int m0, int n0) {
      if (!try_store<T, C_T>(x, d, m0, n0)) DirectStore::store<T, C_T>(d, x.a, m0, n0, x.cw, x.c_vec);
    }
    template <int N, class Ctx>
    __device__ __forceinline__ void store_rows(const Ctx& x, const float (&d)[N / 2], int row0, int n0) {
      static_assert(!C_T, "C^T: the cooperative store");
      if (!try_store_rows<T, N>(x, d, row0, n0)) DirectStore::store_rows<T, N>(d, x.a, row0, n0, x.c_vec);
    }
    template <class Ctx>
    __device__ __forceinline__ void finish(const Ctx& x) {
      if (x.tid % 128 == 0) detail::bulk_wait<0, false>();  // this consumer's C stores are done
    }
  };
};

}  // namespace rungs::sgemm::ws
