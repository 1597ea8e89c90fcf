// SPDX-License-Identifier: Apache-2.0
// The --deeper table: intra-tile moves deeper than the hardware makes, packed
// by a packer of their own (deep_pack) that checks itself.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "sparsity_mc.hpp"
#include "strata/error.hpp"

namespace strata::sparsity_mc {
namespace {

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

}  // namespace

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

}  // namespace strata::sparsity_mc
