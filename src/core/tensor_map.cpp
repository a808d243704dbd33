// The 2D tensor map of the TMA rungs (core/tensor_map.hpp).
#include "core/tensor_map.hpp"

#include "core/errors.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <tuple>
#include <string>

namespace rungs::detail {

namespace {
PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver_entry_point("cuTensorMapEncodeTiled", 12000));
  });
  if (!fn) throw Error("rungs: cuTensorMapEncodeTiled is not available from the CUDA driver");
  return fn;
}
}  // namespace

CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType type, int elem, int64_t rows, int64_t cols,
                               int64_t ld, int box_rows, int box_cols, CUtensorMapL2promotion promotion) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * static_cast<cuuint64_t>(elem)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode_fn()(&map, type, 2, const_cast<void*>(base), dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error("rungs: cuTensorMapEncodeTiled failed (error " + std::to_string(static_cast<int>(r)) + ") for a " +
                std::to_string(rows) + " x " + std::to_string(cols) + " matrix, ld " + std::to_string(ld));
  return map;
}

bool built_for_sm90a() {
#if defined(RUNGS_HAVE_SM90A)
  return true;
#else
  return false;
#endif
}

void require_sm90a(const char* rung) {
  if (!built_for_sm90a()) unsupported(rung, "the library was built without sm_90a (CMAKE_CUDA_ARCHITECTURES)");
  const int sm = current_sm();
  if (sm != 90) unsupported(rung, "needs a Hopper GPU (sm_90); this one is sm_" + std::to_string(sm));
}

ClusterLaunch::ClusterLaunch(unsigned blocks, int threads, int smem, int cluster, cudaStream_t stream) {
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = static_cast<size_t>(smem);
  cfg.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(cluster), attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
}

int max_active_clusters(const void* kernel, int threads, int smem, int cluster, const char* rung) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, int>, int> cache;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  const auto key = std::make_tuple(kernel, cluster, dev);
  int n = -1;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto i = cache.find(key);
    if (i != cache.end()) n = i->second;
  }
  if (n < 0) {
    ClusterLaunch l(static_cast<unsigned>(cluster * 64), threads, smem, cluster, nullptr);
    l.cfg.numAttrs = 1;  // the query needs the cluster's size, 1 too
    {
      const RelaxedCaptureMode relaxed;  // the first call may come while its stream is captured
      RUNGS_CUDA(cudaOccupancyMaxActiveClusters(&n, kernel, &l.cfg));
    }
    // Kept when none fits too: the decode rungs try the largest cluster first on every call.
    std::lock_guard<std::mutex> lock(mu);
    cache[key] = n;
  }
  if (n < 1) unsupported(rung, "no cluster of " + std::to_string(cluster) + " blocks fits this GPU");
  return n;
}

}  // namespace rungs::detail
