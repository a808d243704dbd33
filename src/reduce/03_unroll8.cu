// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::unroll8 {
void run(const Args&) { detail::unsupported("unroll8", "not written yet"); }
}
