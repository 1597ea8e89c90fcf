// SPDX-License-Identifier: Apache-2.0
// What the tables of strata_sparsity_mc share (main.cpp describes the tool):
// random pruned dense schedules and their packing by each variant of the
// packer.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "strata/sparse_pack.hpp"

namespace strata::sparsity_mc {

inline constexpr double kSparsities[] = {0.25, 0.5, 0.75, 0.9};

struct Variant {
  const char* name;
  PackOptions options;
};

// intra, inter 1 and inter * for a pass of `tiles` tiles.
std::vector<Variant> variants(int tiles);

// A non-zero int8 weight, -127..127 without 0.
int8_t weight(std::mt19937_64& rng);

// Zeroes exactly round(sparsity * count) of the cells listed, chosen at random
// (magnitude pruning of i.i.d. random weights zeroes random positions).
void prune(std::vector<int8_t*>& cells, double sparsity, std::mt19937_64& rng);

// Packs with each variant, checks, and returns the packed cycles of each, then
// packed_floor, then the slowest tile packed alone.
std::vector<int> pack_all(const DenseSchedule& d, const std::vector<Variant>& vs);

// One pass of P = N = pn tiles and lanes and t dense cycles: random non-zero
// weights, then exactly the given fraction of them zeroed.
DenseSchedule random_schedule(int pn, int t, double sparsity, std::mt19937_64& rng);

// An all-zero pass still takes a cycle to start and end its accumulations.
double speedup(int64_t dense, int64_t packed);

// The tables (Markdown, docs/sparsity.md).
void synthetic_table(uint64_t seed, int trials);
void network_table(const std::string& path, uint64_t seed, int trials);
void deeper_table(uint64_t seed, int trials);

}  // namespace strata::sparsity_mc
