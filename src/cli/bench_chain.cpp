// `rungs bench chain`: a decode step's linear layers (chain_products) at batch m as one chain of
// products, each weight its own allocation (15 GB: nothing stays in L2), C of one product the A of
// the next (bf16; an fp8 chain reads one fp8 A and writes one bf16 C, with outer scales), captured
// in a CUDA graph; the same chain through the cublas rung (cublasGemmEx, cublasLtMatmul for fp8) in a
// second graph, the two replayed interleaved (L2 flushed before each). Reported: the chain's time,
// the bytes it must move over that time as a share of the measured DRAM read rate, the ratio. Before
// timing, one eager pass of each checks products of the first layer and the last product at sampled
// elements against an fp64 dot product, within the gemm checks' element-wise bound.
#include "cli/bench_chain.hpp"

#include "check/gemm_check.hpp"
#include "cli/buffers.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/timing.hpp"
#include "core/errors.hpp"

#include <rungs/rungs.hpp>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <memory>
#include <random>
#include <sstream>

namespace rungs::cli {

const std::vector<std::string>& chain_models() {
  static const std::vector<std::string> m = {"llama3-8b", "llama3-70b"};
  return m;
}

std::vector<ChainProduct> chain_products(const std::string& model) {
  int layers = 0;
  int64_t hidden = 0, qkv = 0, inter = 0;
  if (model == "llama3-8b") layers = 32, hidden = 4096, qkv = 6144, inter = 14336;
  else if (model == "llama3-70b") layers = 8, hidden = 8192, qkv = 10240, inter = 28672;
  else throw CliError("--model: '" + model + "' is not llama3-8b or llama3-70b");
  std::vector<ChainProduct> p;
  for (int l = 0; l < layers; ++l) {
    p.push_back({"qkv", qkv, hidden});
    p.push_back({"o", hidden, hidden});
    p.push_back({"gate_up", 2 * inter, hidden});
    p.push_back({"down", hidden, inter});
  }
  p.push_back({"lm_head", 128256, hidden});
  return p;
}

namespace {

constexpr int kCheckedElements = 64;  // sampled elements of each checked product

struct ChainRow {
  std::string model, dtype, variant;
  int64_t m = 0;
  int products = 0;
  double weight_bytes = 0, bytes = 0;
  Stats ms, base;
  int reps = 0;
  double gbs = 0, pct_dram = 0, base_pct_dram = 0, speedup = 0;
  int64_t checked = 0;      // elements compared (rung and cublas passes together)
  double bound_ratio = 0;   // the largest |c - ref| / bound among them
  std::string status = "ok", reason;
};

// The chain's device memory: every weight, the activations and (fp8) the scales.
struct ChainData {
  bool fp8 = false;
  int64_t m = 0, ld = 0;  // activations: m_max rows of ld elements
  std::vector<std::unique_ptr<DeviceBuffer>> w;  // one per product
  std::unique_ptr<DeviceBuffer> x[2];            // bf16 activations (fp8: x[0] is A, x[1] is C)
  std::unique_ptr<DeviceBuffer> sa, sb;          // fp8 outer scales: m_max, and max n
};

// Fills `buf` with copies of the `block` bytes already on the device (device-to-device).
void tile(DeviceBuffer& buf, const DeviceBuffer& block, cudaStream_t s) {
  for (size_t off = 0; off < buf.bytes(); off += block.bytes())
    RUNGS_CUDA(cudaMemcpyAsync(buf.as<unsigned char>() + off, block.get(), std::min(block.bytes(), buf.bytes() - off),
                               cudaMemcpyDeviceToDevice, s));
}

ChainData make_data(const std::vector<ChainProduct>& ps, int64_t m_max, bool fp8, uint64_t seed, cudaStream_t s) {
  ChainData d;
  d.fp8 = fp8, d.m = m_max;
  int64_t max_n = 0;
  for (const ChainProduct& p : ps) d.ld = std::max({d.ld, p.n, p.k}), max_n = std::max(max_n, p.n);
  d.ld = (d.ld + 63) / 64 * 64;
  // A block of random values (bf16 of U(-1, 1); e4m3 of U(-8, 8)), tiled into each weight and A.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const size_t block_elems = size_t(1) << 24;
  const size_t elem = fp8 ? 1 : 2;
  std::vector<unsigned char> host(block_elems * elem);
  for (size_t i = 0; i < block_elems; ++i) {
    if (fp8) {
      const __nv_fp8_e4m3 v(8.0f * u(rng));
      std::memcpy(&host[i], &v, 1);
    } else {
      const __nv_bfloat16 v = __float2bfloat16(u(rng));
      std::memcpy(&host[2 * i], &v, 2);
    }
  }
  DeviceBuffer block(host.size(), "the weights' random block");
  block.upload(host.data(), s);
  for (const ChainProduct& p : ps) {
    d.w.push_back(std::make_unique<DeviceBuffer>(size_t(p.n) * size_t(p.k) * elem, "the " + p.name + " weight"));
    tile(*d.w.back(), block, s);
  }
  const size_t act = size_t(m_max) * size_t(d.ld);
  d.x[0] = std::make_unique<DeviceBuffer>(act * elem, "the activations");
  d.x[1] = std::make_unique<DeviceBuffer>(act * 2, "the activations");
  tile(*d.x[0], block, s);  // fp8: A as e4m3 of U(-8, 8); bf16: the first product's A
  RUNGS_CUDA(cudaMemsetAsync(d.x[1]->get(), 0, d.x[1]->bytes(), s));
  if (fp8) {  // outer scales 2^-5 for A's rows, 2^-8 for W's rows: C of order one
    std::vector<float> sa(static_cast<size_t>(m_max), 1.0f / 32.0f), sb(static_cast<size_t>(max_n), 1.0f / 256.0f);
    d.sa = std::make_unique<DeviceBuffer>(sa.size() * 4, "the scales");
    d.sb = std::make_unique<DeviceBuffer>(sb.size() * 4, "the scales");
    d.sa->upload(sa.data(), s);
    d.sb->upload(sb.data(), s);
    RUNGS_CUDA(cudaStreamSynchronize(s));  // the host vectors go out of scope
  }
  RUNGS_CUDA(cudaStreamSynchronize(s));
  return d;
}

// bf16: alpha = sqrt(3 / k) keeps the activations' spread through the chain (W's entries have
// variance 1/3); fp8: 1 (the scales set C's size).
float chain_alpha(const ChainData& d, const ChainProduct& p) {
  return d.fp8 ? 1.0f : static_cast<float>(std::sqrt(3.0 / static_cast<double>(p.k)));
}

// Product i of the chain at batch m through `variant` on stream s. bf16: A = x[i % 2], C = x[(i+1) % 2].
void issue(const ChainData& d, const std::vector<ChainProduct>& ps, size_t i, int64_t m, const std::string& variant,
           cudaStream_t s) {
  Options o;
  o.variant = variant;
  o.stream = s;
  const ChainProduct& p = ps[i];
  if (d.fp8) {
    const Scales sc{d.sa->as<float>(), d.sb->as<float>(), Scaling::outer};
    gemm(Trans::N, Trans::T, m, p.n, p.k, 1.0f, d.x[0]->as<__nv_fp8_e4m3>(), d.ld, d.w[i]->as<__nv_fp8_e4m3>(), p.k,
         sc, 0.0f, d.x[1]->as<__nv_bfloat16>(), d.ld, o);
  } else {
    gemm(Trans::N, Trans::T, m, p.n, p.k, chain_alpha(d, p), d.x[i % 2]->as<__nv_bfloat16>(), d.ld,
         d.w[i]->as<__nv_bfloat16>(), p.k, 0.0f, d.x[(i + 1) % 2]->as<__nv_bfloat16>(), d.ld, o);
  }
}

float to_float(const unsigned char* p, bool fp8) {
  if (fp8) return check::fp8_to_float(*p, check::Fp8Format::e4m3);
  uint16_t h;
  std::memcpy(&h, p, 2);
  const uint32_t f = uint32_t(h) << 16;
  float v;
  std::memcpy(&v, &f, 4);
  return v;
}

// Product i just ran (stream synchronized): kCheckedElements sampled elements of C against the fp64
// dot product of A's row and W's row, |c - ref| <= gamma * sum |a w| + eta (the gemm checks'
// element-wise bound for bf16 C, fp8: with its narrow accumulation). Returns the largest ratio.
double check_product(const ChainData& d, const ChainProduct& p, size_t i, int64_t m, std::mt19937_64& rng,
                     int64_t& checked) {
  const size_t elem = d.fp8 ? 1 : 2;
  const DeviceBuffer& a = d.fp8 ? *d.x[0] : *d.x[i % 2];
  const DeviceBuffer& c = d.fp8 ? *d.x[1] : *d.x[(i + 1) % 2];
  const double gamma = d.fp8 ? check::fp8_elementwise_gamma(p.k, true)
                             : check::elementwise_gamma(p.k, check::GemmKind::bf16);
  const double eta = check::output_eta(check::GemmKind::bf16);
  std::vector<unsigned char> arow(size_t(p.k) * elem), wrow(size_t(p.k) * elem);
  double worst = 0;
  for (int e = 0; e < kCheckedElements; ++e) {
    const int64_t r = static_cast<int64_t>(rng() % uint64_t(m)), j = static_cast<int64_t>(rng() % uint64_t(p.n));
    RUNGS_CUDA(cudaMemcpy(arow.data(), a.as<unsigned char>() + size_t(r) * size_t(d.ld) * elem, arow.size(),
                          cudaMemcpyDeviceToHost));
    RUNGS_CUDA(cudaMemcpy(wrow.data(), d.w[i]->as<unsigned char>() + size_t(j) * size_t(p.k) * elem, wrow.size(),
                          cudaMemcpyDeviceToHost));
    unsigned char cb[2];
    RUNGS_CUDA(cudaMemcpy(cb, c.as<unsigned char>() + (size_t(r) * size_t(d.ld) + size_t(j)) * 2, 2,
                          cudaMemcpyDeviceToHost));
    const double scale = d.fp8 ? (1.0 / 32.0) * (1.0 / 256.0) : static_cast<double>(chain_alpha(d, p));
    double ref = 0, mag = 0;
    for (int64_t t = 0; t < p.k; ++t) {
      const double x = double(to_float(&arow[size_t(t) * elem], d.fp8)) * to_float(&wrow[size_t(t) * elem], d.fp8);
      ref += x, mag += std::fabs(x);
    }
    ref *= scale, mag *= scale;
    const double got = to_float(cb, false), bound = gamma * mag + eta;
    const double ratio = std::isfinite(got) ? std::fabs(got - ref) / bound : INFINITY;
    worst = std::max(worst, ratio);
    ++checked;
  }
  return worst;
}

// One eager pass of the chain through `variant`, checking the first layer's products and the last.
double eager_checked(const ChainData& d, const std::vector<ChainProduct>& ps, int64_t m, const std::string& variant,
                     cudaStream_t s, uint64_t seed, int64_t& checked) {
  std::mt19937_64 rng(seed);
  double worst = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    issue(d, ps, i, m, variant, s);
    if (i < 4 || i + 1 == ps.size()) {
      RUNGS_CUDA(cudaStreamSynchronize(s));
      worst = std::max(worst, check_product(d, ps[i], i, m, rng, checked));
    }
  }
  RUNGS_CUDA(cudaStreamSynchronize(s));
  return worst;
}

// The chain through `variant` captured into an executable graph on stream s.
class ChainGraph {
 public:
  ChainGraph(const ChainData& d, const std::vector<ChainProduct>& ps, int64_t m, const std::string& variant,
             cudaStream_t s) {
    RUNGS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      for (size_t i = 0; i < ps.size(); ++i) issue(d, ps, i, m, variant, s);
    } catch (...) {
      cudaGraph_t g = nullptr;
      (void)cudaStreamEndCapture(s, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    cudaGraph_t g = nullptr;
    RUNGS_CUDA(cudaStreamEndCapture(s, &g));
    const cudaError_t err = cudaGraphInstantiate(&exec_, g, 0);
    cudaGraphDestroy(g);
    if (err != cudaSuccess) detail::throw_cuda(err, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  ~ChainGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  ChainGraph(const ChainGraph&) = delete;
  ChainGraph& operator=(const ChainGraph&) = delete;
  void launch(cudaStream_t s) const { RUNGS_CUDA(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

ChainRow bench_one(const Args& a, const std::string& model, const std::vector<ChainProduct>& ps, const ChainData& d,
                   int64_t m, const std::string& variant, const DeviceInfo& dev, L2Flusher& flusher, cudaStream_t s) {
  ChainRow r;
  r.model = model, r.dtype = d.fp8 ? "fp8" : "bf16", r.variant = variant, r.m = m;
  r.products = static_cast<int>(ps.size());
  const double elem = d.fp8 ? 1 : 2;
  for (const ChainProduct& p : ps) {
    r.weight_bytes += double(p.n) * double(p.k) * elem;
    r.bytes += double(p.n) * double(p.k) * elem + double(m) * double(p.k) * elem + double(m) * double(p.n) * 2;
    if (d.fp8) r.bytes += 4.0 * double(p.n + m);
  }
  try {
    double worst = eager_checked(d, ps, m, variant, s, a.seed + 1, r.checked);
    worst = std::max(worst, eager_checked(d, ps, m, "cublas", s, a.seed + 2, r.checked));
    r.bound_ratio = worst;
    if (!(worst <= 1.0)) {
      r.status = "fail";
      r.reason = "a checked element outside its bound (" + fmt_sci(worst) + " of it)";
      return r;
    }
    const ChainGraph mine(d, ps, m, variant, s), base(d, ps, m, "cublas", s);
    const Launch run = [&] { mine.launch(s); };
    const Launch run_base = [&] { base.launch(s); };
    const Measurement t = measure(run, &run_base, a.reps, a.warmup, flusher, s, 0.0);
    r.ms = summarize(t.rung_ms), r.base = summarize(t.base_ms), r.reps = t.reps;
    r.gbs = r.bytes / (r.ms.median * 1e-3) / 1e9;
    if (dev.dram_read_gbs > 0) {
      r.pct_dram = 100.0 * r.gbs / dev.dram_read_gbs;
      r.base_pct_dram = 100.0 * r.bytes / (r.base.median * 1e-3) / 1e9 / dev.dram_read_gbs;
    }
    r.speedup = r.base.median / r.ms.median;
  } catch (const Unsupported& e) {
    r.status = "skip", r.reason = e.what();
  } catch (const Error& e) {
    r.status = "error", r.reason = e.what();
  }
  return r;
}

std::string fmt(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string format_rows(Format f, const std::vector<ChainRow>& rows, const Context& ctx, const Args& a) {
  std::ostringstream os;
  if (f == Format::json) {  // the main job's layout: the context, one object per row
    os << "{\n  \"context\": " << format_json_context(ctx, "  ") << ",\n  \"benchmarks\": [";
    for (size_t j = 0; j < rows.size(); ++j) {
      const ChainRow& r = rows[j];
      const bool t = r.status == "ok";
      os << (j ? "," : "") << "\n    {\"name\": \"chain/" << json_escape(r.variant) << "/" << json_escape(r.model)
         << "/m" << r.m << "/" << r.dtype << "\", \"op\": \"chain\", \"variant\": \"" << json_escape(r.variant)
         << "\", \"model\": \"" << json_escape(r.model) << "\", \"dtype\": \"" << r.dtype << "\", \"m\": " << r.m
         << ", \"products\": " << r.products << ", \"weight_bytes\": " << json_number(r.weight_bytes)
         << ", \"bytes\": " << json_number(r.bytes) << ", \"graph\": true"
         << ", \"real_time\": " << (t ? json_number(r.ms.median) : "null")
         << ", \"min\": " << (t ? json_number(r.ms.min) : "null") << ", \"max\": " << (t ? json_number(r.ms.max) : "null")
         << ", \"time_unit\": \"ms\", \"repetitions\": " << r.reps << ", \"baseline\": \"cublas\""
         << ", \"baseline_real_time\": " << (t ? json_number(r.base.median) : "null")
         << ", \"speedup_vs_baseline\": " << (t ? json_number(r.speedup) : "null")
         << ", \"bytes_per_second\": " << (t ? json_number(r.gbs * 1e9) : "null")
         << ", \"pct_dram\": " << (t ? json_number(r.pct_dram) : "null")
         << ", \"baseline_pct_dram\": " << (t ? json_number(r.base_pct_dram) : "null")
         << ", \"checked_elements\": " << r.checked << ", \"bound_ratio\": " << json_number(r.bound_ratio)
         << ", \"status\": \"" << r.status << "\"";
      if (!r.reason.empty()) os << ", \"reason\": \"" << json_escape(r.reason) << "\"";
      os << "}";
    }
    os << (rows.empty() ? "]\n}\n" : "\n  ]\n}\n");
    return os.str();
  }
  os << "chain on " << ctx.device.name << ": a decode step's products in one CUDA graph, median of " << a.reps
     << " replays (L2 flushed before each; cublas = the same products through the cublas rung, interleaved);\n"
     << "% DRAM = the bytes the chain must move (weights, A, C) over its time, of the measured read rate ("
     << fmt(ctx.device.dram_read_gbs, 0) << " GB/s)\n";
  os << std::left << std::setw(12) << "model" << std::setw(6) << "dtype" << std::right << std::setw(6) << "m"
     << std::setw(10) << "products" << std::setw(10) << "GB" << "  " << std::left << std::setw(12) << "variant"
     << std::right << std::setw(10) << "ms" << std::setw(11) << "cublas ms" << std::setw(10) << "x cublas"
     << std::setw(9) << "% DRAM" << std::setw(14) << "cublas % DRAM" << "  status\n";
  for (const ChainRow& r : rows) {
    const bool t = r.status == "ok";
    os << std::left << std::setw(12) << r.model << std::setw(6) << r.dtype << std::right << std::setw(6) << r.m
       << std::setw(10) << r.products << std::setw(10) << fmt(r.weight_bytes / 1e9, 2) << "  " << std::left
       << std::setw(12) << r.variant << std::right << std::setw(10) << (t ? fmt(r.ms.median, 3) : "-")
       << std::setw(11) << (t ? fmt(r.base.median, 3) : "-") << std::setw(10) << (t ? fmt(r.speedup, 2) + "x" : "-")
       << std::setw(9) << (t ? fmt(r.pct_dram, 1) : "-") << std::setw(14) << (t ? fmt(r.base_pct_dram, 1) : "-")
       << "  " << r.status << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n";
  }
  os << "checked: the first layer's products and the last, " << kCheckedElements
     << " sampled elements each, against fp64 (rung and cublas)\n";
  return os.str();
}

}  // namespace

int cmd_bench_chain(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  if (a.format == Format::csv) throw CliError("rungs bench chain: --format table or json (no csv)");
  std::unique_ptr<std::ofstream> file;
  if (!a.output.empty()) {
    file = std::make_unique<std::ofstream>(a.output, std::ios::out | std::ios::trunc);
    if (!*file) throw CliError("--output " + a.output + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  require_gpu(a.device);
  Context ctx = make_context(a, argv0);
  ctx.device = query_device(a.device, true);
  ctx.has_device = true;
  ctx.baseline = "cublas";
  ctx.timing = "median of interleaved (flush L2, event, graph of the chain, event, flush L2, event, cublas graph, "
               "event) x reps; cudaEventElapsedTime";
  L2Flusher flusher(a.flush_l2, ctx.device.l2_bytes);
  const Stream stream;
  const std::vector<std::string> models = a.models.empty() ? std::vector<std::string>{"llama3-8b"} : a.models;
  std::vector<int64_t> ms;
  for (const Shape& s : a.shapes) ms.push_back(s.m);
  if (ms.empty()) ms = {1, 16, 64};
  std::vector<bool> fp8s;
  for (check::GemmKind k : a.gemm_kinds) fp8s.push_back(k == check::GemmKind::fp8);
  if (fp8s.empty()) fp8s = {false};
  const std::vector<std::string> variants = a.variants.empty() ? std::vector<std::string>{"auto"} : a.variants;
  std::vector<ChainRow> rows;
  for (const std::string& model : models) {
    const std::vector<ChainProduct> ps = chain_products(model);
    for (bool fp8 : fp8s) {
      const ChainData d = make_data(ps, *std::max_element(ms.begin(), ms.end()), fp8, a.seed, stream.get());
      for (int64_t m : ms)
        for (const std::string& v : variants) {
          if (!a.quiet) err << "chain " << model << " " << (fp8 ? "fp8" : "bf16") << " m " << m << " " << v << "\n";
          rows.push_back(bench_one(a, model, ps, d, m, v, ctx.device, flusher, stream.get()));
        }
    }
  }
  const std::string text = format_rows(a.format, rows, ctx, a);
  if (file) {
    *file << text;
    if (!*file) throw CliError("--output " + a.output + ": write failed");
    if (a.format != Format::table) out << format_rows(Format::table, rows, ctx, a);
  } else {
    out << text;
  }
  for (const ChainRow& r : rows)
    if (r.status != "ok" && r.status != "skip") return 1;
  return 0;
}

}  // namespace rungs::cli
