// The piece order of gemm_host (see schedule.hpp); pure functions.
#include "host/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace rungs::host {

std::vector<Range> split(int64_t total, int parts, int64_t align) {
  parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(parts, total)));
  if (align < 1 || total / parts < align) align = 1;
  std::vector<Range> out;
  int64_t lo = 0;
  for (int i = 0; i < parts; ++i) {
    int64_t hi = total;
    if (i + 1 < parts) {  // an aligned interior boundary, never an empty range on either side
      hi = std::max(lo + 1, total * (i + 1) / parts / align * align);
      hi = std::min(hi, total - (parts - 1 - i));
    }
    out.push_back({lo, hi});
    lo = hi;
  }
  return out;
}

Plan choose_plan(int64_t m, int64_t n, int64_t k, double compute_s, double transfer_s, bool a_transposed,
                 bool b_transposed, int64_t min_width, int sms) {
  auto panels = [](int64_t d, int64_t least) { return static_cast<int>(std::clamp<int64_t>(d / least, 1, 16)); };
  const bool heavy = compute_s >= 0.5 * transfer_s;
  int64_t min_rows = a_transposed ? min_width : 128;
  if (compute_s >= transfer_s && sms > 0)
    min_rows = std::max<int64_t>(min_rows, 128 * std::max<int64_t>(1, sms / ((n + 127) / 128)));
  Plan p;
  p.row_panels = panels(m, min_rows);
  // B stored k x n goes in whole rows (one column panel): measured faster than column panels of
  // 2 KiB rows at 4096^3 and 8192^3, pinned (docs/gemm_host.md).
  p.col_panels = b_transposed ? panels(n, min_width) : 1;
  if (k >= 256) {
    p.kmajor_fraction = heavy ? 0.5 : 0.25;
    p.kmajor_chunks = heavy ? 2 : 1;
    const bool k_is_width = !a_transposed || b_transposed;  // a chunk of k is a 2D copy's row
    if (k_is_width) {
      const int64_t fit = static_cast<int64_t>(p.kmajor_fraction * static_cast<double>(k)) / min_width;
      p.kmajor_chunks = static_cast<int>(std::min<int64_t>(p.kmajor_chunks, fit));
      if (p.kmajor_chunks == 0) p.kmajor_fraction = 0;
    }
  }
  return p;
}

Schedule make_schedule(int64_t m, int64_t n, int64_t k, const Plan& plan, bool reads_c) {
  Schedule s;
  constexpr int64_t kAlign = 32;  // 128-byte boundaries keep the device rungs' vector paths
  s.rows = split(m, plan.row_panels, kAlign);
  s.cols = split(n, plan.col_panels, kAlign);
  int64_t k1 = 0;
  if (plan.kmajor_chunks > 0 && plan.kmajor_fraction > 0) {
    k1 = static_cast<int64_t>(std::llround(plan.kmajor_fraction * static_cast<double>(k))) / kAlign * kAlign;
    k1 = std::clamp<int64_t>(k1, 0, k - 1);  // phase 2 keeps at least one k
  }
  if (k1 > 0)
    for (const Range& r : split(k1, plan.kmajor_chunks, kAlign)) s.chunks.push_back(r);
  s.chunks.push_back({k1, k});

  const int p = static_cast<int>(s.rows.size()), q = static_cast<int>(s.cols.size());
  const int last = static_cast<int>(s.chunks.size()) - 1;
  // Phase 1's pieces of op(A): groups of g consecutive row panels.
  const int group = plan.kmajor_row_panels > 0 && plan.kmajor_row_panels < p
                        ? (p + plan.kmajor_row_panels - 1) / plan.kmajor_row_panels
                        : 1;
  for (int c = 0; c <= last; ++c) {
    const int g = c < last ? group : 1, pa = (p + g - 1) / g;  // pieces of op(A) in this chunk
    int64_t rows_hi = 0, cols_hi = 0;  // C's rows and columns whose pieces of this chunk are sent
    for (int i = 0; i < std::max(pa, q); ++i) {
      for (int is_a = 1; is_a >= 0; --is_a) {
        if (i >= (is_a ? pa : q)) continue;
        Step st;
        const int first = is_a ? i * g : i, panels = is_a ? std::min(p, (i + 1) * g) - first : 1;
        st.piece = {is_a == 1, first, c, panels};
        st.upload_c = reads_c && is_a && c == 0;
        Product pr;
        pr.k = s.chunks[c];
        pr.first_k = c == 0;
        if (is_a) {
          pr.rows = s.piece_rows(st.piece);
          rows_hi = pr.rows.hi;
          pr.cols = {0, cols_hi};
        } else {
          pr.cols = s.cols[i];
          cols_hi = pr.cols.hi;
          pr.rows = {0, rows_hi};
        }
        if (pr.rows.size() > 0 && pr.cols.size() > 0) {
          st.products.push_back(pr);
          if (c == last) st.finished.push_back(pr);
        }
        s.steps.push_back(st);
      }
    }
  }
  return s;
}

std::vector<Job> make_jobs(int64_t m, int64_t n, int64_t k, double budget) {
  auto fits = [&](double bm, double bn, double bk) { return bm * bk + bk * bn + bm * bn <= budget; };
  int64_t bm = m, bn = n, bk = k;
  if (!fits(static_cast<double>(m), static_cast<double>(n), static_cast<double>(k))) {
    for (;;) {
      // Square blocks s x s with their k: 2 s bk + s^2 <= budget; then the other side widened.
      const double kk = static_cast<double>(bk);
      const int64_t s = static_cast<int64_t>(std::floor(-kk + std::sqrt(kk * kk + budget)));
      bm = std::min(m, s);
      bn = std::min(n, s);
      if (bm == m && bn < n) bn = std::min<int64_t>(n, static_cast<int64_t>((budget - kk * bm) / (kk + bm)));
      if (bn == n && bm < m) bm = std::min<int64_t>(m, static_cast<int64_t>((budget - kk * bn) / (kk + bn)));
      if (bm >= std::min<int64_t>(m, 32) && bn >= std::min<int64_t>(n, 32) &&
          fits(static_cast<double>(bm), static_cast<double>(bn), kk))
        break;
      if (bk == 1) return {};
      bk = (bk + 1) / 2;
    }
  }
  std::vector<Job> jobs;
  for (int64_t i = 0; i < m; i += bm)
    for (int64_t j = 0; j < n; j += bn)
      for (int64_t l = 0; l < k; l += bk)
        jobs.push_back({{i, std::min(m, i + bm)}, {j, std::min(n, j + bn)}, {l, std::min(k, l + bk)}, l == 0,
                        l + bk >= k});
  return jobs;
}

}  // namespace rungs::host
