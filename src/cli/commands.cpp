// The `rungs` commands. bench, verify and tune share one loop over shapes (data, fp64
// reference and device buffers set up once per shape) and the timing method of timing.cpp.
#include "cli/commands.hpp"

#include "check/epilogue_check.hpp"
#include "check/gemm_check.hpp"
#include "cli/bench_dist.hpp"
#include "cli/bench_chain.hpp"
#include "cli/bench_host.hpp"
#include "cli/buffers.hpp"
#include "check/gemv_check.hpp"
#include "check/reduce_check.hpp"
#include "cli/device.hpp"
#include "cli/output.hpp"
#include "cli/profile.hpp"
#include "cli/timing.hpp"
#include "cli/workload.hpp"
#include "core/errors.hpp"
#include "gemm/gemm_rung.hpp"
#include "gemm/tuning.hpp"
#include "reduce/reduce_rung.hpp"
#include "tune/warptile.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

namespace rungs::cli {

namespace {

// Left free beside our buffers: the CUDA context's own allocations, cuBLAS's workspace.
constexpr double kReserveBytes = 512.0 * 1024.0 * 1024.0;

const char* const kOps[] = {"gemm", "gemv", "reduce"};

// Everything a run needs, set up once per command.
struct Session {
  const Args& args;
  Context ctx;
  std::ostream& err;
  Stream stream;
  std::unique_ptr<L2Flusher> flusher;

  void progress(const std::string& line) const {
    if (!args.quiet) err << line << std::endl;
  }
  std::string baseline_of(const std::string& op) const { return ctx.baseline_of(op); }
};

std::vector<std::string> ops_to_run(const Args& a) {
  if (!a.op.empty()) {
    if (variants(op_from_name(a.op)).empty())
      throw CliError("the " + a.op + " ladder has no rungs yet (see rungs list)");
    return {a.op};
  }
  std::vector<std::string> ops;
  for (const char* op : kOps)
    if (!variants(op_from_name(op)).empty()) ops.push_back(op);
  return ops;
}

check::GemvShape gemv_shape(const Args& a, const Case& c) {
  check::GemvShape s;
  s.trans = c.trans.a;
  s.m = c.shape.m;
  s.n = c.shape.n;
  s.alpha = a.alpha;
  s.beta = a.beta;
  return check::normalized(s);
}

// Device bytes a case allocates (inputs and outputs).
double case_bytes(const Args& a, const std::string& op, const Case& c) {
  if (op == "gemv") {
    const check::GemvShape s = gemv_shape(a, c);
    return 4.0 * (static_cast<double>(check::gemv_a_elems(s)) + static_cast<double>(check::gemv_x_elems(s)) +
                  static_cast<double>(check::gemv_y_elems(s)));
  }
  if (op == "reduce") return static_cast<double>(c.shape.n) * dtype_bytes(c.dtype) + 8.0;
  const check::GemmShape s = gemm_shape(a, c);
  if (c.kind == check::GemmKind::fp8)  // 1-byte A and B, a bf16 C, the scales
    return static_cast<double>(check::a_elems(s)) + static_cast<double>(check::b_elems(s)) +
           2.0 * static_cast<double>(check::c_elems(s)) +
           4.0 * static_cast<double>(check::fp8_scales_a(c.scaling, s.m, s.k) + check::fp8_scales_b(c.scaling, s.n, s.k));
  return (check::is_16bit(c.kind) ? 2.0 : 4.0) * (static_cast<double>(check::a_elems(s)) + static_cast<double>(check::b_elems(s)) +
                static_cast<double>(check::c_elems(s)));
}

// Before allocating anything: does the largest case fit in what the device has free?
void check_memory(const Args& a, const std::vector<std::string>& ops, const DeviceInfo& d, int64_t flush_bytes) {
  double worst = 0;
  std::string worst_name;
  for (const std::string& op : ops)
    for (const Case& c : cases_for(a, op)) {
      const double bytes = case_bytes(a, op, c);
      if (bytes > worst) {
        worst = bytes;
        worst_name = op + " " + case_name(op, c);
      }
    }
  size_t free_b = 0, total_b = 0;
  RUNGS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const double need = worst + static_cast<double>(flush_bytes) + kReserveBytes;
  if (need > static_cast<double>(free_b))
    throw CliError(worst_name + " does not fit in device memory: its buffers need " + fmt_gib(worst) + " (plus " +
                   fmt_gib(static_cast<double>(flush_bytes) + kReserveBytes) +
                   " for the L2 flush buffer and the libraries) but " + fmt_gib(static_cast<double>(free_b)) +
                   " of " + fmt_gib(static_cast<double>(total_b)) + " is free on device " + std::to_string(d.index) +
                   " (" + d.name + ")");
}

// --baseline auto: the ladder's vendor rung; none: no baseline; else a rung of that ladder.
std::string resolve_baseline(const Args& a, const std::string& op, const DeviceInfo& d) {
  if (a.baseline == "none") return "";
  const std::vector<VariantInfo> ladder = variants(op_from_name(op));
  std::string name = a.baseline;
  if (name == "auto") {
    name.clear();
    for (const VariantInfo& v : ladder)
      if (v.baseline) name = v.name;
    if (name.empty()) return "";
  }
  const std::vector<VariantInfo> b = select_variants(ladder, {name}, op, "--baseline");
  if (b[0].min_sm > d.sm)
    throw CliError("--baseline " + b[0].name + " needs sm_" + std::to_string(b[0].min_sm) + "; this device is sm_" +
                   std::to_string(d.sm) + " (use --baseline none)");
  return b[0].name;
}

// gemm in any kind: f32/tf32/tf32x3 on float buffers, f16/bf16 on 16-bit buffers holding the
// inputs rounded to the format (the reference is computed from the rounded values); fp8: e4m3
// bytes, scales laid out as --scaling says and a bf16 C (the reference is computed from the
// dequantized values, exact in float).
class GemmWorkload : public Workload {
 public:
  GemmWorkload(Session& ses, const Case& c) : Workload(ses.args, "gemm", c) {
    s_ = gemm_shape(args_, c);
    const int64_t rows = reference_rows(args_, c.shape);
    ses.progress("[gemm] " + case_name(op_, c) + ": random data, fp64 reference on " +
                 (rows == 0 ? std::string("all rows") : std::to_string(rows) + " sampled rows"));
    if (fp8()) {
      check::Fp8Data f8 = check::make_fp8_data(s_, check::Fp8Format::e4m3, check::Fp8Format::e4m3, case_.scaling,
                                               true, args_.seed);
      data_ = std::move(f8.deq);
      f8_a_ = std::move(f8.A), f8_b_ = std::move(f8.B), sa_ = std::move(f8.sa), sb_ = std::move(f8.sb);
    } else {
      data_ = check::make_gemm_data(s_, args_.seed);
      check::round_inputs(data_, c.kind);
    }
    ref_ = check::gemm_reference(s_, data_, rows, args_.seed);
    const std::string what = "gemm " + case_name(op_, c);
    const size_t elem = fp8() ? 1 : h16() ? 2 : 4;
    A_ = std::make_unique<DeviceBuffer>(data_.A.size() * elem, "A of " + what);
    B_ = std::make_unique<DeviceBuffer>(data_.B.size() * elem, "B of " + what);
    C_ = std::make_unique<DeviceBuffer>(data_.C0.size() * (c16() ? 2 : 4), "C of " + what);
    if (fp8()) {
      SA_ = std::make_unique<DeviceBuffer>(sa_.size() * 4, "scales.a of " + what);
      SB_ = std::make_unique<DeviceBuffer>(sb_.size() * 4, "scales.b of " + what);
      C0_16_ = check::to_16bit(data_.C0, check::GemmKind::bf16);
      A_->upload(f8_a_.data(), ses.stream.get());
      B_->upload(f8_b_.data(), ses.stream.get());
      SA_->upload(sa_.data(), ses.stream.get());
      SB_->upload(sb_.data(), ses.stream.get());
    } else if (h16()) {
      C0_16_ = check::to_16bit(data_.C0, c.kind);
      const std::vector<uint16_t> a16 = check::to_16bit(data_.A, c.kind), b16 = check::to_16bit(data_.B, c.kind);
      A_->upload(a16.data(), ses.stream.get());
      B_->upload(b16.data(), ses.stream.get());
      RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));  // before a16, b16 go
    } else {
      A_->upload(data_.A.data(), ses.stream.get());
      B_->upload(data_.B.data(), ses.stream.get());
    }
    hostC_.assign(data_.C0.size(), 0.0f);
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  }
  Launch launch(const std::string& variant, cudaStream_t stream) const override {
    return [this, variant, stream] {
      Options o;
      o.variant = variant;
      o.stream = stream;
      o.math = check::math_of(case_.kind);
      // tf32x3's baseline is cuBLAS's true fp32 sgemm: the accuracy the mode must match, and the
      // speed it must beat (cuBLAS has no 3xTF32 mode).
      if (case_.kind == check::GemmKind::tf32x3 && variant == "cublas") o.math = Math::fp32;
      if (fp8()) {
        Scales sc;
        sc.a = SA_->as<float>(), sc.b = SB_->as<float>(), sc.kind = case_.scaling;
        gemm(s_.ta, s_.tb, s_.m, s_.n, s_.k, s_.alpha, A_->as<__nv_fp8_e4m3>(), s_.lda, B_->as<__nv_fp8_e4m3>(),
             s_.ldb, sc, s_.beta, C_->as<__nv_bfloat16>(), s_.ldc, o);
      } else if (case_.kind == check::GemmKind::f16)
        gemm(s_.ta, s_.tb, s_.m, s_.n, s_.k, s_.alpha, A_->as<__half>(), s_.lda, B_->as<__half>(), s_.ldb, s_.beta,
             C_->as<__half>(), s_.ldc, o);
      else if (case_.kind == check::GemmKind::bf16)
        gemm(s_.ta, s_.tb, s_.m, s_.n, s_.k, s_.alpha, A_->as<__nv_bfloat16>(), s_.lda, B_->as<__nv_bfloat16>(), s_.ldb,
             s_.beta, C_->as<__nv_bfloat16>(), s_.ldc, o);
      else
        gemm(s_.ta, s_.tb, s_.m, s_.n, s_.k, s_.alpha, A_->as<float>(), s_.lda, B_->as<float>(), s_.ldb, s_.beta,
             C_->as<float>(), s_.ldc, o);
    };
  }
  // tune: one warptile configuration on this case.
  Launch launch_config(size_t i, cudaStream_t stream) const {
    return [this, i, stream] {
      const sgemm::Args args{s_.ta,  s_.tb,           s_.m,     s_.n,           s_.k,     s_.alpha, A_->as<float>(),
                             s_.lda, B_->as<float>(), s_.ldb, s_.beta, C_->as<float>(), s_.ldc,  stream};
      sgemm::warptile::run_config(i, args);
      RUNGS_CUDA(cudaPeekAtLastError());
    };
  }
  double correctness_run(const Launch& f, const std::string&, Result& r, cudaStream_t stream) override {
    if (s_.beta == 0.0f)
      C_->poison(stream);
    else
      C_->upload(c16() ? static_cast<const void*>(C0_16_.data()) : data_.C0.data(), stream);
    const double ms = time_once(f, stream);
    if (c16()) {
      std::vector<uint16_t> raw(data_.C0.size());
      C_->download(raw.data(), stream);
      RUNGS_CUDA(cudaStreamSynchronize(stream));
      hostC_ = check::from_16bit(raw, check::c_kind(case_.kind));
    } else {
      C_->download(hostC_.data(), stream);
      RUNGS_CUDA(cudaStreamSynchronize(stream));
    }
    const check::GemmErrors e = check::compare_gemm(s_, ref_, hostC_.data(), case_.kind);
    r.checked = true;
    r.checked_rows = ref_.rows.empty() ? s_.m : static_cast<int64_t>(ref_.rows.size());
    r.max_rel = e.max_rel;
    r.normwise = e.normwise;
    r.normwise_tol = check::normwise_tolerance(s_.k, case_.kind);
    r.bound_ratio = e.bound_ratio;
    r.bad = e.bad;
    if (!e.pass) fail_with(r, e.reason);
    return ms;
  }
  std::string resolve_auto() const override {
    Options o;
    o.math = check::math_of(case_.kind);
    return resolve_gemm_variant(s_.ta, s_.tb, s_.m, s_.n, s_.k, o, check::gemm_type_of(case_.kind), s_.lda, s_.ldb,
                                case_.scaling);
  }
  // A and B once, C written (and read when beta != 0).
  double bytes() const override {
    const double c = static_cast<double>(check::c_elems(s_)) * (s_.beta == 0.0f ? 1.0 : 2.0);
    if (fp8())  // 1-byte A and B, a bf16 C, the scales once
      return static_cast<double>(check::a_elems(s_) + check::b_elems(s_)) + 2.0 * c +
             4.0 * static_cast<double>(sa_.size() + sb_.size());
    return (h16() ? 2.0 : 4.0) * (static_cast<double>(check::a_elems(s_) + check::b_elems(s_)) + c);
  }

 private:
  bool h16() const { return check::is_16bit(case_.kind); }
  bool fp8() const { return case_.kind == check::GemmKind::fp8; }
  bool c16() const { return check::is_16bit(check::c_kind(case_.kind)); }  // C in 16 bits (fp8's is bf16)
  check::GemmShape s_;
  check::GemmData data_;
  check::GemmReference ref_;
  std::unique_ptr<DeviceBuffer> A_, B_, C_, SA_, SB_;
  std::vector<uint16_t> C0_16_;
  std::vector<float> hostC_;
  std::vector<uint8_t> f8_a_, f8_b_;  // fp8: A and B as uploaded
  std::vector<float> sa_, sb_;        // fp8: the scales
};

// A gemm with an epilogue (--epilogue, --gated, --out fp8): the product's data and fp64 reference
// over its np = 2n columns when gated, a bias (C's type; float for an fp8 output) and C0 drawn
// apart, C m x n, and the epilogue's reference and bound (check/epilogue_check.hpp).
class GemmEpiWorkload : public Workload {
 public:
  GemmEpiWorkload(Session& ses, const Case& c) : Workload(ses.args, "gemm", c) {
    const EpiFlags& e = c.epi;
    out_ = gemm_shape(args_, c);  // C: m x n, its ld and beta
    ps_ = out_;
    ps_.n = e.gated ? 2 * out_.n : out_.n, ps_.beta = 0.0f, ps_.ldb = 0, ps_.ldc = 0;
    ps_ = check::normalized(ps_);
    const int64_t rows = reference_rows(args_, c.shape);
    ses.progress("[gemm] " + case_name(op_, c) + ": random data, fp64 reference on " +
                 (rows == 0 ? std::string("all rows") : std::to_string(rows) + " sampled rows"));
    const std::string what = "gemm " + case_name(op_, c);
    ck_ = c.kind == check::GemmKind::fp8 ? check::GemmKind::bf16 : check::c_kind(c.kind);
    check::GemmData d;
    if (fp8()) {
      check::Fp8Data f8 = check::make_fp8_data(ps_, check::Fp8Format::e4m3, check::Fp8Format::e4m3, c.scaling, true,
                                               args_.seed);
      d = std::move(f8.deq);
      upload_new(A_, f8.A.data(), f8.A.size(), "A of " + what, ses);
      upload_new(B_, f8.B.data(), f8.B.size(), "B of " + what, ses);
      upload_new(SA_, f8.sa.data(), f8.sa.size() * 4, "scales.a of " + what, ses);
      upload_new(SB_, f8.sb.data(), f8.sb.size() * 4, "scales.b of " + what, ses);
    } else {
      d = check::make_gemm_data(ps_, args_.seed);
      check::round_inputs(d, c.kind);
      upload_typed(A_, d.A, c.kind, "A of " + what, ses);
      upload_typed(B_, d.B, c.kind, "B of " + what, ses);
    }
    const check::GemmReference p = check::gemm_reference(ps_, d, rows, args_.seed);
    // The bias and C0: the gemm's own generator on shapes of their size (values in [-1, 1]).
    check::GemmShape bs;
    bs.m = 1, bs.n = ps_.n, bs.k = 1;
    check::GemmShape cs = out_;
    cs.k = 1;
    std::vector<float> bias = check::make_gemm_data(check::normalized(bs), args_.seed + 1).C0;
    c0_ = check::make_gemm_data(check::normalized(cs), args_.seed + 2).C0;
    const check::GemmKind bias_kind = e.fp8_out ? check::GemmKind::f32 : ck_;
    check::GemmData rb{{}, {}, bias}, rc{{}, {}, c0_};
    check::round_inputs(rb, bias_kind), check::round_inputs(rc, ck_);
    bias = rb.C0, c0_ = rc.C0;
    if (e.bias) upload_typed(bias_, bias, bias_kind, "bias of " + what, ses);
    c_elem_ = e.fp8_out ? 1 : ck_ == check::GemmKind::f32 ? 4 : 2;
    C_ = std::make_unique<DeviceBuffer>(c0_.size() * c_elem_, "C of " + what);
    blocks_ = (out_.n + 127) / 128;
    if (e.fp8_out) scales_ = std::make_unique<DeviceBuffer>(static_cast<size_t>(out_.m * blocks_) * 4, "c_scales of " + what);
    const check::EpiTolerances t = check::epilogue_tolerances(c.kind, ps_.k, e.fp8_out);
    ref_ = check::epilogue_reference(p, out_.n, e.gated, e.bias ? std::vector<double>(bias.begin(), bias.end())
                                                               : std::vector<double>{},
                                     e.act, e.fp8_out ? 0.0 : out_.beta, c0_, out_.ldc, t.gamma_p, t.eta_p, t.uo,
                                     t.eta_o);
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  }
  Launch launch(const std::string& variant, cudaStream_t stream) const override {
    return [this, variant, stream] {
      Options o;
      o.variant = variant, o.stream = stream, o.math = check::math_of(case_.kind);
      o.epilogue.bias = bias_ ? bias_->get() : nullptr;
      o.epilogue.act = case_.epi.act, o.epilogue.gated = case_.epi.gated;
      const check::GemmShape& s = ps_;
      const int64_t n = out_.n, ldc = out_.ldc;
      using bf = __nv_bfloat16;
      using e4 = __nv_fp8_e4m3;
      Scales sc;
      if (fp8()) sc.a = SA_->as<float>(), sc.b = SB_->as<float>(), sc.kind = case_.scaling;
      if (case_.epi.fp8_out && fp8())
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<e4>(), s.lda, B_->as<e4>(), s.ldb, sc, C_->as<e4>(), ldc,
             scales_->as<float>(), o);
      else if (case_.epi.fp8_out)
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<bf>(), s.lda, B_->as<bf>(), s.ldb, C_->as<e4>(), ldc,
             scales_->as<float>(), o);
      else if (fp8())
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<e4>(), s.lda, B_->as<e4>(), s.ldb, sc, out_.beta, C_->as<bf>(),
             ldc, o);
      else if (case_.kind == check::GemmKind::f16)
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<__half>(), s.lda, B_->as<__half>(), s.ldb, out_.beta,
             C_->as<__half>(), ldc, o);
      else if (case_.kind == check::GemmKind::bf16)
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<bf>(), s.lda, B_->as<bf>(), s.ldb, out_.beta, C_->as<bf>(), ldc,
             o);
      else
        gemm(s.ta, s.tb, s.m, n, s.k, s.alpha, A_->as<float>(), s.lda, B_->as<float>(), s.ldb, out_.beta,
             C_->as<float>(), ldc, o);
    };
  }
  double correctness_run(const Launch& f, const std::string&, Result& r, cudaStream_t stream) override {
    C_->poison(stream);
    if (scales_) scales_->poison(stream);
    if (out_.beta != 0.0f && !case_.epi.fp8_out) {
      if (c_elem_ == 4) {
        C_->upload(c0_.data(), stream);
      } else {
        const std::vector<uint16_t> c16 = check::to_16bit(c0_, ck_);
        C_->upload(c16.data(), stream);
        RUNGS_CUDA(cudaStreamSynchronize(stream));
      }
    }
    const double ms = time_once(f, stream);
    check::EpiErrors e;
    if (case_.epi.fp8_out) {
      std::vector<uint8_t> got(c0_.size());
      std::vector<float> s(static_cast<size_t>(out_.m * blocks_));
      C_->download(got.data(), stream), scales_->download(s.data(), stream);
      RUNGS_CUDA(cudaStreamSynchronize(stream));
      e = check::compare_epilogue_fp8(ref_, got.data(), out_.n, out_.ldc, s.data());
    } else {
      std::vector<float> got(c0_.size());
      if (c_elem_ == 4) {
        C_->download(got.data(), stream);
        RUNGS_CUDA(cudaStreamSynchronize(stream));
      } else {
        std::vector<uint16_t> raw(got.size());
        C_->download(raw.data(), stream);
        RUNGS_CUDA(cudaStreamSynchronize(stream));
        got = check::from_16bit(raw, ck_);
      }
      e = check::compare_epilogue(ref_, got.data(), out_.n, out_.ldc);
    }
    r.checked = true;
    r.checked_rows = ref_.rows.empty() ? out_.m : static_cast<int64_t>(ref_.rows.size());
    r.bound_ratio = e.max_ratio;
    r.bad = e.bad;
    if (!e.pass()) fail_with(r, std::to_string(e.bad) + " elements outside the epilogue's bound, first " + e.first);
    return ms;
  }
  std::string resolve_auto() const override {
    const GemmType type = check::gemm_type_of(case_.kind);
    return sgemm::auto_epilogue_variant(type, ps_.ta, ps_.tb, out_.m, sgemm::rows_aligned(type, ps_.lda, ps_.ldb),
                                        case_.epi.fp8_out, case_.epi.gated);
  }
  // A and B once (B: 2n columns when gated), the bias, C written (and read when beta != 0), the
  // scales of fp8 inputs and of an fp8 output.
  double bytes() const override {
    const double in = fp8() ? 1.0 : check::is_16bit(case_.kind) ? 2.0 : 4.0;
    const double c = static_cast<double>(out_.m) * out_.n * c_elem_ * (out_.beta != 0.0f && !case_.epi.fp8_out ? 2 : 1);
    double b = in * static_cast<double>(check::a_elems(ps_) + check::b_elems(ps_)) + c;
    if (bias_) b += static_cast<double>(ps_.n) * (case_.epi.fp8_out ? 4 : c_elem_);
    if (scales_) b += 4.0 * static_cast<double>(out_.m * blocks_);
    return b;
  }

 private:
  bool fp8() const { return case_.kind == check::GemmKind::fp8; }
  void upload_new(std::unique_ptr<DeviceBuffer>& buf, const void* h, size_t bytes, const std::string& what,
                  Session& ses) {
    buf = std::make_unique<DeviceBuffer>(bytes, what);
    buf->upload(h, ses.stream.get());
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  }
  // v in `kind`'s storage (float, or the 16 bits of f16 / bf16) into a new buffer.
  void upload_typed(std::unique_ptr<DeviceBuffer>& buf, const std::vector<float>& v, check::GemmKind kind,
                    const std::string& what, Session& ses) {
    if (check::is_16bit(kind)) {
      const std::vector<uint16_t> h = check::to_16bit(v, kind);
      upload_new(buf, h.data(), h.size() * 2, what, ses);
    } else {
      upload_new(buf, v.data(), v.size() * 4, what, ses);
    }
  }
  check::GemmShape out_, ps_;
  check::GemmKind ck_ = check::GemmKind::f32;  // C's format (the bias's too, but with an fp8 output)
  check::EpiReference ref_;
  std::vector<float> c0_;
  std::unique_ptr<DeviceBuffer> A_, B_, SA_, SB_, C_, bias_, scales_;
  size_t c_elem_ = 4;
  int64_t blocks_ = 0;
};

class GemvWorkload : public Workload {
 public:
  GemvWorkload(Session& ses, const Case& c) : Workload(ses.args, "gemv", c) {
    s_ = gemv_shape(args_, c);
    ses.progress("[gemv] " + case_name(op_, c) + ": random data, fp64 reference on all outputs");
    data_ = check::make_gemv_data(s_, args_.seed);
    ref_ = check::gemv_reference(s_, data_);
    const std::string what = "gemv " + case_name(op_, c);
    A_ = std::make_unique<DeviceBuffer>(data_.A.size() * 4, "A of " + what);
    x_ = std::make_unique<DeviceBuffer>(data_.x.size() * 4, "x of " + what);
    y_ = std::make_unique<DeviceBuffer>(data_.y0.size() * 4, "y of " + what);
    A_->upload(data_.A.data(), ses.stream.get());
    x_->upload(data_.x.data(), ses.stream.get());
    hosty_.assign(data_.y0.size(), 0.0f);
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  }
  Launch launch(const std::string& variant, cudaStream_t stream) const override {
    return [this, variant, stream] {
      Options o;
      o.variant = variant;
      o.stream = stream;
      gemv(s_.trans, s_.m, s_.n, s_.alpha, A_->as<float>(), s_.lda, x_->as<float>(), s_.incx, s_.beta,
           y_->as<float>(), s_.incy, o);
    };
  }
  double correctness_run(const Launch& f, const std::string&, Result& r, cudaStream_t stream) override {
    if (s_.beta == 0.0f)
      y_->poison(stream);
    else
      y_->upload(data_.y0.data(), stream);
    const double ms = time_once(f, stream);
    y_->download(hosty_.data(), stream);
    RUNGS_CUDA(cudaStreamSynchronize(stream));
    const check::GemmErrors e = check::compare_gemv(s_, ref_, hosty_.data(), nullptr);
    r.checked = true;
    r.checked_rows = check::gemv_out_len(s_);
    r.max_rel = e.max_rel;
    r.normwise = e.normwise;
    r.normwise_tol = check::normwise_tolerance(check::gemv_dot_len(s_));
    r.bound_ratio = e.bound_ratio;
    r.bad = e.bad;
    if (!e.pass) fail_with(r, e.reason);
    return ms;
  }
  std::string resolve_auto() const override { return resolve_gemv_variant(s_.trans, s_.m, s_.n); }
  // A once, x once, y written (and read when beta != 0).
  double bytes() const override {
    const double y = static_cast<double>(check::gemv_out_len(s_)) * (s_.beta == 0.0f ? 4.0 : 8.0);
    return 4.0 * static_cast<double>(s_.m) * static_cast<double>(s_.n) +
           4.0 * static_cast<double>(check::gemv_dot_len(s_)) + y;
  }

 private:
  check::GemvShape s_;
  check::GemvData data_;
  check::GemvReference ref_;
  std::unique_ptr<DeviceBuffer> A_, x_, y_;
  std::vector<float> hosty_;
};

class ReduceWorkload : public Workload {
 public:
  ReduceWorkload(Session& ses, const Case& c) : Workload(ses.args, "reduce", c) {
    ses.progress("[reduce] " + case_name(op_, c) + ": random data, exact reference");
    data_ = check::make_reduce_data(c.dtype, c.shape.n, args_.seed, check::ReducePattern::random);
    exact_ = check::reduce_reference(data_);
    in_ = std::make_unique<DeviceBuffer>(data_.bytes(), "the input of reduce " + case_name(op_, c));
    out_ = std::make_unique<DeviceBuffer>(8, "the output of reduce");
    in_->upload(data_.data(), ses.stream.get());
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
  }
  Launch launch(const std::string& variant, cudaStream_t stream) const override {
    return [this, variant, stream] {
      Options o;
      o.variant = variant;
      o.stream = stream;
      const int64_t n = case_.shape.n;
      switch (case_.dtype) {
        case DType::i32: reduce_sum(in_->as<const int32_t>(), n, out_->as<int64_t>(), o); break;
        case DType::i64: reduce_sum(in_->as<const int64_t>(), n, out_->as<int64_t>(), o); break;
        case DType::f32: reduce_sum(in_->as<const float>(), n, out_->as<float>(), o); break;
        case DType::f64: reduce_sum(in_->as<const double>(), n, out_->as<double>(), o); break;
      }
    };
  }
  double correctness_run(const Launch& f, const std::string& variant, Result& r, cudaStream_t stream) override {
    out_->poison(stream);
    const double ms = time_once(f, stream);
    unsigned char result[8] = {};
    out_->download(result, stream);
    RUNGS_CUDA(cudaStreamSynchronize(stream));
    const check::ReduceErrors e = check::compare_reduce(data_, exact_, result, accurate(variant));
    r.checked = true;
    r.checked_rows = r.shape.m;  // "all"
    r.max_rel = e.rel_err;
    r.normwise = e.rel_err;
    r.normwise_tol = e.bound;
    r.bound_ratio = e.bound_ratio;
    r.bad = 0;
    if (!e.pass) fail_with(r, e.reason);
    return ms;
  }
  std::string resolve_auto() const override { return resolve_reduce_variant(case_.dtype, case_.shape.n); }
  double bytes() const override { return static_cast<double>(data_.bytes()); }

 private:
  // Rungs that promise the accurate bound are held to it; the others to a plain sum's bound.
  bool accurate(const std::string& variant) const {
    const std::string name = variant == "auto" ? resolve_auto() : variant;
    for (const reduce::Rung& rung : reduce::ladder())
      if (name == rung.name) return rung.accurate;
    return false;
  }
  check::ReduceData data_;
  check::ReduceExact exact_;
  std::unique_ptr<DeviceBuffer> in_, out_;
};

std::unique_ptr<Workload> make_workload(Session& ses, const std::string& op, const Case& c) {
  if (op == "gemv") return std::make_unique<GemvWorkload>(ses, c);
  if (op == "reduce") return std::make_unique<ReduceWorkload>(ses, c);
  if (c.epi.on) return std::make_unique<GemmEpiWorkload>(ses, c);
  return std::make_unique<GemmWorkload>(ses, c);
}

// The baseline once on this case: it warms the library up and tells whether it can run it.
void probe_baseline(Session& ses, Workload& w) {
  const std::string base = ses.baseline_of(w.op());
  if (base.empty()) return;
  try {
    w.launch(base, ses.stream.get())();
    RUNGS_CUDA(cudaStreamSynchronize(ses.stream.get()));
    w.baseline_ok = true;
  } catch (const Unsupported& e) {
    w.baseline_ok = false;
    w.baseline_reason = e.what();
  }
}

// % peak of a gemm row is of the units that kind runs on: the dense tensor-core peak is 16x the
// fp32 FFMA peak for f16/bf16 and 8x for tf32 on sm_80 and sm_90 (A100: 19.5 / 312 / 156; H100 SXM:
// 67 / 1070 / 535 at 1.98 GHz); tf32x3 is held to the tf32 peak (its three products count as one).
double tensor_peak_factor(const Result& r) {
  if (r.op != "gemm") return 1.0;
  switch (r.kind) {
    case check::GemmKind::fp8: return 32.0;  // H100 SXM: 1979 dense fp8 TFLOP/s, 2x bf16
    case check::GemmKind::f16: case check::GemmKind::bf16: return 16.0;
    case check::GemmKind::tf32: case check::GemmKind::tf32x3: return 8.0;
    case check::GemmKind::f32: return 1.0;
  }
  return 1.0;
}

void timed_run(Session& ses, const Workload& w, const Launch& f, Result& r, bool is_baseline, double first_ms) {
  const Args& a = ses.args;
  const std::string base = ses.baseline_of(w.op());
  Launch base_launch;
  const bool interleave = !base.empty() && w.baseline_ok && !is_baseline;
  if (interleave) base_launch = w.launch(base, ses.stream.get());
  const Measurement m =
      measure(f, interleave ? &base_launch : nullptr, a.reps, a.warmup, *ses.flusher, ses.stream.get(), first_ms);
  const Stats st = summarize(m.rung_ms);
  r.timed = true;
  r.reps = m.reps;
  r.reps_requested = a.reps;
  r.warmup = m.warmup;
  r.reps_cut = m.cut;
  r.warm_ms = m.warm_ms;
  r.median_ms = st.median;
  r.min_ms = st.min;
  r.max_ms = st.max;
  set_rates(r, w.bytes(), ses.ctx.device);
  if (is_baseline) {
    r.baseline = base;
    r.baseline_median_ms = st.median;
    r.speedup = 1.0;
  } else if (interleave) {
    const Stats b = summarize(m.base_ms);
    r.baseline = base;
    r.baseline_median_ms = b.median;
    r.speedup = st.median > 0 ? b.median / st.median : 0;
  }
}

// Runs body; Unsupported becomes SKIP, other library errors an ERROR row unless the CUDA
// context is broken (a sticky fault), which ends the run.
template <class F>
void guarded(Result& r, F&& body) {
  try {
    body();
  } catch (const Unsupported& e) {
    r.status = Status::skip;
    r.reason = e.what();
    r.timed = false;
  } catch (const Error& e) {
    const cudaError_t sync = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    if (sync != cudaSuccess) throw;
    r.status = Status::error;
    r.reason = e.what();
    r.timed = false;
  }
}

std::string strip_prefix(const std::string& reason, const std::string& name) {
  const std::string p = name + ": ";
  return reason.compare(0, p.size(), p) == 0 ? reason.substr(p.size()) : reason;
}

// bench (timed) and verify (not timed) on one ladder.
void run_ladder(Session& ses, const std::string& op, bool timed, std::vector<Result>& out) {
  const Args& a = ses.args;
  const std::vector<VariantInfo> ladder = variants(op_from_name(op));
  const std::vector<VariantInfo> chosen = select_variants(ladder, a.variants, op);
  const std::vector<Case> cases = cases_for(a, op);
  const std::string base = ses.baseline_of(op);
  const size_t total = cases.size() * chosen.size();
  size_t done = 0;
  const int dev_sm = ses.ctx.device.sm;
  for (const Case& c : cases) {
    std::unique_ptr<Workload> w = make_workload(ses, op, c);
    if (timed) probe_baseline(ses, *w);
    for (const VariantInfo& v : chosen) {
      ++done;
      // gemm: with no --variant, the rungs that do not do this case's type/math are left out
      // (variants() lists what each does); a rung named with --variant gets a SKIP row instead.
      if (op == "gemm" && a.variants.empty() && v.name != "auto" &&
          (" " + v.types + " ").find(std::string(" ") + check::gemm_kind_name(c.kind) + " ") == std::string::npos)
        continue;
      // bench on the decode workloads: their own set of rungs (verify checks every rung on them).
      if (timed && a.variants.empty() && (c.workload == kDecodeWorkload || c.workload == kDecodeFp8Workload) &&
          !decode_rung(v, base))
        continue;
      ses.progress("[" + op + " " + std::to_string(done) + "/" + std::to_string(total) + "] " + v.name + " " +
                   case_name(op, c));
      Result r = w->new_result();
      r.variant = v.name;
      r.rung = v.rung;
      r.is_baseline = !base.empty() && v.name == base;
      if (v.min_sm > dev_sm) {
        r.status = Status::skip;
        r.reason = "needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" + std::to_string(dev_sm);
        out.push_back(r);
        continue;
      }
      guarded(r, [&] {
        const Launch f = w->launch(v.name, ses.stream.get());
        const double first_ms = w->correctness_run(f, v.name, r, ses.stream.get());
        if (timed) timed_run(ses, *w, f, r, r.is_baseline, first_ms);
      });
      if (v.name == "auto") {  // say which rung auto chose for this case
        try {
          r.variant = "auto=" + w->resolve_auto();
        } catch (const Error&) {
        }
      }
      if (timed && !r.is_baseline && !base.empty() && !w->baseline_ok && r.timed)
        r.reason += (r.reason.empty() ? "" : "; ") + std::string("no baseline on this shape: ") +
                    strip_prefix(w->baseline_reason, base);
      r.reason = strip_prefix(r.reason, v.name);
      out.push_back(r);
    }
  }
}

void run_tune(Session& ses, std::vector<Result>& out) {
  const Args& a = ses.args;
  const std::vector<std::string> cfgs = sgemm::warptile::configs();
  if (cfgs.empty()) throw CliError("tune: the warptile rung has no configurations to time");
  for (const VariantInfo& v : variants(Op::gemm))
    if (v.name == "warptile" && v.min_sm > ses.ctx.device.sm)
      throw CliError("tune: warptile needs sm_" + std::to_string(v.min_sm) + " or newer; this device is sm_" +
                     std::to_string(ses.ctx.device.sm));
  const std::vector<Case> cases = cases_for(a, "gemm");
  const size_t total = cases.size() * cfgs.size();
  size_t done = 0;
  const cudaStream_t stream = ses.stream.get();
  for (const Case& c : cases) {
    GemmWorkload w(ses, c);
    probe_baseline(ses, w);
    const size_t first = out.size();
    for (size_t i = 0; i < cfgs.size(); ++i) {
      ++done;
      ses.progress("[tune " + std::to_string(done) + "/" + std::to_string(total) + "] " + cfgs[i] + " " +
                   case_name("gemm", c));
      Result r = w.new_result();
      r.variant = "warptile";
      r.config = cfgs[i];
      r.rung = static_cast<int>(i);
      const Launch f = w.launch_config(i, stream);
      guarded(r, [&] {
        const double first_ms = w.correctness_run(f, "warptile", r, stream);
        timed_run(ses, w, f, r, false, first_ms);
      });
      r.reason = strip_prefix(r.reason, "warptile");
      out.push_back(r);
    }
    Result* best = nullptr;
    for (size_t i = first; i < out.size(); ++i)
      if (out[i].status == Status::ok && out[i].timed && (!best || out[i].median_ms < best->median_ms))
        best = &out[i];
    if (best) best->fastest = true;
  }
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

void write_results(const Args& a, const Context& ctx, const std::vector<Result>& rows, std::ostream& out,
                   std::ofstream* file, std::ostream& err) {
  const std::string text = format_results(a.format, ctx, rows);
  if (file == nullptr) {
    out << text;
    out.flush();
    return;
  }
  *file << text;
  file->flush();
  if (!*file) throw CliError("--output " + a.output + ": write failed");
  if (a.format != Format::table) out << format_results(Format::table, ctx, rows);
  out.flush();
  if (!a.quiet)
    err << "rungs: wrote " << rows.size() << " result" << (rows.size() == 1 ? "" : "s") << " (" << format_name(a.format)
        << ") to " << a.output << std::endl;
}

int cmd_run(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err) {
  if (a.op == "gemm_host") return cmd_bench_host(a, argv0, out, err);
  if (a.op == "chain") return cmd_bench_chain(a, argv0, out, err);
  if (is_dist_op(a.op)) return cmd_bench_dist(a, argv0, out, err);
  // Everything that can be checked without the GPU first.
  const std::vector<std::string> ops = a.command == Command::tune ? std::vector<std::string>{"gemm"} : ops_to_run(a);
  for (const std::string& op : ops) {
    if (a.command != Command::tune) (void)select_variants(variants(op_from_name(op)), a.variants, op);
  }
  std::unique_ptr<std::ofstream> file;
  if (!a.output.empty()) {
    file = std::make_unique<std::ofstream>(a.output, std::ios::out | std::ios::trunc);
    if (!*file) throw CliError("--output " + a.output + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  require_gpu(a.device);
  const bool timed = a.command != Command::verify;
  Session ses{a, make_context(a, argv0), err, Stream(), nullptr};
  ses.ctx.device = query_device(a.device, timed);
  ses.ctx.has_device = true;
  ses.ctx.baseline.clear();
  if (timed) {
    for (const std::string& op : ops) {
      const std::string b = resolve_baseline(a, op, ses.ctx.device);
      if (b.empty()) continue;
      ses.ctx.baselines[op] = b;
      ses.ctx.baseline += (ses.ctx.baseline.empty() ? "" : ",") + op + ":" + b;
    }
    if (ses.ctx.baselines.size() == 1) ses.ctx.baseline = ses.ctx.baselines.begin()->second;
  }
  const int64_t flush_bytes = timed && a.flush_l2 ? 2 * ses.ctx.device.l2_bytes : 0;
  check_memory(a, ops, ses.ctx.device, flush_bytes);
  ses.flusher = std::make_unique<L2Flusher>(timed && a.flush_l2, ses.ctx.device.l2_bytes);
  if (timed && a.reps < kMinReportedReps && !a.quiet)
    err << "rungs: note: --reps " << a.reps << " is below " << kMinReportedReps
        << ", the project's minimum for reported numbers: a quick look only" << std::endl;

  std::vector<Result> rows;
  try {
    if (a.command == Command::tune)
      run_tune(ses, rows);
    else
      for (const std::string& op : ops) run_ladder(ses, op, timed, rows);
  } catch (...) {
    // A fatal error mid-run: what was measured so far still comes out, then the error.
    if (!rows.empty()) {
      err << "rungs: the run stopped early; the " << rows.size() << " result" << (rows.size() == 1 ? "" : "s")
          << " measured so far follow" << std::endl;
      write_results(a, ses.ctx, rows, out, file.get(), err);
    }
    throw;
  }
  write_results(a, ses.ctx, rows, out, file.get(), err);
  int code = exit_code(rows);
  // The seed workloads add the dist ladders where more than one GPU is visible (their own tables,
  // after the others; table format only).
  if (a.command == Command::bench && a.op.empty() && dist_built() && visible_gpus() > 1) {
    if (a.format != Format::table) {
      if (!a.quiet)
        err << "rungs: note: the allgather_gemm and gemm_reducescatter tables are printed in table format only"
            << std::endl;
    }
    for (const char* op : {"allgather_gemm", "gemm_reducescatter"}) {
      Args d = a;
      d.op = op;
      d.variants.clear();
      d.format = Format::table;
      d.output.clear();
      out << "\n";
      code = std::max(code, cmd_bench_dist(d, argv0, out, err));
    }
  }
  return code;
}

int cmd_info(const Args& a, std::ostream& out) {
  require_gpu(a.device);
  out << format_info(query_device(a.device, true));
  return 0;
}

int cmd_list(const Args& a, std::ostream& out) {
  std::vector<std::pair<std::string, std::vector<VariantInfo>>> ladders;
  for (const char* op : kOps)
    if (a.op.empty() || a.op == op) ladders.emplace_back(op, variants(op_from_name(op)));
  for (const char* op : {"allgather_gemm", "gemm_reducescatter"})
    if (a.op.empty() || a.op == op) ladders.emplace_back(op, variants(op_from_name(op)));
  out << format_list(ladders);
  if (!dist_built() && (a.op.empty() || is_dist_op(a.op)))
    out << "(allgather_gemm and gemm_reducescatter are rungs::dist's, not in this build: it was configured without "
           "NCCL (not found, or RUNGS_DIST=OFF); docs/dist.md says how to enable it)\n";
  return 0;
}

}  // namespace

bool decode_rung(const VariantInfo& v, const std::string& baseline) {
  return v.name.rfind("decode_", 0) == 0 || v.name == "auto" || v.baseline || (!baseline.empty() && v.name == baseline) ||
         v.min_sm >= 90;
}

void set_rates(Result& r, double bytes, const DeviceInfo& d) {
  const double s = r.median_ms * 1e-3;
  r.tflops = s > 0 ? r.flops() / s / 1e12 : 0;
  const double peak = d.peak_tflops * tensor_peak_factor(r);
  r.pct_peak = peak > 0 ? 100.0 * r.tflops / peak : 0;
  r.bytes = bytes;
  r.gbs = s > 0 ? bytes / s / 1e9 : 0;
  r.pct_dram = d.dram_read_gbs > 0 ? 100.0 * r.gbs / d.dram_read_gbs : 0;
  if (r.op != "gemm") return;
  r.intensity = bytes > 0 ? r.flops() / bytes : 0;
  r.ridge = d.dram_read_gbs > 0 ? peak * 1e12 / (d.dram_read_gbs * 1e9) : 0;
  r.memory_bound = r.ridge > 0 && r.intensity < r.ridge;
}

Op op_from_name(const std::string& name) {
  if (name == "gemv") return Op::gemv;
  if (name == "reduce") return Op::reduce;
  if (name == "allgather_gemm") return Op::allgather_gemm;
  if (name == "gemm_reducescatter") return Op::gemm_reducescatter;
  return Op::gemm;
}

std::string case_name(const std::string& op, const Case& c) {
  if (op == "reduce") return std::string(dtype_name(c.dtype)) + " n=" + shape_name(op, c.shape);
  const std::string kind = op == "gemm" && c.kind != check::GemmKind::f32 ? std::string(" ") + check::gemm_kind_name(c.kind) : "";
  const std::string epi = op == "gemm" && c.epi.on ? " " + epi_name(c.epi) : "";
  return shape_name(op, c.shape) + " " + trans_name(op, c.trans) + kind + epi;
}

std::unique_ptr<Workload> new_workload(const Args& a, const std::string& op, const Case& c, std::ostream& err) {
  Session ses{a, Context{}, err, Stream(), nullptr};  // the stream serves the uploads, synchronized
  return make_workload(ses, op, c);
}

check::GemmShape gemm_shape(const Args& a, const Case& c) {
  check::GemmShape s;
  s.ta = c.trans.a;
  s.tb = c.trans.b;
  s.m = c.shape.m;
  s.n = c.shape.n;
  s.k = c.shape.k;
  s.alpha = a.alpha;
  s.beta = a.beta;
  return check::normalized(s);
}

std::vector<VariantInfo> select_variants(const std::vector<VariantInfo>& ladder, const std::vector<std::string>& wanted,
                                         const std::string& op, const std::string& flag) {
  // "auto" (what the library runs by default) is measured beside the rungs, after them.
  const VariantInfo auto_row{"auto", "what variant = \"auto\" dispatches to for the shape", -1, 0, false};
  if (wanted.empty()) {
    std::vector<VariantInfo> all = ladder;
    if (!ladder.empty()) all.push_back(auto_row);
    return all;
  }
  std::vector<bool> take(ladder.size(), false);
  bool take_auto = false;
  for (const std::string& w : wanted) {
    if (w == "auto" && !ladder.empty()) {
      take_auto = true;
      continue;
    }
    const bool numeric = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    bool found = false;
    for (size_t i = 0; i < ladder.size(); ++i) {
      if (numeric ? (w.size() < 10 && std::stoi(w) == ladder[i].rung) : w == ladder[i].name) {
        take[i] = true;
        found = true;
      }
    }
    if (!found) {
      std::string known;
      for (const auto& v : ladder) known += (known.empty() ? "" : ", ") + v.name;
      throw CliError(flag + ": unknown " + op + " rung '" + w + "' (known: " + (known.empty() ? "none yet" : known) +
                     "; see rungs list " + op + ")");
    }
  }
  std::vector<VariantInfo> out;
  for (size_t i = 0; i < ladder.size(); ++i)
    if (take[i]) out.push_back(ladder[i]);
  if (take_auto) out.push_back(auto_row);
  return out;
}

int exit_code(const std::vector<Result>& rows) {
  for (const Result& r : rows)
    if (r.status == Status::fail || r.status == Status::error) return 1;
  return 0;
}

int run_main(const std::vector<std::string>& args, const std::string& argv0, std::ostream& out, std::ostream& err) {
  try {
    const Args a = parse_args(args);
    switch (a.command) {
      case Command::help:
      case Command::none: out << help_text(a.help_for); return 0;
      case Command::version: out << "rungs " << RUNGS_VERSION << "\n"; return 0;
      case Command::list: return cmd_list(a, out);
      case Command::info: return cmd_info(a, out);
      case Command::bench:
      case Command::verify:
      case Command::tune: return cmd_run(a, argv0, out, err);
      case Command::profile: return cmd_profile(a, argv0, out, err);
    }
    return 0;
  } catch (const CliError& e) {
    err << "rungs: error: " << one_line(e.what()) << std::endl;
    return e.code();
  } catch (const Error& e) {
    // CUDA and cuBLAS failures exit 3; anything else the library rejects is a usage error.
    const std::string msg = e.what();
    const bool device_failure = msg.rfind("CUDA error", 0) == 0 || msg.rfind("cuBLAS error", 0) == 0;
    err << "rungs: error: " << one_line(msg) << std::endl;
    return device_failure ? 3 : 2;
  } catch (const std::bad_alloc&) {
    err << "rungs: error: out of host memory" << std::endl;
    return 3;
  } catch (const std::exception& e) {
    err << "rungs: error: " << one_line(e.what()) << std::endl;
    return 3;
  }
}

}  // namespace rungs::cli
