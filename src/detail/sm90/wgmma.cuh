// Hopper warpgroup MMA (wgmma, sm_90a) from one table: the instruction for every shape and type
// the rungs use, d (64 x N per warpgroup, fp32, N / 2 registers a thread) = (accumulate ? d : 0)
// + A (64 x K) * B (K x N), with
//   - the element types: __nv_bfloat16 and __half (K = 16; either operand K-major or MN-major),
//     float as tf32 (K = 8, both K-major), __nv_fp8_e4m3 / __nv_fp8_e5m2 in any pair (K = 32, both
//     K-major): wgmma has no transpose for 32- and 8-bit types;
//   - B always from shared memory (a matrix descriptor, smem_desc); A from shared memory (mma) or
//     from four 32-bit registers a thread (mma_rs: tf32);
//   - accumulate a compile-time true (an immediate, `d += A B`) or a run-time bool (a fresh sum
//     where false).
// N is any width the table lists (8, 16, 32, 56, 64, 112, 128, 224, 256); a width is one row of
// the table at the end of this file. Also here: the fences and groups that order wgmma, and the
// shared-memory descriptor of the 128-byte swizzle TMA writes.
// Device code for targets other than sm_90a compiles a __trap() in place of each instruction (see
// sync.cuh); the host never launches those kernels there.
#pragma once

#include "detail/sm90/sync.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

namespace rungs::detail {

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
// Until at most N of this warpgroup's committed wgmma groups are in flight.
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
//   K-major operand (rows of 128 B: 64 16-bit, 32 tf32 or 128 fp8 elements): SBO = 1024 (8 rows),
//     LBO unused; the next k step inside the 128-byte row is start + its bytes.
//   MN-major operand (rows of 64 m/n elements, one row per k): SBO = 1024 (the next 8 k),
//     LBO = the bytes between 64-wide m/n blocks (one TMA box each).
// Adding b / 16 to a descriptor moves its start address b bytes (b a multiple of 16, inside the
// 18-bit address field).
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

// K, the depth of one instruction, for an element type: a 32-byte slice of a 128-byte row.
template <typename T>
constexpr int wgmma_k() {
  return 32 / int(sizeof(T));
}

// The table's rows: WgmmaRow<R> issues the instructions whose accumulator is R registers a thread.
template <int R>
struct WgmmaRow;

// d = (accumulate ? d : 0) + A * B over N columns (N / 2 of d's R registers: a 64 x N product is a
// prefix of a wider one, columns 8j .. 8j + 7 being d[4j .. 4j + 3]). A_MN / B_MN: the operand is
// MN-major (16-bit types only). `accumulate`: std::true_type{} (the default) or a bool.
template <int N, typename TA, typename TB, bool A_MN = false, bool B_MN = false, int R, class Acc = std::true_type>
__device__ __forceinline__ void wgmma(float (&d)[R], uint64_t da, uint64_t db, Acc accumulate = {}) {
  static_assert(R >= N / 2, "N / 2 accumulator registers");
  static_assert(sizeof(TA) == sizeof(TB), "operands of one width");
  static_assert(sizeof(TA) == 2 || (!A_MN && !B_MN), "only 16-bit operands may be MN-major");
  WgmmaRow<N / 2>::template ss<TA, TB, A_MN, B_MN>(d, da, db, accumulate);
}
// The same with A from registers (tf32: a thread's four words of A's 64 x 8 slice, rows 16w + g
// (+ 8), k q (+ 4), warp w, lane 4g + q).
template <int N, int R, class Acc = std::true_type>
__device__ __forceinline__ void wgmma_rs_tf32(float (&d)[R], const uint32_t (&a)[4], uint64_t db, Acc accumulate = {}) {
  static_assert(R >= N / 2, "N / 2 accumulator registers");
  WgmmaRow<N / 2>::rs_tf32(d, a, db, accumulate);
}

// ---- the table ----
// PTX's operand list of R accumulator registers, "{%0, %1, ..., %R-1}", composed from runs of
// decimal indices (RUNGS_WG_D(t, a, b): %ta .. %tb, t a leading digit string, maybe empty), and
// the matching read-write constraints.
#define RUNGS_WG_I(i) ", %" #i
#define RUNGS_WG_X(t, u) RUNGS_WG_I(t##u)
#define RUNGS_WG_2(t, a, b) RUNGS_WG_X(t, a) RUNGS_WG_X(t, b)
#define RUNGS_WG_D4(t) RUNGS_WG_2(t, 0, 1) RUNGS_WG_2(t, 2, 3)
#define RUNGS_WG_D6(t) RUNGS_WG_D4(t) RUNGS_WG_2(t, 4, 5)
#define RUNGS_WG_D8(t) RUNGS_WG_D6(t) RUNGS_WG_2(t, 6, 7)
#define RUNGS_WG_D10(t) RUNGS_WG_D8(t) RUNGS_WG_2(t, 8, 9)
#define RUNGS_WG_UNITS(n) "{%0" RUNGS_WG_UNITS_##n
#define RUNGS_WG_UNITS_4 RUNGS_WG_I(1) RUNGS_WG_I(2) RUNGS_WG_I(3)
#define RUNGS_WG_UNITS_8 RUNGS_WG_UNITS_4 RUNGS_WG_I(4) RUNGS_WG_I(5) RUNGS_WG_I(6) RUNGS_WG_I(7)
#define RUNGS_WG_UNITS_10 RUNGS_WG_UNITS_8 RUNGS_WG_I(8) RUNGS_WG_I(9)
#define RUNGS_WG_TENS_2 RUNGS_WG_UNITS(10) RUNGS_WG_D10(1)
#define RUNGS_WG_TENS_5 RUNGS_WG_TENS_2 RUNGS_WG_D10(2) RUNGS_WG_D10(3) RUNGS_WG_D10(4)
#define RUNGS_WG_TENS_11 RUNGS_WG_TENS_5 RUNGS_WG_D10(5) RUNGS_WG_D10(6) RUNGS_WG_D10(7) RUNGS_WG_D10(8) \
  RUNGS_WG_D10(9) RUNGS_WG_D10(10)
#define RUNGS_WG_LIST_4 RUNGS_WG_UNITS(4) "}"
#define RUNGS_WG_LIST_8 RUNGS_WG_UNITS(8) "}"
#define RUNGS_WG_LIST_16 RUNGS_WG_UNITS(10) RUNGS_WG_D6(1) "}"
#define RUNGS_WG_LIST_28 RUNGS_WG_TENS_2 RUNGS_WG_D8(2) "}"
#define RUNGS_WG_LIST_32 RUNGS_WG_TENS_2 RUNGS_WG_D10(2) RUNGS_WG_2(3, 0, 1) "}"
#define RUNGS_WG_LIST_56 RUNGS_WG_TENS_5 RUNGS_WG_D6(5) "}"
#define RUNGS_WG_LIST_64 RUNGS_WG_TENS_5 RUNGS_WG_D10(5) RUNGS_WG_D4(6) "}"
#define RUNGS_WG_LIST_112 RUNGS_WG_TENS_11 RUNGS_WG_2(11, 0, 1) "}"
#define RUNGS_WG_LIST_128 RUNGS_WG_TENS_11 RUNGS_WG_D10(11) RUNGS_WG_D8(12) "}"
#define RUNGS_WG_F4(o) "+f"(d[o]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3])
#define RUNGS_WG_F8(o) RUNGS_WG_F4(o), RUNGS_WG_F4(o + 4)
#define RUNGS_WG_F16(o) RUNGS_WG_F8(o), RUNGS_WG_F8(o + 8)
#define RUNGS_WG_F32(o) RUNGS_WG_F16(o), RUNGS_WG_F16(o + 16)
#define RUNGS_WG_F64(o) RUNGS_WG_F32(o), RUNGS_WG_F32(o + 32)
#define RUNGS_WG_OUT_4 RUNGS_WG_F4(0)
#define RUNGS_WG_OUT_8 RUNGS_WG_F8(0)
#define RUNGS_WG_OUT_16 RUNGS_WG_F16(0)
#define RUNGS_WG_OUT_28 RUNGS_WG_F16(0), RUNGS_WG_F8(16), RUNGS_WG_F4(24)
#define RUNGS_WG_OUT_32 RUNGS_WG_F32(0)
#define RUNGS_WG_OUT_56 RUNGS_WG_F32(0), RUNGS_WG_F16(32), RUNGS_WG_F8(48)
#define RUNGS_WG_OUT_64 RUNGS_WG_F64(0)
#define RUNGS_WG_OUT_112 RUNGS_WG_F64(0), RUNGS_WG_F32(64), RUNGS_WG_F16(96)
#define RUNGS_WG_OUT_128 RUNGS_WG_F64(0), RUNGS_WG_F64(64)

// One instruction. SHAPE: "m64nNkK"; TYPES: ".f32.bf16.bf16" and the like; A: "%i" of da or the
// braced registers of A; B, P: "%i" of db and of the accumulate flag (an immediate 1 under the
// "n" constraint, else a register); TAIL: ";" or ", %i, %j;" (the transposes of 16-bit types);
// then the constraints of the inputs.
#define RUNGS_WG_ASM(R, SHAPE, TYPES, A, B, P, TAIL, ...)                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                                             \
               "wgmma.mma_async.sync.aligned." SHAPE TYPES " " RUNGS_WG_LIST_##R ", " A ", " B ", p, 1, 1" TAIL \
               "\n}\n"                                                                                     \
               : RUNGS_WG_OUT_##R                                                                         \
               : __VA_ARGS__)
// The accumulate operand: an immediate 1, or the bool's register.
#define RUNGS_WG_ACC(acc) "n"(1)
#define RUNGS_WG_ACC_R(acc) "r"(static_cast<int>(acc))
// A row of the table: the width N, its R = N / 2 registers and the indices that follow them
// (I0 .. I5, each a decimal literal R, R + 1, ...). Every type pair of the shared-memory form, and
// tf32 with A from registers, each with an immediate or a run-time accumulate flag.
#define RUNGS_WG_ROW(N, R, I0, I1, I2, I3, I4, I5)                                                         \
  template <>                                                                                              \
  struct WgmmaRow<R> {                                                                                     \
    template <typename TA, typename TB, bool A_MN, bool B_MN, int RR, class Acc>                          \
    static __device__ __forceinline__ void ss(float (&d)[RR], uint64_t da, uint64_t db, Acc acc) {        \
      RUNGS_WG_IF_SM90A(                                                                                   \
          constexpr bool imm = std::is_same_v<Acc, std::true_type>;                                        \
          constexpr int ta = A_MN ? 1 : 0, tb = B_MN ? 1 : 0;                                              \
          constexpr bool a4 = std::is_same_v<TA, __nv_fp8_e4m3>, b4 = std::is_same_v<TB, __nv_fp8_e4m3>; \
          if constexpr (std::is_same_v<TA, __nv_bfloat16>) {                                               \
            static_assert(std::is_same_v<TB, TA>, "bf16 x bf16");                                          \
            if constexpr (imm)                                                                             \
              RUNGS_WG_ASM(R, "m64n" #N "k16", ".f32.bf16.bf16", "%" #I0, "%" #I1, "%" #I2,                \
                           ", %" #I3 ", %" #I4 ";", "l"(da), "l"(db), RUNGS_WG_ACC(acc), "n"(ta), "n"(tb));      \
            else                                                                                           \
              RUNGS_WG_ASM(R, "m64n" #N "k16", ".f32.bf16.bf16", "%" #I0, "%" #I1, "%" #I2,                \
                           ", %" #I3 ", %" #I4 ";", "l"(da), "l"(db), RUNGS_WG_ACC_R(acc), "n"(ta), "n"(tb));    \
          } else if constexpr (std::is_same_v<TA, __half>) {                                               \
            static_assert(std::is_same_v<TB, TA>, "f16 x f16");                                            \
            if constexpr (imm)                                                                             \
              RUNGS_WG_ASM(R, "m64n" #N "k16", ".f32.f16.f16", "%" #I0, "%" #I1, "%" #I2,                  \
                           ", %" #I3 ", %" #I4 ";", "l"(da), "l"(db), RUNGS_WG_ACC(acc), "n"(ta), "n"(tb));      \
            else                                                                                           \
              RUNGS_WG_ASM(R, "m64n" #N "k16", ".f32.f16.f16", "%" #I0, "%" #I1, "%" #I2,                  \
                           ", %" #I3 ", %" #I4 ";", "l"(da), "l"(db), RUNGS_WG_ACC_R(acc), "n"(ta), "n"(tb));    \
          } else if constexpr (std::is_same_v<TA, float>) {                                                \
            static_assert(std::is_same_v<TB, TA>, "tf32 x tf32");                                          \
            if constexpr (imm)                                                                             \
              RUNGS_WG_ASM(R, "m64n" #N "k8", ".f32.tf32.tf32", "%" #I0, "%" #I1, "%" #I2, ";", "l"(da),   \
                           "l"(db), RUNGS_WG_ACC(acc));                                                    \
            else                                                                                           \
              RUNGS_WG_ASM(R, "m64n" #N "k8", ".f32.tf32.tf32", "%" #I0, "%" #I1, "%" #I2, ";", "l"(da),   \
                           "l"(db), RUNGS_WG_ACC_R(acc));                                                  \
          } else {                                                                                         \
            static_assert(sizeof(TA) == 1 && (a4 || std::is_same_v<TA, __nv_fp8_e5m2>) &&                  \
                              (b4 || std::is_same_v<TB, __nv_fp8_e5m2>),                                   \
                          "bf16, f16, tf32 (float), or __nv_fp8_e4m3 / __nv_fp8_e5m2 in any pair");         \
            RUNGS_WG_FP8(R, N, I0, I1, I2, a4, b4, imm);                                                   \
          })                                                                                               \
    }                                                                                                      \
    template <int RR, class Acc>                                                                           \
    static __device__ __forceinline__ void rs_tf32(float (&d)[RR], const uint32_t (&a)[4], uint64_t db,   \
                                                   Acc acc) {                                              \
      RUNGS_WG_IF_SM90A(                                                                                   \
          if constexpr (std::is_same_v<Acc, std::true_type>)                                               \
              RUNGS_WG_ASM(R, "m64n" #N "k8", ".f32.tf32.tf32", "{%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}", \
                           "%" #I4, "%" #I5, ";", "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db),     \
                           RUNGS_WG_ACC(acc));                                                             \
          else RUNGS_WG_ASM(R, "m64n" #N "k8", ".f32.tf32.tf32", "{%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}", \
                            "%" #I4, "%" #I5, ";", "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db),    \
                            RUNGS_WG_ACC_R(acc));)                                                         \
    }                                                                                                      \
  };
// fp8: the four type pairs, each with an immediate or a run-time accumulate flag.
#define RUNGS_WG_FP8_1(R, N, I0, I1, I2, AT, BT, imm)                                                    \
  if constexpr (imm)                                                                                        \
    RUNGS_WG_ASM(R, "m64n" #N "k32", ".f32." AT "." BT, "%" #I0, "%" #I1, "%" #I2, ";", "l"(da), "l"(db), \
                 RUNGS_WG_ACC(acc));                                                                       \
  else                                                                                                      \
    RUNGS_WG_ASM(R, "m64n" #N "k32", ".f32." AT "." BT, "%" #I0, "%" #I1, "%" #I2, ";", "l"(da), "l"(db), \
                 RUNGS_WG_ACC_R(acc))
#define RUNGS_WG_FP8(R, N, I0, I1, I2, a4, b4, imm)                          \
  if constexpr (a4 && b4) {                                                   \
    RUNGS_WG_FP8_1(R, N, I0, I1, I2, "e4m3", "e4m3", imm);                    \
  } else if constexpr (a4) {                                                  \
    RUNGS_WG_FP8_1(R, N, I0, I1, I2, "e4m3", "e5m2", imm);                    \
  } else if constexpr (b4) {                                                  \
    RUNGS_WG_FP8_1(R, N, I0, I1, I2, "e5m2", "e4m3", imm);                    \
  } else {                                                                    \
    RUNGS_WG_FP8_1(R, N, I0, I1, I2, "e5m2", "e5m2", imm);                    \
  }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RUNGS_WG_IF_SM90A(...) __VA_ARGS__
#else
#define RUNGS_WG_IF_SM90A(...) __trap();
#endif

// The widths: N, R = N / 2, and the operand indices after the R accumulators.
RUNGS_WG_ROW(8, 4, 4, 5, 6, 7, 8, 9)
RUNGS_WG_ROW(16, 8, 8, 9, 10, 11, 12, 13)
RUNGS_WG_ROW(32, 16, 16, 17, 18, 19, 20, 21)
RUNGS_WG_ROW(56, 28, 28, 29, 30, 31, 32, 33)
RUNGS_WG_ROW(64, 32, 32, 33, 34, 35, 36, 37)
RUNGS_WG_ROW(112, 56, 56, 57, 58, 59, 60, 61)
RUNGS_WG_ROW(128, 64, 64, 65, 66, 67, 68, 69)
RUNGS_WG_ROW(224, 112, 112, 113, 114, 115, 116, 117)
RUNGS_WG_ROW(256, 128, 128, 129, 130, 131, 132, 133)

#undef RUNGS_WG_IF_SM90A
#undef RUNGS_WG_FP8
#undef RUNGS_WG_FP8_1
#undef RUNGS_WG_ROW
#undef RUNGS_WG_ACC_R
#undef RUNGS_WG_ACC
#undef RUNGS_WG_ASM

}  // namespace rungs::detail
