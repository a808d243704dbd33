// Shared by ce_probe.cpp, overlap_floor.cpp, put_probe.cu and tp_layer_probe.cpp: the NCCL error
// check (CUDA's: ck.hpp), NVLink multicast kept off, one communicator per GPU, a barrier for the rank
// threads, the sizes and medians of a run, and the
// copy-engine window of rungs 4 and 6 (a communicator split with CTAPolicy =
// NCCL_CTA_POLICY_ZERO and an ncclMemAlloc buffer registered with it as a symmetric window, on
// which NCCL 2.28 runs its all-gather and all-to-all on copy engines).
#pragma once

#include "ck.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#define NK(x) do { ncclResult_t nr_ = (x); if (nr_ != ncclSuccess) { std::printf("%s: %s\n", #x, ncclGetErrorString(nr_)); std::exit(1); } } while (0)

namespace nccl_probe {

// Before any NCCL call: NVLink multicast stays off, in NCCL and in anything it starts.
inline void multicast_off() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

// One communicator per GPU 0 .. world - 1, for one thread each (ncclCommInitAll).
inline std::vector<ncclComm_t> init_all(int world) {
  std::vector<ncclComm_t> comms(world);
  std::vector<int> devs(world);
  for (int i = 0; i < world; ++i) devs[i] = i;
  NK(ncclCommInitAll(comms.data(), world, devs.data()));
  return comms;
}

// A reusable barrier for one thread per rank (C++17 has no std::barrier).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(mu_);
    const long g = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return gen_ != g; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};

// argv[from ..] as sizes in MiB, each rounded down to a multiple of `align` bytes.
inline std::vector<size_t> sizes_mib(int argc, char** argv, int from, size_t align) {
  std::vector<size_t> sizes;
  for (int i = from; i < argc; ++i) sizes.push_back(static_cast<size_t>(std::atof(argv[i]) * (1 << 20)) / align * align);
  return sizes;
}

// The median of a rank's timed repetitions (reordered in place).
inline float median(std::vector<float>& t) {
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

struct CeWindow {
  ncclComm_t comm;
  ncclWindow_t win;
  void* buf;
};
// Rank `rank`'s window of `bytes` (zeroed) on a split of `parent`; collective over the ranks.
inline CeWindow open_ce_window(ncclComm_t parent, int rank, size_t bytes) {
  CeWindow w;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  NK(ncclCommSplit(parent, 0, rank, &w.comm, &cfg));
  NK(ncclMemAlloc(&w.buf, bytes));
  NK(ncclCommWindowRegister(w.comm, w.buf, bytes, &w.win, NCCL_WIN_COLL_SYMMETRIC));
  CK(cudaMemset(w.buf, 0, bytes));
  return w;
}
inline void close_ce_window(CeWindow& w) {
  NK(ncclCommWindowDeregister(w.comm, w.win));
  NK(ncclMemFree(w.buf));
  NK(ncclCommDestroy(w.comm));
}

}  // namespace nccl_probe
