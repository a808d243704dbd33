// Whether a device pointer's allocation holds a given number of bytes from it: the driver's
// cuPointerGetAttributes (the base and size of the range holding an address), reached through
// the runtime's driver entry point as cuTensorMapEncodeTiled is (core/tensor_map.cpp).
#pragma once

#include <cstddef>

namespace rungs::detail {

enum class MemRange {
  inside,      // [p, p + bytes) lies inside one allocation
  too_short,   // p is in an allocation that ends before p + bytes
  not_device,  // host memory, or memory the driver does not know
  unknown,     // the driver could not say (no entry point, or a failure other than an unknown
               // pointer): the caller skips its check rather than reject memory that may be valid
};

// The driver reports the allocation's size, which may be rounded up to its granularity: an array
// that ends before that is not caught. Device memory from cudaMalloc, cudaMallocManaged,
// cudaMallocAsync pools and VMM mappings (cuMemCreate + cuMemMap) is all found
// (tests/gpu/test_gemm_fp8.cpp, PoolManagedAndVmmScalesAreAccepted).
MemRange device_range(const void* p, size_t bytes);

}  // namespace rungs::detail
