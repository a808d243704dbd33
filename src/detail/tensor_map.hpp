// Host side of the TMA rungs: a 2D tensor map (cuTensorMapEncodeTiled, reached through the
// runtime's driver entry point, so the library links no libcuda).
#pragma once

#include <cuda.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace rungs::detail {

// A tensor map over a row-major matrix of `rows` x `cols` elements of `elem` bytes with row stride
// ld (elements), box = box_rows x box_cols (box_cols * elem == 128: one swizzle row), 128-byte
// swizzle, zero fill out of range. Needs base 16-byte aligned and ld * elem % 16 == 0.
// Throws rungs::Error on failure.
CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType type, int elem, int64_t rows, int64_t cols,
                               int64_t ld, int box_rows, int box_cols);

// The tensor map element type of T (float, __half, __nv_bfloat16).
template <typename T>
CUtensorMapDataType tma_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// True when the library carries sm_90a code (CMAKE_CUDA_ARCHITECTURES names 90a).
bool built_for_sm90a();

// The Hopper-only (sm_90a) rungs: throws rungs::Unsupported naming `rung` unless the library was
// built for sm_90a and the current device is sm_90.
void require_sm90a(const char* rung);

}  // namespace rungs::detail
