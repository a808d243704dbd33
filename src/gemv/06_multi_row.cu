// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "gemv/gemv_rung.hpp"
namespace rungs::sgemv::multi_row {
void run(const Args&) { detail::unsupported("multi_row", "not written yet"); }
}
