// Host-side error checking shared by every file of the library: each CUDA or cuBLAS
// call is checked and a failure becomes rungs::Error naming the call and the API's string.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>

#include <sstream>
#include <string>
#include <vector>

namespace rungs::detail {

[[noreturn]] void throw_cuda(cudaError_t err, const char* what, const char* file, int line);
[[noreturn]] void throw_cublas(int status, const char* what, const char* file, int line);

// Builds "name = value" style messages: fail_arg("gemm", "lda", lda, ">= 17").
template <typename T>
[[noreturn]] void fail_arg(const char* fn, const char* arg, const T& value, const std::string& want) {
  std::ostringstream os;
  os << "rungs::" << fn << ": invalid argument " << arg << " = " << value << " (must be " << want << ")";
  throw Error(os.str());
}

// gemm's argument checks, shared by gemm (device pointers) and gemm_host (host pointers); `fn`
// names the entry point in the messages. Shapes: m, n, k >= 0 and each ld >= max(1, the stored row
// length: A is m x k (N) or k x m (T), B is k x n (N) or n x k (T), C is m x n).
void check_gemm_shape(const char* fn, Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                      int64_t ldc);
// Pointers: C when m*n > 0; A and B when also k > 0 and alpha != 0. `kind`: "a device pointer".
void check_gemm_pointers(const char* fn, const char* kind, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* A, const void* B, const void* C);

// Options::epilogue is gemm's: any other entry point (`fn`) given a non-default one throws
// rungs::Error rather than ignore it.
void refuse_epilogue(const char* fn, const Options& opts);

// Throws Unsupported with "<variant>: <reason>".
[[noreturn]] void unsupported(const std::string& variant, const std::string& reason);

// Throws Unsupported ("<variant>: cannot be captured into a CUDA graph: <why>") when `stream` is
// being captured: for the rungs whose work a graph replay could not repeat correctly. Called
// before the rung enqueues anything, so the capture stays valid.
void refuse_capture(cudaStream_t stream, const char* variant, const char* why);

// While alive, the calling thread's stream-capture mode is relaxed, so that the one-time setup the
// library does lazily (a cuBLAS handle, a memory pool, a kernel attribute, the driver's entry
// point) may run while the caller's stream is being captured into a CUDA graph, in any mode. Such
// calls are not stream work: the graph does not need to repeat them. The previous mode is restored.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// A CUDA driver function through the runtime (cudaGetDriverEntryPointByVersion, so the library
// links no libcuda): its address, or nullptr where this driver lacks it (the lookup's error
// cleared). Callers keep the result (std::call_once); the lookup runs in relaxed capture mode.
void* driver_entry_point(const char* name, unsigned version);

// Compute capability of the current device as major*10+minor (cached per device).
int current_sm();

// The current device's DRAM bandwidth on paper, GB/s: two transfers per memory clock times the bus
// width (cached per device; 0 where the driver reports neither). H100 SXM 3352, H200 4814.
double dram_peak_gbs();

// rungs::Error "rungs::<fn>: variant <rung> needs sm_<min_sm> or newer; ..." when the current
// device is older than min_sm (min_sm <= 0: any device).
void require_sm(const char* fn, const char* rung, int min_sm);

// The rung called `name` in a ladder (any list of rungs with a `name`), or rungs::Error
// "rungs::<fn>: unknown variant ..." listing the known names.
template <typename Rung>
const Rung& find_rung(const std::vector<Rung>& ladder, const char* fn, const std::string& name) {
  for (const auto& r : ladder)
    if (name == r.name) return r;
  std::ostringstream os;
  os << "rungs::" << fn << ": unknown variant \"" << name << "\" (known: auto";
  for (const auto& r : ladder) os << ", " << r.name;
  os << ")";
  throw Error(os.str());
}

}  // namespace rungs::detail

#define RUNGS_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t rungs_err_ = (call);                                                       \
    if (rungs_err_ != cudaSuccess) ::rungs::detail::throw_cuda(rungs_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here; faults inside
// the kernel surface at the next synchronizing call, as in CUDA.
#define RUNGS_LAUNCHED() RUNGS_CUDA(cudaPeekAtLastError())

#define RUNGS_CUBLAS(call)                                                                   \
  do {                                                                                       \
    int rungs_st_ = static_cast<int>(call);                                                  \
    if (rungs_st_ != 0) ::rungs::detail::throw_cublas(rungs_st_, #call, __FILE__, __LINE__); \
  } while (0)
