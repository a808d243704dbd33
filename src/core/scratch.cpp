#include "core/scratch.hpp"

#include "core/errors.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace rungs::detail {

namespace {

constexpr int kMaxDevices = 64;

// One pool per device, created on first use and kept for the life of the process (the
// driver reclaims it at exit). The release threshold keeps freed memory in the pool, so the
// steady state of repeated calls allocates nothing from the driver.
cudaMemPool_t pool_for_current_device() {
  static std::array<cudaMemPool_t, kMaxDevices> pools{};
  static std::mutex mu;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) throw Error("rungs: device index " + std::to_string(dev) + " out of range");
  std::lock_guard<std::mutex> lock(mu);
  if (pools[dev] == nullptr) {
    const RelaxedCaptureMode relaxed;  // the first call may come while its stream is captured
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p = nullptr;
    RUNGS_CUDA(cudaMemPoolCreate(&p, &props));
    uint64_t keep = UINT64_MAX;
    RUNGS_CUDA(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[dev] = p;
  }
  return pools[dev];
}

}  // namespace

Scratch::Scratch(size_t bytes, cudaStream_t stream, bool zero) : bytes_(bytes), stream_(stream) {
  if (bytes == 0) return;
  RUNGS_CUDA(cudaMallocFromPoolAsync(&p_, bytes, pool_for_current_device(), stream));
  if (zero) {
    const cudaError_t err = cudaMemsetAsync(p_, 0, bytes, stream);
    if (err != cudaSuccess) {
      cudaFreeAsync(p_, stream);
      p_ = nullptr;
      throw_cuda(err, "cudaMemsetAsync(scratch)", __FILE__, __LINE__);
    }
  }
}

Scratch::~Scratch() {
  if (p_) cudaFreeAsync(p_, stream_);  // an error here would also show at the next call
}

int sm_count() {
  static std::array<std::atomic<int>, kMaxDevices> cache{};
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  if (dev >= 0 && dev < kMaxDevices) {
    const int v = cache[dev].load(std::memory_order_relaxed);
    if (v) return v;
  }
  int sms = 0;
  RUNGS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (dev >= 0 && dev < kMaxDevices) cache[dev].store(sms, std::memory_order_relaxed);
  return sms;
}

}  // namespace rungs::detail
