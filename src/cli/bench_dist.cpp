// rungs bench allgather_gemm|gemm_reducescatter: per shape and rung, one host thread per rank (GPU),
// communicators from ncclCommInitAll. Per repetition every rank waits at a host barrier, then
// times its call between two events on its stream; the repetition's time is the slowest rank's.
// The rungs and the two operations alone are interleaved, each repetition running each once.
// Beside each rung: the communication alone (what rung 1 sends: ncclAllGather of A in bf16, or
// ncclReduceScatter of the fp32 partials) and the product alone (rungs::gemm, auto, of the shape one
// rank multiplies), timed the same way, and overlap efficiency = max(comm, gemm) / time (1 = the
// shorter of the two fully hidden; rung 1, which does one after the other, is near
// max / (comm + gemm)).
#include "cli/bench_dist.hpp"

#include "cli/timing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#if RUNGS_HAVE_DIST
#include "check/host_util.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "dist/dist_rung.hpp"

#include <fstream>
#include <rungs/dist.hpp>
#endif

namespace rungs::cli {

int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

#if !RUNGS_HAVE_DIST

bool dist_built() { return false; }

int cmd_bench_dist(const Args& a, const std::string&, std::ostream&, std::ostream&) {
  throw CliError("rungs bench " + a.op + ": this build has no rungs::dist (configured without NCCL: not found, "
                 "or RUNGS_DIST=OFF; docs/dist.md says how to enable it)");
}

#else

bool dist_built() { return true; }

namespace {

[[noreturn]] void fail_cuda(cudaError_t e, const char* what) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") in " + what);
}
#define BENCH_CUDA(call)                          \
  do {                                            \
    cudaError_t e_ = (call);                      \
    if (e_ != cudaSuccess) fail_cuda(e_, #call);  \
  } while (0)
#define BENCH_NCCL(call)                                                                                  \
  do {                                                                                                    \
    ncclResult_t r_ = (call);                                                                             \
    if (r_ != ncclSuccess) throw Error(std::string("NCCL error in " #call ": ") + ncclGetErrorString(r_)); \
  } while (0)

// n bf16 values uniform in [-1, 1] (|x| >= 2^-8) of stream `stream` into device memory at dst.
void fill_random(__nv_bfloat16* dst, size_t n, uint64_t seed, uint64_t stream) {
  std::vector<__nv_bfloat16> host(n);
  check::util::parallel_chunks(static_cast<int64_t>(n), check::util::hw_threads(), [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) host[i] = __float2bfloat16(check::util::draw(seed, stream, i));
  });
  if (n > 0) BENCH_CUDA(cudaMemcpy(dst, host.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
}

// Thrown in a rank whose peer failed first: the peer's error is the one to report.
struct PeerFailed : Error {
  PeerFailed() : Error("another rank failed") {}
};

// A reusable barrier for the rank threads (C++17 has no std::barrier). A rank that fails calls
// abandon(): the others' wait() throws instead of waiting for it forever.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (abandoned_) throw PeerFailed();
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return gen_ != gen || abandoned_; });
    if (gen_ == gen) throw PeerFailed();
  }
  void abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
  bool abandoned_ = false;
};

// One rank's buffers and stream.
struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void *A = nullptr, *B = nullptr, *C = nullptr, *comm_buf = nullptr;
  ~Rank() {
    cudaSetDevice(device);
    for (void* p : {A, B, C, comm_buf}) cudaFree(p);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

struct Row {
  std::string rung, shape;  // rung: "2 chunked_overlap", or "auto (chunked_overlap)"
  std::string variant;      // the name asked for ("auto" for auto's row)
  int number = 0;           // the rung that ran (auto's: the rung it chose)
  int64_t m = 0, n = 0, k = 0;
  double ms = 0, comm_ms = 0, gemm_ms = 0, tflops_per_gpu = 0;
  std::string error;
};

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// Runs body(rank) on every rank's thread (its device current); rethrows the first rank's exception
// that is not PeerFailed (else a PeerFailed).
void on_ranks(int world, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(world), peer_failed(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        BENCH_CUDA(cudaSetDevice(r));
        body(r);
      } catch (const PeerFailed&) {
        peer_failed[r] = std::current_exception();
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (auto& e : peer_failed)
    if (e) std::rethrow_exception(e);
}

// Each call's warm-up runs on every rank (call(rank) `warmup` times, then the rank's stream
// synchronized); an Error thrown there is the call's.
void warm_up(int world, int warmup, std::vector<Rank>& ranks, const std::function<void(int)>& call) {
  on_ranks(world, [&](int r) {
    for (int i = 0; i < warmup; ++i) call(r);
    BENCH_CUDA(cudaStreamSynchronize(ranks[r].stream));
  });
}

// The median over reps of the slowest rank's time of each of `calls`, interleaved: repetition j runs
// every call once, starting at call j % calls.size(), each released on all ranks together by a host
// barrier. Sustained load lowers the clocks: timed in blocks one after the other, a call ran up to
// 15 % slower late in the run than early (2 H200, the same rung after itself; docs/dist.md), so
// the rungs and the operations alone they are compared with are timed in the same stretch.
std::vector<double> time_interleaved(int world, int reps, std::vector<Rank>& ranks,
                                     const std::vector<std::function<void(int)>>& calls) {
  const size_t n = calls.size();
  Barrier barrier(world);
  // ms[rank][call][rep]
  std::vector<std::vector<std::vector<double>>> ms(world, std::vector<std::vector<double>>(n, std::vector<double>(reps)));
  on_ranks(world, [&](int r) {
    try {
      Rank& k = ranks[r];
      for (int j = 0; j < reps; ++j)
        for (size_t i = 0; i < n; ++i) {
          const size_t c = (static_cast<size_t>(j) + i) % n;
          barrier.wait();
          BENCH_CUDA(cudaEventRecord(k.start, k.stream));
          calls[c](r);
          BENCH_CUDA(cudaEventRecord(k.stop, k.stream));
          BENCH_CUDA(cudaEventSynchronize(k.stop));
          float t = 0;
          BENCH_CUDA(cudaEventElapsedTime(&t, k.start, k.stop));
          ms[r][c][j] = t;
        }
    } catch (...) {
      barrier.abandon();
      throw;
    }
  });
  std::vector<double> med(n);
  for (size_t c = 0; c < n; ++c) {
    std::vector<double> slowest(reps, 0.0);
    for (int j = 0; j < reps; ++j)
      for (int r = 0; r < world; ++r) slowest[j] = std::max(slowest[j], ms[r][c][j]);
    med[c] = summarize(slowest).median;
  }
  return med;
}

constexpr const char* kDistTiming =
    "median over reps of the slowest rank's time (events on each rank's stream, the ranks released together by a "
    "host barrier after warm-up); the rungs, the collective alone and the product alone interleaved (each repetition "
    "runs each once, in turn, from a rotating start); no L2 flush";

std::vector<Shape> default_dist_shapes() { return {{2048, 4096, 8192}, {8192, 4096, 8192}}; }

}  // namespace

int cmd_bench_dist(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  if (a.format == Format::csv) throw CliError("rungs bench " + a.op + ": --format table or json (no csv)");
  std::ofstream file;
  if (!a.output.empty()) {
    file.open(a.output);
    if (!file) throw CliError("--output " + a.output + ": cannot open for writing");
  }
  const bool ag = a.op == "allgather_gemm";
  const Op op = ag ? Op::allgather_gemm : Op::gemm_reducescatter;
  std::vector<VariantInfo> rungs;
  for (const VariantInfo& v : variants(op))
    if (a.variants.empty() || std::find(a.variants.begin(), a.variants.end(), v.name) != a.variants.end() ||
        std::find(a.variants.begin(), a.variants.end(), std::to_string(v.rung)) != a.variants.end())
      rungs.push_back(v);
  // auto's row after the rungs: with no --variant, or when named.
  const bool with_auto = a.variants.empty() || std::find(a.variants.begin(), a.variants.end(), "auto") != a.variants.end();
  if (with_auto) rungs.push_back({"auto", "", 0, 0, false, "bf16"});
  for (const std::string& w : a.variants) {
    bool found = w == "auto";
    for (const VariantInfo& v : variants(op)) found = found || w == v.name || w == std::to_string(v.rung);
    if (!found) throw CliError("--variant: unknown " + a.op + " rung '" + w + "' (see rungs list " + a.op + ")");
  }
  const int gpus = visible_gpus();
  const int world = a.world > 0 ? a.world : gpus;
  if (gpus < 1) throw CliError("rungs bench " + a.op + ": no usable CUDA GPU");
  if (world > gpus)
    throw CliError("--world " + std::to_string(world) + ": only " + std::to_string(gpus) + " GPUs are visible");
  const std::vector<Shape> shapes = a.shapes.empty() ? default_dist_shapes() : a.shapes;
  for (const Shape& s : shapes)
    if (!ag && s.m % world != 0)
      throw CliError("gemm_reducescatter: --m " + std::to_string(s.m) + " is not a multiple of the world size " +
                     std::to_string(world));

  // NVLink multicast stays off on these machines, whatever the environment says.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  std::vector<ncclComm_t> comms(world, nullptr);
  std::vector<int> devs(world);
  for (int r = 0; r < world; ++r) devs[r] = r;
  BENCH_NCCL(ncclCommInitAll(comms.data(), world, devs.data()));
  struct CommsGuard {
    std::vector<ncclComm_t>& c;
    ~CommsGuard() {
      for (ncclComm_t x : c) {
        try {
          dist::release(x);
        } catch (...) {
        }
        ncclCommDestroy(x);
      }
    }
  } guard{comms};
  // --pieces: the pipelined rungs' pieces forced for this run (and back to the rule after it).
  struct PiecesGuard {
    explicit PiecesGuard(int p) { dist::detail::force_pieces(p); }
    ~PiecesGuard() { dist::detail::force_pieces(0); }
  } pieces_guard{a.pieces};
  // The timed calls skip the agreement check (one small collective and a host wait per call): the
  // rungs are compared on their own work; every rank passes the same arguments here.
  for (ncclComm_t c : comms) dist::set_collective_check(c, false);

  const int reps = a.reps, warmup = a.warmup;
  std::vector<Row> rows;
  for (const Shape& s : shapes) {
    // The call's arguments: allgather_gemm m_local, n_local, k; gemm_reducescatter m, n, k_local.
    const int64_t m = s.m, n = s.n, k = s.k;
    const int64_t gm = ag ? world * m : m, gk = k;  // the product one rank multiplies: gm x n x gk
    const double flops_per_gpu = 2.0 * static_cast<double>(gm) * n * gk;
    const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (!a.quiet) err << "[" << a.op << "] " << shape << " on " << world << " GPUs" << std::endl;
    std::vector<Rank> ranks(world);
    using T = __nv_bfloat16;
    const size_t a_elems = static_cast<size_t>(m * k), b_elems = static_cast<size_t>(k * n);
    const size_t comm_bytes = ag ? static_cast<size_t>(world) * a_elems * sizeof(T)
                                 : static_cast<size_t>(m) * n * sizeof(float);
    on_ranks(world, [&](int r) {
      Rank& k_ = ranks[r];
      k_.device = r;
      BENCH_CUDA(cudaStreamCreateWithFlags(&k_.stream, cudaStreamNonBlocking));
      BENCH_CUDA(cudaEventCreate(&k_.start));
      BENCH_CUDA(cudaEventCreate(&k_.stop));
      BENCH_CUDA(cudaMalloc(&k_.A, std::max<size_t>(a_elems, 1) * sizeof(T)));
      BENCH_CUDA(cudaMalloc(&k_.B, std::max<size_t>(b_elems, 1) * sizeof(T)));
      BENCH_CUDA(cudaMalloc(&k_.C, std::max<size_t>(gm * n, 1) * sizeof(T)));
      BENCH_CUDA(cudaMalloc(&k_.comm_buf, std::max<size_t>(comm_bytes, 1)));
      // Random inputs, as the single-GPU bench and PyTorch's randn: a tensor core multiplying one
      // repeated value draws less power and keeps higher clocks (the product ran about 20 % faster
      // on 2 H100 with a constant byte pattern), which would flatter the products and the overlap.
      fill_random(static_cast<T*>(k_.A), a_elems, a.seed, 2 * static_cast<uint64_t>(r));
      fill_random(static_cast<T*>(k_.B), b_elems, a.seed, 2 * static_cast<uint64_t>(r) + 1);
      BENCH_CUDA(cudaMemset(k_.C, 0, std::max<size_t>(gm * n, 1) * sizeof(T)));
    });
    auto opts_of = [&](int r, const std::string& variant) {
      Options o;
      o.stream = ranks[r].stream;
      o.variant = variant;
      return o;
    };
    // The communication alone: what rung 1 sends.
    const auto comm = [&](int r) {
      Rank& q = ranks[r];
      if (ag)
        BENCH_NCCL(ncclAllGather(q.A, q.comm_buf, a_elems, ncclBfloat16, comms[r], q.stream));
      else
        BENCH_NCCL(ncclReduceScatter(q.comm_buf, static_cast<float*>(q.comm_buf) + r * (m / world) * n,
                                     static_cast<size_t>(m / world) * n, ncclFloat32, ncclSum, comms[r], q.stream));
    };
    // The product alone: the gemm one rank does (A's gathered rows for allgather_gemm, its partial
    // product for gemm_reducescatter; rungs::gemm writes bf16 where rung 1 writes fp32 partials).
    const auto product = [&](int r) {
      Rank& q = ranks[r];
      const T* A = static_cast<const T*>(ag ? q.comm_buf : q.A);
      gemm(Trans::N, Trans::N, gm, n, gk, 1.0f, A, gk, static_cast<const T*>(q.B), n, 0.0f, static_cast<T*>(q.C), n,
           opts_of(r, "auto"));
    };
    const auto rung_call = [&](const std::string& name) {
      return [&, name](int r) {
        Rank& q = ranks[r];
        const Options o = opts_of(r, name);
        if (ag)
          dist::allgather_gemm(m, n, k, 1.0f, static_cast<const T*>(q.A), k, static_cast<const T*>(q.B), n, 0.0f,
                               static_cast<T*>(q.C), n, comms[r], o);
        else
          dist::gemm_reducescatter(m, n, k, 1.0f, static_cast<const T*>(q.A), k, static_cast<const T*>(q.B), n, 0.0f,
                                   static_cast<T*>(q.C), n, comms[r], o);
      };
    };
    warm_up(world, warmup, ranks, comm);
    warm_up(world, warmup, ranks, product);
    std::vector<std::function<void(int)>> calls = {comm, product};
    std::vector<Row> shape_rows;
    std::string failed;  // the first rung that failed: the ones after it are not run
    for (const VariantInfo& v : rungs) {
      Row row;
      row.variant = v.name;
      row.number = v.name == "auto" ? static_cast<int>(dist::detail::auto_rung(ag, true, m, n, k, world)) + 1 : v.rung;
      row.rung = v.name == "auto" ? std::string("auto (") + dist::detail::ladder()[row.number - 1].name + ")"
                                  : std::to_string(v.rung) + " " + v.name;
      row.shape = shape;
      row.m = m;
      row.n = n;
      row.k = k;
      if (!a.quiet) err << "[" << a.op << "] " << v.name << " " << shape << " (warm-up)" << std::endl;
      try {
        warm_up(world, warmup, ranks, rung_call(v.name));
      } catch (const Error& e) {
        // A failed collective may leave the communicators unusable: report it, time the rungs
        // before it and stop this operation.
        row.error = e.what();
        failed = v.name;
        shape_rows.push_back(row);
        break;
      }
      calls.push_back(rung_call(v.name));
      shape_rows.push_back(row);
    }
    if (!a.quiet) err << "[" << a.op << "] " << shape << ": " << calls.size() << " calls interleaved" << std::endl;
    const std::vector<double> med = time_interleaved(world, reps, ranks, calls);
    for (size_t i = 0; i < shape_rows.size(); ++i) {
      Row& row = shape_rows[i];
      row.comm_ms = med[0];
      row.gemm_ms = med[1];
      if (row.error.empty()) {
        row.ms = med[2 + i];
        row.tflops_per_gpu = row.ms > 0 ? flops_per_gpu / (row.ms * 1e-3) / 1e12 : 0;
      }
      rows.push_back(row);
    }
    if (!failed.empty()) break;
  }

  if (a.format == Format::json) {  // the main job's layout: its context, one object per row
    Context ctx = make_context(a, argv0);
    ctx.device = query_device(0, false);
    ctx.has_device = true;
    ctx.baseline = "nccl_then_gemm";
    ctx.flush_l2 = false;
    ctx.timing = kDistTiming;
    std::ostringstream js;
    js << "{\n  \"context\": " << format_json_context(ctx, "  ") << ",\n  \"benchmarks\": [";
    for (size_t j = 0; j < rows.size(); ++j) {
      const Row& r = rows[j];
      const double eff = r.ms > 0 ? std::max(r.comm_ms, r.gemm_ms) / r.ms : 0;
      js << (j ? "," : "") << "\n    {\"op\": \"" << a.op << "\", \"variant\": \"" << r.variant << "\", \"rung\": " << r.number
         << ", \"world\": " << world << ", \"dtype\": \"bf16\", \"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k
         << ", \"status\": \"" << (r.error.empty() ? "ok" : "error") << "\"";
      if (r.error.empty())
        js << ", \"real_time\": " << fmt(r.ms, 6) << ", \"time_unit\": \"ms\", \"tflops_per_gpu\": " << fmt(r.tflops_per_gpu, 3)
           << ", \"comm_ms\": " << fmt(r.comm_ms, 6) << ", \"gemm_ms\": " << fmt(r.gemm_ms, 6)
           << ", \"overlap_eff\": " << fmt(eff, 4);
      else
        js << ", \"reason\": \"" << json_escape(r.error) << "\"";
      js << "}";
    }
    js << (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
    (file.is_open() ? static_cast<std::ostream&>(file) : out) << js.str();
    if (file.is_open() && !file) throw CliError("--output " + a.output + ": write failed");
    if (!file.is_open()) {
      for (const Row& r : rows)
        if (!r.error.empty()) return 1;
      return 0;
    }
  }
  out << a.op << " (" << world << " GPUs, bf16; --m --n --k are each rank's "
      << (ag ? "m_local, n_local, k" : "m, n, k_local") << "; median of " << reps << " reps, the slowest rank's time):\n";
  const char* heads[] = {"rung", "shape", "time ms", "TFLOP/s/GPU", "comm ms", "gemm ms", "overlap eff"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    if (!r.error.empty()) {
      cells.push_back({r.rung, r.shape, "ERROR", r.error, "", "", ""});
      continue;
    }
    cells.push_back({r.rung, r.shape, fmt(r.ms, 3), fmt(r.tflops_per_gpu, 1), fmt(r.comm_ms, 3), fmt(r.gemm_ms, 3),
                     fmt(r.ms > 0 ? std::max(r.comm_ms, r.gemm_ms) / r.ms : 0, 2)});
  }
  std::vector<size_t> w(7);
  for (int c = 0; c < 7; ++c) w[c] = std::string(heads[c]).size();
  for (const auto& row : cells)
    for (int c = 0; c < 7; ++c)
      if (c != 3 || row[2] != "ERROR") w[c] = std::max(w[c], row[c].size());
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = " ";
    for (int c = 0; c < 7; ++c) {
      const bool right = c >= 2;
      const std::string pad(w[c] > row[c].size() ? w[c] - row[c].size() : 0, ' ');
      s += " " + (right ? pad + row[c] : row[c] + pad);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line({heads, heads + 7});
  size_t total = 0;
  for (size_t x : w) total += x + 1;
  out << "  " << std::string(total - 1, '-') << "\n";
  for (const auto& row : cells) line(row);
  out << "  comm = " << (ag ? "ncclAllGather of A (bf16)" : "ncclReduceScatter of the fp32 partials")
      << " alone; gemm = rungs::gemm (auto) of one rank's product alone; overlap eff = max(comm, gemm) / time.\n"
      << "  Timed without the calls' agreement check (rungs::dist::set_collective_check off).\n";
  out.flush();
  for (const Row& r : rows)
    if (!r.error.empty()) return 1;
  return 0;
}

#endif

}  // namespace rungs::cli
