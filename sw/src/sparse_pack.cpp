// SPDX-License-Identifier: Apache-2.0
// Sparse weight packing: see sparse_pack.hpp for the schedule, the rules and
// the algorithm.
#include "strata/sparse_pack.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "strata/error.hpp"

namespace strata {

DenseSchedule::DenseSchedule(int tiles, int cycles, int lanes)
    : tiles_(tiles), cycles_(cycles), lanes_(lanes) {
  if (tiles < 1 || cycles < 0 || lanes < 1) {
    throw Error(
        fmt::format("dense schedule of {} tiles x {} cycles x {} lanes: need at least "
                    "one tile and one lane",
                    tiles, cycles, lanes));
  }
  w_.assign(static_cast<size_t>(tiles) * cycles * lanes, 0);
}

int64_t DenseSchedule::nonzeros() const {
  return std::count_if(w_.begin(), w_.end(), [](int8_t v) { return v != 0; });
}

int DenseSchedule::occupied_cycles() const {
  int r = 0;
  for (int t = 0; t < cycles_; ++t) {
    bool any = false;
    for (int p = 0; p < tiles_ && !any; ++p) {
      for (int n = 0; n < lanes_ && !any; ++n) any = at(p, t, n) != 0;
    }
    r += any ? 1 : 0;
  }
  return r;
}

namespace {

// The dense lane a select code reads from packed lane m.
int source_lane(StagerSel sel, int m, int lanes) {
  switch (sel) {
    case StagerSel::kUp:
      return (m + 1) % lanes;
    case StagerSel::kDown:
      return (m + lanes - 1) % lanes;
    default:
      return m;
  }
}

int ring_distance(int a, int b, int n) {
  const int d = std::abs(a - b) % n;
  return std::min(d, n - d);
}

// Maximum bipartite matching (Kuhn): item i may take any slot of options[i],
// tried in the listed order (the preferred slot first). Returns the slot of
// each item, -1 if unmatched. Sizes are at most a few dozen.
class Matcher {
 public:
  Matcher(const std::vector<std::vector<int>>& options, int slots)
      : options_(options), owner_(slots, -1) {}

  std::vector<int> run() {
    for (int i = 0; i < static_cast<int>(options_.size()); ++i) {
      seen_.assign(owner_.size(), false);
      augment(i);
    }
    std::vector<int> slot_of(options_.size(), -1);
    for (int s = 0; s < static_cast<int>(owner_.size()); ++s) {
      if (owner_[s] >= 0) slot_of[owner_[s]] = s;
    }
    return slot_of;
  }

 private:
  bool augment(int i) {
    for (int s : options_[i]) {
      if (seen_[s]) continue;
      seen_[s] = true;
      if (owner_[s] < 0 || augment(owner_[s])) {
        owner_[s] = i;
        return true;
      }
    }
    return false;
  }

  const std::vector<std::vector<int>>& options_;
  std::vector<int> owner_;
  std::vector<bool> seen_;
};

}  // namespace

PackedSchedule pack_sparse(const DenseSchedule& dense, const PackOptions& options) {
  const int P = dense.tiles();
  const int T = dense.cycles();
  const int N = dense.lanes();
  DenseSchedule left = dense;  // weights not placed yet
  PackedSchedule out;
  out.tiles = P;
  out.lanes = N;
  out.dense_cycles = T;

  auto row_empty = [&](int p, int t) {
    for (int n = 0; n < N; ++n) {
      if (left.at(p, t, n) != 0) return false;
    }
    return true;
  };
  auto cycle_empty = [&](int t) {
    for (int p = 0; p < P; ++p) {
      if (!row_empty(p, t)) return false;
    }
    return true;
  };
  auto next_occupied = [&](int t) {
    while (t < T && cycle_empty(t)) ++t;
    return t;
  };

  for (int b = next_occupied(0); b < T;) {
    PackedCycle c;
    c.base = b;
    c.value.assign(static_cast<size_t>(P) * N, 0);
    c.sel.assign(static_cast<size_t>(P) * N, StagerSel::kCur);
    c.dest.resize(P);
    std::vector<bool> busy(P, false);  // the tile's row holds weights in this cycle
    auto place = [&](int p, int m, int q, int t, int n, StagerSel sel) {
      c.value[static_cast<size_t>(p) * N + m] = left.at(q, t, n);
      c.sel[static_cast<size_t>(p) * N + m] = sel;
      left.at(q, t, n) = 0;
      busy[p] = true;
    };

    // 1. What is left of row b stays where it is.
    for (int p = 0; p < P; ++p) {
      c.dest[p] = p;
      for (int n = 0; n < N; ++n) {
        if (left.at(p, b, n) != 0) place(p, n, p, b, n, StagerSel::kCur);
      }
    }

    const int b1 = b + 1;
    if (b1 < T) {
      // 2. Intra-tile: row b + 1 into the tile's free lanes.
      for (int p = 0; p < P; ++p) {
        if (row_empty(p, b1)) continue;
        if (!busy[p]) {  // an empty row: the whole of row b + 1 moves up
          for (int n = 0; n < N; ++n) {
            if (left.at(p, b1, n) == 0) continue;
            place(p, n, p, b1, n, StagerSel::kNext);
            ++out.moves.row_ahead;
          }
          continue;
        }
        std::vector<int> items;               // lanes of row b + 1 with a weight
        std::vector<std::vector<int>> slots;  // free lanes each may take, preferred first
        // Weights whose own lane is free are matched first, so a lookahead is
        // only given up when that places one more weight.
        std::vector<int> order;
        for (int own : {1, 0}) {
          for (int n = 0; n < N; ++n) {
            if ((c.value[static_cast<size_t>(p) * N + n] == 0) == (own == 1)) order.push_back(n);
          }
        }
        for (int n : order) {
          if (left.at(p, b1, n) == 0) continue;
          std::vector<int> s;
          for (int m : {n, (n + N - 1) % N, (n + 1) % N}) {
            if (c.value[static_cast<size_t>(p) * N + m] == 0 &&
                std::find(s.begin(), s.end(), m) == s.end()) {
              s.push_back(m);
            }
          }
          items.push_back(n);
          slots.push_back(std::move(s));
        }
        const std::vector<int> got = Matcher(slots, N).run();
        for (size_t i = 0; i < items.size(); ++i) {
          const int n = items[i];
          const int m = got[i];
          if (m < 0) continue;
          // Lane m reading lane n of the next cycle: n = m + 1 is kUp, n = m - 1 kDown.
          const StagerSel sel = m == n             ? StagerSel::kNext
                                : (m + 1) % N == n ? StagerSel::kUp
                                                   : StagerSel::kDown;
          place(p, m, p, b1, n, sel);
          ++(sel == StagerSel::kNext ? out.moves.lookahead : out.moves.lookaside);
        }
      }

      // 3. Inter-tile: the rest of a tile's row b + 1 into another tile's empty row.
      if (options.inter_tile && options.tile_reach > 0) {
        std::vector<int> owners;              // tiles with weights left in row b + 1
        std::vector<std::vector<int>> hosts;  // empty rows within reach, nearest first
        for (int q = 0; q < P; ++q) {
          if (row_empty(q, b1)) continue;
          std::vector<int> h;
          for (int d = 1; d <= options.tile_reach && d <= P / 2; ++d) {
            for (int p : {(q + d) % P, (q + P - d) % P}) {
              if (!busy[p] && std::find(h.begin(), h.end(), p) == h.end()) h.push_back(p);
            }
          }
          owners.push_back(q);
          hosts.push_back(std::move(h));
        }
        const std::vector<int> got = Matcher(hosts, P).run();
        for (size_t i = 0; i < owners.size(); ++i) {
          const int q = owners[i];
          const int p = got[i];
          if (p < 0) continue;
          for (int n = 0; n < N; ++n) {
            if (left.at(q, b1, n) == 0) continue;
            place(p, n, q, b1, n, StagerSel::kNext);
            ++out.moves.row_aside;
          }
          c.dest[p] = q;
        }
      }
    }

    out.cycles.push_back(std::move(c));
    // 4. Skip row b + 1 when every tile has emptied it.
    b = next_occupied(b1);
  }
  return out;
}

void check_packed(const DenseSchedule& dense, const PackedSchedule& packed,
                  const PackOptions& options) {
  const int P = dense.tiles();
  const int T = dense.cycles();
  const int N = dense.lanes();
  if (packed.tiles != P || packed.lanes != N || packed.dense_cycles != T) {
    throw Error(
        fmt::format("packed schedule is for {} tiles x {} cycles x {} lanes, the dense "
                    "one has {} x {} x {}",
                    packed.tiles, packed.dense_cycles, packed.lanes, P, T, N));
  }
  const int reach = options.inter_tile ? options.tile_reach : 0;
  DenseSchedule hit(P, T, N);  // 1 where a packed weight stands for the dense one
  int last_base = -1;
  for (int k = 0; k < packed.packed_cycles(); ++k) {
    const PackedCycle& c = packed.cycles[k];
    const size_t slots = static_cast<size_t>(P) * N;
    if (c.value.size() != slots || c.sel.size() != slots ||
        c.dest.size() != static_cast<size_t>(P)) {
      throw Error(
          fmt::format("packed cycle {}: {} values, {} select codes, {} destinations "
                      "(want {}, {}, {})",
                      k, c.value.size(), c.sel.size(), c.dest.size(), slots, slots, P));
    }
    if (c.base <= last_base || c.base >= T) {
      throw Error(
          fmt::format("packed cycle {}: base {} (previous {}, dense cycles {}): bases "
                      "must increase and stay below the dense length",
                      k, c.base, last_base, T));
    }
    last_base = c.base;
    std::vector<int> foreign(P, 0);  // foreign sums each accumulator takes in this cycle
    for (int p = 0; p < P; ++p) {
      const int q = c.dest[p];
      bool any = false;
      for (int m = 0; m < N; ++m) any = any || c.value[static_cast<size_t>(p) * N + m] != 0;
      if (q < 0 || q >= P) {
        throw Error(fmt::format("packed cycle {}, tile {}: destination {} is not a tile", k, p, q));
      }
      if (!any && q != p) {
        throw Error(
            fmt::format("packed cycle {}, tile {}: empty row sent to tile {} (must be "
                        "its own)",
                        k, p, q));
      }
      if (ring_distance(p, q, P) > reach) {
        throw Error(
            fmt::format("packed cycle {}, tile {}: sum sent to tile {}, beyond the reach "
                        "of {} tile(s)",
                        k, p, q, reach));
      }
      if (q != p && ++foreign[q] > 1) {
        throw Error(
            fmt::format("packed cycle {}: accumulator {} takes more than one foreign sum "
                        "(the second from tile {})",
                        k, q, p));
      }
      for (int m = 0; m < N; ++m) {
        const int8_t v = c.value[static_cast<size_t>(p) * N + m];
        const StagerSel sel = c.sel[static_cast<size_t>(p) * N + m];
        if (static_cast<uint8_t>(sel) > 3) {
          throw Error(fmt::format("packed cycle {}, tile {}, lane {}: select code {}", k, p, m,
                                  static_cast<int>(sel)));
        }
        if (v == 0) {
          if (sel != StagerSel::kCur) {
            throw Error(
                fmt::format("packed cycle {}, tile {}, lane {}: zero weight with select "
                            "code {} (want kCur)",
                            k, p, m, static_cast<int>(sel)));
          }
          continue;
        }
        const int t = c.base + (sel == StagerSel::kCur ? 0 : 1);
        const int n = source_lane(sel, m, N);
        if (t >= T) {
          throw Error(
              fmt::format("packed cycle {}, tile {}, lane {}: weight {} reads dense cycle "
                          "{} of {}",
                          k, p, m, v, t, T));
        }
        if (hit.at(q, t, n) != 0) {
          throw Error(
              fmt::format("packed cycle {}, tile {}, lane {}: weight {} stands for dense "
                          "tile {} cycle {} lane {}, already placed",
                          k, p, m, v, q, t, n));
        }
        if (dense.at(q, t, n) != v) {
          throw Error(
              fmt::format("packed cycle {}, tile {}, lane {}: weight {} stands for dense "
                          "tile {} cycle {} lane {}, which is {}",
                          k, p, m, v, q, t, n, dense.at(q, t, n)));
        }
        hit.at(q, t, n) = 1;
      }
    }
  }
  for (int q = 0; q < P; ++q) {
    for (int t = 0; t < T; ++t) {
      for (int n = 0; n < N; ++n) {
        if (dense.at(q, t, n) != 0 && hit.at(q, t, n) == 0) {
          throw Error(
              fmt::format("dense tile {} cycle {} lane {}: weight {} is in no packed "
                          "cycle",
                          q, t, n, dense.at(q, t, n)));
        }
      }
    }
  }
}

std::vector<int32_t> dense_dots(const DenseSchedule& dense, const std::vector<int8_t>& act) {
  const int N = dense.lanes();
  if (act.size() != static_cast<size_t>(dense.cycles()) * N) {
    throw Error(fmt::format("dense_dots: {} activations for {} cycles x {} lanes", act.size(),
                            dense.cycles(), N));
  }
  std::vector<int32_t> dot(dense.tiles(), 0);
  for (int p = 0; p < dense.tiles(); ++p) {
    for (int t = 0; t < dense.cycles(); ++t) {
      for (int n = 0; n < N; ++n) {
        dot[p] += int32_t{dense.at(p, t, n)} * act[static_cast<size_t>(t) * N + n];
      }
    }
  }
  return dot;
}

std::vector<int32_t> packed_dots(const PackedSchedule& packed, const std::vector<int8_t>& act) {
  const int P = packed.tiles;
  const int N = packed.lanes;
  const int T = packed.dense_cycles;
  if (act.size() != static_cast<size_t>(T) * N) {
    throw Error(
        fmt::format("packed_dots: {} activations for {} cycles x {} lanes", act.size(), T, N));
  }
  auto a = [&](int t, int n) -> int32_t {  // act[T] reads as zeros
    return t < T ? act[static_cast<size_t>(t) * N + n] : 0;
  };
  std::vector<int32_t> acc(P, 0);
  for (const PackedCycle& c : packed.cycles) {
    for (int p = 0; p < P; ++p) {
      int32_t sum = 0;  // the adder tree of tile p
      for (int m = 0; m < N; ++m) {
        const StagerSel sel = c.sel[static_cast<size_t>(p) * N + m];
        const int t = c.base + (sel == StagerSel::kCur ? 0 : 1);
        sum += int32_t{c.value[static_cast<size_t>(p) * N + m]} * a(t, source_lane(sel, m, N));
      }
      acc[c.dest[p]] += sum;  // the demultiplexer
    }
  }
  return acc;
}

int packed_floor(const DenseSchedule& dense) {
  const int64_t per_cycle = int64_t{dense.tiles()} * dense.lanes();
  const int64_t by_rows = (dense.occupied_cycles() + 1) / 2;
  const int64_t by_slots = (dense.nonzeros() + per_cycle - 1) / per_cycle;
  return static_cast<int>(std::max(by_rows, by_slots));
}

int64_t packed_conv_beats(const PackedConvWalk& walk, const std::vector<int64_t>& bases) {
  const int64_t dense = int64_t{walk.kernel_h} * walk.kernel_w * walk.groups;
  // Per row, its two taps (-1: no second word).
  struct Taps {
    int64_t ky0, kx0, ky1, kx1;
  };
  std::vector<Taps> taps;
  for (int64_t t : bases) {
    const int64_t tap0 = t / walk.groups, tap1 = (t + 1) / walk.groups;
    Taps r{tap0 / walk.kernel_w, tap0 % walk.kernel_w, -1, -1};
    if (t + 1 < dense) {
      r.ky1 = tap1 / walk.kernel_w;
      r.kx1 = tap1 % walk.kernel_w;
    }
    taps.push_back(r);
  }
  int64_t beats = 0;
  for (int64_t oy = 0; oy < walk.out_h; ++oy) {
    const int64_t y0 = oy * walk.stride_h - walk.pad_top;
    for (int64_t ox = 0; ox < walk.out_w; ++ox) {
      const int64_t x0 = ox * walk.stride_w - walk.pad_left;
      const auto inside = [&](int64_t ky, int64_t kx) {
        return ky >= 0 && y0 + ky >= 0 && y0 + ky < walk.in_h && x0 + kx >= 0 &&
               x0 + kx < walk.in_w;
      };
      int64_t rows = 0;
      for (const Taps& r : taps) rows += inside(r.ky0, r.kx0) || inside(r.ky1, r.kx1);
      beats += std::max<int64_t>(1, rows);
    }
  }
  return beats;
}

}  // namespace strata
