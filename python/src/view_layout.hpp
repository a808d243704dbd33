// The storage rungs reads a 2-D view as (the extension modules' eager torch paths, _rungs.cpp and
// _rungs_torch.cpp; rungs/_core.py's _layout is the same rule for every framework).
#pragma once

#include <cstdint>

namespace rungs::python {

// The (transposed, ld) of an r x c view with strides (sr, sc) in elements: row-major with unit
// column stride (ld = the row stride), or its transpose (unit row stride: Trans::T, ld = the column
// stride); false where the library has no storage for it.
inline bool view_layout(int64_t r, int64_t c, int64_t sr, int64_t sc, bool& t, int64_t& ld) {
  t = false;
  if (r == 0 || c == 0) return ld = c > 1 ? c : 1, true;
  if (c == 1 || sc == 1) {
    if (r == 1) return ld = c, true;
    if (sr >= c) return ld = sr, true;
  }
  if ((r == 1 || sr == 1) && sc >= r) return t = true, ld = sc, true;
  return false;
}

}  // namespace rungs::python
