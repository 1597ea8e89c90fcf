// SPDX-License-Identifier: Apache-2.0
// Sparse weight packing for the PE array (background item 3, background item 3: hierarchical
// weight preprocessing), in software: the packer, the checker that proves a
// packed schedule exact, and the bounds the Monte-Carlo of docs/sparsity.md
// compares it with.
//
// Dense schedule of one PE-array pass: P tiles (tile = PE = one output
// channel) x T dense cycles x N lanes of int8 weights. In dense cycle t every
// tile meets the same broadcast activation word act[t]; tile p's result is
//   dot[p] = sum over t, n of w[p][t][n] * act[t][n].
//
// Packed schedule: K <= T packed cycles. Packed cycle k carries
//   - base[k], the dense cycle of its activation window {act[base], act[base+1]}
//     (act[T] reads as zeros). The window is broadcast: ONE base per packed
//     cycle for all tiles;
//   - for each tile p and lane m a weight value[p][m] and the strata_act_stager
//     select code sel[p][m] that picks its activation from the window:
//       kCur  act[base][m]             kNext act[base+1][m]
//       kUp   act[base+1][(m+1) % N]   kDown act[base+1][(m-1) % N];
//   - for each tile p, dest[p]: the tile whose accumulator receives tile p's
//     adder-tree sum in this cycle (the demultiplexer after the adder tree).
//
// Executable on the hardware (what check_packed() enforces):
//   1. bases strictly increase and lie in [0, T); a non-zero weight with a
//      select code other than kCur needs base + 1 < T;
//   2. a zero weight has select code kCur; a tile whose row is all zeros has
//      dest = itself (canonical control bits);
//   3. all non-zero weights of one tile row belong to one dense tile, dest[p]
//      (one adder tree feeds one accumulator), at a ring distance
//      |dest[p] - p| (mod P) of at most PackOptions::tile_reach (0: no
//      inter-tile moves, the demultiplexer is a wire);
//   4. each accumulator receives at most one foreign tile's sum per packed
//      cycle (a two-input adder in front of each accumulator: its own tile's
//      sum, when that tile works for it, plus one borrowed);
//   5. the non-zero packed weights and the non-zero dense weights are in
//      one-to-one correspondence: packed slot (p, k, m) with dest q stands for
//      dense weight w[q][base[k] + (sel != kCur)][lane the select code reads],
//      with the same value. Then for every activation sequence each
//      accumulator adds exactly its dense products (integer addition
//      commutes), so every dot[q] is reproduced bit for bit.
//
// The packer (pack_sparse) walks the dense cycles; packed cycle k with base b:
//   1. each tile places what is left of its dense row b in its own lanes (kCur);
//   2. intra-tile: each tile moves what it can of its row b + 1 into its free
//      lanes, own lane first (lookahead, kNext), else a neighbouring lane
//      (lookaside, kUp / kDown); a maximum matching places as many as
//      possible. A tile with nothing at b takes its whole row b + 1 (kNext):
//      a whole row one cycle earlier;
//   3. inter-tile (PackOptions::inter_tile), driven by the tile sparsity map
//      of the cycle (which tiles have an empty row): the rest of a tile q's
//      row b + 1 moves, lanes unchanged (kNext), into an empty row of a tile
//      p within reach, and dest[p] = q (another tile's earlier row);
//   4. when row b + 1 is then empty in EVERY tile it is skipped; the next base
//      is the next dense cycle with weights left in some tile (dense cycles
//      empty in every tile cost nothing).
// Moves are one step (one cycle, one lane, one tile), so a packed cycle
// covers at most two dense cycles: K >= ceil(R / 2), R = dense cycles with a
// non-zero weight in some tile, and K >= ceil(nnz / (P N)) (packed_floor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

// strata_act_stager's select codes (rtl/datapath/strata_act_stager.sv).
enum class StagerSel : uint8_t { kCur = 0, kNext = 1, kUp = 2, kDown = 3 };

// Weights of one PE-array pass, [tile][dense cycle][lane]; 0 = no weight.
class DenseSchedule {
 public:
  DenseSchedule(int tiles, int cycles, int lanes);

  int tiles() const { return tiles_; }
  int cycles() const { return cycles_; }
  int lanes() const { return lanes_; }
  int8_t& at(int tile, int cycle, int lane) { return w_[index(tile, cycle, lane)]; }
  int8_t at(int tile, int cycle, int lane) const { return w_[index(tile, cycle, lane)]; }
  int64_t nonzeros() const;
  // Dense cycles with a non-zero weight in at least one tile.
  int occupied_cycles() const;

 private:
  std::size_t index(int tile, int cycle, int lane) const {
    return (static_cast<std::size_t>(tile) * cycles_ + cycle) * lanes_ + lane;
  }
  int tiles_, cycles_, lanes_;
  std::vector<int8_t> w_;
};

struct PackedCycle {
  int base = 0;                // window {act[base], act[base + 1]}
  std::vector<int8_t> value;   // [tile * lanes + lane]
  std::vector<StagerSel> sel;  // [tile * lanes + lane]
  std::vector<int> dest;       // [tile]: accumulator fed by the tile's adder tree
};

// How many weights each kind of move placed.
struct PackMoves {
  int64_t lookahead = 0;  // intra-tile: one cycle earlier, own lane
  int64_t lookaside = 0;  // intra-tile: one cycle earlier, neighbouring lane
  int64_t row_ahead = 0;  // a whole row into the same tile's empty earlier row
  int64_t row_aside = 0;  // a row (or its rest) into another tile's empty earlier row
};

struct PackedSchedule {
  int tiles = 0;
  int lanes = 0;
  int dense_cycles = 0;
  std::vector<PackedCycle> cycles;
  PackMoves moves;

  int packed_cycles() const { return static_cast<int>(cycles.size()); }
};

struct PackOptions {
  bool inter_tile = true;  // step 3 (false: intra-tile moves only)
  int tile_reach = 1;      // max ring distance from a tile to the accumulator it feeds
};

PackedSchedule pack_sparse(const DenseSchedule& dense, const PackOptions& options = {});

// Throws strata::Error naming the packed cycle, tile and lane (or the dense
// weight left out) if the schedule breaks a rule of the header comment.
void check_packed(const DenseSchedule& dense, const PackedSchedule& packed,
                  const PackOptions& options = {});

// The dot products, act[cycle * lanes + lane]: of the dense schedule, and as
// the hardware computes them from the packed one (stager, adder tree,
// demultiplexer, accumulators).
std::vector<int32_t> dense_dots(const DenseSchedule& dense, const std::vector<int8_t>& act);
std::vector<int32_t> packed_dots(const PackedSchedule& packed, const std::vector<int8_t>& act);

// Lower bound on the packed cycles of any one-step schedule:
// max(ceil(occupied / 2), ceil(nnz / (tiles * lanes))).
int packed_floor(const DenseSchedule& dense);

// The walk of a packed CONV over its input (docs/isa.md, Packed CONV): dense
// row t is tap (ky, kx) = ((t / groups) / kernel_w, (t / groups) % kernel_w)
// of input group t % groups.
struct PackedConvWalk {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, groups = 1;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

// PE-array beats of a packed CONV whose rows start at dense rows `bases`: at
// each output pixel, the rows with a word (t or t + 1) inside the input, and
// at least one.
int64_t packed_conv_beats(const PackedConvWalk& walk, const std::vector<int64_t>& bases);

// Cycles a packed CONV instruction spends before its first beat beyond a
// dense one's, besides one per packed row: the RTL walker
// (strata_packed_walker) reads the R schedule entries once after its first
// step, then fills its pipeline (start to first beat R + 20 cycles against
// the dense walker's 2). The compiler packs an op only when its beats saved
// exceed this cost plus one cycle per packed row, summed over its passes.
inline constexpr int64_t kPackedStartCycles = 18;

}  // namespace strata
