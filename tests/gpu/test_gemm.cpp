// Every rung of the SGEMM ladder, through the public API, against the fp64 reference.
// The tests iterate over variants(Op::gemm): a new rung is tested without editing this file.
#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"
#include "gemm/gemm_rung.hpp"
#include "gpu_env.hpp"
#include "tune/warptile.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <thread>

namespace rungs::test {
namespace {

struct Outcome {
  bool filtered = false;  // left out by RUNGS_TEST_MAX_MNK
  bool skipped = false;
  std::string skip_reason;
  check::GemmErrors err;
  std::vector<float> C;  // the whole stored C after the call
};

// The multiplication under test: C = alpha op(A) op(B) + beta C for shape s, device pointers,
// queued on `stream`.
using GemmCall = std::function<void(const check::GemmShape& s, const float* A, const float* B, float* C,
                                    cudaStream_t stream)>;

// One call on fresh random data: C is poisoned with NaN when beta == 0 (an unwritten element
// fails), otherwise it holds C0 with NaN in the ld padding (a write there is caught).
Outcome run_call(check::GemmShape s, uint64_t seed, size_t misalign, cudaStream_t stream, const GemmCall& call) {
  s = check::normalized(s);
  Outcome o;
  if (exceeds_test_limit(static_cast<double>(s.m) * s.n * s.k)) {
    o.filtered = true;
    return o;
  }
  const check::GemmData d = check::make_gemm_data(s, seed);
  DeviceFloats A(d.A.size(), misalign), B(d.B.size(), misalign), C(d.C0.size(), misalign);
  A.upload(d.A);
  B.upload(d.B);
  if (s.beta == 0.0f) C.poison(); else C.upload(d.C0);
  try {
    call(s, A.data(), B.data(), C.data(), stream);
  } catch (const Unsupported& e) {
    o.skipped = true;
    o.skip_reason = e.what();
    return o;
  }
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  o.C = C.download();
  o.err = check::compare_gemm(s, check::gemm_reference(s, d), o.C.data());
  // The padding of C (columns n..ldc) must be untouched: it held NaN before the call.
  EXPECT_EQ(check::padding_written(s, o.C.data()), 0) << "wrote into the ld padding of C";
  return o;
}

// run_call through the public API with Options::variant = variant. A case that ran the rung (the
// library scales C itself when k == 0 or alpha == 0) is recorded for the every-rung check.
Outcome run_case(const std::string& variant, const check::GemmShape& shape, uint64_t seed, size_t misalign = 0,
                 cudaStream_t stream = nullptr) {
  Outcome o = run_call(shape, seed, misalign, stream,
                       [&](const check::GemmShape& s, const float* A, const float* B, float* C, cudaStream_t st) {
                         Options opts;
                         opts.variant = variant;
                         opts.stream = st;
                         gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A, s.lda, B, s.ldb, s.beta, C, s.ldc, opts);
                       });
  if (!o.filtered && !o.skipped && shape.m > 0 && shape.n > 0 && shape.k > 0 && shape.alpha != 0.0f)
    record_ran("gemm", variant);
  return o;
}

// The element types and math modes a rung does (VariantInfo::types).
std::string types_of(const std::string& rung) {
  for (const auto& v : variants(Op::gemm))
    if (v.name == rung) return v.types;
  return "";
}

// The fp32 tests of a rung: a rung without an fp32 entry (the tensor-core rungs, tested in
// test_gemm_tc.cpp for the kinds they do) is skipped, saying so. check_case counts each case in
// tally_; RUNGS_FINISH(tally_) ends each test.
class GemmRung : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    RUNGS_REQUIRE_GPU();
    if (GetParam() == "auto") return;
    const std::string types = types_of(GetParam());
    if ((" " + types + " ").find(" f32 ") == std::string::npos)
      GTEST_SKIP() << GetParam() << " has no fp32 entry (it does: " << types << "; GemmTc tests those)";
  }
  void check_case(const check::GemmShape& s, uint64_t seed, size_t misalign = 0) {
    const Outcome o = run_case(GetParam(), s, seed, misalign);
    if (!tally_.count(o)) return;
    EXPECT_TRUE(o.err.pass) << GetParam() << " " << check::describe(check::normalized(s)) << " misalign "
                            << misalign << ": " << o.err.reason << " (normwise " << o.err.normwise << ", max_rel "
                            << o.err.max_rel << ")";
  }
  Tally tally_;
};

const Trans kT[2] = {Trans::N, Trans::T};

TEST_P(GemmRung, OddShapesAllTransposes) {
  const int64_t shapes[][3] = {{1, 1, 1}, {127, 129, 65}, {1000, 13, 777}, {513, 1025, 257}, {33, 1, 2049},
                               {1, 77, 300}, {5, 7, 3}, {200, 264, 9}};
  uint64_t seed = 100;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (const auto& sh : shapes) {
        check::GemmShape s;
        s.ta = ta, s.tb = tb, s.m = sh[0], s.n = sh[1], s.k = sh[2];
        check_case(s, ++seed);
      }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmRung, TileMultiplesAndNeighbours) {
  const int64_t shapes[][3] = {{512, 512, 512}, {511, 513, 515}, {256, 384, 1024}, {1024, 1024, 1024}};
  uint64_t seed = 200;
  for (const auto& sh : shapes)
    for (Trans ta : kT)
      for (Trans tb : kT) {
        check::GemmShape s;
        s.ta = ta, s.tb = tb, s.m = sh[0], s.n = sh[1], s.k = sh[2];
        if (sh[0] == 1024 && (ta != Trans::N || tb != Trans::N)) continue;  // one large case is enough
        check_case(s, ++seed);
      }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmRung, PaddedLeadingDimensions) {
  uint64_t seed = 300;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (int pad : {1, 3, 4, 37}) {
        check::GemmShape s;
        s.ta = ta, s.tb = tb, s.m = 131, s.n = 140, s.k = 96;
        s = check::normalized(s);
        s.lda += pad, s.ldb += pad, s.ldc += pad;
        check_case(s, ++seed);
      }
  RUNGS_FINISH(tally_);
}

// A + 1, B + 1, C + 1: 4-byte aligned only. Every ld is a multiple of 4 floats, so each row is as
// aligned as its matrix's first element and only the pointers defeat the 128-bit loads; m and n
// are not multiples of 16. 136 x 264 x 24 (more than one tile each way, a partial k tile) is within
// the sanitizer runs' RUNGS_TEST_MAX_MNK (2^22), which leaves out 260 x 136 x 200.
TEST_P(GemmRung, MisalignedPointers) {
  const int64_t shapes[][3] = {{260, 136, 200}, {136, 264, 24}};
  uint64_t seed = 400;
  for (const auto& sh : shapes)
    for (Trans ta : kT)
      for (Trans tb : kT) {
        check::GemmShape s;
        s.ta = ta, s.tb = tb, s.m = sh[0], s.n = sh[1], s.k = sh[2];
        check_case(s, ++seed, 1);
      }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmRung, AlphaBeta) {
  const float ab[][2] = {{-1.5f, 0.75f}, {1.0f, 1.0f}, {2.0f, -2.0f}, {0.25f, 0.0f}};
  uint64_t seed = 500;
  for (const auto& v : ab)
    for (Trans ta : kT) {
      check::GemmShape s;
      s.ta = ta, s.tb = Trans::T, s.m = 150, s.n = 97, s.k = 130, s.alpha = v[0], s.beta = v[1];
      check_case(s, ++seed);
    }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmRung, EmptyProductScalesC) {  // k == 0 and alpha == 0: C = beta * C, A and B unread
  for (float beta : {0.0f, 1.0f, -3.0f})
    for (int variant_k : {0, 17}) {
      check::GemmShape s;
      s.m = 70, s.n = 33, s.k = variant_k, s.alpha = variant_k == 0 ? 1.0f : 0.0f, s.beta = beta;
      s = check::normalized(s);
      s.lda = std::max<int64_t>(1, s.k);
      check_case(s, 600);
    }
  // Null A and B are legal when nothing is read through them.
  DeviceFloats C(10 * 10);
  C.poison();
  Options o;
  o.variant = GetParam();
  try {
    gemm(Trans::N, Trans::N, 10, 10, 0, 1.0f, nullptr, 1, nullptr, 10, 0.0f, C.data(), 10, o);
    ++tally_.ran;
    CUDA_OK(cudaDeviceSynchronize());
    for (float x : C.download()) ASSERT_EQ(x, 0.0f);
  } catch (const Unsupported& e) {
    tally_.skip(e.what());
  }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmRung, NaNInAPropagatesToItsRowOnly) {
  check::GemmShape s;
  s.m = 97, s.n = 130, s.k = 75;
  s = check::normalized(s);
  check::GemmData d = check::make_gemm_data(s, 700);
  const int64_t bad_row = 41;
  d.A[bad_row * s.lda + 7] = std::numeric_limits<float>::quiet_NaN();
  DeviceFloats A(d.A.size()), B(d.B.size()), C(d.C0.size());
  A.upload(d.A), B.upload(d.B), C.poison();
  Options o;
  o.variant = GetParam();
  try {
    gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, A.data(), s.lda, B.data(), s.ldb, 0.0f, C.data(), s.ldc, o);
  } catch (const Unsupported& e) {
    GTEST_SKIP() << e.what();
  }
  CUDA_OK(cudaDeviceSynchronize());
  const auto out = C.download();
  // The reference propagates the NaN too, so the whole comparison must pass, NaN row included.
  const auto err = check::compare_gemm(s, check::gemm_reference(s, d), out.data());
  EXPECT_TRUE(err.pass) << err.reason;
  for (int64_t j = 0; j < s.n; ++j) EXPECT_TRUE(std::isnan(out[bad_row * s.ldc + j])) << "column " << j;
}

// 4 host threads, each on its own stream, 3 calls each. Each thread counts its cases in a tally of
// its own; merged after the join, they decide whether the test ran or is skipped.
TEST_P(GemmRung, ConcurrentStreamsAndThreads) {
  std::vector<std::thread> pool;
  std::vector<Tally> tallies(4);
  std::vector<std::string> why(4);  // what went wrong in thread t (gtest failures inside threads may be lost)
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      cudaStream_t st;
      const cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
      if (e != cudaSuccess) {
        why[t] = std::string("cudaStreamCreateWithFlags: ") + cudaGetErrorString(e);
        return;
      }
      check::GemmShape s;
      s.m = 300 + t, s.n = 257 - t, s.k = 190 + 3 * t, s.beta = t % 2 ? 0.5f : 0.0f;
      for (int rep = 0; rep < 3; ++rep) {
        const Outcome o = run_case(GetParam(), s, 800 + 10 * t + rep, 0, st);
        if (tallies[t].count(o) && !o.err.pass) why[t] += "rep " + std::to_string(rep) + ": " + o.err.reason + "; ";
      }
      cudaStreamDestroy(st);
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(why[t], "") << "thread " << t;
    tally_.merge(tallies[t]);
  }
  RUNGS_FINISH(tally_);
}

// Captured into a CUDA graph, then replayed on two sets of fresh inputs written between the
// launches: the graph must read the buffers when it runs, and the scratch a rung allocates (split-K
// partials) must work at every replay. A shape for the tiled rungs, a skinny one with a long k for
// the split-K choices. A rung that cannot be captured throws rungs::Unsupported (then skipped).
TEST_P(GemmRung, CapturedGraphReplaysOnFreshInputs) {
  const int64_t shapes[][3] = {{300, 257, 190}, {64, 48, 3000}};
  Tally tally;
  uint64_t seed = 900;
  for (const auto& sh : shapes) {
    check::GemmShape s;
    s.ta = sh[0] == 64 ? Trans::T : Trans::N, s.m = sh[0], s.n = sh[1], s.k = sh[2], s.beta = sh[0] == 64 ? 0.0f : 0.5f;
    s = check::normalized(s);
    if (exceeds_test_limit(static_cast<double>(s.m) * s.n * s.k)) {
      ++tally.filtered;
      continue;
    }
    check::GemmData d = check::make_gemm_data(s, seed);
    DeviceFloats A(d.A.size()), B(d.B.size()), C(d.C0.size());
    capture_and_replay(
        tally,
        [&](cudaStream_t st) {
          gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.data(), s.lda, B.data(), s.ldb, s.beta, C.data(), s.ldc,
               options(GetParam(), st));
        },
        [&](int) {
          d = check::make_gemm_data(s, ++seed);
          A.upload(d.A);
          B.upload(d.B);
          if (s.beta == 0.0f) C.poison(); else C.upload(d.C0);
        },
        [&](int rep) {
          const std::vector<float> out = C.download();
          const auto err = check::compare_gemm(s, check::gemm_reference(s, d), out.data());
          EXPECT_TRUE(err.pass) << GetParam() << " " << check::describe(s) << " replay " << rep << ": " << err.reason;
        });
  }
  RUNGS_FINISH(tally);
}

INSTANTIATE_TEST_SUITE_P(Ladder, GemmRung, ::testing::ValuesIn(variant_names_with_auto(Op::gemm)),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Every tile configuration of rung 09 (the tuner's candidates: looped k-tiles, register-staged
// loaders, split-K), not only those its choice table picks, on shapes that are multiples of no
// tile, every transpose, alpha and beta != 0 (so a split's partial sums must be added once each).
// One test per configuration, named after it, so the sanitizers can pick some.
class WarptileConfig : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { RUNGS_REQUIRE_GPU(); }
};

TEST_P(WarptileConfig, OddShapesAllTransposes) {
  const size_t cfg = GetParam();
  const std::string name = sgemm::warptile::configs().at(cfg);
  const int64_t shapes[][3] = {{127, 129, 65}, {1, 77, 1025}, {200, 264, 777}};
  const GemmCall call = [&](const check::GemmShape& s, const float* A, const float* B, float* C, cudaStream_t st) {
    sgemm::warptile::run_config(cfg, {s.ta, s.tb, s.m, s.n, s.k, s.alpha, A, s.lda, B, s.ldb, s.beta, C, s.ldc, st});
  };
  uint64_t seed = 900 + 100 * cfg;
  Tally tally;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (const auto& sh : shapes) {
        check::GemmShape s;
        s.ta = ta, s.tb = tb, s.m = sh[0], s.n = sh[1], s.k = sh[2], s.alpha = 0.75f, s.beta = -1.5f;
        const Outcome o = run_call(s, ++seed, 0, nullptr, call);
        ASSERT_FALSE(o.skipped) << name << ": " << o.skip_reason;
        if (!tally.count(o)) continue;
        EXPECT_TRUE(o.err.pass) << name << " " << check::describe(check::normalized(s)) << ": " << o.err.reason
                                << " (normwise " << o.err.normwise << ")";
      }
  RUNGS_FINISH(tally);
}

INSTANTIATE_TEST_SUITE_P(Warptile, WarptileConfig, ::testing::Range<size_t>(0, sgemm::warptile::configs().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return sgemm::warptile::configs().at(i.param);
                         });

// Article 003's point: compensated summation beats plain fp32 at large k. Positive data
// (no cancellation) makes the plain sum's error grow with k. Both errors are reported.
TEST(GemmAccuracy, KahanBeatsPlainFp32AtLargeK) {
  RUNGS_REQUIRE_GPU();
  check::GemmShape s;
  s.m = 64, s.n = 64, s.k = 16384;
  s = check::normalized(s);
  check::GemmData d = check::make_gemm_data(s, 900);
  for (auto* v : {&d.A, &d.B})
    for (float& x : *v) x = std::fabs(x);
  const check::GemmReference ref = check::gemm_reference(s, d);
  DeviceFloats A(d.A.size()), B(d.B.size()), C(d.C0.size());
  A.upload(d.A), B.upload(d.B);
  auto err_of = [&](const char* variant) {
    C.poison();
    Options o;
    o.variant = variant;
    gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, A.data(), s.lda, B.data(), s.ldb, 0.0f, C.data(), s.ldc, o);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    const auto out = C.download();
    return check::compare_gemm(s, ref, out.data());
  };
  const auto plain = err_of("smem_tiling"), kahan = err_of("kahan"), cublas = err_of("cublas");
  RecordProperty("plain_fp32_max_rel", std::to_string(plain.max_rel));
  RecordProperty("kahan_max_rel", std::to_string(kahan.max_rel));
  RecordProperty("cublas_max_rel", std::to_string(cublas.max_rel));
  std::cout << "k=16384 positive data, max relative error: plain fp32 " << plain.max_rel << ", cuBLAS "
            << cublas.max_rel << ", kahan " << kahan.max_rel << "\n";
  EXPECT_TRUE(kahan.pass) << kahan.reason;
  EXPECT_LT(kahan.max_rel * 4, plain.max_rel);
  EXPECT_LT(kahan.max_rel * 2, cublas.max_rel);
  EXPECT_LT(kahan.max_rel, 4.0 / 16777216.0);  // a few ulps: compensation removed the k-growth
}

}  // namespace
}  // namespace rungs::test
