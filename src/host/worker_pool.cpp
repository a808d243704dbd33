#include "host/worker_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace rungs::host {

WorkerPool::WorkerPool(int workers) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { loop(i); });
}

WorkerPool::~WorkerPool() {
  finish();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  spin_count_ = 0;
  gen_.fetch_add(1);
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::set_spinning(bool on, int workers) {
  const int n = static_cast<int>(workers_.size());
  const int count = !on ? 0 : workers < 0 ? n : std::min(workers, n);
  {
    std::lock_guard<std::mutex> lk(mu_);
    spin_count_.store(count, std::memory_order_relaxed);
  }
  if (count > 0) wake_.notify_all();  // the chosen sleepers start polling
}

void WorkerPool::work(Job& job) {
  for (int i = job.next.fetch_add(1); i < job.n; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    job.done.fetch_add(1, std::memory_order_release);
  }
}

void WorkerPool::loop(int index) {
  uint64_t seen = 0;
  auto polls = [&] { return index < spin_count_.load(std::memory_order_relaxed); };
  for (;;) {
    // Poll while spinning (cheap, latency-critical), else sleep until the next job.
    while (polls() && gen_.load(std::memory_order_acquire) == seen) std::this_thread::yield();
    std::unique_lock<std::mutex> lk(mu_);
    wake_.wait(lk, [&] { return stop_ || gen_.load() != seen || polls(); });
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

void WorkerPool::post(Job& job) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    job_ = &job;
    gen_.fetch_add(1, std::memory_order_release);
  }
  // With pollers, the sleepers are left asleep (a wake-up is a system call per job, and the caller
  // and the pollers run the parts); without, everyone is woken.
  if (spin_count_.load(std::memory_order_relaxed) == 0) wake_.notify_all();
}

void WorkerPool::join(Job& job) {
  while (job.done.load(std::memory_order_acquire) < job.n) std::this_thread::yield();
  // No worker may still hold &job when it is reused or goes out of scope.
  std::unique_lock<std::mutex> lk(mu_);
  job_ = nullptr;
  left_.wait(lk, [&] { return job.active == 0; });
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
  post(job);
  work(job);
  join(job);
}

void WorkerPool::start(int n, std::function<void(int)> fn) {
  if (started_) throw std::logic_error("WorkerPool::start: the previous job is not finished");
  if (workers_.empty()) throw std::logic_error("WorkerPool::start: no workers");
  bg_fn_ = std::move(fn);
  Job& job = job_storage_;
  job.fn = &bg_fn_;
  job.n = std::max(n, 0);
  job.next.store(0, std::memory_order_relaxed);
  job.done.store(0, std::memory_order_relaxed);
  job.active = 0;
  started_ = true;
  if (job.n > 0) post(job);
}

void WorkerPool::finish() {
  if (!started_) return;
  if (job_storage_.n > 0) join(job_storage_);
  started_ = false;
  bg_fn_ = nullptr;
}

}  // namespace rungs::host
