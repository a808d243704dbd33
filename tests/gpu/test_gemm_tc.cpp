// The tensor-core gemm kinds (f16, bf16, and float with Math::tf32 / Math::tf32x3) through the
// public API, against the fp64 reference with the tolerances of check::compare_gemm(..., kind).
// The cases are every (rung, kind) that variants(Op::gemm) says the rung does, plus `auto` for
// each kind: a new tensor-core rung is tested without editing this file. Inputs are fresh random
// data (rounded to the format for f16/bf16, so the reference sees what the GPU sees); C is
// poisoned with NaN when beta == 0 and its ld padding holds NaN that must survive.
#include <rungs/rungs.hpp>

#include "check/gemm_check.hpp"
#include "gpu_env.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

namespace rungs::test {
namespace {

using check::GemmKind;

struct TcParam {
  std::string variant;
  GemmKind kind;
};
void PrintTo(const TcParam& p, std::ostream* os) { *os << p.variant << " " << check::gemm_kind_name(p.kind); }

std::vector<TcParam> tc_params() {
  std::vector<TcParam> out;
  for (GemmKind kind : {GemmKind::f16, GemmKind::bf16, GemmKind::tf32, GemmKind::tf32x3}) {
    out.push_back({"auto", kind});
    for (const auto& v : variants(Op::gemm)) {
      const std::string types = " " + v.types + " ";
      if (types.find(std::string(" ") + check::gemm_kind_name(kind) + " ") != std::string::npos)
        out.push_back({v.name, kind});
    }
  }
  return out;
}

// Raw device bytes with `offset` leading elements of `elem` bytes (offset 1: a misaligned pointer)
// and `guard` elements after the n, all bits set (NaN) from the start: guard_written() counts the
// guard bytes a call changed (a store past the end of C, e.g. a tile's rows beyond m).
class DeviceBytes {
 public:
  DeviceBytes(size_t n, size_t elem, size_t offset = 0, size_t guard = 0)
      : n_(n), elem_(elem), offset_(offset), guard_(guard) {
    const size_t bytes = (n + offset + guard + 1) * elem;
    if (cudaMalloc(&base_, bytes) != cudaSuccess) base_ = nullptr;
    if (base_ && guard) {
      EXPECT_EQ(cudaSuccess, cudaMemset(base_, 0xFF, bytes));
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));
    }
  }
  int64_t guard_written() {
    if (!base_ || guard_ == 0) return 0;
    std::string g(guard_ * elem_, '\0');
    EXPECT_EQ(cudaSuccess, cudaMemcpy(&g[0], as<char>() + n_ * elem_, g.size(), cudaMemcpyDeviceToHost));
    return static_cast<int64_t>(g.size() - std::count(g.begin(), g.end(), '\xFF'));
  }
  ~DeviceBytes() { cudaFree(base_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  template <typename T>
  T* as() {
    return base_ ? reinterpret_cast<T*>(static_cast<char*>(base_) + offset_ * elem_) : nullptr;
  }
  void upload(const void* h) {
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(as<char>(), h, n_ * elem_, cudaMemcpyHostToDevice));
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));  // see DeviceFloats (gpu_env.hpp)
    }
  }
  void download(void* h) {
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(h, as<char>(), n_ * elem_, cudaMemcpyDeviceToHost));
    }
  }
  void poison() {  // all bits set: NaN as float, __half and __nv_bfloat16
    if (n_) {
      EXPECT_EQ(cudaSuccess, cudaMemset(as<char>(), 0xFF, n_ * elem_));
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(cudaStreamLegacy));
    }
  }

 private:
  void* base_ = nullptr;
  size_t n_, elem_, offset_, guard_;
};

struct Outcome {
  bool filtered = false, skipped = false;
  std::string skip_reason;
  check::GemmErrors err;
  std::vector<float> C;
};

// gemm of `variant` in `kind` on the device buffers (holding elements of the kind), on `stream`.
void call_gemm(const std::string& variant, GemmKind kind, const check::GemmShape& s, DeviceBytes& A, DeviceBytes& B,
               DeviceBytes& C, cudaStream_t stream) {
  Options opts;
  opts.variant = variant;
  opts.stream = stream;
  opts.math = check::math_of(kind);
  if (kind == GemmKind::f16)
    gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.as<__half>(), s.lda, B.as<__half>(), s.ldb, s.beta, C.as<__half>(), s.ldc,
         opts);
  else if (kind == GemmKind::bf16)
    gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.as<__nv_bfloat16>(), s.lda, B.as<__nv_bfloat16>(), s.ldb, s.beta,
         C.as<__nv_bfloat16>(), s.ldc, opts);
  else
    gemm(s.ta, s.tb, s.m, s.n, s.k, s.alpha, A.as<float>(), s.lda, B.as<float>(), s.ldb, s.beta, C.as<float>(), s.ldc,
         opts);
}

// Uploads d's inputs (converted to the kind) into A and B, and C0 into C when beta != 0, else
// poisons C.
void upload_inputs(GemmKind kind, const check::GemmShape& s, const check::GemmData& d, DeviceBytes& A, DeviceBytes& B,
                   DeviceBytes& C) {
  if (check::is_16bit(kind)) {
    A.upload(check::to_16bit(d.A, kind).data()), B.upload(check::to_16bit(d.B, kind).data());
    if (s.beta != 0.0f) C.upload(check::to_16bit(d.C0, kind).data());
  } else {
    A.upload(d.A.data()), B.upload(d.B.data());
    if (s.beta != 0.0f) C.upload(d.C0.data());
  }
  if (s.beta == 0.0f) C.poison();
}

// C as floats.
std::vector<float> download_c(GemmKind kind, DeviceBytes& C, size_t n) {
  std::vector<float> out(n);
  if (check::is_16bit(kind)) {
    std::vector<uint16_t> raw(n);
    C.download(raw.data());
    out = check::from_16bit(raw, kind);
  } else {
    C.download(out.data());
  }
  return out;
}

// One call of `variant` in `kind` on the data d (already rounded for the kind). C is poisoned
// when beta == 0, else set to C0.
Outcome run_on(const std::string& variant, GemmKind kind, const check::GemmShape& s, const check::GemmData& d,
               size_t misalign, cudaStream_t stream = nullptr) {
  Outcome o;
  const bool h16 = check::is_16bit(kind);
  const size_t elem = h16 ? 2 : 4;
  // C's guard: 128 rows of ldc past the end (a tile's rows beyond m) and a tile's width.
  DeviceBytes A(d.A.size(), elem, misalign), B(d.B.size(), elem, misalign),
      C(d.C0.size(), elem, misalign, static_cast<size_t>(128 * s.ldc + 256));
  upload_inputs(kind, s, d, A, B, C);
  try {
    call_gemm(variant, kind, s, A, B, C, stream);
  } catch (const Unsupported& e) {
    o.skipped = true;
    o.skip_reason = e.what();
    return o;
  }
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  EXPECT_EQ(C.guard_written(), 0) << "wrote past the end of C";
  o.C = download_c(kind, C, d.C0.size());
  return o;
}

// One case on fresh random data, checked against the reference. A case that ran the rung (the
// library scales C itself when k == 0 or alpha == 0) is recorded for the every-rung check.
Outcome run_case(const TcParam& p, check::GemmShape s, uint64_t seed, size_t misalign = 0,
                 cudaStream_t stream = nullptr) {
  s = check::normalized(s);
  if (exceeds_test_limit(static_cast<double>(s.m) * s.n * s.k)) {
    Outcome o;
    o.filtered = true;
    return o;
  }
  check::GemmData d = check::make_gemm_data(s, seed);
  check::round_inputs(d, p.kind);
  Outcome o = run_on(p.variant, p.kind, s, d, misalign, stream);
  if (o.skipped) return o;
  o.err = check::compare_gemm(s, check::gemm_reference(s, d), o.C.data(), p.kind);
  // The padding of C (columns n..ldc) held NaN before the call.
  EXPECT_EQ(check::padding_written(s, o.C.data()), 0) << "wrote into the ld padding of C";
  if (s.m > 0 && s.n > 0 && s.k > 0 && s.alpha != 0.0f) record_ran("gemm", p.variant);
  return o;
}

class GemmTc : public ::testing::TestWithParam<TcParam> {
 protected:
  void SetUp() override { RUNGS_REQUIRE_GPU(); }
  // Runs one case and counts it in tally_ (ran, left out by the size limit, or refused by the
  // rung); RUNGS_FINISH(tally_) ends each test.
  void check_case(check::GemmShape s, uint64_t seed, size_t misalign = 0) {
    const Outcome o = run_case(GetParam(), s, seed, misalign);
    if (!tally_.count(o)) return;
    EXPECT_TRUE(o.err.pass) << GetParam().variant << " " << check::gemm_kind_name(GetParam().kind) << " "
                            << check::describe(s) << " misalign " << misalign << ": " << o.err.reason
                            << " (normwise " << o.err.normwise << ", max_rel " << o.err.max_rel << ")";
  }
  // Captures the call into a CUDA graph and replays it on fresh inputs (the seed advanced for each),
  // each replay checked against the fp64 reference; counted in tally_ like check_case.
  void captured_case(const check::GemmShape& s, uint64_t& seed) {
    const TcParam& p = GetParam();
    const size_t elem = check::is_16bit(p.kind) ? 2 : 4;
    check::GemmData d = check::make_gemm_data(s, seed);
    DeviceBytes A(d.A.size(), elem), B(d.B.size(), elem), C(d.C0.size(), elem);
    capture_and_replay(
        tally_, [&](cudaStream_t st) { call_gemm(p.variant, p.kind, s, A, B, C, st); },
        [&](int) {
          d = check::make_gemm_data(s, ++seed);
          check::round_inputs(d, p.kind);
          upload_inputs(p.kind, s, d, A, B, C);
        },
        [&](int rep) {
          const std::vector<float> out = download_c(p.kind, C, d.C0.size());
          const auto err = check::compare_gemm(s, check::gemm_reference(s, d), out.data(), p.kind);
          EXPECT_TRUE(err.pass) << p.variant << " " << check::gemm_kind_name(p.kind) << " " << check::describe(s)
                                << " replay " << rep << ": " << err.reason;
        });
  }
  Tally tally_;
};

const Trans kT[2] = {Trans::N, Trans::T};

check::GemmShape shape(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k) {
  check::GemmShape s;
  s.ta = ta, s.tb = tb, s.m = m, s.n = n, s.k = k;
  return s;
}

// s with every ld rounded up to 32 bytes (16 16-bit elements, 8 floats): rows TMA can address.
check::GemmShape aligned_rows(check::GemmShape s, GemmKind kind) {
  s = check::normalized(s);
  const int64_t align = check::is_16bit(kind) ? 16 : 8;
  auto up = [&](int64_t x) { return (x + align - 1) / align * align; };
  s.lda = up(s.lda), s.ldb = up(s.ldb), s.ldc = up(s.ldc);
  return s;
}

TEST_P(GemmTc, OddShapesAllTransposes) {
  const int64_t shapes[][3] = {{1, 1, 1},   {127, 129, 65}, {1000, 13, 777}, {513, 1025, 257}, {33, 1, 2049},
                               {1, 77, 300}, {5, 7, 3},     {200, 264, 9},   {129, 257, 31}};
  uint64_t seed = 1100;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (const auto& sh : shapes) check_case(shape(ta, tb, sh[0], sh[1], sh[2]), ++seed);
  RUNGS_FINISH(tally_);
}

TEST_P(GemmTc, TileMultiplesAndNeighbours) {
  const int64_t shapes[][3] = {{512, 512, 512}, {511, 513, 515}, {256, 384, 1024}, {1024, 1024, 1024}};
  uint64_t seed = 1200;
  for (const auto& sh : shapes)
    for (Trans ta : kT)
      for (Trans tb : kT) {
        if (sh[0] == 1024 && (ta != Trans::N || tb != Trans::N)) continue;
        check_case(shape(ta, tb, sh[0], sh[1], sh[2]), ++seed);
      }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmTc, PaddedLeadingDimensions) {
  uint64_t seed = 1300;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (int pad : {1, 3, 8, 37}) {
        check::GemmShape s = check::normalized(shape(ta, tb, 131, 140, 96));
        s.lda += pad, s.ldb += pad, s.ldc += pad;
        check_case(s, ++seed);
      }
  RUNGS_FINISH(tally_);
}

// Ragged m, n, k with every row 32-byte aligned (ld rounded up to 16 elements, 8 for float): the
// TMA rungs take their fast path here (the odd shapes above mostly fall back), so this is where
// their out-of-range boxes, partial k tiles and masked stores are checked. The ld padding of A
// and B holds NaN: a box that reads past a row's end shows up in the result.
TEST_P(GemmTc, RaggedShapesAlignedRows) {
  const int64_t shapes[][3] = {{1, 1, 1},      {127, 129, 65}, {1000, 13, 777}, {513, 1025, 257},
                               {33, 1, 2049},  {200, 264, 9},  {129, 257, 31},  {300, 700, 1030},
                               {64, 256, 64}, {65, 257, 63}};
  uint64_t seed = 1350;
  for (Trans ta : kT)
    for (Trans tb : kT)
      for (const auto& sh : shapes)
        check_case(aligned_rows(shape(ta, tb, sh[0], sh[1], sh[2]), GetParam().kind), ++seed);
  RUNGS_FINISH(tally_);
}

// More tiles than the persistent rungs have blocks (2100 x 2052: 9 x 9 clusters of two 128 x 256
// tiles against the H100's 66 clusters): each block runs several tiles, so a rung that reuses its
// shared memory across tiles (the C staging buffer of the TMA-store epilogue, the pipeline's
// stages and phases) is checked past its first tile, with rows aligned (TMA paths) and tight.
TEST_P(GemmTc, ManyTilesPerBlock) {
  uint64_t seed = 1380;
  for (Trans ta : kT)
    for (bool aligned : {true, false}) {
      const check::GemmShape s = check::normalized(shape(ta, Trans::N, 2100, 2052, 72));
      check_case(aligned ? aligned_rows(s, GetParam().kind) : s, ++seed);
    }
  RUNGS_FINISH(tally_);
}

// Stream-K's tails (rung 19): more cluster tiles than clusters, not a multiple of them, and k of
// several k tiles, so tiles are cut between two clusters (one leaves its partial sum, the other
// adds it and stores the tile): 2100 x 2052 is 81 cluster tiles (all split, 66 clusters on the
// H100), 4100 x 2052 is 153 (66 whole, 87 split). beta != 0 takes the direct epilogue, which
// reads C: only the tile's owner may. Every rung runs these shapes; the split shows only in 19.
TEST_P(GemmTc, StreamKTails) {
  uint64_t seed = 1390;
  for (Trans ta : kT) check_case(aligned_rows(shape(ta, Trans::N, 2100, 2052, 200), GetParam().kind), ++seed);
  check::GemmShape s = shape(Trans::N, Trans::T, 2100, 2052, 200);
  s.alpha = 1.5f, s.beta = -0.5f;
  check_case(s, ++seed);
  check_case(aligned_rows(shape(Trans::N, Trans::N, 4100, 2052, 136), GetParam().kind), ++seed);
  RUNGS_FINISH(tally_);
}

// A narrow last tile column (n % 256 in 1 .. 64) with more narrow tiles than rung 23's deal gives
// the clusters that run one full tile fewer (3200 x 1288 on the H100's 66 clusters: 13 cluster
// rows, 65 full and 13 narrow cluster tiles; cluster 65 takes two, the rest go round-robin), k of
// an odd number of k tiles (136: rung 23 pairs them for the narrow tiles, the last alone) and an
// even one (72 for 16 bits, 128 below), B n-contiguous and k-contiguous, beta != 0 once, rows past m,
// and tf32's register path (A m-contiguous: nn, whose swapped product has the narrow column, and tt).
TEST_P(GemmTc, NarrowLastColumn) {
  uint64_t seed = 1395;
  for (Trans tb : kT) check_case(aligned_rows(shape(Trans::N, tb, 3200, 1288, 136), GetParam().kind), ++seed);
  check::GemmShape s = aligned_rows(shape(Trans::T, Trans::N, 3100, 1288, 72), GetParam().kind);
  s.alpha = -0.5f, s.beta = 2.0f;
  check_case(s, ++seed);
  check_case(shape(Trans::N, Trans::N, 3199, 1287, 201), ++seed);  // unaligned rows: copies, storer warps
  for (Trans tb : kT)  // small enough for the sanitizers: a pair and an odd last k tile, narrow column
    for (const auto& sh : {std::array<int64_t, 3>{64, 264, 192}, std::array<int64_t, 3>{120, 260, 128}})
      check_case(aligned_rows(shape(Trans::N, tb, sh[0], sh[1], sh[2]), GetParam().kind), ++seed);
  // tf32 through registers (nn swapped, its narrow column is m's 264; tt), 3 k tiles: a pair, then one.
  for (Trans t : kT) check_case(aligned_rows(shape(t, t, 264, 64, 72), GetParam().kind), ++seed);
  RUNGS_FINISH(tally_);
}

// An odd number of 128-row tile rows: rung 23 pairs the last row's tiles side by side (a short pair
// per two tile columns, the last one alone where they are odd in number) where that takes a round off
// the longest cluster: 300 rows are 3 tile rows, and 8704 columns 34 tile columns, so 68 cluster tiles
// (2 rounds on the H100's 66 clusters) become 34 + 17 = 51 (1 round). tf32 nn runs C^T = B^T A^T, so
// there its n is the kernel's m. k = 1 keeps the first cases under the sanitizers' size cap. Every
// rung runs these shapes.
TEST_P(GemmTc, ShortLastRow) {
  uint64_t seed = 1420;
  for (Trans tb : kT) check_case(aligned_rows(shape(Trans::N, tb, 300, 8704, 1), GetParam().kind), ++seed);
  check_case(aligned_rows(shape(Trans::N, Trans::N, 8704, 300, 1), GetParam().kind), ++seed);
  for (Trans tb : kT) check_case(aligned_rows(shape(Trans::N, tb, 300, 8712, 136), GetParam().kind), ++seed);  // + narrow
  check_case(aligned_rows(shape(Trans::N, Trans::N, 8712, 300, 136), GetParam().kind), ++seed);
  check::GemmShape s = aligned_rows(shape(Trans::T, Trans::N, 300, 8704, 72), GetParam().kind);
  s.alpha = 1.5f, s.beta = -0.5f;
  check_case(s, ++seed);
  check_case(shape(Trans::N, Trans::N, 299, 8703, 65), ++seed);  // unaligned rows: copies, storer warps
  check_case(aligned_rows(shape(Trans::N, Trans::N, 4104, 4096, 64), GetParam().kind), ++seed);
  RUNGS_FINISH(tally_);
}

// A + 1, B + 1, C + 1 element: 2-byte (4-byte for float) aligned only. In 136 x 264 x 24 every ld
// is a multiple of 8 elements, so each row is as aligned as its matrix's first element: TMA could
// address the rows but for the pointers. It spans more than one 128 x 256 tile and ends in a
// partial k tile, within the sanitizer runs' RUNGS_TEST_MAX_MNK (2^22), which leaves out
// 260 x 136 x 200.
TEST_P(GemmTc, MisalignedPointers) {
  const int64_t shapes[][3] = {{260, 136, 200}, {136, 264, 24}};
  uint64_t seed = 1400;
  for (const auto& sh : shapes)
    for (Trans ta : kT)
      for (Trans tb : kT) check_case(shape(ta, tb, sh[0], sh[1], sh[2]), ++seed, 1);
  RUNGS_FINISH(tally_);
}

// Decode shapes (rungs 24 and 25; every rung runs them): few rows of A against a wide W, W stored
// n x k (nt, a Linear layer's layout) and k x n (nn), n and k odd (ragged last chunk of k, last
// column block and last 8 elements; k > 1024 where the split can cut k into slices, the last one
// short), beta == 0 on a NaN C and beta != 0. The first cases keep m n k under the sanitizers'
// RUNGS_TEST_MAX_MNK (2^22): tight rows (W's row length odd, so ldb % 8 != 0: W's 2-byte loads),
// then the same shapes with every ld rounded up to 16 elements (W's 16-byte loads, the ragged last
// 8 elements by 2-byte loads, NaN in the ld padding past k (nt) or n (nn)); then padded ld's
// (ldb % 8 != 0), pointers off by one element, A stored k x m, and larger shapes (left out under the
// sanitizers) where n is too short for the GPU (rung 25 splits k) or wide enough that rung 25 is
// rung 24.
TEST_P(GemmTc, DecodeShapes) {
  const int64_t small[][3] = {{1, 1031, 3001}, {3, 515, 1031}, {8, 255, 2049}, {17, 129, 1025},
                              {64, 97, 515},   {128, 97, 257}, {1, 1, 1},      {5, 7, 9}};
  uint64_t seed = 1450;
  for (Trans tb : kT)
    for (const auto& sh : small)
      for (float beta : {0.0f, 0.5f}) {
        check::GemmShape s = shape(Trans::N, tb, sh[0], sh[1], sh[2]);
        s.alpha = beta == 0.0f ? 1.0f : -1.25f, s.beta = beta;
        check_case(s, ++seed);
      }
  for (Trans tb : kT)
    for (const auto& sh : small) {
      check::GemmShape s = aligned_rows(shape(Trans::N, tb, sh[0], sh[1], sh[2]), GetParam().kind);
      s.alpha = -1.25f, s.beta = 0.5f;
      check_case(s, ++seed);
    }
  for (Trans tb : kT) {
    check::GemmShape s = check::normalized(shape(Trans::N, tb, 17, 129, 1025));
    s.lda += 3, s.ldb += 3, s.ldc += 5;
    check_case(s, ++seed);
    check_case(shape(Trans::N, tb, 8, 255, 2049), ++seed, 1);
    check_case(shape(Trans::T, tb, 17, 129, 1025), ++seed);
    for (const auto& sh : {std::array<int64_t, 3>{8, 2050, 4099}, std::array<int64_t, 3>{128, 520, 2049},
                           std::array<int64_t, 3>{1, 8200, 1024}, std::array<int64_t, 3>{32, 64, 16387}})
      check_case(shape(Trans::N, tb, sh[0], sh[1], sh[2]), ++seed);
  }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmTc, AlphaBeta) {
  const float ab[][2] = {{-1.5f, 0.75f}, {1.0f, 1.0f}, {2.0f, -2.0f}, {0.25f, 0.0f}};
  uint64_t seed = 1500;
  for (const auto& v : ab)
    for (Trans ta : kT) {
      check::GemmShape s = shape(ta, Trans::T, 150, 97, 130);
      s.alpha = v[0], s.beta = v[1];
      check_case(s, ++seed);
    }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmTc, EmptyProductScalesC) {  // k == 0 and alpha == 0: C = beta * C, A and B unread
  for (float beta : {0.0f, 1.0f, -3.0f})
    for (int k : {0, 17}) {
      check::GemmShape s = check::normalized(shape(Trans::N, Trans::N, 70, 33, k));
      s.alpha = k == 0 ? 1.0f : 0.0f, s.beta = beta;
      s.lda = std::max<int64_t>(1, s.k);
      check_case(s, 1600);
    }
  RUNGS_FINISH(tally_);
}

TEST_P(GemmTc, NaNInAPropagatesToItsRowOnly) {
  check::GemmShape s = check::normalized(shape(Trans::N, Trans::N, 97, 130, 75));
  check::GemmData d = check::make_gemm_data(s, 1700);
  check::round_inputs(d, GetParam().kind);
  const int64_t bad_row = 41;
  d.A[bad_row * s.lda + 7] = std::numeric_limits<float>::quiet_NaN();
  const Outcome o = run_on(GetParam().variant, GetParam().kind, s, d, 0);
  if (o.skipped) GTEST_SKIP() << o.skip_reason;
  const auto err = check::compare_gemm(s, check::gemm_reference(s, d), o.C.data(), GetParam().kind);
  EXPECT_TRUE(err.pass) << err.reason;
  for (int64_t j = 0; j < s.n; ++j) EXPECT_TRUE(std::isnan(o.C[bad_row * s.ldc + j])) << "column " << j;
}

// Captured into a CUDA graph, then replayed on two sets of fresh inputs written between the
// launches (the graph reads the buffers when it runs). 129 x 130 x 67 has rows TMA cannot address,
// so the TMA rungs' aligned copies (scratch allocated inside the graph) run at every replay; 256 x
// 512 x 320 tn reads aligned operands in place; 8 x 130 x 2100 nt is a decode shape that rung 25
// splits in k (its partial sums in scratch allocated inside the graph). A rung that cannot be
// captured throws Unsupported.
TEST_P(GemmTc, CapturedGraphReplaysOnFreshInputs) {
  uint64_t seed = 1900;
  for (const check::GemmShape& s0 : {shape(Trans::N, Trans::N, 129, 130, 67), shape(Trans::T, Trans::N, 256, 512, 320),
                                     shape(Trans::N, Trans::T, 8, 130, 2100)}) {
    check::GemmShape s = check::normalized(s0);
    if (s.m == 129) s.beta = 0.5f;
    if (exceeds_test_limit(static_cast<double>(s.m) * s.n * s.k)) {
      ++tally_.filtered;
      continue;
    }
    captured_case(s, seed);
  }
  RUNGS_FINISH(tally_);
}

// Decode shapes (rung 26, decode_wgmma, and every rung beside it): few rows of A against a wide W
// stored n x k (nt), rows aligned so the TMA path runs. m covers each narrow wgmma N (8, 16, 32,
// 64, 128), its neighbours and groups past 128; n = 300 is 3 tiles of 128 W rows, so k = 1030 (17 k
// tiles, the last partial) is split 4 ways and the splits' sums meet in a cluster of 4; n = 17000
// (133 tiles) fills the SMs unsplit, with k = 520 (9 k tiles) long enough for 2 splits, so only the
// tile count keeps it unsplit; k = 8200 splits 8 ways (the largest cluster). alpha / beta with C
// read and with NaN in C (beta == 0). tn and tight (unaligned) rows of the same shapes take the
// fallback. Rung 27 (decode_streamk) cuts the (tile, k tile) units into one range per SM: at n =
// 300 a tile's 17 k tiles go to 4-5 blocks, at n = 17000 tiles are cut in 2; n = 50000 and 30000
// with k = 130 (3 k tiles, the last partial) give ranges of several whole tiles between two cut
// ones, with N = 16 and (m = 65) N = 128, beta != 0. One split case is also captured into a graph
// (rung 26's cluster launch, rung 27's workspace allocated inside it and its programmatic second
// launch) and replayed. Then W stored k x n (nn) at each N, read in place by rungs 26 and 27, and
// the 256-row tiles they take at N = 64 and 128 for long n, nt and nn.
TEST_P(GemmTc, DecodeShapesFewRows) {
  const TcParam& p = GetParam();
  uint64_t seed = 1700;
  for (int64_t m : {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 129, 260})
    check_case(aligned_rows(shape(Trans::N, Trans::T, m, 300, 1030), p.kind), ++seed);
  check_case(aligned_rows(shape(Trans::N, Trans::T, 3, 17000, 520), p.kind), ++seed);
  check_case(aligned_rows(shape(Trans::N, Trans::T, 4, 300, 8200), p.kind), ++seed);
  check_case(aligned_rows(shape(Trans::N, Trans::T, 9, 50000, 130), p.kind), 1790);
  {
    check::GemmShape s = aligned_rows(shape(Trans::N, Trans::T, 65, 30000, 130), p.kind);
    s.alpha = 0.5f, s.beta = -1.0f;
    check_case(s, 1791);
  }
  const float ab[][2] = {{-1.5f, 0.75f}, {2.0f, 0.0f}, {1.0f, 1.0f}};
  for (const auto& v : ab)
    for (int64_t m : {5, 40, 130}) {
      check::GemmShape s = aligned_rows(shape(Trans::N, Trans::T, m, 777, 1030), p.kind);
      s.alpha = v[0], s.beta = v[1];
      check_case(s, ++seed);
    }
  for (Trans ta : kT)
    for (Trans tb : kT) {
      check_case(shape(ta, tb, 9, 700, 333), ++seed);
      check_case(aligned_rows(shape(ta, tb, 20, 300, 520), p.kind), ++seed);
    }
  check_case(aligned_rows(shape(Trans::N, Trans::T, 12, 300, 1030), p.kind), ++seed, 1);  // misaligned pointers

  check::GemmShape s = aligned_rows(shape(Trans::N, Trans::T, 5, 300, 1030), p.kind);
  s.beta = 0.5f;
  if (exceeds_test_limit(static_cast<double>(s.m) * s.n * s.k)) {
    ++tally_.filtered;
  } else {
    captured_case(s, ++seed);
  }

  // W stored k x n (nn), rows aligned: rungs 26 and 27 read W in place through wgmma's transpose
  // bit; n = 300 leaves the last 64-column box of W partly out of range, k = 1030 is split (26)
  // and cut (27), one N per m.
  uint64_t seed_nn = 1800;
  for (int64_t m : {1, 9, 17, 33, 65, 128}) {
    check::GemmShape t = aligned_rows(shape(Trans::N, Trans::N, m, 300, 1030), p.kind);
    if (m == 33) t.alpha = -1.5f, t.beta = 0.75f;
    check_case(t, ++seed_nn);
  }
  // 256-row tiles (rungs 26 and 27 at N = 64 and 128 when n gives half the SMs a whole tile:
  // 2 ceil(n / 256) groups >= 132 here), nt and nn: k = 3 (one partial k tile) under the
  // sanitizers' size; above it k = 400 at N = 64 and 330 at N = 128 (7 and 6 k tiles, past the
  // 5 and 4 stages: the pipeline wraps; rung 27 cuts tiles), alpha / beta on the second.
  for (Trans tb : kT) {
    check_case(aligned_rows(shape(Trans::N, tb, 40, 16900, 3), p.kind), ++seed_nn);
    check_case(aligned_rows(shape(Trans::N, tb, 129, 8200, 3), p.kind), ++seed_nn);
    check_case(aligned_rows(shape(Trans::N, tb, 40, 16900, 400), p.kind), ++seed_nn);
    check::GemmShape t = aligned_rows(shape(Trans::N, tb, 65, 16900, 330), p.kind);
    t.alpha = 0.5f, t.beta = -1.0f;
    check_case(t, ++seed_nn);
  }
  // n = 16800: 66 256-row tiles, so on 132 SMs rung 26 splits k = 520 in 2 (a cluster of two
  // 256 x 64 blocks whose sums meet in shared memory).
  check_case(aligned_rows(shape(Trans::N, Trans::T, 40, 16800, 520), p.kind), ++seed_nn);
  RUNGS_FINISH(tally_);
}

// Rung 33's (decode_wide) tile widths, which it fits to the SM count: on 132 SMs n = 5000, 8000,
// 14000, 16000 and 25000 take N = 56, 64, 112, 128 and 224 (below 4225 rows: 32, as the shapes
// above), each with one and two consumer warpgroups (m = 33, and 65: the second with one row of
// A) and a ragged last tile; k = 3 (one partial k tile, under the sanitizers' size but at m = 65,
// n = 25000) and 520 or 1030 (9 or 17 k tiles: past the stages, 5 at N = 224 and 12 at N = 56, so
// the pipeline wraps), alpha / beta at m = 65; m = 260
// runs three groups of 128 rows of A along y. The other rungs meet these sizes in DecodeShapes.
TEST_P(GemmTc, DecodeFittedWidths) {
  if (GetParam().variant != "decode_wide") GTEST_SKIP() << "rung 33's tile widths";
  uint64_t seed = 1900;
  for (int64_t n : {5000, 8000, 14000, 16000, 25000})
    for (int64_t m : {33, 65}) {
      check_case(aligned_rows(shape(Trans::N, Trans::T, m, n, 3), GetParam().kind), ++seed);
      check::GemmShape s = aligned_rows(shape(Trans::N, Trans::T, m, n, n == 5000 ? 1030 : 520), GetParam().kind);
      if (m == 65) s.alpha = -0.75f, s.beta = 1.5f;
      check_case(s, ++seed);
    }
  check_case(aligned_rows(shape(Trans::N, Trans::T, 260, 5000, 130), GetParam().kind), ++seed);
  RUNGS_FINISH(tally_);
}

// tf32 means the inputs ROUNDED to tf32 (to nearest), not truncated: tf32 wgmma reads a float's
// low 13 bits as zero, so a rung that hands it fp32 bits unrounded truncates. Column 0 of A holds
// x = +-(1 + 2^-11 + 2^-13) 2^e, above the midpoint between its tf32 neighbours (rounding: 1 + 2^-10,
// truncation: 1); row 0 of B holds 1 + 2^-10 + 2^-11 + 2^-14 (rounding: 1 + 2^-9, truncation:
// 1 + 2^-10) and 1 + 2^-12 (both: 1); the rest of A and B is zero. Every product of two tf32
// values is exact in fp32, so C must equal tf32(x) tf32(y) bit for bit. All four transposes: A
// and B then reach the kernels both in place (ld 8 floats, TMA-aligned) and through the aligned
// copies. Our rungs only (not the cuBLAS baseline, whose conversion is its own).
TEST(GemmTcTf32, RoundsToNearest) {
  RUNGS_REQUIRE_GPU();
  auto tf32_rn = [](float v) {  // no ties in this data: ties-away and ties-even agree
    uint32_t u;
    std::memcpy(&u, &v, 4);
    u = (u + 0x1000u) & 0xFFFFE000u;
    std::memcpy(&v, &u, 4);
    return v;
  };
  Tally tally;
  for (const auto& v : variants(Op::gemm)) {
    if (v.baseline || (" " + v.types + " ").find(" tf32 ") == std::string::npos) continue;
    for (Trans ta : kT)
      for (Trans tb : kT) {
        check::GemmShape s = check::normalized(shape(ta, tb, 70, 9, 8));
        check::GemmData d = check::make_gemm_data(s, 1800);
        std::fill(d.A.begin(), d.A.end(), 0.0f), std::fill(d.B.begin(), d.B.end(), 0.0f);
        std::vector<float> x(s.m), y(s.n);
        for (int64_t i = 0; i < s.m; ++i) {
          x[i] = std::ldexp((i % 2 ? -1.0f : 1.0f) * (1.0f + 0x1p-11f + 0x1p-13f), static_cast<int>(i % 5) - 2);
          d.A[ta == Trans::N ? i * s.lda : i] = x[i];  // A(i, 0)
        }
        for (int64_t j = 0; j < s.n; ++j) {
          y[j] = j % 2 ? 1.0f + 0x1p-12f : 1.0f + 0x1p-10f + 0x1p-11f + 0x1p-14f;
          d.B[tb == Trans::N ? j : j * s.ldb] = y[j];  // B(0, j)
        }
        const Outcome o = run_on(v.name, GemmKind::tf32, s, d, 0);
        if (!tally.count(o)) continue;
        int64_t wrong = 0;
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            const float want = tf32_rn(x[i]) * tf32_rn(y[j]), got = o.C[i * s.ldc + j];
            if (got != want && wrong++ < 3)
              ADD_FAILURE() << v.name << " " << check::describe(s) << ": C(" << i << ", " << j << ") = " << got
                            << ", want tf32(x) tf32(y) = " << want << " (truncated inputs give "
                            << std::ldexp(std::trunc(std::ldexp(x[i], 10 - std::ilogb(x[i]))), std::ilogb(x[i]) - 10) *
                                   std::ldexp(std::trunc(std::ldexp(y[j], 10 - std::ilogb(y[j]))), std::ilogb(y[j]) - 10)
                            << ")";
          }
        EXPECT_EQ(wrong, 0) << v.name << " " << check::describe(s);
      }
  }
  RUNGS_FINISH(tally);
}

INSTANTIATE_TEST_SUITE_P(Ladder, GemmTc, ::testing::ValuesIn(tc_params()),
                         [](const ::testing::TestParamInfo<TcParam>& i) {
                           return i.param.variant + "_" + check::gemm_kind_name(i.param.kind);
                         });

// The 3xTF32 promise: fp32-level accuracy, measured against cuBLAS's own fp32 sgemm on the same
// data (zero-mean and positive) at a large k and a shape where cuBLAS runs its ordinary (not
// split-k) kernel: 2048 x 2048 x 4096, 96 sampled rows. Every rung that does tf32x3 must be at or
// below cuBLAS sgemm's normwise error; plain tf32 must be far above it (the test can fail). A rung
// that cannot run here (rungs::Unsupported) is named in the output; cuBLAS must run.
TEST(GemmAccuracy, Tf32x3AtMostCublasSgemmError) {
  RUNGS_REQUIRE_GPU();
  Tally tally;
  for (bool positive : {false, true}) {
    check::GemmShape s = check::normalized(shape(Trans::N, Trans::N, 2048, 2048, 4096));
    check::GemmData d = check::make_gemm_data(s, positive ? 1801 : 1800);
    if (positive)
      for (auto* v : {&d.A, &d.B})
        for (float& x : *v) x = std::fabs(x);
    const check::GemmReference ref = check::gemm_reference(s, d, 96, 7);
    auto run = [&](const std::string& variant, GemmKind kind) { return run_on(variant, kind, s, d, 0); };
    const Outcome o_sgemm = run("cublas", GemmKind::f32), o_tf32 = run("cublas", GemmKind::tf32);
    ASSERT_FALSE(o_sgemm.skipped) << o_sgemm.skip_reason;
    ASSERT_FALSE(o_tf32.skipped) << o_tf32.skip_reason;
    const auto sgemm = check::compare_gemm(s, ref, o_sgemm.C.data(), GemmKind::f32);
    const auto tf32 = check::compare_gemm(s, ref, o_tf32.C.data(), GemmKind::tf32);
    std::cout << (positive ? "positive" : "zero-mean") << " data, 2048x2048x4096, normwise error: cuBLAS sgemm "
              << sgemm.normwise << ", cuBLAS tf32 " << tf32.normwise;
    EXPECT_GT(tf32.normwise, 10 * sgemm.normwise);
    for (const auto& v : variants(Op::gemm)) {
      if ((" " + v.types + " ").find(" tf32x3 ") == std::string::npos) continue;
      const Outcome o = run(v.name, GemmKind::tf32x3);
      if (!tally.count(o)) continue;
      const auto x3 = check::compare_gemm(s, ref, o.C.data(), GemmKind::tf32x3);
      std::cout << ", " << v.name << " tf32x3 " << x3.normwise;
      EXPECT_TRUE(x3.pass) << v.name << ": " << x3.reason;
      EXPECT_LE(x3.normwise, sgemm.normwise) << v.name << " tf32x3 less accurate than cuBLAS sgemm";
    }
    std::cout << std::endl;
  }
  RUNGS_FINISH(tally);
}

// Rung 35's promise: the tensor core's accumulation truncates, so a sum over all of k on it drifts;
// summed a stage at a time and added in fp32 off it (round to nearest), it does not. tf32 on
// positive inputs that are tf32 numbers already (the products exact, the reference exact): the only
// error left is the sums', and at k = 16384 the tensor core's must be far above the per-stage sums'.
TEST(GemmAccuracy, SumsPerStageRemoveTheTensorCoresDrift) {
  RUNGS_REQUIRE_GPU();
  Tally tally;
  check::GemmShape s = check::normalized(shape(Trans::N, Trans::T, 128, 128, 16384));
  check::GemmData d = check::make_gemm_data(s, 3500);
  for (auto* v : {&d.A, &d.B})
    for (float& x : *v) {  // |x| truncated to tf32 (10 bits of mantissa)
      uint32_t u;
      x = std::fabs(x);
      std::memcpy(&u, &x, 4);
      u &= 0xffffe000u;
      std::memcpy(&x, &u, 4);
    }
  const check::GemmReference ref = check::gemm_reference(s, d);
  const Outcome o_ws = run_on("wgmma_ws", GemmKind::tf32, s, d, 0), o_sums = run_on("wgmma_sums", GemmKind::tf32, s, d, 0);
  if (!tally.count(o_ws) || !tally.count(o_sums)) {
    RUNGS_FINISH(tally);
    return;
  }
  const auto ws = check::compare_gemm(s, ref, o_ws.C.data(), GemmKind::tf32);
  const auto sums = check::compare_gemm(s, ref, o_sums.C.data(), GemmKind::tf32);
  std::cout << "tf32 inputs, positive, 128x128x16384, max relative error: wgmma_ws " << ws.max_rel << ", wgmma_sums "
            << sums.max_rel << std::endl;
  EXPECT_TRUE(sums.pass) << sums.reason;
  EXPECT_LT(sums.max_rel * 8, ws.max_rel);
  EXPECT_LT(sums.max_rel, 64.0 / 16777216.0);  // a few ulps of the sum: no drift with k
  RUNGS_FINISH(tally);
}

}  // namespace
}  // namespace rungs::test
