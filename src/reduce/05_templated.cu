// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::templated {
void run(const Args&) { detail::unsupported("templated", "not written yet"); }
}
