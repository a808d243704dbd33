// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::warp_row {
void run(const Args&) { detail::unsupported("warp_row", "not written yet"); }
}
