// SPDX-License-Identifier: Apache-2.0
// Verilator coverage output of the benches (coverage builds only).
//
// A coverage build (cmake -DSTRATA_COVERAGE=ON) Verilates every model with
// --coverage-line --coverage-toggle, which makes VM_COVERAGE 1. Counts live in
// the VerilatedContext, so each model writes them when it is torn down, after
// final() and before its context is destroyed. scripts/regress sets
// STRATA_COVERAGE_DIR and merges the files (docs/regression.md). No GoogleTest
// here: the network runner is also the RTL backend of the `strata` command.
#pragma once

#include <unistd.h>
#include <verilated.h>
#if VM_COVERAGE
#include <verilated_cov.h>
#endif

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace strata::tb {

// Writes the line and toggle counts of `ctx` to $STRATA_COVERAGE_DIR (default
// ./coverage) as <tag>_<pid>_<n>.dat: one file per model, so parallel
// processes and successive tests never overwrite each other. A no-op in
// normal builds.
inline void write_coverage(VerilatedContext& ctx, const std::string& tag) {
#if VM_COVERAGE
  static std::atomic<unsigned> written{0};
  const char* dir_env = std::getenv("STRATA_COVERAGE_DIR");
  const std::filesystem::path dir = dir_env != nullptr && *dir_env != '\0' ? dir_env : "coverage";
  std::filesystem::create_directories(dir);
  const std::string file =
      tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(written++) + ".dat";
  ctx.coveragep()->write((dir / file).string().c_str());
#else
  (void)ctx;
  (void)tag;
#endif
}

}  // namespace strata::tb
