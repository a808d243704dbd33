// Host helpers of the references and data generators (gemm_check, gemv_check, reduce_check):
// one counter-based random generator (the same values on every machine, whatever the thread
// count) and one way to split a loop over threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace rungs::check::util {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Random bits number i of stream `stream` for `seed` (counter based: parallel and portable).
inline uint64_t bits_at(uint64_t seed, uint64_t stream, uint64_t i) {
  return splitmix64(seed * 0x2545F4914F6CDD1Dull ^ (stream << 56) ^ splitmix64(i));
}

// The top 53 bits as a double in [0, 1).
inline double unit(uint64_t r) { return static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0); }

// |v| uniform in [2^-8, 1], the sign from bit 0.
inline double signed_mag(uint64_t r) {
  const double mag = 1.0 / 256.0 + unit(r) * (1.0 - 1.0 / 256.0);
  return (r & 1) ? -mag : mag;
}

// Value i of stream `stream` for `seed` as a float: the matrices and vectors of gemm and gemv.
inline float draw(uint64_t seed, uint64_t stream, uint64_t i) {
  return static_cast<float>(signed_mag(bits_at(seed, stream, i)));
}

inline int64_t hw_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// f(t, lo, hi) over [0, n) in up to `threads` contiguous chunks, chunk t on its own thread (on the
// calling thread when there is one chunk).
template <typename F>
void parallel_chunks(int64_t n, int64_t threads, F f) {
  threads = std::max<int64_t>(1, std::min(threads, n));
  if (threads == 1) {
    if (n > 0) f(int64_t{0}, int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t lo = t * chunk, hi = std::min(n, lo + chunk);
    if (lo < hi) pool.emplace_back([=] { f(t, lo, hi); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace rungs::check::util
