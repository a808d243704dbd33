// Every device of the machine: the library keeps per-device state (memory pools, cuBLAS handles,
// kernel attributes, cluster occupancy, gemv's constant-memory x, gemm_host's contexts), so each
// operation is checked on each visible device in turn, and then with one host thread per device
// at once. On a one-GPU machine this is device 0 only; a machine with several GPUs checks the rest.
#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"
#include "check/gemv_check.hpp"
#include "check/reduce_check.hpp"
#include "core/errors.hpp"
#include "gpu_env.hpp"

#include <cstring>
#include <sstream>
#include <thread>

namespace rungs::test {
namespace {

// Device memory on the current device, `bytes` long.
struct Mem {
  void* p = nullptr;
  explicit Mem(size_t bytes) { EXPECT_EQ(cudaSuccess, cudaMalloc(&p, bytes ? bytes : 1)); }
  ~Mem() { cudaFree(p); }
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

void put(Mem& m, const void* h, size_t bytes) { EXPECT_EQ(cudaSuccess, cudaMemcpy(m.p, h, bytes, cudaMemcpyHostToDevice)); }
void get(void* h, const Mem& m, size_t bytes) { EXPECT_EQ(cudaSuccess, cudaMemcpy(h, m.p, bytes, cudaMemcpyDeviceToHost)); }

// gemm, gemv, reduce_sum and gemm_host (`auto` each) on the current device, on a stream of its own;
// what failed, or "" when all passed.
std::string run_every_op(uint64_t seed) {
  std::ostringstream bad;
  int dev = -1;
  cudaGetDevice(&dev);
  cudaStream_t st;
  if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return "cudaStreamCreateWithFlags failed";
  Options o;
  o.stream = st;
  // gemm, float and bf16; 129 x 130 x 67 has rows TMA cannot address (copies, ragged tiles).
  for (check::GemmKind kind : {check::GemmKind::f32, check::GemmKind::bf16}) {
    check::GemmShape s;
    s.m = 129, s.n = 130, s.k = 67, s.beta = 0.5f;
    s = check::normalized(s);
    check::GemmData d = check::make_gemm_data(s, seed++);
    check::round_inputs(d, kind);
    const bool h16 = check::is_16bit(kind);
    const size_t e = h16 ? 2 : 4;
    Mem A(d.A.size() * e), B(d.B.size() * e), C(d.C0.size() * e);
    std::vector<float> out(d.C0.size());
    if (h16) {
      put(A, check::to_16bit(d.A, kind).data(), d.A.size() * e), put(B, check::to_16bit(d.B, kind).data(), d.B.size() * e);
      put(C, check::to_16bit(d.C0, kind).data(), d.C0.size() * e);
      gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.as<__nv_bfloat16>(), s.lda, B.as<__nv_bfloat16>(), s.ldb, s.beta,
           C.as<__nv_bfloat16>(), s.ldc, o);
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st));
      std::vector<uint16_t> raw(d.C0.size());
      get(raw.data(), C, raw.size() * e);
      out = check::from_16bit(raw, kind);
    } else {
      put(A, d.A.data(), d.A.size() * e), put(B, d.B.data(), d.B.size() * e), put(C, d.C0.data(), d.C0.size() * e);
      gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.as<float>(), s.lda, B.as<float>(), s.ldb, s.beta, C.as<float>(), s.ldc, o);
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st));
      get(out.data(), C, out.size() * e);
    }
    const auto err = check::compare_gemm(s, check::gemm_reference(s, d), out.data(), kind);
    if (!err.pass) bad << "device " << dev << " gemm " << check::gemm_kind_name(kind) << ": " << err.reason << "; ";
  }
  {  // gemv, both transposes
    for (Trans t : {Trans::N, Trans::T}) {
      check::GemvShape s;
      s.trans = t, s.m = 1000, s.n = 999, s.beta = 0.5f;
      s = check::normalized(s);
      const check::GemvData d = check::make_gemv_data(s, seed++);
      Mem A(d.A.size() * 4), x(d.x.size() * 4), y(d.y0.size() * 4);
      put(A, d.A.data(), d.A.size() * 4), put(x, d.x.data(), d.x.size() * 4), put(y, d.y0.data(), d.y0.size() * 4);
      gemv(s.trans, s.m, s.n, s.alpha, A.as<float>(), s.lda, x.as<float>(), s.incx, s.beta, y.as<float>(), s.incy, o);
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st));
      std::vector<float> out(d.y0.size());
      get(out.data(), y, out.size() * 4);
      const auto err = check::compare_gemv(s, check::gemv_reference(s, d), out.data(), d.y0.data());
      if (!err.pass) bad << "device " << dev << " gemv: " << err.reason << "; ";
    }
  }
  {  // reduce_sum, float, many blocks
    const check::ReduceData d = check::make_reduce_data(DType::f32, (int64_t{1} << 20) + 7, seed++);
    Mem in(d.bytes()), out(8);
    put(in, d.data(), d.bytes());
    reduce_sum(in.as<float>(), d.n, out.as<float>(), o);
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st));
    unsigned char got[8] = {};
    get(got, out, 4);
    const auto e = check::compare_reduce(d, check::reduce_reference(d), got, true);
    if (!e.pass) bad << "device " << dev << " reduce_sum: " << e.reason << "; ";
  }
  {  // gemm_host, pageable memory
    check::GemmShape s;
    s.m = 300, s.n = 257, s.k = 190;
    s = check::normalized(s);
    const check::GemmData d = check::make_gemm_data(s, seed++);
    std::vector<float> C(d.C0.size(), 0.0f);
    gemm_host(s.ta, s.tb, s.m, s.n, s.k, s.alpha, d.A.data(), s.lda, d.B.data(), s.ldb, s.beta, C.data(), s.ldc);
    const auto err = check::compare_gemm(s, check::gemm_reference(s, d), C.data());
    if (!err.pass) bad << "device " << dev << " gemm_host: " << err.reason << "; ";
  }
  cudaStreamDestroy(st);
  return bad.str();
}

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

TEST(Devices, EveryOperationOnEveryDevice) {
  RUNGS_REQUIRE_GPU();
  const int n = device_count();
  std::cout << "[ DEVICES   ] " << n << " visible\n";
  for (int dev = 0; dev < n; ++dev) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(dev));
    EXPECT_EQ(run_every_op(2000 + 10 * static_cast<uint64_t>(dev)), "");
  }
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  gemm_host_release();
}

// The DRAM bandwidth on paper that gemm's `auto` reads (detail::dram_peak_gbs: two transfers per
// memory clock times the bus width) is what the device reports on each device, not 0: an H100 SXM
// gives 3352 GB/s, an H200 4814, and the decode rule moves at 4000.
TEST(Devices, DramBandwidthOnPaper) {
  RUNGS_REQUIRE_GPU();
  const int n = device_count();
  for (int dev = 0; dev < n; ++dev) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(dev));
    const double gbs = detail::dram_peak_gbs();
    std::cout << "[ DRAM      ] device " << dev << ": " << gbs << " GB/s on paper\n";
    EXPECT_GT(gbs, 100.0) << "device " << dev;
    EXPECT_LT(gbs, 50000.0) << "device " << dev;
    EXPECT_EQ(gbs, detail::dram_peak_gbs()) << "device " << dev << ": the cached figure";
  }
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
}

// One host thread per device (two per device on a one-GPU machine), all at once, three rounds
// each: the per-device state must keep them apart.
TEST(Devices, ThreadsOnDifferentDevicesAtOnce) {
  RUNGS_REQUIRE_GPU();
  const int n = device_count();
  const int threads = n > 1 ? n : 2;
  std::vector<std::string> why(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      if (cudaSetDevice(t % n) != cudaSuccess) {
        why[static_cast<size_t>(t)] = "cudaSetDevice failed";
        return;
      }
      for (int round = 0; round < 3; ++round) why[static_cast<size_t>(t)] += run_every_op(3000 + 100 * t + 10 * round);
      gemm_host_release();
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(why[static_cast<size_t>(t)], "") << "thread " << t;
}

}  // namespace
}  // namespace rungs::test
