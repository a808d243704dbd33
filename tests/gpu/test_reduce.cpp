// Every rung of the reduction ladder, through the public API, against the exact reference.
// The tests iterate over variants(Op::reduce): a new rung is tested without editing this file.
// Float results are held to the rung's own promise: `accurate` rungs (reduce::ladder()) and
// `auto` to the API's bound (1 ulp + 2^-40 / 2^-69 sum|x|), plain rungs to the bound any
// summation order meets; integer sums, and float sums of small integers, must be exact.
// A rung that throws rungs::Unsupported for a case is skipped for it (the reason is printed).
#include <rungs/rungs.hpp>

#include "check/reduce_check.hpp"
#include "gpu_env.hpp"
#include "reduce/reduce_rung.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

namespace rungs::test {
namespace {

// `auto` is accurate by the API's promise; a rung by its ladder entry.
bool is_accurate(const std::string& variant) {
  if (variant == "auto") return true;
  for (const auto& r : reduce::ladder())
    if (variant == r.name) return r.accurate;
  return false;
}

const DType kAll[4] = {DType::i32, DType::i64, DType::f32, DType::f64};
const DType kFloats[2] = {DType::f32, DType::f64};
const int64_t kSizes[] = {1, 2, 3, 31, 32, 33, 255, 1000, 4097, 65537, (1 << 20) + 7, (1 << 24) + 3};

size_t out_size(DType t) { return t == DType::f32 ? 4 : 8; }  // i32 and i64 sum into int64

// Raw device memory with room for a deliberate offset.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&p_, bytes + 64) != cudaSuccess) p_ = nullptr;
  }
  ~DeviceBytes() { cudaFree(p_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  char* get() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

void call_reduce(DType t, const void* in, int64_t n, void* out, const Options& o) {
  switch (t) {
    case DType::i32: reduce_sum(static_cast<const int32_t*>(in), n, static_cast<int64_t*>(out), o); break;
    case DType::i64: reduce_sum(static_cast<const int64_t*>(in), n, static_cast<int64_t*>(out), o); break;
    case DType::f32: reduce_sum(static_cast<const float*>(in), n, static_cast<float*>(out), o); break;
    case DType::f64: reduce_sum(static_cast<const double*>(in), n, static_cast<double*>(out), o); break;
  }
}

struct Outcome {
  bool filtered = false, skipped = false;
  std::string skip_reason;
  unsigned char result[8] = {};   // the output as copied back
  bool input_unchanged = true;    // the device input's bytes after the call equal those before
};

// One call: the input uploaded at `offset` elements past a 256-byte aligned base, the output
// poisoned (0xFF bytes) so that an unwritten result fails.
Outcome run_one(const std::string& variant, const check::ReduceData& d, size_t offset = 0,
                cudaStream_t stream = nullptr, bool check_input = true) {
  Outcome o;
  if (exceeds_test_limit(static_cast<double>(d.n))) {
    o.filtered = true;
    return o;
  }
  const size_t off = offset * check::dtype_bytes(d.dtype);
  DeviceBytes in(d.bytes() + off), out(8);
  if (d.bytes()) {
    EXPECT_EQ(cudaSuccess, cudaMemcpy(in.get() + off, d.data(), d.bytes(), cudaMemcpyHostToDevice));
  }
  EXPECT_EQ(cudaSuccess, cudaMemset(out.get(), 0xFF, 8));
  Options opts;
  opts.variant = variant;
  opts.stream = stream;
  try {
    call_reduce(d.dtype, in.get() + off, d.n, out.get(), opts);
  } catch (const Unsupported& e) {
    o.skipped = true;
    o.skip_reason = e.what();
    return o;
  }
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  EXPECT_EQ(cudaSuccess, cudaMemcpy(o.result, out.get(), out_size(d.dtype), cudaMemcpyDeviceToHost));
  if (check_input && d.bytes()) {
    std::vector<unsigned char> back(d.bytes());
    EXPECT_EQ(cudaSuccess, cudaMemcpy(back.data(), in.get() + off, d.bytes(), cudaMemcpyDeviceToHost));
    o.input_unchanged = std::memcmp(back.data(), d.data(), d.bytes()) == 0;
  }
  return o;
}

std::string where(const std::string& v, const check::ReduceData& d, const char* what) {
  std::ostringstream os;
  os << v << " " << check::dtype_name(d.dtype) << " n=" << d.n << " " << what;
  return os.str();
}

// Runs d and checks it against the reference with the variant's own bound. This and expect_exact
// record a case that ran the rung (n > 0: the library writes the empty sum itself) for the
// every-rung check.
void expect_sum(Tally& t, const std::string& v, const check::ReduceData& d, const char* what, size_t offset = 0) {
  const Outcome o = run_one(v, d, offset);
  if (!t.count(o)) return;
  if (d.n > 0) record_ran("reduce", v);
  const auto e = check::compare_reduce(d, check::reduce_reference(d), o.result, is_accurate(v));
  EXPECT_TRUE(e.pass) << where(v, d, what) << " offset=" << offset << ": " << e.reason;
  EXPECT_TRUE(o.input_unchanged) << where(v, d, what) << ": the input was modified";
}

// The result must be exactly the reference's (ints: the exact sum; floats: hi, with lo == 0).
void expect_exact(Tally& t, const std::string& v, const check::ReduceData& d, const char* what, size_t offset = 0) {
  const Outcome o = run_one(v, d, offset);
  if (!t.count(o)) return;
  if (d.n > 0) record_ran("reduce", v);
  const auto ex = check::reduce_reference(d);
  ASSERT_EQ(ex.lo, 0.0);
  if (d.dtype == DType::f32) {
    float f;
    std::memcpy(&f, o.result, 4);
    EXPECT_EQ(static_cast<double>(f), ex.hi) << where(v, d, what) << " offset=" << offset << ": must be exact";
  } else if (d.dtype == DType::f64) {
    double g;
    std::memcpy(&g, o.result, 8);
    EXPECT_EQ(g, ex.hi) << where(v, d, what) << " offset=" << offset << ": must be exact";
  } else {
    const auto e = check::compare_reduce(d, ex, o.result, true);
    EXPECT_TRUE(e.pass) << where(v, d, what) << " offset=" << offset << ": " << e.reason;
  }
  EXPECT_TRUE(o.input_unchanged) << where(v, d, what) << ": the input was modified";
}

// The integers pattern is exact in any order while every partial sum stays below 2^24 (f32):
// guaranteed for n < 2^21. Beyond that f32 falls back to the variant's bound.
bool integers_exact(DType t, int64_t n) { return t != DType::f32 || n < (int64_t{1} << 21); }

class ReduceRung : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { RUNGS_REQUIRE_GPU(); }
};

TEST_P(ReduceRung, RandomAllTypesAllSizes) {
  Tally t;
  uint64_t seed = 100;
  for (DType dt : kAll)
    for (int64_t n : kSizes) expect_sum(t, GetParam(), check::make_reduce_data(dt, n, ++seed), "random");
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, SmallIntegersAreExactInEveryType) {  // catches dropped or doubled elements
  Tally t;
  uint64_t seed = 200;
  for (DType dt : kAll)
    for (int64_t n : kSizes) {
      const auto d = check::make_reduce_data(dt, n, ++seed, check::ReducePattern::integers);
      if (integers_exact(dt, n)) expect_exact(t, GetParam(), d, "integers");
      else expect_sum(t, GetParam(), d, "integers");
    }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, ArticleWorkload) {  // 0, 1, ..., n-1
  Tally t;
  for (DType dt : kAll)
    for (int64_t n : {int64_t{1000}, int64_t{65537}, int64_t{(1 << 20) + 7}}) {
      const auto d = check::make_reduce_data(dt, n, 1, check::ReducePattern::article);
      if (dt == DType::i32 || dt == DType::i64) expect_exact(t, GetParam(), d, "article");
      else expect_sum(t, GetParam(), d, "article");
    }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, EmptySumWritesZero) {  // n == 0: the output (poisoned first) becomes 0
  Tally t;
  for (DType dt : kAll)
    for (bool null_in : {false, true}) {
      DeviceBytes in(8), out(8);
      CUDA_OK(cudaMemset(out.get(), 0xFF, 8));
      Options o;
      o.variant = GetParam();
      try {
        call_reduce(dt, null_in ? nullptr : in.get(), 0, out.get(), o);
      } catch (const Unsupported& e) {
        t.skip(e.what());
        continue;
      }
      ++t.ran;
      CUDA_OK(cudaDeviceSynchronize());
      unsigned char got[8];
      CUDA_OK(cudaMemcpy(got, out.get(), 8, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < out_size(dt); ++i) EXPECT_EQ(got[i], 0) << check::dtype_name(dt) << " byte " << i;
      for (size_t i = out_size(dt); i < 8; ++i) EXPECT_EQ(got[i], 0xFF) << check::dtype_name(dt) << " wrote past the output";
    }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, MisalignedInput) {  // in + 1 element: no 16-byte alignment for vector loads
  Tally t;
  uint64_t seed = 300;
  for (DType dt : kAll)
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, int64_t{31}, int64_t{33}, int64_t{4097},
                      int64_t{65537}, int64_t{(1 << 20) + 7}})
      for (size_t offset : {size_t{1}, size_t{3}}) {
        expect_sum(t, GetParam(), check::make_reduce_data(dt, n, ++seed), "random", offset);
        const auto d = check::make_reduce_data(dt, n, ++seed, check::ReducePattern::integers);
        expect_exact(t, GetParam(), d, "integers", offset);
      }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, InputIsNotModified) {  // the device bytes after the call equal those before
  Tally t;
  uint64_t seed = 400;
  for (DType dt : kAll)
    for (int64_t n : {int64_t{33}, int64_t{65537}, int64_t{(1 << 20) + 7}})
      for (size_t offset : {size_t{0}, size_t{1}}) {
        const auto d = check::make_reduce_data(dt, n, ++seed);
        const Outcome o = run_one(GetParam(), d, offset);
        if (!t.count(o)) continue;
        EXPECT_TRUE(o.input_unchanged) << where(GetParam(), d, "random") << " offset=" << offset;
      }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, NaNAndInfinities) {
  Tally t;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  uint64_t seed = 500;
  auto set = [](check::ReduceData& d, int64_t i, double v) {
    if (d.dtype == DType::f32) d.f32[i] = static_cast<float>(v); else d.f64[i] = v;
  };
  for (DType dt : kFloats)
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{1000}, int64_t{65537}, int64_t{(1 << 20) + 7}}) {
      ++seed;
      const int64_t pos = static_cast<int64_t>((seed * 0x9E3779B97F4A7C15ull >> 20) % static_cast<uint64_t>(n));
      const int64_t other = (pos + n / 2) % n;
      struct Case {
        const char* what;
        double a, b;  // a at pos, b at other (b ignored when n == 1)
      };
      const Case cases[] = {{"NaN at a random position", nan, 0.5},      {"+Inf", inf, 0.5},
                            {"-Inf", -inf, 0.5},                         {"+Inf and -Inf", inf, -inf},
                            {"NaN and +Inf", nan, inf},                  {"NaN at the last element", 0.5, nan}};
      for (const auto& c : cases) {
        check::ReduceData d = check::make_reduce_data(dt, n, seed);
        if (n == 1 && c.b != 0.5) {  // one element: just b
          set(d, 0, c.b);
        } else {
          set(d, pos, c.a);
          if (c.b != 0.5) set(d, c.a == 0.5 ? n - 1 : other, c.b);
        }
        expect_sum(t, GetParam(), d, c.what);
      }
    }
  RUNGS_FINISH(t);
}

TEST_P(ReduceRung, AccurateSumsAreReproducible) {  // same input twice: bitwise the same result
  if (!is_accurate(GetParam())) GTEST_SKIP() << GetParam() << " is a plain rung: reproducibility is not promised";
  Tally t;
  uint64_t seed = 600;
  for (DType dt : kFloats)
    for (int64_t n : {int64_t{4097}, int64_t{65537}, int64_t{(1 << 20) + 7}, int64_t{(1 << 24) + 3}})
      for (auto p : {check::ReducePattern::random, check::ReducePattern::cancellation}) {
        const auto d = check::make_reduce_data(dt, n, ++seed, p);
        const Outcome a = run_one(GetParam(), d, 0, nullptr, false);
        if (!t.count(a)) continue;
        const Outcome b = run_one(GetParam(), d, 0, nullptr, false);
        EXPECT_EQ(0, std::memcmp(a.result, b.result, out_size(dt))) << where(GetParam(), d, "") << ": two runs differ";
        const auto e = check::compare_reduce(d, check::reduce_reference(d), a.result, true);
        EXPECT_TRUE(e.pass) << where(GetParam(), d, "") << ": " << e.reason;
      }
  RUNGS_FINISH(t);
}

// The pattern a plain float sum fails (tests/cpu/test_gemv_reduce_check.cpp shows it): pairs
// of large values that cancel, and small values whose sum is the answer.
TEST_P(ReduceRung, CancellationMeetsTheAccurateBound) {
  if (!is_accurate(GetParam())) GTEST_SKIP() << GetParam() << " is a plain rung: the accurate bound is not promised";
  Tally t;
  for (DType dt : kFloats)
    for (int64_t n : {int64_t{1001}, int64_t{(1 << 20) + 3}})
      expect_sum(t, GetParam(), check::make_reduce_data(dt, n, 700 + n, check::ReducePattern::cancellation),
                 "cancellation");
  RUNGS_FINISH(t);
}

// n >= 2^31: 64-bit indexing. 2^31 + 5 int32 elements of 0x01010101 (cudaMemset to 0x01).
TEST_P(ReduceRung, Int32BeyondTwoToThe31) {
  const int64_t n = (int64_t{1} << 31) + 5;
  if (exceeds_test_limit(static_cast<double>(n))) GTEST_SKIP() << "n = 2^31 + 5 exceeds RUNGS_TEST_MAX_MNK";
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < (size_t{9} << 30))
    GTEST_SKIP() << "needs 9 GiB of free device memory for 8 GiB of input, " << (free_b >> 20) << " MiB free";
  DeviceBytes in(static_cast<size_t>(n) * 4), out(8);
  ASSERT_NE(in.get(), nullptr) << "cudaMalloc of 8 GiB failed";
  CUDA_OK(cudaMemset(in.get(), 0x01, static_cast<size_t>(n) * 4));
  CUDA_OK(cudaMemset(out.get(), 0xFF, 8));
  Options o;
  o.variant = GetParam();
  try {
    reduce_sum(reinterpret_cast<const int32_t*>(in.get()), n, reinterpret_cast<int64_t*>(out.get()), o);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << e.what();
  }
  CUDA_OK(cudaDeviceSynchronize());
  int64_t got = 0;
  CUDA_OK(cudaMemcpy(&got, out.get(), 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, n * int64_t{16843009}) << "sum of 2^31 + 5 elements of 0x01010101";
  int32_t tail[64];  // the end of the input is untouched
  CUDA_OK(cudaMemcpy(tail, in.get() + (static_cast<size_t>(n) - 64) * 4, sizeof tail, cudaMemcpyDeviceToHost));
  for (int32_t v : tail) EXPECT_EQ(v, 0x01010101);
}

// 8 host threads, each on its own stream, each summing different data of every type; the
// buffers are set up first so the calls overlap. Integer data: every result must be exact.
void concurrent_exact(const std::vector<std::string>& variants_per_thread, Tally& tally) {
  constexpr int kThreads = 8, kReps = 4;
  struct Job {
    check::ReduceData d;
    check::ReduceExact e;
    std::unique_ptr<DeviceBytes> in, out;
  };
  std::vector<std::vector<Job>> jobs(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kReps; ++r) {
      Job j;
      const DType dt = kAll[(t + r) % 4];
      const int64_t n = (int64_t{1} << (12 + 2 * r)) + 17 * t + 1;  // 4K .. 256K elements
      j.d = check::make_reduce_data(dt, n, 1000 + 10 * t + r,
                                    dt == DType::i32 || dt == DType::i64 ? check::ReducePattern::random
                                                                          : check::ReducePattern::integers);
      j.e = check::reduce_reference(j.d);
      j.in = std::make_unique<DeviceBytes>(j.d.bytes());
      j.out = std::make_unique<DeviceBytes>(8);
      EXPECT_EQ(cudaSuccess, cudaMemcpy(j.in->get(), j.d.data(), j.d.bytes(), cudaMemcpyHostToDevice));
      EXPECT_EQ(cudaSuccess, cudaMemset(j.out->get(), 0xFF, 8));
      jobs[t].push_back(std::move(j));
    }
  // The copies and memsets above ran on the legacy stream, which the non-blocking streams below do
  // not wait for.
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  std::vector<std::string> skipped(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      cudaStream_t st;
      if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return;
      Options o;
      o.variant = variants_per_thread[t % variants_per_thread.size()];
      o.stream = st;
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (auto& j : jobs[t]) {
        try {
          call_reduce(j.d.dtype, j.in->get(), j.d.n, j.out->get(), o);
        } catch (const Unsupported& e) {
          skipped[t] = e.what();
          break;
        }
      }
      cudaStreamSynchronize(st);
      cudaStreamDestroy(st);
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  for (int t = 0; t < kThreads; ++t) {
    if (!skipped[t].empty()) {
      tally.skip(skipped[t]);
      continue;
    }
    for (auto& j : jobs[t]) {
      unsigned char got[8];
      ASSERT_EQ(cudaSuccess, cudaMemcpy(got, j.out->get(), 8, cudaMemcpyDeviceToHost));
      ++tally.ran;
      if (j.d.dtype == DType::f32 || j.d.dtype == DType::f64) {
        double v;
        if (j.d.dtype == DType::f32) {
          float f;
          std::memcpy(&f, got, 4);
          v = f;
        } else {
          std::memcpy(&v, got, 8);
        }
        EXPECT_EQ(v, j.e.hi) << "thread " << t << " (" << variants_per_thread[t % variants_per_thread.size()]
                             << ") " << check::dtype_name(j.d.dtype) << " n=" << j.d.n;
      } else {
        const auto e = check::compare_reduce(j.d, j.e, got, true);
        EXPECT_TRUE(e.pass) << "thread " << t << " (" << variants_per_thread[t % variants_per_thread.size()]
                            << "): " << e.reason;
      }
    }
  }
}

TEST_P(ReduceRung, ConcurrentStreamsAndThreads) {
  Tally t;
  concurrent_exact({GetParam()}, t);
  RUNGS_FINISH(t);
}

// Captured into a CUDA graph, then replayed on two sets of fresh inputs written between the
// launches (the graph reads the input when it runs; the partials' scratch is the graph's own).
// Every type, a size of one block and one of many. A rung that cannot be captured throws
// rungs::Unsupported (then skipped).
TEST_P(ReduceRung, CapturedGraphReplaysOnFreshInputs) {
  Tally t;
  uint64_t seed = 1300;
  for (DType dt : kAll)
    for (int64_t n : {int64_t{1000}, (int64_t{1} << 20) + 7}) {
      if (exceeds_test_limit(static_cast<double>(n))) {
        ++t.filtered;
        continue;
      }
      DeviceBytes in(static_cast<size_t>(n) * check::dtype_bytes(dt)), out(8);
      check::ReduceData d;
      capture_and_replay(
          t,
          [&](cudaStream_t st) { call_reduce(dt, in.get(), n, out.get(), options(GetParam(), st)); },
          [&](int) {
            d = check::make_reduce_data(dt, n, ++seed);
            EXPECT_EQ(cudaSuccess, cudaMemcpy(in.get(), d.data(), d.bytes(), cudaMemcpyHostToDevice));
            EXPECT_EQ(cudaSuccess, cudaMemset(out.get(), 0xFF, 8));
            EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));
          },
          [&](int rep) {
            unsigned char got[8] = {};
            EXPECT_EQ(cudaSuccess, cudaMemcpy(got, out.get(), out_size(dt), cudaMemcpyDeviceToHost));
            const auto e = check::compare_reduce(d, check::reduce_reference(d), got, is_accurate(GetParam()));
            EXPECT_TRUE(e.pass) << where(GetParam(), d, "captured") << " replay " << rep << ": " << e.reason;
          });
    }
  RUNGS_FINISH(t);
}

INSTANTIATE_TEST_SUITE_P(Ladder, ReduceRung, ::testing::ValuesIn(variant_names_with_auto(Op::reduce)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// auto and single_pass at the same time: 8 threads on 8 streams, alternating the two.
TEST(ReduceConcurrency, AutoAndSinglePassTogether) {
  RUNGS_REQUIRE_GPU();
  Tally t;
  concurrent_exact({"auto", "single_pass"}, t);
  RUNGS_FINISH(t);
}

// The API promises that `auto` is accurate for floats: it must name an `accurate` rung.
TEST(ReduceAuto, NamesAnAccurateRungForFloats) {
  RUNGS_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20, int64_t{1} << 28}) {
      const std::string v = resolve_reduce_variant(dt, n);
      bool found = false;
      for (const auto& r : reduce::ladder())
        if (v == r.name) {
          found = true;
          EXPECT_TRUE(r.accurate) << "auto resolves to " << v << " for " << check::dtype_name(dt) << " n=" << n
                                  << ", which is not an accurate rung";
        }
      EXPECT_TRUE(found) << "auto resolves to an unknown rung " << v;
    }
}

}  // namespace
}  // namespace rungs::test
