// A small pool of host threads for gemm_host's staging copies: run(n, fn) calls fn(0..n-1) on
// the workers and the calling thread and returns when all are done. While spinning is on (for
// the length of one gemm_host call) idle workers poll instead of sleeping, so a parallel copy
// starts in well under a microsecond instead of after a futex wake-up (~5-50 us). Spinning may be
// limited to the first few workers (a small call: pollers past 8 slowed 1024^3 pageable flows by
// 2-13 %: scripts/experiments/host_probe/host_probe.cpp `threads`); the others then sleep through the
// call's jobs, which the caller and the pollers run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rungs::host {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }  // the caller included
  void run(int n, const std::function<void(int)>& fn);
  // The same without the caller: start() hands fn(0..n-1) to the workers (there must be some, and no
  // job running) and returns at once; done() says whether all parts have run; finish() waits for them.
  // fn is kept until finish(). A started job must be finished before the next run() or start().
  void start(int n, std::function<void(int)> fn);
  bool done() const { return job_storage_.done.load(std::memory_order_acquire) >= job_storage_.n; }
  void finish();
  // on: the first `workers` workers poll (all when negative) and the others sleep until spinning
  // ends; off: all sleep between jobs.
  void set_spinning(bool on, int workers = -1);
  int spinners() const { return spin_count_.load(std::memory_order_relaxed); }  // workers polling now

 private:
  struct Job {
    const std::function<void(int)>* fn = nullptr;
    int n = 0;
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    int active = 0;  // workers inside the job (guarded by mu_)
  };
  static void work(Job& job);
  void loop(int index);

  void post(Job& job);  // publish job to the workers
  void join(Job& job);  // wait until every part has run and no worker holds job

  Job job_storage_;                   // the current job (start/finish, or run)
  std::function<void(int)> bg_fn_;    // start()'s fn
  bool started_ = false;              // a start()ed job not yet finished
  std::mutex mu_;
  std::condition_variable wake_, left_;
  Job* job_ = nullptr;               // guarded by mu_
  std::atomic<uint64_t> gen_{0};     // bumped for each job
  std::atomic<int> spin_count_{0};   // workers 0 .. spin_count_ - 1 poll (guarded by mu_ for writes)
  bool stop_ = false;                // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace rungs::host
