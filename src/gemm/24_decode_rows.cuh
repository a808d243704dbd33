// The pass of rung 24 (decode_rows; what it adds and what bounds it: 24_decode_rows.cu) that rung 25
// (decode_splitk) runs over slices of k. Host declarations only: the kernel is compiled once, in
// 24_decode_rows.cu.
#pragma once

#include "gemm/gemm_rung.hpp"

namespace rungs::sgemm::decode_rows {

// Output columns (rows of W) per block with tb = Trans::T, and k elements of A staged in shared memory
// at a time: a slice of k given to one block must be a multiple of kChunk (so 16-byte loads of W stay
// aligned).
constexpr int kBlockCols = 32;
constexpr int kChunk = 1024;
// Rows of A (m) the rung takes; above this the decode shape is over and a tiled rung is the tool.
constexpr int64_t kMaxM = 128;

// Blocks across n of one slice of k: 32 columns a block with W stored n x k (tb = Trans::T), 64 with
// W stored k x n (tb = Trans::N).
int64_t column_blocks(Trans tb, int64_t n);

// Throws Unsupported (naming `rung`) unless m <= kMaxM.
template <typename T>
void check(const ArgsT<T>& a, const char* rung);

// The decode pass over k in slices of `slice` elements (a multiple of kChunk), gridDim.y = S slices.
// part == nullptr: S must be 1 and C gets the alpha/beta epilogue. Otherwise block (x, s) writes the
// plain sums of its slice to part[(s * m + row) * n + col] and C is not touched.
template <typename T>
void launch(const ArgsT<T>& a, int S, int64_t slice, float* part);

}  // namespace rungs::sgemm::decode_rows
