// SPDX-License-Identifier: Apache-2.0
// Unit tests of the sparse weight packer (sparse_pack.hpp): each move kind on
// a schedule small enough to check by hand, the cases where nothing can move,
// the checker's refusals, and random schedules whose packed dot products must
// equal the dense ones at many sparsities (seed from STRATA_SEED, printed).
#include "strata/sparse_pack.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "strata/error.hpp"

namespace strata {
namespace {

using Rows = std::vector<std::vector<int>>;  // [cycle][lane] of one tile

DenseSchedule make(const std::vector<Rows>& tiles) {
  const int T = static_cast<int>(tiles[0].size());
  const int N = T > 0 ? static_cast<int>(tiles[0][0].size()) : 1;
  DenseSchedule d(static_cast<int>(tiles.size()), T, N);
  for (int p = 0; p < d.tiles(); ++p) {
    for (int t = 0; t < T; ++t) {
      for (int n = 0; n < N; ++n) d.at(p, t, n) = static_cast<int8_t>(tiles[p][t][n]);
    }
  }
  return d;
}

std::vector<int8_t> random_act(const DenseSchedule& d, std::mt19937_64& rng) {
  std::vector<int8_t> act(static_cast<size_t>(d.cycles()) * d.lanes());
  for (auto& a : act) a = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return act;
}

// Packs, checks the rules, and compares the dot products on a few random
// activation sequences; returns the packed schedule.
PackedSchedule pack_checked(const DenseSchedule& d, const PackOptions& o = {}) {
  PackedSchedule pk = pack_sparse(d, o);
  EXPECT_NO_THROW(check_packed(d, pk, o));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3; ++i) {
    const auto act = random_act(d, rng);
    EXPECT_EQ(packed_dots(pk, act), dense_dots(d, act));
  }
  EXPECT_GE(pk.packed_cycles(), packed_floor(d));
  return pk;
}

StagerSel sel_at(const PackedSchedule& pk, int k, int tile, int lane) {
  return pk.cycles[k].sel[static_cast<size_t>(tile) * pk.lanes + lane];
}

TEST(SparsePack, LookaheadMovesAWeightIntoItsOwnLane) {
  const auto d = make({{{1, 0, 0, 0}, {0, 2, 0, 0}}});
  const auto pk = pack_checked(d);
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(sel_at(pk, 0, 0, 1), StagerSel::kNext);
  EXPECT_EQ(pk.moves.lookahead, 1);
  EXPECT_EQ(pk.moves.lookaside + pk.moves.row_ahead + pk.moves.row_aside, 0);
}

TEST(SparsePack, LookasideUsesTheLowerThenTheUpperNeighbour) {
  // Lane 2 of cycle 1 finds lane 2 taken: lane 1 (kUp: lane 1 reads lane 2).
  auto pk = pack_checked(make({{{0, 0, 3, 5}, {0, 0, 4, 0}}}));
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(sel_at(pk, 0, 0, 1), StagerSel::kUp);
  EXPECT_EQ(pk.moves.lookaside, 1);
  // Lanes 1 and 2 taken: lane 3 (kDown: lane 3 reads lane 2).
  pk = pack_checked(make({{{0, 9, 3, 0}, {0, 0, 4, 0}}}));
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(sel_at(pk, 0, 0, 3), StagerSel::kDown);
  // Lanes wrap around: lane 0's lower neighbour is lane 3 (kUp reads lane 0).
  pk = pack_checked(make({{{7, 0, 0, 0}, {5, 0, 0, 0}}}));
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(sel_at(pk, 0, 0, 3), StagerSel::kUp);
}

TEST(SparsePack, MatchingPlacesEveryWeightAGreedyOrderWouldStrand) {
  // Cycle 0 leaves lanes 1 and 7 free. Cycle 1's lane 0 could take either
  // (lane 7 wraps around); lane 6 only lane 7. A lane-by-lane greedy pass
  // trying the lower neighbour first gives lane 7 to lane 0 and strands lane 6.
  const auto pk = pack_checked(make({{{1, 0, 1, 1, 1, 1, 1, 0}, {2, 0, 0, 0, 0, 0, 2, 0}}}));
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(pk.moves.lookaside, 2);
  EXPECT_EQ(sel_at(pk, 0, 0, 1), StagerSel::kDown);
  EXPECT_EQ(sel_at(pk, 0, 0, 7), StagerSel::kDown);
}

TEST(SparsePack, AWholeRowMovesIntoTheTilesEmptyEarlierRow) {
  // Tile 0's cycle 0 is empty but tile 1's is not, so cycle 0 is not skipped;
  // tile 0's full cycle 1 moves up whole and cycle 1 disappears.
  const auto d = make({{{0, 0}, {1, 2}}, {{3, 0}, {0, 0}}});
  const auto pk = pack_checked(d);
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(pk.moves.row_ahead, 2);
  EXPECT_EQ(sel_at(pk, 0, 0, 0), StagerSel::kNext);
  EXPECT_EQ(sel_at(pk, 0, 0, 1), StagerSel::kNext);
}

TEST(SparsePack, ARowMovesIntoAnotherTilesEmptyEarlierRow) {
  // Tile 0's two rows are full: nothing moves inside it. Tile 1 is empty, so
  // tile 0's cycle 1 runs in tile 1 and the demultiplexer returns the sum.
  const auto d = make({{{1, 2}, {3, 4}}, {{0, 0}, {0, 0}}});
  const auto pk = pack_checked(d);
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(pk.moves.row_aside, 2);
  EXPECT_EQ(pk.cycles[0].dest, (std::vector<int>{0, 0}));
  // Without inter-tile moves it takes both cycles.
  PackOptions intra;
  intra.inter_tile = false;
  EXPECT_EQ(pack_checked(d, intra).packed_cycles(), 2);
}

TEST(SparsePack, OnlyTheRestOfARowMovesAcrossTiles) {
  // Tile 0's cycle 1 has three weights, one free lane in cycle 0: one moves
  // inside the tile (lookahead), the two others go to the empty tile 1.
  const auto d = make({{{1, 1, 1, 0}, {2, 2, 0, 2}}, {{0, 0, 0, 0}, {0, 0, 0, 0}}});
  const auto pk = pack_checked(d);
  ASSERT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(pk.moves.lookahead, 1);
  EXPECT_EQ(pk.moves.row_aside, 2);
  EXPECT_EQ(pk.cycles[0].dest[1], 0);
}

TEST(SparsePack, InterTileMovesStayWithinReach) {
  // Only tile 2 is free, two tiles away from the overflowing tile 0.
  const Rows full = {{1, 1}, {1, 1}};
  const Rows zero = {{0, 0}, {0, 0}};
  const Rows busy0 = {{1, 0}, {0, 0}};
  const auto d = make({full, busy0, zero, busy0});
  EXPECT_EQ(pack_checked(d).packed_cycles(), 2);  // reach 1
  PackOptions far;
  far.tile_reach = 2;
  const auto pk = pack_checked(d, far);
  EXPECT_EQ(pk.packed_cycles(), 1);
  EXPECT_EQ(pk.cycles[0].dest[2], 0);
}

TEST(SparsePack, ARowThatCannotMoveKeepsItsCycle) {
  // Both tiles full in both cycles: no free lane, no empty tile.
  const Rows full = {{1, 2, 3}, {4, 5, 6}};
  const auto pk = pack_checked(make({full, full}));
  EXPECT_EQ(pk.packed_cycles(), 2);
  EXPECT_EQ(pk.moves.lookahead + pk.moves.lookaside + pk.moves.row_ahead + pk.moves.row_aside, 0);
  // One tile empties its cycle 1, the other cannot: cycle 1 stays (its moved
  // weights stay moved, the base of the next packed cycle is 1).
  const auto pk2 = pack_checked(make({{{1, 0, 0}, {0, 1, 0}}, full}));
  ASSERT_EQ(pk2.packed_cycles(), 2);
  EXPECT_EQ(pk2.cycles[1].base, 1);
}

TEST(SparsePack, CyclesEmptyInEveryTileCostNothing) {
  const Rows a = {{0, 0}, {1, 0}, {0, 0}, {0, 0}, {2, 3}, {0, 0}};
  const Rows b = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 4}, {0, 0}};
  const auto pk = pack_checked(make({a, b}));
  ASSERT_EQ(pk.packed_cycles(), 2);
  EXPECT_EQ(pk.cycles[0].base, 1);
  EXPECT_EQ(pk.cycles[1].base, 4);
}

TEST(SparsePack, AllZeroTilesNeedNoCycle) {
  DenseSchedule d(8, 9, 8);
  const auto pk = pack_checked(d);
  EXPECT_EQ(pk.packed_cycles(), 0);
  EXPECT_EQ(packed_floor(d), 0);
}

TEST(SparsePack, AllDenseTilesKeepEveryCycle) {
  DenseSchedule d(8, 9, 8);
  for (int p = 0; p < 8; ++p) {
    for (int t = 0; t < 9; ++t) {
      for (int n = 0; n < 8; ++n) d.at(p, t, n) = static_cast<int8_t>(p * 9 + t - 40 + n);
    }
  }
  for (int n = 0; n < 8; ++n) {  // the formula above gives 0 at a few places
    for (int p = 0; p < 8; ++p) {
      for (int t = 0; t < 9; ++t) {
        if (d.at(p, t, n) == 0) d.at(p, t, n) = 1;
      }
    }
  }
  const auto pk = pack_checked(d);
  ASSERT_EQ(pk.packed_cycles(), 9);
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(pk.cycles[k].base, k);
    for (StagerSel s : pk.cycles[k].sel) EXPECT_EQ(s, StagerSel::kCur);
  }
}

TEST(SparsePack, CheckerRefusesBrokenSchedules) {
  const auto d = make({{{1, 2}, {3, 4}}, {{0, 0}, {0, 5}}});
  const PackOptions o;
  const PackedSchedule good = pack_sparse(d, o);
  ASSERT_NO_THROW(check_packed(d, good, o));
  auto broken = [&](auto edit) {
    PackedSchedule pk = good;
    edit(pk);
    return pk;
  };
  // A weight changed, dropped, or read from the wrong lane.
  EXPECT_THROW(check_packed(d, broken([](PackedSchedule& pk) { pk.cycles[0].value[0] = 9; }), o),
               Error);
  EXPECT_THROW(
      check_packed(d, broken([](PackedSchedule& pk) { pk.cycles.back().value.assign(4, 0); }), o),
      Error);
  EXPECT_THROW(
      check_packed(d, broken([](PackedSchedule& pk) { pk.cycles[0].sel[0] = StagerSel::kUp; }), o),
      Error);
  // A weight counted twice (a repeated packed cycle: bases must increase).
  EXPECT_THROW(
      check_packed(d, broken([](PackedSchedule& pk) { pk.cycles.push_back(pk.cycles.back()); }), o),
      Error);
  // A sum sent to the wrong accumulator, or to one beyond the reach.
  EXPECT_THROW(check_packed(d, broken([](PackedSchedule& pk) {
                              for (auto& c : pk.cycles) c.dest = {1, 0};
                            }),
                            o),
               Error);
  PackOptions intra;
  intra.inter_tile = false;
  const auto d2 = make({{{1, 2}, {3, 4}}, {{0, 0}, {0, 0}}});
  EXPECT_THROW(check_packed(d2, pack_sparse(d2, o), intra), Error);
  // A next-cycle read past the end of the dense schedule.
  const auto d3 = make({{{1, 0}}});
  EXPECT_THROW(check_packed(d3, broken([](PackedSchedule& pk) {
                              pk.dense_cycles = 1;
                              pk.tiles = 1;
                              pk.cycles.resize(1);
                              pk.cycles[0].value = {0, 1};
                              pk.cycles[0].sel = {StagerSel::kCur, StagerSel::kDown};
                              pk.cycles[0].dest = {0};
                            }),
                            o),
               Error);
}

int seed_from_env(int fallback) {
  const char* s = std::getenv("STRATA_SEED");
  return s != nullptr && *s != '\0' ? std::atoi(s) : fallback;
}

// Random schedules of several shapes, sparsities and reaches from one seed;
// returns how many were packed, checked and compared.
int random_schedules(int seed) {
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  const int shapes[][3] = {{1, 5, 1},  {1, 7, 2},   {2, 9, 3},    {3, 16, 4},
                           {8, 36, 8}, {8, 100, 8}, {16, 50, 16}, {5, 33, 7}};
  const double sparsities[] = {0.0, 0.25, 0.5, 0.75, 0.9, 0.97, 1.0};
  int runs = 0;
  for (const auto& s : shapes) {
    for (double sp : sparsities) {
      for (int reach : {0, 1, 2, 16}) {
        for (int rep = 0; rep < 3; ++rep) {
          DenseSchedule d(s[0], s[1], s[2]);
          for (int p = 0; p < d.tiles(); ++p) {
            for (int t = 0; t < d.cycles(); ++t) {
              for (int n = 0; n < d.lanes(); ++n) {
                const bool zero = static_cast<double>(rng() % 1000000) < sp * 1e6;
                int v = static_cast<int>(rng() % 255) - 127;  // -127..127
                if (v == 0) v = 1;
                d.at(p, t, n) = zero ? 0 : static_cast<int8_t>(v);
              }
            }
          }
          PackOptions o;
          o.inter_tile = reach > 0;
          o.tile_reach = reach;
          const PackedSchedule pk = pack_sparse(d, o);
          const std::string where =
              fmt::format("seed {}, {} tiles x {} cycles x {} lanes, sparsity {}, reach {}, rep {}",
                          seed, s[0], s[1], s[2], sp, reach, rep);
          try {
            check_packed(d, pk, o);
          } catch (const Error& e) {
            ADD_FAILURE() << where << ": " << e.what();
            continue;
          }
          for (int i = 0; i < 4; ++i) {
            const auto act = random_act(d, rng);
            EXPECT_EQ(packed_dots(pk, act), dense_dots(d, act)) << where;
          }
          EXPECT_GE(pk.packed_cycles(), packed_floor(d)) << where;
          EXPECT_LE(pk.packed_cycles(), d.occupied_cycles()) << where;
          ++runs;
        }
      }
    }
  }
  return runs;
}

TEST(SparsePack, RandomSchedulesReproduceEveryDotProduct) {
  const int seed = seed_from_env(35);
  std::cout << fmt::format("[ RANDOM   ] SparsePack: STRATA_SEED={} (and the next 3)\n", seed);
  for (int s = seed; s < seed + 4; ++s) EXPECT_EQ(random_schedules(s), 8 * 7 * 4 * 3);
}

}  // namespace
}  // namespace strata
