// Every rung of the SGEMV ladder, through the public API, against the fp64 reference.
// The tests iterate over variants(Op::gemv): a new rung is tested without editing this file.
// A rung that throws rungs::Unsupported for a case is skipped for it (the reason is printed);
// a test where every case was unsupported is reported as skipped.
#include <rungs/rungs.hpp>

#include "check/gemv_check.hpp"
#include "gpu_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

namespace rungs::test {
namespace {

std::vector<float> all_ones_bits(size_t n) {  // what DeviceFloats::poison writes: 0xFF bytes, a NaN
  std::vector<float> v(n);
  const uint32_t ones = 0xFFFFFFFFu;
  for (float& x : v) std::memcpy(&x, &ones, sizeof x);
  return v;
}

std::string describe(const check::GemvShape& s) {
  std::ostringstream os;
  os << s.m << "x" << s.n << " " << (s.trans == Trans::N ? "N" : "T") << " lda=" << s.lda << " incx=" << s.incx
     << " incy=" << s.incy << " alpha=" << s.alpha << " beta=" << s.beta;
  return os.str();
}

enum class AX { data, poisoned, null };  // what A and x hold: random data, NaN everywhere, nullptr

struct CaseOpts {
  size_t misalign = 0;  // A, x and y offset by this many floats from a 256-byte aligned base
  cudaStream_t stream = nullptr;
  AX ax = AX::data;
};

struct Outcome {
  bool filtered = false;  // left out by RUNGS_TEST_MAX_MNK
  bool skipped = false;
  std::string skip_reason;
  check::GemmErrors err;
  std::vector<float> y;  // the whole stored y after the call
};

// One call on fresh random data. y starts poisoned (0xFF bytes, NaN) when beta == 0, so an
// unwritten element fails, and holds y0 (NaN in its stride gaps) otherwise; the stride gaps of
// y must come back unchanged either way. A case that ran the rung (the library scales y itself
// when the dot length is 0 or alpha == 0) is recorded for the every-rung check.
Outcome run_case(const std::string& variant, check::GemvShape s, uint64_t seed, const CaseOpts& co = {}) {
  s = check::normalized(s);
  Outcome o;
  if (exceeds_test_limit(static_cast<double>(s.m) * static_cast<double>(s.n))) {
    o.filtered = true;
    return o;
  }
  check::GemvData d = check::make_gemv_data(s, seed);
  if (co.ax != AX::data) {  // alpha == 0 or an empty product: A and x must not be read
    d.A = all_ones_bits(d.A.size());
    d.x = all_ones_bits(d.x.size());
  }
  const std::vector<float> y_start = s.beta == 0.0f ? all_ones_bits(d.y0.size()) : d.y0;
  DeviceFloats A(d.A.size(), co.misalign), x(d.x.size(), co.misalign), y(y_start.size(), co.misalign);
  A.upload(d.A);
  x.upload(d.x);
  y.upload(y_start);
  Options opts;
  opts.variant = variant;
  opts.stream = co.stream;
  const float* a_ptr = co.ax == AX::null ? nullptr : A.data();
  const float* x_ptr = co.ax == AX::null ? nullptr : x.data();
  try {
    gemv(s.trans, s.m, s.n, s.alpha, a_ptr, s.lda, x_ptr, s.incx, s.beta, y.data(), s.incy, opts);
  } catch (const Unsupported& e) {
    o.skipped = true;
    o.skip_reason = e.what();
    return o;
  }
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(co.stream));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  o.y = y.download();
  o.err = check::compare_gemv(s, check::gemv_reference(s, d), o.y.data(), y_start.data());
  if (s.m > 0 && s.n > 0 && s.alpha != 0.0f) record_ran("gemv", variant);
  return o;
}

void expect_case(Tally& t, const std::string& variant, const check::GemvShape& s, uint64_t seed,
                 const CaseOpts& co = {}) {
  const Outcome o = run_case(variant, s, seed, co);
  if (!t.count(o)) return;
  EXPECT_TRUE(o.err.pass) << variant << " " << describe(check::normalized(s)) << " misalign=" << co.misalign << ": "
                          << o.err.reason << " (normwise " << o.err.normwise << ", max_rel " << o.err.max_rel
                          << ", bound_ratio " << o.err.bound_ratio << ")";
}

check::GemvShape shape(Trans t, int64_t m, int64_t n, float alpha = 1.0f, float beta = 0.0f) {
  check::GemvShape s;
  s.trans = t, s.m = m, s.n = n, s.alpha = alpha, s.beta = beta;
  return s;
}

class GemvRung : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { RUNGS_REQUIRE_GPU(); }
};

const Trans kT[2] = {Trans::N, Trans::T};
// Shapes that are multiples of nothing; 20000x3 and 3x20000 give an x longer than the 64 KiB
// of constant memory (const_x must chunk) for one transpose each.
const int64_t kOdd[][2] = {{1, 1},     {1, 1000},   {1000, 1},  {33, 65},  {1000, 999},
                           {4097, 31}, {31, 4097}, {20000, 3}, {3, 20000}};
const int64_t kMid[][2] = {{33, 65}, {1000, 999}, {4097, 31}, {31, 4097}};

TEST_P(GemvRung, OddShapesBothTransposes) {  // beta == 0: y poisoned with NaN before the call
  Tally t;
  uint64_t seed = 100;
  for (Trans tr : kT)
    for (const auto& sh : kOdd) expect_case(t, GetParam(), shape(tr, sh[0], sh[1], 1.0f, 0.0f), ++seed);
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, SkinnyBenchShapes) {  // 2^20 x 64 and 64 x 2^20, once per transpose
  Tally t;
  uint64_t seed = 200;
  for (Trans tr : kT)
    for (const auto& sh : {std::pair<int64_t, int64_t>{1 << 20, 64}, {64, 1 << 20}})
      expect_case(t, GetParam(), shape(tr, sh.first, sh.second), ++seed);
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, LongXBeyondConstantMemory) {  // x of 100000 floats (and a strided x of 300000)
  Tally t;
  uint64_t seed = 250;
  for (int64_t incx : {1, 3}) {
    check::GemvShape n = shape(Trans::N, 2, 100000, 0.5f, 0.25f), tt = shape(Trans::T, 100000, 2, 0.5f, 0.25f);
    n.incx = tt.incx = incx;
    expect_case(t, GetParam(), n, ++seed);
    expect_case(t, GetParam(), tt, ++seed);
  }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, PaddedLeadingDimension) {  // lda = n + 3, NaN in the padding
  Tally t;
  uint64_t seed = 300;
  for (Trans tr : kT)
    for (const auto& sh : kMid) {
      check::GemvShape s = shape(tr, sh[0], sh[1]);
      s.lda = s.n + 3;
      expect_case(t, GetParam(), s, ++seed);
    }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, StridedXAndY) {  // incx = 3, incy = 2: NaN in the gaps of x, gaps of y unchanged
  Tally t;
  uint64_t seed = 400;
  for (Trans tr : kT)
    for (const auto& sh : kMid)
      for (float beta : {0.0f, 0.75f}) {
        check::GemvShape s = shape(tr, sh[0], sh[1], 1.25f, beta);
        s.incx = 3, s.incy = 2;
        expect_case(t, GetParam(), s, ++seed);
      }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, MisalignedPointers) {  // A + 1, x + 1, y + 1: 4-byte aligned only
  Tally t;
  uint64_t seed = 500;
  CaseOpts co;
  co.misalign = 1;
  for (Trans tr : kT) {
    for (const auto& sh : kMid) expect_case(t, GetParam(), shape(tr, sh[0], sh[1]), ++seed, co);
    check::GemvShape s = shape(tr, 300, 1024, -1.0f, 0.5f);  // and odd lda: every row misaligned differently
    s.lda = 1025;
    expect_case(t, GetParam(), s, ++seed, co);
    s.m = 1 << 14, s.n = 64, s.lda = 65;
    expect_case(t, GetParam(), s, ++seed, co);
  }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, AlphaBeta) {  // y0 is read when beta != 0
  const float ab[][2] = {{-1.5f, 0.75f}, {1.0f, 1.0f}, {2.0f, -2.0f}, {0.25f, 0.0f}};
  Tally t;
  uint64_t seed = 600;
  for (const auto& v : ab)
    for (Trans tr : kT)
      for (const auto& sh : kMid) expect_case(t, GetParam(), shape(tr, sh[0], sh[1], v[0], v[1]), ++seed);
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, BetaZeroNeverReadsY) {  // y all NaN before every run; NaN must not leak
  Tally t;
  uint64_t seed = 650;
  for (int rep = 0; rep < 2; ++rep)
    for (Trans tr : kT)
      for (int64_t incy : {1, 2}) {
        check::GemvShape s = shape(tr, 257, 129, -1.5f, 0.0f);
        s.incy = incy;
        expect_case(t, GetParam(), s, ++seed);
      }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, AlphaZeroScalesYWithoutReadingAOrX) {  // A and x all NaN: y = beta * y
  Tally t;
  uint64_t seed = 700;
  CaseOpts co;
  co.ax = AX::poisoned;
  for (Trans tr : kT)
    for (float beta : {0.0f, 1.0f, -3.0f})
      for (int64_t incy : {1, 2}) {
        check::GemvShape s = shape(tr, 70, 33, 0.0f, beta);
        s.incy = incy;
        expect_case(t, GetParam(), s, ++seed, co);
      }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, EmptyProductScalesY) {  // dot length 0 (N with n = 0, T with m = 0): y = beta * y
  Tally t;
  uint64_t seed = 800;
  CaseOpts co;
  co.ax = AX::null;  // A and x may be null: nothing is read through them
  for (float beta : {0.0f, 1.0f, -3.0f})
    for (int64_t incy : {1, 2}) {
      check::GemvShape n = shape(Trans::N, 70, 0, 1.0f, beta), tt = shape(Trans::T, 0, 70, 1.0f, beta);
      n.incy = tt.incy = incy;
      expect_case(t, GetParam(), n, ++seed, co);
      expect_case(t, GetParam(), tt, ++seed, co);
    }
  RUNGS_FINISH(t);
}

TEST_P(GemvRung, EmptyYIsANoOp) {  // out_len 0: nothing read or written, null pointers legal
  Options o;
  o.variant = GetParam();
  DeviceFloats y(4);
  y.poison();
  try {
    gemv(Trans::N, 0, 5, 1.0f, nullptr, 5, nullptr, 1, 0.0f, nullptr, 1, o);
    gemv(Trans::T, 5, 0, 1.0f, nullptr, 1, nullptr, 1, 0.0f, nullptr, 1, o);
    gemv(Trans::N, 0, 5, 1.0f, nullptr, 5, nullptr, 1, 0.0f, y.data(), 1, o);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << e.what();
  }
  CUDA_OK(cudaDeviceSynchronize());
  for (float v : y.download()) EXPECT_TRUE(std::isnan(v));
}

TEST_P(GemvRung, NaNInAPropagatesToItsOutputOnly) {
  Tally t;
  for (Trans tr : kT) {
    check::GemvShape s = check::normalized(shape(tr, 97, 130));
    check::GemvData d = check::make_gemv_data(s, 900);
    d.A[41 * s.lda + 7] = std::numeric_limits<float>::quiet_NaN();  // row 41, column 7
    const int64_t bad = tr == Trans::N ? 41 : 7;
    DeviceFloats A(d.A.size()), x(d.x.size()), y(d.y0.size());
    A.upload(d.A), x.upload(d.x), y.poison();
    Options o;
    o.variant = GetParam();
    try {
      gemv(tr, s.m, s.n, 1.0f, A.data(), s.lda, x.data(), 1, 0.0f, y.data(), 1, o);
    } catch (const Unsupported& e) {
      t.skip(e.what());
      continue;
    }
    ++t.ran;
    CUDA_OK(cudaDeviceSynchronize());
    const auto out = y.download();
    const auto err = check::compare_gemv(s, check::gemv_reference(s, d), out.data(), nullptr);
    EXPECT_TRUE(err.pass) << err.reason;  // the reference has the NaN at the same place
    for (int64_t i = 0; i < check::gemv_out_len(s); ++i) EXPECT_EQ(std::isnan(out[i]), i == bad) << "output " << i;
  }
  RUNGS_FINISH(t);
}

// 4 host threads, each on its own stream, 3 calls each on different shapes (split_k and any
// rung with scratch memory must keep the calls apart). Each thread counts its cases in a tally of
// its own; merged after the join, they decide whether the test ran or is skipped.
TEST_P(GemvRung, ConcurrentStreamsAndThreads) {
  std::vector<std::thread> pool;
  std::vector<Tally> tallies(4);
  std::vector<std::string> why(4);  // what went wrong in thread t
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      cudaStream_t st;
      const cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
      if (e != cudaSuccess) {
        why[t] = std::string("cudaStreamCreateWithFlags: ") + cudaGetErrorString(e);
        return;
      }
      const int64_t shapes[3][2] = {{64 + t, 65536 - 7 * t}, {3000 + t, 257 - t}, {33 + t, 4097}};
      for (int rep = 0; rep < 3; ++rep) {
        check::GemvShape s = shape((t + rep) % 2 ? Trans::T : Trans::N, shapes[rep][0], shapes[rep][1], 1.0f,
                                   t % 2 ? 0.5f : 0.0f);
        CaseOpts co;
        co.stream = st;
        const Outcome o = run_case(GetParam(), s, 1000 + 10 * t + rep, co);
        if (tallies[t].count(o) && !o.err.pass) why[t] += describe(s) + ": " + o.err.reason + " ";
      }
      cudaStreamDestroy(st);
    });
  for (auto& th : pool) th.join();
  Tally tally;
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(why[t], "") << "thread " << t;
    tally.merge(tallies[t]);
  }
  RUNGS_FINISH(tally);
}

// Captured into a CUDA graph, then replayed on two sets of fresh inputs written between the
// launches (the graph reads the buffers when it runs; split_k's scratch is the graph's own). Both
// transposes, beta != 0 and a short wide shape that splits k. A rung that cannot be captured
// throws rungs::Unsupported (then skipped).
TEST_P(GemvRung, CapturedGraphReplaysOnFreshInputs) {
  Tally tally;
  uint64_t seed = 1200;
  for (Trans tr : kT)
    for (const auto& sh : {std::pair<int64_t, int64_t>{1000, 999}, {64, 65536}}) {
      const check::GemvShape s = check::normalized(shape(tr, sh.first, sh.second, 1.5f, sh.first == 1000 ? 0.5f : 0.0f));
      if (exceeds_test_limit(static_cast<double>(s.m) * static_cast<double>(s.n))) {
        ++tally.filtered;
        continue;
      }
      check::GemvData d = check::make_gemv_data(s, seed);
      std::vector<float> y_start;
      DeviceFloats A(d.A.size()), x(d.x.size()), y(d.y0.size());
      capture_and_replay(
          tally,
          [&](cudaStream_t st) {
            gemv(s.trans, s.m, s.n, s.alpha, A.data(), s.lda, x.data(), s.incx, s.beta, y.data(), s.incy,
                 options(GetParam(), st));
          },
          [&](int) {
            d = check::make_gemv_data(s, ++seed);
            y_start = s.beta == 0.0f ? all_ones_bits(d.y0.size()) : d.y0;
            A.upload(d.A);
            x.upload(d.x);
            y.upload(y_start);
          },
          [&](int rep) {
            const std::vector<float> out = y.download();
            const auto err = check::compare_gemv(s, check::gemv_reference(s, d), out.data(), y_start.data());
            EXPECT_TRUE(err.pass) << GetParam() << " " << describe(s) << " replay " << rep << ": " << err.reason;
          });
    }
  RUNGS_FINISH(tally);
}

INSTANTIATE_TEST_SUITE_P(Ladder, GemvRung, ::testing::ValuesIn(variant_names_with_auto(Op::gemv)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// `auto` (and split_k, whose second pass is documented deterministic): the same large input
// twice gives bitwise the same y.
TEST(GemvDeterminism, LargeInputsGiveTheSameResultTwice) {
  RUNGS_REQUIRE_GPU();
  Tally tally;
  const int64_t shapes[][2] = {{64, 1 << 20}, {1 << 20, 64}, {4096, 4096}};
  uint64_t seed = 1100;
  for (const char* variant : {"auto", "split_k"})
    for (Trans tr : kT)
      for (const auto& sh : shapes) {
        check::GemvShape s = check::normalized(shape(tr, sh[0], sh[1]));
        if (exceeds_test_limit(static_cast<double>(s.m) * static_cast<double>(s.n))) {
          ++tally.filtered;
          continue;
        }
        const check::GemvData d = check::make_gemv_data(s, ++seed);
        DeviceFloats A(d.A.size()), x(d.x.size()), y(d.y0.size());
        A.upload(d.A), x.upload(d.x);
        Options o;
        o.variant = variant;
        std::vector<float> out[2];
        bool skipped = false;
        for (auto& r : out) {
          y.poison();
          try {
            gemv(tr, s.m, s.n, 1.0f, A.data(), s.lda, x.data(), 1, 0.0f, y.data(), 1, o);
          } catch (const Unsupported& e) {
            tally.skip(e.what());
            skipped = true;
            break;
          }
          CUDA_OK(cudaDeviceSynchronize());
          r = y.download();
        }
        if (skipped) continue;
        ++tally.ran;
        EXPECT_EQ(0, std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)))
            << variant << " " << describe(s) << ": two runs differ";
        const auto err = check::compare_gemv(s, check::gemv_reference(s, d), out[0].data(), nullptr);
        EXPECT_TRUE(err.pass) << variant << " " << describe(s) << ": " << err.reason;
      }
  RUNGS_FINISH(tally);
}

}  // namespace
}  // namespace rungs::test
