// Rung 20's part, the staged epilogue (used by rungs 20, 22 and 23; what it adds and why:
// 20_wgmma_ragged.cu): Staged, which hands C that TMA cannot store to the producer warpgroup's
// idle warps through the consumer's shared buffer.
#pragma once

#include "gemm/16_wgmma_narrow.cuh"
#include "gemm/17_wgmma_tma_store.cuh"

namespace rungs::sgemm::ws {

// Epilogue: Inner's, except that C which Inner would store from registers (rows not 16-byte
// aligned, or a last tile column TMA would clip only to 16 bytes) leaves through the consumer's
// buffer: the consumer fills it a 64 x CHUNK chunk at a time and hands it over (c_full) to storer
// warp w + 1, which writes it a row at a time and gives it back (c_empty). beta == 0 only: the
// buffer holds C's type, and alpha * AB rounded to it before adding beta * C would round twice.
// Rows wholly past m are skipped. Every writer and reader of the hand-over arrives on its
// mbarrier itself: a named barrier and one thread's arrival orders the others too, but racecheck
// (which follows mbarrier arrivals, not their chaining with bar.sync) reported each such write
// as a RAW hazard.
template <class Inner>
struct Staged {
  static constexpr bool buffers = true, tma = Inner::tma, storers = true;
  static_assert(Inner::buffers, "the hand-over uses the consumers' C buffers");
  template <typename T>
  static constexpr int CHUNK = 256 / int(sizeof(T));  // C's columns per chunk through the buffer
  // Consumer w's rows of tile (m0, n0) go through the storer warp.
  template <typename T, bool C_T>
  static __device__ __forceinline__ bool staged(const ArgsT<T>& a, int64_t tma_cols, int m0, int n0, int w) {
    return !C_T && a.beta == 0.0f && !(Inner::tma && n0 + BN <= tma_cols) && m0 + 64 * w < a.m;
  }
  static __device__ __forceinline__ void init_barriers(uint64_t* c_full, uint64_t* c_empty, int tid) {
    if (tid == 0) {
      for (int w = 0; w < CONSUMERS; ++w) detail::mbar_init(&c_full[w], 128), detail::mbar_init(&c_empty[w], 32);
      detail::mbar_init_fence();
    }
  }
  // Storer warp w + 1 writes consumer w's staged chunks to C, a row at a time (lane j: column j,
  // j + 32, ...: one contiguous run per instruction, whatever C's alignment), while the consumer
  // goes on with its next tile; the pieces are walked as the consumers walk them. (Warp 0's other
  // lanes stay out: as w = -1 they take other barriers' phases, a hang where every tile is staged,
  // as at 4096 x 4097 x 4096.)
  template <typename T, bool C_T, class Walk>
  static __device__ __forceinline__ void storer(const Walk& walk, const ArgsT<T>& a, int64_t tma_cols,
                                                unsigned char* c_buf, uint64_t* c_full, uint64_t* c_empty, int tid) {
    if (tid < 32 || tid / 32 > CONSUMERS) return;
    constexpr int CH = CHUNK<T>, CHUNKS = BN / CH;
    const int w = tid / 32 - 1, lane = tid % 32;
    const uint32_t buf = detail::smem_u32(c_buf + w * C_BYTES);
    unsigned phase = 0;
    for (int p = 0; p < walk.count; ++p) {
      int m0, n0, kb, ke;
      bool solo;
      walk.locate(p, m0, n0, solo, kb, ke);
      if (!staged<T, C_T>(a, tma_cols, m0, n0, w)) continue;
      const int row0 = m0 + 64 * w, rows = min(64, static_cast<int>(a.m) - row0);
      for (int c = 0; c < CHUNKS; ++c) {  // (chunks past n too: the consumer fills every one)
        const int col0 = n0 + c * CH, cols = min(CH, static_cast<int>(a.n) - col0);
        detail::mbar_wait(&c_full[w], phase);
        phase ^= 1;
        T* dst = a.C + static_cast<int64_t>(row0) * a.ldc + col0;
        // A row's CH / 32 loads first, then its stores (independent, in flight together); the rows
        // one at a time (this warpgroup has 40 registers, setmaxnreg_dec in the frame).
        constexpr int PER = CH / 32;
#pragma unroll 1
        for (int r = 0; r < rows; ++r, dst += a.ldc) {
          T v[PER];
#pragma unroll
          for (int i = 0; i < PER; ++i)
            if (lane + 32 * i < cols) v[i] = detail::ld_shared<T>(buf + detail::c_chunk_offset<T>(r, lane + 32 * i));
#pragma unroll
          for (int i = 0; i < PER; ++i)
            if (lane + 32 * i < cols) dst[lane + 32 * i] = v[i];
        }
        detail::mbar_arrive(&c_empty[w]);  // this lane's reads of buf are done
      }
    }
  }
  template <typename T, bool C_T>
  struct Consumer : Inner::template Consumer<T, C_T> {
    // bit 0: a chunk of the buffer is with the storer warp; bit 1: the parity of its release (one
    // register beside the accumulators).
    unsigned handed = 0;
    template <class Ctx>
    __device__ __forceinline__ void store(const Ctx& x, const float (&d)[128], int m0, int n0) {
      if (handed & 1) {  // the storer's last chunk has left the buffer
        detail::mbar_wait(x.c_empty, handed >> 1);
        handed ^= 3;
      }
      if (m0 + 64 * x.cw >= x.a.m) return;  // no rows of C here
      if (Inner::template try_store<T, C_T>(x, d, m0, n0)) return;
      if (C_T || x.a.beta != 0.0f) {  // (staged() less what is known here)
        DirectStore::store<T, C_T>(d, x.a, m0, n0, x.cw, x.c_vec);
        return;
      }
      constexpr int CHUNKS = BN / CHUNK<T>;
#pragma unroll
      for (int c = 0; c < CHUNKS; ++c) {
        if (x.tid % 128 == 0) detail::bulk_wait<0, true>();  // earlier TMA stores have read buf
        if (handed & 1) {
          detail::mbar_wait(x.c_empty, handed >> 1);
          handed ^= 2;
        }
        detail::named_barrier(1 + x.cw, 128);  // (thread 0's bulk_wait: earlier TMA stores)
        detail::fill_c_chunk<T>(d, detail::smem_u32(x.buf), c, x.a.alpha);
        detail::mbar_arrive(x.c_full);  // this thread's part is in buf
        handed |= 1;
      }
    }
  };
};

}  // namespace rungs::sgemm::ws
