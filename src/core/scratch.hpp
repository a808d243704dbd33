// Temporary device memory for the rungs that need it (split-K partials, reduction partials,
// counters). Stream-ordered: allocated and freed on the caller's stream from a pool the
// library owns (one per device, memory kept between calls), so two calls on two streams
// never share bytes and no call waits for the device. Never a static buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rungs::detail {

class Scratch {
 public:
  // bytes == 0 gives a null pointer. zero: cudaMemsetAsync to 0 on the stream after allocation.
  Scratch(size_t bytes, cudaStream_t stream, bool zero = false);
  ~Scratch();  // freed on the stream (after the work enqueued on it that uses the memory)
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Streaming multiprocessors of the current device (cached per device): grids sized from it.
int sm_count();

}  // namespace rungs::detail
