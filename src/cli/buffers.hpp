// Device buffers and streams of the commands (bench, verify, tune, bench gemm_host): RAII, and
// running out of device memory is a CliError that names the buffer.
#pragma once

#include "cli/args.hpp"
#include "core/errors.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace rungs::cli {

inline std::string fmt_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

class Stream {
 public:
  Stream() { RUNGS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// One device allocation; running out of device memory is a CliError that names the buffer.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    const cudaError_t err = cudaMalloc(&p_, std::max<size_t>(bytes, 16));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw CliError("not enough device memory for " + what + " (" + fmt_gib(static_cast<double>(bytes)) + ")");
    }
    if (err != cudaSuccess) detail::throw_cuda(err, "cudaMalloc", __FILE__, __LINE__);
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, cudaStream_t s) {
    if (bytes_ > 0) RUNGS_CUDA(cudaMemcpyAsync(p_, host, bytes_, cudaMemcpyHostToDevice, s));
  }
  void download(void* host, cudaStream_t s) const {
    if (bytes_ > 0) RUNGS_CUDA(cudaMemcpyAsync(host, p_, bytes_, cudaMemcpyDeviceToHost, s));
  }
  void poison(cudaStream_t s) {  // all bits set: NaN as float or double, -1 as an integer
    if (bytes_ > 0) RUNGS_CUDA(cudaMemsetAsync(p_, 0xFF, bytes_, s));
  }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rungs::cli
