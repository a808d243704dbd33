// GPU test support: skip with a clear reason where no GPU is usable, device buffers.
#pragma once

#include <rungs/rungs.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace rungs::test {

// Empty when a GPU is usable, otherwise why not (the error from cudaGetDeviceCount).
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return std::string("no usable CUDA GPU: cudaGetDeviceCount failed with ") + cudaGetErrorName(err) + " (" +
           cudaGetErrorString(err) + ")";
  if (count == 0) return "no usable CUDA GPU: cudaGetDeviceCount returned 0 devices";
  return "";
}

#define RUNGS_REQUIRE_GPU()                                                  \
  do {                                                                       \
    const std::string rungs_why_ = ::rungs::test::gpu_unavailable_reason(); \
    if (!rungs_why_.empty()) GTEST_SKIP() << rungs_why_;                     \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

// "auto", then every rung of the ladder: the parameters of a ladder's tests, so a new rung is
// tested without editing them.
inline std::vector<std::string> variant_names_with_auto(Op op) {
  std::vector<std::string> names{"auto"};
  for (const auto& v : variants(op)) names.push_back(v.name);
  return names;
}

// Under compute-sanitizer the GPU script sets RUNGS_TEST_MAX_MNK so only small cases run: a case
// whose size (m*n*k for gemm, m*n for gemv, n for reduce) exceeds it is left out.
inline bool exceeds_test_limit(double size) {
  const char* env = std::getenv("RUNGS_TEST_MAX_MNK");
  return env && size > std::atof(env);
}

// Where RUNGS_TEST_RAN_LOG names a file, appends "<ladder> <rung> <test>" to it the first time (in
// this process) a case of the rung ran in that test and its result was checked; scripts/gpu.sh
// compares the rungs in the file with `rungs list`, so a rung whose every case was skipped or left
// out shows up there as one that never ran. `auto` is not a rung and is not written. One write()
// of the whole line on a descriptor opened with O_APPEND: test processes that run at once (ctest
// -j) append whole lines without overwriting each other's.
inline void record_ran(const std::string& ladder, const std::string& rung) {
  static const char* const path = std::getenv("RUNGS_TEST_RAN_LOG");
  if (path == nullptr || *path == '\0' || rung == "auto") return;
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string line = ladder + " " + rung + " " +
                           (t ? std::string(t->test_suite_name()) + "." + t->name() : std::string("-")) + "\n";
  static std::mutex mu;
  static std::set<std::string> written;
  std::lock_guard<std::mutex> lock(mu);
  if (!written.insert(line).second) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    ADD_FAILURE() << "RUNGS_TEST_RAN_LOG=" << path << ": cannot open: " << std::strerror(errno);
    return;
  }
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    ADD_FAILURE() << "RUNGS_TEST_RAN_LOG=" << path << ": wrote " << n << " of " << line.size()
                  << " bytes: " << std::strerror(err);
}

// Counts, across one test's cases, what ran, what RUNGS_TEST_MAX_MNK left out and why cases were
// skipped (the rung threw rungs::Unsupported). O: an outcome with filtered, skipped, skip_reason.
struct Tally {
  int ran = 0, filtered = 0;
  std::vector<std::string> skipped;
  void skip(const std::string& why) {
    if (std::find(skipped.begin(), skipped.end(), why) == skipped.end()) skipped.push_back(why);
  }
  // Why cases did not run: each distinct Unsupported reason, and how many cases the size limit
  // left out.
  std::string not_run() const {
    std::string r;
    for (const auto& s : skipped) r += (r.empty() ? "" : "; ") + s;
    if (filtered > 0) {
      const char* limit = std::getenv("RUNGS_TEST_MAX_MNK");
      r += (r.empty() ? "" : "; ") + std::to_string(filtered) + (filtered == 1 ? " case exceeds" : " cases exceed") +
           " RUNGS_TEST_MAX_MNK=" + (limit ? limit : "(unset)");
    }
    return r;
  }
  // Counts the outcome; true when it ran and should be checked.
  template <typename O>
  bool count(const O& o) {
    if (o.filtered) return ++filtered, false;
    if (o.skipped) return skip(o.skip_reason), false;
    return ++ran, true;
  }
  // Adds another tally's counts (one kept per thread, merged after the join).
  void merge(const Tally& t) {
    ran += t.ran, filtered += t.filtered;
    for (const auto& s : t.skipped) skip(s);
  }
};

// After the cases: a test none of whose cases ran is reported as skipped, with the reasons (never
// as passed); one with no cases at all fails. Where some ran and some did not, the output says
// which did not and why.
#define RUNGS_FINISH(tally)                                                                        \
  do {                                                                                             \
    if ((tally).ran == 0) {                                                                        \
      if ((tally).skipped.empty() && (tally).filtered == 0)                                        \
        FAIL() << "no case ran, and none was skipped or left out";                                 \
      GTEST_SKIP() << "no case ran: " << (tally).not_run();                                        \
    }                                                                                              \
    if (!(tally).skipped.empty() || (tally).filtered > 0)                                          \
      std::cout << "[ NOT RUN  ] some cases (" << (tally).ran << " ran): " << (tally).not_run() << "\n"; \
  } while (0)

// Device memory of n bytes (cudaMalloc), freed with it; its copies and poison check their calls.
class Dev {
 public:
  explicit Dev(size_t bytes) : bytes_(bytes) { EXPECT_EQ(cudaSuccess, cudaMalloc(&p_, bytes ? bytes : 1)); }
  ~Dev() { cudaFree(p_); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  void upload(const void* h) {
    if (bytes_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(p_, h, bytes_, cudaMemcpyHostToDevice));
    }
  }
  void download(void* h) const {
    if (bytes_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(h, p_, bytes_, cudaMemcpyDeviceToHost));
    }
  }
  void poison() {  // all bits set: NaN as float, __half, __nv_bfloat16 and e4m3
    if (bytes_) {
      EXPECT_EQ(cudaSuccess, cudaMemset(p_, 0xFF, bytes_));
    }
  }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

// A call captured into a CUDA graph on `stream` in cudaStreamCaptureModeGlobal (the strictest mode:
// a call unsafe during a capture, such as a synchronization or cudaMalloc, fails) and instantiated.
// When the call throws rungs::Unsupported there is no graph and unsupported() says why; any other
// exception ends the capture and propagates. launch() replays it on `stream`.
class CapturedGraph {
 public:
  CapturedGraph(cudaStream_t stream, const std::function<void()>& enqueue) {
    EXPECT_EQ(cudaSuccess, cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    try {
      enqueue();
    } catch (const Unsupported& e) {
      unsupported_ = e.what();
      end(stream);
      return;
    } catch (...) {
      end(stream);
      throw;
    }
    graph_ = end(stream);
    if (graph_) {
      EXPECT_EQ(cudaSuccess, cudaGraphInstantiate(&exec_, graph_, 0));
    }
  }
  ~CapturedGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  bool ok() const { return exec_ != nullptr; }
  const std::string& unsupported() const { return unsupported_; }
  void launch(cudaStream_t stream) { EXPECT_EQ(cudaSuccess, cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t end(cudaStream_t stream) {
    cudaGraph_t g = nullptr;
    const cudaError_t e = cudaStreamEndCapture(stream, &g);
    if (unsupported_.empty()) {
      EXPECT_EQ(cudaSuccess, e) << "cudaStreamEndCapture: " << cudaGetErrorString(e);
    }
    if (e != cudaSuccess) (void)cudaGetLastError();
    if (!unsupported_.empty() && g) cudaGraphDestroy(g), g = nullptr;
    return g;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::string unsupported_;
};

// A non-blocking stream for one test, destroyed with it.
struct TestStream {
  cudaStream_t s = nullptr;
  TestStream() { EXPECT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~TestStream() { cudaStreamDestroy(s); }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
};

// Options naming a variant and a stream.
inline Options options(const std::string& variant, cudaStream_t stream) {
  Options o;
  o.variant = variant;
  o.stream = stream;
  return o;
}

// A call captured into a graph on a stream of its own and replayed twice: before each launch
// refresh(rep) writes fresh inputs, after it (the stream synchronized) check(rep) compares. A rung
// that refused the capture (Unsupported) is counted in `tally` as skipped, one that ran as ran.
inline void capture_and_replay(Tally& tally, const std::function<void(cudaStream_t)>& enqueue,
                               const std::function<void(int)>& refresh, const std::function<void(int)>& check) {
  TestStream st;
  CapturedGraph g(st.s, [&] { enqueue(st.s); });
  if (!g.unsupported().empty()) {
    tally.skip(g.unsupported());
    return;
  }
  ASSERT_TRUE(g.ok());
  ++tally.ran;
  for (int rep = 0; rep < 2; ++rep) {
    refresh(rep);
    g.launch(st.s);
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st.s));
    check(rep);
  }
}

// A device array of floats with `extra` leading elements, so data() can be deliberately
// misaligned (offset = 1 gives a pointer that is 4 but not 16 bytes aligned).
// upload and poison return when the bytes are in place: cudaMemset and a pageable cudaMemcpy may
// return before the device has finished, and they run on the legacy default stream, which a
// kernel on a cudaStreamNonBlocking stream does not wait for (the concurrency tests use such
// streams: without the wait, the poison could land after the kernel's result).
class DeviceFloats {
 public:
  DeviceFloats(size_t n, size_t offset = 0) : n_(n), offset_(offset) {
    if (cudaMalloc(reinterpret_cast<void**>(&base_), (n + offset + 1) * sizeof(float)) != cudaSuccess) base_ = nullptr;
  }
  ~DeviceFloats() { cudaFree(base_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* data() { return base_ ? base_ + offset_ : nullptr; }
  size_t size() const { return n_; }
  void upload(const std::vector<float>& h) {
    if (!h.empty()) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(data(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));
    }
  }
  std::vector<float> download() {
    std::vector<float> h(n_);
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(h.data(), data(), n_ * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return h;
  }
  void poison() {  // all bits set: a NaN in every element
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemset(data(), 0xFF, n_ * sizeof(float)));
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));
    }
  }

 private:
  float* base_ = nullptr;
  size_t n_, offset_;
};

}  // namespace rungs::test
