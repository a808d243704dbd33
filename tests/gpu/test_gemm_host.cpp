// rungs::gemm_host against the fp64 reference: pageable, pinned and mixed host memory, odd
// shapes, every transpose, padded ld, beta, forced schedules, small staging slots, problems
// "larger than device memory" (a device budget set small), concurrency, and a failure in the
// middle of a call followed by a call that must work.
#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"
#include "gpu_env.hpp"
#include "host/gemm_host.hpp"

#include <cmath>
#include <cstring>
#include <thread>

namespace rungs::test {
namespace {

enum class Mem { pageable, pinned, mixed };  // mixed: A pinned, B pageable, C pinned

// A host array, pageable (std::vector) or pinned (cudaMallocHost).
class HostFloats {
 public:
  HostFloats(const std::vector<float>& init, bool pinned) : n_(init.size()), pinned_(pinned) {
    if (pinned_) {
      if (cudaMallocHost(reinterpret_cast<void**>(&p_), std::max<size_t>(n_, 1) * sizeof(float)) != cudaSuccess)
        p_ = nullptr;
    } else {
      vec_.resize(std::max<size_t>(n_, 1));
      p_ = vec_.data();
    }
    if (p_ && n_) std::memcpy(p_, init.data(), n_ * sizeof(float));
  }
  ~HostFloats() {
    if (pinned_ && p_) cudaFreeHost(p_);
  }
  HostFloats(const HostFloats&) = delete;
  HostFloats& operator=(const HostFloats&) = delete;
  float* data() { return p_; }
  std::vector<float> values() const { return std::vector<float>(p_, p_ + n_); }

 private:
  size_t n_;
  bool pinned_;
  std::vector<float> vec_;
  float* p_ = nullptr;
};

struct Outcome {
  bool skipped = false;
  std::string why;
  check::GemmErrors err;
  int64_t touched_padding = 0;
};

Outcome run_case(check::GemmShape s, Mem mem, uint64_t seed, const Options& opts = {}) {
  s = check::normalized(s);
  Outcome o;
  const check::GemmData d = check::make_gemm_data(s, seed);
  std::vector<float> c0 = d.C0;
  if (s.beta == 0.0f) std::fill(c0.begin(), c0.end(), std::nanf(""));  // must not be read
  HostFloats A(d.A, mem != Mem::pageable), B(d.B, mem == Mem::pinned), C(c0, mem != Mem::pageable);
  try {
    gemm_host(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.data(), s.lda, B.data(), s.ldb, s.beta, C.data(), s.ldc, opts);
  } catch (const Unsupported& e) {
    o.skipped = true;
    o.why = e.what();
    return o;
  }
  const std::vector<float> c = C.values();
  o.err = check::compare_gemm(s, check::gemm_reference(s, d), c.data());
  o.touched_padding = check::padding_written(s, c.data());
  return o;
}

std::string describe(const check::GemmShape& s, Mem mem) {
  return check::describe(s) + (mem == Mem::pageable ? " pageable" : mem == Mem::pinned ? " pinned" : " mixed");
}

#define EXPECT_HOST_CASE(shape, mem, seed, ...)                                                            \
  do {                                                                                                     \
    const Outcome o_ = run_case(shape, mem, seed, ##__VA_ARGS__);                                          \
    if (o_.skipped) GTEST_SKIP() << o_.why;                                                                \
    EXPECT_TRUE(o_.err.pass) << describe(shape, mem) << ": " << o_.err.reason << " (normwise "             \
                             << o_.err.normwise << ")";                                                    \
    EXPECT_EQ(o_.touched_padding, 0) << describe(shape, mem) << ": wrote into the ld padding of C";        \
  } while (0)

check::GemmShape shape(int64_t m, int64_t n, int64_t k, Trans ta = Trans::N, Trans tb = Trans::N, float beta = 0.0f,
                       int64_t pad = 0) {
  check::GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.ta = ta;
  s.tb = tb;
  s.beta = beta;
  s.alpha = 1.0f;
  s = check::normalized(s);
  s.lda += pad;
  s.ldb += pad;
  s.ldc += pad;
  return s;
}

// Restores the library's own choices when a test ends.
struct TuningScope {
  explicit TuningScope(const host::Tuning& t) { host::set_tuning(t); }
  ~TuningScope() { host::set_tuning({}); }
};

// A pageable call of s under t, whose fail_at_step injects a failure: it throws rungs::Error.
void expect_injected_failure(const host::Tuning& t, const check::GemmShape& s, uint64_t seed) {
  TuningScope scope(t);
  const check::GemmData d = check::make_gemm_data(s, seed);
  std::vector<float> c(d.C0.size());
  EXPECT_THROW(gemm_host(s.ta, s.tb, s.m, s.n, s.k, 1.0f, d.A.data(), s.lda, d.B.data(), s.ldb, 0.0f, c.data(), s.ldc),
               Error);
}

const Mem kMems[] = {Mem::pageable, Mem::pinned, Mem::mixed};
const Trans kTrans[] = {Trans::N, Trans::T};

TEST(GemmHost, OddShapesEveryTransposeAndMemory) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 1;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 5, 3}, {129, 67, 300}, {333, 1000, 257},
                         {1025, 513, 777}})
    for (Trans ta : kTrans)
      for (Trans tb : kTrans)
        for (Mem mem : kMems) EXPECT_HOST_CASE(shape(m, n, k, ta, tb), mem, ++seed);
}

TEST(GemmHost, BetaAlphaAndPaddedLd) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 100;
  for (Mem mem : kMems)
    for (Trans ta : kTrans)
      for (float beta : {0.0f, 1.0f, -0.75f}) {
        check::GemmShape s = shape(301, 211, 419, ta, Trans::T, beta, 13);
        s.alpha = -1.5f;
        EXPECT_HOST_CASE(s, mem, ++seed);
      }
}

TEST(GemmHost, ForcedSchedules) {  // every phase-1 / phase-2 combination, on ragged panels
  RUNGS_REQUIRE_GPU();
  const host::Plan plans[] = {{1, 1, 0, 0},       {3, 5, 0, 0},     {8, 8, 1, 0.25},
                              {16, 16, 2, 0.5},   {5, 2, 4, 0.75},  {7, 2, 2, 0.5, 3}};  // the last: phase 1 in 3 groups
  uint64_t seed = 200;
  for (const host::Plan& p : plans) {
    host::Tuning t;
    t.plan = p;
    TuningScope scope(t);
    for (Mem mem : {Mem::pageable, Mem::pinned}) {
      EXPECT_HOST_CASE(shape(1000, 777, 1111, Trans::T, Trans::N, 0.5f), mem, ++seed);
      EXPECT_HOST_CASE(shape(513, 1025, 600, Trans::N, Trans::T), mem, ++seed);
    }
  }
}

// Tuning::trace (rungs bench gemm_host --trace): the timeline accounts for every byte sent each
// way and every multiply-add, each operation ends after it starts, and the result is still right.
TEST(GemmHost, TraceAccountsForEveryByteAndProduct) {
  RUNGS_REQUIRE_GPU();
  host::Tuning t;
  t.trace = true;
  t.plan = host::Plan{4, 2, 2, 0.5};
  TuningScope scope(t);
  uint64_t seed = 250;
  for (Mem mem : {Mem::pinned, Mem::pageable})
    for (float beta : {0.0f, 1.0f}) {
      const check::GemmShape s = shape(700, 900, 1100, Trans::N, Trans::T, beta);
      EXPECT_HOST_CASE(s, mem, ++seed);
      const host::CallInfo info = host::last_call();
      double in = 0, out = 0, macs = 0;
      for (const host::TraceOp& op : info.trace) {
        EXPECT_GE(op.start_ms, 0.0) << op.what;
        EXPECT_GE(op.end_ms, op.start_ms) << op.what;
        (op.engine == 'H' ? in : op.engine == 'D' ? out : macs) += op.amount;
      }
      EXPECT_EQ(in, 4.0 * (700.0 * 1100 + 1100.0 * 900 + (beta != 0 ? 700.0 * 900 : 0))) << describe(s, mem);
      EXPECT_EQ(out, 4.0 * 700 * 900) << describe(s, mem);
      EXPECT_EQ(macs, 700.0 * 900 * 1100) << describe(s, mem);
    }
}

TEST(GemmHost, SmallStagingSlotsCutPiecesByRowsAndColumns) {
  RUNGS_REQUIRE_GPU();
  host::Tuning t;
  t.staging_bytes = 4096;  // 1024 floats: rows of k = 1500 are cut, and many rows per piece
  TuningScope scope(t);
  uint64_t seed = 300;
  for (Trans ta : kTrans) EXPECT_HOST_CASE(shape(97, 1300, 1500, ta, Trans::N, 2.0f, 3), Mem::pageable, ++seed);
  EXPECT_HOST_CASE(shape(200, 64, 1500, Trans::N, Trans::T), Mem::mixed, ++seed);
}

// The staging pool resized between calls (Tuning::staging_threads, bench --host-threads): 1 thread
// (no workers), 3, 16 (2 MiB slots in parts of 128 KiB), then the library's choice again; each
// pageable call still right, and the call reports the threads it used.
TEST(GemmHost, StagingThreadsResizedBetweenCalls) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 350;
  for (int threads : {1, 3, 16, 0}) {
    host::Tuning t;
    t.staging_threads = threads;
    TuningScope scope(t);
    EXPECT_HOST_CASE(shape(513, 700, 1100, Trans::N, Trans::N, 0.5f), Mem::pageable, ++seed);
    if (threads > 0) EXPECT_EQ(host::last_call().host_threads, threads);
    else EXPECT_GE(host::last_call().host_threads, 1);
  }
}

// C's staged blocks unpacked by the caller's threads in turn with packing (0), or in the background by
// 1 or 3 threads while the others pack, or as the library chooses (-1); with 16 KiB slots there are
// many blocks, so background unpacks overlap packing. Then a failure injected while blocks are being
// unpacked in the background: the call throws, and the next one is right.
TEST(GemmHost, CUnpackedInTurnOrInTheBackground) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 370;
  for (int u : {0, 1, 3, -1}) {
    host::Tuning t;
    t.staging_bytes = 16384;
    t.unpack_threads = u;
    TuningScope scope(t);
    EXPECT_HOST_CASE(shape(700, 530, 610, Trans::N, Trans::T, 0.5f), Mem::pageable, ++seed);
    if (u >= 0) EXPECT_EQ(host::last_call().unpack_threads, u);
    else EXPECT_EQ(host::last_call().unpack_threads >= 1, host::last_call().host_threads > 1);  // < 256 MiB staged
    EXPECT_HOST_CASE(shape(300, 1000, 257, Trans::T, Trans::N, 0.0f), Mem::pageable, ++seed);
  }
  for (int64_t step : {6, 9}) {
    host::Tuning t;
    t.staging_bytes = 16384;
    t.unpack_threads = 2;
    t.fail_at_step = step;
    t.plan = host::Plan{8, 2, 0, 0.0};  // 10 steps: C blocks finish from the second on
    expect_injected_failure(t, shape(600, 500, 400), 11);
    EXPECT_HOST_CASE(shape(600, 500, 400, Trans::N, Trans::N, 1.0f), Mem::pageable, ++seed);
  }
}

TEST(GemmHost, LargerThanDeviceMemoryStreamsBlocks) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 400;
  // Budgets in bytes: blocks of C with full k, then budgets so small that k is cut too.
  for (size_t budget : {size_t{3} << 20, size_t{600} << 10, size_t{64} << 10}) {
    host::Tuning t;
    t.device_bytes = budget;
    TuningScope scope(t);
    for (Mem mem : {Mem::pageable, Mem::pinned})
      for (float beta : {0.0f, 0.5f}) {
        EXPECT_HOST_CASE(shape(700, 900, 1300, Trans::N, Trans::T, beta), mem, ++seed);
        EXPECT_GT(host::last_call().jobs, 1) << "budget " << budget << ": expected several blocks";
      }
  }
}

TEST(GemmHost, EmptyProductScalesCOnTheHost) {
  RUNGS_REQUIRE_GPU();
  for (Mem mem : kMems) {
    EXPECT_HOST_CASE(shape(33, 17, 0, Trans::N, Trans::N, 0.0f, 2), mem, 1);   // C = 0, NaN in C not read
    EXPECT_HOST_CASE(shape(33, 17, 0, Trans::N, Trans::N, -2.0f, 2), mem, 2);  // C = -2 C
    check::GemmShape s = shape(40, 30, 20, Trans::T, Trans::T, 3.0f);
    s.alpha = 0.0f;
    EXPECT_HOST_CASE(s, mem, 3);
  }
  // m == 0 or n == 0: nothing is touched, not even through null pointers.
  const float* none = nullptr;
  EXPECT_NO_THROW(gemm_host(Trans::N, Trans::N, 0, 5, 5, 1.0f, none, 5, none, 5, 0.0f, static_cast<float*>(nullptr), 5));
}

// Every rung with an fp32 entry as gemm_host's device multiply (the float calls here); a rung that
// cannot run here (rungs::Unsupported: an older GPU) is named in the output, and the test is
// skipped if none ran.
TEST(GemmHost, EveryDeviceRung) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 500;
  Tally tally;
  for (const VariantInfo& v : variants(Op::gemm)) {
    if ((" " + v.types + " ").find(" f32 ") == std::string::npos) continue;  // no float entry to call
    Options o;
    o.variant = v.name;
    const Outcome r = run_case(shape(190, 260, 330, Trans::T, Trans::N, 1.0f), Mem::pageable, ++seed, o);
    if (r.skipped) {
      tally.skip(r.why);
      continue;
    }
    ++tally.ran;
    EXPECT_TRUE(r.err.pass) << v.name << ": " << r.err.reason;
    EXPECT_EQ(r.touched_padding, 0) << v.name << ": wrote into the ld padding of C";
  }
  Options bad;
  bad.variant = "no_such_rung";
  std::vector<float> h(16, 1.0f);
  EXPECT_THROW(gemm_host(Trans::N, Trans::N, 4, 4, 4, 1.0f, h.data(), 4, h.data(), 4, 0.0f, h.data(), 4, bad), Error);
  RUNGS_FINISH(tally);
}

TEST(GemmHost, DevicePointersAreRefused) {
  RUNGS_REQUIRE_GPU();
  DeviceFloats d(64);
  std::vector<float> h(64, 1.0f);
  try {
    gemm_host(Trans::N, Trans::N, 8, 8, 8, 1.0f, d.data(), 8, h.data(), 8, 0.0f, h.data(), 8);
    ADD_FAILURE() << "a device pointer for A was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("A is device memory"), std::string::npos) << e.what();
  }
}

TEST(GemmHost, ConcurrentHostThreads) {
  RUNGS_REQUIRE_GPU();
  constexpr int kThreads = 4;
  std::vector<Outcome> out(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      out[t] = run_case(shape(300 + 37 * t, 500 - 41 * t, 700, t % 2 ? Trans::T : Trans::N, Trans::N, 0.25f),
                        t % 2 ? Mem::pinned : Mem::pageable, 600 + t);
      gemm_host_release();
    });
  for (std::thread& th : threads) th.join();
  Tally tally;
  for (int t = 0; t < kThreads; ++t) {
    if (out[t].skipped) {
      tally.skip(out[t].why);
      continue;
    }
    ++tally.ran;
    EXPECT_TRUE(out[t].err.pass) << "thread " << t << ": " << out[t].err.reason;
    EXPECT_EQ(out[t].touched_padding, 0) << "thread " << t << ": wrote into the ld padding of C";
  }
  RUNGS_FINISH(tally);
}

// Identical calls on pinned memory replay a captured graph: each must still read the current
// contents of A, B and C (a graph that had copied them at capture time would fail here).
TEST(GemmHost, RepeatedPinnedCallsReplayAGraphOnFreshData) {
  RUNGS_REQUIRE_GPU();
  for (float beta : {0.0f, 0.5f}) {
    const check::GemmShape s = shape(700, 650, 900, Trans::N, Trans::T, beta, 5);
    HostFloats A(std::vector<float>(check::a_elems(s)), true), B(std::vector<float>(check::b_elems(s)), true),
        C(std::vector<float>(check::c_elems(s)), true);
    for (int call = 0; call < 4; ++call) {
      const check::GemmData d = check::make_gemm_data(s, 900 + call);
      std::memcpy(A.data(), d.A.data(), d.A.size() * sizeof(float));
      std::memcpy(B.data(), d.B.data(), d.B.size() * sizeof(float));
      std::vector<float> c0 = d.C0;
      if (beta == 0.0f) std::fill(c0.begin(), c0.end(), std::nanf(""));
      std::memcpy(C.data(), c0.data(), c0.size() * sizeof(float));
      gemm_host(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.data(), s.lda, B.data(), s.ldb, s.beta, C.data(), s.ldc);
      EXPECT_EQ(host::last_call().graph, call >= 2) << "call " << call;
      const std::vector<float> c = C.values();
      const check::GemmErrors e = check::compare_gemm(s, check::gemm_reference(s, d), c.data());
      EXPECT_TRUE(e.pass) << "call " << call << " beta " << beta << ": " << e.reason;
    }
  }
}

// __half and __nv_bfloat16 through the same flow (2-byte elements: other piece widths and slot
// counts), checked with the tolerances of their kind.
TEST(GemmHost, HalfAndBfloat16) {
  RUNGS_REQUIRE_GPU();
  uint64_t seed = 700;
  for (check::GemmKind kind : {check::GemmKind::f16, check::GemmKind::bf16})
    for (bool pinned : {false, true})
      for (auto [ta, tb, beta] : {std::tuple<Trans, Trans, float>{Trans::N, Trans::N, 0.0f},
                                  {Trans::T, Trans::N, 0.5f}, {Trans::N, Trans::T, 1.0f}, {Trans::T, Trans::T, 0.0f}}) {
        const check::GemmShape s = shape(517, 1029, 771, ta, tb, beta, 3);
        check::GemmData d = check::make_gemm_data(s, ++seed);
        check::round_inputs(d, kind);
        std::vector<float> c0 = d.C0;
        if (beta == 0.0f) std::fill(c0.begin(), c0.end(), std::nanf(""));
        const std::vector<uint16_t> a16 = check::to_16bit(d.A, kind), b16 = check::to_16bit(d.B, kind),
                                    c16 = check::to_16bit(c0, kind);
        // 16-bit host arrays, pinned or pageable, viewed as floats' halves by HostFloats' storage.
        std::vector<uint16_t> pa(a16), pb(b16), pc(c16);
        uint16_t *A = pa.data(), *B = pb.data(), *C = pc.data();
        std::vector<uint16_t*> pinned_bufs;
        if (pinned) {
          for (std::vector<uint16_t>* v : {&pa, &pb, &pc}) {
            uint16_t* p = nullptr;
            ASSERT_EQ(cudaSuccess, cudaMallocHost(reinterpret_cast<void**>(&p), v->size() * 2));
            std::memcpy(p, v->data(), v->size() * 2);
            pinned_bufs.push_back(p);
          }
          A = pinned_bufs[0];
          B = pinned_bufs[1];
          C = pinned_bufs[2];
        }
        if (kind == check::GemmKind::f16)
          gemm_host(ta, tb, s.m, s.n, s.k, s.alpha, reinterpret_cast<const __half*>(A), s.lda,
                    reinterpret_cast<const __half*>(B), s.ldb, s.beta, reinterpret_cast<__half*>(C), s.ldc);
        else
          gemm_host(ta, tb, s.m, s.n, s.k, s.alpha, reinterpret_cast<const __nv_bfloat16*>(A), s.lda,
                    reinterpret_cast<const __nv_bfloat16*>(B), s.ldb, s.beta, reinterpret_cast<__nv_bfloat16*>(C),
                    s.ldc);
        const std::vector<float> c = check::from_16bit(std::vector<uint16_t>(C, C + pc.size()), kind);
        for (uint16_t* p : pinned_bufs) cudaFreeHost(p);
        const check::GemmErrors e = check::compare_gemm(s, check::gemm_reference(s, d), c.data(), kind);
        EXPECT_TRUE(e.pass) << check::gemm_kind_name(kind) << (pinned ? " pinned " : " pageable ")
                            << check::describe(s) << ": " << e.reason << " (normwise " << e.normwise << ")";
        EXPECT_EQ(check::padding_written(s, c.data()), 0) << "wrote into the ld padding of C";
      }
}

TEST(GemmHost, FailureInTheMiddleThenTheNextCallWorks) {
  RUNGS_REQUIRE_GPU();
  for (Mem mem : {Mem::pageable, Mem::pinned}) {
    host::Tuning t;
    t.fail_at_step = 5;
    t.plan = host::Plan{4, 4, 1, 0.5};
    expect_injected_failure(t, shape(500, 400, 600), 7);
    EXPECT_HOST_CASE(shape(500, 400, 600, Trans::T, Trans::T, 1.0f), mem, 8);
  }
  // Given back and made again: memory returns, and calls still work.
  size_t free_before = 0, free_after = 0, total = 0;
  EXPECT_HOST_CASE(shape(1500, 1500, 1500), Mem::pinned, 9);
  CUDA_OK(cudaMemGetInfo(&free_before, &total));
  gemm_host_release();
  CUDA_OK(cudaMemGetInfo(&free_after, &total));
  EXPECT_GE(free_after, free_before + 3 * 1500 * 1500 * sizeof(float) - (size_t{2} << 20));
  EXPECT_HOST_CASE(shape(65, 33, 17), Mem::pageable, 10);
}

}  // namespace
}  // namespace rungs::test
