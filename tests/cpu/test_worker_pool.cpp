// gemm_host's staging threads (host/worker_pool.hpp): every index runs exactly once, on any pool
// size, with the workers polling or sleeping, over many back-to-back jobs, two pools at once, and
// jobs started in the background (start / done / finish) while the caller runs another pool's.
#include "host/worker_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rungs::test {
namespace {

void expect_each_once(host::WorkerPool& pool, int n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h = 0;
  pool.run(n, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
  for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
}

TEST(WorkerPool, EveryIndexExactlyOnce) {
  for (int workers : {0, 1, 3, 8}) {
    host::WorkerPool pool(workers);
    EXPECT_EQ(pool.threads(), workers + 1);
    for (bool spin : {false, true}) {
      pool.set_spinning(spin);
      for (int n : {0, 1, 2, 7, 100, 1000}) expect_each_once(pool, n);
    }
    pool.set_spinning(false);
  }
}

// Only some workers polling (gemm_host's small calls): the sleepers are not woken per job, and every
// index still runs exactly once, also with more indices than pollers; then all polling again.
TEST(WorkerPool, SomeWorkersPolling) {
  host::WorkerPool pool(7);
  for (int pollers : {0, 1, 3, 7, 100}) {
    pool.set_spinning(true, pollers);
    EXPECT_EQ(pool.spinners(), std::min(pollers, 7));
    for (int n : {1, 2, 8, 64, 1000}) expect_each_once(pool, n);
    std::atomic<long> sum{0};
    for (int job = 0; job < 500; ++job) pool.run(16, [&](int i) { sum.fetch_add(i + 1); });
    EXPECT_EQ(sum.load(), 500L * 136) << pollers << " pollers";
  }
  pool.set_spinning(false);
  EXPECT_EQ(pool.spinners(), 0);
  expect_each_once(pool, 100);
}

TEST(WorkerPool, ManyBackToBackJobs) {
  host::WorkerPool pool(4);
  for (bool spin : {true, false}) {
    pool.set_spinning(spin);
    std::atomic<long> sum{0};
    for (int job = 0; job < 2000; ++job) pool.run(5, [&](int i) { sum.fetch_add(i + 1); });
    EXPECT_EQ(sum.load(), 2000L * 15);
  }
  pool.set_spinning(false);
}

TEST(WorkerPool, TwoPoolsFromTwoThreads) {
  host::WorkerPool a(2), b(2);
  a.set_spinning(true);
  std::atomic<long> sa{0}, sb{0};
  std::thread t([&] {
    for (int j = 0; j < 500; ++j) b.run(9, [&](int i) { sb.fetch_add(i); });
  });
  for (int j = 0; j < 500; ++j) a.run(9, [&](int i) { sa.fetch_add(i); });
  t.join();
  a.set_spinning(false);
  EXPECT_EQ(sa.load(), 500L * 36);
  EXPECT_EQ(sb.load(), 500L * 36);
}

// start() runs the job on the workers alone: the caller is free meanwhile (here it runs another
// pool's jobs, as gemm_host's caller packs while C is unpacked), done() turns true only once every
// index has run, and finish() leaves the pool ready for run() and the next start().
TEST(WorkerPool, BackgroundJobs) {
  host::WorkerPool bg(3), fg(2);
  EXPECT_THROW(host::WorkerPool(0).start(1, [](int) {}), std::logic_error);
  for (bool spin : {false, true}) {
    bg.set_spinning(spin);
    fg.set_spinning(spin);
    for (int n : {0, 1, 5, 64}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto& h : hits) h = 0;
      std::atomic<bool> release{false};
      bg.start(n, [&](int i) {
        while (!release.load()) std::this_thread::yield();  // held until the caller has done its own work
        hits[static_cast<size_t>(i)].fetch_add(1);
      });
      EXPECT_THROW(bg.start(1, [](int) {}), std::logic_error);
      if (n > 0) {
        EXPECT_FALSE(bg.done());
      }
      std::atomic<long> sum{0};
      for (int j = 0; j < 50; ++j) fg.run(8, [&](int i) { sum.fetch_add(i); });
      EXPECT_EQ(sum.load(), 50L * 28);
      release = true;
      while (!bg.done()) std::this_thread::yield();
      for (int i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
      bg.finish();
      expect_each_once(bg, 33);
    }
  }
  bg.set_spinning(false);
  fg.set_spinning(false);
  bg.start(4, [](int) {});  // finished by the destructor
}

}  // namespace
}  // namespace rungs::test
