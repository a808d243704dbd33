// One definition of "correct" for reduce_sum: the data, the exact reference and the tolerances.
//
// The reference is exact: integers in int64 (i64 as uint64, wrapping like the API), floats in
// a fixed-point accumulator wide enough for every double (2304 bits in 32-bit digits), so the
// exact sum is known to 2^-104 of itself, whatever the cancellation, and combining the
// per-thread accumulators is exact too.
//
// Why these tolerances (u = 2^-24 for f32, 2^-53 for f64; S = sum|x|; ulp of the exact sum
// rounded to the type):
//  * plain rungs (the article's kernels sum in the input type, in any tree or strided order):
//    every partial sum is rounded once per add, n - 1 adds, each error at most u times a partial
//    sum that is at most S in magnitude, so |result - sum| <= (n - 1) u S (to first order; the
//    extra 1 ulp covers the higher-order term and a sum that is exactly representable). It is
//    loose by design (it is what any order guarantees) and near S at n ~ 2^24 in f32: the
//    `integers` pattern, where every order is exact, is what catches dropped or doubled
//    elements there.
//  * accurate rungs (and `auto`): what the API promises: 1 ulp + 2^-40 S (f32) / 2^-69 S (f64).
//    A sum of the floats in double over any tree of depth d errs by <= d 2^-53 S <= 2^-48 S for
//    n < 2^32; a compensated double sum by ~2 u^2 n S. The `cancellation` pattern (S ~ 2^20 n
//    in f32, 2^48 n in f64, |sum| ~ sqrt(n)) puts a plain pairwise tree ~100x and a plain loop
//    ~10^4x over the accurate bound at n = 2^20 (tests/cpu/test_gemv_reduce_check.cpp proves it,
//    and that double accumulation (f32) and a compensated sum (f64) pass).
#include "check/reduce_check.hpp"

#include "check/host_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>
#include <type_traits>

namespace rungs::check {

namespace {

using util::bits_at;
using util::hw_threads;
using util::parallel_chunks;
using util::signed_mag;
using util::unit;

int64_t fill_threads(int64_t n) { return std::min<int64_t>(hw_threads(), n / 65536 + 1); }

// An exact sum of doubles: 32-bit digits in int64 limbs, digit i weighing 2^(32 i - kBias).
// Every finite double is M 2^e with M < 2^53, e >= -1074, so it lands in three digits at bit
// e + kBias >= 14. The limbs absorb 2^30 additions between carry propagations.
class ExactSum {
 public:
  void add(double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    const bool neg = b >> 63;
    const int ef = static_cast<int>((b >> 52) & 0x7FF);
    uint64_t mant = b & ((uint64_t{1} << 52) - 1);
    if (ef == 0 && mant == 0) return;
    int e = -1074;
    if (ef != 0) mant |= uint64_t{1} << 52, e = ef - 1075;
    const int p = e + kBias, li = p / 32, sh = p % 32;
    const uint64_t rest = sh ? mant >> (32 - sh) : mant >> 32;
    const int64_t c0 = static_cast<int64_t>((mant << sh) & 0xFFFFFFFFu);
    const int64_t c1 = static_cast<int64_t>(rest & 0xFFFFFFFFu), c2 = static_cast<int64_t>(rest >> 32);
    if (neg) {
      d_[li] -= c0, d_[li + 1] -= c1, d_[li + 2] -= c2;
    } else {
      d_[li] += c0, d_[li + 1] += c1, d_[li + 2] += c2;
    }
    if (++pending_ >= (int64_t{1} << 30)) carry();
  }
  void merge(ExactSum o) {
    carry();
    o.carry();
    for (int i = 0; i < kLimbs; ++i) d_[i] += o.d_[i];
    carry();
  }
  // The sum as hi + lo, hi = the double nearest to it (ties aside).
  void to_double_double(double& hi, double& lo) {
    carry();
    const bool neg = d_[kLimbs - 1] < 0;
    if (neg) {
      for (auto& v : d_) v = -v;
      carry();
    }
    hi = 0, lo = 0;
    for (int i = kLimbs - 1; i >= 0; --i) {
      if (d_[i] == 0) continue;
      const double v = std::ldexp(static_cast<double>(d_[i]), 32 * i - kBias);  // exact (see add)
      const double s = hi + v, bv = s - hi, err = (hi - (s - bv)) + (v - bv);  // TwoSum
      hi = s;
      lo += err;
    }
    const double s = hi + lo;
    lo = lo - (s - hi);
    hi = s;
    if (neg) hi = -hi, lo = -lo;
  }

 private:
  static constexpr int kLimbs = 72, kBias = 1088;
  void carry() {
    for (int i = 0; i + 1 < kLimbs; ++i) {
      const int64_t c = d_[i] >> 32;  // floor division by 2^32
      d_[i] -= c * 4294967296LL;
      d_[i + 1] += c;
    }
    pending_ = 0;
  }
  int64_t d_[kLimbs] = {};
  int64_t pending_ = 0;
};

template <typename T>
int64_t int_sum(const T* p, int64_t lo, int64_t hi) {
  uint64_t s = 0;  // wraps modulo 2^64 (i64); exact for i32 (n < 2^32)
  for (int64_t i = lo; i < hi; ++i) s += static_cast<uint64_t>(static_cast<int64_t>(p[i]));
  return static_cast<int64_t>(s);
}

template <typename T>
void fill_pattern(std::vector<T>& v, DType dtype, int64_t n, uint64_t seed, ReducePattern p) {
  v.resize(static_cast<size_t>(n));
  const uint64_t stream = 10 + static_cast<uint64_t>(dtype);
  auto value = [&](int64_t i) -> T {
    const uint64_t r = bits_at(seed, stream, static_cast<uint64_t>(i));
    switch (p) {
      case ReducePattern::article:
        return static_cast<T>(i);  // i32: modulo 2^32 past INT32_MAX
      case ReducePattern::integers:
        return static_cast<T>(static_cast<int>(r % 17) - 8);
      case ReducePattern::random:
      case ReducePattern::cancellation:  // the small values between the pairs
        break;
    }
    if constexpr (std::is_same_v<T, int32_t>) {
      return p == ReducePattern::random ? static_cast<int32_t>(static_cast<uint32_t>(r >> 32))
                                        : static_cast<int32_t>(static_cast<int>(r % 17) - 8);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return p == ReducePattern::random ? static_cast<int64_t>(r) : static_cast<int64_t>(static_cast<int>(r % 17) - 8);
    } else {
      return static_cast<T>(signed_mag(r));
    }
  };
  parallel_chunks(n, fill_threads(n), [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) v[i] = value(i);
  });
  if (p != ReducePattern::cancellation) return;
  // Pairs +w, -w on the even positions, shuffled so a partner is nowhere near its pair.
  const int64_t pairs = ((n + 1) / 2) / 2;
  std::vector<T> big(static_cast<size_t>(2 * pairs));
  for (int64_t j = 0; j < pairs; ++j) {
    const uint64_t r = bits_at(seed, stream + 100, static_cast<uint64_t>(j));
    T w;
    if constexpr (std::is_same_v<T, int32_t>) {
      w = static_cast<int32_t>(r & ((uint64_t{1} << 30) - 1));
    } else if constexpr (std::is_same_v<T, int64_t>) {
      w = static_cast<int64_t>(r >> 2);
    } else {
      // k in [0, p], p = the type's precision: the largest pairs swallow a small value whole.
      const int p_bits = std::is_same_v<T, float> ? 24 : 53;
      w = static_cast<T>(std::ldexp(1.0 + unit(r), static_cast<int>((r & 0xFF) % (p_bits + 1))));
    }
    big[2 * j] = w;
    big[2 * j + 1] = static_cast<T>(-w);
  }
  for (int64_t j = 2 * pairs - 1; j > 0; --j) {  // Fisher-Yates
    const int64_t k = static_cast<int64_t>(bits_at(seed, stream + 200, static_cast<uint64_t>(j)) %
                                           static_cast<uint64_t>(j + 1));
    std::swap(big[j], big[k]);
  }
  for (int64_t j = 0; j < 2 * pairs; ++j) v[2 * j] = big[j];
}

// Round hi + lo to float correctly (a plain (float)hi can double-round at a float midpoint).
float round_to_float(double hi, double lo) {
  const float f = static_cast<float>(hi);
  if (!std::isfinite(f)) return f;
  float best = f;
  double best_err = std::fabs((static_cast<double>(f) - hi) - lo);
  for (float c : {std::nextafter(f, -std::numeric_limits<float>::infinity()),
                  std::nextafter(f, std::numeric_limits<float>::infinity())}) {
    if (!std::isfinite(c)) continue;
    const double err = std::fabs((static_cast<double>(c) - hi) - lo);
    if (err < best_err) best = c, best_err = err;
  }
  return best;
}

template <typename T>
double ulp_of(T x) {  // the gap above |x| (below it at the largest finite value)
  const T inf = std::numeric_limits<T>::infinity(), a = std::fabs(x);
  if (!std::isfinite(a)) return static_cast<double>(std::numeric_limits<T>::max()) -
                                static_cast<double>(std::nextafter(std::numeric_limits<T>::max(), T(0)));
  const T up = std::nextafter(a, inf);
  if (std::isinf(up)) return static_cast<double>(a) - static_cast<double>(std::nextafter(a, T(0)));
  return static_cast<double>(up) - static_cast<double>(a);
}

}  // namespace

const void* ReduceData::data() const {
  switch (dtype) {
    case DType::i32: return i32.data();
    case DType::i64: return i64.data();
    case DType::f32: return f32.data();
    case DType::f64: return f64.data();
  }
  return nullptr;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

size_t dtype_bytes(DType d) { return d == DType::i32 || d == DType::f32 ? 4 : 8; }

size_t ReduceData::bytes() const { return static_cast<size_t>(n) * dtype_bytes(dtype); }

ReduceData make_reduce_data(DType dtype, int64_t n, uint64_t seed, ReducePattern p) {
  ReduceData d;
  d.dtype = dtype;
  d.n = std::max<int64_t>(0, n);
  switch (dtype) {
    case DType::i32: fill_pattern(d.i32, dtype, d.n, seed, p); break;
    case DType::i64: fill_pattern(d.i64, dtype, d.n, seed, p); break;
    case DType::f32: fill_pattern(d.f32, dtype, d.n, seed, p); break;
    case DType::f64: fill_pattern(d.f64, dtype, d.n, seed, p); break;
  }
  return d;
}

ReduceExact reduce_reference(const ReduceData& d) {
  ReduceExact e;
  const int64_t n = d.n;
  const int64_t threads = n >= (int64_t{1} << 22) ? hw_threads() : 1;
  if (d.dtype == DType::i32 || d.dtype == DType::i64) {
    std::vector<int64_t> part(static_cast<size_t>(threads), 0);
    std::vector<double> abs_part(static_cast<size_t>(threads), 0.0);
    parallel_chunks(n, threads, [&](int64_t t, int64_t lo, int64_t hi) {
      double a = 0;
      if (d.dtype == DType::i32) {
        part[t] = int_sum(d.i32.data(), lo, hi);
        for (int64_t i = lo; i < hi; ++i) a += std::fabs(static_cast<double>(d.i32[i]));
      } else {
        part[t] = int_sum(d.i64.data(), lo, hi);
        for (int64_t i = lo; i < hi; ++i) a += std::fabs(static_cast<double>(d.i64[i]));
      }
      abs_part[t] = a;
    });
    uint64_t s = 0;
    for (int64_t t = 0; t < threads; ++t) s += static_cast<uint64_t>(part[t]), e.abs_sum += abs_part[t];
    e.isum = static_cast<int64_t>(s);
    return e;
  }
  struct Part {
    ExactSum sum;
    double abs_sum = 0;
    bool nan = false, pinf = false, ninf = false;
  };
  std::vector<Part> parts(static_cast<size_t>(threads));
  parallel_chunks(n, threads, [&](int64_t t, int64_t lo, int64_t hi) {
    Part& p = parts[t];
    for (int64_t i = lo; i < hi; ++i) {
      const double x = d.dtype == DType::f32 ? static_cast<double>(d.f32[i]) : d.f64[i];
      if (std::isfinite(x)) {
        p.sum.add(x);
        p.abs_sum += std::fabs(x);
      } else if (std::isnan(x)) {
        p.nan = true;
      } else if (x > 0) {
        p.pinf = true;
      } else {
        p.ninf = true;
      }
    }
  });
  ExactSum total;
  for (auto& p : parts) {
    total.merge(p.sum);
    e.abs_sum += p.abs_sum;
    e.has_nan |= p.nan, e.pos_inf |= p.pinf, e.neg_inf |= p.ninf;
  }
  total.to_double_double(e.hi, e.lo);
  return e;
}

double reduce_tolerance(const ReduceData& d, const ReduceExact& e, bool accurate) {
  if (d.dtype == DType::i32 || d.dtype == DType::i64) return 0.0;
  const bool f32 = d.dtype == DType::f32;
  const double ulp = f32 ? ulp_of(round_to_float(e.hi, e.lo)) : ulp_of(e.hi);
  const double u = f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double rel = accurate ? std::ldexp(1.0, f32 ? -40 : -69) : static_cast<double>(std::max<int64_t>(0, d.n - 1)) * u;
  return ulp + rel * e.abs_sum;
}

ReduceErrors compare_reduce(const ReduceData& d, const ReduceExact& e, const void* result, bool accurate) {
  ReduceErrors r;
  std::ostringstream why;
  if (d.dtype == DType::i32 || d.dtype == DType::i64) {
    int64_t got;
    std::memcpy(&got, result, sizeof got);
    const int64_t diff = static_cast<int64_t>(static_cast<uint64_t>(got) - static_cast<uint64_t>(e.isum));
    r.abs_err = std::fabs(static_cast<double>(diff));
    r.rel_err = e.isum != 0 ? r.abs_err / std::fabs(static_cast<double>(e.isum))
                            : (diff != 0 ? std::numeric_limits<double>::infinity() : 0.0);
    r.bound = 0;
    r.bound_ratio = diff != 0 ? std::numeric_limits<double>::infinity() : 0.0;
    r.pass = got == e.isum;
    if (!r.pass)
      why << dtype_name(d.dtype) << " sum of " << d.n << " elements is " << got << ", exact " << e.isum
          << " (off by " << diff << ")";
    r.reason = why.str();
    return r;
  }
  double v;
  if (d.dtype == DType::f32) {
    float f;
    std::memcpy(&f, result, sizeof f);
    v = f;
  } else {
    std::memcpy(&v, result, sizeof v);
  }
  const double inf = std::numeric_limits<double>::infinity();
  r.bound = reduce_tolerance(d, e, accurate);
  auto special = [&](bool ok, const char* want) {
    r.pass = ok;
    r.abs_err = ok ? 0.0 : inf;
    r.rel_err = r.abs_err;
    r.bound_ratio = r.abs_err;
    if (!ok) why << dtype_name(d.dtype) << " sum of " << d.n << " elements is " << v << ", expected " << want;
    r.reason = why.str();
    return r;
  };
  if (e.has_nan) return special(std::isnan(v), "NaN (the input holds a NaN)");
  if (e.pos_inf && e.neg_inf) return special(std::isnan(v), "NaN (the input holds +Inf and -Inf)");
  if (e.pos_inf) return special(v == inf, "+Inf (the input holds +Inf)");
  if (e.neg_inf) return special(v == -inf, "-Inf (the input holds -Inf)");
  const double rounded = d.dtype == DType::f32 ? static_cast<double>(round_to_float(e.hi, e.lo)) : e.hi;
  if (std::isinf(rounded))  // the exact sum of finite values overflows the type
    return special(v == rounded, rounded > 0 ? "+Inf (the exact sum overflows)" : "-Inf (the exact sum overflows)");
  if (!std::isfinite(v)) {
    std::ostringstream want;
    want << "a finite sum near " << e.hi << " (the input is finite)";
    return special(false, want.str().c_str());
  }
  r.abs_err = std::fabs((v - e.hi) - e.lo);
  r.rel_err = e.hi != 0 ? r.abs_err / std::fabs(e.hi) : (r.abs_err > 0 ? inf : 0.0);
  r.bound_ratio = r.bound > 0 ? r.abs_err / r.bound : (r.abs_err > 0 ? inf : 0.0);
  r.pass = r.abs_err <= r.bound;
  if (!r.pass) {
    why.precision(17);
    why << dtype_name(d.dtype) << " sum of " << d.n << " elements is " << v << ", exact " << e.hi << " + " << e.lo
        << ": error " << r.abs_err << " > " << (accurate ? "accurate" : "plain") << " bound " << r.bound << " ("
        << r.bound_ratio << "x; sum|x| = " << e.abs_sum << ")";
  }
  r.reason = why.str();
  return r;
}

}  // namespace rungs::check
