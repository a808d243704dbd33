// Host side of the TMA rungs: a 2D tensor map (cuTensorMapEncodeTiled, reached through the
// runtime's driver entry point, so the library links no libcuda), the sm_90a checks, and cluster
// launches.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace rungs::detail {

// A tensor map over a row-major matrix of `rows` x `cols` elements of `elem` bytes with row stride
// ld (elements), box = box_rows x box_cols (box_cols * elem == 128: one swizzle row), 128-byte
// swizzle, zero fill out of range, L2 fills from DRAM promoted to `promotion` (256 bytes unless the
// rung measured better: the decode rungs' 128-row boxes read faster at 64). Needs base 16-byte
// aligned and ld * elem % 16 == 0. Throws rungs::Error on failure.
CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType type, int elem, int64_t rows, int64_t cols,
                               int64_t ld, int box_rows, int box_cols,
                               CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

// The tensor map element type of T (float, __half, __nv_bfloat16; a 1-byte T, the fp8 types:
// bytes, which TMA moves as they are).
template <typename T>
CUtensorMapDataType tma_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else if constexpr (sizeof(T) == 1) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// The tensor map element type of an operand T that a tensor-core rung multiplies: tma_type<T>(),
// except float (tf32 math), whose TMA loads round each element to tf32 (to nearest) on its way into
// shared memory (CU_TENSOR_MAP_DATA_TYPE_TFLOAT32). tf32 wgmma reads fp32 bits truncated to tf32
// (up to twice the error of rounding, measured 1.3e-3 on a 1x1x1 product), so this is what makes a
// k-contiguous float operand usable in place, without a rounding copy.
template <typename T>
CUtensorMapDataType tma_operand_type() {
  if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
  else return tma_type<T>();
}

// True when the library carries sm_90a code (CMAKE_CUDA_ARCHITECTURES names 90a).
bool built_for_sm90a();

// The Hopper-only (sm_90a) rungs: throws rungs::Unsupported naming `rung` unless the library was
// built for sm_90a and the current device is sm_90.
void require_sm90a(const char* rung);

// The launch configuration of `blocks` blocks of `threads` threads with `smem` bytes of dynamic
// shared memory on `stream`, in clusters of `cluster` blocks along x (cudaLaunchKernelEx(&cfg, ...)).
// A cluster of 1 is a plain launch, with no cluster attribute (each block its own cluster, as on
// any launch on sm_90), as a kernel launched with <<<>>> is.
struct ClusterLaunch {
  ClusterLaunch(unsigned blocks, int threads, int smem, int cluster, cudaStream_t stream);
  ClusterLaunch(const ClusterLaunch&) = delete;  // cfg points at attr
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr{};
};

// Clusters of `cluster` blocks of `kernel` (threads, smem as launched) that fit on the current
// device at once: cudaOccupancyMaxActiveClusters, cached per (kernel, cluster, device), a cluster
// that does not fit too. Throws rungs::Unsupported naming `rung` when none fits.
int max_active_clusters(const void* kernel, int threads, int smem, int cluster, const char* rung);

}  // namespace rungs::detail
