// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::smem_x {
void run(const Args&) { detail::unsupported("smem_x", "not written yet"); }
}
