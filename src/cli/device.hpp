// What `rungs` knows about the machine: the GPU (peak, measured DRAM bandwidth, versions)
// and the host context recorded with every result.
#pragma once

#include "cli/args.hpp"
#include "cli/results.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace rungs::cli {

// fp32 lanes (FMA units) per SM by compute capability (major*10+minor): the per-architecture
// table behind the assumed peak. Pure; exposed for the tests.
int fp32_lanes_per_sm(int sm);
// TFLOP/s = sms * lanes * 2 (an FMA is two flops) * clock.
double peak_tflops(int sms, int lanes, double clock_mhz);
// 13000 -> "13.0" (cudaRuntimeGetVersion / cudaDriverGetVersion encoding).
std::string cuda_version_string(int v);

// Throws CliError (exit 2) with one clear line when no CUDA device is usable or `device` does
// not exist; otherwise makes `device` current.
void require_gpu(int device);

// The current device's description; measure_bandwidth runs the device-to-device copy.
DeviceInfo query_device(int device, bool measure_bandwidth);
// DRAM bandwidth in GB/s: a large cudaMemcpyAsync device to device, median of several,
// counting bytes read + written.
double measure_dram_gbs();
// DRAM read bandwidth in GB/s: a plain streaming read of 2 GiB (probes.cu), best of a few grids.
double measure_read_gbs();
// An empty kernel launch between two events, median of 101, in microseconds (probes.cu), timed
// as rungs bench times a rung: queued behind other work, so the host's launch latency is hidden.
double measure_launch_us();
// Reads bytes (a multiple of 16) at buf on the stream; the L2 flush of L2Flusher (probes.cu).
// sink: one device float, written only if the sum is an impossible value (keeps the loads).
void read_flush(const void* buf, size_t bytes, float* sink, cudaStream_t stream);

// cuBLAS version, "13.0.2" (no GPU needed).
std::string cublas_version();
// env RUNGS_GIT_COMMIT, else `git rev-parse --short HEAD` in the source tree, else "unknown".
std::string git_commit();
std::string iso_date_now();

// Host context for a run (device filled in by the caller).
Context make_context(const Args& a, const std::string& argv0);

}  // namespace rungs::cli
