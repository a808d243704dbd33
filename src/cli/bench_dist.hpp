// `rungs bench allgather_gemm|gemm_reducescatter` (bench_dist.cpp): the dist ladders on one host,
// one thread and one GPU per rank.
#pragma once

#include "cli/args.hpp"

#include <ostream>
#include <string>

namespace rungs::cli {

// Times every rung (or --variant's) on --world ranks; prints one table per operation.
int cmd_bench_dist(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err);

// GPUs visible to this process (0 where none is usable).
int visible_gpus();

// Whether this build has rungs::dist.
bool dist_built();

}  // namespace rungs::cli
