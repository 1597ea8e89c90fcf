// Reference packer for the activation stager (seeds/002, intra-tile
// lookahead / lookaside with a common cycle sequence across tiles), written
// for the benches; the compiler will produce the same encoding.
//
// Input: one dense weight schedule per tile (tile = PE), dense[t][n] = weight
// multiplied by activation act[t][n] in dense cycle t, lane n; 0 = no weight.
// Output: T' packed cycles. Packed cycle k has a base dense cycle base[k]; its
// activation window is {act[base[k]], act[base[k] + 1]}; tile p's weight in
// lane m is value[p][k][m] with select code sel[p][k][m]:
//   kSelCur  act[base][m]              kSelNext act[base + 1][m]
//   kSelUp   act[base + 1][(m+1) % N]  kSelDown act[base + 1][(m-1) % N]
// Packing, cycle by cycle: the remaining weights of dense cycle b stay in
// their lanes; then each weight of cycle b + 1 moves one cycle earlier into
// its own lane when that slot is free (lookahead), else into a free
// neighbouring lane (lookaside). When cycle b + 1 is then empty in EVERY tile
// it is skipped (the next base is b + 2), otherwise the next base is b + 1.
// With one cycle of lookahead a packed cycle covers at most two dense
// cycles, so T' >= ceil(T / 2).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace strata::tb {

inline constexpr uint8_t kSelCur = 0;
inline constexpr uint8_t kSelNext = 1;
inline constexpr uint8_t kSelUp = 2;
inline constexpr uint8_t kSelDown = 3;

using Schedule = std::vector<std::vector<int8_t>>;  // [cycle][lane]

struct Packed {
  std::vector<int> base;                             // [k] dense cycle of the window
  std::vector<std::vector<std::vector<int8_t>>> value;  // [tile][k][lane]
  std::vector<std::vector<std::vector<uint8_t>>> sel;   // [tile][k][lane]
  int cycles() const { return static_cast<int>(base.size()); }
};

inline Packed pack_schedules(const std::vector<Schedule>& dense, int lanes) {
  if (dense.empty()) throw std::invalid_argument("pack_schedules: no tiles");
  const int tiles = static_cast<int>(dense.size());
  const int t_dense = static_cast<int>(dense[0].size());
  for (const auto& s : dense) {
    if (static_cast<int>(s.size()) != t_dense) {
      throw std::invalid_argument("pack_schedules: tiles differ in length");
    }
    for (const auto& row : s) {
      if (static_cast<int>(row.size()) != lanes) {
        throw std::invalid_argument("pack_schedules: row width != lanes");
      }
    }
  }
  std::vector<Schedule> left = dense;  // weights not placed yet
  Packed out;
  out.value.resize(tiles);
  out.sel.resize(tiles);
  int b = 0;
  while (b < t_dense) {
    out.base.push_back(b);
    for (int p = 0; p < tiles; ++p) {
      std::vector<int8_t> value(lanes, 0);
      std::vector<uint8_t> sel(lanes, kSelCur);
      std::vector<bool> used(lanes, false);
      for (int n = 0; n < lanes; ++n) {
        if (left[p][b][n] != 0) {
          value[n] = left[p][b][n];
          used[n] = true;
          left[p][b][n] = 0;
        }
      }
      if (b + 1 < t_dense) {
        auto& next = left[p][b + 1];
        for (int n = 0; n < lanes; ++n) {  // lookahead first: own lane
          if (next[n] != 0 && !used[n]) {
            value[n] = next[n];
            sel[n] = kSelNext;
            used[n] = true;
            next[n] = 0;
          }
        }
        for (int n = 0; n < lanes; ++n) {  // then lookaside: a neighbouring lane
          if (next[n] == 0) continue;
          const int down = (n + lanes - 1) % lanes;  // lane n-1 takes lane n: its Up
          const int up = (n + 1) % lanes;            // lane n+1 takes lane n: its Down
          if (!used[down]) {
            value[down] = next[n];
            sel[down] = kSelUp;
            used[down] = true;
            next[n] = 0;
          } else if (!used[up]) {
            value[up] = next[n];
            sel[up] = kSelDown;
            used[up] = true;
            next[n] = 0;
          }
        }
      }
      out.value[p].push_back(value);
      out.sel[p].push_back(sel);
    }
    bool next_empty = b + 1 < t_dense;
    for (int p = 0; p < tiles && next_empty; ++p) {
      for (int8_t v : left[p][b + 1]) next_empty = next_empty && v == 0;
    }
    b += next_empty ? 2 : 1;
  }
  return out;
}

// Rebuilds tile p's dense schedule from the packed form; throws if two packed
// weights land on the same dense slot (the packer's own consistency check).
inline Schedule unpack_schedule(const Packed& pk, int tile, int t_dense, int lanes) {
  Schedule dense(t_dense, std::vector<int8_t>(lanes, 0));
  std::vector<std::vector<bool>> hit(t_dense, std::vector<bool>(lanes, false));
  for (int k = 0; k < pk.cycles(); ++k) {
    for (int m = 0; m < lanes; ++m) {
      const int8_t v = pk.value[tile][k][m];
      if (v == 0) continue;
      int t = pk.base[k] + (pk.sel[tile][k][m] == kSelCur ? 0 : 1);
      int n = m;
      if (pk.sel[tile][k][m] == kSelUp) n = (m + 1) % lanes;
      if (pk.sel[tile][k][m] == kSelDown) n = (m + lanes - 1) % lanes;
      if (t >= t_dense || hit[t][n]) {
        throw std::logic_error(fmt::format("packed cycle {} lane {} maps to a bad or used slot", k, m));
      }
      hit[t][n] = true;
      dense[t][n] = v;
    }
  }
  return dense;
}

// The stager's multiplexer, as the RTL documents it.
inline int8_t stage(const std::vector<int8_t>& cur, const std::vector<int8_t>& next, uint8_t sel,
                    int m, int lanes) {
  switch (sel) {
    case kSelCur: return cur[m];
    case kSelNext: return next[m];
    case kSelUp: return next[(m + 1) % lanes];
    case kSelDown: return next[(m + lanes - 1) % lanes];
    default: throw std::invalid_argument("stage: select code > 3");
  }
}

}  // namespace strata::tb
