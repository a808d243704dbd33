// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::warp_unrolled {
void run(const Args&) { detail::unsupported("warp_unrolled", "not written yet"); }
}
