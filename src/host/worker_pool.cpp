#include "host/worker_pool.hpp"

namespace rungs::host {

WorkerPool::WorkerPool(int workers) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  spinning_ = false;
  gen_.fetch_add(1);
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::set_spinning(bool on) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    spinning_.store(on, std::memory_order_relaxed);
  }
  if (on) wake_.notify_all();  // sleepers start polling
}

void WorkerPool::work(Job& job) {
  for (int i = job.next.fetch_add(1); i < job.n; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    job.done.fetch_add(1, std::memory_order_release);
  }
}

void WorkerPool::loop() {
  uint64_t seen = 0;
  for (;;) {
    // Poll while spinning (cheap, latency-critical), else sleep until the next job.
    while (spinning_.load(std::memory_order_relaxed) && gen_.load(std::memory_order_acquire) == seen)
      std::this_thread::yield();
    std::unique_lock<std::mutex> lk(mu_);
    wake_.wait(lk, [&] { return stop_ || gen_.load() != seen || spinning_.load(); });
    if (stop_) return;
    if (gen_.load() == seen) continue;  // woken to poll
    seen = gen_.load();
    Job* job = job_;
    if (job == nullptr) continue;
    ++job->active;
    lk.unlock();
    work(*job);
    lk.lock();
    if (--job->active == 0) left_.notify_all();
  }
}

void WorkerPool::run(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty()) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  {
    std::lock_guard<std::mutex> lk(mu_);
    job_ = &job;
    gen_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  work(job);
  while (job.done.load(std::memory_order_acquire) < n) std::this_thread::yield();
  // No worker may still hold &job when it goes out of scope.
  std::unique_lock<std::mutex> lk(mu_);
  job_ = nullptr;
  left_.wait(lk, [&] { return job.active == 0; });
}

}  // namespace rungs::host
