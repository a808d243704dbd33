// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::naive {
void run(const Args&) { detail::unsupported("naive", "not written yet"); }
}
