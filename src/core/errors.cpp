#include "core/errors.hpp"

#include <cublas_v2.h>

#include <array>
#include <atomic>
#include <cmath>

namespace rungs::detail {

void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  // Clear a sticky-free error so the next call on this thread starts clean.
  (void)cudaGetLastError();
  std::ostringstream os;
  os << "CUDA error " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ") in " << what << " at "
     << file << ":" << line;
  throw Error(os.str());
}

void throw_cublas(int status, const char* what, const char* file, int line) {
  std::ostringstream os;
  os << "cuBLAS error " << cublasGetStatusName(static_cast<cublasStatus_t>(status)) << " ("
     << cublasGetStatusString(static_cast<cublasStatus_t>(status)) << ") in " << what << " at " << file << ":"
     << line;
  throw Error(os.str());
}

namespace {
void check_ld(const char* fn, const char* arg, int64_t ld, int64_t row_len) {
  const int64_t need = row_len > 1 ? row_len : 1;
  if (ld < need) fail_arg(fn, arg, ld, ">= max(1, " + std::to_string(row_len) + ")");
}
}  // namespace

void check_gemm_shape(const char* fn, Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                      int64_t ldc) {
  if (m < 0) fail_arg(fn, "m", m, ">= 0");
  if (n < 0) fail_arg(fn, "n", n, ">= 0");
  if (k < 0) fail_arg(fn, "k", k, ">= 0");
  check_ld(fn, "lda", lda, ta == Trans::N ? k : m);
  check_ld(fn, "ldb", ldb, tb == Trans::N ? n : k);
  check_ld(fn, "ldc", ldc, n);
}

void check_gemm_pointers(const char* fn, const char* kind, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* A, const void* B, const void* C) {
  if (m == 0 || n == 0) return;
  if (C == nullptr) fail_arg(fn, "C", "nullptr", std::string(kind) + " (m*n > 0)");
  const bool reads_ab = k > 0 && alpha != 0.0f;
  if (reads_ab && A == nullptr) fail_arg(fn, "A", "nullptr", std::string(kind) + " (k > 0, alpha != 0)");
  if (reads_ab && B == nullptr) fail_arg(fn, "B", "nullptr", std::string(kind) + " (k > 0, alpha != 0)");
}

void refuse_epilogue(const char* fn, const Options& opts) {
  const Epilogue& e = opts.epilogue;
  if (e.bias != nullptr || e.act != Activation::none || e.gated)
    throw Error(std::string("rungs::") + fn + ": invalid argument opts.epilogue (must be the default: " + fn +
                " applies no epilogue; gemm does)");
}

void unsupported(const std::string& variant, const std::string& reason) {
  throw Unsupported(variant + ": " + reason);
}

void refuse_capture(cudaStream_t stream, const char* variant, const char* why) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  RUNGS_CUDA(cudaStreamIsCapturing(stream, &st));
  if (st != cudaStreamCaptureStatusNone) unsupported(variant, std::string("cannot be captured into a CUDA graph: ") + why);
}

void* driver_entry_point(const char* name, unsigned version) {
  const RelaxedCaptureMode relaxed;  // the first call may come while its stream is captured
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess)
    return p;
  cudaGetLastError();  // a failed lookup must not surface as a later call's error
  return nullptr;
}

namespace {
// A per-device figure that does not change: compute(dev) on the first ask for the current device,
// then the cached value (devices 0..63; 0 in the cache means not yet known, so compute never
// returns 0).
template <class Compute>
int per_device(std::array<std::atomic<int>, 64>& cache, Compute&& compute) {
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  const bool cached = dev >= 0 && dev < static_cast<int>(cache.size());
  if (cached) {
    const int v = cache[dev].load(std::memory_order_relaxed);
    if (v) return v;
  }
  const int v = compute(dev);
  if (cached) cache[dev].store(v, std::memory_order_relaxed);
  return v;
}
}  // namespace

int current_sm() {
  static std::array<std::atomic<int>, 64> cache{};
  return per_device(cache, [](int dev) {
    int major = 0, minor = 0;
    RUNGS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    RUNGS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    return major * 10 + minor;
  });
}

double dram_peak_gbs() {
  static std::array<std::atomic<int>, 64> cache{};  // MB/s, -1 where the driver reports neither figure
  const int mbs = per_device(cache, [](int dev) {
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    // 2 x (kHz x 1e3) x (bits / 8) bytes/s, in MB/s.
    const int v = static_cast<int>(std::llround(2.0 * clock_khz * (bus_bits / 8.0) / 1e3));
    return v > 0 ? v : -1;
  });
  return mbs > 0 ? mbs / 1000.0 : 0.0;
}

void require_sm(const char* fn, const char* rung, int min_sm) {
  if (min_sm <= 0) return;
  const int sm = current_sm();
  if (sm >= min_sm) return;
  std::ostringstream os;
  os << "rungs::" << fn << ": variant " << rung << " needs sm_" << min_sm << " or newer; this device is sm_" << sm;
  throw Error(os.str());
}

}  // namespace rungs::detail
