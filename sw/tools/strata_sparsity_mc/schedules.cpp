// SPDX-License-Identifier: Apache-2.0
// Random pruned dense schedules, their packing and the synthetic table.
#include <fmt/format.h>

#include <algorithm>

#include "sparsity_mc.hpp"

namespace strata::sparsity_mc {
namespace {

// Uniform integer in [0, n) from the 64-bit stream (n small; the bias is
// below 2^-50), written out so the tables do not depend on the C++ library.
uint64_t below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }

}  // namespace

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

int8_t weight(std::mt19937_64& rng) {
  const int v = static_cast<int>(below(rng, 254));
  return static_cast<int8_t>(v < 127 ? v - 127 : v - 126);
}

void prune(std::vector<int8_t*>& cells, double sparsity, std::mt19937_64& rng) {
  const size_t zeros = static_cast<size_t>(sparsity * static_cast<double>(cells.size()) + 0.5);
  for (size_t i = 0; i < zeros; ++i) {  // partial Fisher-Yates
    const size_t j = i + below(rng, cells.size() - i);
    std::swap(cells[i], cells[j]);
    *cells[i] = 0;
  }
}

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

}  // namespace strata::sparsity_mc
