// `rungs bench gemm_host` (bench_host.cpp): the host-to-host flow against the naive one.
#pragma once

#include "cli/args.hpp"
#include "host/schedule.hpp"

#include <ostream>
#include <string>

namespace rungs::cli {

int cmd_bench_host(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err);

// --plan's value: "RxC", "RxC:kN/F" or "RxC:kN/F:rP" (host::Plan's fields); CliError otherwise.
host::Plan parse_plan(const std::string& text);

}  // namespace rungs::cli
