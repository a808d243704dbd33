// Operand packing for the TMA rungs: TMA needs a 16-byte aligned base and a row stride that is a
// multiple of 16 bytes, and tf32 and fp8 wgmma read both operands k-contiguous. Where a user's matrix
// breaks that, the rung copies it once per call into stream-ordered scratch (detail::Scratch)
// with an aligned stride, transposed where asked, and runs its fast path on the copy. The copy
// costs a read and a write of the operand at DRAM speed (measured in docs/gemm_tc.md).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/scratch.hpp"
#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::pack {

// The aligned row stride (elements) for rows of `cols` elements of `elem` bytes: a multiple of
// 16 bytes, at least 16 bytes.
int64_t aligned_ld(int64_t cols, int elem);

// True when TMA can read the matrix in place: base 16-byte aligned, ld * elem % 16 == 0.
bool tma_ok(const void* p, int64_t ld, int elem);

// dst (rows x cols, stride ld_dst) = src (rows x cols, stride ld_src), on `stream`.
template <typename T>
void copy_rows(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst,
               cudaStream_t stream, T* lo = nullptr);

// dst (cols x rows, stride ld_dst) = transpose of src (rows x cols, stride ld_src), on `stream`.
template <typename T>
void copy_transposed(const T* src, int64_t ld_src, int64_t rows, int64_t cols, T* dst, int64_t ld_dst,
                     cudaStream_t stream, T* lo = nullptr);
// (lo != nullptr, float: the 3xTF32 split, hi = tf32(x) into dst and lo = tf32(x - hi) into lo,
// same strides.)

// The operands as a TMA rung reads them: in place where TMA can, else an aligned copy held in
// `keep_a` / `keep_b` (freed on the stream after the work enqueued with it). Float (tf32) operands
// must also be k-contiguous (A as m x k, B as n x k: tf32 wgmma's shared-memory operands have no
// transpose): A stored k x m and B stored k x n are copied transposed. `one_mn`: the rung reads
// one m/n-contiguous float operand itself (through registers, swapping A and B for an
// n-contiguous B), so only tn, both operands m/n-contiguous, has A copied. The rounding to tf32 is
// not done here but by the kernels' TMA loads (detail::tma_operand_type).
template <typename T>
ArgsT<T> operands(ArgsT<T> a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b,
                  bool one_mn = false);

// The operands of a 16-bit rung that reads A k-contiguous (the decode rungs: A is the product's
// few rows): as operands(), and A stored k x m (ta == T) copied transposed to m x k, a copy of
// m x k elements. The result has ta == N; B keeps its layout.
template <typename T>
ArgsT<T> operands_a_k(ArgsT<T> a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b);

// The fp8 operands as a TMA rung reads them (rung 28): wgmma reads 8-bit operands K-major only, so
// A stored k x m (ta == T) and B stored k x n (tb == N) are copied transposed (A to m x k, B to
// n x k); an operand TMA cannot read in place (base or ld * 1 byte not a multiple of 16) is copied
// with an aligned ld. The result has ta == N, tb == T. The copies move bytes (the fp8 types, as
// uint8_t), one read and one write of the operand each.
ArgsF8 operands_fp8(ArgsF8 a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b);

// The 3xTF32 operands: A and B each split into a tf32 big and a tf32 small part, k-contiguous
// (A parts m x k with stride lda, B parts n x k with stride ldb), in scratch kept by keep_a / keep_b.
// a_raw: A is not split (the rung splits it in registers) and keeps its layout: A_hi is A as stored
// when TMA can read it, else an aligned copy of it; A_lo stays null; a_mn is set when A is stored
// k x m (then A_hi is k x m with stride lda).
struct Split3 {
  const float *A_hi = nullptr, *A_lo = nullptr, *B_hi = nullptr, *B_lo = nullptr;
  int64_t lda = 0, ldb = 0;
  bool a_mn = false;
};
Split3 split_operands(const Args& a, std::unique_ptr<detail::Scratch>& keep_a, std::unique_ptr<detail::Scratch>& keep_b,
                      bool a_raw = false);

}  // namespace rungs::sgemm::pack
