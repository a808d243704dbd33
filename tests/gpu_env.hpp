// GPU test support: skip with a clear reason where no GPU is usable, device buffers.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rungs::test {

// Empty when a GPU is usable, otherwise why not (the error from cudaGetDeviceCount).
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return std::string("no usable CUDA GPU: cudaGetDeviceCount failed with ") + cudaGetErrorName(err) + " (" +
           cudaGetErrorString(err) + ")";
  if (count == 0) return "no usable CUDA GPU: cudaGetDeviceCount returned 0 devices";
  return "";
}

#define RUNGS_REQUIRE_GPU()                                                  \
  do {                                                                       \
    const std::string rungs_why_ = ::rungs::test::gpu_unavailable_reason(); \
    if (!rungs_why_.empty()) GTEST_SKIP() << rungs_why_;                     \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

// A device array of floats with `extra` leading elements, so data() can be deliberately
// misaligned (offset = 1 gives a pointer that is 4 but not 16 bytes aligned).
class DeviceFloats {
 public:
  DeviceFloats(size_t n, size_t offset = 0) : n_(n), offset_(offset) {
    if (cudaMalloc(reinterpret_cast<void**>(&base_), (n + offset + 1) * sizeof(float)) != cudaSuccess) base_ = nullptr;
  }
  ~DeviceFloats() { cudaFree(base_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* data() { return base_ ? base_ + offset_ : nullptr; }
  size_t size() const { return n_; }
  void upload(const std::vector<float>& h) {
    if (!h.empty()) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(data(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
  }
  std::vector<float> download() {
    std::vector<float> h(n_);
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(h.data(), data(), n_ * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return h;
  }
  void poison() {  // all bits set: a NaN in every element
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemset(data(), 0xFF, n_ * sizeof(float)));
    }
  }

 private:
  float* base_ = nullptr;
  size_t n_, offset_;
};

}  // namespace rungs::test
