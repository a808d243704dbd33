// rungs::dist on two GPUs: every rung of both ladders against rungs::gemm of the gathered operands
// on one GPU (bit for bit where the rung sums in gemm's order, else within 16-bit tolerance), odd
// sizes, padded rows, beta != 0, repeated calls with the workspace growing and released, calls that
// fail (on one rank or on all) followed by working ones, ranks as threads of this process
// (ncclCommInitAll) and as processes (examples/dist_two_process, the unique id through a file).
// Skipped with the reason where fewer than 2 GPUs are visible or the library has no dist.
#include <rungs/rungs.hpp>

#include "gpu_env.hpp"

#include <gtest/gtest.h>

#if RUNGS_HAVE_DIST
#include <rungs/dist.hpp>

#include "check/host_util.hpp"
#include "cpu/api_errors.hpp"
#include "dist/dist_rung.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>
#endif

namespace rungs::test {
namespace {

#if RUNGS_HAVE_DIST

// The ranks of every test: 2, or RUNGS_TEST_WORLD GPUs (the same tests on 4: scripts/gpu.sh dist).
int test_world() {
  const char* w = std::getenv("RUNGS_TEST_WORLD");
  const int n = w != nullptr ? std::atoi(w) : 2;
  return n >= 2 ? n : 2;
}
const int kWorld = test_world();

std::string two_gpus_unavailable() {
  const std::string why = gpu_unavailable_reason();
  if (!why.empty()) return why;
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < kWorld)
    return "rungs::dist needs " + std::to_string(kWorld) + " GPUs; " + std::to_string(count) + " visible";
  return "";
}

#define RUNGS_REQUIRE_TWO_GPUS()                              \
  do {                                                        \
    const std::string rungs_why_ = two_gpus_unavailable();    \
    if (!rungs_why_.empty()) GTEST_SKIP() << rungs_why_;      \
  } while (0)

// The communicators of `world` ranks (kWorld unless said), one per GPU, made by ncclCommInitAll in
// this process.
struct Comms {
  int world;
  std::vector<ncclComm_t> comm;
  explicit Comms(int w = kWorld) : world(w), comm(static_cast<size_t>(w), nullptr) {
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off
    std::vector<int> devs(world);
    for (int r = 0; r < world; ++r) devs[r] = r;
    const ncclResult_t res = ncclCommInitAll(comm.data(), world, devs.data());
    if (res != ncclSuccess) throw std::runtime_error(std::string("ncclCommInitAll: ") + ncclGetErrorString(res));
  }
  ~Comms() {
    for (ncclComm_t c : comm) {
      dist::release(c);
      ncclCommDestroy(c);
    }
  }
};

// Runs body(rank) on `world` threads, each on its rank's GPU; rethrows the first exception.
void on_ranks(const std::function<void(int)>& body, int world = kWorld) {
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        if (cudaSetDevice(r) != cudaSuccess) throw std::runtime_error("cudaSetDevice");
        body(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <typename T>
T to_t(float v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(v);
  else return __float2bfloat16(v);
}
template <typename T>
float to_f(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}
template <typename T>
const char* type_name() {
  return std::is_same_v<T, __half> ? "f16" : "bf16";
}

// A rows x cols host matrix with rows `ld` apart, from (seed, stream); the padding holds NaN so a
// read past a row shows.
template <typename T>
std::vector<T> host_matrix(uint64_t seed, uint64_t stream, int64_t rows, int64_t cols, int64_t ld) {
  std::vector<T> h(static_cast<size_t>(rows * ld), to_t<T>(NAN));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) h[i * ld + j] = to_t<T>(check::util::draw(seed, stream, static_cast<uint64_t>(i * cols + j)));
  return h;
}

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(const std::vector<T>& h) : n(h.size()) {
    if (cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T)) != cudaSuccess) throw std::runtime_error("cudaMalloc");
    if (n && cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy");
  }
  ~Dev() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> h(n);
    if (n && cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy");
    return h;
  }
};

// |alpha| |A||B| + |beta| |C0| per element of C (rows x cols, ld apart): what the rounding errors
// of a correct product scale with. A is rows x k (tight rows), B k x cols (ldb), C0 as C.
template <typename T>
std::vector<double> magnitudes(const std::vector<T>& A, const std::vector<T>& B, int64_t ldb,
                               const std::vector<T>& C0, int64_t rows, int64_t cols, int64_t k, int64_t ld,
                               float alpha, float beta) {
  std::vector<double> mag(static_cast<size_t>(rows * ld), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double a = std::fabs(static_cast<double>(alpha) * to_f(A[i * k + p]));
      for (int64_t j = 0; j < cols; ++j) mag[i * ld + j] += a * std::fabs(to_f(B[p * ldb + j]));
    }
  if (beta != 0.0f)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) mag[i * ld + j] += std::fabs(beta * to_f(C0[i * ld + j]));
  return mag;
}

// got against ref over rows x cols (ld apart): bit for bit, or within what two correct products may
// differ by: each rounds once to the type (half a unit in the last place of the result, relative
// to its magnitude mag) after fp32 sums whose order differs (k u mag each), so
// |got - ref| <= (2 ulp + 2 k u) mag; `extra` roundings of got on the way (each of a value within
// mag) add half an ulp each.
template <typename T>
std::string compare(const std::vector<T>& got, const std::vector<T>& ref, const std::vector<double>& mag, int64_t rows,
                    int64_t cols, int64_t ld, bool bitwise, int64_t k, int extra = 0) {
  const double ulp = std::is_same_v<T, __half> ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
  const double gamma = (2 + 0.5 * extra) * ulp + 2 * static_cast<double>(k) * std::ldexp(1.0, -24);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const size_t at = static_cast<size_t>(i * ld + j);
      const float g = to_f(got[at]), r = to_f(ref[at]);
      const bool same = std::memcmp(&got[at], &ref[at], sizeof(T)) == 0;
      const bool close = std::fabs(g - r) <= gamma * mag[at];
      if (bitwise ? !same : !close)
        return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(g) + ", expected " +
               std::to_string(r) + (bitwise ? " (bit for bit)"
                           : " (beyond (2 ulp + " + std::to_string(extra) + " half ulp + 2 k u) |alpha||A||B| + |beta||C0|)");
    }
  return "";
}

// One allgather_gemm case on every rank: m_local x k of A per rank (rows lda apart), B_r k x n
// (ldb), C world*m x n (ldc), checked against rungs::gemm of the gathered A on the rank's GPU.
struct Shape {
  int64_t m, n, k, pad;  // pad: extra elements per row of every operand
  float alpha, beta;
};

template <typename T>
void allgather_case(const Comms& c, const std::string& variant, bool bitwise, const Shape& s, uint64_t seed) {
  on_ranks([&](int r) {
    const int64_t lda = s.k + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad, M = c.world * s.m;
    const Dev<T> A(host_matrix<T>(seed, 10 + r, s.m, s.k, lda));
    const Dev<T> B(host_matrix<T>(seed, 20 + r, s.k, s.n, ldb));
    const std::vector<T> c0 = host_matrix<T>(seed, 30 + r, M, s.n, ldc);
    const Dev<T> C(c0), C_ref(c0);
    // The gathered A, tight rows, from every rank's inputs (made here from the seed).
    std::vector<T> full;
    for (int q = 0; q < c.world; ++q) {
      const std::vector<T> part = host_matrix<T>(seed, 10 + q, s.m, s.k, lda);
      for (int64_t i = 0; i < s.m; ++i) full.insert(full.end(), part.begin() + i * lda, part.begin() + i * lda + s.k);
    }
    const Dev<T> A_full(full);
    Options o;
    o.variant = variant;
    if (cudaStreamCreateWithFlags(&o.stream, cudaStreamNonBlocking) != cudaSuccess) throw std::runtime_error("stream");
    dist::allgather_gemm(s.m, s.n, s.k, s.alpha, A.p, lda, B.p, ldb, s.beta, C.p, ldc, c.comm[r], o);
    Options single;  // the reference: the single-GPU gemm's own auto choice, on the same stream
    single.stream = o.stream;
    gemm(Trans::N, Trans::N, M, s.n, s.k, s.alpha, A_full.p, std::max<int64_t>(s.k, 1), B.p, ldb, s.beta, C_ref.p,
         ldc, single);
    cudaStreamSynchronize(o.stream);
    cudaStreamDestroy(o.stream);
    const std::vector<double> mag =
        magnitudes(full, host_matrix<T>(seed, 20 + r, s.k, s.n, ldb), ldb, c0, M, s.n, s.k, ldc, s.alpha, s.beta);
    const std::string diff = compare(C.get(), C_ref.get(), mag, M, s.n, ldc, bitwise, s.k);
    EXPECT_EQ(diff, "") << "allgather_gemm " << variant << " " << type_name<T>() << " rank " << r << " m_local=" << s.m
                        << " n_local=" << s.n << " k=" << s.k << " beta=" << s.beta << " world=" << c.world;
  }, c.world);
}

// The roundings gemm_reducescatter's C goes through beyond the reference's one: rung 5 rounds each
// rank's partial and each of the world-1 sums of the reduction to bf16, rungs 6 and 9 each rank's
// partial (auto: the rung auto runs).
int extra_roundings(const std::string& variant, bool bf16, int64_t m, int64_t n, int64_t k, int world) {
  const std::string name =
      variant == "auto" ? dist::detail::ladder()[dist::detail::auto_rung(false, bf16, m, n, k, world)].name : variant;
  if (name == "narrow_partials") return 2 * world - 1;
  if (name == "narrow_copy_engine" || name == "narrow_own_last") return world;
  return 0;
}

// Whether the variant takes this element type (auto takes both; rung 5 bf16 only).
template <typename T>
bool takes(Op op, const std::string& variant) {
  if (variant == "auto") return true;
  for (const VariantInfo& v : variants(op))
    if (v.name == variant) return (" " + v.types + " ").find(std::string(" ") + type_name<T>() + " ") != std::string::npos;
  return false;
}

// One gemm_reducescatter case: A_r m x k_local, B_r k_local x n per rank; the reference is
// rungs::gemm of [A_0 A_1] (m x world*k_local) and [B_0; B_1], rank r's rows. A variant that does not
// take T must refuse it (Unsupported on every rank).
template <typename T>
void reducescatter_case(const Comms& c, const std::string& variant, const Shape& s, uint64_t seed) {
  on_ranks([&](int r) {
    const int64_t M = c.world * s.m, lda = s.k + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad, K = c.world * s.k;
    const Dev<T> A(host_matrix<T>(seed, 40 + r, M, s.k, lda));
    const Dev<T> B(host_matrix<T>(seed, 50 + r, s.k, s.n, ldb));
    const std::vector<T> c0 = host_matrix<T>(seed, 60 + r, s.m, s.n, ldc);
    const Dev<T> C(c0), C_ref(c0);
    std::vector<T> a_cat(static_cast<size_t>(s.m * std::max<int64_t>(K, 1))), b_cat;
    for (int q = 0; q < c.world; ++q) {
      const std::vector<T> a = host_matrix<T>(seed, 40 + q, M, s.k, lda);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.k; ++j) a_cat[i * K + q * s.k + j] = a[(r * s.m + i) * lda + j];
      const std::vector<T> b = host_matrix<T>(seed, 50 + q, s.k, s.n, ldb);
      b_cat.insert(b_cat.end(), b.begin(), b.end());
    }
    const Dev<T> A_cat(a_cat), B_cat(b_cat);
    Options o;
    o.variant = variant;
    if (cudaStreamCreateWithFlags(&o.stream, cudaStreamNonBlocking) != cudaSuccess) throw std::runtime_error("stream");
    if (!takes<T>(Op::gemm_reducescatter, variant)) {
      EXPECT_THROW(dist::gemm_reducescatter(M, s.n, s.k, s.alpha, A.p, lda, B.p, ldb, s.beta, C.p, ldc, c.comm[r], o),
                   Unsupported)
          << variant << " " << type_name<T>();
      cudaStreamDestroy(o.stream);
      return;
    }
    dist::gemm_reducescatter(M, s.n, s.k, s.alpha, A.p, lda, B.p, ldb, s.beta, C.p, ldc, c.comm[r], o);
    Options single;  // the reference: the single-GPU gemm's own auto choice, on the same stream
    single.stream = o.stream;
    gemm(Trans::N, Trans::N, s.m, s.n, K, s.alpha, A_cat.p, std::max<int64_t>(K, 1), B_cat.p, ldb, s.beta, C_ref.p,
         ldc, single);
    cudaStreamSynchronize(o.stream);
    cudaStreamDestroy(o.stream);
    const std::vector<double> mag = magnitudes(a_cat, b_cat, ldb, c0, s.m, s.n, K, ldc, s.alpha, s.beta);
    const int extra = extra_roundings(variant, std::is_same_v<T, __nv_bfloat16>, M, s.n, s.k, c.world);
    const std::string diff = compare(C.get(), C_ref.get(), mag, s.m, s.n, ldc, false, K, extra);
    EXPECT_EQ(diff, "") << "gemm_reducescatter " << variant << " " << type_name<T>() << " rank " << r
                        << " m=" << M << " n=" << s.n << " k_local=" << s.k << " beta=" << s.beta
                        << " world=" << c.world;
  }, c.world);
}

// Odd sizes, padded rows, beta != 0, k = 0, and one larger shape.
const Shape kShapes[] = {{37, 29, 53, 3, 1.0f, 0.0f}, {37, 29, 53, 0, 0.5f, -1.5f}, {64, 128, 256, 0, 1.0f, 0.0f},
                         {5, 7, 0, 1, 2.0f, 0.5f},    {1, 1, 1, 0, 1.0f, 1.0f},      {200, 264, 520, 8, 1.0f, 1.0f}};

// Whether allgather_gemm's C is the single-GPU gemm's bit for bit: the rung's flag (auto: the rung
// auto runs at this shape).
bool allgather_bitwise(const std::string& variant, const Shape& s, int world = kWorld) {
  if (variant == "auto")
    return dist::detail::ladder()[dist::detail::auto_rung(true, true, s.m, s.n, s.k, world)].allgather_bitwise;
  for (const auto& r : dist::detail::ladder())
    if (variant == r.name) return r.allgather_bitwise;
  return false;
}

TEST(DistThreads, AllgatherGemmEveryRung) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  for (const std::string& v : variant_names_with_auto(Op::allgather_gemm)) {
    uint64_t seed = 1;
    for (const Shape& s : kShapes) {
      allgather_case<__nv_bfloat16>(c, v, allgather_bitwise(v, s), s, seed++);
      allgather_case<__half>(c, v, allgather_bitwise(v, s), s, seed++);
    }
    record_ran("allgather_gemm", v);
  }
}

TEST(DistThreads, GemmReduceScatterEveryRung) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  for (const std::string& v : variant_names_with_auto(Op::gemm_reducescatter)) {
    uint64_t seed = 100;
    for (const Shape& s : kShapes) {
      reducescatter_case<__nv_bfloat16>(c, v, s, seed++);
      reducescatter_case<__half>(c, v, s, seed++);
    }
    record_ran("gemm_reducescatter", v);
  }
}

// One rank on one GPU (a communicator of one): every rung and auto of both operations, both types,
// on the paths a rung takes when there is nothing to move, against the single-GPU gemm. Runs
// wherever one GPU is visible.
TEST(DistOneRank, EveryRung) {
  const std::string why = gpu_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  Comms c(1);
  uint64_t seed = 900;
  for (const std::string& v : variant_names_with_auto(Op::allgather_gemm))
    for (const Shape& s : kShapes) {
      allgather_case<__nv_bfloat16>(c, v, allgather_bitwise(v, s, 1), s, seed++);
      allgather_case<__half>(c, v, allgather_bitwise(v, s, 1), s, seed++);
    }
  for (const std::string& v : variant_names_with_auto(Op::gemm_reducescatter))
    for (const Shape& s : kShapes) {
      reducescatter_case<__nv_bfloat16>(c, v, s, seed++);
      reducescatter_case<__half>(c, v, s, seed++);
    }
}

// The pipelines of rungs 2 and 3 on small shapes: the pieces forced (the rule gives one piece
// below 8 MiB of fp32), uneven ones included (37 rows in 3 or 8 pieces), padded rows, beta != 0,
// k = 0; every rung and auto, both operations and types.
TEST(DistThreads, ForcedPiecesEveryRung) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  struct Reset {
    ~Reset() { dist::detail::force_pieces(0); }
  } reset;
  const Shape shapes[] = {{37, 29, 53, 3, 1.0f, 0.0f}, {37, 29, 53, 0, 0.5f, -1.5f}, {5, 7, 0, 1, 2.0f, 0.5f},
                          {200, 264, 520, 8, 1.0f, 1.0f}};
  for (int pieces : {3, 8}) {
    dist::detail::force_pieces(pieces);
    uint64_t seed = 500 + 100 * pieces;
    for (const std::string& v : variant_names_with_auto(Op::gemm_reducescatter))
      for (const Shape& s : shapes) {
        reducescatter_case<__nv_bfloat16>(c, v, s, seed++);
        reducescatter_case<__half>(c, v, s, seed++);
      }
    for (const std::string& v : variant_names_with_auto(Op::allgather_gemm))
      for (const Shape& s : shapes) allgather_case<__nv_bfloat16>(c, v, allgather_bitwise(v, s), s, seed++);
  }
}

// Repeated calls on one communicator: the workspace grows, is reused, is released and comes back.
TEST(DistThreads, RepeatedCallsAndRelease) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  const Shape small{16, 24, 40, 0, 1.0f, 0.0f}, big{96, 80, 300, 0, 1.0f, 1.0f};
  for (int rep = 0; rep < 3; ++rep) {
    allgather_case<__nv_bfloat16>(c, "auto", allgather_bitwise("auto", small), small, 7 + rep);
    allgather_case<__nv_bfloat16>(c, "auto", allgather_bitwise("auto", big), big, 17 + rep);
    reducescatter_case<__nv_bfloat16>(c, "auto", big, 27 + rep);
    reducescatter_case<__nv_bfloat16>(c, "auto", small, 37 + rep);
  }
  for (int r = 0; r < kWorld; ++r) EXPECT_GT(dist::workspace_bytes(c.comm[r]), 0u);
  for (int r = 0; r < kWorld; ++r) dist::release(c.comm[r]);
  for (int r = 0; r < kWorld; ++r) EXPECT_EQ(dist::workspace_bytes(c.comm[r]), 0u);
  allgather_case<__nv_bfloat16>(c, "auto", allgather_bitwise("auto", small), small, 47);
  reducescatter_case<__half>(c, "auto", small, 48);
}

// A failure seen by one rank or by all, each followed by a call that works: no rank hangs, every
// rank throws, and nothing is left pending on the communicator.
TEST(DistThreads, FailureThenWorkingCall) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  using B16 = __nv_bfloat16;
  const int64_t m = 8, n = 16, k = 24;
  std::vector<std::string> errors(kWorld);
  auto each_rank_throws = [&](const std::function<void(int, B16*, B16*, B16*)>& call, const std::string& want_all,
                              const std::string& want_bad, int bad_rank) {
    on_ranks([&](int r) {
      const Dev<B16> A(host_matrix<B16>(1, r, kWorld * m, k, k)), B(host_matrix<B16>(2, r, k, n, n)),
          C(host_matrix<B16>(3, r, kWorld * m, n, n));
      errors[r] = error_of([&] { call(r, A.p, B.p, C.p); });
    });
    for (int r = 0; r < kWorld; ++r) {
      EXPECT_NE(errors[r].find(r == bad_rank ? want_bad : want_all), std::string::npos)
          << "rank " << r << ": " << errors[r];
    }
  };
  // Rank 1 alone passes an ld too small: it says so, rank 0 says rank 1 rejected its arguments.
  each_rank_throws(
      [&](int r, B16* A, B16* B, B16* C) {
        dist::allgather_gemm(m, n, k, 1.0f, A, k, B, r == 1 ? n - 1 : n, 0.0f, C, n, c.comm[r]);
      },
      "rank 1 rejected its own arguments", "ldb = 15", 1);
  allgather_case<B16>(c, "auto", allgather_bitwise("auto", {m, n, k, 0, 1.0f, 0.0f}), {m, n, k, 0, 1.0f, 0.0f}, 5);
  // The ranks disagree on k: every rank says which field and the range.
  each_rank_throws(
      [&](int r, B16* A, B16* B, B16* C) {
        dist::allgather_gemm(m, n, r == 0 ? k : k - 8, 1.0f, A, k, B, n, 0.0f, C, n, c.comm[r]);
      },
      "disagree on k from 16 to 24", "disagree on k from 16 to 24", -1);
  reducescatter_case<B16>(c, "auto", {m, n, k, 0, 1.0f, 0.5f}, 6);
  // m not a multiple of the world size, on every rank.
  each_rank_throws(
      [&](int r, B16* A, B16* B, B16* C) {
        dist::gemm_reducescatter(kWorld * m + 1, n, k, 1.0f, A, k, B, n, 0.0f, C, n, c.comm[r]);
      },
      "multiple of the world size " + std::to_string(kWorld), "multiple of the world size " + std::to_string(kWorld),
      -1);
  // The ranks name different variants (one of them unknown).
  each_rank_throws(
      [&](int r, B16* A, B16* B, B16* C) {
        dist::gemm_reducescatter(kWorld * m, n, k, 1.0f, A, k, B, n, 0.0f, C, n, c.comm[r],
                                 named(r == 1 ? "no_such_rung" : "nccl_then_gemm"));
      },
      "rank 1 rejected its own arguments", "unknown variant", 1);
  allgather_case<B16>(c, "auto", allgather_bitwise("auto", {m, n, k, 0, 1.0f, 0.0f}), {m, n, k, 0, 1.0f, 0.0f}, 8);
  reducescatter_case<B16>(c, "auto", {m, n, k, 0, 1.0f, 0.0f}, 9);
}

TEST(DistThreads, WrongDeviceIsRefused) {
  RUNGS_REQUIRE_TWO_GPUS();
  Comms c;
  using B16 = __nv_bfloat16;
  CUDA_OK(cudaSetDevice(1));
  const std::string e = error_of([&] {
    dist::allgather_gemm(4, 4, 4, 1.0f, fake<B16>(), 4, fake<B16>(), 4, 0.0f, fake<B16>(), 4, c.comm[0]);
  });
  EXPECT_NE(e.find("the current device is 1 but comm's is 0"), std::string::npos) << e;
  CUDA_OK(cudaSetDevice(0));
}

// Two processes, one per GPU, the unique id through a file: examples/dist_two_process checks its
// own results (exit status 0), for every rung and auto.
TEST(DistProcesses, TwoProcessesThroughAnIdFile) {
  RUNGS_REQUIRE_TWO_GPUS();
  namespace fs = std::filesystem;
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // the children inherit it
  const std::string world = std::to_string(kWorld);
  for (const std::string& variant : variant_names_with_auto(Op::allgather_gemm)) {
    const fs::path dir = fs::temp_directory_path() / ("rungs_dist_" + std::to_string(getpid()) + "_" + variant);
    fs::create_directories(dir);
    const std::string id = (dir / "nccl_id").string();
    std::vector<pid_t> pids;
    for (int r = 0; r < kWorld; ++r) {
      // Everything the child needs is made before fork(): between fork and exec a child of a threaded
      // process may call only async-signal-safe functions (no allocation).
      const std::string rank = std::to_string(r);
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        execl(RUNGS_DIST_EXAMPLE, RUNGS_DIST_EXAMPLE, "--rank", rank.c_str(), "--world", world.c_str(), "--device",
              rank.c_str(), "--id", id.c_str(), "--m", "67", "--n", "45", "--k", "129", "--variant", variant.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
      }
      pids.push_back(pid);
    }
    for (int r = 0; r < kWorld; ++r) {
      int status = 0;
      ASSERT_EQ(waitpid(pids[r], &status, 0), pids[r]);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << variant << ": rank " << r << " status " << status;
    }
    fs::remove_all(dir);
  }
}

#else

TEST(Dist, NotBuilt) {
  GTEST_SKIP() << "the library was built without NCCL: rungs::dist is not there (docs/dist.md says how to enable it)";
}

#endif

}  // namespace
}  // namespace rungs::test
