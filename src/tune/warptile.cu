// The tuner's candidates for rung 09 (warptile): every tile configuration `rungs tune gemm` times
// and the WarptileConfig tests check, so the choice table in src/gemm/09_warptile.cu can be
// measured rather than guessed. The configurations that table picks are the library's own kernels
// (declared in src/gemm/09_warptile.cuh, compiled once in the library); the others are compiled
// here only, in the rungs_tune library, and never reach a user of rungs.
// Timed and left out of the picks (docs/gemm.md, "Measured and not kept"):
//  - cuBLAS's shape 256x128x8 (and 128x256x8): half the smem per stage, 2x the barriers per FFMA;
//    3.549 / 3.023 ms at 4096^3 against 128x256x16's 2.881;
//  - 128x256x16 with 4 stages (99 KB of smem NN): one more tile of latency cover at 1 block/SM;
//    2.936 against 2.881 ms;
//  - *_rs: the k-contiguous operand register-staged (detail::RegTileLoader): LDG.128 along k at
//    the top of tile t for tile t+S-1, 4 transposing STS.32 per float4 after tile t's FFMAs --
//    a quarter of the load instructions and L1 requests of 4-byte cp.async, + BX*BK/threads
//    registers (8 at 128x16 / 256 threads; the 128-register configs can only afford one operand:
//    _rs1 = the one k-contiguous operand, none in TT; _rsa = A in NN only). 1-14 % slower in every
//    configuration: the staging registers and STS cost more than the cp.async they replace.
#include "tune/warptile.hpp"

#include "core/errors.hpp"
#include "gemm/09_warptile.cuh"

#include <string>
#include <vector>

namespace rungs::sgemm::warptile {

namespace {

// The candidates dispatch does not pick: BM, BN, BK, WM, WN, TM, TN, STAGES, min blocks per SM[,
// RS[, KU[, ORDER]]]. 21 x 4 transposes = 84 kernels; every one at <= 128 (2+ blocks/SM) or 255
// (1 block/SM) registers without spills (-warn-spills is an error).
using Big = Tile<128, 128, 16, 32, 64, 8, 8, 3, 2>;    // 256 thr, <= 128 regs: 2 blocks/SM
using Deep = Tile<128, 128, 32, 32, 64, 8, 8, 3, 2>;   // Big with half the per-tile overhead, 2x smem
using Wide = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1>;  // 256 thr, 16x8 per thread, 1 block/SM
using Tall = Tile<256, 128, 16, 64, 64, 16, 8, 3, 1>;  // 256 thr, 16x8 per thread, 1 block/SM
using Mid = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4>;     // 128 thr: twice Big's blocks, for mid sizes
// cuBLAS's own SIMT shape (sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1):
// 8 warps of 64x64, 16x8 per thread, BK = 8, 3 stages, 1 block/SM; and its transpose, and a deeper Wide.
using Cub = Tile<256, 128, 8, 64, 64, 16, 8, 3, 1>;
using CubW = Tile<128, 256, 8, 64, 64, 16, 8, 3, 1>;
using Wide4 = Tile<128, 256, 16, 64, 64, 16, 8, 4, 1>;
// Register-staged k-contiguous operand (_rs): LDG.128 along k + transposing STS instead of 4-byte cp.async.
using CubRs = Tile<256, 128, 8, 64, 64, 16, 8, 3, 1, 3>;
using CubWRs = Tile<128, 256, 8, 64, 64, 16, 8, 3, 1, 3>;
using WideRs = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 3>;
using BigRs = Tile<128, 128, 16, 32, 64, 8, 8, 3, 2, 4>;  // NN: A, NT: B (128 regs)
using MidRs = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 1>;   // NN only: B's 16 would spill
// The k-tile as a loop of 4-step groups (_u4): a body the instruction cache keeps (ncu at 4096^3,
// 128x256x16 fully unrolled: 6.3 % of the main loop's stall samples "no instruction", cuBLAS 0.6 %).
// BK = 32 costs no more code then, and halves the barriers and copy issue per FFMA.
using WideU = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 4>;
using Wide32U = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4>;
using MidU = Tile<64, 128, 16, 32, 64, 8, 8, 3, 4, 0, 4>;
using WideU2 = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 2>;
// The FFMAs of a k step in 2 x 2 serpentine order (_o1; _o2 walks the column pairs first): fewer
// register-file reads per FFMA where ptxas keeps the order (docs/gemm.md, "register reads"). It
// pays in the looped k-tiles (3 % at 4096^3) and costs the fully unrolled one 3 %.
using WideO = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 16, 1>;
using WideUO = Tile<128, 256, 16, 64, 64, 16, 8, 3, 1, 0, 4, 1>;
using Wide32UO4 = Tile<128, 256, 32, 64, 64, 16, 8, 4, 1, 0, 4, 1>;
using Wide32UO2 = Tile<128, 256, 32, 64, 64, 16, 8, 3, 1, 0, 4, 2>;

// Every configuration the tuner times, the picked ones (Small, MidUO, Wide32UO, Wide64UO,
// Tall32UO) among them. Indices are what `rungs tune gemm` reports. The split-K entries (_k2, _k4)
// reuse a compiled configuration with k cut into that many pieces.
constexpr Config kConfigs[] = {
    config<Big>(),
    config<Deep>(),
    config<Wide>(),
    config<Tall>(),
    config<Mid>(),
    config<Small>(),
    config<Cub>(),
    config<CubW>(),
    config<Wide4>(),
    config<CubRs>(),
    config<CubWRs>(),
    config<WideRs>(),
    config<BigRs>(),
    config<MidRs>(),
    config<WideU>(),
    config<Wide32U>(),
    config<MidU>(),
    config<WideU2>(),
    config<WideO>(),
    config<WideUO>(),
    config<Wide32UO>(),
    config<Wide32UO4>(),
    config<Wide32UO2>(),
    config<Wide64UO>(),
    config<Tall32UO>(),
    config<MidUO>(),
    config<Mid>(2),
    config<Mid>(4),
    config<MidU>(2),
    config<MidU>(4),
    config<Small>(4),
    config<MidUO>(4),
};
constexpr size_t kNumConfigs = sizeof(kConfigs) / sizeof(kConfigs[0]);

// BMxBNxBK_wWMxWN_tTMxTN_sSTAGES, then _rs (RS 3), _rs1 (RS 4) or _rsa (RS 1), _uKU when the
// k-tile is a loop (KU < BK), _oORDER, _kSPLITS.
std::string name(const Config& c) {
  auto s = [](int v) { return std::to_string(v); };
  std::string n = s(c.bm) + "x" + s(c.bn) + "x" + s(c.bk) + "_w" + s(c.wm) + "x" + s(c.wn) + "_t" + s(c.tm) + "x" +
                  s(c.tn) + "_s" + s(c.stages);
  if (c.rs == 3) n += "_rs";
  if (c.rs == 4) n += "_rs1";
  if (c.rs == 1) n += "_rsa";
  if (c.ku < c.bk) n += "_u" + s(c.ku);
  if (c.order) n += "_o" + s(c.order);
  if (c.splits > 1) n += "_k" + s(c.splits);
  return n;
}

}  // namespace

std::vector<std::string> configs() {
  std::vector<std::string> names;
  for (const auto& c : kConfigs) names.push_back(name(c));
  return names;
}

void run_config(size_t index, const Args& a) {
  if (index >= kNumConfigs) detail::unsupported("warptile", "no configuration " + std::to_string(index));
  kConfigs[index].run(a, kConfigs[index].splits);
}

}  // namespace rungs::sgemm::warptile
