// SPDX-License-Identifier: Apache-2.0
// Helpers the bench report's files share (bench_report.cpp, bench_table.cpp,
// chain_report.cpp); not part of the library's interface.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "strata/bench_report.hpp"

namespace strata::bench_detail {

// fmt::print into a string.
template <typename... Args>
void append(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

inline uint64_t cycles_of(const PerfCounts& c) { return perf(c, csr::kPerfCycles); }

inline const char* mode_name(bool fine) { return fine ? "fine" : "completion"; }

inline double ratio(double num, double den) { return den == 0.0 ? 0.0 : num / den; }

inline int64_t total_beats(const std::vector<OpWork>& work) {
  int64_t b = 0;
  for (const OpWork& w : work) b += w.beats;
  return b;
}

// Cycles the op's external bytes need at one AXI beat per cycle: its memory
// bound. With its PE-array beats (one per cycle) the larger is the roofline
// bound on its cycles.
inline int64_t memory_cycles(const OpWork& w, const HwTarget& t) {
  const int64_t beat = t.beat_bytes();
  return (w.load_bytes + w.store_bytes + beat - 1) / beat;
}

inline int64_t bound_cycles(const OpWork& w, const HwTarget& t) {
  return std::max<int64_t>(w.beats, memory_cycles(w, t));
}

// Completion cycles / fine cycles, when both modes ran.
inline std::optional<double> fine_speedup(const BenchReport& r) {
  if (r.results.size() != 2) return std::nullopt;
  return double(cycles_of(r.results[1].counters)) / double(cycles_of(r.results[0].counters));
}

}  // namespace strata::bench_detail
