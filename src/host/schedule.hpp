// The order in which gemm_host moves and multiplies the pieces of one problem (pure: no CUDA,
// so the CPU tests check it). The device holds op(A), op(B) and C of a job; the host sends
// pieces of op(A) (a panel of rows x a chunk of k) and of op(B) (a chunk of k x a panel of
// columns) over PCIe one after the other, and after each piece the device multiplies every block
// of C whose two pieces have now both arrived, and sends back every block that is finished.
//
// Two phases (docs/gemm_host.md simulates both and their alternatives):
//  1. k-major: the first `kmajor_fraction` of k, in `kmajor_chunks` chunks, each chunk sent for
//     all rows and all columns. Every byte sent enables the most work possible (the full
//     m x n x chunk product), so the multiplications start after the first two pieces and
//     run at full rate; but no block of C is finished yet. (One whole-chunk product per chunk runs
//     faster than these one-row-panel products but starts only after the chunk's last piece: that
//     flow measured level at 4096^3 and slower at 8192^3; docs/gemm_host.md.)
//  2. square order: the rest of k as one chunk, rows and columns panels interleaved (A0 B0 A1
//     B1 ...). After A_i arrives, row panel i times every column panel already here is finished
//     and goes back at once: C streams back while A and B still stream in.
// A problem whose multiplication is slow beside its transfers (large, compute-bound) uses half
// of k in phase 1; one bound by transfers uses a quarter (phase 1 then just gives the first
// multiplication something to do while phase 2 starts).
#pragma once

#include <cstdint>
#include <vector>

namespace rungs::host {

struct Range {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi - lo; }
  bool operator==(const Range& o) const { return lo == o.lo && hi == o.hi; }
};

struct Plan {
  int row_panels = 1, col_panels = 1;  // phase 2's panels (phase 1 uses the same ones unless...)
  int kmajor_chunks = 0;               // 0: no phase 1
  double kmajor_fraction = 0;          // of k, in phase 1
  int kmajor_row_panels = 0;           // ...phase 1 sends op(A) in this many pieces, each a group of
                                       // consecutive row panels (0: one piece per row panel). Taller
                                       // pieces make phase 1's products larger (--plan RxC:kN/F:rP).
                                       // Not chosen: measured level with 0
                                       // (scripts/experiments/host_probe/host_pieces.sh, docs/gemm_host.md)
};

// The plan for an m x n x k job: at most 16 panels a side, and phase 1 half of k when
// compute_s >= transfer_s / 2, else a quarter (none when k < 256). compute_s, transfer_s: rough
// estimates of the multiplication's and the inputs' transfer time.
// A piece whose rows in host memory are narrow copies slowly: on the H100's PCIe a 2D copy ran at
// 54 GB/s with rows of 2 KiB or more, 43.5 with 1 KiB, 27 with 256 B. So every dimension that
// becomes the row width of a 2D copy is cut into pieces of at least `min_width` elements: the
// columns of C and of op(B) when B is stored n x k, op(A)'s rows when A is stored transposed
// (k x m), and phase 1's chunks of k when A is stored m x k or B is stored n x k. Row panels of A
// stored m x k (whole rows) only need 128 rows. B stored k x n is sent in whole rows (one column
// panel), which also makes every block of C that goes back whole rows.
// sms: the device's SMs (0: unknown). Products run one after another on one stream, so when the
// multiplication bounds the flow (compute_s >= transfer_s) a row panel is made as tall as one
// wave of 128 x 128 tiles allows for its product (rows x n): 128 * (sms / (n / 128)) rows.
// 256-row strips of 4096^3 filled half the H100 (8 row panels measured faster than 16).
Plan choose_plan(int64_t m, int64_t n, int64_t k, double compute_s, double transfer_s, bool a_transposed = false,
                 bool b_transposed = false, int64_t min_width = 512, int sms = 0);

// Splits [0, total) into `parts` ranges whose interior boundaries are multiples of `align`
// (when the ranges stay non-empty), as equal as possible. parts is clamped to [1, total].
std::vector<Range> split(int64_t total, int parts, int64_t align);

// One piece sent to the device: op(A) rows `panel` .. `panel + panels - 1` x k `chunk`, or op(B)
// k `chunk` x columns `panel`.
struct Piece {
  bool is_a = true;
  int panel = 0;
  int chunk = 0;
  int panels = 1;  // op(A): row panels in the piece (Plan::kmajor_row_panels groups them in phase 1)
};

// C[rows, cols] = alpha op(A)[rows, k] op(B)[k, cols] + (first_k ? beta : 1) C[rows, cols].
struct Product {
  Range rows, cols, k;
  bool first_k = false;
};

struct Step {
  Piece piece;
  bool upload_c = false;         // beta != 0: send C's row panel of this piece first (op(A), chunk 0)
  std::vector<Product> products; // what the piece makes possible (at most one: a row or column strip)
  std::vector<Product> finished; // blocks of C finished by those products: send them back
};

struct Schedule {
  std::vector<Range> rows, cols, chunks;  // panels of C's rows and columns; chunks of k
  std::vector<Step> steps;
  // The rows of C (and of op(A)) that an op(A) piece covers.
  Range piece_rows(const Piece& p) const { return {rows[p.panel].lo, rows[p.panel + p.panels - 1].hi}; }
};

// The schedule of an m x n x k job (each >= 1). reads_c: beta != 0 (C is sent in too).
Schedule make_schedule(int64_t m, int64_t n, int64_t k, const Plan& plan, bool reads_c);

// One sub-problem of a call: C[rows, cols] (+)= op(A)[rows, k] op(B)[k, cols].
struct Job {
  Range rows, cols, k;
  bool first_k = true, last_k = true;  // the first k range applies beta; the last one sends C back
};

// Sub-problems whose op(A) rows x k, k x op(B) columns and C block fit `budget` elements of
// device memory: the whole problem when it fits, else blocks of C (at least 32 x 32, or the whole
// dimension when smaller) with their rows of op(A) and columns of op(B), halving k until such
// blocks fit. Blocks of C go row-major, k innermost (C stays on the device across its k ranges).
// Empty when not even a 32 x 32 block with k = 1 fits.
std::vector<Job> make_jobs(int64_t m, int64_t n, int64_t k, double budget);

}  // namespace rungs::host
