// The kernel of rungs 15 (wgmma_ws), 17 (wgmma_tma_store), 19 (wgmma_streamk), 20 (wgmma_ragged),
// 21 (wgmma_overlap) and 23 (wgmma_balanced), written once: a warp-specialized, persistent,
// clustered wgmma GEMM (sm_90a). What it does and what bounds it: the header comments of
// 15_wgmma_ws.cu (TMA_C = false: the consumers store C straight from registers),
// 17_wgmma_tma_store.cu (TMA_C = true: through shared memory and TMA stores), 19_wgmma_streamk.cu
// (SK = true: the last tiles' k split evenly over all clusters), 20_wgmma_ragged.cu (EDGE = true:
// ragged tiles multiplied only as wide as they are, and C that TMA cannot store written by the
// producer warpgroup's idle warps), 21_wgmma_overlap.cu (OVL = true: each tile's C packed to 16
// bits in registers, its shared-memory fill and TMA stores done under the next tile's first MMAs)
// and 23_wgmma_balanced.cu (BAL = true, with EDGE: a narrow last tile column and a short last tile
// row dealt over the clusters, a narrow tile's stages holding two k tiles). Included by those files
// only.
#pragma once

#include "core/errors.hpp"
#include "detail/gemm_pipeline.cuh"
#include "detail/gemm_tc.cuh"
#include "detail/hopper.cuh"
#include "detail/narrow_deal.hpp"
#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/pack.hpp"

#include <memory>
#include <string>
#include <type_traits>

namespace rungs::sgemm::ws_kernel {

#if defined(RUNGS_WS_TIMELINE)
// scripts/experiments/ws_timeline.cu only: clock64 stamps of a launch's phases, per block (slots:
// that file's header), in a namespace of their own so the library's kernels stay unstamped.
inline namespace timeline {
constexpr int TL_SLOTS = 146, TL_BLOCKS = 264;
__device__ long long g_timeline[TL_BLOCKS * TL_SLOTS];
__device__ __forceinline__ void tl_stamp(int slot) {
  if (blockIdx.x < TL_BLOCKS) g_timeline[blockIdx.x * TL_SLOTS + slot] = clock64();
}
__device__ __forceinline__ void tl_globaltimer(int slot) {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  if (blockIdx.x < TL_BLOCKS) g_timeline[blockIdx.x * TL_SLOTS + slot] = t;
}
#define RUNGS_TL(cond, slot) \
  do {                         \
    if (cond) tl_stamp(slot);  \
  } while (0)
#define RUNGS_TL_GT(cond, slot) \
  do {                            \
    if (cond) tl_globaltimer(slot); \
  } while (0)
#else
#define RUNGS_TL(cond, slot) ((void)0)
#define RUNGS_TL_GT(cond, slot) ((void)0)
#endif


using detail::ceil_div;

constexpr int BM = 128, BN = 256, STAGES = 4;
constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);  // warpgroup 0 produces
constexpr int CLUSTER = 2;  // blocks along m sharing B (1 measured 0.73-0.82x cuBLAS bf16, 2: 0.77-0.96x)
constexpr int ROW = 128;                                         // bytes per smem row (one swizzle row)
constexpr int A_BYTES = BM * ROW, B_BYTES = BN * ROW, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KB
constexpr int C_BYTES = 16384;  // TMA_C: each consumer's C staging buffer (64 rows x 256 bytes)
template <bool TMA_C>
constexpr int smem_bytes() {
  return STAGES * STAGE_BYTES + (TMA_C ? CONSUMERS * C_BYTES : 0) + 1024 /* alignment */ +
         (2 * STAGES + 2 * CONSUMERS) * 8 /* barriers */;
}
constexpr int BAND = 8;  // cluster rows per band of the tile order
static_assert(smem_bytes<true>() <= 227 * 1024, "fits the 227 KB a Hopper block may have");

template <typename T>
constexpr int bk() {  // k per stage: one 128-byte row
  return ROW / int(sizeof(T));
}

// EDGE (rung 20): the columns of B a tile multiplies, from the columns it has left (n - n0 >= 1):
// the narrowest of the wgmma widths 64, 128, 256 that holds them.
__device__ __forceinline__ int edge_width(int cols_left) { return cols_left > 128 ? 256 : cols_left > 64 ? 128 : 64; }

// The tiles of cluster-tile t: the cluster's pair of tile rows (2 * cm, 2 * cm + 1) and column tn.
__device__ __forceinline__ void cluster_tile(int t, int cluster_rows, int tiles_n, int& cm, int& tn) {
  detail::swizzle_tile(t, cluster_rows, tiles_n, BAND, cm, tn);
}

// Stream-K (rung 19): cluster tiles 0 .. dp_tiles - 1 are whole pieces of work, dealt round-robin
// as in rungs 15 and 17 (the walk); the k tiles of the rest, `units` in all in tile order, are cut
// into one contiguous range per cluster (cluster c: units * c / G .. units * (c + 1) / G of G).
// A range that starts inside a tile leaves that tile's partial sum in the workspace (one 64 x 256
// fp32 slot per cluster, block and consumer) and sets its flag; the cluster whose range holds
// the tile's first k tile (it ends its range there) adds the partials of the clusters after it,
// then stores the tile. With G < tiles < 2 G in the split, a range is longer than a tile: a tile
// is cut at most once, and its rest belongs to the next cluster. Rungs 15 and 17 pass dp_tiles =
// all tiles, units = 0.
struct StreamK {
  int dp_tiles = 0;
  int kt = 0;           // k tiles per tile
  int64_t units = 0;    // < 2^31 (else no stream-K)
  float* ws = nullptr;  // partial sums: slot (cluster * CL + rank) * CONSUMERS + consumer, 64 x 256 each
  int* flags = nullptr;  // one per slot, zero before the launch, 1 once its slot holds a partial
};

// This cluster's pieces of work: piece p < count is cluster tile t, k tiles kb .. ke - 1. A counted
// loop with the piece computed from p (a loop driven by a next() that keeps state made the
// compiler leave the epilogue's loop rolled and the accumulators in local memory).
struct Pieces {
  int count, dp;      // dp of the count pieces are whole tiles first, first + stride, ...
  int t0, k0, end;    // then the stream-K range: tile t0 from k tile k0 on, to k tile `end` counted from t0
  // SK = false (rungs 15 and 17): whole tiles only, and none of the stream-K range's 64-bit
  // divisions (the producer waits for them before its first load). Rung 17 at 2048^3 bf16 (one
  // tile per block): 0.93x cuBLAS twice with the divisions (6f94199), 0.94x without them (a18c328),
  // 0.95-0.96x walking whole tiles with no pieces: within the spread of single runs.
  template <bool SK>
  __device__ __forceinline__ Pieces(const StreamK& sk, int first, int clusters, std::bool_constant<SK>) {
    dp = first < sk.dp_tiles ? (sk.dp_tiles - first + clusters - 1) / clusters : 0;
    count = dp, t0 = 0, k0 = 0, end = 0;
    if constexpr (SK) {
      const int kt = max(sk.kt, 1);
      const int u0 = static_cast<int>(sk.units * first / clusters);
      const int u1 = static_cast<int>(sk.units * (first + 1) / clusters);
      t0 = sk.dp_tiles + u0 / kt, k0 = u0 % kt, end = k0 + (u1 - u0);
      count += u1 > u0 ? (end - 1) / kt + 1 : 0;
    }
  }
  // Piece p: cluster tile t, k tiles kb .. ke - 1 (kt: k tiles per tile).
  __device__ __forceinline__ void at(int p, int first, int stride, int kt, int& t, int& kb, int& ke) const {
    if (p < dp) {
      t = first + p * stride, kb = 0, ke = kt;
    } else {
      const int i = p - dp;  // the range's i-th tile
      t = t0 + i, kb = i == 0 ? k0 : 0, ke = min(kt, end - i * kt);
    }
  }
};

// A consumer's 64 x 256 partial sum to / from its workspace slot: float4 i of thread t at
// i * 128 + t (each warp moves 512 contiguous bytes per instruction), through L2 only.
__device__ __forceinline__ void save_partial(const float (&d)[128], float* slot) {
  float4* p = reinterpret_cast<float4*>(slot) + threadIdx.x % 128;
#pragma unroll
  for (int i = 0; i < 32; ++i) __stcg(p + i * 128, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
}
// Loads in groups of 8 float4 (32 registers): all 32 at once would not fit beside d.
__device__ __forceinline__ void add_partial(float (&d)[128], const float* slot) {
  const float4* p = reinterpret_cast<const float4*>(slot) + threadIdx.x % 128;
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    float4 v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = __ldcg(p + (8 * g + i) * 128);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      float* x = &d[4 * (8 * g + i)];
      x[0] += v[i].x, x[1] += v[i].y, x[2] += v[i].z, x[3] += v[i].w;
    }
    asm volatile("" ::: "memory");  // the next group's loads stay after these adds
  }
}

// A_MN: A stored k x m (ta == T), m-contiguous; B_MN: B stored k x n (tb == N), n-contiguous.
// tf32 (T = float): B_MN never; A_MN reads A through registers (wgmma's register form: the
// shared-memory form reads K-major operands only). C_T (tf32): the launch swapped the operands
// (C^T = B^T A^T, so that an n-contiguous B is this kernel's A_MN operand): the kernel's m x n
// result is C's transpose, stored as such.
// BAL (rung 23, with EDGE): a narrow last tile column (<= 64 columns) and a short last tile row (the
// tile rows odd in number: its tiles paired side by side, solo) dealt by detail::NarrowDeal,
// and its tiles' stages hold two k tiles each (A, A', B, B': 16 + 16 + 8 + 8 KB; tf32's register
// path too), so twice the bytes are in flight for a tile whose time is
// the latency of its loads. A k-contiguous B comes in boxes of 64 rows of n for them (map_b64).
template <typename T, bool A_MN, bool B_MN, int CL, bool TMA_C, bool SK, bool EDGE, bool OVL, bool C_T, bool BAL>
__global__ void __launch_bounds__(THREADS, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, ArgsT<T> a, int tiles_m, int tiles_n, bool c_vec,
                    int64_t tma_cols, StreamK sk, detail::NarrowDeal deal, const __grid_constant__ CUtensorMap map_b64) {
  static_assert(!(SK && EDGE), "rung 20's storer warps walk whole tiles only");
  static_assert(!BAL || EDGE, "rung 23 is rung 20 with its ragged edges dealt");
  static_assert(!OVL || (TMA_C && !SK && !EDGE && sizeof(T) == 2), "rung 21: rung 17's epilogue, 16-bit C");
  constexpr bool TF32 = std::is_same_v<T, float>, RS = TF32 && A_MN;
  // BAL, 16-bit: the storer warps' walk (detail::NarrowDeal::Share, with the short last row's walk)
  // spills at 40 and at 48 registers; 56 for the producer warpgroup leaves the consumers 216 (the
  // block's 384 x 168 registers), enough for the shared-memory form (tf32 through registers, RS,
  // needs its 232; its storers fit in 40).
  constexpr bool WIDE_STORER = BAL && !TF32;
  static_assert(!(TF32 && B_MN) && (!C_T || TF32), "tf32: B K-major; C_T for tf32 only");
  constexpr int BK = bk<T>();
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = detail::smem_align_1024(smem_raw);
  unsigned char* c_buf = smem + STAGES * STAGE_BYTES;  // TMA_C: the consumers' C buffers
  uint64_t* full = reinterpret_cast<uint64_t*>(c_buf + (TMA_C ? CONSUMERS * C_BYTES : 0));
  uint64_t* empty = full + STAGES;
  // EDGE: consumer w's C buffer holds a chunk for the storer warp (c_full[w], an arrival from each of
  // the consumer's 128 threads after its own writes) / is free again (c_empty[w], one from each of
  // the storer's 32 lanes after its own reads). Every writer and reader arrives itself: a named
  // barrier and one thread's arrival orders the others too, but racecheck (which follows mbarrier
  // arrivals, not their chaining with bar.sync) reported each such write as a RAW hazard.
  uint64_t* c_full = empty + STAGES;
  uint64_t* c_empty = c_full + CONSUMERS;
  const int tid = threadIdx.x, wg = tid / 128;
  const uint32_t rank = detail::cluster_rank();
  RUNGS_TL(tid == 0, 0);
  RUNGS_TL_GT(tid == 0, 1);
  // The maps this block's TMA will read, fetched while the barriers are set up (13bc237):
  // the producer's, and C's for the consumers' stores where they use it.
  if (tid == 0) {
    detail::tma_prefetch(&map_a), detail::tma_prefetch(&map_b);
    if (BAL && !B_MN) detail::tma_prefetch(&map_b64);
  }
  if (TMA_C && tid == 128 && tma_cols > 0) detail::tma_prefetch(&map_c);
  detail::init_pipeline_barriers(full, empty, STAGES, CONSUMERS * CL);
  if (EDGE && tid == 0) {
    for (int w = 0; w < CONSUMERS; ++w) detail::mbar_init(&c_full[w], 128), detail::mbar_init(&c_empty[w], 32);
    detail::mbar_init_fence();
  }
  RUNGS_TL(tid == 0, 112);
  detail::cluster_sync();  // the peer's barriers exist before anyone signals them
  // TAIL (rungs without EDGE: 15, 17, 19, 21; 7fac9f9): no cluster barrier at the
  // kernel's end; the producer's tail keeps the block until nothing of the peer's can reach it.
  // Rungs 20 and 23 keep the barrier (their producer warpgroup spilled with the tail).
  constexpr bool TAIL = !EDGE;
  RUNGS_TL(tid == 0, 2);
  const detail::ClusterWalk walk = detail::cluster_walk(tiles_m, tiles_n, CL);
  const Pieces pieces(sk, walk.first, walk.stride, std::bool_constant<SK>{});
  const detail::NarrowDeal::Share share = deal.share(BAL ? walk.first : 0);
  const int count = BAL ? share.count : pieces.count;
  RUNGS_TL(tid == 0, 108);
  // This block's tile of cluster tile (cm, tn): the cluster's tile rows 2 cm, 2 cm + 1, column tn.
  auto origin = [&](int cm, int tn, int& m0, int& n0) { m0 = (cm * CL + static_cast<int>(rank)) * BM, n0 = tn * BN; };
  // Piece p of this cluster: this block's tile at (m0, n0), k tiles kb .. ke - 1. solo (BAL): a short
  // pair of the last tile row (detail::NarrowDeal), the two blocks side by side, each loading its own B.
  auto locate = [&](int p, int& m0, int& n0, bool& solo, int& kb, int& ke) {
    int cm = 0, tn = 0;
    solo = false;
    if constexpr (BAL) {
      int index, col = 0;
      if (share.at(p, index)) cm = index, tn = tiles_n - 1;
      else if (deal.short_pair(index, static_cast<int>(rank), col)) solo = true;
      else cluster_tile(index, deal.pair_rows, deal.full_cols, cm, tn);
      kb = 0, ke = sk.kt;
      if (solo) {  // tile column col of the last row; none past the full columns (then rows past m)
        const bool has = col < deal.full_cols;
        m0 = (has ? tiles_m - 1 : tiles_m) * BM, n0 = has ? col * BN : 0;
        return;
      }
    } else {
      int t;
      pieces.at(p, walk.first, walk.stride, sk.kt, t, kb, ke);
      cluster_tile(t, walk.rows, tiles_n, cm, tn);
    }
    origin(cm, tn, m0, n0);
  };
  // BAL: stages of two k tiles for a tile only 64 columns wide (B: 8 KB a k tile, B_PAIR).
  constexpr int B_PAIR = 64 * ROW;
  auto paired = [&](int nb, bool solo) { return BAL && nb == 64 && !solo; };
  constexpr int E = int(sizeof(T)), CHUNK = 256 / E, CHUNKS = BN / CHUNK;  // C's pieces through c_buf
  // EDGE: consumer w's rows of tile (m0, n0) leave through the storer warp (C unaligned for TMA, or
  // a last column TMA would overrun; beta == 0 only: the buffer holds C's type, and alpha * AB
  // rounded to it before adding beta * C would round twice). Rows wholly past m are skipped.
  auto staged = [&](int m0, int n0, int w) {
    return EDGE && !C_T && a.beta == 0.0f && !(TMA_C && n0 + BN <= tma_cols) && m0 + 64 * w < a.m;
  };

  if (wg == 0) {
    detail::setmaxnreg_dec<WIDE_STORER ? 56 : 40>();
    RUNGS_TL(tid == 0, 3);
    if (tid == 0) {
      int it = 0;  // k tiles issued by this block so far, over all its tiles: slot it % STAGES
      // Fill i (use i / STAGES of slot i % STAGES) needs the slot's use before it released by the
      // consumers of both blocks (the first STAGES fills need nothing).
      auto wait_released = [&](int i) {
        if (i >= STAGES) detail::mbar_wait(&empty[i % STAGES], ((i / STAGES) - 1) & 1);
      };
      for (int p = 0; p < count; ++p) {
        int m0, n0, kb, ke;
        bool solo;
        locate(p, m0, n0, solo, kb, ke);
        RUNGS_TL(p == 0, 109);
        // EDGE: only the B columns the tile multiplies (the same in both blocks of the cluster, but
        // for a short pair's).
        const int nb = EDGE ? edge_width(static_cast<int>(a.n) - n0) : BN;
        const bool two = paired(nb, solo);
        const int b_bytes = two ? B_PAIR : B_MN ? nb / 64 * BK * ROW : (nb > BN / CL ? B_BYTES : B_BYTES / CL);
        for (int kt = kb; kt < ke; kt += two ? 2 : 1, ++it) {
          const int s = it % STAGES;
          wait_released(it);
          unsigned char* st = smem + s * STAGE_BYTES;
          uint64_t* bar = &full[s];
          const int tiles = two && kt + 1 < ke ? 2 : 1;  // k tiles in this stage
          // A (own) + B from both blocks, per k tile
          detail::mbar_expect_tx(bar, tiles * (A_BYTES + (EDGE ? b_bytes : B_BYTES)));
          RUNGS_TL(it == 0, 110);
          RUNGS_TL(kt == kb && p < 6, 120 + 5 * p);  // piece p's first k tile: its slot free, expect_tx done
          for (int h = 0; h < tiles; ++h) {  // k tile kt + h: A at st + h A_BYTES, B after both A's
            const int k0 = (kt + h) * BK;
            unsigned char* sa = st + h * A_BYTES;
            if constexpr (A_MN) {  // boxes of BK k-rows x 128 bytes of m (64 16-bit, 32 tf32 elements)
              constexpr int MN_BOX = ROW / int(sizeof(T));
              for (int j = 0; j < BM / MN_BOX; ++j)
                detail::tma_load_2d(sa + j * BK * ROW, &map_a, m0 + MN_BOX * j, k0, bar);
            } else {
              detail::tma_load_2d(sa, &map_a, k0, m0, bar);
            }
            unsigned char* sb = st + (two ? 2 * A_BYTES + h * B_PAIR : A_BYTES);
            constexpr uint16_t all = (1u << CL) - 1;
            if (!B_MN && two) {  // 64 rows of n, k-contiguous, from block 0 to both
              if (rank == 0) detail::tma_load_2d_multicast(sb, &map_b64, k0, n0, bar, all);
            } else if (solo) {  // a short pair: all of its own B, the same boxes, no multicast
              if constexpr (B_MN) {
                for (int j = 0; j < BN / 64 && 64 * j < nb; ++j)
                  detail::tma_load_2d(sb + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar);
              } else {
                for (int r = 0; r < CL && r * (BN / CL) < nb; ++r)
                  detail::tma_load_2d(sb + r * (B_BYTES / CL), &map_b, k0, n0 + r * (BN / CL), bar);
              }
            } else if constexpr (B_MN) {  // this block's BN / 64 / CL boxes of BK k-rows x 64 n
              constexpr int per = BN / 64 / CL;
              for (int j = int(rank) * per; j < int(rank + 1) * per && 64 * j < nb; ++j)
                detail::tma_load_2d_multicast(sb + j * BK * ROW, &map_b, n0 + 64 * j, k0, bar, all);
            } else if (int(rank) * (BN / CL) < nb) {  // this block's BN / CL rows of n, k-contiguous
              detail::tma_load_2d_multicast(sb + rank * (B_BYTES / CL), &map_b, k0, n0 + int(rank) * (BN / CL), bar, all);
            }
          }
          RUNGS_TL(it < 32, 4 + it);  // k tile it's loads issued
        }
      }
      if constexpr (TAIL) {
        // The block may leave once every stage it filled has been released by the consumers of
        // both blocks: then no remote arrive or multicast into it is still on its way (CUTLASS's
        // producer tail, in place of a cluster barrier at the kernel's end).
        for (int j = 0; j < STAGES; ++j) wait_released(it + j);
        RUNGS_TL(true, 111);
      }
    } else if (EDGE && tid >= 32 && tid / 32 <= CONSUMERS) {
      // Storer warp w + 1 writes consumer w's staged chunks to C, a row at a time (lane j: column
      // j, j + 32, ...: one contiguous run per instruction, whatever C's alignment), while the
      // consumer goes on with its next tile; the pieces are walked as the consumers walk them.
      // (Warp 0's other lanes stay out: as w = -1 they take other barriers' phases, a hang where
      // every tile is staged, as at 4096 x 4097 x 4096; ee217e8.)
      const int w = tid / 32 - 1, lane = tid % 32;
      const uint32_t buf = detail::smem_u32(c_buf + w * C_BYTES);
      unsigned phase = 0;
      for (int p = 0; p < count; ++p) {
        int m0, n0, kb, ke;
        bool solo;
        locate(p, m0, n0, solo, kb, ke);
        if (!staged(m0, n0, w)) continue;
        const int row0 = m0 + 64 * w, rows = min(64, static_cast<int>(a.m) - row0);
        for (int c = 0; c < CHUNKS; ++c) {  // (chunks past n too: the consumer fills every one)
          const int col0 = n0 + c * CHUNK, cols = min(CHUNK, static_cast<int>(a.n) - col0);
          detail::mbar_wait(&c_full[w], phase);
          phase ^= 1;
          T* dst = a.C + static_cast<int64_t>(row0) * a.ldc + col0;
          // A row's CHUNK / 32 loads first, then its stores (independent, in flight together); the
          // rows one at a time (this warpgroup has 40 registers, setmaxnreg_dec above).
          constexpr int PER = CHUNK / 32;
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
  } else {
    detail::setmaxnreg_inc<WIDE_STORER ? 216 : 232>();
    RUNGS_TL(tid == 128, 36);
    const int cw = wg - 1;  // this consumer's 64 rows of the 128-row tile
    auto release = [&](int slot) {  // both blocks' producers may refill `slot`
      if (tid % 128 == 0)
        for (uint32_t c = 0; c < CL; ++c) detail::mbar_arrive_cluster(&empty[slot], c);
    };
    int it = 0;
    float d[128];
    // EDGE: bit 0: a chunk of c_buf is with the storer warp; bit 1: the parity of its release
    // (one register beside the accumulators).
    unsigned handed = 0;
    // OVL: the last tile's C, alpha applied, two 16-bit elements a word (detail::pack_acc), still to
    // go out through c_buf and TMA at (pend_row, pend_col) while this tile's first MMAs run
    // (pend_row < 0: nothing pending). Its two chunks go in k tiles kb and kb + 1.
    uint32_t pk[OVL ? 64 : 1];
    int pend_row = -1, pend_col = 0;
    auto emit = [&](auto chunk) {  // chunk c of pk into c_buf, then out by TMA
      constexpr int c = decltype(chunk)::value, CHUNK = 256 / int(sizeof(T));
      detail::send_c_chunk<T>(c_buf + cw * C_BYTES, &map_c, pend_row, pend_col + c * CHUNK, 1 + cw, [&](uint32_t b) {
        if constexpr (OVL) detail::fill_c_chunk_packed<T, c>(pk, b);
      });
    };
    // Piece p's tile of this block (t: its cluster tile's index in the round-robin walk; BAL locates
    // it from p).
    auto tile_of = [&](int p, int t, int& m0, int& n0, bool& solo) {
      if constexpr (BAL) {
        int kb, ke;
        locate(p, m0, n0, solo, kb, ke);
        (void)t;
      } else {
        int cm, tn;
        cluster_tile(t, walk.rows, tiles_n, cm, tn);
        origin(cm, tn, m0, n0);
        solo = false;
      }
    };
    for (int p = 0; p < count; ++p) {
      RUNGS_TL(tid == 128 && p < 6, 116 + 5 * p);  // consumer 0 starts piece p
      int t = 0, kb = 0, ke = sk.kt;
      if constexpr (!BAL) pieces.at(p, walk.first, walk.stride, sk.kt, t, kb, ke);
#pragma unroll
      for (int i = 0; i < 128; ++i) d[i] = 0.0f;
      // The k loop, multiplying the first N columns of B (two: stages of two k tiles, BAL).
      auto mainloop = [&](auto width, bool two) {
        constexpr int N = decltype(width)::value;
        if constexpr (RS) {
          // A's fragments through registers, double-buffered: while stage it's MMAs run (reading
          // one fragment set), the fragments of stage it + 1 are loaded into the other, after
          // wait<1> has retired the group that read it (stage it - 1). Two sets by name (fa, fb),
          // the loop unrolled by two, so no register array is indexed at run time.
          // BAL, a narrow tile: stages of two k tiles (A, A', B, B') here too,
          // each k tile still a step of its own: k tile kt is half h = (kt - kb) % 2 of stage it (A
          // at h A_BYTES, B at 2 A_BYTES + h B_PAIR); a stage's first half releases the stage before
          // (wait<1> has retired its last half). The same loop (a second loop for the pairs made
          // ptxas serialize the kernel's wgmmas, C7512: register resources).
          uint32_t fa[16], fb[16];
          const bool pair = BAL && N == 64 && two;
          auto load = [&](uint32_t (&f)[16], int u, int h) {
            const int s = u % STAGES;
            if (h == 0) detail::mbar_wait(&full[s], (u / STAGES) & 1);
            detail::load_a_frags_mn_tf32(f, smem + s * STAGE_BYTES + h * A_BYTES, cw);
          };
          auto step = [&](const uint32_t (&cur)[16], uint32_t (&nxt)[16], int kt) {
            const int h = pair ? (kt - kb) & 1 : 0;
            detail::wgmma_fence();
            detail::wgmma_stage_64xn_rs<N>(
                d, cur, smem + (it % STAGES) * STAGE_BYTES + (pair ? 2 * A_BYTES + h * B_PAIR : A_BYTES));
            detail::wgmma_commit();
            // Stage it - 1's MMAs have retired: its slot and nxt are free. Stream-K (SK) waits for
            // stage it's too: with a group in flight across stages its partial-sum code spills.
            detail::wgmma_wait<SK ? 0 : 1>();
            if (kt > kb && h == 0) release((it - 1) % STAGES);
            const bool done = h == 1 || !pair || kt + 1 == ke;  // the stage's last k tile
            if (kt + 1 < ke) load(nxt, done ? it + 1 : it, done ? 0 : 1);
            if (done) ++it;
          };
          if (kb < ke) load(fa, it, 0);
          int kt = kb;
          for (; kt + 1 < ke; kt += 2) step(fa, fb, kt), step(fb, fa, kt + 1);
          if (kt < ke) step(fa, fb, kt);
          detail::wgmma_wait<0>();
          if (ke > kb) release((it - 1) % STAGES);
        } else {
          // BAL: a stage of two k tiles is a loop step of its own (a branch between the two
          // stages' wgmmas made ptxas serialize every wgmma of the kernel: C7520).
          if constexpr (BAL && N == 64) {
            int kt = kb;
            for (; two && kt + 1 < ke; kt += 2, ++it) {
              const int s = it % STAGES;
              detail::mbar_wait(&full[s], (it / STAGES) & 1);
              const unsigned char* As = smem + s * STAGE_BYTES;
              const unsigned char* Bs = As + 2 * A_BYTES;  // B, then B' 8 KB on
              detail::wgmma_fence();
              detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As, Bs, cw);
              detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As + A_BYTES, Bs + B_PAIR, cw);
              detail::wgmma_commit();
              detail::wgmma_wait<1>();
              if (kt > kb) release((it - 1) % STAGES);
            }
            if (two && kt < ke) {  // an odd last k tile, alone in its stage (B after both A's)
              const int s = it % STAGES;
              detail::mbar_wait(&full[s], (it / STAGES) & 1);
              const unsigned char* As = smem + s * STAGE_BYTES;
              detail::wgmma_fence();
              detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As, As + 2 * A_BYTES, cw);
              detail::wgmma_commit();
              detail::wgmma_wait<1>();
              if (kt > kb) release((it - 1) % STAGES);
              ++it;
            }
            if (two) {
              detail::wgmma_wait<0>();
              if (ke > kb) release((it - 1) % STAGES);
              return;
            }
          }
          for (int kt = kb; kt < ke; ++kt, ++it) {
            const int s = it % STAGES;
            detail::mbar_wait(&full[s], (it / STAGES) & 1);
            RUNGS_TL(tid == 128 && it < 32, 37 + it);  // k tile it's data here
            RUNGS_TL(tid == 128 && kt == kb && p < 6, 117 + 5 * p);  // piece p's first data here
            const unsigned char* As = smem + s * STAGE_BYTES;
            const unsigned char* Bs = As + A_BYTES;
            detail::wgmma_fence();
            detail::wgmma_stage_64xn<T, A_MN, B_MN, N>(d, As, Bs, cw);
            detail::wgmma_commit();
            if constexpr (OVL) {  // the last tile's C, a chunk per k tile, while these MMAs run
              if (pend_row >= 0 && kt == kb) emit(std::integral_constant<int, 0>{});
              if (pend_row >= 0 && kt == kb + 1) emit(std::integral_constant<int, 1>{});
            }
            detail::wgmma_wait<1>();  // the MMAs of k tile it - 1 have retired: release its slot
            RUNGS_TL(tid == 128 && it < 32, 69 + it);
            if (kt > kb) release((it - 1) % STAGES);
          }
          detail::wgmma_wait<0>();
          RUNGS_TL(tid % 128 == 0 && it <= 32, tid == 128 ? 101 : 106);  // this consumer's MMAs done
          RUNGS_TL(tid == 128 && p < 6, 118 + 5 * p);  // piece p's MMAs done (consumer 0)
          if (ke > kb) release((it - 1) % STAGES);
        }
      };
      if constexpr (EDGE) {
        int m0, n0;
        bool solo;
        tile_of(p, t, m0, n0, solo);
        const int nb = edge_width(static_cast<int>(a.n) - n0);
        const bool two = paired(nb, solo);
        // A consumer whose rows all lie past m multiplies too, 64 columns wide, and stores nothing:
        // with no MMAs at all (a mainloop that only takes and releases the stages) rung 20 hung in
        // about 1 launch in 30 at 2100 x 2052 x 200 tf32 nt with beta != 0 (every stuck waiter was
        // such a consumer, or its block's, at the first stage of the last tile row; rung 17, whose
        // consumers always multiply, never hung there). The cause is not understood; this keeps
        // each consumer's pace through the stages that of rung 17's
        // (scripts/experiments/hang_probe.sh: 9,000 launches clean).
        if (nb == 64 || m0 + 64 * cw >= a.m) mainloop(std::integral_constant<int, 64>{}, two);
        else if (nb == 128) mainloop(std::integral_constant<int, 128>{}, false);
        else mainloop(std::integral_constant<int, 256>{}, false);
      } else {
        mainloop(std::integral_constant<int, 256>{}, false);
      }
      if constexpr (OVL) {  // what a tile of fewer than 2 k tiles left of the last tile's C
        if (pend_row >= 0 && ke - kb < 1) emit(std::integral_constant<int, 0>{});
        if (pend_row >= 0 && ke - kb < 2) emit(std::integral_constant<int, 1>{});
        pend_row = -1;
      }
      auto store_tile = [&] {
        int m0, n0;  // (found only now: fewer registers held beside the accumulators)
        bool solo;
        tile_of(p, t, m0, n0, solo);
        unsigned char* buf = c_buf + cw * C_BYTES;
        if (EDGE && (handed & 1)) {  // the storer's last chunk has left the buffer
          detail::mbar_wait(&c_empty[cw], handed >> 1);
          handed ^= 3;
        }
        if (EDGE && m0 + 64 * cw >= a.m) {
          // no rows of C here
        } else if (C_T) {  // C^T's rows m0 + 64 cw .. are C's columns
          if constexpr (C_T) {
            if (TMA_C && m0 + 64 * cw + 64 <= tma_cols)
              detail::store_acc_64x256_tma_t(d, buf, &map_c, m0 + cw * 64, n0, a.alpha, 1 + cw);
            else
              detail::store_acc_64xn_t(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n),
                                       a.alpha, a.beta);
          }
        } else if (OVL && n0 + BN <= tma_cols) {  // out under the next tile's MMAs (or after the last)
          if constexpr (OVL) detail::pack_acc<T>(d, pk, a.alpha);
          pend_row = m0 + cw * 64, pend_col = n0;
        } else if (TMA_C && n0 + BN <= tma_cols) {
          detail::store_acc_64x256_tma<T>(d, buf, &map_c, m0 + cw * 64, n0, a.alpha, 1 + cw);
        } else if (staged(m0, n0, cw)) {
#pragma unroll
          for (int c = 0; c < CHUNKS; ++c) {
            if (tid % 128 == 0) detail::bulk_wait<0, true>();  // earlier TMA stores have read buf
            if (handed & 1) {
              detail::mbar_wait(&c_empty[cw], handed >> 1);
              handed ^= 2;
            }
            detail::named_barrier(1 + cw, 128);  // (thread 0's bulk_wait: earlier TMA stores)
            detail::fill_c_chunk<T>(d, detail::smem_u32(buf), c, a.alpha);
            detail::mbar_arrive(&c_full[cw]);  // this thread's part is in buf
            handed |= 1;
          }
        } else {
          detail::store_acc_64xn(d, a.C, a.ldc, m0 + cw * 64, n0, static_cast<int>(a.m), static_cast<int>(a.n),
                                 a.alpha, a.beta, c_vec);
        }
      };
      if constexpr (SK) {
        const int slot = (walk.first * CL + static_cast<int>(rank)) * CONSUMERS + cw;
        if (kb > 0) {  // a later part of the tile: leave the partial sum to the tile's owner
          save_partial(d, sk.ws + static_cast<size_t>(slot) * (64 * BN));
          detail::named_barrier(1 + cw, 128);  // the warpgroup's writes, before its flag
          if (tid % 128 == 0) detail::st_release_gpu(&sk.flags[slot], 1);
        } else if (ke < sk.kt) {  // the tile's first part ends this range: the next cluster has the rest
          const int other = slot + CL * CONSUMERS;
          if (tid % 128 == 0)
            while (detail::ld_acquire_gpu(&sk.flags[other]) == 0) __nanosleep(32);
          detail::named_barrier(1 + cw, 128);  // every thread reads after the flag was seen
          add_partial(d, sk.ws + static_cast<size_t>(other) * (64 * BN));
          store_tile();  // (in each branch: a merge after the add made the compiler hold two d's)
        } else {
          store_tile();
        }
      } else {
        store_tile();
        RUNGS_TL(tid % 128 == 0, tid == 128 ? 102 : 107);  // C's stores issued
        RUNGS_TL(tid == 128 && p < 6, 119 + 5 * p);  // piece p's C stores issued (consumer 0)
      }
    }
    if constexpr (OVL) {  // the last tile's C
      if (pend_row >= 0) emit(std::integral_constant<int, 0>{}), emit(std::integral_constant<int, 1>{});
    }
    if (TMA_C && tid % 128 == 0) detail::bulk_wait<0, false>();  // this consumer's C stores are done
    RUNGS_TL(tid == 128, 103);
  }
  // TAIL: no cluster barrier here; the producer's tail above keeps the block until nothing of the
  // peer's can still reach it.
  if constexpr (!TAIL) detail::cluster_sync();  // no block leaves while its peer may still signal or write into it
  RUNGS_TL(tid == 0, 104);
  RUNGS_TL_GT(tid == 0, 105);
}

template <typename T, bool A_MN, bool B_MN, int CL, bool TMA_C, bool SK, bool EDGE, bool OVL, bool C_T = false,
          bool BAL = false>
void launch(const ArgsT<T>& a, const char* name) {
  constexpr int BK = bk<T>(), E = int(sizeof(T));
  const CUtensorMap ma = A_MN ? detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.k, a.m, a.lda, BK, ROW / E)
                              : detail::make_tensor_map_2d(a.A, detail::tma_operand_type<T>(), E, a.m, a.k, a.lda, BM, BK);
  const CUtensorMap mb = B_MN ? detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.k, a.n, a.ldb, BK, ROW / E)
                              : detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.n, a.k, a.ldb, BN / CL, BK);
  // BAL, B k-contiguous: boxes of 64 rows of n for the narrow tiles' paired stages.
  const CUtensorMap mb64 = BAL && !B_MN
                               ? detail::make_tensor_map_2d(a.B, detail::tma_operand_type<T>(), E, a.n, a.k, a.ldb, 64, BK)
                               : CUtensorMap{};
  const int64_t tiles_m = ceil_div(a.m, BM), tiles_n = ceil_div(a.n, BN);
  const int64_t cluster_tiles = ceil_div(tiles_m, CL) * tiles_n;
  if (cluster_tiles > INT32_MAX) throw Unsupported(std::string("rungs: ") + name + ": too many tiles for one launch");
  auto* kernel = &wgmma_ws_kernel<T, A_MN, B_MN, CL, TMA_C, SK, EDGE, OVL, C_T, BAL>;
  constexpr int SMEM_BYTES = smem_bytes<TMA_C>();
  detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), SMEM_BYTES);
  const int fit = detail::max_active_clusters(reinterpret_cast<const void*>(kernel), THREADS, SMEM_BYTES, CL, name);
  const int clusters = static_cast<int>(std::min<int64_t>(cluster_tiles, fit));
  const bool c_vec = reinterpret_cast<uintptr_t>(a.C) % (2 * E) == 0 && a.ldc % 2 == 0;
  // TMA stores need C's base and rows 16-byte aligned, and write alpha * AB only: beta != 0 (or an
  // unaligned C) takes the direct epilogue. They clip a row at the 16-byte chunk that holds column
  // n - 1, not at n (measured on the H100: n = 1, ldc = 16 wrote 7 elements of bf16 padding; also
  // triton-lang/triton#11583): where n * sizeof(T) is not a multiple of 16, only tiles whose 256
  // columns lie inside C use them (tma_cols = n), the last tile column stores directly.
  const bool tma_c = TMA_C && a.beta == 0.0f && reinterpret_cast<uintptr_t>(a.C) % 16 == 0 && (a.ldc * E) % 16 == 0;
  // C_T: C is n x m here (C's columns are this kernel's rows): the clipped dimension is m.
  const int64_t c_cols = C_T ? a.m : a.n, c_rows = C_T ? a.n : a.m;
  const int64_t tma_cols = !tma_c ? 0 : (c_cols * E) % 16 == 0 ? INT64_MAX : c_cols;
  const CUtensorMap mc = tma_c ? detail::make_tensor_map_2d(a.C, detail::tma_type<T>(), E, c_rows, c_cols, a.ldc, 64, 128 / E)
                               : CUtensorMap{};
  // Stream-K: with W = tiles / clusters full waves and a part-filled last one, the last two waves'
  // tiles (W - 1 of them run whole) are shared out by k, so every cluster ends at the same time.
  StreamK sk;
  sk.dp_tiles = static_cast<int>(cluster_tiles);
  sk.kt = static_cast<int>(ceil_div(a.k, static_cast<int64_t>(BK)));
  std::unique_ptr<detail::Scratch> ws, flags;  // freed on the stream after the kernel
  const int64_t last_two = cluster_tiles - (cluster_tiles / clusters - 1) * clusters;
  if (SK && cluster_tiles > clusters && cluster_tiles % clusters != 0 && sk.kt >= 2 &&
      last_two * sk.kt <= INT32_MAX) {
    sk.dp_tiles = static_cast<int>((cluster_tiles / clusters - 1) * clusters);
    sk.units = (cluster_tiles - sk.dp_tiles) * sk.kt;
    const size_t slots = static_cast<size_t>(clusters) * CL * CONSUMERS;
    ws = std::make_unique<detail::Scratch>(slots * 64 * BN * sizeof(float), a.stream);
    flags = std::make_unique<detail::Scratch>(slots * sizeof(int), a.stream, true);
    sk.ws = ws->as<float>(), sk.flags = flags->as<int>();
  }
  // BAL: the last tile column is narrow where its edge width is 64 (n % BN in 1 .. 64); the last
  // cluster row is short where the tile rows are odd in number (the deal pairs it where that pays).
  const bool narrow_last = BAL && a.n % BN != 0 && a.n % BN <= 64;
  const detail::NarrowDeal deal(static_cast<int>(ceil_div(tiles_m, CL)), static_cast<int>(tiles_n), narrow_last, clusters,
                                BAL && tiles_m % CL != 0);
  const detail::ClusterLaunch l(static_cast<unsigned>(clusters * CL), THREADS, SMEM_BYTES, CL, a.stream);
  RUNGS_CUDA(cudaLaunchKernelEx(&l.cfg, kernel, ma, mb, mc, a, static_cast<int>(tiles_m), static_cast<int>(tiles_n),
                                c_vec, tma_cols, sk, deal, mb64));
  detail::check_launch(name);
#if defined(RUNGS_HANG_DEBUG)
  detail::hang_report<<<1, 1, 0, a.stream>>>();
#endif
}

template <bool TMA_C, bool SK = false, bool EDGE = false, bool OVL = false, bool BAL = false, typename T>
void run_any(const ArgsT<T>& user, const char* name) {
  detail::require_sm90a(name);
  std::unique_ptr<detail::Scratch> keep_a, keep_b;  // freed on the stream after the kernel
  const ArgsT<T> a = pack::operands(user, keep_a, keep_b, true);
  detail::dispatch_trans(a.ta, a.tb, [&](auto ta, auto tb) {
    if constexpr (std::is_same_v<T, float>) {  // operands() left no tn: A or B (or both) K-major
      if constexpr (decltype(tb)::value) {  // B K-major: A K-major in shared memory, or MN-major through registers
        launch<T, decltype(ta)::value, false, CLUSTER, TMA_C, SK, EDGE, false, false, BAL>(a, name);
      } else if constexpr (!decltype(ta)::value) {  // nn: C^T = B^T A^T, B (n-contiguous) the A_MN operand
        ArgsT<T> s = a;
        s.m = a.n, s.n = a.m, s.A = a.B, s.lda = a.ldb, s.B = a.A, s.ldb = a.lda, s.ta = Trans::T, s.tb = Trans::T;
        launch<T, true, false, CLUSTER, TMA_C, SK, EDGE, false, true, BAL>(s, name);
      } else {  // tn: operands() copies A k-contiguous, so this is a bug, not a shape to skip
        throw Error(std::string("rungs: ") + name + ": tf32 tn reached the kernel uncopied");
      }
    } else {
      launch<T, decltype(ta)::value, !decltype(tb)::value, CLUSTER, TMA_C, SK, EDGE, OVL, false, BAL>(a, name);
    }
  });
}

#if defined(RUNGS_WS_TIMELINE)
}  // namespace timeline
#endif
}  // namespace rungs::sgemm::ws_kernel
