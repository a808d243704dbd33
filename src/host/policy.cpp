// gemm_host's choices for one call (policy.hpp), each beside the measurement that set it.
#include "host/policy.hpp"

#include "core/errors.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

namespace rungs::host {

namespace {

constexpr size_t kReserveBytes = size_t{512} << 20;  // device memory left to the context and cuBLAS
constexpr double kPcieBytesPerS = 50e9;               // planning estimate only (PCIe 5 x16)
constexpr double kStepHostS = 20e-6;                  // host time to issue one step (copies, events, gemm)

// 3/4 of the fp32 FMA peak. Cached per device: the clock-rate attribute cost ~0.5 ms of host time
// per query on the H100.
double compute_rate() {
  static std::mutex mu;
  static std::map<int, double> rates;
  int dev = 0;
  RUNGS_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lk(mu);
  auto it = rates.find(dev);
  if (it != rates.end()) return it->second;
  int sms = 0, khz = 0;
  RUNGS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  RUNGS_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  return rates[dev] = 0.75 * sms * 128.0 * 2.0 * khz * 1e3;
}

// The multiplication's rate beside fp32 FMA: the tensor cores' dense peak is 8x (tf32) and 16x
// (f16, bf16) the fp32 one on sm_80/sm_90; 3xTF32 does three tf32 products.
double rate_factor(bool fp32, Math math) {
  if (!fp32) return 16.0;
  return math == Math::tf32 ? 8.0 : math == Math::tf32x3 ? 8.0 / 3.0 : 1.0;
}

// The most steps a job's schedule may have: issuing one costs the host ~20 us (copies, events,
// a gemm launch), so a problem whose transfers take T gets at most T / 20 us of them.
Plan fit_steps(Plan p, double transfer_s) {
  const int max_steps = std::max(4, static_cast<int>(transfer_s / kStepHostS));
  auto steps = [](const Plan& q) { return (q.kmajor_chunks + 1) * (q.row_panels + q.col_panels); };
  while (steps(p) > max_steps) {
    if (p.kmajor_chunks > 1) {
      p.kmajor_chunks = 1;
    } else if (p.kmajor_chunks == 1) {
      p.kmajor_chunks = 0;
      p.kmajor_fraction = 0;
    } else if (p.row_panels == 1 && p.col_panels == 1) {
      break;
    } else if (p.row_panels >= p.col_panels) {
      p.row_panels = std::max(1, p.row_panels / 2);
    } else {
      p.col_panels = std::max(1, p.col_panels / 2);
    }
  }
  return p;
}

}  // namespace

double device_budget(const Tuning& tune, size_t held_bytes) {
  if (tune.device_bytes) return static_cast<double>(tune.device_bytes);
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<double>(free_b) + static_cast<double>(held_bytes) - static_cast<double>(kReserveBytes);
}

double multiply_rate(bool fp32, Math math) { return compute_rate() * rate_factor(fp32, math); }

Plan job_plan(const Job& job, bool reads_c, size_t elem_bytes, bool a_transposed, bool b_transposed, double rate,
              int sms) {
  const double bytes_in =
      elem_bytes * (static_cast<double>(job.rows.size()) * job.k.size() + double(job.k.size()) * job.cols.size() +
                    (reads_c ? double(job.rows.size()) * job.cols.size() : 0.0));
  const double transfer_s = bytes_in / kPcieBytesPerS;
  const double compute_s = 2.0 * job.rows.size() * double(job.cols.size()) * job.k.size() / rate;
  return fit_steps(choose_plan(job.rows.size(), job.cols.size(), job.k.size(), compute_s, transfer_s, a_transposed,
                               b_transposed, static_cast<int64_t>(2048 / elem_bytes), sms),
                   transfer_s);
}

// One staging thread per core up to 12. Staging is bound by the host's memory bandwidth, which
// more threads reach further while the copy engines run (scripts/experiments/host_membw/host_membw.cpp);
// 16 staging threads measured no faster than 12 (docs/gemm_host.md). A call uses them all only when
// it stages much (choose_staging below).
int pool_threads(int forced) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return forced > 0 ? forced : static_cast<int>(std::min(12u, hw));
}

Staging choose_staging(const Tuning& tune, int pool_threads, double staged_bytes, bool c_staged) {
  Staging staging;
  // All of the pool's threads for calls that stage 32 MiB or more, at most 8 below that, unless
  // Tuning::staging_threads says: a small call's pack is no faster with more, and the extra pollers
  // are in the way (scripts/experiments/host_probe/host_probe.cpp `threads`, docs/gemm_host.md). The
  // others sleep through the call.
  staging.threads = tune.staging_threads > 0 || staged_bytes >= double(size_t{32} << 20) ? pool_threads
                                                                                         : std::min(8, pool_threads);
  staging.stream_pack = tune.streaming_pack;
  staging.stream_unpack = tune.streaming_unpack;
  // A quarter of the threads unpack C in the background while the others pack, in calls that stage less
  // than 256 MiB: 4-12 % faster at 1024^3 pageable, 0-11 % at 4096^3, but -4 to +14 % in time at
  // 8192^3 (768 MiB staged, bound by the host's memory bandwidth, three fewer threads packing);
  // scripts/experiments/host_probe/host_probe.cpp `async`, docs/gemm_host.md.
  if (c_staged && staging.threads > 1) {
    const int u = tune.unpack_threads >= 0                   ? tune.unpack_threads
                  : staged_bytes < double(size_t{256} << 20) ? std::max(1, staging.threads / 4)
                                                             : 0;
    staging.unpack_threads = std::clamp(u, 0, std::min(kMaxUnpackThreads, staging.threads - 1));
    staging.threads -= staging.unpack_threads;
  }
  return staging;
}

}  // namespace rungs::host
