// core/mem_range.hpp: cuPointerGetAttributes through cudaGetDriverEntryPointByVersion.
#include "core/mem_range.hpp"

#include "core/errors.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

namespace rungs::detail {

namespace {
// cuPointerGetAttributes, not cuMemGetAddressRange: for an address the driver does not know it
// succeeds with empty attributes where the other fails (CUDA_ERROR_NOT_FOUND), which
// compute-sanitizer reports as an API error on every check of a host pointer.
PFN_cuPointerGetAttributes_v7000 attributes_fn() {
  static PFN_cuPointerGetAttributes_v7000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    fn = reinterpret_cast<PFN_cuPointerGetAttributes_v7000>(driver_entry_point("cuPointerGetAttributes", 7000));
  });
  return fn;
}
}  // namespace

MemRange device_range(const void* p, size_t bytes) {
  const RelaxedCaptureMode relaxed;  // pointer queries are not stream work; allowed while capturing
  // The runtime first: it makes the device's primary context current on this thread (the driver
  // call needs one) and tells pinned host memory apart. Pageable host memory is "unregistered" to
  // it; so the driver decides for those (it knows every device allocation, VMM mappings included).
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // not sticky; clear it so that no later check reports it
    return MemRange::unknown;
  }
  if (attr.type == cudaMemoryTypeHost) return MemRange::not_device;
  const PFN_cuPointerGetAttributes_v7000 fn = attributes_fn();
  if (!fn) return MemRange::unknown;
  CUpointer_attribute what[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned int type = 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  void* data[] = {&type, &base, &size};
  const CUresult r = fn(3, what, data, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)));
  if (r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE) return MemRange::not_device;
  // Any other failure (a context problem, a kind of allocation this driver's query does not cover):
  // no answer, and the caller skips the length check rather than reject memory that may be valid.
  if (r != CUDA_SUCCESS) return MemRange::unknown;
  if (type == 0) return MemRange::not_device;  // no allocation, mapping or registration of CUDA's
  if (size == 0) return MemRange::unknown;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = static_cast<uintptr_t>(base) + size;
  return at >= static_cast<uintptr_t>(base) && bytes <= end - at ? MemRange::inside : MemRange::too_short;
}

}  // namespace rungs::detail
