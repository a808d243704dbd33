// `rungs bench chain` (bench_chain.cpp): the linear layers of a model's decode step as one chain of
// products in a CUDA graph, against the same chain through the cublas rung in the same run.
#pragma once

#include "cli/args.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace rungs::cli {

// One product of the chain: C (m x n) = A (m x k) W^T, the weight W stored n x k (trans nt).
struct ChainProduct {
  std::string name;  // "qkv", "o", "gate_up", "down", "lm_head"
  int64_t n, k;
};

// The models `--model` takes, in the order the help lists them.
const std::vector<std::string>& chain_models();
// The products of one decode step of `model`'s linear layers, in order: llama3-8b, 32 layers of qkv
// (6144 x 4096), o (4096 x 4096), gate_up (28672 x 4096), down (4096 x 14336), then lm_head
// (128256 x 4096): 129 products, 15.0 GB of bf16 weights; llama3-70b, 8 of its 80 layers (qkv
// 10240 x 8192, o 8192 x 8192, gate_up 57344 x 8192, down 8192 x 28672) and lm_head (128256 x 8192):
// 33 products, 15.8 GB (the whole model's 141 GB does not fit one GPU). CliError for another name.
std::vector<ChainProduct> chain_products(const std::string& model);

int cmd_bench_chain(const Args& a, const std::string& argv0, std::ostream& out, std::ostream& err);

}  // namespace rungs::cli
