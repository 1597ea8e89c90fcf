// SPDX-License-Identifier: Apache-2.0
// The design planner (docs/planner.md): searches hardware configurations
// for a set of networks within a device's resources, scores each by the
// cycle model's prediction at the device's Fmax, and writes the winner as a
// configuration file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/device.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/resource_model.hpp"

namespace strata {

// The device's board memory in AXI beats of `target` per accelerator cycle
// at the device's Fmax, at most one (one port).
double board_beats_per_cycle(const Device& device, const HwTarget& target);

enum class PlanObjective {
  kLatency,     // one image at a time: the sum over the networks of one image's time
  kThroughput,  // batches of P images (FC layers run batched): time per image
};

struct PlanOptions {
  PlanObjective objective = PlanObjective::kLatency;
  int mem_latency = 60;    // external read latency of the cycle model (cycles)
  double max_fill = 0.85;  // largest fraction of the device's LUTs and FFs a plan may use
};

struct PlanCandidate {
  HwTarget target;             // one accelerator (each stage of a chain)
  int instances = 1;           // K: accelerators of a strata_cascade_top chain
  ResourceEstimate resources;  // all K of them
  bool fits = false;           // within the device's budget
  std::string why_not;         // the resource that does not fit
  // Per network, predicted cycles per image (fits only): one image's run
  // (latency), a batch's run over its images (throughput, K = 1) or the
  // largest stage's run (throughput, K > 1: an image leaves the chain once
  // per largest stage).
  std::vector<int64_t> cycles;
  double seconds_per_image = 0;  // sum over the networks, at the device's Fmax
};

struct PlanResult {
  std::vector<PlanCandidate> candidates;  // every configuration weighed
  int winner = -1;                        // index of the fastest that fits; -1: none
  double beats_per_cycle = 1.0;           // the board's bandwidth the cycles assume
                                          // (one accelerator; a chain's K share it)
};

// Ordering of candidates that fit: less time per image, then fewer
// accelerators, fewer block RAMs, fewer LUTs.
bool faster(const PlanCandidate& a, const PlanCandidate& b);

// The configurations searched: P = N in {8, 16, 32}, 4 or 8 banks, bank
// depth, PE cache depth and line-buffer width over a few powers of two, the
// dense or the sparse build, the PE products in DSP blocks or as many lanes
// in LUTs (at most N / 2) as the DSP budget needs; for the throughput
// objective also chains of K = 2 and 4 such accelerators (a chain does not
// shorten one image's run, so the latency objective weighs K = 1 only).
// Cycles are predicted only for candidates that fit; a candidate one of the
// networks does not compile for (or, for a chain, cannot be cut K ways) is
// rejected ("compile ...").
PlanResult plan(const std::vector<Network>& networks, const Device& device,
                const PlanOptions& options = {});

// The configuration file (config/default.yaml format) of `t`, with a header
// comment saying where it comes from (for a chain: of each stage).
std::string config_yaml(const HwTarget& t, const std::string& header);

}  // namespace strata
