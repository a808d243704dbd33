// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::split_k {
void run(const Args&) { detail::unsupported("split_k", "not written yet"); }
}
