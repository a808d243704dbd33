// PLACEHOLDER (being written): throws Unsupported until the rung lands.
#include "detail/check.hpp"
#include "reduce/reduce_rung.hpp"
namespace rungs::reduce::single_pass {
void run(const Args&) { detail::unsupported("single_pass", "not written yet"); }
}
