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
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/network.hpp"
#include "strata/sparse_pack.hpp"

namespace strata {
namespace {

constexpr double kSparsities[] = {0.25, 0.5, 0.75, 0.9};

struct Variant {
  const char* name;
  PackOptions options;
};

std::vector<Variant> variants(int tiles) {
  PackOptions intra;
  intra.inter_tile = false;
  intra.tile_reach = 0;
  PackOptions near;
  near.tile_reach = 1;
  PackOptions any;
  any.tile_reach = tiles;
  return {{"intra", intra}, {"inter 1", near}, {"inter *", any}};
}

// Uniform integer in [0, n) from the 64-bit stream (n small; the bias is
// below 2^-50), written out so the tables do not depend on the C++ library.
uint64_t below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }

// A non-zero int8 weight, -127..127 without 0.
int8_t weight(std::mt19937_64& rng) {
  const int v = static_cast<int>(below(rng, 254));
  return static_cast<int8_t>(v < 127 ? v - 127 : v - 126);
}

// Zeroes exactly round(sparsity * count) of the cells listed, chosen at random
// (magnitude pruning of i.i.d. random weights zeroes random positions).
void prune(std::vector<int8_t*>& cells, double sparsity, std::mt19937_64& rng) {
  const size_t zeros = static_cast<size_t>(sparsity * static_cast<double>(cells.size()) + 0.5);
  for (size_t i = 0; i < zeros; ++i) {  // partial Fisher-Yates
    const size_t j = i + below(rng, cells.size() - i);
    std::swap(cells[i], cells[j]);
    *cells[i] = 0;
  }
}

// Packs with each variant, checks, and returns the packed cycles of each, then
// packed_floor, then the slowest tile packed alone.
std::vector<int> pack_all(const DenseSchedule& d, const std::vector<Variant>& vs) {
  std::vector<int> k;
  for (const Variant& v : vs) {
    const PackedSchedule pk = pack_sparse(d, v.options);
    check_packed(d, pk, v.options);
    k.push_back(pk.packed_cycles());
  }
  k.push_back(packed_floor(d));
  // One activation buffer per tile: each tile packs alone (intra-tile moves),
  // the pass lasts as long as the slowest tile.
  int slowest = 0;
  for (int p = 0; p < d.tiles(); ++p) {
    DenseSchedule one(1, d.cycles(), d.lanes());
    for (int t = 0; t < d.cycles(); ++t) {
      for (int n = 0; n < d.lanes(); ++n) one.at(0, t, n) = d.at(p, t, n);
    }
    const PackedSchedule pk = pack_sparse(one, vs[0].options);
    check_packed(one, pk, vs[0].options);
    slowest = std::max(slowest, pk.packed_cycles());
  }
  k.push_back(slowest);
  return k;
}

// One pass of P = N = pn tiles and lanes and t dense cycles: random non-zero
// weights, then exactly the given fraction of them zeroed.
DenseSchedule random_schedule(int pn, int t, double sparsity, std::mt19937_64& rng) {
  DenseSchedule d(pn, t, pn);
  std::vector<int8_t*> cells;
  for (int p = 0; p < pn; ++p) {
    for (int c = 0; c < t; ++c) {
      for (int n = 0; n < pn; ++n) {
        d.at(p, c, n) = weight(rng);
        cells.push_back(&d.at(p, c, n));
      }
    }
  }
  prune(cells, sparsity, rng);
  return d;
}

// An all-zero pass still takes a cycle to start and end its accumulations.
double speedup(int64_t dense, int64_t packed) {
  return static_cast<double>(dense) / static_cast<double>(std::max<int64_t>(packed, 1));
}

void synthetic_table(uint64_t seed, int trials) {
  fmt::print("| P = N | T | sparsity | intra | inter 1 | inter * | ceiling | own buf |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int pn : {8, 16}) {
    const auto vs = variants(pn);
    for (int t : {9, 36, 144, 576}) {
      for (double s : kSparsities) {
        std::mt19937_64 rng(seed ^ (uint64_t(pn) << 40) ^ (uint64_t(t) << 20) ^ uint64_t(s * 100));
        std::vector<double> sum(vs.size() + 2, 0.0);
        for (int trial = 0; trial < trials; ++trial) {
          const DenseSchedule d = random_schedule(pn, t, s, rng);
          const std::vector<int> k = pack_all(d, vs);
          for (size_t i = 0; i < k.size(); ++i) sum[i] += speedup(t, k[i]);
        }
        fmt::print("| {} | {} | {:.0f} % |", pn, t, s * 100);
        for (double x : sum) fmt::print(" {:.2f} |", x / trials);
        fmt::print("\n");
      }
    }
  }
}

// ---- deeper moves ---------------------------------------------------------------

// Maximum bipartite matching (Kuhn), items to slots, options in preference
// order; returns each item's slot or -1.
std::vector<int> match(const std::vector<std::vector<int>>& options, int slots) {
  std::vector<int> owner(static_cast<size_t>(slots), -1);
  std::vector<bool> seen;
  const auto augment = [&](auto&& self, int i) -> bool {
    for (int sl : options[static_cast<size_t>(i)]) {
      if (seen[static_cast<size_t>(sl)]) continue;
      seen[static_cast<size_t>(sl)] = true;
      const int o = owner[static_cast<size_t>(sl)];
      if (o < 0 || self(self, o)) {
        owner[static_cast<size_t>(sl)] = i;
        return true;
      }
    }
    return false;
  };
  for (int i = 0; i < static_cast<int>(options.size()); ++i) {
    seen.assign(static_cast<size_t>(slots), false);
    augment(augment, i);
  }
  std::vector<int> slot_of(options.size(), -1);
  for (int sl = 0; sl < slots; ++sl) {
    if (owner[static_cast<size_t>(sl)] >= 0)
      slot_of[static_cast<size_t>(owner[static_cast<size_t>(sl)])] = sl;
  }
  return slot_of;
}

int ring(int a, int b, int n) {
  const int d = std::abs(a - b) % n;
  return std::min(d, n - d);
}

// Intra-tile packing with moves of up to `depth` cycles and `reach` lanes: the
// activation window {act[b], ..., act[b + depth]} is broadcast, a weight of
// dense cycle b stays in its lane, one of cycle b + d (1 <= d <= depth) may
// take a free lane within `reach` of its own (own lane first, then nearer
// ones; nearer cycles are placed first, each by a maximum matching). The next
// base is the next dense cycle with a weight left. Returns the packed cycles,
// after checking the placement (throws strata::Error on a violation).
int deep_pack(const DenseSchedule& dense, int depth, int reach) {
  const int P = dense.tiles(), T = dense.cycles(), N = dense.lanes();
  std::vector<int> placed(static_cast<size_t>(P) * T * N, 0);  // times each weight was placed
  const auto cell = [&](int p, int t, int n) { return (static_cast<size_t>(p) * T + t) * N + n; };
  const auto left = [&](int p, int t, int n) {
    return dense.at(p, t, n) != 0 && placed[cell(p, t, n)] == 0;
  };
  const auto cycle_left = [&](int t) {
    for (int p = 0; p < P; ++p) {
      for (int n = 0; n < N; ++n) {
        if (left(p, t, n)) return true;
      }
    }
    return false;
  };
  int packed = 0;
  int b = 0;
  while (b < T && !cycle_left(b)) ++b;
  while (b < T) {
    ++packed;
    for (int p = 0; p < P; ++p) {
      std::vector<bool> used(static_cast<size_t>(N), false);
      for (int n = 0; n < N; ++n) {
        if (!left(p, b, n)) continue;
        used[static_cast<size_t>(n)] = true;
        ++placed[cell(p, b, n)];
      }
      for (int d = 1; d <= depth && b + d < T; ++d) {
        std::vector<int> items;
        std::vector<std::vector<int>> options;
        for (int n = 0; n < N; ++n) {
          if (!left(p, b + d, n)) continue;
          std::vector<int> o;
          for (int r = 0; r <= reach; ++r) {
            for (int m : {(n + N - r) % N, (n + r) % N}) {
              if (!used[static_cast<size_t>(m)] && std::find(o.begin(), o.end(), m) == o.end()) {
                o.push_back(m);
              }
            }
          }
          items.push_back(n);
          options.push_back(std::move(o));
        }
        const std::vector<int> got = match(options, N);
        for (size_t i = 0; i < items.size(); ++i) {
          const int m = got[i];
          if (m < 0) continue;
          if (used[static_cast<size_t>(m)] || ring(m, items[i], N) > reach) {
            throw Error("deep_pack: a weight placed in a used or unreachable lane");
          }
          used[static_cast<size_t>(m)] = true;
          ++placed[cell(p, b + d, items[i])];
        }
      }
    }
    ++b;
    while (b < T && !cycle_left(b)) ++b;
  }
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) {
      for (int n = 0; n < N; ++n) {
        if (placed[cell(p, t, n)] != (dense.at(p, t, n) != 0 ? 1 : 0)) {
          throw Error(fmt::format("deep_pack: weight ({}, {}, {}) placed {} times", p, t, n,
                                  placed[cell(p, t, n)]));
        }
      }
    }
  }
  return packed;
}

// Lower bound on the packed cycles of moves up to `depth` cycles: a packed
// cycle covers at most depth + 1 dense cycles and holds at most P x N weights.
int deep_floor(const DenseSchedule& d, int depth) {
  const int64_t per_cycle = int64_t{d.tiles()} * d.lanes();
  const int64_t by_rows = (d.occupied_cycles() + depth) / (depth + 1);
  const int64_t by_slots = (d.nonzeros() + per_cycle - 1) / per_cycle;
  return static_cast<int>(std::max(by_rows, by_slots));
}

struct Deep {
  const char* name;
  int depth, reach;
};
constexpr Deep kDeep[] = {{"1 cycle, 1 lane (built)", 1, 1},
                          {"2 lanes", 1, 2},
                          {"2 cycles", 2, 1},
                          {"2 cycles, 2 lanes", 2, 2}};

void deeper_table(uint64_t seed, int trials) {
  fmt::print(
      "| P = N | T | sparsity | 1 cycle, 1 lane (built) | 2 lanes | 2 cycles | "
      "2 cycles, 2 lanes | ceiling 1 cycle | ceiling 2 cycles |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int pn : {8, 16}) {
    for (int t : {36, 144}) {
      for (double s : kSparsities) {
        std::mt19937_64 rng(seed ^ (uint64_t(pn) << 40) ^ (uint64_t(t) << 20) ^ uint64_t(s * 100) ^
                            (uint64_t(1) << 60));
        std::vector<double> sum(std::size(kDeep) + 2, 0.0);
        for (int trial = 0; trial < trials; ++trial) {
          const DenseSchedule d = random_schedule(pn, t, s, rng);
          for (size_t v = 0; v < std::size(kDeep); ++v) {
            sum[v] += speedup(t, deep_pack(d, kDeep[v].depth, kDeep[v].reach));
          }
          sum[std::size(kDeep)] += speedup(t, deep_floor(d, 1));
          sum[std::size(kDeep) + 1] += speedup(t, deep_floor(d, 2));
        }
        fmt::print("| {} | {} | {:.0f} % |", pn, t, s * 100);
        for (double x : sum) fmt::print(" {:.2f} |", x / trials);
        fmt::print("\n");
      }
    }
  }
}

// One convolution layer as the PE array runs it: `taps` x `groups` dense
// cycles per pass, `channels` input channels spread over groups of N lanes
// (lanes past the last channel hold no weight), ceil(out / P) passes.
struct ConvShape {
  std::string name;
  int taps = 0;
  int channels = 0;
  int out = 0;
  int64_t pixels = 0;  // output pixels: each pass runs once per pixel
};

std::vector<ConvShape> conv_shapes(const Network& net, int lanes) {
  std::vector<ConvShape> shapes;
  bool first = true;
  for (const Layer& l : net.layers) {
    if (l.type != LayerType::kConv) continue;
    ConvShape c;
    c.name = l.name;
    const int k = l.conv.kernel;
    const int cin = static_cast<int>(l.in_shape[0]);
    // The compiler reorders the first layer's input when it has fewer than N
    // channels (docs/architecture.md): k taps of k x C channels.
    const bool reorder =
        first && cin < lanes && l.inputs.size() == 1 && l.inputs[0] == kNetworkInput;
    c.taps = reorder ? k : k * k;
    c.channels = reorder ? k * cin : cin;
    c.out = l.out_channels;
    c.pixels = l.out_shape[1] * l.out_shape[2];
    if (reorder) c.name += " (reordered input)";
    shapes.push_back(c);
    first = false;
  }
  return shapes;
}

// Dense and packed cycles of one pass set (the whole layer), per variant,
// plus the ceiling's packed_floor, for one random pruned weight set.
std::vector<int64_t> pack_layer(const ConvShape& c, int pn, double sparsity,
                                const std::vector<Variant>& vs, std::mt19937_64& rng) {
  const int groups = (c.channels + pn - 1) / pn;
  const int t = c.taps * groups;
  const int passes = (c.out + pn - 1) / pn;
  std::vector<DenseSchedule> pass(passes, DenseSchedule(pn, t, pn));
  std::vector<int8_t*> cells;  // the layer's real weights, pruned together
  for (int o = 0; o < c.out; ++o) {
    for (int tap = 0; tap < c.taps; ++tap) {
      for (int ch = 0; ch < c.channels; ++ch) {
        int8_t& w = pass[o / pn].at(o % pn, tap * groups + ch / pn, ch % pn);
        w = weight(rng);
        cells.push_back(&w);
      }
    }
  }
  prune(cells, sparsity, rng);
  std::vector<int64_t> k(vs.size() + 2, 0);
  for (const DenseSchedule& d : pass) {
    const std::vector<int> kp = pack_all(d, vs);
    for (size_t i = 0; i < kp.size(); ++i) k[i] += kp[i];
  }
  return k;
}

void network_table(const std::string& path, uint64_t seed, int trials) {
  LoadOptions lo;
  lo.load_weights = false;
  const Network net = load_network(path, lo);
  fmt::print(
      "| P = N | layer | dense cycles x passes | sparsity | intra | inter 1 | inter * | "
      "ceiling | own buf |\n");
  fmt::print("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int pn : {8, 16}) {
    const auto vs = variants(pn);
    const auto shapes = conv_shapes(net, pn);
    for (double s : kSparsities) {
      std::mt19937_64 rng(seed ^ (uint64_t(pn) << 40) ^ uint64_t(s * 100));
      // [layer (last: all, per image)][variant]: sum over trials of the speed-up
      std::vector<std::vector<double>> sum(shapes.size() + 1,
                                           std::vector<double>(vs.size() + 2, 0.0));
      for (int trial = 0; trial < trials; ++trial) {
        std::vector<double> dense_img(vs.size() + 2, 0.0), packed_img(vs.size() + 2, 0.0);
        for (size_t li = 0; li < shapes.size(); ++li) {
          const ConvShape& c = shapes[li];
          const int64_t dense =
              int64_t{c.taps} * ((c.channels + pn - 1) / pn) * ((c.out + pn - 1) / pn);
          const std::vector<int64_t> k = pack_layer(c, pn, s, vs, rng);
          for (size_t i = 0; i < k.size(); ++i) {
            sum[li][i] += speedup(dense, k[i]);
            // Per image every pass runs once per output pixel.
            dense_img[i] += static_cast<double>(dense * c.pixels);
            packed_img[i] += static_cast<double>(k[i] * c.pixels);
          }
        }
        for (size_t i = 0; i < vs.size() + 2; ++i) {
          sum[shapes.size()][i] += dense_img[i] / std::max(packed_img[i], 1.0);
        }
      }
      for (size_t li = 0; li < shapes.size() + 1; ++li) {
        if (li < shapes.size()) {
          const ConvShape& c = shapes[li];
          fmt::print("| {} | {} | {} x {} | {:.0f} % |", pn, c.name,
                     c.taps * ((c.channels + pn - 1) / pn), (c.out + pn - 1) / pn, s * 100);
        } else {
          fmt::print("| {} | all conv layers, cycles per image | | {:.0f} % |", pn, s * 100);
        }
        for (double x : sum[li]) fmt::print(" {:.2f} |", x / trials);
        fmt::print("\n");
      }
    }
  }
}

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
}  // namespace strata

int main(int argc, char** argv) {
  try {
    return strata::run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "strata_sparsity_mc: error: {}\n", e.what());
    return 1;
  }
}
