// Helpers of the argument-checking tests (test_gemm_args, test_gemv_reduce_args): the checks
// run before any GPU work, so a fake device pointer is never dereferenced.
#pragma once

#include <rungs/rungs.hpp>

#include <functional>
#include <string>

namespace rungs::test {

template <typename T = float>
T* fake() {  // never dereferenced: the checks come first
  return reinterpret_cast<T*>(0x1000);
}

// What f throws: the message of a rungs::Error, "UNSUPPORTED " + the message of a
// rungs::Unsupported, or "" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Unsupported& e) {
    return std::string("UNSUPPORTED ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline Options named(const char* v) {
  Options o;
  o.variant = v;
  return o;
}

}  // namespace rungs::test
