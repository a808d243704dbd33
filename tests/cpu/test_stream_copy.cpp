// gemm_host's streaming copy into staging slots (host/stream_copy.hpp): every byte of every length
// and both alignments arrives, and nothing outside [dst, dst + n) is written.
#include "host/stream_copy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rungs::test {
namespace {

TEST(StreamCopy, EveryLengthAndAlignment) {
  std::vector<char> src(600), dst(700);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 131 + 7);
  for (size_t so = 0; so < 16; so += 3)
    for (size_t d_off = 0; d_off < 17; ++d_off)
      for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 127, 200, 511}) {
        std::fill(dst.begin(), dst.end(), static_cast<char>(0x5a));
        // dst + 32 is at least 16-byte aligned when dst.data() is (malloc: 16); d_off moves it off
        char* d = dst.data() + 32 + d_off;
        host::stream_copy(d, src.data() + so, n);
        host::stream_fence();
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], src[so + i]) << "n " << n << " dst offset " << d_off << " byte " << i;
        for (char* p = dst.data(); p < d; ++p) ASSERT_EQ(*p, 0x5a) << "written before dst";
        for (char* p = d + n; p < dst.data() + dst.size(); ++p) ASSERT_EQ(*p, 0x5a) << "written past dst + n";
      }
}

}  // namespace
}  // namespace rungs::test
