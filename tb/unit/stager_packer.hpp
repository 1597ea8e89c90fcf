// SPDX-License-Identifier: Apache-2.0
// Packed schedules for the activation-stager benches: the compiler's packer
// (strata::pack_sparse, docs/sparsity.md) in the benches' form, the inverse
// that rebuilds a tile's dense schedule from it (an independent check of the
// encoding), and the stager's multiplexer as the RTL documents it.
//
// Dense schedule of a tile (tile = PE): dense[t][n] = weight multiplied by
// activation act[t][n] in dense cycle t, lane n; 0 = no weight. Packed cycle k
// has a base dense cycle base[k]; its activation window is {act[base[k]],
// act[base[k] + 1]}; tile p's weight in lane m is value[p][k][m] with select
// code sel[p][k][m]:
//   kSelCur  act[base][m]              kSelNext act[base + 1][m]
//   kSelUp   act[base + 1][(m+1) % N]  kSelDown act[base + 1][(m-1) % N]
// A packed cycle covers at most two dense cycles, so T' >= ceil(T / 2).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "strata/sparse_pack.hpp"

namespace strata::tb {

inline constexpr uint8_t kSelCur = 0;
inline constexpr uint8_t kSelNext = 1;
inline constexpr uint8_t kSelUp = 2;
inline constexpr uint8_t kSelDown = 3;

using Schedule = std::vector<std::vector<int8_t>>;  // [cycle][lane]

struct Packed {
  std::vector<int> base;                                // [k] dense cycle of the window
  std::vector<std::vector<std::vector<int8_t>>> value;  // [tile][k][lane]
  std::vector<std::vector<std::vector<uint8_t>>> sel;   // [tile][k][lane]
  std::vector<std::vector<uint8_t>> dest;  // [tile][k]: 0 own, 1 tile p - 1, 2 tile p + 1
  int cycles() const { return static_cast<int>(base.size()); }
};

// The tile whose accumulator tile p's row k feeds.
inline int dest_tile(const Packed& pk, int p, int k) {
  const int tiles = static_cast<int>(pk.dest.size());
  const int d = pk.dest[p][k];
  return d == 0 ? p : d == 1 ? (p + tiles - 1) % tiles : (p + 1) % tiles;
}

// The compiler's packer (strata::pack_sparse, docs/sparsity.md): intra-tile
// moves, and with `inter_tile` the neighbouring inter-tile moves the PE
// array's demultiplexer returns (a tile's row feeding tile p - 1's or p + 1's
// accumulator). The schedule is proven exact by strata::check_packed; an
// all-zero schedule keeps one packed cycle, the beat that opens and closes
// the accumulation.
inline Packed pack_schedules(const std::vector<Schedule>& dense, int lanes,
                             bool inter_tile = false) {
  if (dense.empty()) throw std::invalid_argument("pack_schedules: no tiles");
  const int tiles = static_cast<int>(dense.size());
  const int t_dense = static_cast<int>(dense[0].size());
  DenseSchedule d(tiles, t_dense, lanes);
  for (int p = 0; p < tiles; ++p) {
    if (static_cast<int>(dense[p].size()) != t_dense) {
      throw std::invalid_argument("pack_schedules: tiles differ in length");
    }
    for (int t = 0; t < t_dense; ++t) {
      if (static_cast<int>(dense[p][t].size()) != lanes) {
        throw std::invalid_argument("pack_schedules: row width != lanes");
      }
      for (int n = 0; n < lanes; ++n) d.at(p, t, n) = dense[p][t][n];
    }
  }
  PackOptions options;
  options.inter_tile = inter_tile;
  options.tile_reach = inter_tile ? 1 : 0;
  const PackedSchedule packed = pack_sparse(d, options);
  check_packed(d, packed, options);
  Packed out;
  out.value.resize(tiles);
  out.sel.resize(tiles);
  out.dest.resize(tiles);
  for (const PackedCycle& c : packed.cycles) {
    out.base.push_back(c.base);
    for (int p = 0; p < tiles; ++p) {
      const int d = c.dest[p];
      out.dest[p].push_back(d == p ? 0 : d == (p + tiles - 1) % tiles ? 1 : 2);
      if (d != p && d != (p + 1) % tiles && d != (p + tiles - 1) % tiles) {
        throw std::logic_error(fmt::format("pack_schedules: tile {} feeds tile {}", p, d));
      }
      std::vector<int8_t> value(lanes);
      std::vector<uint8_t> sel(lanes);
      for (int m = 0; m < lanes; ++m) {
        value[m] = c.value[p * lanes + m];
        sel[m] = static_cast<uint8_t>(c.sel[p * lanes + m]);
      }
      out.value[p].push_back(value);
      out.sel[p].push_back(sel);
    }
  }
  if (out.base.empty()) {
    out.base.push_back(0);
    for (int p = 0; p < tiles; ++p) {
      out.value[p].push_back(std::vector<int8_t>(lanes, 0));
      out.sel[p].push_back(std::vector<uint8_t>(lanes, kSelCur));
      out.dest[p].push_back(0);
    }
  }
  return out;
}

// Rebuilds tile p's dense schedule from the packed form (the rows of every
// tile that feed tile p's accumulator); throws if two packed weights land on
// the same dense slot (the packer's own consistency check).
inline Schedule unpack_schedule(const Packed& pk, int tile, int t_dense, int lanes) {
  Schedule dense(t_dense, std::vector<int8_t>(lanes, 0));
  std::vector<std::vector<bool>> hit(t_dense, std::vector<bool>(lanes, false));
  const int tiles = static_cast<int>(pk.value.size());
  for (int k = 0; k < pk.cycles(); ++k) {
    for (int q = 0; q < tiles; ++q) {
      if (dest_tile(pk, q, k) != tile) continue;
      for (int m = 0; m < lanes; ++m) {
        const int8_t v = pk.value[q][k][m];
        if (v == 0) continue;
        const uint8_t sel = pk.sel[q][k][m];
        const int t = pk.base[k] + (sel == kSelCur ? 0 : 1);
        int n = m;
        if (sel == kSelUp) n = (m + 1) % lanes;
        if (sel == kSelDown) n = (m + lanes - 1) % lanes;
        if (t >= t_dense || hit[t][n]) {
          throw std::logic_error(
              fmt::format("packed cycle {} tile {} lane {} maps to a bad or used slot", k, q, m));
        }
        hit[t][n] = true;
        dense[t][n] = v;
      }
    }
  }
  return dense;
}

// The stager's multiplexer, as the RTL documents it.
inline int8_t stage(const std::vector<int8_t>& cur, const std::vector<int8_t>& next, uint8_t sel,
                    int m, int lanes) {
  switch (sel) {
    case kSelCur:
      return cur[m];
    case kSelNext:
      return next[m];
    case kSelUp:
      return next[(m + 1) % lanes];
    case kSelDown:
      return next[(m + lanes - 1) % lanes];
    default:
      throw std::invalid_argument("stage: select code > 3");
  }
}

}  // namespace strata::tb
