// Device description, the assumed fp32 peak, the measured DRAM bandwidth, versions, and the
// host context (date, host, git commit) of a run.
#include "cli/device.hpp"

#include "core/errors.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace rungs::cli {

int fp32_lanes_per_sm(int sm) {
  const int major = sm / 10, minor = sm % 10;
  switch (major) {
    case 3: return 192;                     // Kepler
    case 5: return 128;                     // Maxwell
    case 6: return minor == 0 ? 64 : 128;   // P100: 64; GP10x: 128
    case 7: return 64;                      // Volta, Turing
    case 8: return minor == 0 ? 64 : 128;   // A100: 64; GA10x, Ada: 128
    default: return major >= 9 ? 128 : 64; // Hopper, Blackwell and newer: 128
  }
}

double peak_tflops(int sms, int lanes, double clock_mhz) {
  return static_cast<double>(sms) * lanes * 2.0 * clock_mhz * 1e6 / 1e12;
}

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void require_gpu(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw CliError(std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) +
                   "); bench, verify, tune, profile and info need a GPU (list and --help do not)");
  }
  if (count == 0)
    throw CliError("no CUDA device found; bench, verify, tune, profile and info need a GPU (list and --help do not)");
  if (device >= count)
    throw CliError("--device " + std::to_string(device) + ": there " + (count == 1 ? "is " : "are ") +
                   std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + " (0 .. " +
                   std::to_string(count - 1) + ")");
  RUNGS_CUDA(cudaSetDevice(device));
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

double measure_dram_gbs() {
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  // 2 GiB copies where memory allows (far beyond any L2), else a quarter of what is free each.
  size_t bytes = size_t{2} << 30;
  if (bytes > free_b / 4) bytes = (free_b / 4) & ~size_t{0xFFFFF};
  if (bytes < (size_t{16} << 20)) return 0;
  void *src = nullptr, *dst = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  double gbs = 0;
  try {
    RUNGS_CUDA(cudaMalloc(&src, bytes));
    RUNGS_CUDA(cudaMalloc(&dst, bytes));
    RUNGS_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    RUNGS_CUDA(cudaEventCreate(&e0));
    RUNGS_CUDA(cudaEventCreate(&e1));
    RUNGS_CUDA(cudaMemsetAsync(src, 0x3c, bytes, stream));
    RUNGS_CUDA(cudaMemsetAsync(dst, 0, bytes, stream));
    for (int i = 0; i < 2; ++i) RUNGS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    std::vector<double> ms;
    for (int i = 0; i < 9; ++i) {
      RUNGS_CUDA(cudaEventRecord(e0, stream));
      RUNGS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
      RUNGS_CUDA(cudaEventRecord(e1, stream));
      RUNGS_CUDA(cudaEventSynchronize(e1));
      float t = 0;
      RUNGS_CUDA(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    if (med > 0) gbs = 2.0 * static_cast<double>(bytes) / (med * 1e-3) / 1e9;  // read + write
  } catch (...) {
    cudaFree(src);
    cudaFree(dst);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (stream) cudaStreamDestroy(stream);
    throw;
  }
  cudaFree(src);
  cudaFree(dst);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  return gbs;
}

DeviceInfo query_device(int device, bool measure_bandwidth) {
  DeviceInfo d;
  d.index = device;
  cudaDeviceProp prop{};
  RUNGS_CUDA(cudaGetDeviceProperties(&prop, device));
  d.name = prop.name;
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return v;
  };
  d.sm = attr(cudaDevAttrComputeCapabilityMajor) * 10 + attr(cudaDevAttrComputeCapabilityMinor);
  d.sms = attr(cudaDevAttrMultiProcessorCount);
  d.sm_clock_mhz = attr(cudaDevAttrClockRate) / 1000.0;  // kHz (cudaDeviceProp::clockRate is gone in CUDA 13)
  d.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1000.0;
  d.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  d.l2_bytes = attr(cudaDevAttrL2CacheSize);
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  d.free_mem = static_cast<int64_t>(free_b);
  d.total_mem = static_cast<int64_t>(total_b);
  d.fp32_lanes = fp32_lanes_per_sm(d.sm);
  d.peak_tflops = peak_tflops(d.sms, d.fp32_lanes, d.sm_clock_mhz);
  // Double data rate: two transfers per memory clock.
  d.dram_gbs_theory = 2.0 * d.mem_clock_mhz * 1e6 * (d.bus_width_bits / 8.0) / 1e9;
  int v = 0;
  d.cuda_runtime = cudaRuntimeGetVersion(&v) == cudaSuccess ? cuda_version_string(v) : "unknown";
  v = 0;
  d.cuda_driver = cudaDriverGetVersion(&v) == cudaSuccess ? cuda_version_string(v) : "unknown";
  d.cublas = cublas_version();
  if (measure_bandwidth) {
    d.dram_gbs = measure_dram_gbs();
    d.dram_read_gbs = measure_read_gbs();
    d.launch_us = measure_launch_us();
  }
  return d;
}

namespace {

std::string run_capture(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int rc = pclose(p);
  if (rc != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

// The source tree this file was compiled from (CMake passes absolute paths), or "".
std::string source_root() {
  std::string f = __FILE__;
  if (f.empty() || f[0] != '/' || f.find('\'') != std::string::npos) return "";
  for (int up = 0; up < 3; ++up) {  // src/cli/device.cpp -> repository root
    const size_t slash = f.rfind('/');
    if (slash == std::string::npos || slash == 0) return "";
    f.erase(slash);
  }
  return f;
}

}  // namespace

std::string git_commit() {
  if (const char* env = std::getenv("RUNGS_GIT_COMMIT"); env != nullptr && *env != '\0') return env;
  const std::string root = source_root();
  const std::string dir = root.empty() ? std::string() : " -C '" + root + "'";
  std::string c = run_capture("git" + dir + " rev-parse --short HEAD 2>/dev/null");
  if (c.empty()) return "unknown";
  if (!run_capture("git" + dir + " status --porcelain --untracked-files=no 2>/dev/null").empty()) c += "-dirty";
  return c;
}

std::string iso_date_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  std::string s = buf;  // +0200 -> +02:00, as Google Benchmark writes it
  if (s.size() >= 5) s.insert(s.size() - 2, ":");
  return s;
}

Context make_context(const Args& a, const std::string& argv0) {
  Context c;
  c.command = command_name(a.command);
  c.date = iso_date_now();
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) c.host_name = host;
  c.executable = argv0;
  c.command_line = "rungs";
  for (const auto& s : a.argv) c.command_line += " " + s;
  c.num_cpus = static_cast<int>(std::thread::hardware_concurrency());
  c.git_commit = git_commit();
#ifdef NDEBUG
  c.build_type = "release";
#else
  c.build_type = "debug";
#endif
#ifdef RUNGS_VERSION
  c.rungs_version = RUNGS_VERSION;
#endif
  c.reps = a.reps;
  c.warmup = a.warmup;
  c.flush_l2 = a.flush_l2;
  c.baseline = a.baseline == "none" ? "" : a.baseline;
  c.seed = a.seed;
  c.alpha = a.alpha;
  c.beta = a.beta;
  return c;
}

}  // namespace rungs::cli
