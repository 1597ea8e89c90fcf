// SPDX-License-Identifier: Apache-2.0
// Bernoulli "is the stream idle this cycle" source for random gaps and
// back-pressure in the bench agents (no test framework needed).
#pragma once

#include <random>

namespace strata::tb {

// probability 0 disables it.
class Throttle {
 public:
  explicit Throttle(double probability = 0.0) : p_(probability) {}
  bool stall(std::mt19937_64& rng) { return p_ > 0.0 && dist_(rng) < p_; }
  double probability() const { return p_; }

 private:
  double p_;
  std::uniform_real_distribution<double> dist_{0.0, 1.0};
};

}  // namespace strata::tb
