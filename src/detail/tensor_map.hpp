// Host side of the TMA rungs: a 2D tensor map (cuTensorMapEncodeTiled, reached through the
// runtime's driver entry point, so the library links no libcuda).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace rungs::detail {

// A tensor map over a row-major matrix of `rows` x `cols` elements of `elem` bytes with row stride
// ld (elements), box = box_rows x box_cols (box_cols * elem == 128: one swizzle row), 128-byte
// swizzle, zero fill out of range. Needs base 16-byte aligned and ld * elem % 16 == 0.
// Throws rungs::Error on failure.
CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType type, int elem, int64_t rows, int64_t cols,
                               int64_t ld, int box_rows, int box_cols);

}  // namespace rungs::detail
