#include "check/epilogue_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rungs::check {

namespace {
constexpr double kU32 = 1.0 / 16777216.0;  // fp32's unit roundoff, 2^-24
constexpr double kSlope = 1.13;            // the activations' largest |act'(x)|
constexpr double kActUlps = 4 * kU32;      // fp32 evaluation of tanh / exp and the products around them

void note(EpiErrors& e, int64_t row, int64_t col, double ref, double got, double bound) {
  ++e.bad;
  if (!e.first.empty()) return;
  std::ostringstream os;
  os << "C[" << row << "][" << col << "] = " << got << ", fp64 reference " << ref << ", bound " << bound;
  e.first = os.str();
}
}  // namespace

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::silu: return "silu";
  }
  return "?";
}

double activate_ref(double x, Activation act) {
  switch (act) {
    case Activation::relu: return x > 0 ? x : 0.0;
    case Activation::gelu: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::none: break;
  }
  return x;
}

EpiTolerances epilogue_tolerances(GemmKind kind, int64_t k, bool fp8_out) {
  EpiTolerances t{0, 0, 0, 0};
  const GemmKind out = c_kind(kind);  // fp8: bf16
  t.gamma_p = kind == GemmKind::fp8 ? fp8_elementwise_gamma(k, true) : elementwise_gamma(k, kind);
  t.eta_p = output_eta(out);
  if (!fp8_out && is_16bit(out))
    t.uo = out == GemmKind::f16 ? 1.0 / 2048 : 1.0 / 256, t.eta_o = output_eta(out);
  return t;
}

EpiReference epilogue_reference(const GemmReference& p, int64_t n, bool gated, const std::vector<double>& bias,
                                Activation act, double beta, const std::vector<float>& C0, int64_t ldc,
                                double gamma_p, double eta_p, double uo, double eta_o) {
  EpiReference r;
  r.rows = p.rows;
  const int64_t np = gated ? 2 * n : n;
  const size_t cells = p.rows.size() * static_cast<size_t>(n);
  r.e.resize(cells), r.ref.resize(cells), r.bound.resize(cells);
  const double slope = act == Activation::none ? 1.0 : kSlope;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t pi = i * static_cast<size_t>(np) + static_cast<size_t>(j);
      // x = P + bias, its error: the product's bound and the fp32 add.
      const double x = p.ref[pi] + (bias.empty() ? 0.0 : bias[static_cast<size_t>(j)]);
      const double ex = gamma_p * p.mag[pi] + (p.mag[pi] > 0 ? eta_p : 0.0) + kU32 * std::fabs(x);
      const double a = activate_ref(x, act);
      const double ea = slope * ex + (act == Activation::none ? 0.0 : kActUlps * std::fabs(a) + 1e-30);
      double e = a, ee = ea;
      if (gated) {
        const size_t ui = pi + static_cast<size_t>(n);
        const double u = p.ref[ui] + (bias.empty() ? 0.0 : bias[static_cast<size_t>(n + j)]);
        const double eu = gamma_p * p.mag[ui] + (p.mag[ui] > 0 ? eta_p : 0.0) + kU32 * std::fabs(u);
        e = a * u;
        ee = std::fabs(a) * eu + std::fabs(u) * ea + ea * eu + kU32 * std::fabs(e);
      }
      const double c0 = beta != 0.0 ? beta * static_cast<double>(C0[static_cast<size_t>(p.rows[i] * ldc + j)]) : 0.0;
      const double ref = e + c0;
      const size_t o = i * static_cast<size_t>(n) + static_cast<size_t>(j);
      r.e[o] = e, r.ref[o] = ref;
      r.bound[o] = ee + 2 * kU32 * (std::fabs(c0) + std::fabs(ref)) + uo * std::fabs(ref) + eta_o;
    }
  }
  return r;
}

EpiErrors compare_epilogue(const EpiReference& r, const float* C, int64_t n, int64_t ldc) {
  EpiErrors e;
  for (size_t i = 0; i < r.rows.size(); ++i)
    for (int64_t j = 0; j < n; ++j) {
      const size_t o = i * static_cast<size_t>(n) + static_cast<size_t>(j);
      const double got = C[r.rows[i] * ldc + j], ref = r.ref[o], bound = r.bound[o];
      const double err = std::fabs(got - ref);
      if (!std::isfinite(got) || !(err <= bound)) {
        note(e, r.rows[i], j, ref, got, bound);
        continue;
      }
      if (bound > 0) e.max_ratio = std::max(e.max_ratio, err / bound);
    }
  return e;
}

EpiErrors compare_epilogue_fp8(const EpiReference& r, const uint8_t* C, int64_t n, int64_t ldc,
                               const float* scales) {
  EpiErrors e;
  const int64_t blocks = (n + 127) / 128;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const int64_t row = r.rows[i];
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t j0 = 128 * b, j1 = std::min(n, j0 + 128);
      double amax = 0, bmax = 0;
      for (int64_t j = j0; j < j1; ++j) {
        const size_t o = i * static_cast<size_t>(n) + static_cast<size_t>(j);
        amax = std::max(amax, std::fabs(r.e[o])), bmax = std::max(bmax, r.bound[o]);
      }
      const double s = scales[row * blocks + b];
      const double s_ref = amax / 448.0, s_tol = 0.01 * s_ref + bmax / 448.0;
      const bool zero_block = amax == 0 && bmax == 0;
      if (zero_block ? s != 1.0 : !(std::fabs(s - s_ref) <= s_tol)) {
        ++e.bad;
        if (e.first.empty()) {
          std::ostringstream os;
          os << "c_scales[" << row << "][" << b << "] = " << s << ", fp64 reference " << (zero_block ? 1.0 : s_ref)
             << " (max |E| / 448), tolerance " << s_tol;
          e.first = os.str();
        }
        continue;
      }
      for (int64_t j = j0; j < j1; ++j) {
        const size_t o = i * static_cast<size_t>(n) + static_cast<size_t>(j);
        const double got = static_cast<double>(fp8_to_float(C[row * ldc + j], Fp8Format::e4m3)) * s;
        const double ref = r.e[o], bound = r.bound[o] + 0.0625 * (std::fabs(ref) + r.bound[o]) + s / 1024.0;
        const double err = std::fabs(got - ref);
        if (!std::isfinite(got) || !(err <= bound)) {
          note(e, row, j, ref, got, bound);
          continue;
        }
        if (bound > 0) e.max_ratio = std::max(e.max_ratio, err / bound);
      }
    }
  }
  return e;
}

}  // namespace rungs::check
