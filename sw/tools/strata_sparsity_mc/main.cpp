// SPDX-License-Identifier: Apache-2.0
// strata_sparsity_mc: Monte-Carlo of the sparse weight packer (sparse_pack.hpp,
// docs/sparsity.md). For random unstructured sparsity it packs random dense
// schedules of one PE-array pass (P tiles x T dense cycles x N lanes) and
// reports the mean speed-up, dense cycles / packed cycles, of
//   intra   intra-tile moves only (lookahead, lookaside, whole rows up);
//   inter 1 intra + inter-tile moves into a neighbouring tile's empty row;
//   inter * intra + inter-tile moves into any tile's empty row;
//   ceiling T / packed_floor: one-step moves at most halve the dense cycles that
//           hold a non-zero weight, and a packed cycle holds at most P x N weights;
//   own buf not this design: one activation buffer per tile (background item 3's
//           alternative), each tile packed alone with intra-tile moves, the pass
//           as long as its slowest tile.
// Every packed schedule goes through check_packed() (exact dot products) before
// it is counted. With --network it does the same for each convolution layer of
// the network: P output channels per pass, dense cycles = taps x input groups.
// With --deeper, a third table measures deeper intra-tile moves than the
// hardware makes (a weight up to D cycles earlier and L lanes aside; the
// built scheme is D = L = 1) with a packer of their own (deep_pack), which
// checks itself: every non-zero weight placed exactly once, one weight per
// slot (not check_packed(): no schedule for the hardware is built).
//
//   strata_sparsity_mc [--seed S] [--trials K] [--network NET.yaml] [--deeper]
// Output: Markdown tables (docs/sparsity.md). Same seed => same tables.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <exception>
#include <string>

#include "sparsity_mc.hpp"

namespace strata::sparsity_mc {
namespace {

int run(int argc, char** argv) {
  CLI::App app{"Monte-Carlo of the sparse weight packer (docs/sparsity.md)", "strata_sparsity_mc"};
  uint64_t seed = 1;
  int trials = 100;
  std::string network;
  bool deeper = false;
  app.add_option("--seed", seed, "random seed (same seed, same tables)");
  app.add_option("--trials", trials, "random weight sets per table row")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--network", network,
                 "also pack the convolution layers of this network (YAML, shapes only)");
  app.add_flag("--deeper", deeper,
               "also measure deeper intra-tile moves (two cycles, two lanes) than the hardware "
               "makes");
  CLI11_PARSE(app, argc, argv);
  fmt::print("Mean speed-up (dense cycles / packed cycles), seed {}, {} trials per row.\n\n", seed,
             trials);
  synthetic_table(seed, trials);
  if (!network.empty()) {
    fmt::print("\n");
    network_table(network, seed, trials);
  }
  if (deeper) {
    fmt::print("\n");
    deeper_table(seed, trials);
  }
  return 0;
}

}  // namespace
}  // namespace strata::sparsity_mc

int main(int argc, char** argv) {
  try {
    return strata::sparsity_mc::run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "strata_sparsity_mc: error: {}\n", e.what());
    return 1;
  }
}
